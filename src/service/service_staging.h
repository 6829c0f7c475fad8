/*-------------------------------------------------------------------------
 *
 * service_staging.h
 *	  The staging area: host memory the input layer reads inputs into and
 *	  the GPU service hands to the engine in place, page-locked for the
 *	  GPUs once, when the service starts.
 *
 * The area is made when the library is preloaded, by the postmaster,
 * before any process forks: an anonymous file (memfd) of
 * odp_gpu.staging_size, mapped shared.  Every backend, parallel worker and
 * the service inherit the mapping at the same address, so an input
 * written by a backend and its workers is the service's input with no
 * copy, no segment made per call and no mapping per call; the file can
 * also be mapped by a process that is not PostgreSQL's.  Its pages are
 * the file's: they stay allocated between calls (and page-locked while the
 * service runs on GPUs), so no call pays for fresh pages.
 *
 * The area is cut into blocks; an input array takes a run of blocks (an
 * extent), owned by the backend that took it.  A backend gives it back
 * when its memory context goes (shared_buffers.c), and when it exits.  An
 * extent the service is reading is not reused before the service is done
 * with it, even when its backend gave it up meanwhile.  An array that
 * finds no room is read into the backend's own memory and streams to the
 * service through its request's rings, as without the area.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_staging.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_STAGING_H
#define ODP_SERVICE_STAGING_H

#include "postgres.h"

#include "utils/guc.h"

/* Blocks of the area (a huge page each); an extent is a run of them. */
#define ODP_STAGING_BLOCK	((Size) 2 << 20)

/* odp_gpu.staging_size, in MB (0: no area). */
extern int	odp_staging_mb;

/* Defines odp_gpu.staging_size (context: fixed when preloaded). */
extern void OdpStagingDefineSetting(GucContext fixed);

/*
 * Sizes the area (the postmaster, while preloading); it is made and mapped
 * once the server's shared memory is (OdpStagingShmemInit).
 */
extern void OdpStagingCreate(void);

/*
 * Its bookkeeping in the main shared memory: size and lock (requested
 * while preloading), and set up (found: by an earlier process).
 */
extern Size OdpStagingShmemSize(void);
extern void OdpStagingRequestLock(void);
extern void OdpStagingShmemInit(void *place, bool found);

/* Whether the area exists in this server. */
extern bool OdpStagingConfigured(void);

/*
 * An extent of at least bytes for this backend, or NULL where no run of
 * free blocks is long enough.  Its pages are mapped in this process
 * before it returns (writing them takes no page fault).
 */
extern void *OdpStagingAlloc(Size bytes);

/*
 * Grows or shrinks the extent at p to hold bytes, in place: false (the
 * extent unchanged) where the blocks after it are taken.
 */
extern bool OdpStagingResize(void *p, Size bytes);

/* Gives the extent at p back (or leaves it to the service, see above). */
extern void OdpStagingFree(void *p);

/*
 * The table cache (table_cache.h): the extent at offset, this backend's,
 * becomes the cache's (false: it is not this backend's); and a cached
 * extent goes back (or to the request reading it, see above).
 */
extern bool OdpStagingAdopt(Size offset);
extern void OdpStagingDropCached(Size offset);

/* Whether bytes at ptr lie in the area; then their offset in it. */
extern bool OdpStagingFind(const void *ptr, Size bytes, Size *offset);

/*
 * Counts an input buffer that found no room (it streams instead; one
 * array that grows may find none several times).
 */
extern void OdpStagingCountMiss(void);

/* The area's base address in this process (the service's view). */
extern char *OdpStagingBase(void);
extern Size OdpStagingBytes(void);
/* Its memfd (inherited from the postmaster), for the engine process; -1: none. */
extern int	OdpStagingFd(void);

/* The size of a huge page, which a huge-page area's size is a multiple of. */
#define ODP_HUGE_PAGE_BYTES	((Size) 2 << 20)

/*
 * A memfd of bytes named name (closed on exec), mapped shared at *p:
 * memory a process outside PostgreSQL can be handed.  In huge pages
 * (*huge) where huge_pages is not off, bytes is a multiple of
 * ODP_HUGE_PAGE_BYTES and the host has them reserved, else in 4 kB pages.
 * -1, errno set, where the system refuses it.
 */
extern int	OdpMemfdMap(const char *name, Size bytes, void **p, bool *huge);

/*
 * The service: marks the extent holding [offset, offset + bytes) as read
 * by a request of backend pid (false: no such extent of that backend,
 * as when the backend gave it up already), and its end.
 */
extern bool OdpStagingAcquire(Size offset, Size bytes, int pid);
extern void OdpStagingRelease(Size offset);

/* The service, as it starts: no request reads any extent. */
extern void OdpStagingResetReaders(void);

/* The service: records whether it page-locked the area. */
extern void OdpStagingSetLocked(bool locked);

typedef struct OdpStagingInfo
{
	int64		size;			/* bytes of the area (0: none) */
	int64		used;			/* bytes in extents of inputs */
	int64		cached;			/* bytes in the table cache's extents */
	int64		largest_free;	/* longest run of free blocks, in bytes */
	int			extents;		/* of inputs */
	int64		misses;			/* times a buffer found no room, since start */
	bool		locked;			/* page-locked by the service */
	bool		huge_pages;		/* in huge pages */
} OdpStagingInfo;

extern void OdpStagingGetInfo(OdpStagingInfo *info);

#endif							/* ODP_SERVICE_STAGING_H */
