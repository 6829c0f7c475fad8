/*-------------------------------------------------------------------------
 *
 * solvingset_wide.c
 *	  The SolvingSet backend of float64 rows (OdpMatrix.data64), one for
 *	  both paths, over the k-NN primitive of the call's path: the CPU's
 *	  (knn_cpu.c) or the GPU's (odp_knn64_filtered).
 *
 * exact() gathers the batch's rows and asks the primitive for each
 * candidate's k + 1 nearest rows of the whole matrix; dropping the
 * candidate's own row (where it is among them) leaves its k smallest
 * distances to the other rows, whose ascending float64 sum
 * (odp_sum_ascending64) is brute force's weight to the bit: the sum
 * depends only on the k smallest distances, not on which rows hold them.
 *
 * update() asks the primitive for every active row's min(k, batch)
 * nearest candidates of the batch (no active row is a candidate), and
 * merges those distances into the row's partial list, the k smallest
 * distances to candidates seen so far, ascending (rows x k doubles, kept
 * across batches).  upper[p] is the list's ascending sum once it holds k
 * distances, +inf before.  Since a row's i-th partial distance is at least
 * its i-th true one and the sum is monotone in every term, upper[p] >=
 * weight(p), as the driver (solvingset.c) needs.
 *
 * Both paths' primitives give the same distances bit for bit, and what
 * this file does with them runs on the host: so the weights, the bounds
 * and hence the solving set are the same on the CPU and the GPU.  Active
 * rows and batches go to the primitive in blocks that bound the host
 * memory of their lists; the primitive polls the cancel callback, and
 * so does this file between blocks.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_wide.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "include/odp_distance.h"
#include "knn/knn_internal.h"
#include "knn/knn_merge.h"
#include "outliers/solvingset_internal.h"

/*
 * Most bytes of one block's gathered rows and neighbour lists: large
 * enough that a GPU search of a block fills the device, and its transfers
 * and launches are few per batch.
 */
#define WIDE_BLOCK_BYTES	((size_t) 256 << 20)

/* The backend's state (OdpSsBackend.self). */
typedef struct WideSs
{
	OdpContext *ctx;
	const OdpMatrix *m;
	OdpMetric	metric;
	int32_t		k;
	const double *norms;		/* cosine only, else NULL */

	double	   *lists;			/* rows x k partial lists, ascending */
	int32_t    *filled;			/* rows: distances in each list */

	/* scratch, grown on demand */
	double	   *batch;			/* the batch's rows */
	double	   *bnorm;			/* and their norms (cosine) */
	int64_t		batch_cap;
	double	   *rows;			/* one block of query rows */
	double	   *rnorm;			/* and their norms (cosine) */
	int64_t    *row_of;			/* and the matrix row of each */
	double	   *dist;			/* the block's lists */
	int64_t    *index;
	int64_t		block;			/* query rows the block buffers hold */
	double	   *merged;			/* k: one row's merged list */
} WideSs;

/* Where the CPU primitive's lists go: dist/index[q * k ..]. */
typedef struct WideOut
{
	double	   *dist;
	int64_t    *index;
	int32_t		k;
} WideOut;

/* Emit callback of the CPU primitive: one query's list, padded with +inf. */
static void
wide_emit(void *arg, int64_t query, const double *dist, const int64_t *index,
		  int32_t count)
{
	WideOut    *out = (WideOut *) arg;

	memcpy(out->dist + query * out->k, dist, sizeof(double) * (size_t) count);
	memcpy(out->index + query * out->k, index, sizeof(int64_t) * (size_t) count);
	for (int32_t j = count; j < out->k; j++)
	{
		out->dist[query * out->k + j] = INFINITY;
		out->index[query * out->k + j] = -1;
	}
}

/*
 * The k nearest rows of cands for every row of queries (norms for
 * cosine), on the call's path, into dist/index[q * k ..], ascending by
 * (distance, index).
 */
static OdpStatus
wide_knn(WideSs *ss, const OdpMatrix *queries, const double *qnorms,
		 const OdpMatrix *cands, const double *cnorms, int32_t k,
		 double *dist, int64_t *index)
{
	OdpCpuKnnArgs args = {0};
	WideOut		out;

	if (ss->ctx->device == ODP_DEVICE_GPU)
		return odp_knn64_filtered(ss->ctx, queries, cands, qnorms, cnorms,
								  ss->metric, k, false, dist, index);
	out.dist = dist;
	out.index = index;
	out.k = k;
	args.ctx = ss->ctx;
	args.queries = queries;
	args.candidates = cands;
	args.query_norms64 = qnorms;
	args.cand_norms64 = cnorms;
	args.metric = ss->metric;
	args.k = k;
	args.emit64 = wide_emit;
	args.emit_arg = &out;
	return odp_cpu_knn(&args);
}

