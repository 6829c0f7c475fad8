/*-------------------------------------------------------------------------
 *
 * solvingset_distributed.c
 *	  Distributed SolvingSet (odp_distributed.h): the node's step over its shard,
 *	  the supervisor's choices and merges, and the loop that joins them.
 *
 * Each step mirrors the single-matrix driver (solvingset.c) with row
 * indexes replaced by ids: the distances are odp_distance's on both
 * paths (the node's work goes through the k-NN engine on ctx->device),
 * the k smallest are summed in ascending order, and every choice breaks
 * ties by the smaller id.  So the nodes and the supervisor together make
 * exactly the choices one run over all the rows makes.
 *
 * Float64 rows (data64) take the same steps in double: their node has no
 * SolvingSet backend (the float64 one has no node entries), so it works
 * through the k-NN engine, whose distances are the float64 driver's.
 * Lists and bounds are double for both precisions; float32 distances
 * widen to them exactly, so a float32 run's answers are unchanged.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_distributed.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "common/host_sort.h"
#include "include/odp_distance.h"
#include "include/odp_distributed.h"
#include "include/odp_knn.h"
#include "outliers/solvingset_internal.h"

/*
 * Bytes of neighbour lists one k-NN call of the bounds update may fill:
 * the active rows go through the engine in blocks of this size, so a
 * shard of any size needs a bounded scratch.
 */
#define SS_UPDATE_BLOCK_BYTES	((size_t) 256 << 20)

/* See solvingset_internal.h: a test hook, 1 in production. */
int			odp_ss_node_backend = 1;

struct OdpSsNode
{
	OdpMatrix	shard;
	OdpMetric	metric;
	int32_t		k;
	bool		bounds;
	uint8_t    *active;
	double	   *upper;			/* bound per row: +inf until filled */

	/*
	 * The path's SolvingSet backend keeps the shard and its partial lists
	 * (on the GPU: resident in device memory) from step to step; its
	 * context lives here, refreshed from each step's caller.
	 */
	bool		have_backend;
	OdpSsBackend backend;
	OdpContext	bctx;
	float	   *norms;			/* cosine, for the backend */

	/*
	 * without a backend (too few rows, float64 rows, or no room): the
	 * k-NN engine
	 */
	double	   *lists;			/* rows * k partial lists, ascending */
	int32_t    *filled;			/* distances seen per row, at most k */
	int64_t    *act_rows;		/* scratch: active rows */
	double	   *act_upper;		/* scratch: their bounds */
	int64_t    *act_ids;		/* scratch: their ids */
	int64_t    *perm;			/* scratch: chosen positions */
};

/* A (rank, id) pair with where it came from, for the supervisor's choice. */
typedef struct SsProposal
{
	double		rank;
	uint64_t	key;			/* first batch: the key's bits */
	int64_t		id;
	int32_t		from;			/* proposal list */
	int64_t		pos;			/* row in that list */
} SsProposal;

/* Solving-set member or Top entry. */
typedef struct SsWeighted
{
	double		weight;
	int64_t		id;
} SsWeighted;

struct OdpSsSupervisor
{
	int64_t		rows;
	int32_t		k;
	int64_t		n;
	int64_t		m;
	bool		prune;
	SsWeighted *top;			/* n + m, the best ntop first */
	int64_t		ntop;
	SsWeighted *set;			/* the solving set in visiting order */
	int64_t		set_size;
	int64_t		set_capacity;
	SsProposal *pool;			/* scratch of the choice */
	int64_t		pool_capacity;
	double	   *merged;			/* scratch: one candidate's k distances */
	int32_t		iterations;
};

