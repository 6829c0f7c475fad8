/*-------------------------------------------------------------------------
 *
 * engine_glue.h
 *	  The PostgreSQL side's door into the engine's analytics (kernels/):
 *	  the SQL functions run every odp_compute_* call through it.  The
 *	  distributed calls (distributed*.c) drive the distributed steps of
 *	  odp_distributed.h themselves.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/engine_glue.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ENGINE_GLUE_H
#define ODP_ENGINE_GLUE_H

#include "input/input.h"
#include "odp_distributed.h"
#include "odp_engine.h"
#include "odp_intervals.h"
#include "odp_knn.h"
#include "odp_outliers.h"
#include "odp_pearson.h"
#include "odp_skyline.h"

/* What one engine call did, for the timing report. */
typedef struct OdpRunInfo
{
	bool		on_gpu;
	double		transfer_ms;
	double		compute_ms;
	int64		chunks;
	int			gpu_parts;		/* device parts of the GPU path, 1 for one */
	bool		via_service;	/* run by the GPU service */
	double		queued_ms;		/* of it, waiting for a slot and memory */
	int			service_device; /* the first device it ran on there */
	bool		service_retried;	/* run again there after a GPU fault */
	int64		staged_bytes;	/* inputs the service read in place */
	int64		streamed_bytes; /* inputs streamed to it */
	int64		streamed_to_gpu_bytes;	/* of those, went on to the GPU as they came */
	double		stream_ms;		/* streaming inputs and outputs */
	double		startup_ms;		/* what an engine call took beyond its
								 * phases: starting CUDA, a context, the
								 * service's thread; and the GPU probe */

	/* set by the distance analytics: "float32" or "float64"; else NULL */
	const char *precision;
	bool		spatial_used;	/* k-NN or scores through the spatial path */
	int64		spatial_distances;
	int			batch_queries;	/* k-NN queries of the service's shared pass */
	double		batch_wait_ms;	/* of startup: its wait for earlier passes */
	double		dispatch_ms;	/* of startup: admitted until the service's
								 * thread for it began */
	double		reply_ms;		/* of startup: the service's answer written
								 * until read here */

	/* set by OdpComputeKnn only */
	int64		queries;		/* query rows (0: not a k-NN call) */
	const char *chosen_by;		/* what chose the path: "setting",
								 * "no_gpu" or "cost" */
	const char *chosen_why;		/* for "cost": the estimates, or NULL */
	double		query_read_ms;	/* reading them (0 for a self join) */

	/* set by OdpComputeTopOutliers only */
	bool		has_method;
	OdpOutlierMethod method;	/* the method that ran */
	int64		distances;		/* distance evaluations */
	int64		solving_set_size;
	int32		iterations;		/* SolvingSet candidate batches */

	/* set by the correlations only */
	int64		other_rows;		/* series of the second source (0: none) */
	double		other_read_ms;
	bool		has_pairs;
	int64		pairs;			/* pairs handed over (OdpComputePearsonPairs) */
	double		emit_ms;		/* time spent storing them */

	/* set by OdpComputeSkyline only */
	bool		has_skyline;
	OdpSkylineStats skyline;

	/* set by the interval matching only */
	bool		has_intervals;
	OdpIntervalStats intervals;
} OdpRunInfo;

/*
 * Receives pairs of OdpComputePearsonPairs, in (a, b) order, as row indexes
 * of the two inputs; may raise errors (the glue carries them across the
 * engine).
 */
typedef void (*OdpPairSink) (void *arg, const int64 *a, const int64 *b,
							 const double *r, int64 count);

/*
 * State of one engine call's cancel callback (engine_glue.c): an error
 * raised while it absorbs a barrier is kept and re-thrown after the
 * engine has cleaned up.
 */
typedef struct OdpGlueCancel
{
	MemoryContext error_context;
	ErrorData  *pending_error;
} OdpGlueCancel;

/*
 * An engine call made by hand, for engine entry points the functions
 * below do not wrap (the distributed forms): Begin fills call->ctx from
 * the settings for the given path; End reports a failed status as the
 * functions below do (never returning) and does nothing on ODP_OK.  The
 * struct must not move in between.
 */
typedef struct OdpEngineCall
{
	OdpContext	ctx;
	OdpGlueCancel cancel;
} OdpEngineCall;

