/*-------------------------------------------------------------------------
 *
 * skyline_gpu_disabled.c
 *	  The GPU entry point of the skyline in a build without CUDA: it
 *	  reports that no GPU is usable (gpu/gpu_disabled.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_gpu_disabled.c
 *
 *-------------------------------------------------------------------------
 */
#include "common/engine_internal.h"
#include "gpu/gpu_runtime.h"
#include "skyline/skyline_internal.h"

/* Cannot run; the skyline dispatcher only gets here when forced. */
OdpStatus
odp_gpu_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
				int32_t *dominated_by, OdpSkylineStats *stats)
{
	(void) p;
	(void) dominated_by;
	(void) stats;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

OdpStatus
odp_gpu_skyline_part(OdpContext *ctx, const OdpSkylineProblem *p,
					 int32_t *dominated_by, OdpSkylineStats *stats,
					 OdpSkyTeam *team, int part)
{
	(void) team;
	(void) part;
	return odp_gpu_skyline(ctx, p, dominated_by, stats);
}
