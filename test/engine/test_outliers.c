/*-------------------------------------------------------------------------
 *
 * test_outliers.c
 *	  Engine tests of odp_compute_outlier_scores, without a server: both
 *	  paths against a naive reference, GPU against CPU, chunking, the
 *	  tensor-core filter, cancellation, memory limits and argument errors;
 *	  and odp_top_n, which ranks the scores.  The SolvingSet tests (top n
 *	  outliers) are in test_outliers_solvingset.c.
 *
 * The reference (test_util.c) is written as plainly as possible: every
 * distance with odp_distance(), each row's distances sorted, the k
 * smallest summed with odp_sum_ascending().  Both paths must match it to
 * 1e-5 relative (the design goal is bit-identical; the maximum difference
 * is printed) and rank rows identically with odp_top_n().  The GPU part
 * runs when odp_gpu_probe() finds a usable GPU; otherwise it prints "GPU
 * tests skipped: <reason>".
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_outliers.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_distance.h"
#include "include/odp_outliers.h"
#include "test_util.h"

/* Query chunks the GPU's tensor-core filter finished; weak for CPU builds. */
extern int64_t odp_gpu_knn_tc_chunks __attribute__((weak));

#define TOLERANCE		1e-5	/* relative, GPU vs CPU and paths vs reference */
#define TOP_N			20

/* Largest relative difference between two score vectors. */
static double
max_rel_diff(const double *a, const double *b, int64_t n, int64_t *identical)
{
	double		worst = 0.0;

	*identical = 0;
	for (int64_t i = 0; i < n; i++)
	{
		double		den = fmax(fabs(a[i]), fabs(b[i]));
		double		r = den > 0.0 ? fabs(a[i] - b[i]) / den : 0.0;

		if (a[i] == b[i])
			(*identical)++;
		if (r > worst || isnan(a[i]) || isnan(b[i]))
			worst = isnan(r) ? INFINITY : (r > worst ? r : worst);
	}
	return worst;
}

/* Whether odp_top_n ranks both score vectors identically. */
static bool
same_top_n(const double *a, const double *b, int64_t rows)
{
	int64_t		oa[TOP_N];
	int64_t		ob[TOP_N];
	int64_t		na = odp_top_n(a, NULL, rows, TOP_N, oa);
	int64_t		nb = odp_top_n(b, NULL, rows, TOP_N, ob);

	return na == nb && memcmp(oa, ob, sizeof(int64_t) * (size_t) na) == 0;
}

/* qsort context of top_ref_cmp. */
static const double *top_ref_scores;
static const int64_t *top_ref_ids;

/* The ranking odp_top_n documents: higher score first, then smaller id. */
static int
top_ref_cmp(const void *pa, const void *pb)
{
	const int64_t a = *(const int64_t *) pa;
	const int64_t b = *(const int64_t *) pb;
	const double sa = top_ref_scores[a];
	const double sb = top_ref_scores[b];
	const int64_t ia = top_ref_ids ? top_ref_ids[a] : a;
	const int64_t ib = top_ref_ids ? top_ref_ids[b] : b;

	if (sa != sb)
		return sa > sb ? -1 : 1;
	return (ia > ib) - (ia < ib);
}

/*
 * odp_top_n against a full sort, for small n (heap) and large n (radix
 * select), on scores with many ties, signed zeros, infinities and
 * negative values, with and without ids.
 */
static void
top_n_tests(void)
{
	const int64_t rows = 60000;
	const int64_t ns[] = {1, 10, 1023, 1024, 5000, 59999, 60000, 70000};
	double	   *sc = malloc(sizeof(double) * rows);
	int64_t    *ids = malloc(sizeof(int64_t) * rows);
	int64_t    *ref = malloc(sizeof(int64_t) * rows);
	int64_t    *got = malloc(sizeof(int64_t) * rows);
	uint64_t	seed = 12345;

	for (int64_t i = 0; i < rows; i++)
	{
		static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, -3.5, 1e300};
		uint64_t	r;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		r = seed >> 33;
		sc[i] = r % 7 == 0 ? special[r % 6] : (double) (r % 997) / 8.0 + 100.0;
		ids[i] = rows - 1 - i;	/* unique, descending */
	}
	for (int with_ids = 0; with_ids < 2; with_ids++)
	{
		for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++)
		{
			const int64_t want = ns[t] < rows ? ns[t] : rows;
			int64_t		n;

			for (int64_t i = 0; i < rows; i++)
				ref[i] = i;
			top_ref_scores = sc;
			top_ref_ids = with_ids ? ids : NULL;
			qsort(ref, (size_t) rows, sizeof(int64_t), top_ref_cmp);
			n = odp_top_n(sc, with_ids ? ids : NULL, rows, ns[t], got);
			check(n == want && memcmp(got, ref, sizeof(int64_t) * (size_t) want) == 0,
				  "odp_top_n n=%lld of %lld rows (%s ids, ties, signed zeros, infinities): same as a full sort",
				  (long long) ns[t], (long long) rows, with_ids ? "with" : "without");
		}
	}
	free(sc);
	free(ids);
	free(ref);
	free(got);
}

