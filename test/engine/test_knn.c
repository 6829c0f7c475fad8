/*-------------------------------------------------------------------------
 *
 * test_knn.c
 *	  Engine tests of odp_compute_knn: both paths against a naive
 *	  reference (every distance, sorted by distance then index), bit for
 *	  bit, for every metric; k = 1 and k = N, duplicates and ties, D = 1
 *	  and D = 2048, self joins, few queries (split candidate ranges on
 *	  both paths), large k, chunking under a small GPU memory budget, the
 *	  GPU's tensor-core filter (from 32768 candidates: batches, self joins,
 *	  data far from the origin, ties that overflow its lists); and the
 *	  argument checks.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_knn.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/odp_distance.h"
#include "include/odp_knn.h"
#include "include/odp_outliers.h"
#include "test_util.h"

/* Passes of odp_knn_shared that served more than one call (knn_batch.c). */
extern int64_t odp_knn_shared_passes;
extern int64_t odp_knn_shared_early;
/* Calls the GPU's few-query path took (knn_gpu_few.cu); weak for CPU builds. */
extern int64_t odp_gpu_knn_few_runs __attribute__((weak));
/* Query chunks the GPU's tensor-core filter finished; weak for CPU builds. */
extern int64_t odp_gpu_knn_tc_chunks __attribute__((weak));
/* Samples whose thresholds the filter found itself. */
extern int64_t odp_gpu_knn_tc_samples __attribute__((weak));
/* Queries whose filter list overflowed and that scanned every candidate. */
extern int64_t odp_gpu_knn_tc_scans __attribute__((weak));
/* Self joins the filter tested symmetrically (each pair of rows once). */
extern int64_t odp_gpu_knn_tc_symmetric __attribute__((weak));
/* Searches whose filter ran on Hopper's warpgroup products (sm_90a). */
extern int64_t odp_gpu_knn_tc_warpgroup __attribute__((weak));
/* Candidate tiles per filter block when > 0. */
extern int	odp_gpu_knn_tc_block_tiles __attribute__((weak));

/*
 * Whether the filter of rows of dims dimensions runs on the warpgroup
 * products on a device of compute capability 9.0: rows of 48 to 256
 * padded dimensions, and of 32 for the inner product (the register
 * filter takes the others).
 */
static bool
want_warpgroup(int dims, OdpMetric metric)
{
	const int	dp = dims <= 16 ? 16 : (dims + 31) / 32 * 32;

	return gpu_cc == 90 && dp <= 256 && dp != 16 &&
		(dp != 32 || metric == ODP_METRIC_INNER_PRODUCT);
}

/* Candidate tiles per filter block (0: as sized for the GPU); no-op on CPU builds. */
static void
gpu_block_tiles(int tiles)
{
	if (&odp_gpu_knn_tc_block_tiles != NULL)
		odp_gpu_knn_tc_block_tiles = tiles;
}

/* Runs one case on dev and compares with the reference; returns mismatches. */
static int64_t
knn_compare(OdpDevice dev, const OdpMatrix *q, const OdpMatrix *c,
			OdpMetric metric, int k, bool self_join, size_t gpu_limit,
			const float *rd, const int64_t *ri, OdpStatus *status)
{
	OdpContext	ctx = make_ctx(dev);
	double	   *d = xmalloc(sizeof(double) * (size_t) q->rows * k);
	int64_t    *ix = xmalloc(sizeof(int64_t) * (size_t) q->rows * k);
	int64_t		bad = 0;

	ctx.gpu_memory_limit = gpu_limit;
	*status = odp_compute_knn(&ctx, q, c, metric, k, self_join, d, ix);
	if (*status != ODP_OK)
		printf("# %s: %s\n", odp_status_name(*status), ctx.message);
	else
		for (int64_t t = 0; t < q->rows * k; t++)
		{
			const double wide = rd[t];	/* the float32 distance, widened exactly */

			if (ix[t] != ri[t] || memcmp(&d[t], &wide, sizeof(double)) != 0)
				bad++;
		}
	free(d);
	free(ix);
	return bad;
}

