/*-------------------------------------------------------------------------
 *
 * knn_cost.h
 *	  The path of a k-NN call under odp_gpu.device (knn_cost.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/knn_cost.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_KNN_COST_H
#define ODP_KNN_COST_H

#include "engine_glue.h"
#include "input/input.h"

/*
 * Whether a k-NN call of queries against source runs on the GPU: the
 * setting's path, or under auto the cheaper by the cost model
 * (odp_cost.h); says why in info->chosen_by and chosen_why.
 */
extern bool OdpChooseKnnGpu(const OdpInput *queries, const OdpInput *source,
							OdpMetric metric, int32 k, bool self_join, OdpRunInfo *info);

#endif							/* ODP_KNN_COST_H */
