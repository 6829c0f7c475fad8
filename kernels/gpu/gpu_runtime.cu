/*-------------------------------------------------------------------------
 *
 * gpu_runtime.cu
 *	  GPU runtime shared by all analytics: lazy probing, device info,
 *	  device selection, the memory budget and the tracking allocator.
 *
 * The library links cudart statically, so it loads on hosts with neither
 * a driver nor a GPU.  Nothing here runs at load time: CUDA is first
 * touched by the first odp_gpu_probe (directly or through OdpGpuBegin),
 * in the calling process, which for PostgreSQL is a backend and never the
 * postmaster (a CUDA context does not survive fork).  The probe's outcome
 * is cached per process; the engine is called from one thread per
 * process, so the cache needs no lock.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_runtime.cu
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "gpu/gpu_runtime.h"
#include "include/odp_resident.h"

/* The cached outcome of the first probe in this process. */
typedef struct OdpProbeCache
{
	bool		done;
	OdpStatus	status;
	int			count;
	int			driver_version;
	int			runtime_version;
	char		message[ODP_MESSAGE_LEN];
} OdpProbeCache;

static OdpProbeCache probe_cache;

/*
 * Maps a CUDA error to the engine status the caller reports.  The "no
 * GPU" family covers everything that means the machine cannot run CUDA at
 * all, as opposed to a CUDA call failing on a working GPU.
 */
OdpStatus
OdpGpuStatusOf(cudaError_t err)
{
	switch (err)
	{
		case cudaSuccess:
			return ODP_OK;
		case cudaErrorMemoryAllocation:
			return ODP_ERR_GPU_OOM;
		case cudaErrorNoDevice:
		case cudaErrorInsufficientDriver:
		case cudaErrorInitializationError:
		case cudaErrorStubLibrary:
		case cudaErrorDevicesUnavailable:
		case cudaErrorSystemNotReady:
		case cudaErrorSystemDriverMismatch:
		case cudaErrorCompatNotSupportedOnDevice:
		case cudaErrorInvalidDevice:
			return ODP_ERR_NO_GPU;
		default:
			return ODP_ERR_GPU;
	}
}

/*
 * Records a failed CUDA call in ctx and returns its status; see
 * gpu_check.cuh.  file and line are kept out of the message (users read
 * it) but feed the debug build's stderr trace.
 */
OdpStatus
OdpGpuFail(OdpContext *ctx, cudaError_t err, const char *what,
		   const char *file, int line)
{
	OdpStatus	status = OdpGpuStatusOf(err);

	/* clear the non-sticky error state so later calls start clean */
	(void) cudaGetLastError();
#ifdef ODP_SYNC_CHECK
	fprintf(stderr, "odp_gpu: %s:%d: %s: %s\n", file, line, what,
			cudaGetErrorName(err));
#else
	(void) file;
	(void) line;
#endif
	if (status == ODP_OK)
		status = ODP_ERR_INTERNAL;
	return odp_fail(ctx, status, "%s: %s (%s)", what, cudaGetErrorName(err),
					cudaGetErrorString(err));
}

/* The GPU path is compiled into this build. */
extern "C" bool
odp_gpu_compiled(void)
{
	return true;
}

/* CUDA runtime version this library was compiled against. */
extern "C" int
odp_gpu_build_version(void)
{
	return CUDART_VERSION;
}

/*
 * Blocks every signal in the calling thread, saving the old mask in *old.
 *
 * CUDA starts helper threads when it loads the driver and when it creates
 * a device's context; they inherit the creating thread's signal mask.
 * Creating them with every signal blocked keeps the host program's signal
 * handlers (in PostgreSQL: cancel, terminate, latch wake-ups) on the host
 * program's own threads.
 */
void
OdpSignalsBlock(sigset_t *old)
{
	sigset_t	all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
}

/* Restores the mask saved by OdpSignalsBlock. */
void
OdpSignalsRestore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * Runs the real probe once and fills probe_cache.  The message explains
 * in words why no GPU is usable, with the CUDA error name for searching.
 */
