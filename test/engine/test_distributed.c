/*-------------------------------------------------------------------------
 *
 * test_distributed.c
 *	  Tests of the distributed forms (kernels/include/odp_distributed.h): the rows are
 *	  split over in-process nodes by a hash of their ids, the supervisor
 *	  drives them, and the results must equal one run over all the rows:
 *	  SolvingSet's top n, scores, solving set and iterations, the brute
 *	  force's every weight, and the merged k-NN lists.  Both precisions:
 *	  float64 rows (data64) are the float32 ones moved to a 10^6 offset,
 *	  where float32 could not tell them apart, and must give one float64
 *	  run's answers bit for bit.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_distributed.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_distributed.h"
#include "include/odp_knn.h"
#include "include/odp_outliers.h"
#include "outliers/solvingset_internal.h"
#include "test_util.h"

#define DISTRIBUTED_MAX_NODES 8

/* The in-process nodes of one run. */
typedef struct DistributedNodes
{
	OdpContext *ctx;
	int			count;
	OdpMatrix	shard[DISTRIBUTED_MAX_NODES];
	OdpSsNode  *node[DISTRIBUTED_MAX_NODES];
	int64_t		distances;
} DistributedNodes;

static OdpStatus
distributed_first(void *arg, int64_t m, OdpSsRows *props)
{
	DistributedNodes  *d = arg;

	for (int i = 0; i < d->count; i++)
	{
		OdpStatus	st = odp_ss_node_first(d->ctx, d->node[i], m, &props[i]);

		if (st != ODP_OK)
			return st;
	}
	return ODP_OK;
}

static OdpStatus
distributed_exact(void *arg, const OdpSsRows *cands, double **lists)
{
	DistributedNodes  *d = arg;

	for (int i = 0; i < d->count; i++)
	{
		OdpStatus	st = odp_ss_node_exact(d->ctx, d->node[i], cands, lists[i],
										   &d->distances);

		if (st != ODP_OK)
			return st;
	}
	return ODP_OK;
}

static OdpStatus
distributed_next(void *arg, bool prune, double min_out, int64_t m, OdpSsRows *props)
{
	DistributedNodes  *d = arg;

	for (int i = 0; i < d->count; i++)
	{
		OdpStatus	st = odp_ss_node_next(d->ctx, d->node[i], prune, min_out, m,
										  &props[i]);

		if (st != ODP_OK)
			return st;
	}
	return ODP_OK;
}

static void
rows_alloc(OdpSsRows *r, int64_t capacity, int dims, bool wide)
{
	r->count = 0;
	r->capacity = capacity;
	r->dims = dims;
	r->ids = xmalloc(sizeof(int64_t) * (size_t) capacity + 8);
	r->rank = xmalloc(sizeof(double) * (size_t) capacity + 8);
	r->bound = xmalloc(sizeof(double) * (size_t) capacity + 8);
	r->vectors = wide ? NULL :
		xmalloc(sizeof(float) * (size_t) capacity * (size_t) dims + 8);
	r->vectors64 = wide ?
		xmalloc(sizeof(double) * (size_t) capacity * (size_t) dims + 8) : NULL;
}

static void
rows_free(OdpSsRows *r)
{
	free(r->ids);
	free(r->rank);
	free(r->bound);
	free(r->vectors);
	free(r->vectors64);
}

/*
 * The rows of a case in their precision: float32 as generated, or float64
 * at a 10^6 offset with the generated values as millesimal detail (equal
 * rows stay equal, so ties stay ties).
 */
static void *
case_rows(const float *x, int64_t rows, int dims, bool wide)
{
	double	   *w;

	if (!wide)
	{
		float	   *c = xmalloc(sizeof(float) * (size_t) rows * (size_t) dims + 8);

		memcpy(c, x, sizeof(float) * (size_t) rows * (size_t) dims);
		return c;
	}
	w = xmalloc(sizeof(double) * (size_t) rows * (size_t) dims + 8);
	for (int64_t i = 0; i < rows * dims; i++)
		w[i] = 1.0e6 + (double) x[i] * 1.0e-3;
	return w;
}