/* Runs one path; returns its status and leaves the scores in out. */
static OdpStatus
run_path(OdpContext *ctx, const float *x, int64_t rows, int dims,
		 OdpMetric metric, int k, double *out)
{
	OdpMatrix	m = {0};

	m.data = x;
	m.rows = rows;
	m.dims = dims;
	return odp_compute_outlier_scores(ctx, &m, metric, k, out);
}

/*
 * One case: reference, CPU and (when usable) GPU on the same data, for one
 * metric.  Checks scores and top-n order.
 */
static void
run_case(Gen gen, int64_t rows, int dims, int k, OdpMetric metric)
{
	float	   *x = make_data(gen, rows, dims);
	double	   *ref = xmalloc(sizeof(double) * (size_t) rows);
	double	   *cpu = xmalloc(sizeof(double) * (size_t) rows);
	double	   *gpu = xmalloc(sizeof(double) * (size_t) rows);
	OdpContext	ctx = make_ctx(ODP_DEVICE_CPU);
	OdpStatus	st;
	int64_t		same;
	double		diff;
	char		name[160];

	snprintf(name, sizeof(name), "%s rows=%lld dims=%d k=%d %s",
			 gen_names[gen], (long long) rows, dims, k, odp_metric_name(metric));
	reference_scores(x, rows, dims, metric, k, ref);

	st = run_path(&ctx, x, rows, dims, metric, k, cpu);
	if (st != ODP_OK)
		check(false, "cpu %s: %s: %s", name, odp_status_name(st), ctx.message);
	else
	{
		diff = max_rel_diff(cpu, ref, rows, &same);
		check(diff <= TOLERANCE && same_top_n(cpu, ref, rows),
			  "cpu %s: max rel diff vs reference %.3g, %lld/%lld bit-identical, top-%d %s",
			  name, diff, (long long) same, (long long) rows, TOP_N,
			  same_top_n(cpu, ref, rows) ? "same" : "DIFFERENT");
	}

	if (gpu_ok)
	{
		ctx = make_ctx(ODP_DEVICE_GPU);
		st = run_path(&ctx, x, rows, dims, metric, k, gpu);
		if (st != ODP_OK)
			check(false, "gpu %s: %s: %s", name, odp_status_name(st), ctx.message);
		else
		{
			bool		top = same_top_n(gpu, cpu, rows);

			diff = max_rel_diff(gpu, cpu, rows, &same);
			check(diff <= TOLERANCE && top && ctx.chunks == 1,
				  "gpu %s: max rel diff vs cpu %.3g, %lld/%lld bit-identical, top-%d %s, chunks %lld",
				  name, diff, (long long) same, (long long) rows, TOP_N,
				  top ? "same" : "DIFFERENT", (long long) ctx.chunks);
		}
	}
	free(x);
	free(ref);
	free(cpu);
	free(gpu);
}

/* Cancel callback state: answers true from poll number at_poll on. */
typedef struct CancelProbe
{
	int			polls;
	int			at_poll;
} CancelProbe;

/* OdpCancelFn for the cancel tests. */
static bool
cancel_cb(void *arg)
{
	CancelProbe *c = (CancelProbe *) arg;

	c->polls++;
	return c->polls >= c->at_poll;
}

/*
 * Cancels a run at its at_poll-th poll, then checks that a following call
 * on the same device succeeds and matches an uncancelled one.
 */
