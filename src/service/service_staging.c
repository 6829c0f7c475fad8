/*-------------------------------------------------------------------------
 *
 * service_staging.c
 *	  The staging area (service_staging.h): the postmaster's mapping, and
 *	  its extents, kept in the main shared memory under one lock.
 *
 * The bookkeeping is per block: the block's extent (the extent's first
 * block, or -1 when free), and for an extent's first block its owner, its
 * length, how many requests the service runs on it and whether its owner
 * gave it up while one did.  A search for free blocks is a scan of the
 * blocks: 512 for the default area, a few hundred thousand at most,
 * against a read of at least a block of rows per extent.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_staging.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <unistd.h>

#include "miscadmin.h"
#include "service/service_staging.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/pg_shmem.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#define ODP_STAGING_TRANCHE "odp_gpu_staging"

/* Linux 5.14; older kernels refuse it and the pages fault in as written. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

typedef struct StagingBlock
{
	int32		extent;			/* first block of its extent, -1: free */
	int32		owner;			/* first block: the owner's pid */
	int32		length;			/* first block: blocks in the extent */
	int16		readers;		/* first block: requests reading it */
	bool		orphaned;		/* first block: its owner gave it up */
	bool		cached;			/* first block: the table cache's
								 * (table_cache.h), owner 0 */
} StagingBlock;

typedef struct StagingShared
{
	LWLock	   *lock;
	int32		nblocks;
	int32		extents;
	int64		used_blocks;
	int32		cached_extents; /* of extents, used_blocks: the cache's */
	int64		cached_blocks;
	pg_atomic_uint64 misses;
	bool		locked;
	StagingBlock blocks[FLEXIBLE_ARRAY_MEMBER];
} StagingShared;

int			odp_staging_mb = 1024;

static char *staging_base = NULL;	/* inherited from the postmaster */
static int	staging_fd = -1;	/* the memfd, inherited too */
static Size staging_bytes = 0;
static bool staging_huge = false;	/* in huge pages (MFD_HUGETLB) */
static StagingShared *staging = NULL;
static bool staging_exit_hook = false;
/* A bit per block whose pages this process has mapped (StagingPopulate). */
static uint8 *staging_mapped = NULL;

/* This host's memory in MB (0: unknown). */
static double
StagingHostMb(void)
{
	long		pages = sysconf(_SC_PHYS_PAGES);
	long		page = sysconf(_SC_PAGESIZE);

	return pages > 0 && page > 0 ? (double) pages * page / (1024.0 * 1024.0) : 0;
}

/*
 * A size set for the area may take at most half of the host's memory.
 * The default is let through (OdpStagingCreate halves it on a small host).
 */
static bool
StagingCheckSize(int *newval, void **extra, GucSource source)
{
	double		host_mb = StagingHostMb();

	if (source == PGC_S_DEFAULT)
		return true;
	if (host_mb > 0 && (double) *newval > host_mb / 2)
	{
		GUC_check_errdetail("The staging area stays allocated (and page-locked while the GPU service runs); "
							"this host has %.0f MB of memory, and the area may take at most half of it.",
							host_mb);
		return false;
	}
	return true;
}

/* Bounds of odp_gpu.staging_size, in MB. */
#define STAGING_MAX_MB	(1024 * 1024)

/*
 * Refuses to start the server with a staging size out of range.  The
 * server only warns about a bad value of a setting an extension defines,
 * and starts with the default; a server whose staging area is not what
 * its administrator sized is worse than one that does not start.  The
 * value set (the placeholder's, before the definition) is checked here.
 */
static void
StagingRefuseBadSize(void)
{
	const char *value = GetConfigOption("odp_gpu.staging_size", true, false);
	const char *hint = NULL;
	int			mb;

	if (value == NULL)
		return;
	if (!parse_int(value, &mb, GUC_UNIT_MB, &hint) || mb < 0 || mb > STAGING_MAX_MB)
		ereport(FATAL,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"odp_gpu.staging_size\": \"%s\"", value),
				 errdetail("It must be a size from 0 (no staging area) to %d MB.", STAGING_MAX_MB),
				 hint ? errhint("%s", hint) : 0));
	if (!StagingCheckSize(&mb, NULL, PGC_S_FILE))
		ereport(FATAL,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"odp_gpu.staging_size\": \"%s\"", value),
				 errdetail_internal("%s", GUC_check_errdetail_string)));
}

