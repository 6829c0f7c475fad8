/*-------------------------------------------------------------------------
 *
 * spatial.c
 *	  Whether the spatial path (spatial.h) takes a call, and its dispatch
 *	  to the CPU or the GPU.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/spatial.c
 *
 *-------------------------------------------------------------------------
 */
#include "common/engine_internal.h"
#include "knn/spatial.h"

/* See spatial.h. */
bool
odp_spatial_possible(OdpMetric metric, int32_t dims, int32_t k)
{
	return (metric == ODP_METRIC_EUCLIDEAN || metric == ODP_METRIC_SQEUCLIDEAN ||
			metric == ODP_METRIC_MANHATTAN || metric == ODP_METRIC_CHEBYSHEV) &&
		dims >= 1 && dims <= ODP_SPATIAL_MAX_DIMS && k >= 1 && k <= ODP_SPATIAL_MAX_K;
}

/* See spatial.h. */
bool
odp_spatial_chosen(const OdpContext *ctx, OdpMetric metric, int32_t dims,
				   int64_t queries, int64_t cands, int32_t k)
{
	if (ctx->spatial == ODP_SPATIAL_OFF || !odp_spatial_possible(metric, dims, k))
		return false;
	if (ctx->spatial == ODP_SPATIAL_ON)
		return true;
	return cands >= ODP_SPATIAL_AUTO_MIN_ROWS && queries >= ODP_SPATIAL_AUTO_MIN_QUERIES;
}

/* See spatial.h. */
OdpStatus
odp_spatial_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
				OdpMetric metric, int32_t k, bool self_join,
				const OdpSpatialOut *out)
{
	ctx->spatial_used = 1;
	ctx->spatial_distances = 0;
	if (ctx->device == ODP_DEVICE_GPU)
		return odp_gpu_spatial_knn(ctx, queries, cands, metric, k, self_join, out);
	return odp_cpu_spatial_knn(ctx, queries, cands, metric, k, self_join, out);
}
