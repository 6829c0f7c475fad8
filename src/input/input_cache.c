/*-------------------------------------------------------------------------
 *
 * input_cache.c
 *	  The input layer's use of the table cache (service/table_cache.h):
 *	  which reads may be cached and under what key, the proof that an
 *	  entry is what a read would return, and an input made of an entry.
 *
 * Why an entry is never wrong.  An entry is made only from a table whose
 * heap pages were all all-visible in its visibility map, before and after
 * the read, with the same LSN on every map page.  A page marked
 * all-visible holds only tuples visible to every snapshot there is and
 * will be (VACUUM marks it only when every tuple's inserter is older than
 * every running snapshot's horizon and none is deleted or locked for
 * update).  Every change to a tuple on such a page (insert, update,
 * delete, and PostgreSQL's own in-place changes of anything but the
 * system catalogs, which are excluded) clears the page's mark, in the
 * same critical section as the change and under the map page's exclusive
 * lock, before the changer's transaction can commit; setting a mark again
 * moves the map page's LSN (visibilitymap_set logs it for every
 * WAL-logged relation).  A few pages may be left unmarked: pages of
 * zeroes (the bulk extension of concurrent loads leaves them, and VACUUM
 * never marks them), and pages whose dead line pointers wait for an index
 * pass (VACUUM skips the indexes when few pages have them, and leaves
 * those pages unmarked).  Each such page is read: it must hold no tuple
 * or only tuples visible to every snapshot (VACUUM's own test), and its
 * LSN is kept, since every change to a heap page of a WAL-logged
 * relation moves its LSN.  So while the relfilenode, the number of heap
 * blocks, every mark, every map page's LSN and every unmarked page's LSN
 * are what they were, no
 * tuple of the table has changed, and a read under any snapshot returns
 * the rows the entry was read from.  Values stored out of line are
 * immutable in TOAST (a changed value is a new one, referenced from a
 * changed heap tuple), so the heap's state covers them too.  TRUNCATE,
 * VACUUM FULL, CLUSTER and rewriting ALTER TABLEs give a new relfilenode;
 * other ALTER TABLEs that change what is read change the key (columns by
 * attnum and type).
 *
 * The check reads the map pages under their share lock: 1 page per 256
 * MB of heap, and a test of 2 bits per heap block (14,000 blocks for
 * 10^6 rows of 16 reals); and the unmarked pages (at most 1,024).
 *
 * Not cached, and why:
 *	- unlogged and temporary tables, and tables whose changes are not
 *	  WAL-logged (made or rewritten in this transaction under wal_level =
 *	  minimal): their map pages' LSNs do not move;
 *	- tables made or given a new relfilenode in this transaction;
 *	- system catalogs (changed in place without clearing marks);
 *	- tables of another access method than heap (no such map);
 *	- row-level security in effect, views, queries, partitioned and
 *	  inheritance parents, foreign tables: not read by a heap scan here
 *	  (input_reader.c); partitions read for their parent are;
 *	- regions with numeric bounds (kept as values for exact ranking);
 *	- a server in recovery (a standby's marks follow its primary's WAL,
 *	  which this proof does not cover).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/visibilitymapdefs.h"
#include "access/xlog.h"
#include "catalog/catalog.h"
#include "catalog/pg_class.h"
#include "common/relpath.h"
#include "input/input_internal.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "service/service_staging.h"
#include "shared_buffers.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/*
 * Heap blocks one visibility map page covers, 2 bits each, as
 * visibilitymap.c lays the map out (a format pg_upgrade carries over).
 */
#define ODP_VM_BLOCKS_PER_PAGE \
	((BlockNumber) ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData)) * (BITS_PER_BYTE / BITS_PER_HEAPBLOCK)))

/* Appends n bytes to the key's description; false where it is full. */
static bool
KeyAppend(OdpCacheKey *key, const void *p, Size n)
{
	if (key->len + n > ODP_CACHE_KEY_BYTES)
		return false;
	memcpy(key->desc + key->len, p, n);
	key->len += (uint32) n;
	return true;
}

#define KEY_ADD(key, v) KeyAppend((key), &(v), sizeof(v))

