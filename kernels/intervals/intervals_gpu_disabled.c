/*-------------------------------------------------------------------------
 *
 * intervals_gpu_disabled.c
 *	  The GPU backend of the region matching in a build without CUDA: it
 *	  reports that no GPU is usable (gpu/gpu_disabled.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_gpu_disabled.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "common/engine_internal.h"
#include "gpu/gpu_runtime.h"
#include "intervals/intervals_internal.h"

/* Cannot run; the matching driver only gets here when forced. */
OdpStatus
odp_gpu_iv_backend(OdpContext *ctx, const OdpIvPrep *prep, OdpIvBackend *backend)
{
	(void) prep;
	memset(backend, 0, sizeof(*backend));
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}