/* See service_staging.h. */
void
OdpStagingDefineSetting(GucContext fixed)
{
	if (fixed == PGC_POSTMASTER)
		StagingRefuseBadSize();
	DefineCustomIntVariable("odp_gpu.staging_size",
							"Size of the host memory inputs are read into for the GPU service.",
							"The backends and their parallel workers write inputs into it, and the service "
							"copies them to the GPU from it at the bus's page-locked speed.  Allocated when "
							"the server starts and page-locked while the service runs on GPUs; an input that "
							"finds no room streams to the service as with 0 (no area).",
							&odp_staging_mb, 1024, 0, STAGING_MAX_MB,
							fixed, GUC_UNIT_MB, StagingCheckSize, NULL, NULL);
}

/* See service_staging.h. */
void
OdpStagingCreate(void)
{
	/* the default area on a host of less than twice its size: half of it */
	if (StagingHostMb() > 0 && odp_staging_mb > StagingHostMb() / 2)
	{
		int			mb = (int) (StagingHostMb() / 2) & ~1;

		ereport(LOG,
				(errmsg("odp_gpu: the staging area takes %d MB, half of this host's memory, "
						"rather than odp_gpu.staging_size's default of %d MB", mb, odp_staging_mb)));
		odp_staging_mb = mb;
	}
	staging_bytes = (Size) odp_staging_mb * 1024 * 1024;
}

/* A memfd of bytes with flags (MFD_HUGETLB or 0), mapped shared at *p. */
static int
MemfdMapFlags(const char *name, Size bytes, unsigned int flags, void **p)
{
	int			fd = memfd_create(name, MFD_CLOEXEC | flags);
	int			saved;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t) bytes) == 0 &&
		(*p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) != MAP_FAILED)
		return fd;
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

/*
 * See service_staging.h.  The postmaster makes these areas once its main
 * shared memory is made, so that the server's own huge pages come first,
 * and before it starts any process.  In huge pages where the server may
 * use them (huge_pages not off) and the host has them: a new process then
 * maps an area with one entry per 2 MB, where with 4 kB pages each process
 * maps every page it touches again, which a parallel worker (a new process
 * every call) pays on each call (H200 host: 512 MB took 268 ms to write in
 * a new process, 48 ms in huge pages or in the process that had them
 * mapped already).
 */
int
OdpMemfdMap(const char *name, Size bytes, void **p, bool *huge)
{
	int			fd = -1;

	*huge = false;
#ifdef MFD_HUGETLB
	if (huge_pages != HUGE_PAGES_OFF && bytes % ODP_HUGE_PAGE_BYTES == 0)
		fd = MemfdMapFlags(name, bytes, MFD_HUGETLB, p);
	*huge = fd >= 0;
#endif
	if (fd < 0)
		fd = MemfdMapFlags(name, bytes, 0, p);
	return fd;
}

/* Makes the area, in huge pages where it can (OdpMemfdMap). */
static void
StagingMap(void)
{
	void	   *p = NULL;
	int			fd = OdpMemfdMap("odp_gpu staging", staging_bytes, &p, &staging_huge);

	/*
	 * Where the system refuses the area (no memfd, an address space too
	 * small), the server runs without it: inputs then stream to the
	 * service, slower, as with a size of 0.
	 */
	if (fd < 0)
	{
		ereport(WARNING,
				(errmsg("odp_gpu: could not make a staging area of %d MB: %m", odp_staging_mb),
				 errdetail("Inputs stream to the GPU service through its rings instead."),
				 errhint("Lower odp_gpu.staging_size, or set it to 0.")));
		staging_bytes = 0;
		return;
	}
	/*
	 * The descriptor stays open, inherited by every process the postmaster
	 * starts (closed on exec): the service hands it to its engine process.
	 */
	staging_fd = fd;
	staging_base = p;
}

