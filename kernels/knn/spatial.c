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
#include <math.h>

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
void
odp_spatial_frame(OdpSpatialFrame *f, int32_t dims, const double *lo,
				  const double *hi)
{
	const double top = dims <= 2 ? 4294967295.0 : 2097151.0;

	f->dims = dims;
	for (int d = 0; d < ODP_SPATIAL_MAX_DIMS; d++)
	{
		double		extent = d < dims ? hi[d] * 0.5 - lo[d] * 0.5 : 0.0;

		f->lo[d] = d < dims ? lo[d] * 0.5 : 0.0;
		f->scale[d] = extent > 0.0 && isfinite(top / extent) ? top / extent : 0.0;
	}
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