/* Top order: weight descending, then smaller id. */
static int
ss_cmp_weighted(const void *a, const void *b)
{
	const SsWeighted *x = (const SsWeighted *) a;
	const SsWeighted *y = (const SsWeighted *) b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static int
ss_cmp_weighted_id(const void *a, const void *b)
{
	const SsWeighted *x = (const SsWeighted *) a;
	const SsWeighted *y = (const SsWeighted *) b;

	return (x->id > y->id) - (x->id < y->id);
}

/* First batch: key ascending, then smaller id. */
static int
ss_cmp_first(const void *a, const void *b)
{
	const SsProposal *x = (const SsProposal *) a;
	const SsProposal *y = (const SsProposal *) b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Later batches: upper bound descending, then smaller id. */
static int
ss_cmp_upper(const void *a, const void *b)
{
	const SsProposal *x = (const SsProposal *) a;
	const SsProposal *y = (const SsProposal *) b;

	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static int
ss_cmp_proposal_id(const void *a, const void *b)
{
	const SsProposal *x = (const SsProposal *) a;
	const SsProposal *y = (const SsProposal *) b;

	return (x->id > y->id) - (x->id < y->id);
}

static double
ss_key_as_rank(uint64_t key)
{
	double		r;

	memcpy(&r, &key, sizeof(r));
	return r;
}

static uint64_t
ss_rank_as_key(double rank)
{
	uint64_t	key;

	memcpy(&key, &rank, sizeof(key));
	return key;
}

/* See solvingset_internal.h. */
int64_t
odp_row_of_id(const OdpMatrix *m, int64_t id)
{
	int64_t		lo = 0;
	int64_t		hi = m->rows;

	if (m->ids == NULL)
		return id >= 0 && id < m->rows ? id : -1;
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (m->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->rows && m->ids[lo] == id ? lo : -1;
}

/* Writes shard rows rows[0 .. count) with rank[] into out. */
static OdpStatus
ss_node_propose(OdpContext *ctx, OdpSsNode *node, const int64_t *rows,
				const double *rank, int64_t count, OdpSsRows *out)
{
	const int32_t dims = node->shard.dims;
	const bool	wide = odp_matrix_is64(&node->shard);

	if (count > out->capacity || out->dims != dims ||
		(count > 0 && (wide ? out->vectors64 == NULL : out->vectors == NULL)))
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"a node proposes %lld rows of %d dimensions into room for %lld of %d",
						(long long) count, (int) dims,
						(long long) out->capacity, (int) out->dims);
	for (int64_t i = 0; i < count; i++)
	{
		int64_t		r = rows[i];

		out->ids[i] = node->shard.ids[r];
		out->rank[i] = rank[i];
		out->bound[i] = INFINITY;
		if (wide)
			memcpy(out->vectors64 + i * dims, node->shard.data64 + r * dims,
				   sizeof(double) * (size_t) dims);
		else
			memcpy(out->vectors + i * dims, node->shard.data + r * dims,
				   sizeof(float) * (size_t) dims);
	}
	if (node->have_backend && node->backend.row_bounds != NULL && count > 0)
	{
		float	   *b32 = malloc(sizeof(float) * (size_t) count);

		/* without room for them, the +inf bounds stand (always allowed) */
		if (b32 != NULL)
		{
			/* the backend's context is the caller's of this step */
			node->bctx = *ctx;
			node->backend.row_bounds(node->backend.self, rows, count, b32);
			*ctx = node->bctx;
			for (int64_t i = 0; i < count; i++)
				out->bound[i] = b32[i];
			free(b32);
		}
	}
	out->count = count;
	return ODP_OK;
}

/* ---- node ---- */

/*
 * Starts the path's SolvingSet backend over the shard, when it has more
 * than k float32 rows; a GPU without room for it leaves the node on the
 * k-NN engine, which chunks (every other failure is the caller's).
 */
static OdpStatus
ss_node_backend(OdpContext *ctx, OdpSsNode *nd)
{
	OdpStatus	status;

	if (!odp_ss_node_backend || nd->shard.rows <= nd->k ||
		odp_matrix_is64(&nd->shard))
		return ODP_OK;
	nd->bctx = *ctx;
	if (nd->metric == ODP_METRIC_COSINE)
	{
		status = odp_matrix_norms(&nd->bctx, &nd->shard, "row", &nd->norms);
		if (status != ODP_OK)
		{
			*ctx = nd->bctx;
			return status;
		}
	}
	if (ctx->device == ODP_DEVICE_GPU)
		status = odp_gpu_ss_backend(&nd->bctx, &nd->shard, nd->metric, nd->k,
									nd->norms, &nd->backend);
	else
		status = odp_cpu_ss_backend(&nd->bctx, &nd->shard, nd->metric, nd->k,
									nd->norms, &nd->backend);
	if (status == ODP_ERR_GPU_OOM)
	{
		nd->bctx.message[0] = '\0';
		return ODP_OK;
	}
	if (status != ODP_OK)
	{
		*ctx = nd->bctx;
		return status;
	}
	nd->have_backend = true;
	return ODP_OK;
}

void
odp_ss_node_free(OdpSsNode *node)
{
	if (node == NULL)
		return;
	if (node->have_backend)
		node->backend.release(node->backend.self);
	free(node->norms);
	free(node->active);
	free(node->lists);
	free(node->filled);
	free(node->upper);
	free(node->act_rows);
	free(node->act_upper);
	free(node->act_ids);
	free(node->perm);
	free(node);
}

OdpStatus
odp_ss_node_create(OdpContext *ctx, const OdpMatrix *rows, OdpMetric metric,
				   int32_t k, bool bounds, OdpSsNode **node)
{
	const size_t nrows = (size_t) rows->rows;
	OdpSsNode  *nd;

	*node = NULL;
	if (k < 1 || k >= ODP_MAX_K)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"k = %d: must be between 1 and %d", (int) k, ODP_MAX_K - 1);
	if (!odp_metric_is_distance(metric))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"outliers need a distance metric, not the inner product");
	if (rows->rows > 0 && rows->ids == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "a shard's rows need ids");
	for (int64_t r = 1; r < rows->rows; r++)
		if (rows->ids[r] <= rows->ids[r - 1])
			return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
							"a shard's ids must be strictly ascending");
	nd = calloc(1, sizeof(OdpSsNode));
	if (nd == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for a node's state");
	nd->shard = *rows;
	nd->metric = metric;
	nd->k = k;
	nd->bounds = bounds;
	nd->active = malloc(nrows + 1);
	nd->act_rows = malloc(sizeof(int64_t) * (nrows + 1));
	nd->act_upper = malloc(sizeof(double) * (nrows + 1));
	nd->act_ids = malloc(sizeof(int64_t) * (nrows + 1));
	nd->perm = malloc(sizeof(int64_t) * (nrows + 1));
	if (bounds)
	{
		OdpStatus	status = ss_node_backend(ctx, nd);

		if (status != ODP_OK)
		{
			odp_ss_node_free(nd);
			return status;
		}
		nd->upper = malloc(sizeof(double) * (nrows + 1));
		if (!nd->have_backend)
		{
			nd->lists = malloc(sizeof(double) * (nrows * (size_t) k + 1));
			nd->filled = calloc(nrows + 1, sizeof(int32_t));
		}
	}
	if (!nd->active || !nd->act_rows || !nd->act_upper || !nd->act_ids ||
		!nd->perm || (bounds && !nd->upper) ||
		(bounds && !nd->have_backend && (!nd->lists || !nd->filled)))
	{
		odp_ss_node_free(nd);
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for the SolvingSet state of a shard of %lld rows",
						(long long) rows->rows);
	}
	memset(nd->active, 1, nrows);
	if (bounds)
		for (size_t r = 0; r < nrows; r++)
			nd->upper[r] = INFINITY;
	*node = nd;
	return ODP_OK;
}

