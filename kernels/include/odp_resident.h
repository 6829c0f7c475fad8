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

/*
 * Copies of one input made on devices while it arrives in pieces: the GPU
 * service's inputs that found no room in the staging area stream to it
 * through a slot's ring, which the engine page-locked
 * (odp_gpu_host_rings), and each piece goes on to every device of the
 * call while the engine thread copies it to its host buffer.  The call
 * then lists the copies in OdpContext.resident (odp_piece_copies_views)
 * and reads them on the device as it reads the table cache's: the input
 * does not cross the bus again once it has arrived.
 */
typedef struct OdpPieceCopies OdpPieceCopies;

/*
 * Starts copies of bytes on each of the n devices (CUDA ordinals), from
 * pieces that lie in [source, source + source_bytes); NULL where that
 * memory is not page-locked or a device has no room (the call then
 * copies its host buffer as before).  Not counted in any budget: the
 * caller leaves room for them.
 */
extern OdpPieceCopies *odp_piece_copies_begin(const int *ordinals, int n, size_t bytes,
											  const void *source, size_t source_bytes);

/*
 * Queues the copy of len bytes at src to offset of every copy, and
 * returns at once; false once a copy failed (the copies are then not
 * used).  src must stay as it is until odp_piece_copies_wait returns.
 */
extern bool odp_piece_copies_add(OdpPieceCopies *pc, size_t offset, const void *src, size_t len);

/* Waits for the queued pieces; false once a copy failed. */
extern bool odp_piece_copies_wait(OdpPieceCopies *pc);

/*
 * Lists the copies as copies of the host buffer host (out: one per
 * device); returns how many, 0 when a piece failed.
 */
extern int	odp_piece_copies_views(OdpPieceCopies *pc, const void *host,
								   OdpResidentArray *out);

/* Frees the copies (NULL allowed). */
extern void odp_piece_copies_end(OdpPieceCopies *pc);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_RESIDENT_H */