/* A matrix over case_rows' rows. */
static void
case_matrix(OdpMatrix *m, const void *rows, int64_t nrows, int dims, bool wide)
{
	memset(m, 0, sizeof(*m));
	if (wide)
		m->data64 = rows;
	else
		m->data = rows;
	m->rows = nrows;
	m->dims = dims;
}

/* Shard of a row: a hash of its id, as hash partitioning would place it. */
static int
shard_of(int64_t id, int nodes)
{
	uint64_t	h = (uint64_t) id * UINT64_C(0x9e3779b97f4a7c15);

	return (int) ((h >> 33) % (uint64_t) nodes);
}

/*
 * Splits x (rows with ids, of esize bytes a value) into nodes shards of
 * copied rows.
 */
static void
split_rows(const void *x, size_t esize, const int64_t *ids, int64_t rows, int dims,
		   int nodes, void **data, int64_t **sids, int64_t *srows)
{
	const size_t row_bytes = esize * (size_t) dims;

	for (int s = 0; s < nodes; s++)
	{
		data[s] = xmalloc(row_bytes * (size_t) rows + 8);
		sids[s] = xmalloc(sizeof(int64_t) * (size_t) rows + 8);
		srows[s] = 0;
	}
	for (int64_t r = 0; r < rows; r++)
	{
		int			s = shard_of(ids[r], nodes);

		memcpy((char *) data[s] + (size_t) srows[s] * row_bytes,
			   (const char *) x + (size_t) r * row_bytes, row_bytes);
		sids[s][srows[s]++] = ids[r];
	}
}

/*
 * One distributed SolvingSet (prune) or brute force (!prune) over nodes
 * shards, compared with one odp_compute_top_outliers over all the rows.
 */
