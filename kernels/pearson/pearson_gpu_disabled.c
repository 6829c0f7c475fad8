/*-------------------------------------------------------------------------
 *
 * pearson_gpu_disabled.c
 *	  The GPU entry points of the correlations in a build without CUDA:
 *	  each reports that no GPU is usable (gpu/gpu_disabled.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_gpu_disabled.c
 *
 *-------------------------------------------------------------------------
 */
#include "common/engine_internal.h"
#include "gpu/gpu_runtime.h"
#include "pearson/pearson_internal.h"

/* Cannot run; the correlation dispatcher only gets here when forced. */
OdpStatus
odp_gpu_pearson(OdpContext *ctx, const OdpPearsonJob *job)
{
	(void) job;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* No GPU path for the correlations without CUDA. */
OdpStatus
odp_gpu_pearson_available(OdpContext *ctx)
{
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}