/*
 * One case: nq queries (or, for a self join, the candidates themselves)
 * against nc candidates of kind gen, on the CPU and, where present, the
 * GPU (also under a small memory budget when gpu_limit is set).
 */
static void
knn_case(Gen gen, int64_t nq, int64_t nc, int dims, int k, bool self_join,
		 OdpMetric metric, size_t gpu_limit, bool expect_filter, const char *what)
{
	float	   *cx = make_data(gen, nc, dims);
	float	   *qx = self_join ? cx : make_data(gen, nq, dims);
	OdpMatrix	c = {cx, nc, dims};
	OdpMatrix	q = {qx, self_join ? nc : nq, dims};
	float	   *rd = xmalloc(sizeof(float) * (size_t) q.rows * k);
	int64_t    *ri = xmalloc(sizeof(int64_t) * (size_t) q.rows * k);
	OdpStatus	st;
	int64_t		bad;

	reference_knn(&q, &c, metric, k, self_join, rd, ri);
	bad = knn_compare(ODP_DEVICE_CPU, &q, &c, metric, k, self_join, 0, rd, ri, &st);
	check(st == ODP_OK && bad == 0,
		  "knn cpu %s %s %lld x %lld x %d k=%d%s (%s): %lld entries differ from the reference",
		  gen_names[gen], odp_metric_name(metric), (long long) q.rows,
		  (long long) nc, dims, k, self_join ? " self" : "", what, (long long) bad);
	if (gpu_ok)
	{
		const int64_t filtered = gpu_counter(&odp_gpu_knn_tc_chunks);
		const int64_t symmetric = gpu_counter(&odp_gpu_knn_tc_symmetric);
		const int64_t warpgroup = gpu_counter(&odp_gpu_knn_tc_warpgroup);
		/* self joins of rows of up to 32 dimensions, but for the inner product */
		const bool	want_symmetric = expect_filter && self_join && dims <= 32 &&
			metric != ODP_METRIC_INNER_PRODUCT;

		/* the filter's cases include integer grids, which the integer path would take */
		gpu_integer_path(!expect_filter);
		bad = knn_compare(ODP_DEVICE_GPU, &q, &c, metric, k, self_join, 0, rd, ri, &st);
		check(st == ODP_OK && bad == 0,
			  "knn gpu %s %s %lld x %lld x %d k=%d%s (%s): %lld entries differ from the reference",
			  gen_names[gen], odp_metric_name(metric), (long long) q.rows,
			  (long long) nc, dims, k, self_join ? " self" : "", what, (long long) bad);
		if (expect_filter && &odp_gpu_knn_tc_chunks != NULL)
			check(odp_gpu_knn_tc_chunks > filtered,
				  "knn gpu %s %s (%s): the tensor-core filter finished it",
				  gen_names[gen], odp_metric_name(metric), what);
		if (expect_filter && &odp_gpu_knn_tc_symmetric != NULL)
			check((odp_gpu_knn_tc_symmetric > symmetric) == want_symmetric,
				  "knn gpu %s %s (%s): the filter %s symmetric",
				  gen_names[gen], odp_metric_name(metric), what,
				  want_symmetric ? "was" : "was not");
		if (expect_filter && &odp_gpu_knn_tc_warpgroup != NULL)
			check((odp_gpu_knn_tc_warpgroup > warpgroup) == want_warpgroup(dims, metric),
				  "knn gpu %s %s D = %d (%s): the filter %s on warpgroup products",
				  gen_names[gen], odp_metric_name(metric), dims, what,
				  want_warpgroup(dims, metric) ? "ran" : "did not run");
		if (gpu_limit > 0)
		{
			bad = knn_compare(ODP_DEVICE_GPU, &q, &c, metric, k, self_join,
							  gpu_limit, rd, ri, &st);
			check(st == ODP_OK && bad == 0,
				  "knn gpu chunked (%zu bytes) %s %s k=%d%s: %lld entries differ",
				  gpu_limit, gen_names[gen], odp_metric_name(metric), k,
				  self_join ? " self" : "", (long long) bad);
		}
		gpu_integer_path(true);
	}
	if (!self_join)
		free(qx);
	free(cx);
	free(rd);
	free(ri);
}