static void
distributed_ss_case(OdpDevice dev, Gen gen, int64_t rows, int dims, int k, int64_t n,
					int nodes, int64_t batch, bool prune, bool empty_node, OdpMetric metric,
					bool wide)
{
	OdpContext	ctx = make_ctx(dev);
	float	   *x32 = make_data(gen, rows, dims);
	void	   *x = case_rows(x32, rows, dims, wide);
	int64_t    *ids = xmalloc(sizeof(int64_t) * (size_t) rows);
	void	   *data[DISTRIBUTED_MAX_NODES];
	int64_t    *sids[DISTRIBUTED_MAX_NODES];
	int64_t		srows[DISTRIBUTED_MAX_NODES];
	OdpMatrix	all = {0};
	int64_t    *order = xmalloc(sizeof(int64_t) * (size_t) n);
	double	   *scores = xmalloc(sizeof(double) * (size_t) n);
	int64_t    *set = xmalloc(sizeof(int64_t) * (size_t) rows);
	double	   *set_scores = xmalloc(sizeof(double) * (size_t) rows);
	int64_t		count = 0;
	OdpTopOutliersStats stats;
	OdpStatus	st;
	DistributedNodes	dn;
	OdpSsNodes	ops;
	OdpSsSupervisor *sup = NULL;
	OdpSsRows	props[DISTRIBUTED_MAX_NODES];
	OdpSsRows	cands;
	double	   *lists[DISTRIBUTED_MAX_NODES];
	int64_t		m = odp_ss_batch_size(rows, n, batch);
	double		sup_ms = 0.0;
	bool		same = true;
	int			used = nodes + (empty_node ? 1 : 0);
	char		what[160];

	snprintf(what, sizeof(what), "%s %s%s %s %lld x %d, k = %d, n = %lld, m = %lld, %d node%s%s%s",
			 dev == ODP_DEVICE_GPU ? "gpu" : "cpu", wide ? "float64 " : "",
			 prune ? "solvingset" : "bruteforce",
			 odp_metric_name(metric), (long long) rows, dims, k, (long long) n,
			 (long long) m, used, used == 1 ? "" : "s", empty_node ? " (one empty)" : "",
			 odp_ss_node_backend ? "" : ", k-NN engine nodes");
	for (int64_t r = 0; r < rows; r++)
		ids[r] = 5 + 3 * r + (r % 7 == 0 ? 1 : 0);
	case_matrix(&all, x, rows, dims, wide);
	all.ids = ids;
	st = odp_compute_top_outliers(&ctx, &all, metric, k, n,
								  prune ? ODP_METHOD_SOLVINGSET : ODP_METHOD_BRUTEFORCE,
								  batch, order, scores, &count, set, set_scores, &stats);
	check(st == ODP_OK, "distributed: local run of %s (%s)", what, ctx.message);

	split_rows(x, wide ? sizeof(double) : sizeof(float), ids, rows, dims, nodes,
			   data, sids, srows);
	if (empty_node)
	{
		data[nodes] = xmalloc(8);
		sids[nodes] = xmalloc(8);
		srows[nodes] = 0;
	}
	memset(&dn, 0, sizeof(dn));
	dn.ctx = &ctx;
	dn.count = used;
	for (int s = 0; s < used; s++)
	{
		case_matrix(&dn.shard[s], data[s], srows[s], dims, wide);
		dn.shard[s].ids = sids[s];
		st = odp_ss_node_create(&ctx, &dn.shard[s], metric, k, prune, &dn.node[s]);
		check(st == ODP_OK, "distributed: node %d of %s (%s)", s, what, ctx.message);
		rows_alloc(&props[s], m, dims, wide);
		lists[s] = xmalloc(sizeof(double) * (size_t) m * (size_t) k);
	}
	rows_alloc(&cands, m, dims, wide);
	ops.count = used;
	ops.arg = &dn;
	ops.first = distributed_first;
	ops.exact = distributed_exact;
	ops.next = distributed_next;
	st = odp_ss_sup_create(&ctx, rows, k, n, m, prune, &sup);
	if (st == ODP_OK)
		st = odp_ss_distributed(&ctx, sup, &ops, props, &cands, lists, &sup_ms);
	check(st == ODP_OK, "distributed: distributed run of %s (%s)", what, ctx.message);
	if (st == ODP_OK)
	{
		int64_t    *dorder = xmalloc(sizeof(int64_t) * (size_t) n);
		double	   *dscores = xmalloc(sizeof(double) * (size_t) n);
		int64_t		dcount = odp_ss_sup_top(sup, dorder, dscores);
		int64_t		dsize = odp_ss_sup_set_size(sup);

		same = dcount == count;
		for (int64_t i = 0; same && i < count; i++)
			same = dorder[i] == ids[order[i]] && dscores[i] == scores[i];
		check(same, "distributed: %s: top %lld ids and scores equal one local run",
			  what, (long long) count);
		same = dsize == stats.solving_set_size;
		if (same)
		{
			int64_t    *dset = xmalloc(sizeof(int64_t) * (size_t) dsize);
			double	   *dw = xmalloc(sizeof(double) * (size_t) dsize);

			odp_ss_sup_set(sup, dset, dw);
			for (int64_t i = 0; same && i < dsize; i++)
				same = dset[i] == ids[set[i]] && dw[i] == set_scores[i];
			free(dset);
			free(dw);
		}
		check(same, "distributed: %s: solving set (%lld rows, local %lld) and its weights equal",
			  what, (long long) dsize, (long long) stats.solving_set_size);
		if (prune)
			check(odp_ss_sup_iterations(sup) == stats.iterations,
				  "distributed: %s: %d iterations, local %d", what,
				  (int) odp_ss_sup_iterations(sup), (int) stats.iterations);
		free(dorder);
		free(dscores);
	}
	odp_ss_sup_free(sup);
	for (int s = 0; s < used; s++)
	{
		odp_ss_node_free(dn.node[s]);
		rows_free(&props[s]);
		free(lists[s]);
		free(data[s]);
		free(sids[s]);
	}
	rows_free(&cands);
	free(x);
	free(x32);
	free(ids);
	free(order);
	free(scores);
	free(set);
	free(set_scores);
}