/* See service_staging.h. */
Size
OdpStagingShmemSize(void)
{
	Size		nblocks = ((Size) odp_staging_mb * 1024 * 1024 + ODP_STAGING_BLOCK - 1) /
		ODP_STAGING_BLOCK;

	return add_size(offsetof(StagingShared, blocks), mul_size(nblocks, sizeof(StagingBlock)));
}

/* See service_staging.h. */
void
OdpStagingShmemInit(void *place, bool found)
{
	/* the postmaster, once: a restart after a crash keeps the area */
	if (!IsUnderPostmaster && staging_base == NULL && staging_bytes > 0)
		StagingMap();
	staging = place;
	if (found)
		return;
	staging->lock = &(GetNamedLWLockTranche(ODP_STAGING_TRANCHE))->lock;
	staging->nblocks = (int32) (staging_bytes / ODP_STAGING_BLOCK);
	staging->extents = 0;
	staging->used_blocks = 0;
	staging->cached_extents = 0;
	staging->cached_blocks = 0;
	staging->locked = false;
	pg_atomic_init_u64(&staging->misses, 0);
	for (int32 b = 0; b < staging->nblocks; b++)
	{
		memset(&staging->blocks[b], 0, sizeof(StagingBlock));
		staging->blocks[b].extent = -1;
	}
}

/* See service_staging.h. */
void
OdpStagingRequestLock(void)
{
	RequestNamedLWLockTranche(ODP_STAGING_TRANCHE, 1);
}

/* See service_staging.h. */
bool
OdpStagingConfigured(void)
{
	return staging != NULL && staging_base != NULL && staging->nblocks > 0;
}

/* See service_staging.h. */
char *
OdpStagingBase(void)
{
	return staging_base;
}

/* See service_staging.h. */
int
OdpStagingFd(void)
{
	return OdpStagingConfigured() ? staging_fd : -1;
}

/* See service_staging.h. */
Size
OdpStagingBytes(void)
{
	return staging_bytes;
}

static Size
StagingBlocksFor(Size bytes)
{
	return (Max(bytes, 1) + ODP_STAGING_BLOCK - 1) / ODP_STAGING_BLOCK;
}

/* The first block of the extent starting at p, or -1. */
static int32
StagingExtentAt(const void *p)
{
	Size		offset;

	if (!OdpStagingConfigured() || (const char *) p < staging_base ||
		(const char *) p >= staging_base + staging_bytes)
		return -1;
	offset = (Size) ((const char *) p - staging_base);
	if (offset % ODP_STAGING_BLOCK != 0)
		return -1;
	return (int32) (offset / ODP_STAGING_BLOCK);
}

/* Frees the blocks [first, first + n) (lock held). */
static void
StagingFreeBlocks(int32 first, int32 n)
{
	for (int32 b = first; b < first + n; b++)
	{
		memset(&staging->blocks[b], 0, sizeof(StagingBlock));
		staging->blocks[b].extent = -1;
	}
	staging->used_blocks -= n;
}

/* Frees the extent at first, or leaves it to the request reading it. */
static void
StagingDrop(int32 first)
{
	StagingBlock *head = &staging->blocks[first];

	if (head->readers > 0)
	{
		head->orphaned = true;
		head->owner = 0;
		return;
	}
	if (head->cached)
	{
		staging->cached_extents--;
		staging->cached_blocks -= head->length;
	}
	StagingFreeBlocks(first, head->length);
	staging->extents--;
}

/* before_shmem_exit: whatever this backend still holds goes back. */
static void
StagingAtExit(int code, Datum arg)
{
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	for (int32 b = 0; b < staging->nblocks; b++)
		if (staging->blocks[b].extent == b && staging->blocks[b].owner == MyProcPid)
			StagingDrop(b);
	LWLockRelease(staging->lock);
}

/*
 * Maps the pages of blocks [first, first + n) in this process, where the
 * kernel can, once per process: the area's pages are never given back, so
 * a block mapped once stays mapped.  Asking again costs a walk of every
 * page table entry (10 ms for 512 MB on the H200 host), on every call of
 * a session reading the same large input.
 */