static bool
KeyAddColumn(OdpCacheKey *key, const OdpColumn *c)
{
	int32		kind = (int32) c->kind;
	int32		format = (int32) c->format;

	return KEY_ADD(key, c->attnum) && KEY_ADD(key, c->typid) &&
		KEY_ADD(key, c->is_array) && KEY_ADD(key, c->is_numeric) &&
		KEY_ADD(key, kind) && KEY_ADD(key, format);
}

/*
 * The key of reading rel by plan with spec's options (values as float64
 * where f64); false where the description does not fit.  The limit on
 * values per row is not in it: an entry whose rows are wider than a
 * read allows is not used for that read (OdpCacheBeforeRead), which then
 * raises the read's error.
 */
static bool
CacheKey(Relation rel, const OdpColumnPlan *plan, const OdpInputSpec *spec,
		 bool f64, OdpCacheKey *key)
{
	int32		values = (int32) spec->values;
	bool		ok;

	memset(key, 0, offsetof(OdpCacheKey, desc));
	key->database = MyDatabaseId;
	key->relid = RelationGetRelid(rel);
	key->tablespace = rel->rd_node.spcNode;
	key->relfilenode = rel->rd_node.relNode;
	ok = KEY_ADD(key, values) && KEY_ADD(key, spec->missing_ok) &&
		KEY_ADD(key, spec->pair_flags) &&
		KEY_ADD(key, f64) && KEY_ADD(key, plan->vector) &&
		KEY_ADD(key, plan->regions) && KEY_ADD(key, plan->pieces) &&
		KEY_ADD(key, plan->pair_flags) && KeyAddColumn(key, &plan->id) &&
		KEY_ADD(key, plan->nfeatures);
	for (int i = 0; ok && i < plan->nfeatures; i++)
		ok = KeyAddColumn(key, &plan->features[i]);
	ok = ok && KEY_ADD(key, plan->nregions);
	for (int i = 0; ok && plan->regions && i < plan->nregions; i++)
	{
		const OdpRegionColumn *rc = &plan->region[i];
		int32		fields[6] = {(int32) rc->kind, rc->feature, rc->dim, rc->ndims,
		(int32) rc->bound, (int32) rc->upper_bound};

		ok = KEY_ADD(key, fields) && KEY_ADD(key, rc->canonical);
	}
	return ok;
}

/* Why rel may not be cached, or NULL where it may. */
static const char *
CacheRefusal(Relation rel, const OdpColumnPlan *plan)
{
	if (RecoveryInProgress())
		return "the server is in recovery";
	if (rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
		return "the table is unlogged or temporary";
	if (rel->rd_createSubid != InvalidSubTransactionId ||
		rel->rd_firstRelfilenodeSubid != InvalidSubTransactionId)
		return "the table was made or rewritten in this transaction";
	if (!RelationNeedsWAL(rel))
		return "the table's changes are not WAL-logged";
	if (IsCatalogRelation(rel))
		return "the table is a system catalog";
	if (rel->rd_tableam != GetHeapamTableAmRoutine())
		return "the table is not a heap table";
	if (plan->exact_bounds)
		return "numeric bounds are read as values";
	return NULL;
}

/*
 * Whether every tuple on the page in buf (share-locked) is visible to
 * every snapshot there is and will be, as VACUUM requires before it marks
 * a page: inserted by a committed transaction older than every running
 * snapshot's horizon, and neither deleted nor updated (a lock alone
 * changes nothing).  Dead line pointers, which VACUUM leaves unmarked
 * when it skips the indexes, carry no tuple.
 */
static bool
PageVisibleToAll(Relation rel, Buffer buf, TransactionId oldest_xmin)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		item = PageGetItemId(page, off);
		HeapTupleData tuple;

		if (!ItemIdIsNormal(item))
			continue;
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, item);
		tuple.t_len = ItemIdGetLength(item);
		tuple.t_tableOid = RelationGetRelid(rel);
		ItemPointerSet(&tuple.t_self, BufferGetBlockNumber(buf), off);
		if (HeapTupleSatisfiesVacuum(&tuple, oldest_xmin, buf) != HEAPTUPLE_LIVE ||
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(tuple.t_data), oldest_xmin))
			return false;
	}
	return true;
}

/*
 * The state of rel's pages (table_cache.h): false, with *why, where some
 * heap block is not all-visible or the table is empty or too large.
 */