/* One thread of shared_case: its query, its k, its answer. */
typedef struct SharedThread
{
	pthread_t	thread;
	OdpDevice	dev;
	const OdpMatrix *cands;
	OdpMatrix	query;
	int32_t		k;
	pthread_barrier_t *start;
	double		dist[64];
	int64_t		index[64];
	OdpStatus	status;
	int			batch;
	double		elapsed;		/* shared_long's call, ms */
} SharedThread;

static void *
shared_thread(void *arg)
{
	SharedThread *t = (SharedThread *) arg;
	OdpContext	ctx = make_ctx(t->dev);

	pthread_barrier_wait(t->start);
	for (int r = 0; r < 20 && t->status == ODP_OK; r++)
	{
		t->status = odp_knn_shared(&ctx, &t->query, t->cands, ODP_METRIC_EUCLIDEAN, t->k,
								   t->dist, t->index);
		if (ctx.batch_queries > t->batch)
			t->batch = ctx.batch_queries;
	}
	return NULL;
}

/*
 * odp_knn_shared: 40 threads (more than a pass takes), each asking 20
 * times for its own query's lists (k from 1 to 64) over the same
 * candidates, at the same time; each answer is the one odp_compute_knn
 * gives alone, and passes were shared.
 */
static void
shared_case(OdpDevice dev, const char *name)
{
	const int	n = 40;
	float	   *cx = make_data(GEN_TIES, 30000, 12);
	float	   *qx = make_data(GEN_TIES, n, 12);
	OdpMatrix	c = {cx, 30000, 12};
	SharedThread t[40];
	pthread_barrier_t start;
	const int64_t before = odp_knn_shared_passes;
	int			bad = 0,
				batched = 0;

	pthread_barrier_init(&start, NULL, n);
	for (int i = 0; i < n; i++)
	{
		memset(&t[i], 0, sizeof(t[i]));
		t[i].dev = dev;
		t[i].cands = &c;
		t[i].query = (OdpMatrix) {qx + (size_t) i * 12, 1, 12};
		t[i].k = 1 + (i * 29) % 64;
		t[i].start = &start;
		pthread_create(&t[i].thread, NULL, shared_thread, &t[i]);
	}
	for (int i = 0; i < n; i++)
	{
		OdpContext	ctx = make_ctx(dev);
		double		d[64];
		int64_t		ix[64];

		pthread_join(t[i].thread, NULL);
		if (odp_compute_knn(&ctx, &t[i].query, &c, ODP_METRIC_EUCLIDEAN, t[i].k, false, d, ix) != ODP_OK ||
			t[i].status != ODP_OK || memcmp(d, t[i].dist, sizeof(double) * t[i].k) != 0 ||
			memcmp(ix, t[i].index, sizeof(int64_t) * t[i].k) != 0)
			bad++;
		batched += t[i].batch > 1;
	}
	pthread_barrier_destroy(&start);
	check(bad == 0 && batched > 0 && odp_knn_shared_passes > before,
		  "knn %s shared passes: 40 threads x 20 calls, %d answers differ from a call alone, "
		  "%d threads served by shared passes, %lld shared passes",
		  name, bad, batched, (long long) (odp_knn_shared_passes - before));
	free(cx);
	free(qx);
}

/* The long call of shared_wait_case, in a thread of its own. */
static void *
shared_long(void *arg)
{
	SharedThread *t = (SharedThread *) arg;
	OdpContext	ctx = make_ctx(ODP_DEVICE_CPU);

	ctx.cpu_threads = 1;
	t->elapsed = odp_now_ms();
	t->status = odp_knn_shared(&ctx, &t->query, t->cands, ODP_METRIC_EUCLIDEAN, t->k,
							   t->dist, t->index);
	t->elapsed = odp_now_ms() - t->elapsed;
	return NULL;
}

/*
 * The wait for a pass is bounded: a call that arrives while a long pass
 * runs (eight queries over 300,000 x 64 on one CPU thread), 2 ms into
 * it, starts its own after about a millisecond instead of waiting for
 * the first to end, so it ends before that pass does and within three
 * times its time alone (the two passes share the cores; waiting would
 * cost six times); and both answers are a call alone's.
 */
