/*-------------------------------------------------------------------------
 *
 * gpu_blas.cuh
 *	  cuBLAS for the engine, loaded at run time.
 *
 * The library links the CUDA runtime statically so that it loads on hosts
 * without a GPU, a driver or a CUDA toolkit.  cuBLAS is linked no such
 * way: it is opened with dlopen the first time an analytic needs it on
 * the GPU (the correlations' matrix products), by its soname for the
 * major version built against, through the usual library search and then
 * in the toolkit directory the build used.  Where it cannot be found the
 * GPU path of those analytics reports ODP_ERR_NO_GPU and says why; the
 * CPU path and every other analytic are unaffected.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_blas.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_BLAS_CUH
#define ODP_GPU_BLAS_CUH

/* declarations only: nothing of cuBLAS is linked */
#include <cublas_v2.h>

#include "common/engine_internal.h"
#include "include/odp_engine.h"

/* The cuBLAS entry points the engine calls. */
typedef struct OdpBlas
{
	decltype(&cublasCreate_v2) create;
	decltype(&cublasDestroy_v2) destroy;
	decltype(&cublasSetStream_v2) set_stream;
	decltype(&cublasSetWorkspace_v2) set_workspace;
	decltype(&cublasDgemm_v2) dgemm;
	decltype(&cublasDgeam) dgeam;
	decltype(&cublasGetStatusName) status_name;
} OdpBlas;

/* Workspace bytes a handle gets (cuBLAS recommends 32 MiB on Hopper). */
#define ODP_BLAS_WORKSPACE	((size_t) 32 << 20)

/*
 * Loads cuBLAS once per process and points *blas at its entry points.
 * Returns ODP_ERR_NO_GPU with the reason (the dlopen error) when it cannot
 * be loaded; the outcome is cached.
 */
extern OdpStatus OdpBlasLoad(OdpContext *ctx, const OdpBlas **blas);

/*
 * Gives a handle of the current device, one kept from an earlier call or
 * a new one, that runs on stream with the given device workspace
 * (ODP_BLAS_WORKSPACE bytes, from the caller's arena, so that cuBLAS
 * allocates nothing of its own).  The caller hands it back with
 * OdpBlasEnd on every path, with the same device current.
 */
extern OdpStatus OdpBlasBegin(OdpContext *ctx, const OdpBlas *blas,
							  cudaStream_t stream, void *workspace,
							  cublasHandle_t *handle);

/*
 * Ends a call's use of a handle (NULL: none): kept for the next call
 * when keep (the call's work succeeded: the handle is sound), else
 * destroyed.  Its stream and workspace are set again before any use.
 */
extern void OdpBlasEnd(const OdpBlas *blas, cublasHandle_t handle, bool keep);

/*
 * Records a failed cuBLAS call ("<what>: <CUBLAS_STATUS_...>") and returns
 * its status: ODP_ERR_GPU_OOM for an allocation failure, else ODP_ERR_GPU.
 */
extern OdpStatus OdpBlasFail(OdpContext *ctx, const OdpBlas *blas,
							 cublasStatus_t st, const char *what);

/* Runs a cuBLAS call; on failure sets "status" and jumps to cleanup. */
#define ODP_BLAS_TRY(ctx, blas, call, what) \
	do { \
		cublasStatus_t odp_bst_ = (call); \
		if (odp_bst_ != CUBLAS_STATUS_SUCCESS) \
		{ \
			status = OdpBlasFail((ctx), (blas), odp_bst_, (what)); \
			goto cleanup; \
		} \
	} while (0)

#endif							/* ODP_GPU_BLAS_CUH */