static void
OdpProbeOnce(void)
{
	OdpProbeCache *pc = &probe_cache;
	cudaError_t err;
	int			count = 0;
	sigset_t	old_mask;

	pc->done = true;
	pc->status = ODP_OK;
	pc->message[0] = '\0';
	pc->count = 0;
	pc->driver_version = 0;
	pc->runtime_version = 0;

	OdpSignalsBlock(&old_mask);
	/* both work without a driver; the driver version is then 0 */
	if (cudaDriverGetVersion(&pc->driver_version) != cudaSuccess)
		pc->driver_version = 0;
	if (cudaRuntimeGetVersion(&pc->runtime_version) != cudaSuccess)
		pc->runtime_version = CUDART_VERSION;
	(void) cudaGetLastError();

	err = cudaGetDeviceCount(&count);
	(void) cudaGetLastError();
	OdpSignalsRestore(&old_mask);
	if (err == cudaSuccess && count > 0)
	{
		pc->count = count;
		return;
	}

	pc->status = ODP_ERR_NO_GPU;
	if (err == cudaSuccess || err == cudaErrorNoDevice)
		snprintf(pc->message, sizeof(pc->message),
				 "no CUDA device (cudaErrorNoDevice)");
	else if (err == cudaErrorInsufficientDriver && pc->driver_version == 0)
		snprintf(pc->message, sizeof(pc->message),
				 "no NVIDIA driver found (cudaErrorInsufficientDriver)");
	else if (err == cudaErrorInsufficientDriver)
		snprintf(pc->message, sizeof(pc->message),
				 "NVIDIA driver too old: it supports CUDA %d.%d, this build needs %d.%d (cudaErrorInsufficientDriver)",
				 pc->driver_version / 1000, (pc->driver_version % 1000) / 10,
				 CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
	else
		snprintf(pc->message, sizeof(pc->message),
				 "CUDA is not usable: %s (%s)",
				 cudaGetErrorName(err), cudaGetErrorString(err));
}

/*
 * Initialises CUDA lazily and counts devices; see odp_engine.h.  Every
 * output pointer may be NULL.  The outcome is cached, so a host without a
 * driver pays for the failed initialisation once.
 */
extern "C" OdpStatus
odp_gpu_probe(OdpContext *ctx, int *count, int *driver_version,
			  int *runtime_version)
{
	if (!probe_cache.done)
		OdpProbeOnce();

	if (count)
		*count = probe_cache.count;
	if (driver_version)
		*driver_version = probe_cache.driver_version;
	if (runtime_version)
		*runtime_version = probe_cache.runtime_version;
	if (probe_cache.status != ODP_OK)
		return odp_fail(ctx, probe_cache.status, "%s", probe_cache.message);
	return ODP_OK;
}

/*
 * Checks that a GPU is usable and index names one of its devices.
 * Returns ODP_ERR_NO_GPU or ODP_ERR_INVALID_ARGUMENT with a message.
 */
static OdpStatus
OdpGpuCheckIndex(OdpContext *ctx, int index, const char *what)
{
	OdpStatus	status;
	int			count = 0;

	status = odp_gpu_probe(ctx, &count, NULL, NULL);
	if (status != ODP_OK)
		return status;
	if (index < 0 || index >= count)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%s %d does not exist: this host has %d CUDA device%s (ordinals 0 to %d)",
						what, index, count, count == 1 ? "" : "s", count - 1);
	return ODP_OK;
}

/*
 * Fills *info for device ordinal index.  Creates that device's primary
 * context (needed for the free-memory figure) and restores the previously
 * current device afterwards.
 */
