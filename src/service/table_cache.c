/*-------------------------------------------------------------------------
 *
 * table_cache.c
 *	  The table cache's entries (table_cache.h): an array in the main
 *	  shared memory under one lock, and the pins of this backend.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/table_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "service/service_staging.h"
#include "service/table_cache.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#define ODP_CACHE_TRANCHE "odp_gpu_table_cache"

typedef struct CacheEntry
{
	bool		used;			/* the slot holds an entry */
	bool		dead;			/* evicted or dropped while pinned: never
								 * found again, freed at its last unpin */
	uint64		generation;		/* the slot's, new for each entry */
	int32		pins;
	Size		bytes;
	int64		hits;
	TimestampTz built_at;
	TimestampTz last_used_at;
	int			ncolumns;
	int16		columns[ODP_CACHE_MAX_COLUMNS];
	OdpCacheKey key;
	OdpCacheState state;
	OdpCacheLayout layout;
} CacheEntry;

typedef struct CacheShared
{
	LWLock	   *lock;
	uint64		next_generation;
	Size		bytes;			/* of live and dead entries */
	CacheEntry	entries[ODP_CACHE_ENTRIES];
} CacheShared;

bool		odp_table_cache = true;
double		odp_table_cache_share = 0.75;

static CacheShared *cache = NULL;

/* This backend's pins, by slot (of the generation pinned). */
static int32 local_pins[ODP_CACHE_ENTRIES];
static uint64 local_generation[ODP_CACHE_ENTRIES];
static bool exit_hook = false;

