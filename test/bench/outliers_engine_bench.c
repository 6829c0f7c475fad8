/*-------------------------------------------------------------------------
 *
 * outliers_engine_bench.c
 *	  Benchmark and exactness check of the outliers on the engine (no
 *	  PostgreSQL): generated data sets, SolvingSet top-n outliers against
 *	  brute force and GPU against CPU; or (--scores) every row's score.
 *
 * Usage: outliers_engine_bench DATASET [options]
 *	DATASET: poker (random 5-card hands, UCI Poker encoding: S1,C1,..,S5,C5),
 *			 g2d (2-d standard Gaussian), unif10 (10-d uniform [0,1)),
 *			 unif (uniform [0,1) in --dims D dimensions, 10 by default),
 *			 binary (0/1 attributes, each 1 with probability 1/2, in --dims D
 *			 dimensions; CelebA has 39)
 *	--rows N (1000000)  --k K (50)  --n N (10)  --reps R (1)  --dims D
 *	--metric M	euclidean (default), sqeuclidean, manhattan, chebyshev, cosine
 *	--bf		also run GPU brute force and compare rows, order and bits
 *	--auto		also run the GPU's auto (the method it picks, printed) and
 *				compare rows, order and bits
 *	--cpu		also run CPU SolvingSet and compare result and solving set
 *				(with --scores: the CPU path's scores, compared)
 *	--scores	time odp_compute_outlier_scores (every row's score, brute
 *				force) instead of SolvingSet
 *	--split S	GPU exact-step candidate split (-1 auto, 1 off)
 *	--compact F	GPU update compaction at active share F (0 off)
 *	--threads T	CPU threads (16)
 *	--batch M	SolvingSet batch size (default: the engine's rule)
 *	--fused-cap C	GPU single-pass buffer (-1 auto, 0 two passes)
 *	--device D	gpu (default) or cpu for the SolvingSet runs
 *	--no-int	keep the GPU off its exact integer path (the float paths
 *				run), to compare
 *	--float64	the same values as float64 rows (OdpMatrix.data64)
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/outliers_engine_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_outliers.h"
#include "outliers/solvingset_internal.h"

/*
 * Tuning knobs of kernels/outliers/solvingset_gpu.cu; weak, so that a CPU-only
 * build (WITH_CUDA=no), which lacks them, still links.
 */
extern int	odp_gpu_ss_split __attribute__((weak));
extern double odp_gpu_ss_compact __attribute__((weak));

extern int	odp_gpu_ss_fused_cap __attribute__((weak));
extern int64_t odp_gpu_knn_int_min_pairs __attribute__((weak));
extern int64_t odp_gpu_ss_fused_batches __attribute__((weak));
extern int64_t odp_gpu_ss_overflowed __attribute__((weak));
extern double odp_knn64_filter_ms[4] __attribute__((weak));

/* SolvingSet batch size override of kernels/outliers/solvingset.c (0: the rule). */
extern int64_t odp_ss_test_batch_size;

/* One result of odp_compute_top_outliers, with what it cost. */
typedef struct Run
{
	int64_t		order[64];
	double		scores[64];
	int64_t		count;
	int64_t    *ss;
	double	   *ss_scores;
	OdpTopOutliersStats st;
	double		wall_ms;
	double		transfer_ms;
	double		compute_ms;
} Run;

static OdpMetric metric = ODP_METRIC_EUCLIDEAN;

static uint64_t rng_state = UINT64_C(0x0123456789abcdef);

