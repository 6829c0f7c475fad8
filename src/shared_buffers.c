/*-------------------------------------------------------------------------
 *
 * shared_buffers.c
 *	  A backend's large buffers in shared memory (shared_buffers.h).
 *
 * Each buffer is an extent of the service's staging area or of the
 * backend's own area, or a segment, listed in this backend with its base
 * and size.  It ends with the memory context
 * it was made for, whose reset or deletion (also when an error aborts the
 * transaction) frees it through a context callback, or with the backend
 * (the staging area frees a backend's extents as it exits; a segment's
 * mapping is pinned, no resource owner's, and detaching it forgets the
 * entry through on_dsm_detach).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/shared_buffers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "backend_staging.h"
#include "dsm_room.h"
#include "service/service_staging.h"
#include "shared_buffers.h"
#include "storage/dsm.h"
#include "storage/dsm_impl.h"
#include "utils/memutils.h"

typedef enum SharedKind
{
	SHARED_SEGMENT,				/* a segment of its own */
	SHARED_STAGED,				/* an extent of the service's staging area */
	SHARED_OWN,					/* an extent of the backend's own area */
	SHARED_CACHED				/* a table cache entry's array (an extent of
								 * the staging area), one pin on the entry */
} SharedKind;

typedef struct SharedBuffer
{
	struct SharedBuffer *next;
	SharedKind	kind;
	dsm_segment *seg;			/* SHARED_SEGMENT's */
	OdpCacheHandle entry;		/* SHARED_CACHED's */
	char	   *base;
	Size		size;
	uint64		id;				/* never reused, unlike base */
} SharedBuffer;

/*
 * What a memory context's callback frees when the context goes: the buffer
 * at base made as id.  A buffer freed before its context went leaves the
 * callback behind, and its address may by then hold another buffer (an
 * extent of an area is taken again at the same offset): the id tells
 * them apart.
 */
typedef struct SharedCallback
{
	MemoryContextCallback cb;
	char	   *base;
	uint64		id;
} SharedCallback;

static SharedBuffer *shared_buffers = NULL;
static uint64 shared_next_id = 0;

static SharedBuffer *
SharedFind(const void *ptr)
{
	for (SharedBuffer *b = shared_buffers; b != NULL; b = b->next)
		if ((const char *) ptr >= b->base && (const char *) ptr < b->base + b->size)
			return b;
	return NULL;
}

/* Unlists b. */
static void
SharedUnlist(SharedBuffer *gone)
{
	for (SharedBuffer **p = &shared_buffers; *p != NULL; p = &(*p)->next)
		if (*p == gone)
		{
			*p = gone->next;
			pfree(gone);
			return;
		}
}

/* on_dsm_detach: the segment is gone, whoever detached it. */
static void
SharedForget(dsm_segment *seg, Datum arg)
{
	SharedUnlist((SharedBuffer *) DatumGetPointer(arg));
}

/* Frees b, whatever holds it. */
static void
SharedRelease(SharedBuffer *b)
{
	if (b->kind == SHARED_SEGMENT)
		dsm_detach(b->seg);		/* SharedForget unlists it */
	else
	{
		if (b->kind == SHARED_STAGED)
			OdpStagingFree(b->base);
		else if (b->kind == SHARED_CACHED)
			OdpTableCacheUnpin(b->entry);
		else
			OdpBackendStagingFree(b->base);
		SharedUnlist(b);
	}
}

/* The memory context's callback: frees its buffer if still listed. */
static void
SharedContextGone(void *arg)
{
	const SharedCallback *sc = (const SharedCallback *) arg;
	SharedBuffer *b = SharedFind(sc->base);

	if (b != NULL && b->base == sc->base && b->id == sc->id)
		SharedRelease(b);
}

/*
 * Whether a buffer of bytes may go to a segment of its own now: POSIX
 * segments, and room for twice that in /dev/shm (a small /dev/shm, as in
 * many containers, keeps inputs private; they then stream to the service).
 */
static bool
SharedSegmentFits(Size bytes)
{
	return dynamic_shared_memory_type == DSM_IMPL_POSIX && bytes >= ODP_SHARED_MIN_BYTES &&
		OdpDsmHasRoom(bytes, 2.0);
}

bool
OdpSharedBufferIs(const void *buf)
{
	return buf != NULL && SharedFind(buf) != NULL;
}

void
OdpSharedBufferFree(void *buf)
{
	SharedBuffer *b = SharedFind(buf);

	if (b != NULL)
		SharedRelease(b);
}

/* A new segment of bytes, or NULL. */
static dsm_segment *
SharedSegmentCreate(Size bytes)
{
	/* a POSIX segment fills /dev/shm: leave room there for others */
	if (!OdpDsmHasRoom(bytes, 1.25))
		return NULL;
	return dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
}

/*
 * Lists a new buffer of this backend at base, released when cxt goes
 * (SharedContextGone); the caller sets what its kind needs besides.
 */