OdpStatus
odp_ss_node_first(OdpContext *ctx, OdpSsNode *node, int64_t m, OdpSsRows *out)
{
	int64_t		count = m < node->shard.rows ? m : node->shard.rows;
	OdpStatus	status;

	out->count = 0;
	if (count <= 0)
		return ODP_OK;
	status = odp_ss_first_rows(ctx, node->shard.ids, node->shard.rows, count,
							   node->act_rows);
	if (status != ODP_OK)
		return status;
	for (int64_t i = 0; i < count; i++)
		node->act_upper[i] =
			ss_key_as_rank(odp_ss_first_key(node->shard.ids[node->act_rows[i]]));
	return ss_node_propose(ctx, node, node->act_rows, node->act_upper, count, out);
}

/*
 * Merges the sorted list add[0 .. na) into row r's partial list, keeping
 * its k smallest.
 */
static void
ss_node_merge_list(OdpSsNode *node, int64_t r, const double *add, int32_t na)
{
	const int32_t k = node->k;
	double	   *list = node->lists + r * k;
	int32_t		have = node->filled[r];
	double		merged[ODP_MAX_K];
	int32_t		i = 0,
				j = 0,
				o = 0;
	int32_t		total = have + na < k ? have + na : k;

	while (o < total)
	{
		if (j >= na || (i < have && list[i] <= add[j]))
			merged[o++] = list[i++];
		else
			merged[o++] = add[j++];
	}
	memcpy(list, merged, sizeof(double) * (size_t) total);
	node->filled[r] = total;
	node->upper[r] = total == k ? odp_sum_ascending64(list, k) : INFINITY;
}