extern "C" OdpStatus
odp_gpu_device_info(OdpContext *ctx, int index, OdpGpuInfo *info)
{
	OdpStatus	status;
	cudaDeviceProp prop;
	int			previous = 0;
	size_t		free_b = 0;
	size_t		total_b = 0;

	status = OdpGpuCheckIndex(ctx, index, "device");
	if (status != ODP_OK)
		return status;

	memset(info, 0, sizeof(*info));
	ODP_CUDA_RETURN(ctx, cudaGetDeviceProperties(&prop, index),
					"reading the GPU's properties");
	ODP_CUDA_RETURN(ctx, cudaGetDevice(&previous), "reading the current GPU");
	ODP_CUDA_RETURN(ctx, cudaSetDevice(index), "selecting the GPU");
	status = ODP_OK;
	{
		cudaError_t err;
		sigset_t	old_mask;

		/* the first call on a device creates its context */
		OdpSignalsBlock(&old_mask);
		err = cudaMemGetInfo(&free_b, &total_b);
		OdpSignalsRestore(&old_mask);
		if (err != cudaSuccess)
			status = OdpGpuFail(ctx, err, "reading the GPU's free memory",
								__FILE__, __LINE__);
	}
	(void) cudaSetDevice(previous);
	(void) cudaGetLastError();
	if (status != ODP_OK)
		return status;

	info->index = index;
	snprintf(info->name, sizeof(info->name), "%s", prop.name);
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	info->multiprocessors = prop.multiProcessorCount;
	info->total_memory = total_b;
	info->free_memory = free_b;
	return ODP_OK;
}

static void OdpGpuAreaLock(OdpContext *ctx);

/* See gpu_runtime.cuh. */
OdpStatus
OdpGpuBegin(OdpContext *ctx, OdpGpuDevice *dev)
{
	OdpStatus	status;
	size_t		share;
	sigset_t	old_mask;
	cudaError_t err;
	int			smem_block = 0,
				smem_sm = 0;

	const int	id = odp_device_first(ctx);

	memset(dev, 0, sizeof(*dev));
	status = OdpGpuCheckIndex(ctx, id, ctx->gpu_count == 0 ? "gpu_id" : "device");
	if (status != ODP_OK)
		return status;

	ODP_CUDA_RETURN(ctx, cudaSetDevice(id), "selecting the GPU");
	/* the first call on a device creates its context */
	OdpSignalsBlock(&old_mask);
	err = cudaMemGetInfo(&dev->free_memory, &dev->total_memory);
	OdpSignalsRestore(&old_mask);
	ODP_CUDA_RETURN(ctx, err, "reading the GPU's free memory");
	OdpGpuAreaLock(ctx);

	/*
	 * Attributes one by one: cudaGetDeviceProperties reads every property
	 * and took milliseconds, a cost each call paid again.
	 */
	dev->id = id;
	ODP_CUDA_RETURN(ctx, cudaDeviceGetAttribute(&dev->sm_count, cudaDevAttrMultiProcessorCount, dev->id),
					"reading the GPU's properties");
	ODP_CUDA_RETURN(ctx, cudaDeviceGetAttribute(&dev->cc_major, cudaDevAttrComputeCapabilityMajor, dev->id),
					"reading the GPU's properties");
	ODP_CUDA_RETURN(ctx, cudaDeviceGetAttribute(&dev->cc_minor, cudaDevAttrComputeCapabilityMinor, dev->id),
					"reading the GPU's properties");
	ODP_CUDA_RETURN(ctx, cudaDeviceGetAttribute(&smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev->id),
					"reading the GPU's properties");
	ODP_CUDA_RETURN(ctx, cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev->id),
					"reading the GPU's properties");
	dev->smem_per_block = (size_t) smem_block;
	dev->smem_per_sm = (size_t) smem_sm;

	share = (size_t) ((double) dev->free_memory * ODP_GPU_FREE_SHARE);
	dev->budget = share;
	if (ctx->gpu_memory_limit != 0 && ctx->gpu_memory_limit < share)
		dev->budget = ctx->gpu_memory_limit;
	return ODP_OK;
}

/* See gpu_runtime.cuh. */
void
OdpGpuArenaInit(OdpGpuArena *arena, size_t budget)
{
	memset(arena, 0, sizeof(*arena));
	arena->budget = budget;
}

/*
 * Bytes a device's pool of stream-ordered allocations keeps between
 * calls: the few-query k-NN passes' scratch, taken and given back
 * hundreds of times a second, would otherwise be mapped and unmapped at
 * each wait.
 */
#define ODP_GPU_POOL_KEEP	((uint64_t) 256 << 20)