/* See table_cache.h. */
void
OdpTableCacheDefineSettings(GucContext fixed)
{
	DefineCustomBoolVariable("odp_gpu.table_cache",
							 "Keeps tables read for the GPU service, so that a repeated call on an unchanged table skips its read.",
							 "An entry is used only where the table's pages prove it is what a read would "
							 "return; any doubt reads the table.",
							 &odp_table_cache, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("odp_gpu.table_cache_share",
							 "The largest share of the staging area the table cache takes, and of each device's memory budget its copies on the GPUs take.",
							 "Entries also give way, least recently used first, to any input that finds no room, "
							 "and their copies to any request that would wait for memory.",
							 &odp_table_cache_share, 0.75, 0.0, 1.0,
							 fixed == PGC_POSTMASTER ? PGC_SIGHUP : fixed, 0, NULL, NULL, NULL);
}

/* See table_cache.h. */
Size
OdpTableCacheShmemSize(void)
{
	return sizeof(CacheShared);
}

/* See table_cache.h. */
void
OdpTableCacheRequestLock(void)
{
	RequestNamedLWLockTranche(ODP_CACHE_TRANCHE, 1);
}

/* See table_cache.h. */
void
OdpTableCacheShmemInit(void *place, bool found)
{
	cache = place;
	if (found)
		return;
	memset(cache, 0, sizeof(CacheShared));
	cache->lock = &(GetNamedLWLockTranche(ODP_CACHE_TRANCHE))->lock;
	cache->next_generation = 1;
}

/* See table_cache.h. */
bool
OdpTableCacheEnabled(void)
{
	return odp_table_cache && cache != NULL && OdpStagingConfigured() &&
		odp_table_cache_share > 0;
}

/* Gives an entry's extents back and empties its slot (lock held). */
static void
CacheFree(CacheEntry *e)
{
	for (int a = 0; a < ODP_CACHED_ARRAYS; a++)
		if (e->layout.present[a])
			OdpStagingDropCached(e->layout.offset[a]);
	cache->bytes -= e->bytes;
	e->used = false;
	e->dead = false;
	e->pins = 0;
}

/* Evicts or drops an entry: now, or at its last unpin (lock held). */
static void
CacheDrop(CacheEntry *e)
{
	if (e->pins > 0)
		e->dead = true;
	else
		CacheFree(e);
}

/* The least recently used unpinned live entry, or NULL (lock held). */
static CacheEntry *
CacheVictim(void)
{
	CacheEntry *victim = NULL;

	for (int s = 0; s < ODP_CACHE_ENTRIES; s++)
	{
		CacheEntry *e = &cache->entries[s];

		if (e->used && !e->dead && e->pins == 0 &&
			(victim == NULL || e->last_used_at < victim->last_used_at))
			victim = e;
	}
	return victim;
}

/*
 * Whether an entry of key a is stale for a read of key b: the same
 * relation with another relfilenode (rewritten or truncated since), which
 * no read finds again.
 */
static bool
KeyStale(const OdpCacheKey *a, const OdpCacheKey *b)
{
	return a->database == b->database && a->relid == b->relid &&
		(a->tablespace != b->tablespace || a->relfilenode != b->relfilenode);
}

static bool
KeyEqual(const OdpCacheKey *a, const OdpCacheKey *b)
{
	return a->database == b->database && a->relid == b->relid &&
		a->tablespace == b->tablespace && a->relfilenode == b->relfilenode &&
		a->len == b->len && memcmp(a->desc, b->desc, a->len) == 0;
}

/* before_shmem_exit: the pins this backend still holds go back. */
static void
CacheAtExit(int code, Datum arg)
{
	for (int s = 0; s < ODP_CACHE_ENTRIES; s++)
		while (local_pins[s] > 0)
			OdpTableCacheUnpin((OdpCacheHandle) {s, local_generation[s]});
}

/* Records n more pins of this backend on slot s (lock held). */
static void
CachePinLocal(int s, int n)
{
	CacheEntry *e = &cache->entries[s];

	if (!exit_hook)
	{
		before_shmem_exit(CacheAtExit, (Datum) 0);
		exit_hook = true;
	}
	Assert(local_pins[s] == 0 || local_generation[s] == e->generation);
	local_generation[s] = e->generation;
	local_pins[s] += n;
	e->pins += n;
}

/* See table_cache.h. */
bool
OdpTableCacheFind(const OdpCacheKey *key, OdpCacheHandle *h, OdpCacheState *state,
				  OdpCacheLayout *layout)
{
	bool		found = false;

	if (cache == NULL)
		return false;
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	for (int s = 0; s < ODP_CACHE_ENTRIES; s++)
	{
		CacheEntry *e = &cache->entries[s];

		if (e->used && !e->dead && KeyStale(&e->key, key))
			CacheDrop(e);
		if (found || !e->used || e->dead || !KeyEqual(&e->key, key))
			continue;
		CachePinLocal(s, 1);
		h->slot = s;
		h->generation = e->generation;
		*state = e->state;
		*layout = e->layout;
		found = true;
	}
	LWLockRelease(cache->lock);
	return found;
}

/* The entry a pinned handle names. */
static CacheEntry *
CachePinned(OdpCacheHandle h)
{
	CacheEntry *e = &cache->entries[h.slot];

	Assert(h.slot >= 0 && h.slot < ODP_CACHE_ENTRIES);
	Assert(e->used && e->generation == h.generation && e->pins > 0);
	Assert(local_pins[h.slot] > 0 && local_generation[h.slot] == h.generation);
	return e;
}

/* See table_cache.h. */
void
OdpTableCachePin(OdpCacheHandle h)
{
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	(void) CachePinned(h);
	CachePinLocal(h.slot, 1);
	LWLockRelease(cache->lock);
}

/* See table_cache.h. */
void
OdpTableCacheUnpin(OdpCacheHandle h)
{
	CacheEntry *e;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	e = CachePinned(h);
	local_pins[h.slot]--;
	if (--e->pins == 0 && e->dead)
		CacheFree(e);
	LWLockRelease(cache->lock);
}

/* See table_cache.h. */
bool
OdpTableCacheLive(int slot, uint64 generation)
{
	const CacheEntry *e;
	bool		live;

	if (cache == NULL || slot < 0 || slot >= ODP_CACHE_ENTRIES)
		return false;
	e = &cache->entries[slot];
	LWLockAcquire(cache->lock, LW_SHARED);
	live = e->used && !e->dead && e->generation == generation;
	LWLockRelease(cache->lock);
	return live;
}

/* See table_cache.h. */
void
OdpTableCacheCountHit(OdpCacheHandle h)
{
	CacheEntry *e;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	e = CachePinned(h);
	e->hits++;
	e->last_used_at = GetCurrentTimestamp();
	LWLockRelease(cache->lock);
}

/* See table_cache.h. */
void
OdpTableCacheForget(OdpCacheHandle h)
{
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	CachePinned(h)->dead = true;
	LWLockRelease(cache->lock);
}

/* See table_cache.h. */
bool
OdpTableCacheStore(const OdpCacheKey *key, const OdpCacheState *state,
				   const OdpCacheLayout *layout, const int16 *columns, int ncolumns,
				   int pins, OdpCacheHandle *h)
{
	Size		bytes = 0;
	Size		cap = (Size) (odp_table_cache_share * (double) OdpStagingBytes());
	CacheEntry *e = NULL;

	for (int a = 0; a < ODP_CACHED_ARRAYS; a++)
		if (layout->present[a])
			bytes += (layout->bytes[a] + ODP_STAGING_BLOCK - 1) / ODP_STAGING_BLOCK * ODP_STAGING_BLOCK;
	if (cache == NULL || bytes > cap)
		return false;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	for (int s = 0; s < ODP_CACHE_ENTRIES; s++)
		if (cache->entries[s].used && !cache->entries[s].dead &&
			(KeyEqual(&cache->entries[s].key, key) || KeyStale(&cache->entries[s].key, key)))
			CacheDrop(&cache->entries[s]);
	/* within the share, and a free slot */
	while (cache->bytes + bytes > cap)
	{
		CacheEntry *victim = CacheVictim();

		if (victim == NULL)
			break;
		CacheFree(victim);
	}
	for (int s = 0; s < ODP_CACHE_ENTRIES && e == NULL; s++)
		if (!cache->entries[s].used)
			e = &cache->entries[s];
	if (e == NULL && cache->bytes + bytes <= cap && (e = CacheVictim()) != NULL)
		CacheFree(e);
	if (e == NULL || cache->bytes + bytes > cap)
	{
		LWLockRelease(cache->lock);
		return false;
	}
	for (int a = 0; a < ODP_CACHED_ARRAYS; a++)
		if (layout->present[a] && !OdpStagingAdopt(layout->offset[a]))
			elog(ERROR, "odp_gpu: an array of a table read is not this backend's staging extent");
	memset(e, 0, sizeof(CacheEntry));
	e->used = true;
	e->generation = cache->next_generation++;
	e->bytes = bytes;
	e->built_at = e->last_used_at = GetCurrentTimestamp();
	e->ncolumns = Min(ncolumns, ODP_CACHE_MAX_COLUMNS);
	memcpy(e->columns, columns, sizeof(int16) * e->ncolumns);
	e->key = *key;
	e->state = *state;
	e->layout = *layout;
	cache->bytes += bytes;
	h->slot = (int) (e - cache->entries);
	h->generation = e->generation;
	CachePinLocal(h->slot, pins);
	LWLockRelease(cache->lock);
	return true;
}

/* See table_cache.h. */
bool
OdpTableCacheMakeRoom(Size bytes)
{
	Size		freed = 0;

	if (cache == NULL)
		return false;
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	while (freed < bytes)
	{
		CacheEntry *victim = CacheVictim();

		if (victim == NULL)
			break;
		freed += victim->bytes;
		CacheFree(victim);
	}
	LWLockRelease(cache->lock);
	return freed > 0;
}

/* See table_cache.h. */
int64
OdpTableCacheDrop(Oid relid)
{
	int64		dropped = 0;

	if (cache == NULL)
		return 0;
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	for (int s = 0; s < ODP_CACHE_ENTRIES; s++)
	{
		CacheEntry *e = &cache->entries[s];

		if (!e->used || e->dead)
			continue;
		if (OidIsValid(relid) && (e->key.database != MyDatabaseId || e->key.relid != relid))
			continue;
		CacheDrop(e);
		dropped++;
	}
	LWLockRelease(cache->lock);
	return dropped;
}

/* See table_cache.h. */
int
OdpTableCacheList(OdpCacheInfo *info)
{
	int			n = 0;

	if (cache == NULL)
		return 0;
	LWLockAcquire(cache->lock, LW_SHARED);
	for (int s = 0; s < ODP_CACHE_ENTRIES; s++)
	{
		const CacheEntry *e = &cache->entries[s];
		OdpCacheInfo *out = &info[n];

		if (!e->used || e->dead)
			continue;
		out->database = e->key.database;
		out->relid = e->key.relid;
		out->ncolumns = e->ncolumns;
		memcpy(out->columns, e->columns, sizeof(int16) * e->ncolumns);
		out->rows = e->layout.rows;
		out->bytes = (int64) e->bytes;
		out->slot = s;
		out->generation = e->generation;
		out->hits = e->hits;
		out->built_at = e->built_at;
		out->last_used_at = e->last_used_at;
		n++;
	}
	LWLockRelease(cache->lock);
	return n;
}
