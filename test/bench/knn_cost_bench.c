/*-------------------------------------------------------------------------
 *
 * knn_cost_bench.c
 *	  Checks the k-NN cost model (odp_cost.h) against both paths' measured
 *	  times over a grid of shapes (no PostgreSQL): candidates 10^3 .. 10^7,
 *	  dimensions 2 .. 1,024, queries 1 .. 10^5, the candidates copied over
 *	  the bus or already on the GPU (a cached table's copy).  For each
 *	  shape it prints both paths' times, the model's choice and how much
 *	  slower the choice was than the faster path; then the worst and how
 *	  many shapes exceed 1.2x.
 *
 * Times are the engine calls' wall times (odp_compute_knn, k = 10,
 * sqeuclidean, brute force: the spatial path is off), best of two, from
 * page-locked host memory as the service's staging area is.  Where a
 * shape's distances would take long, a path is timed at two smaller
 * query counts and its time extended linearly in the queries (both paths
 * are linear in them past a few tiles); such rows say so.  The model is
 * timed first on this host (odp_knn_cost_calibrate).
 *
 * Usage: knn_cost_bench [--threads T (16)] [--max-values V (1.5e9)]
 *	[--cpu-terms N (4e9)] [--gpu-terms N (2e13)] [--quick]
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/knn_cost_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "include/odp_cost.h"
#include "include/odp_knn.h"
#include "include/odp_resident.h"

#define K 10
#define TAG 0x5eedull

static int	threads = 16;
static double cpu_terms = 4e9;
static double gpu_terms = 2e13;

/* The best of two calls' wall time, ms; -1 on failure. */
static double
time_call(OdpDevice dev, const float *q, int64_t nq, const float *c, int64_t nc,
		  int dims, const OdpResidentArray *res, double *dist, int64_t *index)
{
	double		best = -1;

	for (int rep = 0; rep < 2; rep++)
	{
		OdpContext	ctx;
		OdpMatrix	qm = {0},
					cm = {0};
		double		t0;

		memset(&ctx, 0, sizeof(ctx));
		ctx.device = dev;
		ctx.cpu_threads = threads;
		ctx.spatial = ODP_SPATIAL_OFF;
		ctx.resident = res;
		ctx.nresident = res ? 1 : 0;
		qm.data = q;
		qm.rows = nq;
		qm.dims = dims;
		cm.data = c;
		cm.rows = nc;
		cm.dims = dims;
		t0 = odp_now_ms();
		if (odp_compute_knn(&ctx, &qm, &cm, ODP_METRIC_SQEUCLIDEAN, K, false, dist,
							index) != ODP_OK)
		{
			fprintf(stderr, "call failed: %s\n", ctx.message);
			return -1;
		}
		t0 = odp_now_ms() - t0;
		if (best < 0 || t0 < best)
			best = t0;
	}
	return best;
}

/*
 * A path's time for nq queries: measured, or where nq x rows x dims
 * passes budget, at two smaller counts and extended (*extended set).
 */
static double
time_path(OdpDevice dev, double budget, const float *q, int64_t nq, const float *c,
		  int64_t nc, int dims, const OdpResidentArray *res, double *dist, int64_t *index,
		  bool *extended)
{
	double		per = (double) nc * dims;
	int64_t		q2 = (int64_t) (budget / per),
				q1;
	double		t1,
				t2;

	*extended = false;
	if (q2 >= nq)
		return time_call(dev, q, nq, c, nc, dims, res, dist, index);
	/* whole blocks: the CPU's of 16 queries, the GPU's tiles of 64 */
	q2 = dev == ODP_DEVICE_CPU ? q2 / 16 * 16 : q2 / 64 * 64;
	if (q2 < (dev == ODP_DEVICE_CPU ? 32 : 128))
		q2 = dev == ODP_DEVICE_CPU ? 32 : 128;
	if (q2 >= nq)
		return time_call(dev, q, nq, c, nc, dims, res, dist, index);
	q1 = q2 / 2;
	t1 = time_call(dev, q, q1, c, nc, dims, res, dist, index);
	t2 = time_call(dev, q, q2, c, nc, dims, res, dist, index);
	if (t1 < 0 || t2 < 0)
		return -1;
	*extended = true;
	return t2 + (double) (nq - q2) * (t2 - t1) / (double) (q2 - q1);
}

