/*-------------------------------------------------------------------------
 *
 * gpu_disabled.c
 *	  The GPU runtime of a build without CUDA (make WITH_CUDA=no): no
 *	  device is ever found, so odp_gpu.device = auto computes on the CPU and
 *	  gpu fails with a clear message.  Each analytic's folder has the same
 *	  for its own GPU entry points (*_gpu_disabled.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_disabled.c
 *
 *-------------------------------------------------------------------------
 */
#include "common/engine_internal.h"
#include "gpu/gpu_runtime.h"
#include "include/odp_resident.h"

/* Reports that this build has no GPU path. */
bool
odp_gpu_compiled(void)
{
	return false;
}

/* Reports that no CUDA version was built in. */
int
odp_gpu_build_version(void)
{
	return 0;
}

/* Finds no GPU, always. */
OdpStatus
odp_gpu_probe(OdpContext *ctx, int *count, int *driver_version,
			  int *runtime_version)
{
	/* every output pointer may be NULL, as in the CUDA build */
	if (count)
		*count = 0;
	if (driver_version)
		*driver_version = 0;
	if (runtime_version)
		*runtime_version = 0;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* Has no device to describe. */
OdpStatus
odp_gpu_device_info(OdpContext *ctx, int index, OdpGpuInfo *info)
{
	(void) index;
	(void) info;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* No device, nothing to recover or poison. */
OdpStatus
odp_gpu_device_recover(OdpContext *ctx, int index, bool *rebuilt)
{
	(void) index;
	*rebuilt = false;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

OdpStatus
odp_gpu_device_poison(OdpContext *ctx, int index)
{
	(void) index;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* Without CUDA nothing is locked; a lazy area is only remembered. */
OdpStatus
odp_gpu_host_area(OdpContext *ctx, void *ptr, size_t bytes, bool eager)
{
	(void) ptr;
	(void) bytes;
	return eager ? odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE) : ODP_OK;
}

OdpStatus
odp_gpu_host_rings(OdpContext *ctx, void *ptr, size_t bytes)
{
	(void) ptr;
	(void) bytes;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* No device copies without CUDA: the calls copy nothing to a device. */
OdpPieceCopies *
odp_piece_copies_begin(const int *ordinals, int n, size_t bytes, const void *source,
					   size_t source_bytes)
{
	(void) ordinals;
	(void) n;
	(void) bytes;
	(void) source;
	(void) source_bytes;
	return NULL;
}

bool
odp_piece_copies_add(OdpPieceCopies *pc, size_t offset, const void *src, size_t len)
{
	(void) pc;
	(void) offset;
	(void) src;
	(void) len;
	return false;
}

bool
odp_piece_copies_wait(OdpPieceCopies *pc)
{
	(void) pc;
	return false;
}

int
odp_piece_copies_views(OdpPieceCopies *pc, const void *host, OdpResidentArray *out)
{
	(void) pc;
	(void) host;
	(void) out;
	return 0;
}

void
odp_piece_copies_end(OdpPieceCopies *pc)
{
	(void) pc;
}

/* Nothing is ever pinned without CUDA. */
void
odp_gpu_pin_thread_disable(void)
{
}

void *
odp_gpu_pin_shared(OdpContext *ctx, const void *ptr, size_t bytes)
{
	(void) ctx;
	(void) ptr;
	(void) bytes;
	return NULL;
}

void
odp_gpu_unpin_shared(OdpContext *ctx, void *pinned)
{
	(void) ctx;
	(void) pinned;
}

/* No device copies without CUDA. */
OdpStatus
OdpGpuResidentMake(OdpContext *ctx, int ordinal, const void *host, size_t bytes,
				   void **copy)
{
	(void) ordinal;
	(void) host;
	(void) bytes;
	*copy = NULL;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

void
OdpGpuResidentFree(int ordinal, void *copy)
{
	(void) ordinal;
	(void) copy;
}
