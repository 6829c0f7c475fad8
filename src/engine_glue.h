/*-------------------------------------------------------------------------
 *
 * engine_glue.h
 *	  The PostgreSQL side's only door into the engine (kernels/).
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

#include "input.h"
#include "odp_engine.h"

/* What one engine call did, for the timing report. */
typedef struct OdpRunInfo
{
	bool		on_gpu;
	double		transfer_ms;
	double		compute_ms;
	int64		chunks;

	/* set by OdpComputeKnn only */
	int64		queries;		/* query rows (0: not a k-NN call) */
	double		query_read_ms;	/* reading them (0 for a self join) */

	/* set by OdpComputeTopOutliers only */
	bool		has_method;
	OdpOutlierMethod method;	/* the method that ran */
	int64		distances;		/* distance evaluations */
	int64		solving_set_size;
	int32		iterations;		/* SolvingSet candidate batches */
} OdpRunInfo;

extern bool OdpGpuUsable(char **why);
/* Fewest queries odp_gpu.device = auto sends to the GPU (k-NN). */
#define ODP_GPU_MIN_QUERIES 16

extern bool OdpChooseGpu(int64 queries, int64 rows);
extern void OdpCheckCosineRows(const OdpInput *in, OdpMetric metric);
extern void OdpComputeOutlierScores(const OdpInput *in, OdpMetric metric,
									int32 k, double *scores,
									OdpRunInfo *info);
extern void OdpComputeTopOutliers(const OdpInput *in, OdpMetric metric,
								  int32 k, int64 n, OdpOutlierMethod method,
								  int64 *order, double *scores, int64 *count,
								  int64 *solving_set, double *solving_scores,
								  int64 *solving_count, OdpRunInfo *info);
extern void OdpComputeKnn(const OdpInput *queries, const OdpInput *source,
						  OdpMetric metric, int32 k, bool self_join,
						  float *dist, int64 *index, OdpRunInfo *info);
extern const char *OdpOutlierMethodName(OdpOutlierMethod method);
extern void OdpReportTiming(const char *what, const OdpInput *in,
							const OdpRunInfo *info, double output_ms);

#endif							/* ODP_ENGINE_GLUE_H */