static void
shared_wait_case(void)
{
	float	   *cx = make_data(GEN_UNIFORM, 300000, 64);
	OdpMatrix	c = {cx, 300000, 64};
	SharedThread a;
	OdpContext	ctx = make_ctx(ODP_DEVICE_CPU);
	OdpMatrix	qb = {cx + 64 * 7, 1, 64};
	double		d[10],
				db[10],
				alone,
				first,
				second;
	int64_t		ix[10],
				ixb[10];
	const int64_t before = odp_knn_shared_early;
	bool		same;

	ctx.cpu_threads = 1;
	alone = odp_now_ms();
	(void) odp_compute_knn(&ctx, &qb, &c, ODP_METRIC_EUCLIDEAN, 10, false, d, ix);
	alone = odp_now_ms() - alone;
	memset(&a, 0, sizeof(a));
	a.cands = &c;
	/* eight queries: a pass several times as long as the second call */
	a.query = (OdpMatrix) {cx, 8, 64};
	a.k = 8;
	pthread_create(&a.thread, NULL, shared_long, &a);
	{
		struct timespec pause = {0, 2000000L};

		nanosleep(&pause, NULL);
	}
	second = odp_now_ms();
	ctx = make_ctx(ODP_DEVICE_CPU);
	ctx.cpu_threads = 1;
	same = odp_knn_shared(&ctx, &qb, &c, ODP_METRIC_EUCLIDEAN, 10, db, ixb) == ODP_OK &&
		memcmp(d, db, sizeof(d)) == 0 && memcmp(ix, ixb, sizeof(ix)) == 0;
	second = odp_now_ms() - second;
	pthread_join(a.thread, NULL);
	first = a.elapsed;
	check(same && a.status == ODP_OK && odp_knn_shared_early > before && second < 3.0 * alone &&
		  second < first,
		  "knn cpu shared passes: a call of %.1f ms alone, arriving 2 ms into a pass of eight "
		  "queries (%.1f ms), ran its own beside it (%lld early passes) in %.1f ms, the same "
		  "lists as alone", alone, first, (long long) (odp_knn_shared_early - before), second);
	free(cx);
}

/* Bad arguments are refused with the right status, on device dev. */
static void
knn_argument_tests(OdpDevice dev)
{
	const char *name = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";
	float	   *x = make_data(GEN_UNIFORM, 10, 3);
	float	   *y = make_data(GEN_UNIFORM, 4, 2);
	float		zero[3] = {0.0f, 0.0f, 0.0f};
	OdpMatrix	m = {x, 10, 3};
	OdpMatrix	m2 = {y, 4, 2};
	OdpMatrix	z = {zero, 1, 3};
	OdpMatrix	half = {x, 5, 3};
	double		d[40];
	int64_t		ix[40];
	OdpContext	ctx = make_ctx(dev);
	OdpStatus	st;

	st = odp_compute_knn(&ctx, &m, &m, ODP_METRIC_EUCLIDEAN, 0, false, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT, "knn %s: k = 0 refused (%s)", name, ctx.message);
	st = odp_compute_knn(&ctx, &m, &m, ODP_METRIC_EUCLIDEAN, 11, false, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT, "knn %s: k > candidates refused (%s)", name, ctx.message);
	st = odp_compute_knn(&ctx, &m, &m, ODP_METRIC_EUCLIDEAN, 10, true, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT, "knn %s: self join k = rows refused (%s)", name, ctx.message);
	st = odp_compute_knn(&ctx, &m2, &m, ODP_METRIC_EUCLIDEAN, 1, false, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT, "knn %s: dimension mismatch refused (%s)", name, ctx.message);
	st = odp_compute_knn(&ctx, &half, &m, ODP_METRIC_EUCLIDEAN, 1, true, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT, "knn %s: self join of different matrices refused (%s)",
		  name, ctx.message);
	st = odp_compute_knn(&ctx, &z, &m, ODP_METRIC_COSINE, 1, false, d, ix);
	check(st == ODP_ERR_DATA, "knn %s: zero query under cosine refused (%s)", name, ctx.message);
	st = odp_compute_knn(&ctx, &m, &m, (OdpMetric) 99, 1, false, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT, "knn %s: unknown metric refused (%s)", name, ctx.message);
	st = odp_compute_knn(&ctx, &m, &m, ODP_METRIC_EUCLIDEAN, 1, false, NULL, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT, "knn %s: missing output refused (%s)", name, ctx.message);
	{
		double		scores[10];

		st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_INNER_PRODUCT, 2, scores);
		check(st == ODP_ERR_INVALID_ARGUMENT,
			  "outlier scores %s: inner product refused (%s)", name, ctx.message);
	}
	free(x);
	free(y);
}