int
main(int argc, char **argv)
{
	static const int64_t rows_grid[] = {1000, 10000, 100000, 1000000, 10000000};
	static const int dims_grid[] = {2, 16, 128, 1024};
	static const int64_t q_grid[] = {1, 10, 100, 1000, 10000, 100000};
	double		max_values = 1.5e9;
	bool		quick = false;
	size_t		cvalues,
				qvalues;
	float	   *c,
			   *q;
	double	   *dist;
	int64_t    *index;
	uint64_t	rng = 0x2545F4914F6CDD1Dull;
	OdpKnnCostModel model;
	OdpContext	ctx;
	double		worst = 0;
	int			over = 0,
				shapes = 0;

	for (int a = 1; a < argc; a++)
	{
		if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
			threads = atoi(argv[++a]);
		else if (strcmp(argv[a], "--max-values") == 0 && a + 1 < argc)
			max_values = atof(argv[++a]);
		else if (strcmp(argv[a], "--cpu-terms") == 0 && a + 1 < argc)
			cpu_terms = atof(argv[++a]);
		else if (strcmp(argv[a], "--gpu-terms") == 0 && a + 1 < argc)
			gpu_terms = atof(argv[++a]);
		else if (strcmp(argv[a], "--quick") == 0)
			quick = true;
		else
		{
			fprintf(stderr, "usage: knn_cost_bench [--threads T] [--max-values V] "
					"[--cpu-terms N] [--gpu-terms N] [--quick]\n");
			return 2;
		}
	}
	if (quick)
		max_values = 2e7;
	cvalues = (size_t) max_values;
	qvalues = (size_t) 100000 * 1024;
	/* one area: the engine page-locks one per process, as the staging area */
	c = malloc(sizeof(float) * (cvalues + qvalues));
	q = c ? c + cvalues : NULL;
	dist = malloc(sizeof(double) * 100000 * K);
	index = malloc(sizeof(int64_t) * 100000 * K);
	if (!c || !q || !dist || !index)
	{
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < cvalues; i++)
		c[i] = (float) bench_unit(&rng);
	for (size_t i = 0; i < qvalues; i++)
		q[i] = (float) bench_unit(&rng);

	memset(&ctx, 0, sizeof(ctx));
	ctx.device = ODP_DEVICE_GPU;
	if (odp_gpu_host_area(&ctx, c, sizeof(float) * (cvalues + qvalues), true) != ODP_OK)
		fprintf(stderr, "page-locking failed (%s): copies run at pageable speed\n",
				ctx.message);
	if (odp_knn_cost_calibrate(&ctx, &model, c, sizeof(float) * cvalues) != ODP_OK)
		fprintf(stderr, "calibration: %s\n", ctx.message);
	printf("# model (%s, %.0f ms): cpu call %.3f ms, value %.4g term %.4g pair %.4g list %.4g ns, wide x%.2f, "
		   "speed-up %.1f of %d cores; gpu call %.3f ms (tiles %.3f, from host +%.3f), few value %.4g pair %.4g ns, "
		   "tiles value %.4g term %.4g pair %.4g ns, wide x%.2f; copy %.1f GB/s\n",
		   model.source == ODP_COST_CALIBRATED ? "timed" : "not all timed",
		   model.calibrate_ms, model.cpu_call_ms, model.cpu_value_ns, model.cpu_term_ns, model.cpu_pair_ns,
		   model.cpu_list_ns, model.cpu_wide, model.cpu_speedup, model.cpu_cores, model.gpu_call_ms,
		   model.gpu_tile_call_ms, model.gpu_host_call_ms,
		   model.gpu_few_value_ns, model.gpu_few_pair_ns, model.gpu_tile_value_ns, model.gpu_term_ns,
		   model.gpu_pair_ns, model.gpu_wide, model.copy_gbps);
	printf("# CPU threads %d; k = %d, sqeuclidean, brute force; best of 2; '~' = extended linearly in the queries\n",
		   threads, K);
	printf("%9s %5s %7s %7s | %11s %11s | %9s %9s | %6s %6s\n", "rows", "dims",
		   "queries", "cands", "cpu ms", "gpu ms", "est cpu", "est gpu", "choice", "ratio");

	for (size_t ri = 0; ri < sizeof(rows_grid) / sizeof(rows_grid[0]); ri++)
		for (size_t di = 0; di < sizeof(dims_grid) / sizeof(dims_grid[0]); di++)
		{
			int64_t		rows = rows_grid[ri];
			int			dims = dims_grid[di];
			double		cpu_by_q[6];
			bool		cpu_ext[6];

			if ((double) rows * dims > max_values)
				continue;
			for (size_t qi = 0; qi < 6; qi++)
				cpu_by_q[qi] = time_path(ODP_DEVICE_CPU, cpu_terms, q, q_grid[qi], c, rows,
										 dims, NULL, dist, index, &cpu_ext[qi]);
			for (int on_device = 0; on_device < 2; on_device++)
			{
				OdpResidentArray res;
				OdpContext	mk;

				memset(&mk, 0, sizeof(mk));
				mk.device = ODP_DEVICE_GPU;
				if (on_device &&
					(odp_resident_make(&mk, TAG, 0, c, sizeof(float) * rows * dims) != ODP_OK ||
					 !odp_resident_find(TAG, &res)))
				{
					fprintf(stderr, "no copy on the device: %s\n", mk.message);
					continue;
				}
				for (size_t qi = 0; qi < 6; qi++)
				{
					OdpKnnCostShape s = {0};
					OdpKnnCostEstimate e;
					bool		gpu_ext;
					double		gpu_ms = time_path(ODP_DEVICE_GPU, gpu_terms, q, q_grid[qi], c,
												   rows, dims, on_device ? &res : NULL,
												   dist, index, &gpu_ext);
					double		cpu_ms = cpu_by_q[qi];
					double		chosen,
								best,
								ratio;

					if (gpu_ms < 0 || cpu_ms < 0)
						continue;
					s.queries = q_grid[qi];
					s.rows = rows;
					s.dims = dims;
					s.metric = ODP_METRIC_SQEUCLIDEAN;
					s.k = K;
					s.threads = threads;
					s.input = on_device ? ODP_COST_INPUT_DEVICE : ODP_COST_INPUT_HOST;
					odp_knn_cost_estimate(&model, &s, &e);
					chosen = e.gpu ? gpu_ms : cpu_ms;
					best = gpu_ms < cpu_ms ? gpu_ms : cpu_ms;
					ratio = chosen / best;
					shapes++;
					if (ratio > worst)
						worst = ratio;
					if (ratio > 1.2)
						over++;
					printf("%9lld %5d %7lld %7s | %10.3f%s %10.3f%s | %9.3f %9.3f | %6s %6.2f%s\n",
						   (long long) rows, dims, (long long) q_grid[qi],
						   on_device ? "device" : "host", cpu_ms, cpu_ext[qi] ? "~" : " ",
						   gpu_ms, gpu_ext ? "~" : " ", e.cpu_ms, e.gpu_ms,
						   e.gpu ? "gpu" : "cpu", ratio, ratio > 1.2 ? " !" : "");
					fflush(stdout);
				}
				if (on_device)
					odp_resident_drop(TAG);
			}
		}
	printf("# shapes %d, choices more than 1.2x slower than the faster path: %d, worst %.2fx\n",
		   shapes, over, worst);
	return over > 0 ? 1 : 0;
}
