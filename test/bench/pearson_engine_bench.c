/*-------------------------------------------------------------------------
 *
 * pearson_engine_bench.c
 *	  Engine-level benchmark of the correlations (no PostgreSQL): random
 *	  walks at a fixed seed (each value the last one changed by up to 1%),
 *	  pairs over a threshold and top-k lists on the GPU, optionally the CPU
 *	  too and compared, with the phases the engine reports.  Built with
 *	  -DODP_PEARSON_TRACE (make test/bench/pearson_engine_bench_trace) the
 *	  GPU path also prints its stages, each device's part of a split call
 *	  on a line of its own.
 *
 * Usage: pearson_engine_bench [options]
 *	--series M (16384)  --len N (4096)  --threshold T (0.9)  --k K (10)
 *	--reps R (3)  --cpu (also the CPU, compared)  --threads T (16)
 *	--missing P (share of values missing, 0)  --spearman
 *	--no-pin (copy the input from pageable memory, to compare)
 *	--iid (independent uniform values instead of random walks: almost
 *	no pair reaches a threshold, the products are the work)
 *	--devices LIST (e.g. 0,1: the GPU runs split over those devices,
 *	odp_gpu.split_min_ms 0)
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/pearson_engine_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_devices.h"
#include "bench_rng.h"
#include "include/odp_pearson.h"

/* The engine's switch for page-locking inputs (gpu_runtime.cu); weak for CPU builds. */
extern int	odp_gpu_pin_inputs __attribute__((weak));

static uint64_t rng = 0x853c49e6748fea9bULL;

/* A uniform double in [0, 1). */
static double
unit(void)
{
	return bench_unit(&rng);
}

/* Pairs kept by the benchmark: only their number and the coefficients. */
typedef struct Pairs
{
	int64_t		n;
	int64_t		cap;
	int64_t    *a;
	int64_t    *b;
	double	   *r;
} Pairs;

/* Pair callback: keeps the pairs (for the comparison with the CPU). */
static bool
keep(void *arg, const int64_t *a, const int64_t *b, const double *r, int64_t count)
{
	Pairs	   *p = (Pairs *) arg;

	if (p->n + count > p->cap)
	{
		p->cap = (p->n + count) * 2;
		p->a = realloc(p->a, sizeof(int64_t) * p->cap);
		p->b = realloc(p->b, sizeof(int64_t) * p->cap);
		p->r = realloc(p->r, sizeof(double) * p->cap);
		if (!p->a || !p->b || !p->r)
			return false;
	}
	memcpy(p->a + p->n, a, sizeof(int64_t) * count);
	memcpy(p->b + p->n, b, sizeof(int64_t) * count);
	memcpy(p->r + p->n, r, sizeof(double) * count);
	p->n += count;
	return true;
}

/* --devices: the GPU runs' device list. */
static BenchDevices bench_devices;

/* A context for dev with the bench's device list. */
static OdpContext
bench_ctx(OdpDevice dev, int threads)
{
	OdpContext	ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.device = dev;
	ctx.cpu_threads = threads;
	bench_devices_apply(&bench_devices, &ctx);
	return ctx;
}

/* Runs the pairs over t on dev; prints one line; leaves the pairs in p. */
static OdpStatus
run_pairs(OdpDevice dev, int threads, const OdpPearsonProblem *prob, double t, Pairs *p)
{
	OdpContext	ctx;
	double		t0;
	int64_t		n = 0;
	OdpStatus	st;

	ctx = bench_ctx(dev, threads);
	p->n = 0;
	t0 = odp_now_ms();
	st = odp_compute_pearson_pairs(&ctx, prob, t, keep, p, &n);
	printf("%s pairs |r| >= %g: %s wall %.1f ms, transfer %.1f ms, compute %.1f ms, chunks %lld, %lld pairs%s%s\n",
		   dev == ODP_DEVICE_GPU ? "gpu" : "cpu", t, odp_status_name(st),
		   odp_now_ms() - t0, ctx.transfer_ms, ctx.compute_ms, (long long) ctx.chunks,
		   (long long) n, st == ODP_OK ? "" : ": ", st == ODP_OK ? "" : ctx.message);
	return st;
}

/* Runs the top-k lists on dev; prints one line. */
static OdpStatus
run_top(OdpDevice dev, int threads, const OdpPearsonProblem *prob, int k,
		int64_t *other, double *r)
{
	OdpContext	ctx;
	double		t0;
	OdpStatus	st;

	ctx = bench_ctx(dev, threads);
	t0 = odp_now_ms();
	st = odp_compute_pearson_top(&ctx, prob, k, ODP_PEARSON_RANK_ABS, other, r);
	printf("%s top k = %d: %s wall %.1f ms, transfer %.1f ms, compute %.1f ms, chunks %lld%s%s\n",
		   dev == ODP_DEVICE_GPU ? "gpu" : "cpu", k, odp_status_name(st),
		   odp_now_ms() - t0, ctx.transfer_ms, ctx.compute_ms, (long long) ctx.chunks,
		   st == ODP_OK ? "" : ": ", st == ODP_OK ? "" : ctx.message);
	return st;
}