/* Allocates for OdpGpuArenaAlloc(Async): stream NULL takes cudaMalloc. */
static OdpStatus
ArenaAllocOn(OdpContext *ctx, OdpGpuArena *arena, size_t bytes, const char *what,
			 cudaStream_t stream, void **ptr)
{
	char		doing[256];
	size_t		rounded = OdpGpuRounded(bytes == 0 ? 1 : bytes);
	void	   *p = NULL;
	cudaError_t err;

	*ptr = NULL;
	if (arena->count >= ODP_GPU_ARENA_MAX)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"too many GPU allocations in one call (%d) for %s",
						arena->count, what);
	if (arena->budget != 0 &&
		(rounded > arena->budget || arena->used > arena->budget - rounded))
		return odp_fail(ctx, ODP_ERR_GPU_OOM,
						"GPU memory budget exceeded: %s needs %zu bytes, %zu of the %zu-byte budget are in use",
						what, bytes, arena->used, arena->budget);

	if (stream != NULL)
	{
		int			id = 0;
		cudaMemPool_t pool;
		uint64_t	keep = ODP_GPU_POOL_KEEP;

		/*
		 * Set at every call, not once: a context rebuilt after a fault has
		 * a new pool.  Failing, the pool only keeps less.
		 */
		if (cudaGetDevice(&id) != cudaSuccess ||
			cudaDeviceGetDefaultMemPool(&pool, id) != cudaSuccess ||
			cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
			(void) cudaGetLastError();
		err = cudaMallocAsync(&p, rounded, stream);
	}
	else
		err = cudaMalloc(&p, rounded);
	if (err != cudaSuccess)
	{
		snprintf(doing, sizeof(doing),
				 "allocating %zu bytes of GPU memory for %s (%zu already allocated)",
				 bytes, what, arena->used);
		return OdpGpuFail(ctx, err, doing, __FILE__, __LINE__);
	}
	arena->ptr[arena->count] = p;
	arena->bytes[arena->count] = rounded;
	arena->stream[arena->count] = stream;
	arena->count++;
	arena->used += rounded;
	*ptr = p;
	return ODP_OK;
}

/* See gpu_runtime.cuh. */
OdpStatus
OdpGpuArenaAlloc(OdpContext *ctx, OdpGpuArena *arena, size_t bytes,
				 const char *what, void **ptr)
{
	return ArenaAllocOn(ctx, arena, bytes, what, NULL, ptr);
}

/* See gpu_runtime.cuh. */
OdpStatus
OdpGpuArenaAllocAsync(OdpContext *ctx, OdpGpuArena *arena, size_t bytes,
					  const char *what, cudaStream_t stream, void **ptr)
{
	return ArenaAllocOn(ctx, arena, bytes, what, stream, ptr);
}

/* See gpu_runtime.h. */
extern "C" OdpStatus
OdpGpuResidentMake(OdpContext *ctx, int ordinal, const void *host, size_t bytes,
				   void **copy)
{
	char		doing[256];
	void	   *p = NULL;
	cudaError_t err;

	*copy = NULL;
	ODP_CUDA_RETURN(ctx, cudaSetDevice(ordinal), "selecting the GPU");
	err = cudaMalloc(&p, bytes > 0 ? bytes : 1);
	if (err == cudaSuccess)
		err = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
	if (err != cudaSuccess)
	{
		if (p != NULL)
			(void) cudaFree(p);
		snprintf(doing, sizeof(doing),
				 "keeping a table cache copy of %zu bytes on the GPU", bytes);
		return OdpGpuFail(ctx, err, doing, __FILE__, __LINE__);
	}
	*copy = p;
	return ODP_OK;
}

/* See gpu_runtime.h. */
extern "C" void
OdpGpuResidentFree(int ordinal, void *copy)
{
	if (cudaSetDevice(ordinal) == cudaSuccess)
		(void) cudaFree(copy);
	(void) cudaGetLastError();
}

