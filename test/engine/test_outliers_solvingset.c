/*-------------------------------------------------------------------------
 *
 * test_outliers_solvingset.c
 *	  Engine tests of odp_compute_top_outliers: SolvingSet against brute
 *	  force (same rows, order and bit-identical scores), on data built to
 *	  defeat pruning as well as on easy data, for every metric; CPU against
 *	  GPU solving sets; cancellation; argument errors.
 *
 * Most cases use a small batch size (the driver's test hook) so that small
 * inputs go through many batches and much pruning; a few use the default
 * batch size and AUTO just above its threshold.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_outliers_solvingset.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_distance.h"
#include "include/odp_outliers.h"
#include "outliers/solvingset_internal.h"
#include "test_util.h"

/*
 * Knobs and counters of kernels/outliers/solvingset_gpu.cu and knn_gpu_tc.cu;
 * weak, so that a CPU-only build (WITH_CUDA=no), which lacks them, still
 * links.
 */
extern int	odp_cpu_ss_fused;	/* kernels/outliers/solvingset_cpu.c */
extern int	odp_gpu_ss_fused_cap __attribute__((weak));
extern int64_t odp_gpu_ss_fused_batches __attribute__((weak));
extern int64_t odp_gpu_ss_overflowed __attribute__((weak));
extern int64_t odp_gpu_knn_tc_chunks __attribute__((weak));
extern int64_t odp_gpu_knn_tc_give_ups __attribute__((weak));

static void
set_gpu_fused_cap(int cap)
{
	if (&odp_gpu_ss_fused_cap != NULL)
		odp_gpu_ss_fused_cap = cap;
}

/* Extra data kinds for these tests. */
typedef enum SsGen
{
	SS_CLUSTERS,				/* gaussian clusters plus planted outliers */
	SS_ONE_HOT,					/* one-hot rows: all pairs equidistant */
	SS_ONE_CLUSTER,				/* one tight cluster, nothing else */
	SS_BINARY,					/* 0/1 attributes, a 1 with probability 0.3
								 * (the CPU compares them as bits) */
	SS_BASE						/* + Gen: make_data() */
} SsGen;

/* One computation's results. */
typedef struct SsResult
{
	OdpStatus	status;
	char		message[ODP_MESSAGE_LEN];
	int64_t		count;
	int64_t    *order;
	double	   *scores;
	int64_t    *set;
	double	   *set_scores;
	OdpTopOutliersStats stats;
	double		ms;
} SsResult;

/* Standard normal deviate (Box-Muller). */
static float
ss_gauss(void)
{
	float		u = rng_unit() + 1e-7f;
	float		v = rng_unit();

	return sqrtf(-2.0f * logf(u)) * cosf(6.2831853f * v);
}

/*
 * Makes rows x dims data of kind g (SsGen, or SS_BASE + Gen); the caller
 * frees it.  No row is a zero vector.
 */
static float *
ss_make(int g, int64_t rows, int dims)
{
	float	   *x;

	if (g >= SS_BASE)
		return make_data((Gen) (g - SS_BASE), rows, dims);
	x = xmalloc(sizeof(float) * (size_t) rows * dims);
	if (g == SS_CLUSTERS)
	{
		float		centres[8][64];

		for (int c = 0; c < 8; c++)
			for (int d = 0; d < dims && d < 64; d++)
				centres[c][d] = 20.0f * rng_unit() - 10.0f;
		for (int64_t i = 0; i < rows; i++)
		{
			float	   *r = x + i * dims;
			int			c = (int) (rng_next() % 8);
			bool		outlier = rng_next() % 100 == 0;

			for (int d = 0; d < dims; d++)
				r[d] = outlier ? 40.0f * rng_unit() - 20.0f
					: centres[c][d % 64] + 0.5f * ss_gauss();
		}
	}
	else if (g == SS_ONE_HOT)
	{
		memset(x, 0, sizeof(float) * (size_t) rows * dims);
		for (int64_t i = 0; i < rows; i++)
			x[i * dims + i % dims] = 1.0f;
	}
	else if (g == SS_BINARY)
	{
		for (int64_t i = 0; i < rows * dims; i++)
			x[i] = rng_unit() < 0.3f ? 1.0f : 0.0f;
	}
	else
	{
		for (int64_t i = 0; i < rows; i++)
			for (int d = 0; d < dims; d++)
				x[i * dims + d] = 3.0f + 1e-3f * rng_unit();
	}
	return x;
}

/* Name of data kind g. */
static const char *
ss_gen_name(int g)
{
	static const char *const names[] = {"clusters", "one-hot", "one-cluster", "0/1"};

	return g >= SS_BASE ? gen_names[g - SS_BASE] : names[g];
}

