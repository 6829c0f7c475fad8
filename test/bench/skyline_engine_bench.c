/*-------------------------------------------------------------------------
 *
 * skyline_engine_bench.c
 *	  Skyline workloads and engine-level timings (no PostgreSQL).
 *
 * skyline_engine_bench gen KIND N D SEED FILE
 *	  Writes N x D float64 values (row-major, native byte order) of the
 *	  standard synthetic workloads of Börzsönyi, Kossmann and Stocker, "The
 *	  Skyline Operator" (ICDE 2001), as their generator makes them:
 *	  independent (uniform), correlated (a point on the diagonal, moved
 *	  along it) or anti (anti-correlated: a point near the plane sum = D/2,
 *	  moved within it).  The benchmark scripts load the file into
 *	  PostgreSQL and hand it to the peers, so every program sees the same
 *	  rows.
 *
 * skyline_engine_bench run FILE N D [--band K] [--max] [--cpu|--gpu|--both]
 *				[--threads T] [--reps R]
 *	  Runs odp_compute_skyline on the file (--max: maximise every feature,
 *	  for files whose larger values are better), prints one line per path:
 *	  members, tests, and the best of R runs' compute and transfer times;
 *	  --both also checks that the two paths agree row by row.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/skyline_engine_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "include/odp_skyline.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* A uniform double in [0, 1). */
static double
unit(void)
{
	return bench_unit(&rng);
}

/* The generator's helpers: uniform, peaked (mean of dim uniforms), normal. */
static double
random_equal(double min, double max)
{
	return unit() * (max - min) + min;
}

static double
random_peak(double min, double max, int dim)
{
	double		sum = 0.0;

	for (int d = 0; d < dim; d++)
		sum += unit();
	return sum / dim * (max - min) + min;
}

static double
random_normal(double med, double var)
{
	return random_peak(med - var, med + var, 12);
}

static int
in_unit_cube(const double *x, int dim)
{
	for (int d = 0; d < dim; d++)
		if (x[d] < 0.0 || x[d] > 1.0)
			return 0;
	return 1;
}

/* One row of the workload kind into x. */
static void
generate_row(const char *kind, double *x, int dim)
{
	if (strcmp(kind, "independent") == 0)
	{
		for (int d = 0; d < dim; d++)
			x[d] = unit();
		return;
	}
	do
	{
		int			anti = strcmp(kind, "anti") == 0;
		double		v = anti ? random_normal(0.5, 0.25) : random_peak(0.0, 1.0, dim);
		double		l = v <= 0.5 ? v : 1.0 - v;

		for (int d = 0; d < dim; d++)
			x[d] = v;
		for (int d = 0; d < dim; d++)
		{
			double		h = anti ? random_equal(-l, l) : random_normal(0.0, l);

			x[d] += h;
			x[(d + 1) % dim] -= h;
		}
	} while (!in_unit_cube(x, dim));
}

static int
gen_main(int argc, char **argv)
{
	const char *kind = argv[2];
	long long	n = atoll(argv[3]);
	int			dim = atoi(argv[4]);
	FILE	   *f;
	double	   *row;

	if (strcmp(kind, "independent") != 0 && strcmp(kind, "correlated") != 0 &&
		strcmp(kind, "anti") != 0)
	{
		fprintf(stderr, "kind must be independent, correlated or anti\n");
		return 2;
	}
	rng ^= (uint64_t) atoll(argv[5]) * 0x2545f4914f6cdd1dULL;
	f = fopen(argv[6], "wb");
	row = malloc(sizeof(double) * dim);
	if (f == NULL || row == NULL || n < 1 || dim < 1)
	{
		fprintf(stderr, "cannot write %s\n", argv[6]);
		return 1;
	}
	(void) argc;
	for (long long i = 0; i < n; i++)
	{
		generate_row(kind, row, dim);
		if (fwrite(row, sizeof(double), dim, f) != (size_t) dim)
			return 1;
	}
	free(row);
	return fclose(f) == 0 ? 0 : 1;
}