/* See gpu_runtime.cuh. */
const void *
OdpGpuResidentOn(const OdpContext *ctx, const void *src, size_t bytes)
{
	const char *s = (const char *) src;
	int			device = -1;

	for (int i = 0; i < ctx->nresident; i++)
	{
		const OdpResidentArray *r = &ctx->resident[i];

		if (r->ordinal == ODP_RESIDENT_HOST || s < r->host || s + bytes > r->host + r->bytes)
			continue;
		if (device < 0 && cudaGetDevice(&device) != cudaSuccess)
			return NULL;
		if (r->ordinal == device)
			return r->copy + (s - r->host);
	}
	return NULL;
}

/* See gpu_runtime.cuh. */
cudaError_t
OdpGpuCopyIn(const OdpContext *ctx, void *dst, const void *src, size_t bytes,
			 cudaStream_t stream)
{
	const void *copy = OdpGpuResidentOn(ctx, src, bytes);

	if (copy != NULL)
		return cudaMemcpyAsync(dst, copy, bytes, cudaMemcpyDeviceToDevice, stream);
	return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
}

/* Gives allocation i back: in its stream's order, or at once. */
static void
ArenaFreeOne(OdpGpuArena *arena, int i)
{
	if (arena->stream[i] != NULL)
		(void) cudaFreeAsync(arena->ptr[i], arena->stream[i]);
	else
		(void) cudaFree(arena->ptr[i]);
}

/* See gpu_runtime.cuh. */
void
OdpGpuArenaFree(OdpGpuArena *arena, void *ptr)
{
	for (int i = 0; i < arena->count; i++)
	{
		if (arena->ptr[i] != ptr)
			continue;
		ArenaFreeOne(arena, i);
		(void) cudaGetLastError();
		arena->used -= arena->bytes[i];
		arena->ptr[i] = arena->ptr[arena->count - 1];
		arena->bytes[i] = arena->bytes[arena->count - 1];
		arena->stream[i] = arena->stream[arena->count - 1];
		arena->count--;
		return;
	}
}

/* See gpu_runtime.cuh. */
void
OdpGpuArenaRelease(OdpGpuArena *arena)
{
	for (int i = arena->count - 1; i >= 0; i--)
		ArenaFreeOne(arena, i);
	(void) cudaGetLastError();
	arena->count = 0;
	arena->used = 0;
}

/* See gpu_runtime.cuh. */
int			odp_gpu_pin_inputs = 1;

/* Whether this thread runs a part of a split call: it then never pins. */
static __thread bool pin_disabled = false;

/* See gpu_runtime.h. */
extern "C" void
odp_gpu_pin_thread_disable(void)
{
	pin_disabled = true;
}

/*
 * The staging area (odp_gpu_host_area): declared by the host program's
 * thread, locked by it or by the first GPU call after, which may run in
 * an engine thread (a split call's parts run in several): under a mutex.
 */
static pthread_mutex_t area_lock = PTHREAD_MUTEX_INITIALIZER;
static char *area_base = NULL;
static size_t area_bytes = 0;
static bool area_locked = false;

/* Locks the declared area if not yet (area_lock held); false on failure. */
static bool
OdpGpuAreaLockHeld(char *message, size_t len)
{
	cudaError_t err;

	if (area_base == NULL || area_locked)
		return true;
	err = cudaHostRegister(area_base, area_bytes, cudaHostRegisterPortable);
	if (err != cudaSuccess)
	{
		(void) cudaGetLastError();
		if (message != NULL)
			snprintf(message, len, "could not page-lock %zu bytes of host memory: %s",
					 area_bytes, cudaGetErrorString(err));
		/* not again for this area: its copies are pageable */
		area_base = NULL;
		area_bytes = 0;
		return false;
	}
	area_locked = true;
	return true;
}

/* See odp_engine.h. */
extern "C" OdpStatus
odp_gpu_host_area(OdpContext *ctx, void *ptr, size_t bytes, bool eager)
{
	char		message[ODP_MESSAGE_LEN] = "";
	bool		ok = true;

	pthread_mutex_lock(&area_lock);
	if (area_locked)
	{
		(void) cudaHostUnregister(area_base);
		(void) cudaGetLastError();
	}
	area_base = (char *) ptr;
	area_bytes = ptr != NULL ? bytes : 0;
	area_locked = false;
	if (eager)
		ok = OdpGpuAreaLockHeld(message, sizeof(message));
	pthread_mutex_unlock(&area_lock);
	return ok ? ODP_OK : odp_fail(ctx, ODP_ERR_GPU, "%s", message);
}

