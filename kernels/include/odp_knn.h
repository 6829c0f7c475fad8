/*-------------------------------------------------------------------------
 *
 * odp_knn.h
 *	  Engine API of the k nearest neighbours (queries and joins).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_knn.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_KNN_H
#define ODP_KNN_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * k nearest neighbours: for every row q of queries, the k rows of cands
 * nearest to it, nearest first, ties by smaller row index.  Writes them to
 * index[q * k .. q * k + k) and their distances to dist (same layout).
 * For ODP_METRIC_INNER_PRODUCT "nearest" is "largest inner product" and
 * dist holds the inner products, descending.  With self_join, queries
 * must be cands (the same matrix) and row q is not its own neighbour.
 *
 * Requires 1 <= k <= ODP_MAX_K and k <= cands->rows (minus one for a self
 * join): callers that want "all rows when k is larger" pass the smaller k.
 * Distances are the float32 values odp_distance defines, on both paths.
 */
extern OdpStatus odp_compute_knn(OdpContext *ctx, const OdpMatrix *queries,
								 const OdpMatrix *cands, OdpMetric metric,
								 int32_t k, bool self_join, float *dist,
								 int64_t *index);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_KNN_H */