/*
 * Every active row merges its distances to the candidates into its
 * partial list, through the k-NN engine in blocks of active rows.
 */
static OdpStatus
ss_node_update_bounds(OdpContext *ctx, OdpSsNode *node, const OdpSsRows *cands,
					  int64_t *distances)
{
	const int32_t dims = node->shard.dims;
	const int32_t kk = (int32_t) (cands->count < node->k ? cands->count : node->k);
	const bool	wide = odp_matrix_is64(&node->shard);
	const size_t vsize = wide ? sizeof(double) : sizeof(float);
	int64_t		nact = 0;
	int64_t		block;
	char	   *q = NULL;
	double	   *d = NULL;
	int64_t    *idx = NULL;
	OdpMatrix	cm = {0};
	OdpStatus	status = ODP_OK;

	for (int64_t r = 0; r < node->shard.rows; r++)
		if (node->active[r])
			node->act_rows[nact++] = r;
	if (nact == 0 || kk == 0)
		return ODP_OK;
	block = (int64_t) (SS_UPDATE_BLOCK_BYTES /
					   ((sizeof(double) + sizeof(int64_t)) * (size_t) kk +
						vsize * (size_t) dims));
	if (block < 1024)
		block = 1024;
	if (block > nact)
		block = nact;
	q = malloc(vsize * (size_t) block * (size_t) dims);
	d = malloc(sizeof(double) * (size_t) block * (size_t) kk);
	idx = malloc(sizeof(int64_t) * (size_t) block * (size_t) kk);
	if (q == NULL || d == NULL || idx == NULL)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the bounds of %lld rows",
						  (long long) block);
		goto done;
	}
	cm.data = cands->vectors;
	cm.data64 = cands->vectors64;
	cm.rows = cands->count;
	cm.dims = dims;
	for (int64_t b = 0; b < nact && status == ODP_OK; b += block)
	{
		int64_t		nb = nact - b < block ? nact - b : block;
		const char *rows = wide ? (const char *) node->shard.data64 :
			(const char *) node->shard.data;
		OdpMatrix	qm = {0};

		for (int64_t i = 0; i < nb; i++)
			memcpy(q + (size_t) i * dims * vsize,
				   rows + (size_t) node->act_rows[b + i] * dims * vsize,
				   vsize * (size_t) dims);
		if (wide)
			qm.data64 = (const double *) q;
		else
			qm.data = (const float *) q;
		qm.rows = nb;
		qm.dims = dims;
		status = odp_compute_knn(ctx, &qm, &cm, node->metric, kk, false, d, idx);
		if (status != ODP_OK)
			break;
		for (int64_t i = 0; i < nb; i++)
			ss_node_merge_list(node, node->act_rows[b + i], d + i * kk, kk);
		*distances += nb * cands->count;
	}
done:
	free(q);
	free(d);
	free(idx);
	return status;
}

/*
 * odp_ss_node_exact through the backend: the own candidates leave the
 * active rows, then one call does both steps with the batch by value.
 */