/* Locks the declared area for a GPU call about to copy (OdpGpuBegin). */
static void
OdpGpuAreaLock(OdpContext *ctx)
{
	double		t0;

	t0 = odp_now_ms();
	pthread_mutex_lock(&area_lock);
	(void) OdpGpuAreaLockHeld(NULL, 0);
	pthread_mutex_unlock(&area_lock);
	ctx->transfer_ms += odp_now_ms() - t0;
}

/* The rings (odp_gpu_host_rings): locked once, never unlocked. */
static char *rings_base = NULL;
static size_t rings_bytes = 0;

/* Whether [ptr, ptr + bytes) lies in [base, base + size). */
static bool
OdpGpuWithin(const void *ptr, size_t bytes, const char *base, size_t size)
{
	const char *p = (const char *) ptr;

	return base != NULL && p >= base && bytes <= size && (size_t) (p - base) <= size - bytes;
}

/* See gpu_runtime.cuh. */
bool
OdpGpuHostLocked(const void *ptr, size_t bytes)
{
	return (area_locked && OdpGpuWithin(ptr, bytes, area_base, area_bytes)) ||
		OdpGpuWithin(ptr, bytes, __atomic_load_n(&rings_base, __ATOMIC_ACQUIRE), rings_bytes);
}

/* See odp_engine.h. */
extern "C" OdpStatus
odp_gpu_host_rings(OdpContext *ctx, void *ptr, size_t bytes)
{
	cudaError_t err = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);

	if (err != cudaSuccess)
	{
		(void) cudaGetLastError();
		return odp_fail(ctx, ODP_ERR_GPU, "could not page-lock %zu bytes of host memory: %s",
						bytes, cudaGetErrorString(err));
	}
	rings_bytes = bytes;
	__atomic_store_n(&rings_base, (char *) ptr, __ATOMIC_RELEASE);
	return ODP_OK;
}

/*
 * Whether every device of the call holds a copy of [ptr, ptr + bytes)
 * (ctx->resident): then no part of it copies that input over the bus.
 */
static bool
OdpGpuResidentEverywhere(const OdpContext *ctx, const void *ptr, size_t bytes)
{
	int			held = 0;

	for (int i = 0; i < ctx->nresident; i++)
	{
		const OdpResidentArray *r = &ctx->resident[i];

		if (r->ordinal != ODP_RESIDENT_HOST && OdpGpuWithin(ptr, bytes, r->host, r->bytes))
			held++;
	}
	return held > 0 && held >= ctx->gpu_count;
}

/*
 * Registers bytes at ptr with flags, unless pinning is off, the input is
 * small, lies in page-locked memory already or is copied on the devices
 * only; the pointer, or NULL.  The time goes to ctx->transfer_ms.
 */
static void *
OdpGpuPin(OdpContext *ctx, const void *ptr, size_t bytes, unsigned int flags)
{
	double		t0 = odp_now_ms();
	void	   *pinned = NULL;

	if (!odp_gpu_pin_inputs || ptr == NULL || bytes < ODP_GPU_PIN_BYTES ||
		OdpGpuHostLocked(ptr, bytes) || OdpGpuResidentEverywhere(ctx, ptr, bytes))
		return NULL;
	if (cudaHostRegister((void *) ptr, bytes, flags) == cudaSuccess)
		pinned = (void *) ptr;
	else
		(void) cudaGetLastError();
	ctx->transfer_ms += odp_now_ms() - t0;
	return pinned;
}

/* See gpu_runtime.cuh. */
void *
OdpGpuPinHost(OdpContext *ctx, const void *ptr, size_t bytes)
{
	return pin_disabled ? NULL : OdpGpuPin(ctx, ptr, bytes, cudaHostRegisterReadOnly);
}

/* See gpu_runtime.h. */
extern "C" void *
odp_gpu_pin_shared(OdpContext *ctx, const void *ptr, size_t bytes)
{
	return OdpGpuPin(ctx, ptr, bytes, cudaHostRegisterPortable | cudaHostRegisterReadOnly);
}