/* Frees a result's buffers. */
static void
ss_free(SsResult *r)
{
	free(r->order);
	free(r->scores);
	free(r->set);
	free(r->set_scores);
}

/*
 * Runs odp_compute_top_outliers with SolvingSet batches of batch rows (0:
 * the default) into a fresh result (free with ss_free).
 */
static SsResult
ss_run_batch(OdpDevice dev, const float *x, int64_t rows, int dims, OdpMetric metric,
			 int k, int64_t n, OdpOutlierMethod method, int64_t batch)
{
	SsResult	r;
	OdpContext	ctx = make_ctx(dev);
	OdpMatrix	m = {0};
	int64_t		cap = n < rows ? n : rows;
	double		t0 = odp_now_ms();

	memset(&r, 0, sizeof(r));
	r.order = xmalloc(sizeof(int64_t) * (size_t) cap);
	r.scores = xmalloc(sizeof(double) * (size_t) cap);
	r.set = xmalloc(sizeof(int64_t) * (size_t) rows);
	r.set_scores = xmalloc(sizeof(double) * (size_t) rows);
	ctx.cpu_threads = 2;
	m.data = x;
	m.rows = rows;
	m.dims = dims;
	r.status = odp_compute_top_outliers(&ctx, &m, metric, k, n, method, batch,
										r.order, r.scores, &r.count,
										r.set, r.set_scores, &r.stats);
	r.ms = odp_now_ms() - t0;
	snprintf(r.message, sizeof(r.message), "%s", ctx.message);
	return r;
}

/* ss_run_batch with the default batch size. */
static SsResult
ss_run(OdpDevice dev, const float *x, int64_t rows, int dims, OdpMetric metric,
	   int k, int64_t n, OdpOutlierMethod method)
{
	return ss_run_batch(dev, x, rows, dims, metric, k, n, method, 0);
}

/*
 * Checks SolvingSet result s against brute-force result b: same rows, order
 * and bits; the solving set ascending, containing every top-n row with its
 * exact score.  Returns whether all held; writes what failed into why.
 */
