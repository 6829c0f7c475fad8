/*-------------------------------------------------------------------------
 *
 * odp_cost.h
 *	  The cost model that picks the path of a k-NN call under
 *	  odp_gpu.device = auto: the CPU path, the GPU path copying its input
 *	  over the bus, or the GPU path reading a copy already on the device
 *	  (the table cache's).
 *
 * Each path's time is a sum of terms the engine's own calls were timed
 * for on this host (odp_knn_cost_calibrate): on the CPU, one thread's
 * cost per candidate value (the transposed copy of each block), per
 * query and candidate value (the distance) and per query and candidate
 * (the selection), over the threads the call starts (no more than one
 * per ODP_KNN_CPU_TERMS_PER_THREAD terms) and the host runs at once, no
 * faster than the speed-up timed with every core on one query; on the
 * GPU, a fixed cost a call, the few-query path's cost per candidate value
 * and per query and candidate, the tiled path's per candidate value, per
 * query and candidate value and per query and candidate, and the copy of
 * the inputs at the bus's page-locked speed, left out for a candidate
 * matrix on the device.
 * float64 rows multiply the distance terms by a factor timed too.  The
 * choice is wrong only near the crossover, where both paths cost about
 * the same: test/bench/knn_cost_bench.c times both over a grid of shapes.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_cost.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_COST_H
#define ODP_COST_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* Where a model's numbers come from. */
typedef enum OdpCostSource
{
	ODP_COST_BUILTIN = 0,		/* the constants below (no timing here) */
	ODP_COST_CALIBRATED_CPU,	/* the CPU's timed here, the GPU's built in */
	ODP_COST_CALIBRATED			/* both timed here */
} OdpCostSource;

typedef struct OdpKnnCostModel
{
	OdpCostSource source;
	double		calibrate_ms;	/* what timing them took */

	/* the CPU path, one thread, nanoseconds */
	double		cpu_call_ms;	/* a call's fixed cost, milliseconds */
	double		cpu_value_ns;	/* per candidate value */
	double		cpu_term_ns;	/* per query x candidate value */
	double		cpu_pair_ns;	/* per query x candidate */
	double		cpu_list_ns;	/* per candidate a query's list takes in */
	double		cpu_wide;		/* float64 factor on the terms */
	double		cpu_speedup;	/* the most threads gave over one */
	int32_t		cpu_cores;		/* CPUs the host runs at once */

	/* the GPU path */
	double		gpu_call_ms;	/* a call's fixed cost: few queries */
	double		gpu_host_call_ms;	/* and more, candidates in host memory */
	double		gpu_tile_call_ms;	/* and the tiles' */
	double		gpu_few_value_ns;	/* few queries: per candidate value */
	double		gpu_few_pair_ns;	/* and per query x candidate */
	double		gpu_tile_value_ns;	/* tiles: per candidate value */
	double		gpu_term_ns;	/* and per query x candidate value */
	double		gpu_pair_ns;	/* and per query x candidate */
	double		gpu_wide;		/* float64 factor on the terms */
	double		copy_gbps;		/* host to device, page-locked, GB/s */
} OdpKnnCostModel;

/* Where a k-NN call's candidate rows lie as it starts. */
typedef enum OdpCostInput
{
	ODP_COST_INPUT_HOST = 0,	/* the GPU path copies them over the bus */
	ODP_COST_INPUT_DEVICE		/* a copy is on the device already */
} OdpCostInput;

typedef struct OdpKnnCostShape
{
	int64_t		queries;
	int64_t		rows;			/* candidates */
	int32_t		dims;
	int32_t		k;				/* neighbours a query (0: few) */
	bool		wide;			/* float64 rows */
	bool		self_join;
	OdpMetric	metric;
	int			threads;		/* the CPU path's */
	OdpCostInput input;
} OdpKnnCostShape;

typedef struct OdpKnnCostEstimate
{
	double		cpu_ms;
	double		gpu_ms;			/* of it: */
	double		gpu_copy_ms;
	bool		gpu_few;		/* the few-query path would run */
	bool		gpu;			/* the GPU is the cheaper */
} OdpKnnCostEstimate;

/*
 * The built-in model: timed on the H200 host (2 x Xeon, 16 cores lent),
 * 2026-11-29, with cpu_cores from the host it runs on.  A model without
 * a GPU of its own takes its GPU terms from here.
 */
extern void odp_knn_cost_builtin(OdpKnnCostModel *m);

/*
 * Times the engine's own k-NN calls on generated rows (about 50 ms on a
 * core, plus about 100 ms on a GPU) and fills *m: the CPU terms always,
 * the GPU terms where ctx->device is ODP_DEVICE_GPU (on ctx->gpu_id),
 * else the built-in ones.  scratch, when not NULL, is page-locked memory
 * of at least scratch_bytes the copy may be timed from.  ODP_OK, or a
 * failure of a call (the model then stays the built-in one).
 */
extern OdpStatus odp_knn_cost_calibrate(OdpContext *ctx, OdpKnnCostModel *m,
										const void *scratch, size_t scratch_bytes);

/* Both paths' time for a call of shape s under model m. */
extern void odp_knn_cost_estimate(const OdpKnnCostModel *m, const OdpKnnCostShape *s,
								  OdpKnnCostEstimate *e);

/*
 * Whether a GPU k-NN call of this shape takes the few-query path (every
 * distance, then a radix select of each query's k), not the tiles: k at
 * most ODP_KNN_FEW_MAX_K (knn_internal.h; 0 counts as small).
 */
extern bool odp_knn_few_shape(int64_t queries, int64_t rows, int32_t k, bool wide,
							  bool self_join, OdpMetric metric);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_COST_H */