static void
cancel_test(OdpDevice dev, int at_poll)
{
	const int64_t rows = 20000;
	const int	dims = 8;
	const int	k = 10;
	float	   *x = make_data(GEN_UNIFORM, rows, dims);
	double	   *a = xmalloc(sizeof(double) * rows);
	double	   *b = xmalloc(sizeof(double) * rows);
	const char *path = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";
	CancelProbe probe = {0, at_poll};
	OdpContext	ctx = make_ctx(dev);
	OdpStatus	st;

	ctx.cancel = cancel_cb;
	ctx.cancel_arg = &probe;
	st = run_path(&ctx, x, rows, dims, ODP_METRIC_EUCLIDEAN, k, a);
	if (st == ODP_OK && probe.polls < at_poll)
		check(true, "%s cancel at poll %d: skipped, the run polled only %d times",
			  path, at_poll, probe.polls);
	else
		check(st == ODP_ERR_CANCELLED && ctx.message[0] != '\0',
			  "%s cancel at poll %d: status \"%s\", message \"%s\"",
			  path, at_poll, odp_status_name(st), ctx.message);

	ctx = make_ctx(dev);
	st = run_path(&ctx, x, rows, dims, ODP_METRIC_EUCLIDEAN, k, a);
	check(st == ODP_OK, "%s call after a cancel succeeds: %s %s", path,
		  odp_status_name(st), ctx.message);
	ctx = make_ctx(dev);
	st = run_path(&ctx, x, rows, dims, ODP_METRIC_EUCLIDEAN, k, b);
	check(st == ODP_OK && memcmp(a, b, sizeof(double) * rows) == 0,
		  "%s repeated call gives identical scores", path);
	free(x);
	free(a);
	free(b);
}