/* Metric masks of the cases the tensor-core filter must finish. */
#define TC_EUCLID	((1 << ODP_METRIC_EUCLIDEAN) | (1 << ODP_METRIC_SQEUCLIDEAN))
#define TC_ALL		(TC_EUCLID | (1 << ODP_METRIC_COSINE) | (1 << ODP_METRIC_INNER_PRODUCT))

/* Every k-NN test. */
void
run_knn_tests(void)
{
	static const struct
	{
		Gen			gen;
		int64_t		nq;
		int64_t		nc;
		int			dims;
		int			k;
		bool		self_join;
		size_t		gpu_limit;
		int			filter;		/* metrics the tensor-core filter must finish */
		const char *what;
	}			cases[] = {
		{GEN_UNIFORM, 200, 1000, 8, 10, false, 0, 0, "batch"},
		{GEN_DUPLICATES, 0, 700, 5, 7, true, 0, 0, "self join, duplicates"},
		{GEN_TIES, 150, 400, 3, 1, false, 0, 0, "k = 1, ties"},
		{GEN_TIES, 40, 300, 4, 300, false, 0, 0, "k = N"},
		{GEN_UNIFORM, 0, 200, 3, 199, true, 0, 0, "self join, k = N - 1"},
		{GEN_UNIFORM, 100, 1000, 1, 5, false, 0, 0, "D = 1"},
		{GEN_TIES, 100, 1000, 1, 9, false, 0, 0, "D = 1, ties"},
		{GEN_UNIFORM, 12, 300, 2048, 5, false, 0, 0, "D = 2048"},
		{GEN_IDENTICAL, 30, 500, 4, 20, false, 0, 0, "identical rows"},
		{GEN_UNIFORM, 1, 60000, 16, 10, false, 0, 0, "one query"},
		{GEN_TIES, 5, 40000, 6, 25, false, 0, 0, "few queries, ties"},
		{GEN_UNIFORM, 3000, 5000, 10, 20, false, 1 << 20, 0, "chunks"},
		{GEN_UNIFORM, 0, 3000, 10, 20, true, 1 << 20, 0, "self join chunks"},
		{GEN_UNIFORM, 300, 40000, 32, 10, false, 0, TC_ALL, "tensor-core filter"},
		{GEN_OFFSET, 200, 40000, 16, 8, false, 0, TC_EUCLID, "filter, far from the origin"},
		{GEN_UNIT, 0, 33000, 5, 4, true, 0, TC_EUCLID, "filter, self join"},
		{GEN_DUPLICATES, 150, 35000, 12, 32, false, 0, TC_ALL, "filter, duplicates"},
		{GEN_WIDE, 130, 33000, 10, 6, false, 0, TC_EUCLID, "filter, magnitudes 2^-30 and 2^30"},
		{GEN_WIDE, 0, 33000, 18, 3, true, 0, TC_EUCLID, "filter, self join, magnitudes 2^-30 and 2^30"},
		{GEN_UNIFORM, 0, 40000, 24, 10, true, 0, TC_ALL, "filter, self join"},
		{GEN_DUPLICATES, 0, 36000, 12, 20, true, 0, TC_ALL, "filter, self join, duplicates"},
		{GEN_UNIFORM, 130, 33000, 8, 64, false, 0, TC_ALL, "filter, k = 64"},
		{GEN_GRID, 300, 40000, 10, 50, false, 0, TC_EUCLID, "filter, ties at the k-th (integer grid)"},
		{GEN_UNIFORM, 140, 33000, 45, 7, false, 0, TC_ALL, "filter, D = 45 (refined in a full and a partial slice)"},
	};

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++)
	{
		/*
		 * A filter's self join is sized for the GPU (its 33,000 rows cost
		 * the naive reference 15 to 25 s a metric on one core): without a
		 * GPU the CPU path takes its shape on a quarter of the rows,
		 * already eight or more candidate blocks.  The GPU host runs it
		 * whole, on both paths.
		 */
		const int64_t nc = !gpu_ok && cases[t].self_join && cases[t].filter != 0
			? cases[t].nc / 4 : cases[t].nc;

		for (int m = 0; m < ODP_METRIC_COUNT; m++)
			knn_case(cases[t].gen, cases[t].nq, nc, cases[t].dims,
					 cases[t].k, cases[t].self_join, (OdpMetric) m,
					 cases[t].gpu_limit, (cases[t].filter >> m) & 1, cases[t].what);
	}
	/*
	 * The warpgroup filter (H100: rows of 48 to 256 padded dimensions):
	 * queries past a 256-row tile, a partial candidate tile, stages of 64
	 * and 32 dimensions, the largest rows; 32 tiles a block, so that its
	 * ring of slots wraps many times.
	 */
	gpu_block_tiles(32);
	for (int m = 0; m < ODP_METRIC_COUNT; m++)
		knn_case(GEN_UNIFORM, 300, 33000, 128, 10, false, (OdpMetric) m, 0,
				 (TC_ALL >> m) & 1, "filter, D = 128, 32 tiles a block");
	knn_case(GEN_OFFSET, 130, 33000, 200, 5, false, ODP_METRIC_EUCLIDEAN, 0, true,
			 "filter, D = 200 (stages of 32), 32 tiles a block");
	knn_case(GEN_UNIFORM, 130, 33000, 256, 5, false, ODP_METRIC_INNER_PRODUCT, 0, true,
			 "filter, D = 256, 32 tiles a block");
	gpu_block_tiles(0);
	/* more dimensions than a block keeps in shared memory: streamed queries */
	knn_case(GEN_UNIFORM, 128, 32768, 264, 5, false, ODP_METRIC_EUCLIDEAN, 0, true, "filter, D = 264");
	knn_case(GEN_UNIFORM, 128, 32768, 264, 5, false, ODP_METRIC_INNER_PRODUCT, 0, true, "filter, D = 264");
	/* a sample of 16384 rows and more: its thresholds come from the filter too */
	{
		const int64_t before = gpu_counter(&odp_gpu_knn_tc_samples);

		knn_case(GEN_UNIFORM, 128, 262144, 6, 32, false, ODP_METRIC_EUCLIDEAN, 0, true,
				 "filter, sample through the filter");
		knn_case(GEN_UNIT, 128, 262144, 6, 32, false, ODP_METRIC_COSINE, 0, true,
				 "filter, sample through the filter");
		if (gpu_ok && &odp_gpu_knn_tc_samples != NULL)
			check(odp_gpu_knn_tc_samples >= before + 2,
				  "the filter found the thresholds of %lld of 2 samples",
				  (long long) (odp_gpu_knn_tc_samples - before));
	}
	/*
	 * 20 rows copied 3000 times each: every list overflows (more than 2048
	 * candidates at distance 0), and every query scans all candidates.
	 */
	{
		const int64_t before = gpu_counter(&odp_gpu_knn_tc_scans);

		knn_case(GEN_DUPLICATES, 200, 60000, 9, 40, false, ODP_METRIC_EUCLIDEAN, 0, true,
				 "filter, lists overflowing");
		knn_case(GEN_DUPLICATES, 200, 60000, 9, 40, false, ODP_METRIC_INNER_PRODUCT, 0, true,
				 "filter, lists overflowing");
		if (gpu_ok && &odp_gpu_knn_tc_scans != NULL)
			check(odp_gpu_knn_tc_scans - before >= 2 * 200,
				  "overflowed lists: %lld queries scanned every candidate (400 expected at least)",
				  (long long) (odp_gpu_knn_tc_scans - before));
	}
	/* large k: device-memory lists on the GPU; one metric keeps it cheap */
	knn_case(GEN_UNIFORM, 70, 5000, 4, 1024, false, ODP_METRIC_EUCLIDEAN, 0, false, "k = 1024");
	knn_case(GEN_TIES, 3, 20000, 3, 1500, false, ODP_METRIC_MANHATTAN, 0, false, "k = 1500, few queries");

	/*
	 * A few queries against many candidates: the GPU's few-query path
	 * (every distance, then a radix select) for the distance metrics, rows
	 * read 4 values at a time (D = 64) or one by one (3, 130), ties broken
	 * by index (many equal distances straddle the k-th), k up to 1024, up
	 * to 32 queries, all rows (k = n), and candidates in two chunks whose
	 * last has fewer rows than k; 33 queries or k = 1025 take the tiled
	 * path, and so does a budget too small for every distance (the same
	 * call without the budget takes the few-query path).
	 */
	{
		const int64_t before = gpu_counter(&odp_gpu_knn_few_runs);
		const OdpMetric few[] = {ODP_METRIC_EUCLIDEAN, ODP_METRIC_SQEUCLIDEAN,
		ODP_METRIC_MANHATTAN, ODP_METRIC_CHEBYSHEV};
		int64_t		after;

		for (int m = 0; m < 4; m++)
		{
			knn_case(GEN_TIES, 1, 100000, 3, 10, false, few[m], 0, false, "few-query path, ties");
			knn_case(GEN_UNIFORM, 8, 70000, 64, 257, false, few[m], 0, false, "few-query path, D = 64");
			knn_case(GEN_GRID, 5, 50000, 130, 1, false, few[m], 0, false, "few-query path, D = 130, grid");
		}
		knn_case(GEN_TIES, 32, 60000, 4, 1024, false, ODP_METRIC_MANHATTAN, 0, false,
				 "few-query path, 32 queries, k = 1024, ties");
		knn_case(GEN_IDENTICAL, 3, 5000, 8, 700, false, ODP_METRIC_EUCLIDEAN, 0, false,
				 "few-query path, all rows equal");
		knn_case(GEN_DUPLICATES, 17, 20000, 12, 100, false, ODP_METRIC_SQEUCLIDEAN, 0, false,
				 "few-query path, duplicated rows");
		knn_case(GEN_UNIFORM, 2, 300, 16, 300, false, ODP_METRIC_EUCLIDEAN, 0, false,
				 "few-query path, k = n");
		knn_case(GEN_TIES, 32, ((int64_t) 1 << 20) + 5, 3, 10, false, ODP_METRIC_SQEUCLIDEAN, 0,
				 false, "few-query path, two chunks, the last of 5 rows");
		after = gpu_counter(&odp_gpu_knn_few_runs);
		if (gpu_ok && &odp_gpu_knn_few_runs != NULL)
			check(after == before + 17, "the few-query path ran %lld of 17 calls",
				  (long long) (after - before));
		knn_case(GEN_UNIFORM, 33, 40000, 16, 10, false, ODP_METRIC_EUCLIDEAN, 0, false,
				 "33 queries: tiles");
		knn_case(GEN_TIES, 2, 40000, 3, 1025, false, ODP_METRIC_MANHATTAN, 0, false,
				 "k = 1025: tiles");
		knn_case(GEN_UNIFORM, 2, 300000, 16, 10, false, ODP_METRIC_EUCLIDEAN, (size_t) 4 << 20,
				 false, "few queries, budget too small for every distance");
		if (gpu_ok && &odp_gpu_knn_few_runs != NULL)
			check(gpu_counter(&odp_gpu_knn_few_runs) == after + 1,
				  "33 queries, k = 1025 and a small budget take the tiled path (%lld few-query "
				  "calls, 1 expected: the budget's case without it)",
				  (long long) (gpu_counter(&odp_gpu_knn_few_runs) - after));
	}

	shared_case(ODP_DEVICE_CPU, "cpu");
	if (gpu_ok)
		shared_case(ODP_DEVICE_GPU, "gpu");
	shared_wait_case();

	knn_argument_tests(ODP_DEVICE_CPU);
	if (gpu_ok)
		knn_argument_tests(ODP_DEVICE_GPU);
}