extern void OdpEngineCallBegin(OdpEngineCall *call, bool on_gpu);
extern void OdpEngineCallEnd(OdpEngineCall *call, OdpStatus status);

extern bool OdpGpuUsable(char **why);

/* Fewest queries odp_gpu.device = auto sends to the GPU (k-NN). */
#define ODP_GPU_MIN_QUERIES 16

extern bool OdpChooseGpu(int64 queries, int64 rows);
extern void OdpCheckCosineRows(const OdpInput *in, OdpMetric metric);

/*
 * Ensures k-NN distances (count of them, k per query; qids the queries'
 * ids or NULL for one query) are finite, naming the query whose are not;
 * float64 says the rows' precision, for the message.
 */
extern void OdpEnsureFiniteDistances(const double *dist, int64 count, int32 k,
									 const int64 *qids, bool float64);
extern void OdpComputeOutlierScores(const OdpInput *in, OdpMetric metric,
									int32 k, double *scores,
									OdpRunInfo *info);
extern void OdpComputeTopOutliers(const OdpInput *in, OdpMetric metric,
								  int32 k, int64 n, OdpOutlierMethod method,
								  int64 batch_size, int64 *order,
								  double *scores, int64 *count,
								  int64 *solving_set, double *solving_scores,
								  int64 *solving_count, OdpRunInfo *info);
extern void OdpComputeKnn(const OdpInput *queries, const OdpInput *source,
						  OdpMetric metric, int32 k, bool self_join,
						  double *dist, int64 *index, OdpRunInfo *info);
/*
 * A shard's SolvingSet node state (odp_distributed.h) kept between engine
 * calls: in this backend, or, on the GPU path with the library preloaded,
 * in the GPU service, which keeps it for this session.  Open, the steps
 * and Close report failures as the functions above do; Close raises no
 * error (it runs on error paths too) and does nothing on a closed state.
 */
typedef struct OdpShardState
{
	bool		on_gpu;
	bool		in_service;
	OdpSsNode  *local;			/* in this backend */
	int64		handle;			/* in the service: its handle, 0 closed */
	int			device;			/* in the service: the device it lives on */
	int32		k;
} OdpShardState;

extern void OdpShardStateOpen(OdpShardState *st, bool on_gpu, const OdpMatrix *rows,
						OdpMetric metric, int32 k, bool bounds);
extern void OdpShardStateFirst(OdpShardState *st, int64 m, OdpSsRows *out);
extern void OdpShardStateExact(OdpShardState *st, const OdpSsRows *cands, double *lists,
						 int64 *distances);
extern void OdpShardStateNext(OdpShardState *st, bool prune, double min_out, int64 m,
						OdpSsRows *out);
extern void OdpShardStateClose(OdpShardState *st);

extern void OdpComputeKnnExcluding(const OdpMatrix *queries, const int64 *qids,
								   const OdpMatrix *cands, const int64 *cids,
								   OdpMetric metric, int32 k, double *dist,
								   int64 *ids);
extern void OdpComputePearsonPairs(const OdpInput *x, const OdpInput *y,
								   OdpPearsonMethod method, int32 min_periods,
								   double min_abs_r, OdpPairSink sink, void *arg,
								   OdpRunInfo *info);
extern void OdpComputePearsonTop(const OdpInput *x, const OdpInput *y,
								 OdpPearsonMethod method, int32 min_periods,
								 int32 k, OdpPearsonRank rank, int64 *other,
								 double *r, OdpRunInfo *info);
extern void OdpComputeSkyline(const OdpInput *in, const uint8 *maximize,
							  int32 band, int32 *dominated_by,
							  OdpRunInfo *info);
extern void OdpComputeIntervalPairs(const OdpInput *a, const OdpInput *b,
									OdpPairSink sink, void *arg,
									OdpRunInfo *info);
extern int64 OdpComputeIntervalCount(const OdpInput *a, const OdpInput *b,
									 OdpRunInfo *info);
extern const char *OdpOutlierMethodName(OdpOutlierMethod method);

extern void OdpReportTiming(const char *what, const OdpInput *in,
							const OdpRunInfo *info, double output_ms,
							double call_start);

#endif							/* ODP_ENGINE_GLUE_H */