static SharedBuffer *
SharedListed(MemoryContext cxt, SharedKind kind, char *base, Size size)
{
	SharedBuffer *b = MemoryContextAllocZero(TopMemoryContext, sizeof(SharedBuffer));
	SharedCallback *sc;

	b->kind = kind;
	b->base = base;
	b->size = size;
	b->id = ++shared_next_id;
	b->next = shared_buffers;
	shared_buffers = b;
	sc = MemoryContextAlloc(cxt, sizeof(SharedCallback));
	sc->base = b->base;
	sc->id = b->id;
	sc->cb.func = SharedContextGone;
	sc->cb.arg = sc;
	MemoryContextRegisterResetCallback(cxt, &sc->cb);
	return b;
}

void *
OdpSharedBufferCreate(MemoryContext cxt, Size bytes, int where)
{
	SharedBuffer *b;
	dsm_segment *seg = NULL;
	char	   *base = NULL;
	SharedKind	kind = SHARED_STAGED;

	if (bytes == 0)
		bytes = 1;
	if (where & ODP_SHARED_STAGING)
	{
		base = OdpStagingAlloc(bytes);
		/* cached tables give way to inputs */
		while (base == NULL && bytes <= OdpStagingBytes() && OdpTableCacheMakeRoom(bytes))
			base = OdpStagingAlloc(bytes);
	}
	if (base == NULL && (where & ODP_SHARED_OWN))
	{
		kind = SHARED_OWN;
		base = OdpBackendStagingAlloc(bytes);
	}
	if (base == NULL && (where & ODP_SHARED_SEGMENT))
	{
		kind = SHARED_SEGMENT;
		seg = SharedSegmentCreate(bytes);
		if (seg != NULL)
			base = dsm_segment_address(seg);
	}
	if (base == NULL)
		return NULL;
	b = SharedListed(cxt, kind, base, bytes);
	b->seg = seg;
	if (kind == SHARED_SEGMENT)
	{
		dsm_pin_mapping(seg);
		on_dsm_detach(seg, SharedForget, PointerGetDatum(b));
	}
	return b->base;
}

/* See shared_buffers.h. */
void
OdpSharedBufferUseCached(MemoryContext cxt, void *base, Size size, OdpCacheHandle entry)
{
	SharedListed(cxt, SHARED_CACHED, (char *) base, size)->entry = entry;
}

/* See shared_buffers.h. */
bool
OdpSharedBufferIsStaged(const void *buf)
{
	SharedBuffer *b = buf != NULL ? SharedFind(buf) : NULL;

	return b != NULL && b->kind == SHARED_STAGED && b->base == (const char *) buf;
}

/* See shared_buffers.h. */
void
OdpSharedBufferToCached(void *buf, OdpCacheHandle entry)
{
	SharedBuffer *b = SharedFind(buf);

	Assert(b != NULL && b->kind == SHARED_STAGED && b->base == (char *) buf);
	b->kind = SHARED_CACHED;
	b->entry = entry;
}

void *
OdpSharedBufferResize(MemoryContext cxt, void *buf, Size old_bytes, Size new_bytes,
					  int where)
{
	SharedBuffer *old = buf != NULL ? SharedFind(buf) : NULL;
	char	   *base;

	if (old != NULL &&
		((old->kind == SHARED_STAGED && OdpStagingResize(buf, new_bytes)) ||
		 (old->kind == SHARED_OWN && OdpBackendStagingResize(buf, new_bytes))))
	{
		old->size = new_bytes;
		return buf;				/* grown or trimmed in place */
	}
	if (old != NULL && new_bytes <= old->size)
		return buf;				/* a trim: the segment stays as it is */
	if (where == ODP_SHARED_SEGMENT && !SharedSegmentFits(new_bytes))
		return NULL;
	base = OdpSharedBufferCreate(cxt, new_bytes, where);
	if (base != NULL && buf != NULL)
	{
		memcpy(base, buf, Min(old != NULL ? old->size : old_bytes, new_bytes));
		if (old != NULL)
			SharedRelease(old);
		else
			pfree(buf);
	}
	return base;
}

bool
OdpSharedBufferFind(const void *ptr, Size bytes, OdpSharedLocation *loc)
{
	SharedBuffer *b = ptr != NULL ? SharedFind(ptr) : NULL;

	if (b == NULL || (const char *) ptr + bytes > b->base + b->size)
		return false;
	loc->staged = b->kind == SHARED_STAGED || b->kind == SHARED_CACHED;
	loc->where = loc->staged ? ODP_SHARED_STAGING :
		b->kind == SHARED_OWN ? ODP_SHARED_OWN : ODP_SHARED_SEGMENT;
	loc->cached = false;
	if (loc->staged)
	{
		loc->handle = 0;
		if (b->kind == SHARED_CACHED &&
			OdpStagingFind(b->base, b->size, &loc->array_offset))
		{
			loc->cached = true;
			loc->entry = b->entry;
			loc->array_bytes = b->size;
		}
		return OdpStagingFind(ptr, bytes, &loc->offset);
	}
	if (b->kind == SHARED_OWN)
		return OdpBackendStagingFind(ptr, bytes, &loc->handle, &loc->offset);
	loc->handle = dsm_segment_handle(b->seg);
	loc->offset = (Size) ((const char *) ptr - b->base);
	return true;
}