static OdpStatus
ss_node_exact_backend(OdpContext *ctx, OdpSsNode *node, const OdpSsRows *cands,
					  double *lists, int64_t *distances)
{
	const size_t cells = (size_t) cands->count * (size_t) node->k;
	int64_t    *own;
	float	   *b32;
	float	   *l32;
	OdpStatus	status;

	if (cands->count > INT32_MAX)
		return odp_fail(ctx, ODP_ERR_LIMIT, "%lld candidates in one batch",
						(long long) cands->count);
	own = malloc(sizeof(int64_t) * (size_t) cands->count);
	b32 = malloc(sizeof(float) * (size_t) cands->count);
	l32 = malloc(sizeof(float) * cells);
	if (own == NULL || b32 == NULL || l32 == NULL)
	{
		free(own);
		free(b32);
		free(l32);
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %lld candidates",
						(long long) cands->count);
	}
	for (int64_t c = 0; c < cands->count; c++)
	{
		int64_t		r = odp_row_of_id(&node->shard, cands->ids[c]);

		own[c] = r;
		if (r < 0)
			continue;
		if (!node->active[r])
		{
			free(own);
			free(b32);
			free(l32);
			return odp_fail(ctx, ODP_ERR_DATA,
							"the row of id %lld was a candidate of an earlier batch",
							(long long) cands->ids[c]);
		}
		node->active[r] = 0;
	}
	/*
	 * the float32 backend's bounds and lists are float32 distances: the
	 * bounds narrow back exactly, the lists widen exactly
	 */
	for (int64_t c = 0; c < cands->count; c++)
		b32[c] = (float) cands->bound[c];
	node->bctx = *ctx;
	status = node->backend.external(node->backend.self, cands->vectors, own,
									b32, (int32_t) cands->count, node->active,
									l32, node->upper, distances);
	*ctx = node->bctx;
	for (size_t i = 0; status == ODP_OK && i < cells; i++)
		lists[i] = l32[i];
	free(own);
	free(b32);
	free(l32);
	return status;
}

OdpStatus
odp_ss_node_exact(OdpContext *ctx, OdpSsNode *node, const OdpSsRows *cands,
				  double *lists, int64_t *distances)
{
	const int32_t k = node->k;
	int64_t    *ids = NULL;
	OdpMatrix	qm = {0};
	OdpStatus	status;

	if (node->shard.rows > 0 && cands->dims != node->shard.dims)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"candidates of %d dimensions sent to a shard of %d",
						(int) cands->dims, (int) node->shard.dims);
	if (cands->count == 0)
		return ODP_OK;
	if (node->shard.rows > 0 &&
		(cands->vectors64 != NULL) != odp_matrix_is64(&node->shard))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"candidates of %s rows sent to a shard of %s rows",
						cands->vectors64 != NULL ? "float64" : "float32",
						odp_matrix_is64(&node->shard) ? "float64" : "float32");
	if (node->have_backend)
		return ss_node_exact_backend(ctx, node, cands, lists, distances);
	ids = malloc(sizeof(int64_t) * (size_t) cands->count * (size_t) k);
	if (ids == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld neighbour lists",
						(long long) cands->count);
	qm.data = cands->vectors;
	qm.data64 = cands->vectors64;
	qm.rows = cands->count;
	qm.dims = cands->dims;
	status = odp_knn_excluding(ctx, &qm, cands->ids, &node->shard,
							   node->shard.ids, node->metric, k, lists, ids);
	free(ids);
	if (status != ODP_OK)
		return status;
	*distances += cands->count * node->shard.rows;

	/* the node's own candidates join the solving set */
	for (int64_t c = 0; c < cands->count; c++)
	{
		int64_t		r = odp_row_of_id(&node->shard, cands->ids[c]);

		if (r < 0)
			continue;
		if (!node->active[r])
			return odp_fail(ctx, ODP_ERR_DATA,
							"the row of id %lld was a candidate of an earlier batch",
							(long long) cands->ids[c]);
		node->active[r] = 0;
	}
	if (!node->bounds)
		return ODP_OK;
	if (odp_cancel_requested(ctx))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
	return ss_node_update_bounds(ctx, node, cands, distances);
}

