/*-------------------------------------------------------------------------
 *
 * knn_engine_bench.c
 *	  Engine-level benchmark of odp_compute_knn (no PostgreSQL): Gaussian
 *	  data at a fixed seed, the GPU and optionally the CPU, with the
 *	  phases the engine reports and a bit-for-bit comparison of the two.
 *
 * Usage: knn_engine_bench [options]
 *	--rows N (1000000)  --queries Q (0: self join)  --dims D (32)  --k K (10)
 *	--metric M (euclidean)  --reps R (1)  --cpu (also the CPU, compared)
 *	--threads T (16)  --device gpu|cpu (gpu)
 *	--values V	integers 0 .. V-1 instead of Gaussian values (2: 0/1 rows)
 *	--no-int	keep the GPU off its exact integer path, to compare
 *	--float64	the same values as float64 rows (OdpMatrix.data64)
 *	--devices LIST	e.g. 0,1: the GPU runs split over those devices
 *				(split_min_ms 0)
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/knn_engine_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_devices.h"
#include "bench_rng.h"
#include "include/odp_knn.h"

static uint64_t rng = 0x853c49e6748fea9bULL;

/* The GPU's integer path threshold; weak, for CPU-only builds. */
extern int64_t odp_gpu_knn_int_min_pairs __attribute__((weak));
/* The float64 filter's stage times (knn_wide_filter.c); weak likewise. */
extern double odp_knn64_filter_ms[4] __attribute__((weak));