int
main(int argc, char **argv)
{
	int64_t		m = 16384;
	int			len = 4096,
				k = 10,
				reps = 3,
				threads = 16;
	double		t = 0.9,
				missing = 0.0;
	bool		cpu = false,
				iid = false;
	OdpPearsonMethod method = ODP_PEARSON_METHOD_PEARSON;
	double	   *x;
	uint8_t    *miss = NULL;
	OdpMatrix64 mx;
	OdpPearsonProblem prob;
	Pairs		gp = {0},
				cp = {0};
	int64_t    *go,
			   *co;
	double	   *gr,
			   *cr;

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : "0";

		if (strcmp(a, "--series") == 0)
			m = atoll(v), i++;
		else if (strcmp(a, "--len") == 0)
			len = atoi(v), i++;
		else if (strcmp(a, "--threshold") == 0)
			t = atof(v), i++;
		else if (strcmp(a, "--k") == 0)
			k = atoi(v), i++;
		else if (strcmp(a, "--reps") == 0)
			reps = atoi(v), i++;
		else if (strcmp(a, "--threads") == 0)
			threads = atoi(v), i++;
		else if (strcmp(a, "--missing") == 0)
			missing = atof(v), i++;
		else if (strcmp(a, "--cpu") == 0)
			cpu = true;
		else if (strcmp(a, "--iid") == 0)
			iid = true;
		else if (strcmp(a, "--spearman") == 0)
			method = ODP_PEARSON_METHOD_SPEARMAN;
		else if (strcmp(a, "--no-pin") == 0 && &odp_gpu_pin_inputs != NULL)
			odp_gpu_pin_inputs = 0;
		else if (strcmp(a, "--devices") == 0)
			bench_devices_parse(&bench_devices, v), i++;
		else
		{
			fprintf(stderr, "unknown option %s\n", a);
			return 2;
		}
	}

	x = malloc(sizeof(double) * (size_t) m * len);
	if (missing > 0)
		miss = malloc((size_t) m * len);
	go = malloc(sizeof(int64_t) * (size_t) m * k);
	co = malloc(sizeof(int64_t) * (size_t) m * k);
	gr = malloc(sizeof(double) * (size_t) m * k);
	cr = malloc(sizeof(double) * (size_t) m * k);
	if (!x || !go || !co || !gr || !cr || (missing > 0 && !miss))
	{
		fprintf(stderr, "out of memory\n");
		return 2;
	}
	for (int64_t s = 0; s < m; s++)
	{
		double		level = 100.0;

		for (int i = 0; i < len; i++)
		{
			level *= 1.0 + 0.02 * (unit() - 0.5);
			x[s * len + i] = iid ? unit() : level;
			if (miss)
				miss[s * len + i] = unit() < missing;
		}
	}
	mx.data = x;
	mx.missing = miss;
	mx.rows = m;
	mx.dims = len;
	prob.x = &mx;
	prob.y = NULL;
	prob.method = method;
	prob.min_periods = 2;
	printf("%lld %s of %d values%s%s; %.1f GFLOP for the half product\n",
		   (long long) m, iid ? "independent series" : "random walks", len, miss ? ", some missing" : "",
		   method == ODP_PEARSON_METHOD_SPEARMAN ? ", spearman" : "",
		   (double) m * m * len / 1e9);

	for (int r = 0; r < reps; r++)
		if (run_pairs(ODP_DEVICE_GPU, threads, &prob, t, &gp) != ODP_OK)
			return 1;
	for (int r = 0; r < reps; r++)
		if (run_top(ODP_DEVICE_GPU, threads, &prob, k, go, gr) != ODP_OK)
			return 1;
	if (cpu)
	{
		double		diff = 0.0;
		int64_t		same_top = 0;
		bool		same = true;

		if (run_pairs(ODP_DEVICE_CPU, threads, &prob, t, &cp) != ODP_OK ||
			run_top(ODP_DEVICE_CPU, threads, &prob, k, co, cr) != ODP_OK)
			return 1;
		same = cp.n == gp.n;
		for (int64_t i = 0; same && i < cp.n; i++)
		{
			same = cp.a[i] == gp.a[i] && cp.b[i] == gp.b[i];
			diff = fmax(diff, fabs(cp.r[i] - gp.r[i]));
		}
		for (int64_t i = 0; i < m * k; i++)
			same_top += co[i] == go[i] && fabs(cr[i] - gr[i]) <= 1e-12;
		printf("gpu vs cpu: pairs %s (%lld), max |r| difference %.2e; top-k entries equal %lld of %lld\n",
			   same ? "same" : "DIFFERENT", (long long) cp.n, diff,
			   (long long) same_top, (long long) (m * k));
	}
	return 0;
}