OdpStatus
odp_ss_node_next(OdpContext *ctx, OdpSsNode *node, bool prune, double min_out,
				 int64_t m, OdpSsRows *out)
{
	int64_t		nact = 0;
	int64_t		count;

	out->count = 0;
	if (!node->bounds)
	{
		/* no bounds: the active rows of smallest id, in order */
		for (int64_t r = 0; r < node->shard.rows && nact < m; r++)
		{
			if (!node->active[r])
				continue;
			node->act_rows[nact] = r;
			node->act_upper[nact] = INFINITY;
			nact++;
		}
		return ss_node_propose(ctx, node, node->act_rows, node->act_upper,
							   nact, out);
	}
	if (node->have_backend && node->backend.select != NULL)
	{
		bool		done = false;
		OdpStatus	status;

		/* where the bounds are: the GPU backend prunes and chooses there */
		node->bctx = *ctx;
		status = node->backend.select(node->backend.self, prune, min_out, m,
									  node->active, node->perm, &count, &done);
		*ctx = node->bctx;
		if (status != ODP_OK)
			return status;
		if (done)
		{
			for (int64_t i = 0; i < count; i++)
				node->act_upper[i] = node->upper[node->perm[i]];
			return ss_node_propose(ctx, node, node->perm, node->act_upper, count, out);
		}
	}
	for (int64_t r = 0; r < node->shard.rows; r++)
	{
		if (!node->active[r])
			continue;
		if (prune && node->upper[r] < min_out)
		{
			node->active[r] = 0;
			continue;
		}
		node->act_rows[nact] = r;
		node->act_upper[nact] = node->upper[r];
		node->act_ids[nact] = node->shard.ids[r];
		nact++;
	}
	count = odp_top_n(node->act_upper, node->act_ids, nact, m, node->perm);
	/* ascending by row is ascending by id; the bounds travel along */
	for (int64_t i = 0; i < count; i++)
		node->perm[i] = node->act_rows[node->perm[i]];
	odp_sort_int64(node->perm, count);
	for (int64_t i = 0; i < count; i++)
		node->act_upper[i] = node->upper[node->perm[i]];
	return ss_node_propose(ctx, node, node->perm, node->act_upper, count, out);
}

/* ---- supervisor ---- */

void
odp_ss_sup_free(OdpSsSupervisor *sup)
{
	if (sup == NULL)
		return;
	free(sup->top);
	free(sup->set);
	free(sup->pool);
	free(sup->merged);
	free(sup);
}

OdpStatus
odp_ss_sup_create(OdpContext *ctx, int64_t rows, int32_t k, int64_t n,
				  int64_t m, bool prune, OdpSsSupervisor **sup)
{
	OdpSsSupervisor *s;

	*sup = NULL;
	if (k < 1 || k >= ODP_MAX_K || rows <= k || n < 1 || n > rows || m < n || m > rows)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"a distributed SolvingSet needs 1 <= k < rows and n <= m <= rows "
						"(k = %d, n = %lld, m = %lld, %lld rows)",
						(int) k, (long long) n, (long long) m, (long long) rows);
	s = calloc(1, sizeof(OdpSsSupervisor));
	if (s == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for the supervisor");
	s->rows = rows;
	s->k = k;
	s->n = n;
	s->m = m;
	s->prune = prune;
	s->top = malloc(sizeof(SsWeighted) * (size_t) (n + m));
	s->merged = malloc(sizeof(double) * (size_t) k);
	if (s->top == NULL || s->merged == NULL)
	{
		odp_ss_sup_free(s);
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for the supervisor");
	}
	*sup = s;
	return ODP_OK;
}

