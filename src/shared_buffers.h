/*-------------------------------------------------------------------------
 *
 * shared_buffers.h
 *	  Large buffers of a backend in dynamic shared memory, one segment
 *	  each, for the GPU service to map and read in place: the input layer
 *	  reads a table straight into them, so its rows reach the engine with
 *	  no copy between the backend and the service.
 *
 * A buffer lives as long as the memory context it was made for (the
 * segment's mapping is not the transaction's: a node state kept across
 * transactions keeps its rows).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/shared_buffers.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SHARED_BUFFERS_H
#define ODP_SHARED_BUFFERS_H

#include "postgres.h"

/* Smallest buffer worth a segment of its own. */
#define ODP_SHARED_MIN_BYTES	((Size) 1 << 20)

/*
 * Whether a buffer of bytes may go to dynamic shared memory now: POSIX
 * segments, and room for twice that in /dev/shm (a small /dev/shm, as in
 * many containers, keeps inputs private; they then stream to the service).
 */
extern bool OdpSharedBufferFits(Size bytes);

/*
 * A new shared buffer of bytes (any size, any type of dynamic shared
 * memory), for cxt; NULL where no segment can be had.  Parallel workers
 * write into these.
 */
extern void *OdpSharedBufferCreate(MemoryContext cxt, Size bytes);

/*
 * Resizes buf (NULL, a buffer of cxt of old_bytes, or a shared buffer)
 * to a shared buffer of at least new_bytes, keeping its first bytes;
 * returns NULL, leaving buf alone, where no segment can be had.
 */
extern void *OdpSharedBufferResize(MemoryContext cxt, void *buf, Size old_bytes,
								   Size new_bytes);

/* Whether buf is a shared buffer (then OdpSharedBufferFree frees it). */
extern bool OdpSharedBufferIs(const void *buf);
extern void OdpSharedBufferFree(void *buf);

/*
 * Where bytes at ptr lie in a shared buffer: its segment's handle and
 * the offset; false where they do not.
 */
extern bool OdpSharedBufferFind(const void *ptr, Size bytes, uint32 *handle,
								Size *offset);

#endif							/* ODP_SHARED_BUFFERS_H */
