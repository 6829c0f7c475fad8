/*-------------------------------------------------------------------------
 *
 * gpu_runtime.cuh
 *	  GPU runtime helpers shared by every analytic: device selection, the
 *	  memory budget and a tracking allocator.
 *
 * Every GPU entry point starts with OdpGpuBegin (probe, select device,
 * compute the budget), takes all device memory from one OdpGpuArena, and
 * ends with OdpGpuArenaRelease on every path, errors and cancellation
 * included.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_runtime.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_RUNTIME_CUH
#define ODP_GPU_RUNTIME_CUH

#include <signal.h>

#include <cuda_runtime.h>

#include "gpu/gpu_check.cuh"

/* Share of cudaMemGetInfo's free memory the engine may use by default. */
#define ODP_GPU_FREE_SHARE		0.90

/* Allocations are counted against the budget in units of this size. */
#define ODP_GPU_ALLOC_ALIGN		((size_t) 512)

/* Most allocations one arena tracks; a call needs at most about 30. */
#define ODP_GPU_ARENA_MAX		64

/* What OdpGpuBegin learned about the selected device. */
typedef struct OdpGpuDevice
{
	int			id;				/* CUDA ordinal (odp_device_first) */
	int			sm_count;		/* multiprocessors */
	int			cc_major;
	int			cc_minor;
	size_t		smem_per_block;	/* opt-in shared memory per block */
	size_t		smem_per_sm;	/* shared memory per multiprocessor */
	size_t		free_memory;	/* cudaMemGetInfo at begin */
	size_t		total_memory;
	size_t		budget;			/* bytes this call may allocate */
} OdpGpuDevice;

/* Device allocations of one call, freed together. */
typedef struct OdpGpuArena
{
	void	   *ptr[ODP_GPU_ARENA_MAX];
	size_t		bytes[ODP_GPU_ARENA_MAX];
	cudaStream_t stream[ODP_GPU_ARENA_MAX];	/* stream-ordered, or NULL */
	int			count;
	size_t		used;			/* sum of rounded sizes */
	size_t		budget;			/* 0 = unlimited */
} OdpGpuArena;

/*
 * Probes CUDA (cached), validates the one device a GPU path runs on
 * (odp_device_first: ctx->gpu_id, or the first of ctx's device list; a
 * split call gives each part a context of its own), makes it current
 * and fills *dev, including the budget: min(ctx->gpu_memory_limit when
 * nonzero, 90% of the device's free memory).  Returns ODP_ERR_NO_GPU when
 * no GPU is usable and ODP_ERR_INVALID_ARGUMENT for a bad gpu_id.
 */
extern OdpStatus OdpGpuBegin(OdpContext *ctx, OdpGpuDevice *dev);

/* Starts an empty arena that refuses to exceed budget bytes (0: no cap). */
extern void OdpGpuArenaInit(OdpGpuArena *arena, size_t budget);

/*
 * Allocates bytes of device memory into *ptr and records it in arena.
 * Fails with ODP_ERR_GPU_OOM, naming what and the sizes, when the budget
 * or the device is exhausted.  The caller must eventually call
 * OdpGpuArenaRelease, also on error paths.
 */
extern OdpStatus OdpGpuArenaAlloc(OdpContext *ctx, OdpGpuArena *arena,
								  size_t bytes, const char *what,
								  void **ptr);

/*
 * OdpGpuArenaAlloc in stream's order, from the device's pool
 * (cudaMallocAsync), given back in that order at release: cudaFree waits
 * for every stream of the device, and calls that run beside others (the
 * GPU service's few-query k-NN passes) would wait for each other's
 * kernels.  The pool keeps up to 256 MB between calls.  stream must
 * outlive the arena's release.
 */
extern OdpStatus OdpGpuArenaAllocAsync(OdpContext *ctx, OdpGpuArena *arena,
									   size_t bytes, const char *what,
									   cudaStream_t stream, void **ptr);

/*
 * Frees one allocation of the arena (ptr NULL or unknown: nothing), so
 * that a buffer can be replaced by a larger one within the budget.
 */
extern void OdpGpuArenaFree(OdpGpuArena *arena, void *ptr);

/*
 * Frees everything the arena holds.  Errors are ignored (and cleared):
 * this runs on error paths where the context may already be broken.
 */