/* Runs one path reps times; keeps the last result in out. */
static int
run_path(OdpDevice dev, const OdpSkylineProblem *p, int threads, int reps,
		 int32_t *out)
{
	double		best = 1e300,
				best_transfer = 0.0,
				best_presort = 0.0,
				best_loop = 0.0,
				best_total = 0.0;
	OdpSkylineStats st;

	memset(&st, 0, sizeof(st));
	for (int r = 0; r < reps; r++)
	{
		OdpContext	ctx;
		OdpStatus	s;
		double		t0 = odp_now_ms();

		memset(&ctx, 0, sizeof(ctx));
		ctx.device = dev;
		ctx.cpu_threads = threads;
		s = odp_compute_skyline(&ctx, p, out, &st);
		if (s != ODP_OK)
		{
			fprintf(stderr, "%s: %s\n", odp_status_name(s), ctx.message);
			return 1;
		}
		t0 = odp_now_ms() - t0;
		if (ctx.compute_ms < best)
		{
			best = ctx.compute_ms;
			best_transfer = ctx.transfer_ms;
			best_presort = st.presort_ms;
			best_loop = st.loop_ms;
			best_total = t0;
		}
	}
	printf("path=%s rows=%lld dims=%d band=%d members=%lld pair_tests=%lld full_tests=%lld "
		   "blocks=%lld compute_ms=%.2f presort_ms=%.2f loop_ms=%.2f transfer_ms=%.2f "
		   "call_ms=%.2f threads=%d\n",
		   dev == ODP_DEVICE_GPU ? "gpu" : "cpu", (long long) p->points->rows,
		   p->points->dims, p->band, (long long) st.members, (long long) st.pair_tests,
		   (long long) st.full_tests, (long long) st.blocks, best, best_presort, best_loop,
		   best_transfer, best_total,
		   dev == ODP_DEVICE_GPU ? 0 : threads);
	return 0;
}

static int
run_main(int argc, char **argv)
{
	long long	n = atoll(argv[3]);
	int			dim = atoi(argv[4]);
	int			band = 1,
				threads = 16,
				reps = 3,
				cpu = 0,
				gpu = 1,
				max = 0;
	double	   *x = malloc(sizeof(double) * n * dim);
	uint8_t    *maximize = malloc(dim);
	int32_t    *a = malloc(sizeof(int32_t) * n);
	int32_t    *b = malloc(sizeof(int32_t) * n);
	FILE	   *f = fopen(argv[2], "rb");
	OdpMatrix64 m = {x, NULL, n, dim};
	OdpSkylineProblem p = {&m, NULL, 1};

	for (int i = 5; i < argc; i++)
	{
		if (strcmp(argv[i], "--band") == 0 && i + 1 < argc)
			band = atoi(argv[++i]);
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cpu") == 0)
			cpu = 1, gpu = 0;
		else if (strcmp(argv[i], "--gpu") == 0)
			cpu = 0, gpu = 1;
		else if (strcmp(argv[i], "--both") == 0)
			cpu = gpu = 1;
		else if (strcmp(argv[i], "--max") == 0)
			max = 1;
	}
	if (f == NULL || x == NULL || a == NULL || b == NULL || maximize == NULL ||
		fread(x, sizeof(double), (size_t) n * dim, f) != (size_t) n * dim)
	{
		fprintf(stderr, "cannot read %lld x %d values from %s\n", n, dim, argv[2]);
		return 1;
	}
	fclose(f);
	memset(maximize, max, dim);
	p.maximize = max ? maximize : NULL;
	p.band = band;
	if (gpu && run_path(ODP_DEVICE_GPU, &p, threads, reps, a) != 0)
		return 1;
	if (cpu && run_path(ODP_DEVICE_CPU, &p, threads, gpu ? 1 : reps, b) != 0)
		return 1;
	if (cpu && gpu)
	{
		long long	diff = 0;

		for (long long i = 0; i < n; i++)
			diff += a[i] != b[i];
		printf("gpu_vs_cpu rows_differing=%lld\n", diff);
		return diff == 0 ? 0 : 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "gen") == 0)
		return gen_main(argc, argv);
	if (argc >= 5 && strcmp(argv[1], "run") == 0)
		return run_main(argc, argv);
	fprintf(stderr, "usage: skyline_engine_bench gen KIND N D SEED FILE | run FILE N D [options]\n");
	return 2;
}