OdpStatus
odp_ss_sup_choose(OdpContext *ctx, OdpSsSupervisor *sup, const OdpSsRows *props,
				  int nprops, bool first, OdpSsRows *cands)
{
	int64_t		total = 0;
	int64_t		take;
	int32_t		dims = cands->dims;

	cands->count = 0;
	for (int i = 0; i < nprops; i++)
	{
		if (props[i].count > 0 && props[i].dims != dims)
			return odp_fail(ctx, ODP_ERR_DATA,
							"a node proposed rows of %d dimensions, the others %d",
							(int) props[i].dims, (int) dims);
		total += props[i].count;
	}
	if (total == 0)
		return ODP_OK;
	if (total > sup->pool_capacity)
	{
		SsProposal *grown = realloc(sup->pool, sizeof(SsProposal) * (size_t) total);

		if (grown == NULL)
			return odp_fail(ctx, ODP_ERR_HOST_OOM,
							"out of host memory for %lld proposals", (long long) total);
		sup->pool = grown;
		sup->pool_capacity = total;
	}
	total = 0;
	for (int i = 0; i < nprops; i++)
		for (int64_t j = 0; j < props[i].count; j++)
		{
			SsProposal *p = &sup->pool[total++];

			p->rank = props[i].rank[j];
			p->key = first ? ss_rank_as_key(props[i].rank[j]) : 0;
			p->id = props[i].ids[j];
			p->from = i;
			p->pos = j;
		}
	qsort(sup->pool, (size_t) total, sizeof(SsProposal),
		  first ? ss_cmp_first : ss_cmp_upper);
	take = total < sup->m ? total : sup->m;
	if (take > cands->capacity)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"%lld candidates for room for %lld",
						(long long) take, (long long) cands->capacity);
	qsort(sup->pool, (size_t) take, sizeof(SsProposal), ss_cmp_proposal_id);
	for (int64_t i = 0; i < take; i++)
	{
		const SsProposal *p = &sup->pool[i];

		if (i > 0 && p->id == sup->pool[i - 1].id)
			return odp_fail(ctx, ODP_ERR_DATA,
							"two nodes hold a row of id %lld: the shards overlap",
							(long long) p->id);
		cands->ids[i] = p->id;
		cands->rank[i] = p->rank;
		cands->bound[i] = props[p->from].bound[p->pos];
		if (cands->vectors64 != NULL && props[p->from].vectors64 != NULL)
			memcpy(cands->vectors64 + i * dims, props[p->from].vectors64 + p->pos * dims,
				   sizeof(double) * (size_t) dims);
		else if (cands->vectors != NULL && props[p->from].vectors != NULL)
			memcpy(cands->vectors + i * dims, props[p->from].vectors + p->pos * dims,
				   sizeof(float) * (size_t) dims);
		else
			return odp_fail(ctx, ODP_ERR_DATA,
							"a node proposed rows of another precision than the run's");
	}
	cands->count = take;
	return ODP_OK;
}

