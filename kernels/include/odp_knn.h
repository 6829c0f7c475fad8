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
 * Distances are the values odp_distance (float32 rows) or odp_distance64
 * (float64 rows) defines, on both paths, returned as float64 (a float32
 * distance exactly).  queries and cands must have the same precision.
 */
extern OdpStatus odp_compute_knn(OdpContext *ctx, const OdpMatrix *queries,
								 const OdpMatrix *cands, OdpMetric metric,
								 int32_t k, bool self_join, double *dist,
								 int64_t *index);

/*
 * odp_compute_knn without a self join, for a call of at most
 * ODP_KNN_SHARED_MAX_QUERIES queries that may share one pass over cands
 * with calls made at the same time from other threads on the same
 * candidates (the same memory), metric and path: the GPU service's single
 * queries on a cached table (knn_batch.c).  The same lists as alone;
 * ctx->batch_queries says how many queries the pass served.  A call of
 * more queries, or with bad arguments, is odp_compute_knn's alone.  As
 * many queries as the GPU's few-query path takes in one pass.
 */
#define ODP_KNN_SHARED_MAX_QUERIES 32
extern OdpStatus odp_knn_shared(OdpContext *ctx, const OdpMatrix *queries,
								const OdpMatrix *cands, OdpMetric metric, int32_t k,
								double *dist, int64_t *index);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_KNN_H */