static bool
ss_same(const SsResult *s, const SsResult *b, char *why, size_t len)
{
	if (s->status != ODP_OK)
		return snprintf(why, len, "%s: %s", odp_status_name(s->status), s->message), false;
	if (s->count != b->count)
		return snprintf(why, len, "count %lld vs %lld", (long long) s->count,
						(long long) b->count), false;
	for (int64_t i = 0; i < s->count; i++)
		if (s->order[i] != b->order[i] || s->scores[i] != b->scores[i])
			return snprintf(why, len, "position %lld: row %lld score %.17g vs row %lld score %.17g",
							(long long) i, (long long) s->order[i], s->scores[i],
							(long long) b->order[i], b->scores[i]), false;
	if (s->stats.solving_set_size < s->count)
		return snprintf(why, len, "solving set of %lld rows", (long long) s->stats.solving_set_size), false;
	for (int64_t i = 1; i < s->stats.solving_set_size; i++)
		if (s->set[i - 1] >= s->set[i])
			return snprintf(why, len, "solving set not ascending at %lld", (long long) i), false;
	for (int64_t i = 0; i < s->count; i++)
	{
		/* binary search of order[i] in the solving set */
		int64_t		lo = 0,
					hi = s->stats.solving_set_size;

		while (lo < hi)
		{
			int64_t		mid = (lo + hi) / 2;

			if (s->set[mid] < s->order[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == s->stats.solving_set_size || s->set[lo] != s->order[i] ||
			s->set_scores[lo] != s->scores[i])
			return snprintf(why, len, "top row %lld missing from the solving set",
							(long long) s->order[i]), false;
	}
	return true;
}

/*
 * One case: brute force on the CPU, SolvingSet on the CPU (and on the GPU
 * when usable) with batch size batch (0 = default), compared.
 */
static void
ss_case(int g, int64_t rows, int dims, OdpMetric metric, int k, int64_t n,
		int64_t batch, OdpOutlierMethod method)
{
	float	   *x = ss_make(g, rows, dims);
	SsResult	b,
				c;
	char		name[200];
	char		why[ODP_MESSAGE_LEN + 100] = "";
	bool		ok;

	snprintf(name, sizeof(name), "%s rows=%lld dims=%d k=%d n=%lld %s m=%lld%s",
			 ss_gen_name(g), (long long) rows, dims, k, (long long) n,
			 odp_metric_name(metric), (long long) batch,
			 method == ODP_METHOD_AUTO ? " auto" : "");
	b = ss_run(ODP_DEVICE_CPU, x, rows, dims, metric, k, n, ODP_METHOD_BRUTEFORCE);
	odp_ss_test_batch_size = batch;
	c = ss_run(ODP_DEVICE_CPU, x, rows, dims, metric, k, n, method);
	if (b.status != ODP_OK)
		check(false, "solvingset %s: brute force failed: %s", name, b.message);
	else
	{
		ok = ss_same(&c, &b, why, sizeof(why)) &&
			c.stats.method == ODP_METHOD_SOLVINGSET;
		check(ok, "solvingset cpu %s: %s; solving set %lld, %d batches of %d, %.3g distances (brute force %.3g), %.0f vs %.0f ms",
			  name, ok ? "same as brute force" : (why[0] ? why : "method not SolvingSet"),
			  (long long) c.stats.solving_set_size, (int) c.stats.iterations,
			  (int) c.stats.batch_size, (double) c.stats.distances,
			  (double) b.stats.distances, c.ms, b.ms);
	}
	/* the CPU's two passes alone build the same solving set, weights to the bit */
	if (c.status == ODP_OK)
	{
		SsResult	c2;

		odp_cpu_ss_fused = 0;
		c2 = ss_run(ODP_DEVICE_CPU, x, rows, dims, metric, k, n, method);
		odp_cpu_ss_fused = 1;
		ok = ss_same(&c2, &c, why, sizeof(why)) &&
			c2.stats.solving_set_size == c.stats.solving_set_size &&
			memcmp(c2.set, c.set, sizeof(int64_t) * (size_t) c.stats.solving_set_size) == 0 &&
			memcmp(c2.set_scores, c.set_scores, sizeof(double) * (size_t) c.stats.solving_set_size) == 0 &&
			c2.stats.iterations == c.stats.iterations;
		check(ok, "solvingset cpu (two passes) %s: %s; %.3g distances against %.3g in the single pass",
			  name, ok ? "same results and solving set as the single pass" : "differs from the single pass",
			  (double) c2.stats.distances, (double) c.stats.distances);
		ss_free(&c2);
	}
	/*
	 * The GPU three ways: its default single pass; buffers of 8 distances,
	 * so that most candidates overflow into the two-pass fallback; and
	 * the two passes alone.
	 */
	for (int way = 0; way < 3 && gpu_ok && b.status == ODP_OK; way++)
	{
		static const int caps[3] = {-1, 8, 0};
		static const char *const ways[3] = {"", " (buffers of 8)", " (two passes)"};
		int64_t		fused0 = gpu_counter(&odp_gpu_ss_fused_batches);
		int64_t		over0 = gpu_counter(&odp_gpu_ss_overflowed);
		SsResult	gr;

		set_gpu_fused_cap(caps[way]);
		gr = ss_run(ODP_DEVICE_GPU, x, rows, dims, metric, k, n, method);
		set_gpu_fused_cap(-1);

		ok = ss_same(&gr, &b, why, sizeof(why));
		if (ok && c.status == ODP_OK)
		{
			ok = gr.stats.solving_set_size == c.stats.solving_set_size &&
				memcmp(gr.set, c.set, sizeof(int64_t) * (size_t) c.stats.solving_set_size) == 0 &&
				memcmp(gr.set_scores, c.set_scores, sizeof(double) * (size_t) c.stats.solving_set_size) == 0 &&
				gr.stats.iterations == c.stats.iterations;
			if (!ok)
				snprintf(why, sizeof(why), "solving set differs from the CPU's (%lld vs %lld rows)",
						 (long long) gr.stats.solving_set_size,
						 (long long) c.stats.solving_set_size);
		}
		check(ok, "solvingset gpu%s %s: %s; %.0f ms, %lld single-pass batches, %lld overflowed",
			  ways[way], name,
			  ok ? "same as brute force, same solving set as the CPU" : why, gr.ms,
			  (long long) (gpu_counter(&odp_gpu_ss_fused_batches) - fused0),
			  (long long) (gpu_counter(&odp_gpu_ss_overflowed) - over0));
		ss_free(&gr);
	}
	odp_ss_test_batch_size = 0;
	ss_free(&b);
	ss_free(&c);
	free(x);
}

/* Cancel callback state: true from poll at_poll on. */
typedef struct SsCancel
{
	int			polls;
	int			at_poll;
} SsCancel;

/* OdpCancelFn of the cancel test. */
static bool
ss_cancel_cb(void *arg)
{
	SsCancel   *c = (SsCancel *) arg;

	return ++c->polls >= c->at_poll;
}

/*
 * Runs SolvingSet on m with a cancel callback that answers true from poll
 * at_poll on (never when at_poll is 0); returns the status, the polls in
 * *polls and the message in ctx.
 */
static OdpStatus
ss_cancel_run(OdpContext *ctx, const OdpMatrix *m, int at_poll, int *polls,
			  int64_t *count)
{
	SsCancel	probe = {0, at_poll > 0 ? at_poll : 1 << 30};
	int64_t		order[10];
	double		scores[10];
	OdpStatus	st;

	ctx->cancel = ss_cancel_cb;
	ctx->cancel_arg = &probe;
	st = odp_compute_top_outliers(ctx, m, ODP_METRIC_EUCLIDEAN, 10, 10,
								  ODP_METHOD_SOLVINGSET, 0, order, scores, count,
								  NULL, NULL, NULL);
	*polls = probe.polls;
	return st;
}

/*
 * Cancels a SolvingSet run at its second poll (inside the first exact
 * step) and a third of the way; each must stop with
 * ODP_ERR_CANCELLED, and the next call must work and repeat itself.
 */
static void
ss_cancel_test(OdpDevice dev)
{
	const int64_t rows = 20000;
	const int	dims = 8;
	float	   *x = make_data(GEN_UNIFORM, rows, dims);
	const char *path = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";
	OdpMatrix	m = {x, rows, dims};
	OdpContext	ctx = make_ctx(dev);
	int			total = 0;
	int			polls;
	int64_t		count = -1;
	OdpStatus	st;
	SsResult	a,
				b;

	st = ss_cancel_run(&ctx, &m, 0, &total, &count);
	check(st == ODP_OK && total >= 2, "solvingset %s uncancelled run: %s, %d polls",
		  path, odp_status_name(st), total);
	/* how often the caller's thread polls varies with thread scheduling */
	for (int i = 0; i < 2 && total >= 2; i++)
	{
		int			at = i == 0 ? 2 : total / 3;

		ctx = make_ctx(dev);
		st = ss_cancel_run(&ctx, &m, at, &polls, &count);
		if (st == ODP_OK && polls < at)
			check(true, "solvingset %s cancel at poll %d: skipped, the run polled only %d times",
				  path, at, polls);
		else
			check(st == ODP_ERR_CANCELLED && ctx.message[0] != '\0' && count == 0 &&
				  polls == at,
				  "solvingset %s cancel at poll %d of about %d: status \"%s\", message \"%s\", count %lld",
				  path, at, total, odp_status_name(st), ctx.message, (long long) count);
	}
	a = ss_run(dev, x, rows, dims, ODP_METRIC_EUCLIDEAN, 10, 10, ODP_METHOD_SOLVINGSET);
	b = ss_run(dev, x, rows, dims, ODP_METRIC_EUCLIDEAN, 10, 10, ODP_METHOD_SOLVINGSET);
	check(a.status == ODP_OK && b.status == ODP_OK && a.count == 10 &&
		  memcmp(a.order, b.order, sizeof(int64_t) * 10) == 0 &&
		  memcmp(a.scores, b.scores, sizeof(double) * 10) == 0,
		  "solvingset %s call after a cancel succeeds and repeats: %s %s",
		  path, odp_status_name(a.status), a.message);
	ss_free(&a);
	ss_free(&b);
	free(x);
}

/*
 * The weight of row y against the rows of set (ascending, nset of them,
 * y not among them): its k smallest distances to them, summed ascending
 * in float64 (the definition, computed naively).
 */
static double
ss_weight_against(const float *x, int dims, OdpMetric metric, int64_t y,
				  const int64_t *set, int64_t nset, int k)
{
	float	   *d = xmalloc(sizeof(float) * (size_t) nset);
	double		w;

	for (int64_t i = 0; i < nset; i++)
		d[i] = odp_distance(metric, x + y * dims, x + set[i] * dims, dims, 0.0f, 0.0f);
	/* the k smallest, ascending: a partial selection sort */
	for (int i = 0; i < k && i < nset; i++)
		for (int64_t j = i + 1; j < nset; j++)
			if (d[j] < d[i])
			{
				float		t = d[i];

				d[i] = d[j];
				d[j] = t;
			}
	w = odp_sum_ascending(d, k);
	free(d);
	return w;
}

/*
 * Batch sizes chosen by the caller: the top n stay brute force's, and the
 * set is a solving set (seed 001, Definition 3.3): every row outside it
 * weighs at most w*, the n-th best score, against it; on both paths
 * alike.
 */
static void
ss_batch_tests(void)
{
	const int64_t rows = 3000;
	const int	dims = 3,
				k = 8,
				n = 6;
	static const int64_t batches[] = {6, 20, 100, 0};
	float	   *x = make_data(GEN_UNIFORM, rows, dims);
	SsResult	b;

	/* six planted outliers far from the cube the rest fill */
	for (int i = 0; i < 6; i++)
		for (int d = 0; d < dims; d++)
			x[(i * 487 + 11) * dims + d] = 4.0f + (float) (i + d);
	b = ss_run(ODP_DEVICE_CPU, x, rows, dims, ODP_METRIC_EUCLIDEAN, k, n, ODP_METHOD_BRUTEFORCE);
	for (size_t c = 0; c < sizeof(batches) / sizeof(batches[0]); c++)
	{
		SsResult	s = ss_run_batch(ODP_DEVICE_CPU, x, rows, dims, ODP_METRIC_EUCLIDEAN, k, n,
									 ODP_METHOD_SOLVINGSET, batches[c]);
		char		why[256] = "";
		bool		ok = ss_same(&s, &b, why, sizeof(why));
		double		worst = 0.0;
		int64_t		at = 0;

		/* Definition 3.3, row by row outside the set */
		for (int64_t y = 0; ok && y < rows; y++)
		{
			double		w;

			while (at < s.stats.solving_set_size && s.set[at] < y)
				at++;
			if (at < s.stats.solving_set_size && s.set[at] == y)
				continue;
			w = ss_weight_against(x, dims, ODP_METRIC_EUCLIDEAN, y, s.set,
								  s.stats.solving_set_size, k);
			if (w > worst)
				worst = w;
		}
		ok = ok && worst <= b.scores[n - 1];
		check(ok && (batches[c] == 0 || s.stats.batch_size == batches[c]),
			  "solvingset batch %lld: top %d as brute force, solving set of %lld rows, largest weight outside it %.6g <= w* %.6g%s%s",
			  (long long) batches[c], n, (long long) s.stats.solving_set_size, worst,
			  b.scores[n - 1], ok ? "" : ": ", why);
		if (gpu_ok)
		{
			SsResult	g = ss_run_batch(ODP_DEVICE_GPU, x, rows, dims, ODP_METRIC_EUCLIDEAN, k,
										 n, ODP_METHOD_SOLVINGSET, batches[c]);
			bool		same = ss_same(&g, &b, why, sizeof(why)) &&
				g.stats.solving_set_size == s.stats.solving_set_size &&
				memcmp(g.set, s.set, sizeof(int64_t) * (size_t) s.stats.solving_set_size) == 0;

			check(same, "solvingset batch %lld on the GPU: the CPU's top and solving set%s%s",
				  (long long) batches[c], same ? "" : ": ", why);
			ss_free(&g);
		}
		ss_free(&s);
	}
	ss_free(&b);
	free(x);
}

/* Argument errors of odp_compute_top_outliers. */
static void
ss_argument_tests(void)
{
	const int64_t rows = 5000;
	float	   *x = make_data(GEN_UNIFORM, rows, 2);
	OdpMatrix	m = {x, rows, 2};
	int64_t		order[8];
	double		scores[8];
	int64_t		count;
	struct
	{
		int			k;
		int64_t		n;
		int			method;
		int64_t		batch;
		bool		null_order;
		const char *what;
	}			cases[] = {
		{10, 0, ODP_METHOD_AUTO, 0, false, "n = 0"},
		{10, -5, ODP_METHOD_SOLVINGSET, 0, false, "n < 0"},
		{0, 5, ODP_METHOD_SOLVINGSET, 0, false, "k = 0"},
		{5000, 5, ODP_METHOD_BRUTEFORCE, 0, false, "k = rows"},
		{ODP_MAX_K, 5, ODP_METHOD_SOLVINGSET, 0, false, "SolvingSet with k = ODP_MAX_K"},
		{10, 5, 99, 0, false, "unknown method"},
		{10, 5, ODP_METHOD_SOLVINGSET, 0, true, "NULL order"},
		{10, 5, ODP_METHOD_SOLVINGSET, -1, false, "negative batch size"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		OdpContext	ctx = make_ctx(ODP_DEVICE_CPU);
		OdpStatus	st;

		st = odp_compute_top_outliers(&ctx, &m, ODP_METRIC_EUCLIDEAN, cases[i].k,
									  cases[i].n, (OdpOutlierMethod) cases[i].method,
									  cases[i].batch, cases[i].null_order ? NULL : order,
									  scores, &count, NULL, NULL, NULL);
		check(st == ODP_ERR_INVALID_ARGUMENT && ctx.message[0] != '\0',
			  "top outliers %s: status \"%s\", message \"%s\"", cases[i].what,
			  odp_status_name(st), ctx.message);
	}
	free(x);
}

/* Brute force against the naive reference, and its stats. */
static void
ss_bruteforce_test(void)
{
	const int64_t rows = 700;
	const int	dims = 5;
	const int	k = 12;
	float	   *x = make_data(GEN_UNIFORM, rows, dims);
	double	   *ref = xmalloc(sizeof(double) * rows);
	int64_t		want[25];
	SsResult	b;
	bool		ok;

	reference_scores(x, rows, dims, ODP_METRIC_MANHATTAN, k, ref);
	odp_top_n(ref, NULL, rows, 25, want);
	b = ss_run(ODP_DEVICE_CPU, x, rows, dims, ODP_METRIC_MANHATTAN, k, 25,
			   ODP_METHOD_AUTO);
	ok = b.status == ODP_OK && b.count == 25 &&
		b.stats.method == ODP_METHOD_BRUTEFORCE &&
		b.stats.solving_set_size == rows && b.stats.distances == rows * (rows - 1);
	for (int i = 0; ok && i < 25; i++)
		ok = b.order[i] == want[i] && b.scores[i] == ref[want[i]];
	for (int64_t i = 0; ok && i < rows; i++)
		ok = b.set[i] == i && b.set_scores[i] == ref[i];
	check(ok, "top outliers auto on %lld rows runs brute force, equal to the reference: %s %s",
		  (long long) rows, odp_status_name(b.status), b.message);
	ss_free(&b);
	free(x);
	free(ref);
}

/*
 * AUTO on data SolvingSet cannot prune (one-hot rows: every weight is the
 * same) above its row threshold: it must hand over to brute force after
 * half of brute force's distances, and still return brute force's answer.
 * On the GPU, AUTO's first try, brute force on the exact integer path,
 * would take these 0/1 rows at once: it is kept off for the hand-over,
 * then checked on its own (brute force's distances only).
 */
static void
ss_give_up_test(OdpDevice device)
{
	const int64_t rows = 64 * 256 + 100;	/* AUTO's threshold with m = 256 */
	const int	dims = 8;		/* 8 distinct rows, each ~2000 times: weights 0 */
	float	   *x = ss_make(SS_ONE_HOT, rows, dims);
	SsResult	b = ss_run(ODP_DEVICE_CPU, x, rows, dims, ODP_METRIC_EUCLIDEAN, 10, 10,
						   ODP_METHOD_BRUTEFORCE);
	SsResult	a;

	odp_ss_test_batch_size = 256;
	gpu_integer_path(false);
	a = ss_run(device, x, rows, dims, ODP_METRIC_EUCLIDEAN, 10, 10, ODP_METHOD_AUTO);
	gpu_integer_path(true);
	odp_ss_test_batch_size = 0;
	char		why[ODP_MESSAGE_LEN + 100] = "";
	bool		ok;

	ok = b.status == ODP_OK && ss_same(&a, &b, why, sizeof(why)) &&
		a.stats.method == ODP_METHOD_BRUTEFORCE &&
		a.stats.distances >= rows * (rows - 1) + rows * (rows - 1) / 2;
	check(ok, "%s auto on %lld unprunable rows hands over to brute force: %s; %.3g distances, %.0f ms (brute force alone %.0f ms)",
		  device == ODP_DEVICE_GPU ? "gpu" : "cpu", (long long) rows,
		  ok ? "same answer" : (why[0] ? why : "method or distance count wrong"),
		  (double) a.stats.distances, a.ms, b.ms);
	ss_free(&a);
	if (device == ODP_DEVICE_GPU)
	{
		why[0] = '\0';
		odp_ss_test_batch_size = 256;
		a = ss_run(device, x, rows, dims, ODP_METRIC_EUCLIDEAN, 10, 10, ODP_METHOD_AUTO);
		odp_ss_test_batch_size = 0;
		ok = b.status == ODP_OK && ss_same(&a, &b, why, sizeof(why)) &&
			a.stats.method == ODP_METHOD_BRUTEFORCE &&
			a.stats.distances == rows * (rows - 1);
		check(ok, "gpu auto on %lld unprunable 0/1 rows runs brute force on the integer path at once: %s; %.3g distances",
			  (long long) rows, ok ? "same answer" : (why[0] ? why : "method or distance count wrong"),
			  (double) a.stats.distances);
		ss_free(&a);
	}
	ss_free(&b);
	free(x);
}

/*
 * AUTO on the GPU where SolvingSet's rule holds and the tensor-core filter
 * applies: it first runs brute force through the filter.  On an integer
 * grid (ties at the k-th distance) the filter finishes, and the answer is
 * brute force's with every row scored; on copies of a few rows (with
 * every 500th row a unique outlier, so that SolvingSet can prune) nearly
 * every list overflows, the filter gives up after its first chunk and
 * SolvingSet's answer and solving set follow, as if the filter had never
 * run.  A small batch (the test hook) puts these sizes above the rule's
 * threshold.
 */
static void
ss_filter_auto_test(void)
{
	static const struct
	{
		int			g;
		int64_t		rows;
		int			dims;
		int			k;
		bool		gives_up;
	}			cases[] = {
		{SS_BASE + GEN_GRID, 40000, 10, 50, false},
		{SS_BASE + GEN_DUPLICATES, 60000, 9, 10, true},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const int64_t rows = cases[i].rows;
		float	   *x = ss_make(cases[i].g, rows, cases[i].dims);
		SsResult	b,
					a,
					s;
		int64_t		chunks0,
					give_ups0;
		char		why[ODP_MESSAGE_LEN + 100] = "";
		bool		ok;

		if (cases[i].gives_up)
			for (int64_t r = 0; r < rows; r += 500)
				for (int d = 0; d < cases[i].dims; d++)
					x[r * cases[i].dims + d] = 4.0f * rng_unit() - 2.0f;
		b = ss_run(ODP_DEVICE_CPU, x, rows, cases[i].dims, ODP_METRIC_EUCLIDEAN,
				   cases[i].k, 10, ODP_METHOD_BRUTEFORCE);
		odp_ss_test_batch_size = 512;
		s = ss_run(ODP_DEVICE_GPU, x, rows, cases[i].dims, ODP_METRIC_EUCLIDEAN,
				   cases[i].k, 10, ODP_METHOD_SOLVINGSET);
		chunks0 = gpu_counter(&odp_gpu_knn_tc_chunks);
		give_ups0 = gpu_counter(&odp_gpu_knn_tc_give_ups);
		/* the grid is integer data: the filter is what this case is about */
		gpu_integer_path(false);
		a = ss_run(ODP_DEVICE_GPU, x, rows, cases[i].dims, ODP_METRIC_EUCLIDEAN,
				   cases[i].k, 10, ODP_METHOD_AUTO);
		gpu_integer_path(true);
		odp_ss_test_batch_size = 0;

		ok = b.status == ODP_OK && ss_same(&a, &b, why, sizeof(why));
		if (ok && !cases[i].gives_up)
		{
			ok = a.stats.method == ODP_METHOD_BRUTEFORCE &&
				a.stats.solving_set_size == rows &&
				gpu_counter(&odp_gpu_knn_tc_chunks) > chunks0 && gpu_counter(&odp_gpu_knn_tc_give_ups) == give_ups0;
			if (!ok)
				snprintf(why, sizeof(why), "method %d, %lld rows scored, filter chunks %lld, give-ups %lld",
						 (int) a.stats.method, (long long) a.stats.solving_set_size,
						 (long long) (gpu_counter(&odp_gpu_knn_tc_chunks) - chunks0),
						 (long long) (gpu_counter(&odp_gpu_knn_tc_give_ups) - give_ups0));
		}
		else if (ok)
		{
			ok = s.status == ODP_OK && a.stats.method == ODP_METHOD_SOLVINGSET &&
				gpu_counter(&odp_gpu_knn_tc_give_ups) == give_ups0 + 1 &&
				a.stats.solving_set_size == s.stats.solving_set_size &&
				memcmp(a.set, s.set, sizeof(int64_t) * (size_t) s.stats.solving_set_size) == 0 &&
				a.stats.iterations == s.stats.iterations &&
				a.stats.distances == s.stats.distances;
			if (!ok)
				snprintf(why, sizeof(why), "method %d, give-ups %lld, solving set %lld rows against SolvingSet's %lld",
						 (int) a.stats.method, (long long) (gpu_counter(&odp_gpu_knn_tc_give_ups) - give_ups0),
						 (long long) a.stats.solving_set_size,
						 (long long) s.stats.solving_set_size);
		}
		check(ok, "solvingset gpu auto through the filter, %s rows=%lld dims=%d k=%d: %s; %.0f ms (SolvingSet alone %.0f ms)",
			  ss_gen_name(cases[i].g), (long long) rows, cases[i].dims, cases[i].k,
			  ok ? (cases[i].gives_up ? "the filter gave up, SolvingSet's answer and solving set"
					: "brute force through the filter, same answer")
			  : (why[0] ? why : "differs"),
			  a.ms, s.ms);
		ss_free(&a);
		ss_free(&s);
		ss_free(&b);
		free(x);
	}
}

/*
 * All SolvingSet tests; called by the runner after the GPU probe
 * (gpu_ok says whether to run the GPU side).
 */
void
run_solvingset_tests(void)
{
	static const struct
	{
		int			g;
		int64_t		rows;
		int			dims;
		int			k;
		int64_t		n;
		int64_t		batch;
	}			cases[] = {
		{SS_BASE + GEN_UNIFORM, 2000, 4, 10, 10, 64},
		{SS_CLUSTERS, 3000, 8, 20, 15, 100},
		{SS_BASE + GEN_UNIT, 1500, 10, 5, 5, 50},	/* hypercube, 10-d */
		{SS_ONE_HOT, 400, 400, 5, 10, 32},	/* every pair equidistant */
		{SS_BINARY, 2000, 39, 10, 10, 64},	/* a word of bits a row */
		{SS_BINARY, 1500, 70, 5, 10, 50},	/* two words */
		{SS_BASE + GEN_DUPLICATES, 2000, 4, 10, 10, 64},	/* ~100 copies each */
		{SS_BASE + GEN_DUPLICATES, 2000, 4, 150, 10, 64},	/* k > copies */
		{SS_ONE_CLUSTER, 1500, 3, 8, 10, 64},
		{SS_BASE + GEN_IDENTICAL, 600, 3, 10, 10, 32},	/* constant rows */
		{SS_BASE + GEN_TIES, 1500, 2, 15, 20, 64},	/* many equal distances */
		{SS_BASE + GEN_CONSTANT_COLUMNS, 1200, 6, 10, 10, 64},
		{SS_BASE + GEN_UNIFORM, 300, 3, 3, 500, 64},	/* n > rows */
		{SS_BASE + GEN_UNIFORM, 1000, 3, 1, 1, 16},	/* n = 1, k = 1 */
		{SS_BASE + GEN_UNIFORM, 200, 3, 199, 5, 16},	/* k = rows - 1 */
		{SS_BASE + GEN_UNIFORM, 1000, 3, 7, 100, 16},	/* m raised to n */
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int m = 0; m < ODP_METRIC_COUNT; m++)
		{
			if (odp_metric_is_distance((OdpMetric) m))
				ss_case(cases[c].g, cases[c].rows, cases[c].dims, (OdpMetric) m,
						cases[c].k, cases[c].n, cases[c].batch, ODP_METHOD_SOLVINGSET);
		}

	/* the default batch size: AUTO just above its threshold, and larger */
	/* AUTO just above its threshold (64 batches; a small batch keeps it cheap) */
	ss_case(SS_CLUSTERS, 64 * 256 + 1, 3, ODP_METRIC_EUCLIDEAN, 10, 10, 256,
			ODP_METHOD_AUTO);
	ss_case(SS_CLUSTERS, 20000, 6, ODP_METRIC_MANHATTAN, 20, 10, 0, ODP_METHOD_SOLVINGSET);
	ss_case(SS_BASE + GEN_UNIT, 20000, 10, ODP_METRIC_EUCLIDEAN, 50, 10, 0,
			ODP_METHOD_SOLVINGSET);

	/* the GPU's single pass and its overflow fallback both ran above */
	if (gpu_ok)
	{
		int64_t		fused0 = gpu_counter(&odp_gpu_ss_fused_batches);
		int64_t		over0 = gpu_counter(&odp_gpu_ss_overflowed);

		ss_case(SS_CLUSTERS, 20000, 6, ODP_METRIC_EUCLIDEAN, 20, 10, 512,
				ODP_METHOD_SOLVINGSET);
		check(gpu_counter(&odp_gpu_ss_fused_batches) > fused0 && gpu_counter(&odp_gpu_ss_overflowed) > over0,
			  "solvingset gpu: the single pass ran (%lld batches) and buffers overflowed (%lld candidates)",
			  (long long) (gpu_counter(&odp_gpu_ss_fused_batches) - fused0),
			  (long long) (gpu_counter(&odp_gpu_ss_overflowed) - over0));
	}

	ss_bruteforce_test();
	if (gpu_ok)
		ss_filter_auto_test();
	ss_give_up_test(ODP_DEVICE_CPU);
	if (gpu_ok)
		ss_give_up_test(ODP_DEVICE_GPU);
	ss_argument_tests();
	ss_batch_tests();
	ss_cancel_test(ODP_DEVICE_CPU);
	if (gpu_ok)
		ss_cancel_test(ODP_DEVICE_GPU);
	else
	{
		float	   *x = make_data(GEN_UNIFORM, 100, 3);
		SsResult	r = ss_run(ODP_DEVICE_GPU, x, 100, 3, ODP_METRIC_EUCLIDEAN,
							   5, 5, ODP_METHOD_SOLVINGSET);

		check(r.status == ODP_ERR_NO_GPU && r.message[0] != '\0',
			  "solvingset on the gpu without a usable GPU: status \"%s\", message \"%s\"",
			  odp_status_name(r.status), r.message);
		ss_free(&r);
		free(x);
		printf("SolvingSet GPU tests skipped: %s\n", gpu_reason);
	}
}