OdpStatus
odp_ss_sup_merge(OdpContext *ctx, OdpSsSupervisor *sup, const OdpSsRows *cands,
				 const double *const *lists, int nlists, bool *prune,
				 double *min_out)
{
	const int32_t k = sup->k;
	int32_t		pos[64];
	int64_t		nc = cands->count;

	if (nlists < 1 || nlists > 64)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%d nodes: a distributed run takes 1 to 64", nlists);
	if (sup->set_size + nc > sup->set_capacity)
	{
		int64_t		cap = sup->set_capacity * 2 > sup->set_size + nc ?
			sup->set_capacity * 2 : sup->set_size + nc;
		SsWeighted *grown;

		if (cap > sup->rows)
			cap = sup->rows;
		if (cap < sup->set_size + nc)
			return odp_fail(ctx, ODP_ERR_DATA,
							"the nodes returned more candidates than the %lld rows they reported",
							(long long) sup->rows);
		grown = realloc(sup->set, sizeof(SsWeighted) * (size_t) cap);
		if (grown == NULL)
			return odp_fail(ctx, ODP_ERR_HOST_OOM,
							"out of host memory for a solving set of %lld rows",
							(long long) cap);
		sup->set = grown;
		sup->set_capacity = cap;
	}
	for (int64_t c = 0; c < nc; c++)
	{
		const double bound = cands->bound[c];
		double		w;

		/*
		 * k smallest of the nodes' ascending lists, in ascending order;
		 * each entry at most the candidate's bound: at least k other rows
		 * lie at or under it, so the k smallest distances are those under
		 * it and then copies of it (as one run's single pass counts them),
		 * and a list that kept only the distances under it gives the same
		 */
		memset(pos, 0, sizeof(int32_t) * (size_t) nlists);
		for (int32_t j = 0; j < k; j++)
		{
			int			best = -1;

			for (int l = 0; l < nlists; l++)
				if (pos[l] < k &&
					(best < 0 || lists[l][c * k + pos[l]] < lists[best][c * k + pos[best]]))
					best = l;
			sup->merged[j] = lists[best][c * k + pos[best]] < bound ?
				lists[best][c * k + pos[best]] : bound;
			pos[best]++;
		}
		if (!isfinite(sup->merged[k - 1]))
			return odp_fail(ctx, ODP_ERR_DATA,
							"the nodes found fewer than k = %d neighbours of the row of id %lld",
							(int) k, (long long) cands->ids[c]);
		w = odp_sum_ascending64(sup->merged, k);
		sup->set[sup->set_size].weight = w;
		sup->set[sup->set_size].id = cands->ids[c];
		sup->set_size++;
		sup->top[sup->ntop + c].weight = w;
		sup->top[sup->ntop + c].id = cands->ids[c];
	}
	qsort(sup->top, (size_t) (sup->ntop + nc), sizeof(SsWeighted), ss_cmp_weighted);
	sup->ntop = sup->ntop + nc < sup->n ? sup->ntop + nc : sup->n;
	sup->iterations++;
	*prune = sup->prune && sup->ntop == sup->n;
	*min_out = *prune ? sup->top[sup->n - 1].weight : 0.0;
	return ODP_OK;
}

int64_t
odp_ss_sup_top(const OdpSsSupervisor *sup, int64_t *ids, double *scores)
{
	for (int64_t i = 0; i < sup->ntop; i++)
	{
		ids[i] = sup->top[i].id;
		scores[i] = sup->top[i].weight;
	}
	return sup->ntop;
}

int64_t
odp_ss_sup_set_size(const OdpSsSupervisor *sup)
{
	return sup->set_size;
}

void
odp_ss_sup_set(const OdpSsSupervisor *sup, int64_t *ids, double *weights)
{
	qsort(sup->set, (size_t) sup->set_size, sizeof(SsWeighted), ss_cmp_weighted_id);
	for (int64_t i = 0; i < sup->set_size; i++)
	{
		ids[i] = sup->set[i].id;
		if (weights != NULL)
			weights[i] = sup->set[i].weight;
	}
}

int32_t
odp_ss_sup_iterations(const OdpSsSupervisor *sup)
{
	return sup->iterations;
}

/* ---- the loop ---- */

OdpStatus
odp_ss_distributed(OdpContext *ctx, OdpSsSupervisor *sup, const OdpSsNodes *nodes,
				   OdpSsRows *props, OdpSsRows *cands, double **lists,
				   double *supervisor_ms)
{
	OdpStatus	status;
	double		t0;

	status = nodes->first(nodes->arg, sup->m, props);
	if (status != ODP_OK)
		return status;
	t0 = odp_now_ms();
	status = odp_ss_sup_choose(ctx, sup, props, nodes->count, true, cands);
	*supervisor_ms += odp_now_ms() - t0;
	while (status == ODP_OK && cands->count > 0)
	{
		bool		prune;
		double		min_out;

		if (odp_cancel_requested(ctx))
			return odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
		status = nodes->exact(nodes->arg, cands, lists);
		if (status != ODP_OK)
			return status;
		t0 = odp_now_ms();
		status = odp_ss_sup_merge(ctx, sup, cands, (const double *const *) lists,
								  nodes->count, &prune, &min_out);
		*supervisor_ms += odp_now_ms() - t0;
		if (status != ODP_OK)
			return status;
		status = nodes->next(nodes->arg, prune, min_out, sup->m, props);
		if (status != ODP_OK)
			return status;
		t0 = odp_now_ms();
		status = odp_ss_sup_choose(ctx, sup, props, nodes->count, false, cands);
		*supervisor_ms += odp_now_ms() - t0;
	}
	return status;
}