/* Argument errors: each must come back as ODP_ERR_INVALID_ARGUMENT. */
static void
argument_tests(OdpDevice dev)
{
	const int64_t rows = 5000;
	float	   *x = make_data(GEN_UNIFORM, rows, 1);
	double	   *s = xmalloc(sizeof(double) * rows);
	const char *path = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";
	struct
	{
		int64_t		rows;
		int			k;
		const char *what;
	}			cases[] = {
		{rows, 0, "k = 0"},
		{100, 100, "k = rows"},
		{100, 150, "k > rows"},
		{rows, ODP_MAX_K + 1, "k > ODP_MAX_K"},
		{rows, -3, "k < 0"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		OdpContext	ctx = make_ctx(dev);
		OdpStatus	st = run_path(&ctx, x, cases[i].rows, 1, ODP_METRIC_EUCLIDEAN,
								  cases[i].k, s);

		check(st == ODP_ERR_INVALID_ARGUMENT && ctx.message[0] != '\0',
			  "%s %s: status \"%s\", message \"%s\"", path, cases[i].what,
			  odp_status_name(st), ctx.message);
	}
	free(x);
	free(s);
}

/*
 * GPU-only checks: chunked runs equal the unchunked one, memory limits and
 * a bad device id fail cleanly, and the GPU works again afterwards.
 */
static void
gpu_special_tests(void)
{
	struct
	{
		Gen			gen;
		int64_t		rows;
		int			dims;
		int			k;
		OdpMetric	metric;
		size_t		limit;
		const char *what;
	}			chunked[] = {
		{GEN_UNIFORM, 5000, 10, 50, ODP_METRIC_EUCLIDEAN, 1 << 20, "query chunks"},
		{GEN_UNIFORM, 5000, 10, 50, ODP_METRIC_COSINE, 1 << 20, "query chunks"},
		{GEN_UNIFORM, 5000, 10, 50, ODP_METRIC_EUCLIDEAN, 256 << 10, "query x candidate chunks"},
		{GEN_DUPLICATES, 5000, 10, 50, ODP_METRIC_MANHATTAN, 256 << 10, "query x candidate chunks"},
		{GEN_UNIFORM, 3000, 37, 20, ODP_METRIC_CHEBYSHEV, 256 << 10, "query x candidate chunks"},
		{GEN_UNIFORM, 1200, 4, 300, ODP_METRIC_SQEUCLIDEAN, 1 << 20, "query chunks, large k"},
	};

	for (size_t i = 0; i < sizeof(chunked) / sizeof(chunked[0]); i++)
	{
		float	   *x = make_data(chunked[i].gen, chunked[i].rows, chunked[i].dims);
		double	   *a = xmalloc(sizeof(double) * chunked[i].rows);
		double	   *b = xmalloc(sizeof(double) * chunked[i].rows);
		OdpContext	ca = make_ctx(ODP_DEVICE_GPU);
		OdpContext	cb = make_ctx(ODP_DEVICE_GPU);
		OdpStatus	sa;
		OdpStatus	sb;
		int64_t		same;
		double		diff;

		sa = run_path(&ca, x, chunked[i].rows, chunked[i].dims,
					  chunked[i].metric, chunked[i].k, a);
		cb.gpu_memory_limit = chunked[i].limit;
		sb = run_path(&cb, x, chunked[i].rows, chunked[i].dims,
					  chunked[i].metric, chunked[i].k, b);
		if (sa != ODP_OK || sb != ODP_OK)
		{
			check(false, "gpu chunked (%s) %s: %s / %s: %s %s",
				  chunked[i].what, gen_names[chunked[i].gen],
				  odp_status_name(sa), odp_status_name(sb), ca.message, cb.message);
		}
		else
		{
			diff = max_rel_diff(a, b, chunked[i].rows, &same);
			check(same == chunked[i].rows && cb.chunks >= 4 && ca.chunks == 1,
				  "gpu chunked (%s) %s rows=%lld dims=%d k=%d %s limit=%zu: %lld chunks vs 1, max rel diff %.3g, %lld/%lld bit-identical",
				  chunked[i].what, gen_names[chunked[i].gen],
				  (long long) chunked[i].rows, chunked[i].dims, chunked[i].k,
				  odp_metric_name(chunked[i].metric), chunked[i].limit,
				  (long long) cb.chunks, diff, (long long) same,
				  (long long) chunked[i].rows);
		}
		free(x);
		free(a);
		free(b);
	}

	/*
	 * Scores through the tensor-core filter (32768 rows and more), bit for
	 * bit against the CPU path: ties at the k-th distance (the grid), a
	 * large k, cosine.
	 */
	{
		static const struct
		{
			Gen			gen;
			int64_t		rows;
			int			dims;
			int			k;
			OdpMetric	metric;
		}			tc[] = {
			{GEN_GRID, 40000, 10, 50, ODP_METRIC_EUCLIDEAN},
			{GEN_UNIT, 36000, 6, 10, ODP_METRIC_SQEUCLIDEAN},
			{GEN_UNIFORM, 36000, 20, 64, ODP_METRIC_COSINE},
		};

		for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++)
		{
			float	   *x = make_data(tc[i].gen, tc[i].rows, tc[i].dims);
			double	   *g = xmalloc(sizeof(double) * tc[i].rows);
			double	   *c = xmalloc(sizeof(double) * tc[i].rows);
			OdpContext	cg = make_ctx(ODP_DEVICE_GPU);
			OdpContext	cc = make_ctx(ODP_DEVICE_CPU);
			const int64_t before = gpu_counter(&odp_gpu_knn_tc_chunks);
			OdpStatus	sg;
			OdpStatus	sc;
			int64_t		same = 0;

			cc.cpu_threads = 4;
			/* the grid is integer data: the filter is what this case is about */
			gpu_integer_path(false);
			sg = run_path(&cg, x, tc[i].rows, tc[i].dims, tc[i].metric, tc[i].k, g);
			gpu_integer_path(true);
			sc = run_path(&cc, x, tc[i].rows, tc[i].dims, tc[i].metric, tc[i].k, c);
			if (sg == ODP_OK && sc == ODP_OK)
				max_rel_diff(g, c, tc[i].rows, &same);
			check(sg == ODP_OK && sc == ODP_OK && same == tc[i].rows &&
				  (&odp_gpu_knn_tc_chunks == NULL || odp_gpu_knn_tc_chunks > before),
				  "gpu scores through the tensor-core filter, %s rows=%lld dims=%d k=%d %s: %s / %s, %lld/%lld bit-identical to the cpu, filter chunks %lld",
				  gen_names[tc[i].gen], (long long) tc[i].rows, tc[i].dims, tc[i].k,
				  odp_metric_name(tc[i].metric), odp_status_name(sg), odp_status_name(sc),
				  (long long) same, (long long) tc[i].rows,
				  (long long) (&odp_gpu_knn_tc_chunks != NULL ? odp_gpu_knn_tc_chunks - before : -1));
			free(x);
			free(g);
			free(c);
		}
	}

	/* a budget far too small: a clean error with a message, no crash */
	{
		float	   *x = make_data(GEN_UNIFORM, 5000, 10);
		double	   *s = xmalloc(sizeof(double) * 5000);
		OdpContext	ctx = make_ctx(ODP_DEVICE_GPU);
		OdpStatus	st;

		ctx.gpu_memory_limit = 1024;
		st = run_path(&ctx, x, 5000, 10, ODP_METRIC_EUCLIDEAN, 50, s);
		check((st == ODP_ERR_GPU_OOM || st == ODP_ERR_LIMIT) && ctx.message[0] != '\0',
			  "gpu memory limit of 1 kB: status \"%s\", message \"%s\"",
			  odp_status_name(st), ctx.message);

		ctx = make_ctx(ODP_DEVICE_GPU);
		ctx.gpu_id = 999;
		st = run_path(&ctx, x, 5000, 10, ODP_METRIC_EUCLIDEAN, 50, s);
		check(st == ODP_ERR_INVALID_ARGUMENT && ctx.message[0] != '\0',
			  "gpu_id 999: status \"%s\", message \"%s\"",
			  odp_status_name(st), ctx.message);

		ctx = make_ctx(ODP_DEVICE_GPU);
		st = run_path(&ctx, x, 5000, 10, ODP_METRIC_EUCLIDEAN, 50, s);
		check(st == ODP_OK, "gpu works after the failures: %s %s",
			  odp_status_name(st), ctx.message);
		free(x);
		free(s);
	}
}

