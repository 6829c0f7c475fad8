/*-------------------------------------------------------------------------
 *
 * test_knn_cost.c
 *	  Engine tests of the k-NN cost model (odp_cost.h): the estimates'
 *	  shape (more work never costs less, a copy on the device never costs
 *	  more, threads help up to the cores), decisions at the grid's ends,
 *	  the few-query rule against the GPU path itself, and the timed terms
 *	  against calls timed again (CPU; and GPU where there is one).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_knn_cost.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "include/odp_cost.h"
#include "include/odp_knn.h"
#include "test_util.h"

/* The estimate of one shape under m. */
static OdpKnnCostEstimate
estimate(const OdpKnnCostModel *m, int64_t queries, int64_t rows, int dims, bool wide,
		 int threads, OdpCostInput input)
{
	OdpKnnCostShape s = {0};
	OdpKnnCostEstimate e;

	s.queries = queries;
	s.rows = rows;
	s.dims = dims;
	s.wide = wide;
	s.metric = ODP_METRIC_EUCLIDEAN;
	s.threads = threads;
	s.input = input;
	odp_knn_cost_estimate(m, &s, &e);
	return e;
}

/* The estimates' shape under model m (what). */
static void
check_shape(const OdpKnnCostModel *m, const char *what)
{
	static const int64_t rows[] = {1000, 100000, 10000000};
	static const int dims[] = {2, 128, 1024};
	static const int64_t queries[] = {1, 8, 9, 1000, 100000};
	int			bad_more = 0,
				bad_device = 0,
				bad_wide = 0,
				bad_threads = 0,
				bad_choice = 0;

	for (int r = 0; r < 3; r++)
		for (int d = 0; d < 3; d++)
			for (int q = 0; q < 5; q++)
			{
				OdpKnnCostEstimate h = estimate(m, queries[q], rows[r], dims[d], false, 4,
												ODP_COST_INPUT_HOST);
				OdpKnnCostEstimate v = estimate(m, queries[q], rows[r], dims[d], false, 4,
												ODP_COST_INPUT_DEVICE);
				OdpKnnCostEstimate w = estimate(m, queries[q], rows[r], dims[d], true, 4,
												ODP_COST_INPUT_HOST);
				OdpKnnCostEstimate one = estimate(m, queries[q], rows[r], dims[d], false, 1,
												  ODP_COST_INPUT_HOST);
				OdpKnnCostEstimate more = estimate(m, queries[q], rows[r] * 2, dims[d], false, 1,
												   ODP_COST_INPUT_HOST);

				/* one thread: more threads may split more rows better */
				bad_more += more.cpu_ms < one.cpu_ms || more.gpu_ms < h.gpu_ms;
				bad_device += v.gpu_ms > h.gpu_ms || v.cpu_ms != h.cpu_ms;
				bad_wide += w.cpu_ms < h.cpu_ms || w.gpu_ms < h.gpu_ms;
				bad_threads += one.cpu_ms < h.cpu_ms;
				bad_choice += h.gpu != (h.gpu_ms < h.cpu_ms);
			}
	check(bad_more == 0 && bad_device == 0 && bad_wide == 0 && bad_threads == 0 &&
		  bad_choice == 0,
		  "cost model (%s): over 45 shapes, twice the rows never cost less on one thread or the GPU (%d), a copy on the "
		  "device never costs the GPU more (%d), float64 never less (%d), 4 threads never more "
		  "than 1 (%d), the choice is the cheaper path (%d)",
		  what, bad_more, bad_device, bad_wide, bad_threads, bad_choice);
	{
		OdpKnnCostEstimate tiny = estimate(m, 1, 1000, 16, false, 4, ODP_COST_INPUT_HOST);
		OdpKnnCostEstimate join = estimate(m, 10000, 1000000, 128, false, 4, ODP_COST_INPUT_HOST);

		check(!tiny.gpu && join.gpu,
			  "cost model (%s): one query over 1,000 x 16 stays on the CPU (%.3f ms against "
			  "%.3f), 10^4 queries over 10^6 x 128 go to the GPU (%.1f ms against %.1f)",
			  what, tiny.cpu_ms, tiny.gpu_ms, join.gpu_ms, join.cpu_ms);
	}
}

/* The model's estimate of a call against the call timed (best of two). */
static void
check_timed(const OdpKnnCostModel *m, OdpDevice dev, int64_t nq, int64_t nc, int dims)
{
	float	   *rows = make_data(GEN_UNIFORM, nc, dims);
	double	   *dist = xmalloc(sizeof(double) * nq * 10);
	int64_t    *index = xmalloc(sizeof(int64_t) * nq * 10);
	OdpMatrix	q = {rows, nq, dims, NULL, NULL},
				c = {rows, nc, dims, NULL, NULL};
	double		best = -1;
	OdpKnnCostEstimate e = estimate(m, nq, nc, dims, false, 1, ODP_COST_INPUT_HOST);
	double		est = dev == ODP_DEVICE_GPU ? e.gpu_ms : e.cpu_ms;
	bool		ok = true;

	for (int rep = 0; rep < 2 && ok; rep++)
	{
		OdpContext	ctx = make_ctx(dev);
		double		t0 = odp_now_ms();

		ctx.cpu_threads = 1;
		ctx.spatial = ODP_SPATIAL_OFF;
		ok = odp_compute_knn(&ctx, &q, &c, ODP_METRIC_EUCLIDEAN, 10, false, dist, index) == ODP_OK;
		t0 = odp_now_ms() - t0;
		if (best < 0 || t0 < best)
			best = t0;
	}
	/* loose: it must only tell a path's order of magnitude, under any load */
	check(ok && est > best / 5 && est < best * 5,
		  "cost model: %s estimate of %lld queries over %lld x %d, %.3f ms, within 5x of "
		  "the call timed, %.3f ms",
		  dev == ODP_DEVICE_GPU ? "GPU" : "CPU", (long long) nq, (long long) nc, dims, est, best);
	free(rows);
	free(dist);
	free(index);
}