/* Makes the batch buffers hold nc rows. */
static OdpStatus
wide_reserve_batch(WideSs *ss, int64_t nc)
{
	const size_t dims = (size_t) ss->m->dims;
	double	   *p;

	if (nc <= ss->batch_cap)
		return ODP_OK;
	if ((p = realloc(ss->batch, sizeof(double) * (size_t) nc * dims)) == NULL)
		goto oom;
	ss->batch = p;
	if ((p = realloc(ss->bnorm, sizeof(double) * (size_t) nc)) == NULL)
		goto oom;
	ss->bnorm = p;
	ss->batch_cap = nc;
	return ODP_OK;
oom:
	return odp_fail(ss->ctx, ODP_ERR_HOST_OOM,
					"out of host memory for %lld SolvingSet candidates", (long long) nc);
}

/*
 * Allocates the block buffers, for lists of up to k + 1 (exact()'s), and
 * sets how many query rows a block takes; false out of memory.
 */
static bool
wide_alloc_block(WideSs *ss)
{
	const size_t dims = (size_t) ss->m->dims;
	const size_t k1 = (size_t) ss->k + 1;
	const size_t per_row = sizeof(double) * (dims + 1 + k1) +
		sizeof(int64_t) * (1 + k1);
	int64_t		rows = (int64_t) (WIDE_BLOCK_BYTES / per_row);

	if (rows < 1)
		rows = 1;
	if (rows > ss->m->rows)
		rows = ss->m->rows;
	ss->block = rows;
	ss->rows = malloc(sizeof(double) * (size_t) rows * dims);
	ss->rnorm = malloc(sizeof(double) * (size_t) rows);
	ss->row_of = malloc(sizeof(int64_t) * (size_t) rows);
	ss->dist = malloc(sizeof(double) * (size_t) rows * k1);
	ss->index = malloc(sizeof(int64_t) * (size_t) rows * k1);
	return ss->rows && ss->rnorm && ss->row_of && ss->dist && ss->index;
}

/* Copies row r of the matrix (and its norm) to position i of rows/norms. */
static void
wide_gather(const WideSs *ss, int64_t r, double *rows, double *norms, int64_t i)
{
	const size_t dims = (size_t) ss->m->dims;

	memcpy(rows + (size_t) i * dims, ss->m->data64 + (size_t) r * dims,
		   sizeof(double) * dims);
	norms[i] = ss->norms ? ss->norms[r] : 0.0;
}

/*
 * OdpSsBackend.exact: each candidate's k + 1 nearest rows, its own row
 * dropped, summed ascending.
 */
static OdpStatus
wide_exact(void *self, const int64_t *cand, int32_t nc, double *weight,
		   int64_t *distances)
{
	WideSs	   *ss = (WideSs *) self;
	const int32_t k1 = ss->k + 1;	/* k < rows and k < ODP_MAX_K */
	const int64_t block = ss->block;

	for (int64_t b = 0; b < nc; b += block)
	{
		const int64_t nb = nc - b < block ? nc - b : block;
		OdpMatrix	q = {0};
		OdpStatus	status;

		if (b > 0 && odp_cancel_requested(ss->ctx))
			return odp_fail(ss->ctx, ODP_ERR_CANCELLED, "canceled");
		for (int64_t i = 0; i < nb; i++)
			wide_gather(ss, cand[b + i], ss->rows, ss->rnorm, i);
		q.data64 = ss->rows;
		q.rows = nb;
		q.dims = ss->m->dims;
		status = wide_knn(ss, &q, ss->norms ? ss->rnorm : NULL, ss->m, ss->norms,
						  k1, ss->dist, ss->index);
		if (status != ODP_OK)
			return status;
		for (int64_t i = 0; i < nb; i++)
		{
			odp_list_without_row(ss->dist + i * k1, ss->index + i * k1, k1,
								 cand[b + i], ss->k, ss->merged, NULL);
			weight[b + i] = odp_sum_ascending64(ss->merged, ss->k);
		}
	}
	*distances += (int64_t) nc * (ss->m->rows - 1);
	return ODP_OK;
}

/*
 * Merges the ascending distances add[0 .. na) into row p's partial list;
 * returns whether the list changed.
 */
