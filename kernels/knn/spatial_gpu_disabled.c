/*-------------------------------------------------------------------------
 *
 * spatial_gpu_disabled.c
 *	  The GPU spatial path in a build without CUDA (make WITH_CUDA=no).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/spatial_gpu_disabled.c
 *
 *-------------------------------------------------------------------------
 */
#include "common/engine_internal.h"
#include "gpu/gpu_runtime.h"
#include "knn/spatial.h"

/* Cannot run; the dispatcher only gets here when the caller forced it. */
OdpStatus
odp_gpu_spatial_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
					OdpMetric metric, int32_t k, bool self_join, const OdpSpatialOut *out)
{
	(void) queries;
	(void) cands;
	(void) metric;
	(void) k;
	(void) self_join;
	(void) out;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}
