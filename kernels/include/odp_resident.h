/*-------------------------------------------------------------------------
 *
 * odp_resident.h
 *	  Inputs the engine keeps between calls: the GPU service's copies of
 *	  the arrays of table cache entries (src/service/table_cache.h), in
 *	  device memory on the GPU that ran the call that made them, or, for
 *	  the service's CPU engine, in the engine's own host memory.
 *
 * The service's worker decides what is made, used and dropped, and
 * accounts the copies in each device's budget (service_resident.h); the
 * engine only holds them, each under a tag the worker gave it.  A copy is
 * of a whole array of an entry as it lies in the staging area, and never
 * changes: a call whose input lies in an array the engine holds on its
 * device copies it on the device (OdpContext.resident) instead of over
 * the bus, and the CPU engine reads its own copy.  The worker never drops
 * a copy a running call uses.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_resident.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_RESIDENT_H
#define ODP_RESIDENT_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* ODP_RESIDENT_HOST: a copy in the engine's host memory. */
#define ODP_RESIDENT_HOST		(-1)

/* One copy as a call sees it. */
typedef struct OdpResidentArray
{
	const char *host;			/* the array it copies (the staging area) */
	size_t		bytes;
	const char *copy;			/* the copy: device memory of ordinal, or
								 * host memory (ODP_RESIDENT_HOST) */
	int			ordinal;
} OdpResidentArray;

/*
 * Makes a copy of bytes at host under tag: on device ordinal's memory, or
 * in host memory for ODP_RESIDENT_HOST.  ODP_ERR_GPU_OOM or
 * ODP_ERR_HOST_OOM where there is no room (nothing is then held).  The
 * time goes to ctx->transfer_ms.
 */
extern OdpStatus odp_resident_make(OdpContext *ctx, uint64_t tag, int ordinal,
								   const void *host, size_t bytes);

/* The copy held under tag (*out); false where none is. */
extern bool odp_resident_find(uint64_t tag, OdpResidentArray *out);

/* Frees the copy held under tag, if any. */
extern void odp_resident_drop(uint64_t tag);

/*
 * Forgets, without freeing, every copy on device ordinal: its context
 * was destroyed (odp_gpu_device_recover), and its memory with it.
 */
extern void odp_resident_forget_device(int ordinal);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_RESIDENT_H */