extern void OdpGpuArenaRelease(OdpGpuArena *arena);

/*
 * Blocks every signal in the calling thread (saving the old mask in *old)
 * around calls that may start CUDA's or a CUDA library's helper threads,
 * so that they inherit a mask that keeps the host program's signal
 * handlers on its own threads; OdpSignalsRestore puts the mask back.
 */
/*
 * How many times this process rebuilt device index's context
 * (odp_gpu_device_recover): what lived in the old one, such as a kept
 * cuBLAS handle, is gone.
 */
extern unsigned OdpGpuContextGeneration(int index);

extern void OdpSignalsBlock(sigset_t *old);
extern void OdpSignalsRestore(const sigset_t *old);

/*
 * Page-locks a large input (ODP_GPU_PIN_BYTES or more) for its copy to
 * the GPU and returns it, or NULL when it is small, lies in the process's
 * staging area (odp_gpu_host_area: locked already), odp_gpu_pin_inputs is
 * clear or locking fails (no error: the copy is then pageable).  A copy
 * from pageable memory goes through the driver's staging buffers at a few
 * GB/s; from page-locked memory the GPU reads at the bus's speed, and an
 * input filled just before is resident already, so locking it is cheap.
 * The time goes to ctx->transfer_ms, as does OdpGpuUnpinHost's.  The
 * parts of a split call never pin (odp_gpu_pin_thread_disable): they
 * share their inputs, and one part unregistering a range while another
 * copies from it, or registering pages another part registered, would
 * race.
 */
#define ODP_GPU_PIN_BYTES		((size_t) 64 << 20)
extern "C" int odp_gpu_pin_inputs;	/* benchmarks clear it to compare */
extern void *OdpGpuPinHost(OdpContext *ctx, const void *ptr, size_t bytes);
extern void OdpGpuUnpinHost(OdpContext *ctx, void *pinned);

/*
 * Raises kernel fn's dynamic shared memory limit on the current device to
 * at least bytes, never lowering it.  The limit is per function and
 * device, shared by every thread: two parts of a split call on one device
 * that set it to their own sizes in turn could leave it below what the
 * other then launches with (cudaErrorLaunchOutOfResources), so it only
 * grows, under a process-wide lock.  A limit above a launch's need is
 * harmless: occupancy follows the launch's own size.
 */
extern cudaError_t OdpGpuFuncSharedAtLeast(const void *fn, size_t bytes);

/*
 * The copy on the current device of bytes of an input at host src, where
 * src lies in a copy this call holds there (ctx->resident,
 * odp_resident.h); NULL where it does not.  Read only: a copy serves
 * every later call.
 */
extern const void *OdpGpuResidentOn(const OdpContext *ctx, const void *src, size_t bytes);

/*
 * Copies bytes of an input at host src to dst on the current device, as
 * cudaMemcpyAsync (cudaMemcpyDefault) would, but on the device where src
 * lies in a copy this call holds there (ctx->resident, odp_resident.h):
 * a repeated call on a cached table does not cross the bus again.
 */
extern cudaError_t OdpGpuCopyIn(const OdpContext *ctx, void *dst, const void *src,
								size_t bytes, cudaStream_t stream);

/*
 * Whether [ptr, ptr + bytes) lies in host memory the engine keeps
 * page-locked (the staging area, the GPU service's rings): copies from it
 * are asynchronous and run at the bus's speed.
 */
extern bool OdpGpuHostLocked(const void *ptr, size_t bytes);

/* Bytes an allocation of n bytes counts against the budget. */
static inline size_t
OdpGpuRounded(size_t n)
{
	return (n + ODP_GPU_ALLOC_ALIGN - 1) / ODP_GPU_ALLOC_ALIGN * ODP_GPU_ALLOC_ALIGN;
}

/* Sets *r = a * b; returns false on size_t overflow. */
static inline bool
OdpSizeMul(size_t a, size_t b, size_t *r)
{
	if (a != 0 && b > SIZE_MAX / a)
		return false;
	*r = a * b;
	return true;
}

/* Sets *r = a + b; returns false on size_t overflow. */
static inline bool
OdpSizeAdd(size_t a, size_t b, size_t *r)
{
	if (b > SIZE_MAX - a)
		return false;
	*r = a + b;
	return true;
}

#endif							/* ODP_GPU_RUNTIME_CUH */