static void
StagingPopulate(int32 first, int32 n)
{
#ifdef __linux__
	int32		b = first;

	if (staging_mapped == NULL)
		staging_mapped = MemoryContextAllocZero(TopMemoryContext,
												(Size) staging->nblocks / 8 + 1);
	while (b < first + n)
	{
		int32		run = b;

		if (staging_mapped[b / 8] & (1 << (b % 8)))
		{
			b++;
			continue;
		}
		while (b < first + n && !(staging_mapped[b / 8] & (1 << (b % 8))))
		{
			staging_mapped[b / 8] |= 1 << (b % 8);
			b++;
		}
		(void) madvise(staging_base + (Size) run * ODP_STAGING_BLOCK,
					   (Size) (b - run) * ODP_STAGING_BLOCK, MADV_POPULATE_WRITE);
	}
#endif
}

static int32 StagingTake(int32 need);

/* See service_staging.h. */
void *
OdpStagingAlloc(Size bytes)
{
	Size		need = StagingBlocksFor(bytes);
	int32		first;

	if (!OdpStagingConfigured() || need > (Size) staging->nblocks)
		return NULL;
	if (!staging_exit_hook)
	{
		before_shmem_exit(StagingAtExit, (Datum) 0);
		staging_exit_hook = true;
	}
	first = StagingTake((int32) need);
	if (first < 0)
		return NULL;
	StagingPopulate(first, (int32) need);
	return staging_base + (Size) first * ODP_STAGING_BLOCK;
}

/* The first of need free blocks, now this backend's; -1 where none. */
static int32
StagingTake(int32 need)
{
	int32		first = -1;
	int32		run = 0;

	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	for (int32 b = 0; b < staging->nblocks; b++)
	{
		if (staging->blocks[b].extent >= 0)
		{
			run = 0;
			b += staging->blocks[staging->blocks[b].extent].length -
				(b - staging->blocks[b].extent) - 1;
			continue;
		}
		if (++run == need)
		{
			first = b - run + 1;
			break;
		}
	}
	if (first >= 0)
	{
		for (int32 b = first; b < first + need; b++)
			staging->blocks[b].extent = first;
		staging->blocks[first].owner = MyProcPid;
		staging->blocks[first].length = need;
		staging->used_blocks += need;
		staging->extents++;
	}
	LWLockRelease(staging->lock);
	return first;
}

/* See service_staging.h. */
bool
OdpStagingResize(void *p, Size bytes)
{
	int32		first = StagingExtentAt(p);
	int32		need = (int32) StagingBlocksFor(bytes);
	int32		have;
	bool		ok = true;

	if (first < 0)
		return false;
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	have = staging->blocks[first].length;
	Assert(staging->blocks[first].owner == MyProcPid);
	if (need < have)
	{
		StagingFreeBlocks(first + need, have - need);
		staging->blocks[first].length = need;
	}
	else if (need > have)
	{
		if (first + need > staging->nblocks)
			ok = false;
		for (int32 b = first + have; ok && b < first + need; b++)
			ok = staging->blocks[b].extent < 0;
		if (ok)
		{
			for (int32 b = first + have; b < first + need; b++)
				staging->blocks[b].extent = first;
			staging->blocks[first].length = need;
			staging->used_blocks += need - have;
		}
	}
	LWLockRelease(staging->lock);
	if (ok && need > have)
		StagingPopulate(first + have, need - have);
	return ok;
}

/* See service_staging.h. */
void
OdpStagingFree(void *p)
{
	int32		first = StagingExtentAt(p);

	if (first < 0)
		return;
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	if (staging->blocks[first].extent == first && staging->blocks[first].owner == MyProcPid)
		StagingDrop(first);
	LWLockRelease(staging->lock);
}

/* See service_staging.h. */
bool
OdpStagingAdopt(Size offset)
{
	int32		first = (int32) (offset / ODP_STAGING_BLOCK);
	bool		ok;

	if (!OdpStagingConfigured() || offset % ODP_STAGING_BLOCK != 0 ||
		offset >= staging_bytes)
		return false;
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	ok = staging->blocks[first].extent == first &&
		staging->blocks[first].owner == MyProcPid && !staging->blocks[first].cached;
	if (ok)
	{
		staging->blocks[first].owner = 0;
		staging->blocks[first].cached = true;
		staging->cached_extents++;
		staging->cached_blocks += staging->blocks[first].length;
	}
	LWLockRelease(staging->lock);
	return ok;
}

