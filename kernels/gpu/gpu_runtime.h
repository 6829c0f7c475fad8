/*-------------------------------------------------------------------------
 *
 * gpu_runtime.h
 *	  The GPU runtime's entry points that C files may call (the rest is
 *	  in gpu_runtime.cuh, for CUDA files).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_runtime.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_RUNTIME_H
#define ODP_GPU_RUNTIME_H

#include "include/odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Makes OdpGpuPinHost return NULL in the calling thread from now on: the
 * threads of a split call's parts (device_set.c), which share inputs, copy
 * them unpinned.  Nothing without CUDA.
 */
extern void odp_gpu_pin_thread_disable(void);

/*
 * Page-locks bytes at ptr for every device, for the parts of a split to
 * copy at the bus's page-locked speed (they never page-lock their shared
 * inputs themselves, OdpGpuPinHost); NULL where it did not (small, already
 * locked, pinning off or refused).  The time goes to ctx->transfer_ms;
 * odp_gpu_unpin_shared undoes it.
 */
extern void *odp_gpu_pin_shared(OdpContext *ctx, const void *ptr, size_t bytes);
extern void odp_gpu_unpin_shared(OdpContext *ctx, void *pinned);

/*
 * A table cache copy's device memory (gpu_resident.c): bytes at host
 * copied into a new allocation on device ordinal (*copy), and freed.
 * Make fails with ODP_ERR_GPU_OOM where the device has no room.
 */
extern OdpStatus OdpGpuResidentMake(OdpContext *ctx, int ordinal, const void *host,
									size_t bytes, void **copy);
extern void OdpGpuResidentFree(int ordinal, void *copy);

/* What every GPU entry point of a build without CUDA reports. */
#define ODP_NO_CUDA_MESSAGE "odp_gpu was built without CUDA (make WITH_CUDA=no)"


#ifdef __cplusplus
}
#endif

#endif							/* ODP_GPU_RUNTIME_H */
