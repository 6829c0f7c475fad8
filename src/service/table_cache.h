/*-------------------------------------------------------------------------
 *
 * table_cache.h
 *	  The table cache: decoded inputs of unchanged tables, kept in the
 *	  staging area between calls, so that a repeated call on a table skips
 *	  its read.
 *
 * An entry is what the input layer made of a table: the matrix (float32
 * or float64 rows, or the bounds of regions), the ids and the flags, in
 * extents of the staging area (service_staging.h) that the cache owns.
 * It is keyed by database, relation, relfilenode and how the table was
 * read (the columns and the options of the decode), and it carries the
 * state of the table's pages it was read from (input/input_cache.c says
 * why that state proves the entry is what a read would return).  The
 * bookkeeping is one array of entries in the main shared memory under one
 * lock, taken before the staging area's.
 *
 * A backend that uses an entry pins it (once per array it holds), so the
 * entry is neither evicted nor dropped under it: an entry evicted or
 * dropped while pinned is only marked dead, never found again, and its
 * extents go back when the last pin does (and, for the service, once it
 * stops reading them).  Entries give way, least recently used first, to
 * any input that finds no room in the area, and together take at most
 * odp_gpu.table_cache_share of it.  The service's engine keeps copies of
 * entries' arrays on its devices (service_resident.h), each tied to one
 * entry's slot and generation.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/table_cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_TABLE_CACHE_H
#define ODP_TABLE_CACHE_H

#include "postgres.h"

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "storage/block.h"
#include "utils/guc.h"

#define ODP_CACHE_ENTRIES		64
#define ODP_CACHE_KEY_BYTES		1024	/* the read's description */
#define ODP_CACHE_MAX_VM_PAGES	128 /* visibility map pages: 32 GB of heap */
#define ODP_CACHE_MAX_COLUMNS	64	/* columns named in the view */
#define ODP_CACHE_MAX_UNMARKED	1024	/* heap pages not marked all-visible */

/* What was read from which table. */
typedef struct OdpCacheKey
{
	Oid			database;
	Oid			relid;
	Oid			tablespace;
	Oid			relfilenode;
	uint32		len;			/* bytes of desc used */
	uint8		desc[ODP_CACHE_KEY_BYTES];	/* input_cache.c's encoding of
											 * the columns and options */
} OdpCacheKey;

/*
 * The state of the table's pages that an entry is valid for: its heap
 * blocks, all of them marked all-visible but for a few (input_cache.c
 * says which), the LSN of each visibility map page that covers them and
 * of each page not marked.
 */
typedef struct OdpCacheState
{
	BlockNumber nblocks;
	int32		vm_pages;
	int32		unmarked_pages;		/* blocks not marked */
	XLogRecPtr	vm_lsn[ODP_CACHE_MAX_VM_PAGES];
	BlockNumber unmarked_page[ODP_CACHE_MAX_UNMARKED];
	XLogRecPtr	unmarked_lsn[ODP_CACHE_MAX_UNMARKED];
} OdpCacheState;

/* The arrays of an entry (OdpInput's, input.h). */
typedef enum OdpCachedArray
{
	ODP_CACHED_IDS = 0,
	ODP_CACHED_DATA,
	ODP_CACHED_DATA64,
	ODP_CACHED_MISSING,
	ODP_CACHED_LOWER,
	ODP_CACHED_UPPER,
	ODP_CACHED_BOUND_FLAGS,
	ODP_CACHED_ARRAYS
} OdpCachedArray;

typedef struct OdpCacheLayout
{
	int64		rows;
	int32		dims;
	bool		pieces;			/* OdpInput.pieces */
	bool		present[ODP_CACHED_ARRAYS];
	Size		offset[ODP_CACHED_ARRAYS];	/* in the staging area */
	Size		bytes[ODP_CACHED_ARRAYS];
} OdpCacheLayout;

/* An entry as a backend holds it: its slot and that slot's generation. */
typedef struct OdpCacheHandle
{
	int			slot;
	uint64		generation;
} OdpCacheHandle;

/* odp_gpu.table_cache and odp_gpu.table_cache_share. */
extern bool odp_table_cache;
extern double odp_table_cache_share;

extern void OdpTableCacheDefineSettings(GucContext fixed);
extern Size OdpTableCacheShmemSize(void);
extern void OdpTableCacheRequestLock(void);
extern void OdpTableCacheShmemInit(void *place, bool found);

/* Whether this session may use the cache: the area exists, the setting is on. */
extern bool OdpTableCacheEnabled(void);

/*
 * The live entry of key, pinned once for the caller (*h), with the page
 * state it is valid for and its layout; false where there is none.
 * Entries of the same relation with another relfilenode go (also when a
 * new entry is stored): no read finds them again.
 */
extern bool OdpTableCacheFind(const OdpCacheKey *key, OdpCacheHandle *h,
							  OdpCacheState *state, OdpCacheLayout *layout);

/* One more pin on a pinned entry, and one fewer. */
extern void OdpTableCachePin(OdpCacheHandle h);
extern void OdpTableCacheUnpin(OdpCacheHandle h);

/*
 * Whether the entry of slot and generation is still one a read may find
 * (neither stale, evicted nor dropped).
 */
extern bool OdpTableCacheLive(int slot, uint64 generation);

/* Counts a use of a pinned entry that was found valid. */
extern void OdpTableCacheCountHit(OdpCacheHandle h);

/* Drops a pinned entry that was found stale (the caller still unpins). */
extern void OdpTableCacheForget(OdpCacheHandle h);

/*
 * Makes an entry of key from extents of the staging area this backend
 * owns (layout's), valid for state, naming columns (attnums, the id's
 * first) in the view; the extents become the cache's and the entry is
 * pinned pins times for the caller (*h).  An older entry of the same key
 * is dropped.  False, nothing changed, where the entries' share of the
 * area leaves no room for it.
 */
extern bool OdpTableCacheStore(const OdpCacheKey *key, const OdpCacheState *state,
							   const OdpCacheLayout *layout, const int16 *columns,
							   int ncolumns, int pins, OdpCacheHandle *h);

/*
 * Evicts unpinned entries, least recently used first, until bytes have
 * been freed or none is left: an input that finds no room in the area
 * comes first.  Returns whether any was evicted.
 */
extern bool OdpTableCacheMakeRoom(Size bytes);

/*
 * Drops the entries of relation relid of this database (InvalidOid: every
 * entry of every database); returns how many.
 */
extern int64 OdpTableCacheDrop(Oid relid);

/* One entry, as the view odp_gpu_table_cache shows it. */
typedef struct OdpCacheInfo
{
	Oid			database;
	Oid			relid;
	int			ncolumns;
	int16		columns[ODP_CACHE_MAX_COLUMNS];
	int64		rows;
	int64		bytes;
	int			slot;			/* the entry: its slot and generation */
	uint64		generation;
	int64		hits;
	TimestampTz built_at;
	TimestampTz last_used_at;
} OdpCacheInfo;

/* The live entries (at most ODP_CACHE_ENTRIES, into info); how many. */
extern int	OdpTableCacheList(OdpCacheInfo *info);

#endif							/* ODP_TABLE_CACHE_H */