/* See gpu_runtime.h. */
extern "C" void
odp_gpu_unpin_shared(OdpContext *ctx, void *pinned)
{
	OdpGpuUnpinHost(ctx, pinned);
}

/* See gpu_runtime.cuh. */
void
OdpGpuUnpinHost(OdpContext *ctx, void *pinned)
{
	double		t0 = odp_now_ms();

	if (pinned == NULL)
		return;
	(void) cudaHostUnregister(pinned);
	(void) cudaGetLastError();
	ctx->transfer_ms += odp_now_ms() - t0;
}

/* Writes through a null pointer: the fault odp_gpu_device_poison causes. */
__global__ static void
OdpPoisonKernel(int *p)
{
	*p = 1;
}

/* See odp_engine.h. */
extern "C" OdpStatus
odp_gpu_device_poison(OdpContext *ctx, int index)
{
	OdpStatus	status = OdpGpuCheckIndex(ctx, index, "device");

	if (status != ODP_OK)
		return status;
	ODP_CUDA_RETURN(ctx, cudaSetDevice(index), "selecting the GPU");
	OdpPoisonKernel<<<1, 1>>>(NULL);
	(void) cudaDeviceSynchronize();
	return ODP_OK;
}

/* Contexts rebuilt per device index (odp_gpu_device_recover). */
static unsigned context_generation[ODP_MAX_GPUS];

/* See gpu_runtime.cuh. */
unsigned
OdpGpuContextGeneration(int index)
{
	return index >= 0 && index < ODP_MAX_GPUS ?
		__atomic_load_n(&context_generation[index], __ATOMIC_ACQUIRE) : 0;
}

/* See odp_engine.h. */
extern "C" OdpStatus
odp_gpu_device_recover(OdpContext *ctx, int index, bool *rebuilt)
{
	OdpStatus	status = OdpGpuCheckIndex(ctx, index, "device");
	void	   *probe = NULL;
	cudaError_t err;
	sigset_t	old_mask;

	*rebuilt = false;
	if (status != ODP_OK)
		return status;
	ODP_CUDA_RETURN(ctx, cudaSetDevice(index), "selecting the GPU");

	/*
	 * A poisoned context returns its sticky error from every call: an
	 * allocation and a synchronisation show it; an allocation that fails
	 * for want of memory is no fault.
	 */
	err = cudaMalloc(&probe, 256);
	if (err == cudaSuccess)
	{
		err = cudaDeviceSynchronize();
		(void) cudaFree(probe);
	}
	if (err == cudaSuccess || err == cudaErrorMemoryAllocation)
	{
		(void) cudaGetLastError();
		return ODP_OK;
	}
	OdpSignalsBlock(&old_mask);
	(void) cudaDeviceReset();
	(void) cudaGetLastError();
	err = cudaFree(0);			/* creates the new context */
	OdpSignalsRestore(&old_mask);
	if (index < ODP_MAX_GPUS)
		(void) __atomic_fetch_add(&context_generation[index], 1, __ATOMIC_RELEASE);
	if (err != cudaSuccess)
	{
		(void) cudaGetLastError();
		return odp_fail(ctx, ODP_ERR_GPU,
						"device %d's context was poisoned and the driver gives it back to a new process only (%s)",
						index, cudaGetErrorName(err));
	}
	*rebuilt = true;
	return ODP_OK;
}

/* Serialises OdpGpuFuncSharedAtLeast's read and raise. */
static pthread_mutex_t func_shared_lock = PTHREAD_MUTEX_INITIALIZER;

/* See gpu_runtime.cuh. */
cudaError_t
OdpGpuFuncSharedAtLeast(const void *fn, size_t bytes)
{
	cudaFuncAttributes attr;
	cudaError_t err;

	pthread_mutex_lock(&func_shared_lock);
	err = cudaFuncGetAttributes(&attr, fn);
	if (err == cudaSuccess && (size_t) attr.maxDynamicSharedSizeBytes < bytes)
		err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
								   (int) bytes);
	pthread_mutex_unlock(&func_shared_lock);
	return err;
}
