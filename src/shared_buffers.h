/*-------------------------------------------------------------------------
 *
 * shared_buffers.h
 *	  Large buffers of a backend in shared memory, for the GPU service to
 *	  read in place: extents of the service's staging area
 *	  (service_staging.h) or of the backend's own (backend_staging.h), or
 *	  dynamic shared memory segments, one each.
 *	  The input layer reads a table straight into them, so its rows reach
 *	  the engine with no copy between the backend and the service.
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

#include "service/table_cache.h"

/* Smallest buffer worth a segment of its own. */
#define ODP_SHARED_MIN_BYTES	((Size) 1 << 20)

/* Where a shared buffer may go: bits, tried in this order. */
#define ODP_SHARED_STAGING		0x01	/* the GPU service's staging area */
#define ODP_SHARED_OWN			0x02	/* the backend's own area
										 * (backend_staging.h) */
#define ODP_SHARED_SEGMENT		0x04	/* a dynamic shared memory segment */

/*
 * A new shared buffer of bytes for cxt, in the first place of where
 * that has room; NULL where none has.  Parallel workers write into these.
 */
extern void *OdpSharedBufferCreate(MemoryContext cxt, Size bytes, int where);

/*
 * Resizes buf (NULL, a buffer of cxt of old_bytes, or a shared buffer)
 * to a shared buffer of at least new_bytes in where, keeping its first
 * bytes (in place where the buffer can grow or shrink there); returns
 * NULL, leaving buf alone, where no place has room.
 */
extern void *OdpSharedBufferResize(MemoryContext cxt, void *buf, Size old_bytes,
								   Size new_bytes, int where);

/* Whether buf is a shared buffer (then OdpSharedBufferFree frees it). */
extern bool OdpSharedBufferIs(const void *buf);
extern void OdpSharedBufferFree(void *buf);

/*
 * The table cache (service/table_cache.h).  A buffer of cxt that is the
 * array of a cached entry at base, holding one pin on the entry the
 * caller took for it, which goes when the buffer does.  Whether buf is a
 * buffer of this backend's in the staging area (whole); and such a buffer
 * becoming its entry's array once the cache adopted it (the caller pinned
 * the entry for it).
 */
extern void OdpSharedBufferUseCached(MemoryContext cxt, void *base, Size size,
									 OdpCacheHandle entry);
extern bool OdpSharedBufferIsStaged(const void *buf);
extern void OdpSharedBufferToCached(void *buf, OdpCacheHandle entry);

/*
 * Where bytes at ptr lie: in the service's staging area at offset
 * (staged), or in a segment (the backend's own area's, or one of their
 * own), its handle and the offset; false where in none.  Bytes in a table
 * cache entry's array say so (cached), with the whole array's extent.
 */
typedef struct OdpSharedLocation
{
	int			where;			/* ODP_SHARED_STAGING, _OWN or _SEGMENT */
	bool		staged;
	uint32		handle;			/* a segment's (not staged) */
	Size		offset;
	/* in an array of a table cache entry: the entry and the array's extent */
	bool		cached;
	OdpCacheHandle entry;
	Size		array_offset;
	Size		array_bytes;
} OdpSharedLocation;

extern bool OdpSharedBufferFind(const void *ptr, Size bytes, OdpSharedLocation *loc);

#endif							/* ODP_SHARED_BUFFERS_H */
