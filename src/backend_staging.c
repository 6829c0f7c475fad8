/*-------------------------------------------------------------------------
 *
 * backend_staging.c
 *	  A backend's own staging area (backend_staging.h).
 *
 * The extents are a short list kept in offset order (a call holds a few
 * arrays at once); a request takes the first gap that fits.  The segment
 * is remade only while it holds no extent, so nothing ever moves: a call
 * that found no room records how much it wanted, and the next call's first
 * request makes the area that large.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/backend_staging.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "backend_staging.h"
#include "dsm_room.h"
#include "odp_engine.h"
#include "settings.h"
#include "service/service.h"
#include "utils/guc.h"
#include "utils/memutils.h"

/* Extents are aligned to this, and the area's size is a multiple of it. */
#define AREA_ALIGN		((Size) 2 << 20)
/* The smallest area worth making. */
#define AREA_MIN_BYTES	((Size) 64 << 20)
#define AREA_MAX_EXTENTS 64

typedef struct AreaExtent
{
	Size		offset;
	Size		bytes;
} AreaExtent;

int			odp_backend_staging_mb = 1024;

static dsm_segment *area_seg = NULL;
static char *area_base = NULL;
static Size area_size = 0;
static Size area_wanted = 0;	/* for the next area: what a call wanted */
static AreaExtent extents[AREA_MAX_EXTENTS];
static int	nextents = 0;

/* See backend_staging.h. */
void
OdpBackendStagingDefineSetting(void)
{
	DefineCustomIntVariable("odp_gpu.backend_staging_size",
							"Most host memory a backend keeps for its inputs, where odp_gpu is not preloaded.",
							"A backend reads its inputs into an area of its own, kept for the next call, whose "
							"pages are then mapped already, and page-locked for the GPU by its first GPU call, "
							"so that they copy at the bus's speed. The area grows to the largest input it "
							"served, up to this size; 0 reads inputs into ordinary memory.",
							&odp_backend_staging_mb, 1024, 0, 1024 * 1024,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
}

static Size
AreaRound(Size bytes)
{
	return (Max(bytes, 1) + AREA_ALIGN - 1) / AREA_ALIGN * AREA_ALIGN;
}

static Size
AreaCap(void)
{
	return (Size) odp_backend_staging_mb * 1024 * 1024;
}

/* See backend_staging.h. */
bool
OdpBackendStagingWanted(void)
{
	/* a parallel worker writes into its backend's buffers, never its own */
	return !IsParallelWorker() && !OdpServiceConfigured() && odp_backend_staging_mb > 0;
}

/* See backend_staging.h. */
void
OdpBackendStagingExpect(Size bytes)
{
	area_wanted = Max(area_wanted, Min(AreaRound(bytes), AreaCap()));
}

/* Replaces the area (holding no extent) by one of size bytes; false: none. */
static bool
AreaRemake(Size size)
{
	OdpContext	ctx;
	dsm_segment *seg;

	Assert(nextents == 0);
	if (!OdpDsmHasRoom(size, 1.25))
		return false;
	seg = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (seg == NULL)
		return false;
	dsm_pin_mapping(seg);
	/* the engine unlocks the old area before it is unmapped */
	memset(&ctx, 0, sizeof(ctx));
	(void) odp_gpu_host_area(&ctx, dsm_segment_address(seg), size, false);
	if (area_seg != NULL)
		dsm_detach(area_seg);
	area_seg = seg;
	area_base = dsm_segment_address(seg);
	area_size = size;
	return true;
}

/* See backend_staging.h. */
void *
OdpBackendStagingAlloc(Size bytes)
{
	Size		need = AreaRound(bytes);
	Size		at = 0;
	int			i;

	if (need > AreaCap())
		return NULL;
	if (nextents == 0 && area_size < Max(need, area_wanted))
		(void) AreaRemake(Max(Max(need, area_wanted), Min(AREA_MIN_BYTES, AreaCap())));
	if (area_seg == NULL)
		return NULL;
	for (i = 0; i < nextents; i++)
	{
		if (extents[i].offset - at >= need)
			break;
		at = extents[i].offset + extents[i].bytes;
	}
	if (nextents == AREA_MAX_EXTENTS || (i == nextents && area_size - at < need))
	{
		Size		held = 0;

		for (int j = 0; j < nextents; j++)
			held += extents[j].bytes;
		OdpBackendStagingExpect(held + need);
		return NULL;
	}
	memmove(&extents[i + 1], &extents[i], sizeof(AreaExtent) * (nextents - i));
	extents[i].offset = at;
	extents[i].bytes = need;
	nextents++;
	return area_base + at;
}

/* The index of the extent at p, or -1. */
static int
AreaExtentAt(const void *p)
{
	for (int i = 0; i < nextents; i++)
		if ((const char *) p == area_base + extents[i].offset)
			return i;
	return -1;
}

/* See backend_staging.h. */
bool
OdpBackendStagingResize(void *p, Size bytes)
{
	int			i = AreaExtentAt(p);
	Size		need = AreaRound(bytes);
	Size		limit;

	if (i < 0)
		return false;
	limit = i + 1 < nextents ? extents[i + 1].offset : area_size;
	if (extents[i].offset + need > limit)
	{
		Size		held = need;

		for (int j = 0; j < nextents; j++)
			held += j == i ? 0 : extents[j].bytes;
		OdpBackendStagingExpect(held);
		return false;
	}
	extents[i].bytes = need;
	return true;
}

/* See backend_staging.h. */
void
OdpBackendStagingFree(void *p)
{
	int			i = AreaExtentAt(p);

	if (i < 0)
		return;
	memmove(&extents[i], &extents[i + 1], sizeof(AreaExtent) * (nextents - i - 1));
	nextents--;
}

/* See backend_staging.h. */
bool
OdpBackendStagingFind(const void *ptr, Size bytes, dsm_handle *handle, Size *offset)
{
	if (area_seg == NULL || (const char *) ptr < area_base ||
		(const char *) ptr + bytes > area_base + area_size)
		return false;
	*handle = dsm_segment_handle(area_seg);
	*offset = (Size) ((const char *) ptr - area_base);
	return true;
}
