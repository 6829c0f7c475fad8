/*-------------------------------------------------------------------------
 *
 * gpu_check.cuh
 *	  Check macros for every CUDA runtime and CUB call of the engine.
 *
 * A failed call never aborts, throws or exits: the macro records a status
 * and a message naming the CUDA error (e.g. cudaErrorMemoryAllocation) and
 * what was being done into the OdpContext, then either jumps to the
 * caller's "cleanup" label (ODP_CUDA_TRY, ODP_CUDA_TRY_LAUNCH) or returns
 * the status (ODP_CUDA_RETURN).  Functions using ODP_CUDA_TRY declare a
 * local "OdpStatus status" and a "cleanup:" label that frees everything;
 * in C++ a goto may not jump over an initialised declaration, so they
 * declare their variables at the top, PostgreSQL style.
 *
 * Building with -DODP_SYNC_CHECK makes every launch check synchronise its
 * stream, so that an asynchronous fault is reported at the launch that
 * caused it (debugging only: it serialises the host and the GPU).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_check.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_CHECK_CUH
#define ODP_GPU_CHECK_CUH

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "include/odp_engine.h"

/*
 * Maps a CUDA error to an engine status: cudaErrorMemoryAllocation is
 * ODP_ERR_GPU_OOM, a missing or unusable driver or device ODP_ERR_NO_GPU,
 * anything else ODP_ERR_GPU.
 */
extern OdpStatus OdpGpuStatusOf(cudaError_t err);

/*
 * Records a failed CUDA call in ctx ("<what>: <cudaErrorName> (<text>)")
 * and returns its status.  Also clears CUDA's non-sticky last error so the
 * next call in this thread does not see it again.  "what" says what was
 * being done, e.g. "copying the input rows to the GPU".
 */
extern OdpStatus OdpGpuFail(OdpContext *ctx, cudaError_t err,
							const char *what, const char *file, int line);

#ifdef ODP_SYNC_CHECK
#define ODP_LAUNCH_SYNC(stream) cudaStreamSynchronize(stream)
#else
#define ODP_LAUNCH_SYNC(stream) cudaSuccess
#endif

/* Runs a CUDA/CUB call; on failure sets "status" and jumps to cleanup. */
#define ODP_CUDA_TRY(ctx, call, what) \
	do { \
		cudaError_t odp_err_ = (call); \
		if (odp_err_ != cudaSuccess) \
		{ \
			status = OdpGpuFail((ctx), odp_err_, (what), __FILE__, __LINE__); \
			goto cleanup; \
		} \
	} while (0)

/* Runs a step that returns an OdpStatus; on failure sets "status" and jumps to cleanup. */
#define ODP_TRY(expr) \
	do { \
		status = (expr); \
		if (status != ODP_OK) \
			goto cleanup; \
	} while (0)

/* Runs a CUDA/CUB call; on failure returns its status. */
#define ODP_CUDA_RETURN(ctx, call, what) \
	do { \
		cudaError_t odp_err_ = (call); \
		if (odp_err_ != cudaSuccess) \
			return OdpGpuFail((ctx), odp_err_, (what), __FILE__, __LINE__); \
	} while (0)

/*
 * Checks a kernel launch just made on stream: launch errors always, and
 * execution errors too under ODP_SYNC_CHECK.  Sets "status" and jumps to
 * cleanup on failure.
 */
#define ODP_CUDA_TRY_LAUNCH(ctx, stream, what) \
	do { \
		ODP_CUDA_TRY((ctx), cudaGetLastError(), (what)); \
		ODP_CUDA_TRY((ctx), ODP_LAUNCH_SYNC(stream), (what)); \
	} while (0)

/* Same as ODP_CUDA_TRY_LAUNCH, returning the status instead. */
#define ODP_CUDA_RETURN_LAUNCH(ctx, stream, what) \
	do { \
		ODP_CUDA_RETURN((ctx), cudaGetLastError(), (what)); \
		ODP_CUDA_RETURN((ctx), ODP_LAUNCH_SYNC(stream), (what)); \
	} while (0)

#endif							/* ODP_GPU_CHECK_CUH */