static bool
PagesState(Relation rel, OdpCacheState *st, const char **why)
{
	SMgrRelation smgr;
	TransactionId oldest_xmin = InvalidTransactionId;
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockNumber pages = (nblocks + ODP_VM_BLOCKS_PER_PAGE - 1) / ODP_VM_BLOCKS_PER_PAGE;

	st->nblocks = nblocks;
	st->vm_pages = (int32) pages;
	if (nblocks == 0)
	{
		*why = "the table is empty";
		return false;
	}
	if (pages > ODP_CACHE_MAX_VM_PAGES)
	{
		*why = "the table is larger than 32 GB";
		return false;
	}
	smgr = RelationGetSmgr(rel);
	if (!smgrexists(smgr, VISIBILITYMAP_FORKNUM) ||
		smgrnblocks(smgr, VISIBILITYMAP_FORKNUM) < pages)
	{
		*why = "some of the table's pages are not all-visible (VACUUM makes them so)";
		return false;
	}
	st->unmarked_pages = 0;
	for (BlockNumber p = 0; p < pages; p++)
	{
		Buffer		buf = ReadBufferExtended(rel, VISIBILITYMAP_FORKNUM, p, RBM_NORMAL, NULL);
		BlockNumber first = p * ODP_VM_BLOCKS_PER_PAGE;
		BlockNumber n = Min(nblocks - first, ODP_VM_BLOCKS_PER_PAGE);
		const uint8 *map;
		bool		room = true;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		st->vm_lsn[p] = PageGetLSN(BufferGetPage(buf));
		map = (const uint8 *) PageGetContents(BufferGetPage(buf));
		/* whole bytes (4 blocks each) at a time, a block where one is not */
		for (BlockNumber i = 0; room && i < n; i++)
		{
			if (i % 4 == 0 && i + 4 <= n && (map[i / 4] & 0x55) == 0x55)
			{
				i += 3;
				continue;
			}
			if ((map[i / 4] >> ((i % 4) * BITS_PER_HEAPBLOCK)) & VISIBILITYMAP_ALL_VISIBLE)
				continue;
			room = st->unmarked_pages < ODP_CACHE_MAX_UNMARKED;
			if (room)
				st->unmarked_page[st->unmarked_pages++] = first + i;
		}
		UnlockReleaseBuffer(buf);
		if (!room)
		{
			*why = "some of the table's pages are not all-visible (VACUUM makes them so)";
			return false;
		}
	}
	/*
	 * The blocks not marked: pages of zeroes, or pages whose tuples are all
	 * visible to all (dead line pointers aside), kept by their LSN
	 */
	if (st->unmarked_pages > 0)
		oldest_xmin = GetOldestNonRemovableTransactionId(rel);
	for (int32 i = 0; i < st->unmarked_pages; i++)
	{
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, st->unmarked_page[i], RBM_NORMAL, NULL);
		bool		visible;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		visible = PageIsNew(BufferGetPage(buf)) || PageVisibleToAll(rel, buf, oldest_xmin);
		st->unmarked_lsn[i] = BufferGetLSNAtomic(buf);
		UnlockReleaseBuffer(buf);
		if (!visible)
		{
			*why = "some of the table's pages are not all-visible (VACUUM makes them so)";
			return false;
		}
	}
	return true;
}

static bool
StatesEqual(const OdpCacheState *a, const OdpCacheState *b)
{
	return a->nblocks == b->nblocks && a->vm_pages == b->vm_pages &&
		a->unmarked_pages == b->unmarked_pages &&
		memcmp(a->vm_lsn, b->vm_lsn, sizeof(XLogRecPtr) * a->vm_pages) == 0 &&
		memcmp(a->unmarked_page, b->unmarked_page, sizeof(BlockNumber) * a->unmarked_pages) == 0 &&
		memcmp(a->unmarked_lsn, b->unmarked_lsn, sizeof(XLogRecPtr) * a->unmarked_pages) == 0;
}