/* Two nodes that both hold a row: the supervisor says the shards overlap. */
static void
distributed_overlap_case(void)
{
	OdpContext	ctx = make_ctx(ODP_DEVICE_CPU);
	float		x[] = {0, 1, 2, 3, 4, 5};
	int64_t		ids_a[] = {1, 2, 3};
	int64_t		ids_b[] = {3, 4, 5};
	OdpSsRows	props[2];
	OdpSsRows	cands;
	OdpSsSupervisor *sup = NULL;
	OdpStatus	st;

	rows_alloc(&props[0], 3, 1, false);
	rows_alloc(&props[1], 3, 1, false);
	rows_alloc(&cands, 6, 1, false);
	for (int i = 0; i < 3; i++)
	{
		props[0].ids[i] = ids_a[i];
		props[1].ids[i] = ids_b[i];
		props[0].rank[i] = props[1].rank[i] = INFINITY;
		props[0].bound[i] = props[1].bound[i] = INFINITY;
		props[0].vectors[i] = x[i];
		props[1].vectors[i] = x[3 + i];
	}
	props[0].count = props[1].count = 3;
	st = odp_ss_sup_create(&ctx, 6, 1, 1, 6, false, &sup);
	if (st == ODP_OK)
		st = odp_ss_sup_choose(&ctx, sup, props, 2, false, &cands);
	check(st == ODP_ERR_DATA && strstr(ctx.message, "overlap") != NULL,
		  "distributed: overlapping shards are an error (%s)", ctx.message);
	odp_ss_sup_free(sup);
	rows_free(&props[0]);
	rows_free(&props[1]);
	rows_free(&cands);
}

/* Candidates of float32 rows sent to a node of float64 rows are refused. */
static void
distributed_precision_case(void)
{
	OdpContext	ctx = make_ctx(ODP_DEVICE_CPU);
	double		x64[] = {0, 1, 2, 3};
	int64_t		ids[] = {1, 2, 3, 4};
	OdpMatrix	shard = {0};
	OdpSsNode  *node = NULL;
	OdpSsRows	cands;
	double		lists[4];
	int64_t		distances = 0;
	OdpStatus	st;

	shard.data64 = x64;
	shard.rows = 4;
	shard.dims = 1;
	shard.ids = ids;
	rows_alloc(&cands, 1, 1, false);
	cands.ids[0] = 9;
	cands.bound[0] = INFINITY;
	cands.vectors[0] = 1.5f;
	cands.count = 1;
	st = odp_ss_node_create(&ctx, &shard, ODP_METRIC_EUCLIDEAN, 2, true, &node);
	if (st == ODP_OK)
		st = odp_ss_node_exact(&ctx, node, &cands, lists, &distances);
	check(st == ODP_ERR_INVALID_ARGUMENT &&
		  strstr(ctx.message, "float32 rows sent to a shard of float64") != NULL,
		  "distributed: float32 candidates for a float64 node are refused (%s)", ctx.message);
	odp_ss_node_free(node);
	rows_free(&cands);
}

/*
 * k-NN over shards: every shard's odp_knn_excluding, merged, equals one
 * search over all the rows (ids for indexes), for queries from outside
 * and for the rows themselves (own row left out, as a self join).
 */
