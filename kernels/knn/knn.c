/*-------------------------------------------------------------------------
 *
 * knn.c
 *	  k nearest neighbours (odp_compute_knn): argument checks, the CPU
 *	  path, and dispatch to the GPU path.
 *
 * Both paths rank candidates by the shared distance definition
 * (odp_distance.h), ties by smaller candidate index, so they return the
 * same rows in the same order with bit-identical distances.  The inner
 * product is ranked as its negation (odp_dist_finish) and negated back
 * here, once both paths are done.
 *
 * Float64 rows (OdpMatrix.data64) are compared in float64 on both paths;
 * float32 rows in float32, their distances widened (exactly) into the
 * caller's float64 lists.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "include/odp_knn.h"
#include "knn/knn_internal.h"
#include "knn/spatial.h"

/* Where the CPU path's lists go. */
typedef struct CpuKnnOut
{
	int32_t		k;
	double	   *dist;
	int64_t    *index;
	int32_t    *short_lists;	/* set when a list came back short */
} CpuKnnOut;

/* Notes a short list; a race among writers of 1 is harmless. */
static void
cpu_knn_count(CpuKnnOut *out, int32_t count)
{
	if (count != out->k)
		*out->short_lists = 1;
}

/*
 * Stores one query's list of float32 distances, widened (exactly); emit
 * callback of the CPU k-NN primitive over float32 rows.
 */
static void
cpu_knn_emit(void *arg, int64_t query, const float *dist,
			 const int64_t *index, int32_t count)
{
	CpuKnnOut  *out = (CpuKnnOut *) arg;
	double	   *d = out->dist + query * out->k;

	for (int32_t j = 0; j < count; j++)
		d[j] = dist[j];
	memcpy(out->index + query * out->k, index, sizeof(int64_t) * count);
	cpu_knn_count(out, count);
}

/* The same for float64 rows: the distances as they are. */
static void
cpu_knn_emit64(void *arg, int64_t query, const double *dist,
			   const int64_t *index, int32_t count)
{
	CpuKnnOut  *out = (CpuKnnOut *) arg;

	memcpy(out->dist + query * out->k, dist, sizeof(double) * count);
	memcpy(out->index + query * out->k, index, sizeof(int64_t) * count);
	cpu_knn_count(out, count);
}

/*
 * A call's row norms for cosine, in the rows' precision (the other
 * pointer NULL); qnorms == cnorms for a self join.
 */
typedef struct KnnNorms
{
	float	   *q,
			   *c;
	double	   *q64,
			   *c64;
} KnnNorms;

/* CPU path: blocked brute force through the shared k-NN primitive. */
static OdpStatus
cpu_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
		const KnnNorms *norms, OdpMetric metric, int32_t k, bool self_join,
		double *dist, int64_t *index)
{
	OdpCpuKnnArgs args = {0};
	CpuKnnOut	out;
	int32_t		short_lists = 0;
	double		start = odp_now_ms();
	OdpStatus	status;

	out.k = k;
	out.dist = dist;
	out.index = index;
	out.short_lists = &short_lists;
	args.ctx = ctx;
	args.queries = queries;
	args.candidates = cands;
	args.query_norms = norms->q;
	args.cand_norms = norms->c;
	args.query_norms64 = norms->q64;
	args.cand_norms64 = norms->c64;
	args.metric = metric;
	args.k = k;
	args.self_join = self_join;
	args.emit = cpu_knn_emit;
	args.emit64 = cpu_knn_emit64;
	args.emit_arg = &out;
	status = odp_cpu_knn(&args);
	ctx->compute_ms = odp_now_ms() - start;
	if (status == ODP_OK && short_lists)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"a query kept fewer than k = %d neighbours on the CPU", k);
	return status;
}

/*
 * GPU path: float64 rows straight into dist (through the float32 filter
 * where it serves, knn_wide_filter.c); float32 rows through the
 * float32 lists of the GPU's search, written into the first half of dist
 * and widened (exactly) in place from the last entry back, so that no
 * float is overwritten before it is read (entry i's double covers floats
 * 2i and 2i + 1, which are i or later) and no second buffer is needed.
 */
static OdpStatus
gpu_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
		const KnnNorms *norms, OdpMetric metric, int32_t k, bool self_join,
		double *dist, int64_t *index)
{
	const size_t n = (size_t) queries->rows * (size_t) k;
	float	   *d32 = (float *) dist;
	OdpStatus	status;

	if (odp_matrix_is64(queries))
		return odp_knn64_filtered(ctx, queries, cands, norms->q64, norms->c64,
								  metric, k, self_join, dist, index);
	status = ODP_ERR_GPU_OOM;
	if (odp_gpu_knn_few_fits(queries, cands, metric, k, self_join))
		status = odp_gpu_knn_few(ctx, queries, cands, metric, k, d32, index);
	if (status == ODP_ERR_GPU_OOM)
	{
		/* many queries, or every distance would not fit: tiles, in chunks */
		ctx->message[0] = '\0';
		status = odp_split_knn(ctx, queries, cands, norms->q, norms->c, metric, k,
							   self_join, d32, index);
	}
	if (status == ODP_OK)
		for (size_t i = n; i-- > 0;)
		{
			float		f;

			memcpy(&f, d32 + i, sizeof(float));
			dist[i] = f;
		}
	return status;
}