/* See input_internal.h. */
void
OdpCacheBeforeRead(Relation rel, const OdpColumnPlan *plan, const OdpInputSpec *spec,
				   OdpCacheUse *cu)
{
	instr_time	start;
	instr_time	duration;
	OdpCacheState kept;
	const char *why = NULL;

	memset(cu, 0, sizeof(OdpCacheUse));
	if (!OdpTableCacheEnabled())
		return;
	INSTR_TIME_SET_CURRENT(start);
	cu->why = CacheRefusal(rel, plan);
	if (cu->why != NULL)
		return;
	if (!CacheKey(rel, plan, spec, OdpPlanReadsFloat64(plan, spec), &cu->key))
	{
		cu->why = "the read's description is too long";
		return;
	}
	cu->wanted = true;
	cu->columns[cu->ncolumns++] = plan->id.attnum;
	for (int i = 0; i < plan->nfeatures && cu->ncolumns < ODP_CACHE_MAX_COLUMNS; i++)
		cu->columns[cu->ncolumns++] = plan->features[i].attnum;

	cu->stable = PagesState(rel, &cu->before, &why);
	if (OdpTableCacheFind(&cu->key, &cu->handle, &kept, &cu->layout))
	{
		if (cu->layout.dims > OdpReadMaxDims(plan, spec))
		{
			why = "its rows have more values than this read allows";
			cu->stable = false;
			OdpTableCacheUnpin(cu->handle);
		}
		else if (cu->stable && StatesEqual(&kept, &cu->before))
		{
			cu->hit = true;
			/* what the scan would have taken for a serializable snapshot */
			PredicateLockRelation(rel, GetActiveSnapshot());
			OdpTableCacheCountHit(cu->handle);
		}
		else
		{
			why = cu->stable ? "the table changed since its entry was made" : why;
			OdpTableCacheForget(cu->handle);
			OdpTableCacheUnpin(cu->handle);
		}
	}
	else if (cu->stable)
		why = "no entry";
	cu->why = why;
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	cu->check_ms = INSTR_TIME_GET_MILLISEC(duration);
}

/* See input_internal.h. */
void
OdpCacheAfterScan(Relation rel, OdpCacheUse *cu)
{
	OdpCacheState after;
	const char *why = NULL;

	if (!cu->wanted || !cu->stable)
		return;
	cu->stable = PagesState(rel, &after, &why) && StatesEqual(&cu->before, &after);
	if (!cu->stable)
		cu->why = why != NULL ? why : "the table changed during the read";
}

/* The arrays of an input, in OdpCachedArray's order, and their bytes per value. */
static void
InputArrays(OdpInput *in, void ***ptrs, Size *unit)
{
	ptrs[ODP_CACHED_IDS] = (void **) &in->ids;
	ptrs[ODP_CACHED_DATA] = (void **) &in->data;
	ptrs[ODP_CACHED_DATA64] = (void **) &in->data64;
	ptrs[ODP_CACHED_MISSING] = (void **) &in->missing;
	ptrs[ODP_CACHED_LOWER] = (void **) &in->lower;
	ptrs[ODP_CACHED_UPPER] = (void **) &in->upper;
	ptrs[ODP_CACHED_BOUND_FLAGS] = (void **) &in->bound_flags;
	unit[ODP_CACHED_IDS] = sizeof(int64);
	unit[ODP_CACHED_DATA] = sizeof(float);
	unit[ODP_CACHED_DATA64] = sizeof(double);
	unit[ODP_CACHED_MISSING] = 1;
	unit[ODP_CACHED_LOWER] = sizeof(uint64);
	unit[ODP_CACHED_UPPER] = sizeof(uint64);
	unit[ODP_CACHED_BOUND_FLAGS] = 1;
}

/* Bytes of array a of an input of rows x dims. */
static Size
ArrayBytes(int a, int64 rows, int32 dims, Size unit)
{
	return (Size) rows * unit * (a == ODP_CACHED_IDS ? 1 : (Size) dims);
}

/* See input_internal.h. */
void
OdpCacheFillInput(OdpCacheUse *cu, MemoryContext outcxt, OdpInput *out)
{
	void	  **ptrs[ODP_CACHED_ARRAYS];
	Size		unit[ODP_CACHED_ARRAYS];

	Assert(cu->hit);
	out->rows = cu->layout.rows;
	out->dims = cu->layout.dims;
	out->pieces = cu->layout.pieces;
	InputArrays(out, ptrs, unit);
	for (int a = 0; a < ODP_CACHED_ARRAYS; a++)
	{
		char	   *base;

		if (!cu->layout.present[a])
			continue;
		base = OdpStagingBase() + cu->layout.offset[a];
		OdpTableCachePin(cu->handle);
		OdpSharedBufferUseCached(outcxt, base, cu->layout.bytes[a], cu->handle);
		*ptrs[a] = base;
	}
	OdpTableCacheUnpin(cu->handle);
	out->cached = true;
	out->cache_check_ms = cu->check_ms;
}