/* A standard normal deviate (Box-Muller; u1 in (0, 1], never 0). */
static float
gauss(void)
{
	double		u1,
				u2;

	u1 = ((bench_next(&rng) >> 11) + 1.0) / 9007199254740993.0;
	u2 = bench_unit(&rng);
	return (float) (sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* --devices: the GPU runs' device list. */
static BenchDevices bench_devices;

/* Runs one computation and prints its line; returns the status. */
static OdpStatus
run(OdpDevice dev, int threads, const OdpMatrix *q, const OdpMatrix *c,
	OdpMetric metric, int k, bool self, double *dist, int64_t *index)
{
	OdpContext	ctx;
	double		t0,
				stage[4] = {0.0, 0.0, 0.0, 0.0};
	OdpStatus	st;

	memset(&ctx, 0, sizeof(ctx));
	ctx.device = dev;
	ctx.cpu_threads = threads;
	bench_devices_apply(&bench_devices, &ctx);
	if (odp_knn64_filter_ms)
		memcpy(stage, odp_knn64_filter_ms, sizeof(stage));
	t0 = odp_now_ms();
	st = odp_compute_knn(&ctx, q, c, metric, k, self, dist, index);
	if (odp_knn64_filter_ms && odp_knn64_filter_ms[1] != stage[1])
		printf("float64 filter: prepare %.1f ms, float32 k-NN %.1f ms, refine %.1f ms, exact fallback %.1f ms\n",
			   odp_knn64_filter_ms[0] - stage[0], odp_knn64_filter_ms[1] - stage[1],
			   odp_knn64_filter_ms[2] - stage[2], odp_knn64_filter_ms[3] - stage[3]);
	printf("%s: %s wall %.1f ms, transfer %.1f ms, compute %.1f ms, chunks %lld%s%s\n",
		   dev == ODP_DEVICE_GPU ? "gpu" : "cpu", odp_status_name(st),
		   odp_now_ms() - t0, ctx.transfer_ms, ctx.compute_ms,
		   (long long) ctx.chunks, st == ODP_OK ? "" : ": ", st == ODP_OK ? "" : ctx.message);
	return st;
}

int
main(int argc, char **argv)
{
	int64_t		rows = 1000000,
				queries = 0;
	int			dims = 32,
				k = 10,
				reps = 1,
				threads = 16,
				values = 0;
	bool		cpu = false;
	OdpDevice	dev = ODP_DEVICE_GPU;
	OdpMetric	metric = ODP_METRIC_EUCLIDEAN;
	OdpMatrix	c = {0},
				q = {0};
	bool		wide = false;
	float	   *cd,
			   *qd;
	double	   *cd64 = NULL,
			   *qd64 = NULL,
			   *d1,
			   *d2;
	int64_t    *i1,
			   *i2;
	int64_t		nq;

	for (int a = 1; a < argc; a++)
	{
		const char *v = a + 1 < argc ? argv[a + 1] : "";

		if (strcmp(argv[a], "--rows") == 0)
			rows = atoll(v), a++;
		else if (strcmp(argv[a], "--queries") == 0)
			queries = atoll(v), a++;
		else if (strcmp(argv[a], "--dims") == 0)
			dims = atoi(v), a++;
		else if (strcmp(argv[a], "--k") == 0)
			k = atoi(v), a++;
		else if (strcmp(argv[a], "--reps") == 0)
			reps = atoi(v), a++;
		else if (strcmp(argv[a], "--threads") == 0)
			threads = atoi(v), a++;
		else if (strcmp(argv[a], "--metric") == 0)
		{
			if (!odp_metric_from_name(v, &metric))
			{
				fprintf(stderr, "unknown metric %s\n", v);
				return 2;
			}
			a++;
		}
		else if (strcmp(argv[a], "--device") == 0)
			dev = strcmp(v, "cpu") == 0 ? ODP_DEVICE_CPU : ODP_DEVICE_GPU, a++;
		else if (strcmp(argv[a], "--cpu") == 0)
			cpu = true;
		else if (strcmp(argv[a], "--values") == 0)
			values = atoi(v), a++;
		else if (strcmp(argv[a], "--float64") == 0)
			wide = true;
		else if (strcmp(argv[a], "--devices") == 0)
			bench_devices_parse(&bench_devices, v), a++;
		else if (strcmp(argv[a], "--no-int") == 0)
		{
			if (&odp_gpu_knn_int_min_pairs != NULL)
				odp_gpu_knn_int_min_pairs = INT64_MAX;
		}
		else
		{
			fprintf(stderr, "unknown option %s\n", argv[a]);
			return 2;
		}
	}
	nq = queries > 0 ? queries : rows;
	cd = malloc(sizeof(float) * (size_t) rows * dims);
	qd = queries > 0 ? malloc(sizeof(float) * (size_t) queries * dims) : cd;
	d1 = malloc(sizeof(double) * (size_t) nq * k);
	d2 = malloc(sizeof(double) * (size_t) nq * k);
	i1 = malloc(sizeof(int64_t) * (size_t) nq * k);
	i2 = malloc(sizeof(int64_t) * (size_t) nq * k);
	if (!cd || !qd || !d1 || !d2 || !i1 || !i2)
	{
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < (size_t) rows * dims; i++)
		cd[i] = values > 0 ? (float) (bench_next(&rng) % (uint64_t) values) : gauss();
	if (queries > 0)
		for (size_t i = 0; i < (size_t) queries * dims; i++)
			qd[i] = values > 0 ? (float) (bench_next(&rng) % (uint64_t) values) : gauss();
	c.data = cd;
	c.rows = rows;
	c.dims = dims;
	q.data = qd;
	q.rows = nq;
	q.dims = dims;
	if (wide)
	{
		/* the same values, widened: float64 rows */
		cd64 = malloc(sizeof(double) * (size_t) rows * dims);
		qd64 = queries > 0 ? malloc(sizeof(double) * (size_t) queries * dims) : cd64;
		if (!cd64 || !qd64)
		{
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < (size_t) rows * dims; i++)
			cd64[i] = cd[i];
		for (size_t i = 0; queries > 0 && i < (size_t) queries * dims; i++)
			qd64[i] = qd[i];
		c.data = NULL;
		c.data64 = cd64;
		q.data = NULL;
		q.data64 = qd64;
	}
	printf("knn_engine_bench: %lld queries%s x %lld rows x %d dims, k = %d, %s, %s\n",
		   (long long) nq, queries > 0 ? "" : " (self join)", (long long) rows, dims, k,
		   odp_metric_name(metric), wide ? "float64" : "float32");
	for (int r = 0; r < reps; r++)
		if (run(dev, threads, &q, &c, metric, k, queries == 0, d1, i1) != ODP_OK)
			return 1;
	if (cpu)
	{
		int64_t		diff = 0;

		if (run(ODP_DEVICE_CPU, threads, &q, &c, metric, k, queries == 0, d2, i2) != ODP_OK)
			return 1;
		for (int64_t t = 0; t < nq * k; t++)
			if (i1[t] != i2[t] || memcmp(&d1[t], &d2[t], sizeof(double)) != 0)
				diff++;
		printf("compare: %lld of %lld entries differ between the paths\n",
			   (long long) diff, (long long) (nq * k));
		if (diff != 0)
			return 1;
	}
	return 0;
}