/* See service_staging.h. */
void
OdpStagingDropCached(Size offset)
{
	int32		first = (int32) (offset / ODP_STAGING_BLOCK);

	if (!OdpStagingConfigured())
		return;
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	if (staging->blocks[first].extent == first && staging->blocks[first].cached &&
		!staging->blocks[first].orphaned)
		StagingDrop(first);
	LWLockRelease(staging->lock);
}

/* See service_staging.h. */
bool
OdpStagingFind(const void *ptr, Size bytes, Size *offset)
{
	if (!OdpStagingConfigured() || (const char *) ptr < staging_base ||
		(const char *) ptr + bytes > staging_base + staging_bytes)
		return false;
	*offset = (Size) ((const char *) ptr - staging_base);
	return true;
}

/* See service_staging.h. */
void
OdpStagingCountMiss(void)
{
	if (OdpStagingConfigured())
		pg_atomic_fetch_add_u64(&staging->misses, 1);
}

/* See service_staging.h. */
bool
OdpStagingAcquire(Size offset, Size bytes, int pid)
{
	int32		b = (int32) (offset / ODP_STAGING_BLOCK);
	bool		ok = false;

	if (!OdpStagingConfigured() || offset + bytes > staging_bytes)
		return false;
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	if (staging->blocks[b].extent >= 0)
	{
		int32		first = staging->blocks[b].extent;
		StagingBlock *head = &staging->blocks[first];

		ok = (head->owner == pid || head->cached) && !head->orphaned &&
			offset + bytes <= (Size) (first + head->length) * ODP_STAGING_BLOCK;
		if (ok)
			head->readers++;
	}
	LWLockRelease(staging->lock);
	return ok;
}

/* See service_staging.h. */
void
OdpStagingRelease(Size offset)
{
	int32		b = (int32) (offset / ODP_STAGING_BLOCK);

	if (!OdpStagingConfigured())
		return;
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	if (staging->blocks[b].extent >= 0)
	{
		int32		first = staging->blocks[b].extent;
		StagingBlock *head = &staging->blocks[first];

		Assert(head->readers > 0);
		if (--head->readers == 0 && head->orphaned)
			StagingDrop(first);
	}
	LWLockRelease(staging->lock);
}

/* See service_staging.h. */
void
OdpStagingResetReaders(void)
{
	if (!OdpStagingConfigured())
		return;
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	staging->locked = false;
	for (int32 b = 0; b < staging->nblocks; b++)
	{
		StagingBlock *head = &staging->blocks[b];

		if (head->extent != b)
			continue;
		head->readers = 0;
		if (head->orphaned)
			StagingDrop(b);
	}
	LWLockRelease(staging->lock);
}

/* See service_staging.h. */
void
OdpStagingSetLocked(bool locked)
{
	if (!OdpStagingConfigured())
		return;
	LWLockAcquire(staging->lock, LW_EXCLUSIVE);
	staging->locked = locked;
	LWLockRelease(staging->lock);
}

/* See service_staging.h. */
void
OdpStagingGetInfo(OdpStagingInfo *info)
{
	int32		run = 0;

	memset(info, 0, sizeof(*info));
	if (!OdpStagingConfigured())
		return;
	LWLockAcquire(staging->lock, LW_SHARED);
	info->size = (int64) staging_bytes;
	info->used = (staging->used_blocks - staging->cached_blocks) * (int64) ODP_STAGING_BLOCK;
	info->extents = staging->extents - staging->cached_extents;
	info->cached = staging->cached_blocks * (int64) ODP_STAGING_BLOCK;
	info->locked = staging->locked;
	info->huge_pages = staging_huge;
	for (int32 b = 0; b < staging->nblocks; b++)
	{
		run = staging->blocks[b].extent < 0 ? run + 1 : 0;
		info->largest_free = Max(info->largest_free, (int64) run * (int64) ODP_STAGING_BLOCK);
	}
	LWLockRelease(staging->lock);
	info->misses = (int64) pg_atomic_read_u64(&staging->misses);
}
