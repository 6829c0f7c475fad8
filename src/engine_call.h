/*-------------------------------------------------------------------------
 *
 * engine_call.h
 *	  One engine call described as data: which analytic, its inputs, its
 *	  parameters and where its outputs go.  The glue (engine_glue.c) fills
 *	  one for every SQL function's computation; it then runs in the
 *	  backend (odp_call_run) or in the GPU service (src/service/), which
 *	  ships the inputs, runs the same odp_call_run and ships the outputs
 *	  back.  Plain C: no PostgreSQL header, so that the service's engine
 *	  threads, which must never call into the server, can use it.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/engine_call.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ENGINE_CALL_H
#define ODP_ENGINE_CALL_H

#include "odp_distributed.h"
#include "odp_engine.h"
#include "odp_intervals.h"
#include "odp_knn.h"
#include "odp_outliers.h"
#include "odp_pearson.h"
#include "odp_skyline.h"

typedef enum OdpCallOp
{
	ODP_CALL_KNN = 1,
	ODP_CALL_OUTLIER_SCORES,
	ODP_CALL_TOP_OUTLIERS,
	ODP_CALL_PEARSON_PAIRS,
	ODP_CALL_PEARSON_TOP,
	ODP_CALL_SKYLINE,
	ODP_CALL_INTERVAL_PAIRS,
	ODP_CALL_INTERVAL_COUNT,
	ODP_CALL_KNN_EXCLUDING,		/* k-NN over a shard (odp_distributed.h) */
	/* a shard's SolvingSet state (odp_distributed.h), kept between calls */
	ODP_CALL_NODE_CREATE,
	ODP_CALL_NODE_FIRST,
	ODP_CALL_NODE_EXACT,
	ODP_CALL_NODE_NEXT,
	ODP_CALL_NODE_FREE
} OdpCallOp;

/*
 * Receives pairs (coefficients r, or NULL for the matching), as the
 * engine's pair callbacks do; returning false stops the call.
 */
typedef bool (*OdpCallPairFn) (void *arg, const int64_t *a, const int64_t *b,
							   const double *r, int64_t count);

typedef struct OdpCall
{
	OdpCallOp	op;

	/*
	 * Inputs.  Input 0 is the queries (k-NN), the matrix (outliers,
	 * skyline), x (correlations) or a (matching); input 1 the candidates
	 * (k-NN; for a self join it equals input 0 and only input 0 is
	 * shipped), y or b, absent (rows 0) when the call has one input.
	 * For the k-NN over a shard, m[0].ids are the queries' ids (or NULL:
	 * none excluded) and m[1].ids the shard rows' ids.
	 */
	bool		two_inputs;
	OdpMatrix	m[2];			/* the distances' inputs: float32 (data) or
								 * float64 (data64) rows, both inputs alike */
	OdpMatrix64 m64[2];			/* the correlations' and skyline's inputs */
	OdpRegions	r[2];			/* region inputs */
	const uint8_t *flags;		/* skyline: maximize; matching: compare;
								 * dims bytes, or NULL */

	/* parameters */
	OdpMetric	metric;
	int32_t		k;				/* k-NN, outliers, Pearson top */
	int64_t		n;				/* top outliers */
	OdpOutlierMethod method;
	int64_t		batch_size;
	bool		self_join;		/* k-NN */
	OdpPearsonMethod pearson_method;
	int32_t		min_periods;
	double		min_abs_r;
	OdpPearsonRank rank;
	int32_t		band;			/* skyline */
	bool		bounds;			/* node create */
	bool		prune;			/* node next */
	double		min_out;		/* node next */

	/*
	 * The node state a node step works on: the engine's object where the
	 * call runs, found from handle by the GPU service; node create sets
	 * it (and the service a handle for it).
	 */
	OdpSsNode  *node;
	int64_t		handle;
	OdpSsRows	rows_in;		/* node exact: the candidates */

	/* outputs: where they go, sized as odp_call_outputs says */
	double	   *dist;			/* k-NN (also over a shard): queries x k */
	int64_t    *index;			/* k-NN: queries x k (over a shard: ids) */
	double	   *scores;			/* outlier scores: rows; top: min(n, rows) */
	int64_t    *order;			/* top: min(n, rows) */
	int64_t    *solving_set;	/* top: rows, or NULL */
	double	   *solving_scores; /* top: rows, or NULL */
	int64_t    *other;			/* Pearson top: x rows x k */
	double	   *r_out;			/* Pearson top: x rows x k */
	int32_t    *dominated_by;	/* skyline: rows */
	OdpSsRows	rows_out;		/* node first, next: proposals, buffers of
								 * rows_out.capacity (count: call->count) */
	double	   *lists;			/* node exact: rows_in.count x k */
	OdpCallPairFn emit;			/* pairs (Pearson pairs, matching pairs) */
	void	   *emit_arg;

	/* results besides the outputs */
	int64_t		count;			/* top: rows written; pairs: pairs; node
								 * first, next: proposals; node exact:
								 * distances evaluated */
	OdpTopOutliersStats outliers;
	OdpSkylineStats skyline;
	OdpIntervalStats intervals;
} OdpCall;

/* One array a call reads or writes, for shipping it. */
typedef struct OdpCallArray
{
	void	  **ptr;			/* the call's pointer to it */
	size_t		bytes;
} OdpCallArray;

#define ODP_CALL_MAX_ARRAYS 12

/* Runs the call on ctx->device in the calling thread. */
extern OdpStatus odp_call_run(OdpContext *ctx, OdpCall *call);

/*
 * The arrays the call reads (present ones only, in a fixed order), and
 * the arrays it writes, sized from its parameters and, after the run,
 * from its counts; each returns how many it wrote to arrays.
 */
extern int	odp_call_inputs(OdpCall *call, OdpCallArray *arrays);
extern int	odp_call_outputs(OdpCall *call, bool after_run, OdpCallArray *arrays);

/* The rows the call's inputs hold together, for the activity view. */
extern int64_t odp_call_rows(const OdpCall *call);

/*
 * The GPU memory the call would like on one device: its inputs and
 * outputs, twice over for working copies, plus room for tiles.  The
 * engine processes a larger input in chunks of whatever budget it gets,
 * so this decides only how soon a call is admitted, never whether it
 * works.
 */
extern size_t odp_call_memory_wish(OdpCall *call);

/*
 * One device's compute for the call, estimated (odp_one_device_ms): what a
 * split over several devices is weighed by; 0 for the steps that never
 * split.
 */
extern double odp_call_one_device_ms(const OdpCall *call);

/*
 * Whether op is a step of a sharded SolvingSet's node (NODE_*), whose
 * state lives in the engine across calls.
 */
extern bool odp_call_is_node_step(OdpCallOp op);

/* The analytic's name, for the activity view ("knn", "skyline", ...). */
extern const char *odp_call_op_name(OdpCallOp op);

#endif							/* ODP_ENGINE_CALL_H */
