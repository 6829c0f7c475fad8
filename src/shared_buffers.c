/*-------------------------------------------------------------------------
 *
 * shared_buffers.c
 *	  A backend's large buffers in dynamic shared memory
 *	  (shared_buffers.h).
 *
 * Each buffer is a segment, listed in this backend with its base and
 * size.  Its mapping is pinned (no resource owner's): it ends with the
 * memory context it was made for, whose reset or deletion (also when an
 * error aborts the transaction) detaches it through a context callback,
 * or with the backend.  Detaching forgets the entry (on_dsm_detach).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/shared_buffers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "shared_buffers.h"
#include "storage/dsm.h"
#include "storage/dsm_impl.h"
#include "utils/memutils.h"

typedef struct SharedBuffer
{
	struct SharedBuffer *next;
	dsm_segment *seg;
	char	   *base;
	Size		size;
} SharedBuffer;

static SharedBuffer *shared_buffers = NULL;

static SharedBuffer *
SharedFind(const void *ptr)
{
	for (SharedBuffer *b = shared_buffers; b != NULL; b = b->next)
		if ((const char *) ptr >= b->base && (const char *) ptr < b->base + b->size)
			return b;
	return NULL;
}

/* on_dsm_detach: the segment is gone, whoever detached it. */
static void
SharedForget(dsm_segment *seg, Datum arg)
{
	SharedBuffer *gone = (SharedBuffer *) DatumGetPointer(arg);

	for (SharedBuffer **p = &shared_buffers; *p != NULL; p = &(*p)->next)
		if (*p == gone)
		{
			*p = gone->next;
			pfree(gone);
			return;
		}
}

/* The memory context's callback: detaches the buffer if still listed. */
static void
SharedContextGone(void *arg)
{
	SharedBuffer *b = SharedFind(arg);

	if (b != NULL && b->base == (char *) arg)
		dsm_detach(b->seg);
}

bool
OdpSharedBufferFits(Size bytes)
{
	struct statvfs fs;

	if (dynamic_shared_memory_type != DSM_IMPL_POSIX || bytes < ODP_SHARED_MIN_BYTES)
		return false;
	if (statvfs("/dev/shm", &fs) != 0)
		return false;
	return (double) fs.f_bavail * (double) fs.f_frsize >= 2.0 * (double) bytes;
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
		dsm_detach(b->seg);
}

void *
OdpSharedBufferCreate(MemoryContext cxt, Size bytes)
{
	SharedBuffer *b;
	MemoryContextCallback *cb;
	dsm_segment *seg;
	struct statvfs fs;

	if (bytes == 0)
		bytes = 1;
	/* a POSIX segment fills /dev/shm: leave room there for others */
	if (dynamic_shared_memory_type == DSM_IMPL_POSIX &&
		(statvfs("/dev/shm", &fs) != 0 ||
		 (double) fs.f_bavail * (double) fs.f_frsize < 1.25 * (double) bytes))
		return NULL;
	seg = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (seg == NULL)
		return NULL;
	b = MemoryContextAlloc(TopMemoryContext, sizeof(SharedBuffer));
	b->seg = seg;
	b->base = dsm_segment_address(seg);
	b->size = bytes;
	b->next = shared_buffers;
	shared_buffers = b;
	dsm_pin_mapping(seg);
	on_dsm_detach(seg, SharedForget, PointerGetDatum(b));
	cb = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));
	cb->func = SharedContextGone;
	cb->arg = b->base;
	MemoryContextRegisterResetCallback(cxt, cb);
	return b->base;
}

void *
OdpSharedBufferResize(MemoryContext cxt, void *buf, Size old_bytes, Size new_bytes)
{
	SharedBuffer *old = buf != NULL ? SharedFind(buf) : NULL;
	char	   *base;

	if (old != NULL && new_bytes <= old->size)
		return buf;				/* a trim: the segment stays as it is */
	if (!OdpSharedBufferFits(new_bytes))
		return NULL;
	base = OdpSharedBufferCreate(cxt, new_bytes);
	if (base != NULL && buf != NULL)
	{
		memcpy(base, buf, Min(old != NULL ? old->size : old_bytes, new_bytes));
		if (old != NULL)
			dsm_detach(old->seg);
		else
			pfree(buf);
	}
	return base;
}

bool
OdpSharedBufferFind(const void *ptr, Size bytes, uint32 *handle, Size *offset)
{
	SharedBuffer *b = ptr != NULL ? SharedFind(ptr) : NULL;

	if (b == NULL || (const char *) ptr + bytes > b->base + b->size)
		return false;
	*handle = dsm_segment_handle(b->seg);
	*offset = (Size) ((const char *) ptr - b->base);
	return true;
}