/* splitmix64: the harness's fixed-seed generator. */
static uint64_t
next_u64(void)
{
	uint64_t	z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform double in [0, 1). */
static double
next_unit(void)
{
	return (double) (next_u64() >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * Fills data (rows x dims) with the named data set; returns dims or -1.
 * unif_dims: the dimensions of "unif".
 */
static int
generate(const char *name, int64_t rows, int unif_dims, float **data)
{
	int			dims;
	float	   *x;

	if (strcmp(name, "poker") == 0)
		dims = 10;
	else if (strcmp(name, "g2d") == 0)
		dims = 2;
	else if (strcmp(name, "unif10") == 0)
		dims = 10;
	else if (strcmp(name, "unif") == 0 && unif_dims > 0)
		dims = unif_dims;
	else if (strcmp(name, "binary") == 0 && unif_dims > 0)
		dims = unif_dims;
	else
		return -1;
	x = malloc(sizeof(float) * (size_t) rows * dims);
	if (x == NULL)
		return -1;
	for (int64_t r = 0; r < rows; r++)
	{
		float	   *row = x + r * dims;

		if (name[0] == 'p')
		{
			/* 5 distinct cards of 52, in dealt order: suit 1-4, rank 1-13 */
			int			cards[5];

			for (int c = 0; c < 5; c++)
			{
				bool		dup;

				do
				{
					cards[c] = (int) (next_u64() % 52);
					dup = false;
					for (int e = 0; e < c; e++)
						dup |= cards[e] == cards[c];
				} while (dup);
				row[2 * c] = (float) (cards[c] / 13 + 1);
				row[2 * c + 1] = (float) (cards[c] % 13 + 1);
			}
		}
		else if (name[0] == 'g')
		{
			/* Box-Muller */
			double		u = next_unit();
			double		v = next_unit();
			double		rad = sqrt(-2.0 * log(1.0 - u));

			row[0] = (float) (rad * cos(6.283185307179586 * v));
			row[1] = (float) (rad * sin(6.283185307179586 * v));
		}
		else if (name[0] == 'b')
		{
			for (int d = 0; d < dims; d++)
				row[d] = (float) (next_u64() >> 63);
		}
		else
		{
			for (int d = 0; d < dims; d++)
				row[d] = (float) next_unit();
		}
	}
	*data = x;
	return dims;
}

/* Runs one top-n computation; exits on failure. */
static void
run_top(OdpDevice device, int threads, const OdpMatrix *m, int k, int64_t n,
		OdpOutlierMethod method, bool want_ss, Run *out)
{
	OdpContext	ctx;
	OdpStatus	st;
	double		t0;

	memset(&ctx, 0, sizeof(ctx));
	ctx.device = device;
	ctx.cpu_threads = threads;
	out->ss = NULL;
	out->ss_scores = NULL;
	if (want_ss)
	{
		out->ss = malloc(sizeof(int64_t) * (size_t) m->rows);
		out->ss_scores = malloc(sizeof(double) * (size_t) m->rows);
	}
	memset(&out->st, 0, sizeof(out->st));
	t0 = odp_now_ms();
	st = odp_compute_top_outliers(&ctx, m, metric, k, n, method, 0,
								  out->order, out->scores, &out->count,
								  out->ss, out->ss_scores, &out->st);
	out->wall_ms = odp_now_ms() - t0;
	out->transfer_ms = ctx.transfer_ms;
	out->compute_ms = ctx.compute_ms;
	if (st != ODP_OK)
	{
		fprintf(stderr, "odp_compute_top_outliers failed: %s: %s\n",
				odp_status_name(st), ctx.message);
		exit(1);
	}
}

/* Prints one run's line. */
static void
report(const char *label, const Run *r, int64_t rows)
{
	printf("%-10s %9.1f ms (transfer %.1f, compute %.1f)  iters %d  m %d  |S| %lld  dist %lld (%.4f%% of N^2)\n",
		   label, r->wall_ms, r->transfer_ms, r->compute_ms, r->st.iterations,
		   r->st.batch_size, (long long) r->st.solving_set_size,
		   (long long) r->st.distances,
		   100.0 * (double) r->st.distances / ((double) rows * (double) rows));
}

/* Compares two results: rows, order, score bits.  Returns true if equal. */
static bool
same_top(const Run *a, const Run *b)
{
	if (a->count != b->count)
		return false;
	for (int64_t i = 0; i < a->count; i++)
		if (a->order[i] != b->order[i] ||
			memcmp(&a->scores[i], &b->scores[i], sizeof(double)) != 0)
			return false;
	return true;
}

/*
 * --scores: times odp_compute_outlier_scores on device, reps times; with
 * cpu, runs the CPU path once more and compares its scores with the last
 * run's (the largest relative difference, the rows bit-identical, the top
 * n).  Returns the failures.
 */
static int
run_scores(OdpDevice device, int threads, const OdpMatrix *m, int k, int64_t n,
		   int reps, bool cpu)
{
	double	   *s[2];
	int64_t		top[2][64];
	int64_t		count[2] = {0, 0};
	int			failures = 0;

	s[0] = malloc(sizeof(double) * (size_t) m->rows);
	s[1] = malloc(sizeof(double) * (size_t) m->rows);
	for (int r = 0; r < reps + (cpu ? 1 : 0) && failures == 0; r++)
	{
		OdpContext	ctx;
		OdpStatus	st;
		double		t0 = odp_now_ms(),
					stage[4] = {0.0, 0.0, 0.0, 0.0};

		memset(&ctx, 0, sizeof(ctx));
		ctx.device = r < reps ? device : ODP_DEVICE_CPU;
		ctx.cpu_threads = threads;
		if (odp_knn64_filter_ms)
			memcpy(stage, odp_knn64_filter_ms, sizeof(stage));
		st = odp_compute_outlier_scores(&ctx, m, metric, k, s[r < reps ? 0 : 1]);
		if (odp_knn64_filter_ms && odp_knn64_filter_ms[1] != stage[1])
			printf("float64 filter: prepare %.1f ms, float32 k-NN %.1f ms, refine %.1f ms, exact fallback %.1f ms\n",
				   odp_knn64_filter_ms[0] - stage[0], odp_knn64_filter_ms[1] - stage[1],
				   odp_knn64_filter_ms[2] - stage[2], odp_knn64_filter_ms[3] - stage[3]);
		if (st != ODP_OK)
		{
			fprintf(stderr, "odp_compute_outlier_scores failed: %s: %s\n",
					odp_status_name(st), ctx.message);
			failures++;
		}
		else
			printf("%s-scores %9.1f ms (transfer %.1f, compute %.1f)  chunks %lld\n",
				   ctx.device == ODP_DEVICE_GPU ? "gpu" : "cpu", odp_now_ms() - t0,
				   ctx.transfer_ms, ctx.compute_ms, (long long) ctx.chunks);
	}
	if (cpu && failures == 0)
	{
		double		worst = 0.0;
		int64_t		same = 0;
		bool		ok;

		for (int t = 0; t < 2; t++)
			count[t] = odp_top_n(s[t], NULL, m->rows, n, top[t]);
		for (int64_t i = 0; i < m->rows; i++)
		{
			double		den = fmax(fabs(s[0][i]), fabs(s[1][i]));
			double		rel = den > 0.0 ? fabs(s[0][i] - s[1][i]) / den : 0.0;

			same += s[0][i] == s[1][i];
			worst = isnan(rel) || rel > worst ? rel : worst;
		}
		ok = worst <= 1e-5 && count[0] == count[1] &&
			memcmp(top[0], top[1], sizeof(int64_t) * (size_t) count[0]) == 0;
		printf("CHECK%s %s-scores == cpu-scores: max rel diff %.3g, %lld/%lld bit-identical, top %lld %s\n",
			   ok ? "" : " FAILED", device == ODP_DEVICE_GPU ? "gpu" : "cpu", worst,
			   (long long) same, (long long) m->rows, (long long) count[0],
			   ok ? "same" : "DIFFERENT");
		failures += ok ? 0 : 1;
	}
	free(s[0]);
	free(s[1]);
	return failures;
}

/* Benchmarks one data set as the options say. */
int
main(int argc, char **argv)
{
	const char *name;
	int64_t		rows = 1000000;
	int			k = 50;
	int64_t		n = 10;
	int			reps = 1;
	int			threads = 16;
	bool		bf = false;
	bool		autorun = false;
	bool		cpu = false;
	bool		scores = false;
	int			unif_dims = 10;
	OdpDevice	device = ODP_DEVICE_GPU;
	float	   *data = NULL;
	double	   *data64 = NULL;
	bool		wide = false;
	int			dims;
	OdpMatrix	m = {0};
	Run			gs;
	Run			other;
	int			failures = 0;

	if (argc < 2)
	{
		fprintf(stderr, "usage: outliers_engine_bench poker|g2d|unif10|unif|binary [--rows N] [--dims D] [--k K] [--n N] [--reps R] [--bf] [--auto] [--cpu] [--scores] [--split S] [--threads T] [--batch M] [--device cpu|gpu]\n");
		return 2;
	}
	name = argv[1];
	for (int i = 2; i < argc; i++)
	{
		if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
			rows = atoll(argv[++i]);
		else if (strcmp(argv[i], "--k") == 0 && i + 1 < argc)
			k = atoi(argv[++i]);
		else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
			n = atoll(argv[++i]);
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--dims") == 0 && i + 1 < argc)
			unif_dims = atoi(argv[++i]);
		else if (strcmp(argv[i], "--split") == 0 && i + 1 < argc)
		{
			i++;
			if (&odp_gpu_ss_split != NULL)
				odp_gpu_ss_split = atoi(argv[i]);
		}
		else if (strcmp(argv[i], "--compact") == 0 && i + 1 < argc)
		{
			i++;
			if (&odp_gpu_ss_compact != NULL)
				odp_gpu_ss_compact = atof(argv[i]);
		}
		else if (strcmp(argv[i], "--fused-cap") == 0 && i + 1 < argc)
		{
			i++;
			if (&odp_gpu_ss_fused_cap != NULL)
				odp_gpu_ss_fused_cap = atoi(argv[i]);
		}
		else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
			odp_ss_test_batch_size = atoll(argv[++i]);
		else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
		{
			i++;
			device = strcmp(argv[i], "cpu") == 0 ? ODP_DEVICE_CPU : ODP_DEVICE_GPU;
		}
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--metric") == 0 && i + 1 < argc)
		{
			if (!odp_metric_from_name(argv[++i], &metric))
			{
				fprintf(stderr, "unknown metric %s\n", argv[i]);
				return 2;
			}
		}
		else if (strcmp(argv[i], "--bf") == 0)
			bf = true;
		else if (strcmp(argv[i], "--auto") == 0)
			autorun = true;
		else if (strcmp(argv[i], "--no-int") == 0)
		{
			if (&odp_gpu_knn_int_min_pairs != NULL)
				odp_gpu_knn_int_min_pairs = INT64_MAX;
		}
		else if (strcmp(argv[i], "--cpu") == 0)
			cpu = true;
		else if (strcmp(argv[i], "--scores") == 0)
			scores = true;
		else if (strcmp(argv[i], "--float64") == 0)
			wide = true;
		else
		{
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (n > 64)
		n = 64;
	dims = generate(name, rows, unif_dims, &data);
	if (dims < 0)
	{
		fprintf(stderr, "unknown data set %s\n", name);
		return 2;
	}
	m.data = data;
	m.rows = rows;
	m.dims = dims;
	if (wide)
	{
		/* the same values, widened: float64 rows */
		data64 = malloc(sizeof(double) * (size_t) rows * dims);
		if (data64 == NULL)
		{
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < (size_t) rows * dims; i++)
			data64[i] = data[i];
		m.data = NULL;
		m.data64 = data64;
		printf("float64 rows\n");
	}
	printf("== %s (%s): %lld rows x %d dims, k %d, n %lld, split %d, compact %.2f\n", name,
		   odp_metric_name(metric), (long long) rows, dims, k, (long long) n,
		   &odp_gpu_ss_split != NULL ? odp_gpu_ss_split : 0,
		   &odp_gpu_ss_compact != NULL ? odp_gpu_ss_compact : 0.0);

	/* warm the CUDA context so that no timing includes its creation */
	if (device == ODP_DEVICE_GPU)
	{
		OdpMatrix	w = m;

		w.rows = rows < 2000 ? rows : 2000;
		run_top(ODP_DEVICE_GPU, threads, &w, k < (int) w.rows ? k : 1, 1,
				ODP_METHOD_BRUTEFORCE, false, &other);
	}
	if (scores)
	{
		failures = run_scores(device, threads, &m, k, n, reps, cpu);
		free(data);
		return failures == 0 ? 0 : 1;
	}

	for (int r = 0; r < reps; r++)
	{
		run_top(device, threads, &m, k, n, ODP_METHOD_SOLVINGSET,
				cpu && r == 0, &gs);
		report(device == ODP_DEVICE_GPU ? "gpu-ss" : "cpu-ss", &gs, rows);
		if (&odp_gpu_ss_fused_batches != NULL)
			printf("           single-pass batches so far %lld, overflowed candidates %lld\n",
				   (long long) odp_gpu_ss_fused_batches, (long long) odp_gpu_ss_overflowed);
		if (r + 1 < reps)
		{
			free(gs.ss);
			free(gs.ss_scores);
		}
	}
	for (int64_t i = 0; i < gs.count; i++)
		printf("  top %2lld: row %8lld score %.17g\n", (long long) i + 1,
			   (long long) gs.order[i], gs.scores[i]);

	if (bf)
	{
		run_top(ODP_DEVICE_GPU, threads, &m, k, n, ODP_METHOD_BRUTEFORCE,
				false, &other);
		report("gpu-bf", &other, rows);
		if (same_top(&gs, &other))
			printf("CHECK gpu-ss == gpu-bf: rows, order, score bits equal\n");
		else
		{
			printf("CHECK FAILED gpu-ss != gpu-bf\n");
			for (int64_t i = 0; i < other.count; i++)
				printf("  bf %2lld: row %8lld score %.17g\n", (long long) i + 1,
					   (long long) other.order[i], other.scores[i]);
			failures++;
		}
	}
	if (autorun)
	{
		run_top(ODP_DEVICE_GPU, threads, &m, k, n, ODP_METHOD_AUTO, false, &other);
		report(other.st.method == ODP_METHOD_BRUTEFORCE ? "gpu-auto-bf" : "gpu-auto-ss",
			   &other, rows);
		if (same_top(&gs, &other))
			printf("CHECK gpu-ss == gpu-auto: rows, order, score bits equal\n");
		else
		{
			printf("CHECK FAILED gpu-ss != gpu-auto\n");
			failures++;
		}
	}
	if (cpu)
	{
		bool		ss_equal;

		/* gs here is the last repetition; its solving set was kept only for r == 0 */
		if (reps > 1)
			run_top(ODP_DEVICE_GPU, threads, &m, k, n, ODP_METHOD_SOLVINGSET,
					true, &gs);
		run_top(ODP_DEVICE_CPU, threads, &m, k, n, ODP_METHOD_SOLVINGSET,
				true, &other);
		report("cpu-ss", &other, rows);
		ss_equal = gs.st.solving_set_size == other.st.solving_set_size &&
			memcmp(gs.ss, other.ss, sizeof(int64_t) * (size_t) gs.st.solving_set_size) == 0 &&
			memcmp(gs.ss_scores, other.ss_scores,
				   sizeof(double) * (size_t) gs.st.solving_set_size) == 0;
		if (same_top(&gs, &other) && ss_equal)
			printf("CHECK gpu-ss == cpu-ss: top-n and solving set (rows, score bits) equal\n");
		else
		{
			printf("CHECK FAILED gpu-ss != cpu-ss (top equal %d, solving set equal %d)\n",
				   same_top(&gs, &other), ss_equal);
			failures++;
		}
	}
	free(data);
	return failures == 0 ? 0 : 1;
}