/* Checks one input matrix of odp_compute_knn. */
static OdpStatus
knn_check_matrix(OdpContext *ctx, const OdpMatrix *m, const char *what)
{
	if (m == NULL || (m->data == NULL && m->data64 == NULL))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing %s", what);
	if (m->data != NULL && m->data64 != NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"the %s have both float32 and float64 values", what);
	if (m->dims < 1 || m->dims > ODP_MAX_DIMS)
		return odp_fail(ctx, ODP_ERR_LIMIT, "dimension %d of the %s is out of range 1 .. %d",
						(int) m->dims, what, ODP_MAX_DIMS);
	if (m->rows < 1 || m->rows > ODP_MAX_ROWS)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%lld %s: k-NN needs 1 .. %lld",
						(long long) m->rows, what, (long long) ODP_MAX_ROWS);
	return ODP_OK;
}

/* Computes the cosine norms of the call into *norms, in the rows' precision. */
static OdpStatus
knn_norms(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
		  bool self_join, KnnNorms *norms)
{
	OdpStatus	status;

	if (odp_matrix_is64(cands))
	{
		status = odp_matrix_norms64(ctx, cands, "candidate row", &norms->c64);
		if (status != ODP_OK)
			return status;
		if (self_join)
			norms->q64 = norms->c64;
		else
			return odp_matrix_norms64(ctx, queries, "query row", &norms->q64);
		return ODP_OK;
	}
	status = odp_matrix_norms(ctx, cands, "candidate row", &norms->c);
	if (status != ODP_OK)
		return status;
	if (self_join)
		norms->q = norms->c;
	else
		return odp_matrix_norms(ctx, queries, "query row", &norms->q);
	return ODP_OK;
}

/* Frees what knn_norms allocated. */
static void
knn_norms_free(KnnNorms *norms)
{
	if (norms->q != norms->c)
		free(norms->q);
	free(norms->c);
	if (norms->q64 != norms->c64)
		free(norms->q64);
	free(norms->c64);
}

/* See knn_internal.h. */
OdpStatus
odp_knn_check(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
			  OdpMetric metric, int32_t k, bool self_join)
{
	OdpStatus	status;
	int64_t		avail;

	if ((status = knn_check_matrix(ctx, queries, "query rows")) != ODP_OK ||
		(status = knn_check_matrix(ctx, cands, "candidate rows")) != ODP_OK)
		return status;
	if (queries->dims != cands->dims)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"queries have %d dimensions but candidates %d",
						(int) queries->dims, (int) cands->dims);
	if (odp_matrix_is64(queries) != odp_matrix_is64(cands))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"queries are %s but candidates %s: both need the same precision",
						odp_matrix_is64(queries) ? "float64" : "float32",
						odp_matrix_is64(cands) ? "float64" : "float32");
	if (self_join && (queries->data != cands->data || queries->data64 != cands->data64 ||
					  queries->rows != cands->rows))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"a self join needs the same matrix as queries and candidates");
	if ((int) metric < 0 || (int) metric >= ODP_METRIC_COUNT)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "unknown metric %d", (int) metric);
	avail = cands->rows - (self_join ? 1 : 0);
	if (k < 1 || k > ODP_MAX_K || k > avail)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"k = %d is out of range 1 .. %lld",
						(int) k, (long long) (avail < ODP_MAX_K ? avail : ODP_MAX_K));
	return ODP_OK;
}

/* See odp_knn.h. */
OdpStatus
odp_compute_knn(OdpContext *ctx, const OdpMatrix *queries,
				const OdpMatrix *cands, OdpMetric metric, int32_t k,
				bool self_join, double *dist, int64_t *index)
{
	KnnNorms	norms = {0};
	OdpStatus	status;

	if (ctx == NULL)
		return ODP_ERR_INVALID_ARGUMENT;
	ctx->message[0] = '\0';
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	if (dist == NULL || index == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing output buffer");
	if ((status = odp_knn_check(ctx, queries, cands, metric, k, self_join)) != ODP_OK)
		return status;

	ctx->spatial_used = 0;
	ctx->spatial_distances = 0;
	if (odp_spatial_chosen(ctx, metric, cands->dims, queries->rows, cands->rows, k))
	{
		OdpSpatialOut out = {dist, index, NULL};

		status = odp_spatial_knn(ctx, queries, cands, metric, k, self_join, &out);
		if (!odp_spatial_gave_way(ctx, status))
			return status;
		ctx->spatial_used = 0;
		ctx->message[0] = '\0';
	}

	if (metric == ODP_METRIC_COSINE &&
		(status = knn_norms(ctx, queries, cands, self_join, &norms)) != ODP_OK)
	{
		knn_norms_free(&norms);
		return status;
	}

	if (ctx->device == ODP_DEVICE_GPU)
		status = gpu_knn(ctx, queries, cands, &norms, metric, k, self_join, dist, index);
	else
		status = cpu_knn(ctx, queries, cands, &norms, metric, k, self_join, dist, index);

	knn_norms_free(&norms);
	if (status == ODP_OK && metric == ODP_METRIC_INNER_PRODUCT)
	{
		const size_t n = (size_t) queries->rows * (size_t) k;

		for (size_t i = 0; i < n; i++)
			dist[i] = -dist[i];
	}
	return status;
}