/*
 * All outlier-score tests; called by the runner after the GPU probe
 * (gpu_ok says whether to run the GPU side).
 */
void
run_outlier_tests(void)
{
	static const struct
	{
		Gen			gen;
		int64_t		rows;
		int			dims;
		int			k;
	}			cases[] = {
		{GEN_UNIFORM, 200, 3, 5},
		{GEN_UNIFORM, 513, 17, 10},		/* two dimension chunks on the GPU */
		{GEN_UNIFORM, 1000, 1, 7},		/* D = 1 */
		{GEN_UNIFORM, 300, 1000, 20},	/* D = 1000 */
		{GEN_UNIFORM, 2049, 33, 64},	/* largest k of the smallest bucket */
		{GEN_UNIFORM, 700, 5, 100},		/* second bucket */
		{GEN_UNIFORM, 600, 4, 200},		/* large-k path */
		{GEN_UNIFORM, 51, 6, 50},		/* N = k + 1 */
		{GEN_UNIFORM, 400, 8, 1},		/* k = 1 */
		{GEN_UNIFORM, 2, 3, 1},			/* smallest input */
		{GEN_DUPLICATES, 600, 4, 40},	/* 20 rows, 30 copies each */
		{GEN_TIES, 500, 2, 15},			/* many equal distances */
		{GEN_CONSTANT_COLUMNS, 400, 6, 10},
		{GEN_IDENTICAL, 300, 5, 10},	/* all distances 0 */
		{GEN_UNIFORM, 5000, 10, 50},	/* the larger case */
	};

	if (!gpu_ok)
	{
		float	   *x = make_data(GEN_UNIFORM, 100, 3);
		double		s[100];
		OdpContext	ctx = make_ctx(ODP_DEVICE_GPU);
		OdpStatus	st = run_path(&ctx, x, 100, 3, ODP_METRIC_EUCLIDEAN, 5, s);

		check(st == ODP_ERR_NO_GPU && ctx.message[0] != '\0',
			  "gpu path without a usable GPU: status \"%s\", message \"%s\"",
			  odp_status_name(st), ctx.message);
		free(x);
		printf("GPU tests skipped: %s\n", gpu_reason);
	}

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int m = 0; m < ODP_METRIC_COUNT; m++)
		{
			if (odp_metric_is_distance((OdpMetric) m))
				run_case(cases[c].gen, cases[c].rows, cases[c].dims, cases[c].k,
						 (OdpMetric) m);
		}
	/* the largest k, on its own: heavy for the reference */
	run_case(GEN_UNIFORM, 4200, 2, ODP_MAX_K, ODP_METRIC_EUCLIDEAN);

	argument_tests(ODP_DEVICE_CPU);
	cancel_test(ODP_DEVICE_CPU, 1);
	cancel_test(ODP_DEVICE_CPU, 2);
	if (gpu_ok)
	{
		argument_tests(ODP_DEVICE_GPU);
		cancel_test(ODP_DEVICE_GPU, 1);
		cancel_test(ODP_DEVICE_GPU, 2);
		gpu_special_tests();
	}
	top_n_tests();
}