static void
distributed_knn_case(OdpDevice dev, Gen gen, int64_t rows, int dims, int k,
					 OdpMetric metric, int nodes, bool self, bool wide)
{
	OdpContext	ctx = make_ctx(dev);
	float	   *x32 = make_data(gen, rows, dims);
	void	   *x = case_rows(x32, rows, dims, wide);
	int64_t		nq = self ? rows : 97;
	float	   *qx32 = self ? NULL : make_data(gen, nq, dims);
	void	   *qx = self ? x : case_rows(qx32, nq, dims, wide);
	int64_t    *ids = xmalloc(sizeof(int64_t) * (size_t) rows);
	void	   *data[DISTRIBUTED_MAX_NODES];
	int64_t    *sids[DISTRIBUTED_MAX_NODES];
	int64_t		srows[DISTRIBUTED_MAX_NODES];
	double	   *dl[DISTRIBUTED_MAX_NODES];
	int64_t    *il[DISTRIBUTED_MAX_NODES];
	double	   *ref_d = xmalloc(sizeof(double) * (size_t) nq * (size_t) k);
	int64_t    *ref_i = xmalloc(sizeof(int64_t) * (size_t) nq * (size_t) k);
	double	   *out_d = xmalloc(sizeof(double) * (size_t) nq * (size_t) k);
	int64_t    *out_i = xmalloc(sizeof(int64_t) * (size_t) nq * (size_t) k);
	OdpMatrix	all = {0};
	OdpMatrix	qm = {0};
	OdpStatus	st;
	bool		same = true;
	char		what[160];

	snprintf(what, sizeof(what), "%s %s%s %lld x %d, k = %d, metric %d, %d nodes",
			 dev == ODP_DEVICE_GPU ? "gpu" : "cpu", wide ? "float64 " : "",
			 self ? "self join" : "queries",
			 (long long) rows, dims, k, (int) metric, nodes);
	for (int64_t r = 0; r < rows; r++)
		ids[r] = 11 + 2 * r;
	case_matrix(&all, x, rows, dims, wide);
	case_matrix(&qm, qx, nq, dims, wide);
	st = odp_compute_knn(&ctx, self ? &all : &qm, &all, metric, k, self, ref_d, ref_i);
	check(st == ODP_OK, "distributed knn: local search of %s (%s)", what, ctx.message);
	split_rows(x, wide ? sizeof(double) : sizeof(float), ids, rows, dims, nodes,
			   data, sids, srows);
	for (int s = 0; s < nodes && st == ODP_OK; s++)
	{
		OdpMatrix	sh;

		case_matrix(&sh, data[s], srows[s], dims, wide);
		dl[s] = xmalloc(sizeof(double) * (size_t) nq * (size_t) k);
		il[s] = xmalloc(sizeof(int64_t) * (size_t) nq * (size_t) k);
		st = odp_knn_excluding(&ctx, &qm, self ? ids : NULL, &sh, sids[s], metric, k,
							   dl[s], il[s]);
		check(st == ODP_OK, "distributed knn: shard %d of %s (%s)", s, what, ctx.message);
	}
	if (st == ODP_OK)
	{
		odp_knn_merge(metric, k, nq, (const double *const *) dl,
					  (const int64_t *const *) il, nodes, out_d, out_i);
		for (int64_t i = 0; same && i < nq * k; i++)
			same = out_i[i] == ids[ref_i[i]] && out_d[i] == ref_d[i];
		check(same, "distributed knn: %s: merged lists equal one search", what);
	}
	for (int s = 0; s < nodes; s++)
	{
		if (st == ODP_OK || s == 0)
		{
			free(dl[s]);
			free(il[s]);
		}
		free(data[s]);
		free(sids[s]);
	}
	if (!self)
		free(qx);
	free(qx32);
	free(x);
	free(x32);
	free(ids);
	free(ref_d);
	free(ref_i);
	free(out_d);
	free(out_i);
}