static bool
wide_merge(WideSs *ss, int64_t p, const double *add, int32_t na)
{
	const int32_t k = ss->k;
	double	   *list = ss->lists + p * k;
	const int32_t have = ss->filled[p];
	int32_t		i = 0,
				j = 0,
				n = 0;

	if (have == k && (na == 0 || !(add[0] < list[k - 1])))
		return false;
	while (n < k && (i < have || j < na))
	{
		if (j >= na || (i < have && !(add[j] < list[i])))
			ss->merged[n++] = list[i++];
		else
			ss->merged[n++] = add[j++];
	}
	memcpy(list, ss->merged, sizeof(double) * (size_t) n);
	ss->filled[p] = n;
	return true;
}

/*
 * OdpSsBackend.update: every active row's nearest candidates of the
 * batch, merged into its partial list; its bound rewritten where the list
 * changed.
 */
static OdpStatus
wide_update(void *self, const int64_t *cand, int32_t nc, const uint8_t *active,
			double *upper, int64_t *distances)
{
	WideSs	   *ss = (WideSs *) self;
	const OdpMatrix *m = ss->m;
	const int32_t kk = nc < ss->k ? nc : ss->k;
	OdpMatrix	batch = {0};
	const int64_t block = ss->block;
	int64_t		p = 0;
	OdpStatus	status;

	if (nc <= 0)
		return ODP_OK;
	if ((status = wide_reserve_batch(ss, nc)) != ODP_OK)
		return status;
	for (int32_t i = 0; i < nc; i++)
		wide_gather(ss, cand[i], ss->batch, ss->bnorm, i);
	batch.data64 = ss->batch;
	batch.rows = nc;
	batch.dims = m->dims;

	while (p < m->rows)
	{
		int64_t		nb = 0;
		OdpMatrix	q = {0};

		for (; p < m->rows && nb < block; p++)
			if (active[p])
			{
				ss->row_of[nb] = p;
				wide_gather(ss, p, ss->rows, ss->rnorm, nb);
				nb++;
			}
		if (nb == 0)
			break;
		q.data64 = ss->rows;
		q.rows = nb;
		q.dims = m->dims;
		status = wide_knn(ss, &q, ss->norms ? ss->rnorm : NULL, &batch,
						  ss->norms ? ss->bnorm : NULL, kk, ss->dist, ss->index);
		if (status != ODP_OK)
			return status;
		for (int64_t i = 0; i < nb; i++)
		{
			const int64_t r = ss->row_of[i];

			if (wide_merge(ss, r, ss->dist + i * kk, kk))
				upper[r] = ss->filled[r] < ss->k ? INFINITY :
					odp_sum_ascending64(ss->lists + r * ss->k, ss->k);
		}
		*distances += nb * nc;
		if (odp_cancel_requested(ss->ctx))
			return odp_fail(ss->ctx, ODP_ERR_CANCELLED, "canceled");
	}
	return ODP_OK;
}

/* OdpSsBackend.release: frees the state; self may be NULL. */
static void
wide_release(void *self)
{
	WideSs	   *ss = (WideSs *) self;

	if (ss == NULL)
		return;
	free(ss->lists);
	free(ss->filled);
	free(ss->batch);
	free(ss->bnorm);
	free(ss->rows);
	free(ss->rnorm);
	free(ss->row_of);
	free(ss->dist);
	free(ss->index);
	free(ss->merged);
	free(ss);
}

/* See solvingset_internal.h. */
OdpStatus
odp_wide_ss_backend(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
					int32_t k, const double *norms, OdpSsBackend *backend)
{
	WideSs	   *ss = calloc(1, sizeof(WideSs));

	if (ss == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for the SolvingSet backend");
	ss->ctx = ctx;
	ss->m = m;
	ss->metric = metric;
	ss->k = k;
	ss->norms = norms;
	ss->lists = malloc(sizeof(double) * (size_t) m->rows * (size_t) k);
	ss->filled = calloc((size_t) m->rows, sizeof(int32_t));
	ss->merged = malloc(sizeof(double) * (size_t) (k + 1));
	if (ss->lists == NULL || ss->filled == NULL || ss->merged == NULL ||
		!wide_alloc_block(ss))
	{
		wide_release(ss);
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld x %d SolvingSet neighbour distances",
						(long long) m->rows, (int) k);
	}
	memset(backend, 0, sizeof(*backend));
	backend->self = ss;
	backend->exact = wide_exact;
	backend->update = wide_update;
	backend->release = wide_release;
	return ODP_OK;
}
