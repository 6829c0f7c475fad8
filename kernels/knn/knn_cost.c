/*-------------------------------------------------------------------------
 *
 * knn_cost.c
 *	  The k-NN cost model's estimates (odp_cost.h): both paths' time for a
 *	  call's shape, from the terms a model holds, and the built-in terms.
 *
 * The CPU path's split is the engine's own (odp_cpu_knn_plan): it sweeps
 * the candidates once per block of queries (the transposed copy of each
 * candidate block is made again for each), or once in all in ranges, so
 * its per-value term counts that often; its threads share the blocks or
 * ranges and gain at most the speed-up timed with all cores.  The GPU's tiles hold 64 queries a
 * block, so fewer queries cost as much as 64.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_cost.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "common/engine_internal.h"
#include "include/odp_cost.h"
#include "knn/knn_internal.h"

#define COST_GPU_QUERY_TILE		64

/* See odp_cost.h. */
bool
odp_knn_few_shape(int64_t queries, int64_t rows, int32_t k, bool wide, bool self_join,
				  OdpMetric metric)
{
	return !wide && !self_join &&
		queries <= ODP_KNN_FEW_MAX_QUERIES && k <= ODP_KNN_FEW_MAX_K &&
		rows <= INT32_MAX &&
		(metric == ODP_METRIC_EUCLIDEAN || metric == ODP_METRIC_SQEUCLIDEAN ||
		 metric == ODP_METRIC_MANHATTAN || metric == ODP_METRIC_CHEBYSHEV);
}

/* CPUs the host runs at once (1 where it cannot tell). */
static int32_t
cost_cores(void)
{
	long		n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int32_t) n : 1;
}

/*
 * See odp_cost.h.  The terms: odp_knn_cost_calibrate's output on the
 * H200 host's 16 cores and one H200, 2026-11-29 (the few-query path's
 * after its radix select); the lists' intake and the host call's extra,
 * 2026-11-30.
 */
void
odp_knn_cost_builtin(OdpKnnCostModel *m)
{
	memset(m, 0, sizeof(*m));
	m->source = ODP_COST_BUILTIN;
	m->cpu_call_ms = 0.1;
	m->cpu_value_ns = 0.49;
	m->cpu_term_ns = 0.25;
	m->cpu_pair_ns = 0.74;
	m->cpu_list_ns = 34.0;
	m->cpu_wide = 2.5;
	m->cpu_cores = cost_cores();
	m->cpu_speedup = m->cpu_cores < 8 ? m->cpu_cores : 8;
	m->gpu_call_ms = 0.19;
	m->gpu_host_call_ms = 0.07;
	m->gpu_tile_call_ms = 0.40;
	m->gpu_few_value_ns = 0.00094;
	m->gpu_few_pair_ns = 0.0174;
	m->gpu_tile_value_ns = 0.047;
	m->gpu_term_ns = 0.000075;
	m->gpu_pair_ns = 0.0053;
	m->gpu_wide = 8.75;
	m->copy_gbps = 54.0;
}

/*
 * Candidates a query's list of k takes in over rows candidates in no
 * particular order: the j-th enters with chance k / j, so about
 * k (1 + ln(rows / k)).
 */
double
odp_knn_cost_list_entries(int64_t rows, int32_t k)
{
	double		kk = k > 0 ? (double) k : 10.0;

	return (double) rows <= kk ? (double) rows : kk * (1.0 + log((double) rows / kk));
}

/* See odp_cost.h. */
void
odp_knn_cost_estimate(const OdpKnnCostModel *m, const OdpKnnCostShape *s,
					  OdpKnnCostEstimate *e)
{
	double		queries = (double) (s->self_join ? s->rows : s->queries);
	double		rows = (double) s->rows;
	double		values = rows * (double) s->dims;
	double		elem = s->wide ? 8.0 : 4.0;
	double		tiled = (double) ((int64_t) (queries + COST_GPU_QUERY_TILE - 1) /
								  COST_GPU_QUERY_TILE * COST_GPU_QUERY_TILE);
	OdpCpuKnnPlan plan;
	double		passes;
	double		speed;
	double		copy_bytes;
	double		ns;

	memset(e, 0, sizeof(*e));

	/*
	 * The CPU: one thread's work over the threads that run at once.  Each
	 * block of queries transposes the candidates again; ranges, once.
	 */
	odp_cpu_knn_plan((int64_t) queries, s->rows, s->dims, s->threads, &plan);
	passes = plan.ranges > 1 ? 1.0 : (double) plan.nblocks;
	ns = passes * values * m->cpu_value_ns +
		(queries * values * m->cpu_term_ns + queries * rows * m->cpu_pair_ns) *
		(s->wide ? m->cpu_wide : 1.0) +
		queries * odp_knn_cost_list_entries(s->rows, s->k) * m->cpu_list_ns;
	speed = plan.threads < plan.nblocks ? plan.threads : (double) plan.nblocks;
	if (speed > m->cpu_cores)
		speed = m->cpu_cores;
	if (speed > m->cpu_speedup && m->cpu_speedup >= 1.0)
		speed = m->cpu_speedup;
	if (speed < 1)
		speed = 1;
	e->cpu_ms = m->cpu_call_ms + ns / speed / 1e6;

	/* the GPU: the call, the copies, the distances and the selection */
	e->gpu_few = odp_knn_few_shape(s->queries, s->rows, s->k, s->wide, s->self_join,
								   s->metric);
	if (e->gpu_few)
		ns = values * m->gpu_few_value_ns + queries * rows * m->gpu_few_pair_ns;
	else
		ns = values * m->gpu_tile_value_ns +
			(tiled * values * m->gpu_term_ns + tiled * rows * m->gpu_pair_ns) *
			(s->wide ? m->gpu_wide : 1.0);
	copy_bytes = s->self_join ? 0.0 : queries * (double) s->dims * elem;
	if (s->input == ODP_COST_INPUT_HOST)
		copy_bytes += values * elem;
	e->gpu_copy_ms = m->copy_gbps > 0 ? copy_bytes / (m->copy_gbps * 1e6) : 0.0;
	e->gpu_ms = (e->gpu_few ? m->gpu_call_ms : m->gpu_tile_call_ms) + e->gpu_copy_ms + ns / 1e6 +
		(s->input == ODP_COST_INPUT_HOST ? m->gpu_host_call_ms : 0.0);
	e->gpu = e->gpu_ms < e->cpu_ms;
}
