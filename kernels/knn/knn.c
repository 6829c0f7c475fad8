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

/* Where the CPU path's lists go. */
typedef struct CpuKnnOut
{
	int32_t		k;
	float	   *dist;
	int64_t    *index;
	int32_t    *short_lists;	/* set when a list came back short */
} CpuKnnOut;

/* Stores one query's list; emit callback of the CPU k-NN primitive. */
static void
cpu_knn_emit(void *arg, int64_t query, const float *dist,
			 const int64_t *index, int32_t count)
{
	CpuKnnOut  *out = (CpuKnnOut *) arg;

	memcpy(out->dist + query * out->k, dist, sizeof(float) * count);
	memcpy(out->index + query * out->k, index, sizeof(int64_t) * count);
	if (count != out->k)
		*out->short_lists = 1;	/* a race among writers of 1 is harmless */
}

/* CPU path: blocked brute force through the shared k-NN primitive. */
static OdpStatus
cpu_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
		const float *qnorms, const float *cnorms, OdpMetric metric,
		int32_t k, bool self_join, float *dist, int64_t *index)
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
	args.query_norms = qnorms;
	args.cand_norms = cnorms;
	args.metric = metric;
	args.k = k;
	args.self_join = self_join;
	args.emit = cpu_knn_emit;
	args.emit_arg = &out;
	status = odp_cpu_knn(&args);
	ctx->compute_ms = odp_now_ms() - start;
	if (status == ODP_OK && short_lists)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"a query kept fewer than k = %d neighbours on the CPU", k);
	return status;
}

/* Checks one input matrix of odp_compute_knn. */
static OdpStatus
knn_check_matrix(OdpContext *ctx, const OdpMatrix *m, const char *what)
{
	if (m == NULL || m->data == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing %s", what);
	if (m->dims < 1 || m->dims > ODP_MAX_DIMS)
		return odp_fail(ctx, ODP_ERR_LIMIT, "dimension %d of the %s is out of range 1 .. %d",
						(int) m->dims, what, ODP_MAX_DIMS);
	if (m->rows < 1 || m->rows > ODP_MAX_ROWS)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%lld %s: k-NN needs 1 .. %lld",
						(long long) m->rows, what, (long long) ODP_MAX_ROWS);
	return ODP_OK;
}

/* See odp_knn.h. */
OdpStatus
odp_compute_knn(OdpContext *ctx, const OdpMatrix *queries,
				const OdpMatrix *cands, OdpMetric metric, int32_t k,
				bool self_join, float *dist, int64_t *index)
{
	float	   *qnorms = NULL;
	float	   *cnorms = NULL;
	OdpStatus	status;
	int64_t		avail;

	if (ctx == NULL)
		return ODP_ERR_INVALID_ARGUMENT;
	ctx->message[0] = '\0';
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	if (dist == NULL || index == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing output buffer");
	if ((status = knn_check_matrix(ctx, queries, "query rows")) != ODP_OK ||
		(status = knn_check_matrix(ctx, cands, "candidate rows")) != ODP_OK)
		return status;
	if (queries->dims != cands->dims)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"queries have %d dimensions but candidates %d",
						(int) queries->dims, (int) cands->dims);
	if (self_join && (queries->data != cands->data || queries->rows != cands->rows))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"a self join needs the same matrix as queries and candidates");
	if ((int) metric < 0 || (int) metric >= ODP_METRIC_COUNT)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "unknown metric %d", (int) metric);
	avail = cands->rows - (self_join ? 1 : 0);
	if (k < 1 || k > ODP_MAX_K || k > avail)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"k = %d is out of range 1 .. %lld",
						(int) k, (long long) (avail < ODP_MAX_K ? avail : ODP_MAX_K));

	if (metric == ODP_METRIC_COSINE)
	{
		status = odp_matrix_norms(ctx, cands, "candidate row", &cnorms);
		if (status != ODP_OK)
			return status;
		if (self_join)
			qnorms = cnorms;
		else if ((status = odp_matrix_norms(ctx, queries, "query row", &qnorms)) != ODP_OK)
		{
			free(cnorms);
			return status;
		}
	}

	if (ctx->device == ODP_DEVICE_GPU)
		status = odp_split_knn(ctx, queries, cands, qnorms, cnorms, metric, k,
							 self_join, dist, index);
	else
		status = cpu_knn(ctx, queries, cands, qnorms, cnorms, metric, k,
						 self_join, dist, index);

	if (qnorms != cnorms)
		free(qnorms);
	free(cnorms);
	if (status == ODP_OK && metric == ODP_METRIC_INNER_PRODUCT)
	{
		const size_t n = (size_t) queries->rows * (size_t) k;

		for (size_t i = 0; i < n; i++)
			dist[i] = -dist[i];
	}
	return status;
}