/* See input_internal.h. */
void
OdpCacheKeep(OdpCacheUse *cu, MemoryContext outcxt, OdpInput *out)
{
	void	  **ptrs[ODP_CACHED_ARRAYS];
	Size		unit[ODP_CACHED_ARRAYS];
	OdpCacheLayout layout;
	int			pins = 0;

	out->cache_why = cu->why;
	if (!cu->wanted || !cu->stable || cu->hit)
	{
		if (cu->why != NULL)
			ereport(DEBUG1,
					(errmsg_internal("odp_gpu: %s is not read from the table cache: %s",
									 out->source_desc, cu->why)));
		return;
	}
	if (out->rows == 0)
	{
		out->cache_why = "the table has no rows";
		return;
	}
	memset(&layout, 0, sizeof(layout));
	layout.rows = out->rows;
	layout.dims = out->dims;
	layout.pieces = out->pieces;
	InputArrays(out, ptrs, unit);

	/* every array into an extent of its own in the area */
	for (int a = 0; a < ODP_CACHED_ARRAYS; a++)
	{
		void	   *p = *ptrs[a];
		Size		bytes;

		if (p == NULL)
			continue;
		bytes = ArrayBytes(a, out->rows, out->dims, unit[a]);
		if (!OdpSharedBufferIsStaged(p))
		{
			void	   *staged = OdpSharedBufferCreate(outcxt, bytes, ODP_SHARED_STAGING);

			if (staged == NULL)
			{
				out->cache_why = "no room in the staging area";
				ereport(DEBUG1,
						(errmsg_internal("odp_gpu: %s is not kept in the table cache: no room in the staging area",
										 out->source_desc)));
				return;
			}
			memcpy(staged, p, bytes);
			if (OdpSharedBufferIs(p))
				OdpSharedBufferFree(p);
			else
				pfree(p);
			*ptrs[a] = p = staged;
		}
		layout.present[a] = true;
		layout.bytes[a] = bytes;
		if (!OdpStagingFind(p, bytes, &layout.offset[a]))
			elog(ERROR, "odp_gpu: a staged array lies outside the staging area");
		pins++;
	}
	if (!OdpTableCacheStore(&cu->key, &cu->before, &layout, cu->columns, cu->ncolumns,
							pins, &cu->handle))
	{
		out->cache_why = "larger than its share of the staging area, or every entry is in use";
		ereport(DEBUG1,
				(errmsg_internal("odp_gpu: %s is not kept in the table cache: larger than its share of the staging area, or every entry is in use",
								 out->source_desc)));
		return;
	}
	for (int a = 0; a < ODP_CACHED_ARRAYS; a++)
		if (layout.present[a])
			OdpSharedBufferToCached(*ptrs[a], cu->handle);
	out->cache_kept = true;
	ereport(DEBUG1,
			(errmsg_internal("odp_gpu: %s is not read from the table cache: %s; kept in it now",
							 out->source_desc, cu->why != NULL ? cu->why : "no entry")));
}

/* See input.h. */
void
OdpInputOwnArrays(OdpInput *in)
{
	void	  **ptrs[ODP_CACHED_ARRAYS];
	Size		unit[ODP_CACHED_ARRAYS];

	if (!in->cached && !in->cache_kept)
		return;
	InputArrays(in, ptrs, unit);
	for (int a = 0; a < ODP_CACHED_ARRAYS; a++)
	{
		void	   *p = *ptrs[a];
		void	   *own;
		Size		bytes;

		if (p == NULL)
			continue;
		bytes = ArrayBytes(a, in->rows, in->dims, unit[a]);
		own = MemoryContextAllocHuge(CurrentMemoryContext, Max(bytes, 1));
		memcpy(own, p, bytes);
		OdpSharedBufferFree(p);
		*ptrs[a] = own;
	}
	in->cached = in->cache_kept = false;
}