/* Every cost model test. */
void
run_knn_cost_tests(void)
{
	OdpKnnCostModel builtin,
				timed;
	OdpContext	ctx = make_ctx(ODP_DEVICE_CPU);
	OdpStatus	st;

	odp_knn_cost_builtin(&builtin);
	check_shape(&builtin, "built-in");

	/* the few-query rule is the GPU path's own */
	check(odp_knn_few_shape(1, 100000, 10, false, false, ODP_METRIC_EUCLIDEAN) &&
		  odp_knn_few_shape(32, 100000, 10, false, false, ODP_METRIC_CHEBYSHEV) &&
		  !odp_knn_few_shape(33, 100000, 10, false, false, ODP_METRIC_EUCLIDEAN) &&
		  !odp_knn_few_shape(1, 100000, 10, true, false, ODP_METRIC_EUCLIDEAN) &&
		  !odp_knn_few_shape(1, 100000, 10, false, true, ODP_METRIC_EUCLIDEAN) &&
		  !odp_knn_few_shape(1, 100000, 10, false, false, ODP_METRIC_COSINE) &&
		  !odp_knn_few_shape(1, 100000, 10, false, false, ODP_METRIC_INNER_PRODUCT) &&
		  odp_knn_few_shape(1, 10, 10, false, false, ODP_METRIC_MANHATTAN) &&
		  odp_knn_few_shape(1, 100000, 1024, false, false, ODP_METRIC_EUCLIDEAN) &&
		  !odp_knn_few_shape(1, 100000, 1025, false, false, ODP_METRIC_EUCLIDEAN),
		  "cost model: the few-query rule (up to 32 float32 queries, k up to 1,024, distance "
		  "metrics but cosine, no self join, any number of rows)");
	{
		OdpKnnCostShape s = {0};
		OdpKnnCostEstimate small,
					large;

		s.queries = 1;
		s.rows = 1000000;
		s.dims = 128;
		s.metric = ODP_METRIC_EUCLIDEAN;
		s.threads = 1;
		s.k = 10;
		odp_knn_cost_estimate(&builtin, &s, &small);
		s.k = 1025;
		odp_knn_cost_estimate(&builtin, &s, &large);
		check(small.gpu_few && !large.gpu_few && large.gpu_ms > small.gpu_ms,
			  "cost model: k = 1025 is weighed on the tiles (%.2f ms), k = 10 on the few-query "
			  "path (%.2f ms)", large.gpu_ms, small.gpu_ms);
	}

	st = odp_knn_cost_calibrate(&ctx, &timed, NULL, 0);
	check(st == ODP_OK && timed.source == ODP_COST_CALIBRATED_CPU &&
		  timed.cpu_value_ns + timed.cpu_term_ns > 0 && timed.cpu_pair_ns >= 0 &&
		  timed.cpu_list_ns >= 0 &&
		  timed.cpu_speedup >= 1 && timed.cpu_wide > 0 && timed.calibrate_ms > 0 &&
		  timed.gpu_call_ms == builtin.gpu_call_ms &&
		  timed.gpu_host_call_ms == builtin.gpu_host_call_ms,
		  "cost model: the CPU's terms timed in %.0f ms (value %.3g, term %.3g, pair %.3g, "
		  "list %.3g ns, float64 x%.2f, speed-up %.2f of %d cores), the GPU's built in: %s",
		  timed.calibrate_ms, timed.cpu_value_ns, timed.cpu_term_ns, timed.cpu_pair_ns,
		  timed.cpu_list_ns, timed.cpu_wide, timed.cpu_speedup, timed.cpu_cores, ctx.message);
	check_shape(&timed, "CPU timed");
	check_timed(&timed, ODP_DEVICE_CPU, 1, 200000, 32);
	check_timed(&timed, ODP_DEVICE_CPU, 64, 20000, 16);
	if (!gpu_ok)
		return;

	ctx = make_ctx(ODP_DEVICE_GPU);
	st = odp_knn_cost_calibrate(&ctx, &timed, NULL, 0);
	check(st == ODP_OK && timed.source == ODP_COST_CALIBRATED && timed.gpu_call_ms > 0 &&
		  timed.gpu_few_value_ns + timed.gpu_few_pair_ns > 0 &&
		  timed.gpu_term_ns + timed.gpu_pair_ns > 0,
		  "cost model: the GPU's terms timed in %.0f ms (call %.3f ms, few value %.3g pair %.3g "
		  "ns, tiles term %.3g pair %.3g ns, float64 x%.2f): %s",
		  timed.calibrate_ms, timed.gpu_call_ms, timed.gpu_few_value_ns,
		  timed.gpu_few_pair_ns, timed.gpu_term_ns, timed.gpu_pair_ns, timed.gpu_wide,
		  ctx.message);
	check_shape(&timed, "GPU timed");
	check_timed(&timed, ODP_DEVICE_GPU, 4000, 200000, 64);
}