void
run_distributed_tests(void)
{
	OdpDevice	devs[2] = {ODP_DEVICE_CPU, ODP_DEVICE_GPU};

	distributed_overlap_case();
	distributed_precision_case();
	for (int d = 0; d < 2; d++)
	{
		if (devs[d] == ODP_DEVICE_GPU && !gpu_ok)
		{
			printf("skip - distributed forms on the GPU: %s\n", gpu_reason);
			continue;
		}
		/* the k-NN engine's node step, as a node without a backend runs it */
		odp_ss_node_backend = 0;
		distributed_ss_case(devs[d], GEN_UNIFORM, 3000, 4, 10, 10, 3, 64, true, false, ODP_METRIC_EUCLIDEAN, false);
		distributed_ss_case(devs[d], GEN_DUPLICATES, 2000, 3, 12, 7, 2, 50, true, true, ODP_METRIC_EUCLIDEAN, false);
		odp_ss_node_backend = 1;
		/* nodes of 30 rows: k = 40 leaves them on the k-NN engine */
		distributed_ss_case(devs[d], GEN_UNIFORM, 150, 3, 40, 5, 5, 20, true, false, ODP_METRIC_EUCLIDEAN, false);
		distributed_ss_case(devs[d], GEN_UNIFORM, 3000, 4, 10, 10, 1, 64, true, false, ODP_METRIC_EUCLIDEAN, false);
		distributed_ss_case(devs[d], GEN_UNIFORM, 2000, 5, 10, 8, 3, 64, true, false, ODP_METRIC_COSINE, false);
		distributed_ss_case(devs[d], GEN_TIES, 2000, 3, 15, 8, 3, 64, true, false, ODP_METRIC_MANHATTAN, false);
		distributed_ss_case(devs[d], GEN_UNIFORM, 2000, 6, 10, 8, 2, 64, true, false, ODP_METRIC_CHEBYSHEV, false);
		distributed_ss_case(devs[d], GEN_UNIFORM, 2000, 6, 10, 8, 2, 64, true, false, ODP_METRIC_SQEUCLIDEAN, false);
		distributed_ss_case(devs[d], GEN_UNIFORM, 3000, 4, 10, 10, 3, 64, true, false, ODP_METRIC_EUCLIDEAN, false);
		distributed_ss_case(devs[d], GEN_DUPLICATES, 2500, 3, 20, 7, 4, 50, true, true, ODP_METRIC_EUCLIDEAN, false);
		distributed_ss_case(devs[d], GEN_TIES, 2000, 2, 5, 15, 2, 40, true, false, ODP_METRIC_EUCLIDEAN, false);
		distributed_ss_case(devs[d], GEN_GRID, 4000, 10, 50, 10, 5, 200, true, false, ODP_METRIC_EUCLIDEAN, false);
		distributed_ss_case(devs[d], GEN_UNIFORM, 1500, 5, 8, 12, 3, 100, false, true, ODP_METRIC_EUCLIDEAN, false);
		distributed_knn_case(devs[d], GEN_UNIFORM, 2000, 6, 10, ODP_METRIC_EUCLIDEAN, 3, false, false);
		distributed_knn_case(devs[d], GEN_TIES, 1500, 2, 25, ODP_METRIC_MANHATTAN, 4, true, false);
		distributed_knn_case(devs[d], GEN_UNIFORM, 1200, 8, 5, ODP_METRIC_INNER_PRODUCT, 2, false, false);
		distributed_knn_case(devs[d], GEN_DUPLICATES, 1000, 4, 12, ODP_METRIC_COSINE, 3, true, false);

		/* float64 rows: their nodes work through the k-NN engine */
		distributed_ss_case(devs[d], GEN_UNIFORM, 2000, 4, 10, 10, 3, 64, true, false, ODP_METRIC_EUCLIDEAN, true);
		distributed_ss_case(devs[d], GEN_DUPLICATES, 1500, 3, 12, 7, 2, 50, true, true, ODP_METRIC_EUCLIDEAN, true);
		distributed_ss_case(devs[d], GEN_TIES, 1500, 3, 15, 8, 3, 64, true, false, ODP_METRIC_MANHATTAN, true);
		distributed_ss_case(devs[d], GEN_UNIFORM, 1500, 5, 10, 8, 3, 64, true, false, ODP_METRIC_COSINE, true);
		distributed_ss_case(devs[d], GEN_UNIFORM, 1500, 6, 10, 8, 2, 64, true, false, ODP_METRIC_CHEBYSHEV, true);
		distributed_ss_case(devs[d], GEN_UNIFORM, 1200, 5, 8, 12, 3, 100, false, true, ODP_METRIC_EUCLIDEAN, true);
		distributed_knn_case(devs[d], GEN_UNIFORM, 1500, 6, 10, ODP_METRIC_EUCLIDEAN, 3, false, true);
		distributed_knn_case(devs[d], GEN_TIES, 1200, 2, 25, ODP_METRIC_MANHATTAN, 4, true, true);
		distributed_knn_case(devs[d], GEN_UNIFORM, 1000, 8, 5, ODP_METRIC_INNER_PRODUCT, 2, false, true);
		distributed_knn_case(devs[d], GEN_DUPLICATES, 1000, 4, 12, ODP_METRIC_COSINE, 3, true, true);
	}
}
