/*-------------------------------------------------------------------------
 *
 * input_place.c
 *	  A table's rows placed at their ids' offsets as they are read.
 *
 * The engine takes rows in ascending id order.  A table whose rows are
 * stored out of that order (loaded by concurrent sessions, or updated)
 * used to be read in table order and then ordered: the ids ranked, and
 * every per-row array gathered through a second buffer.  That pass cost
 * a third of a serial read.  Where a valid btree index has the id column
 * first, its two ends give the smallest and largest id the read's own
 * snapshot sees, two descents of the index; every row then goes straight
 * to offset id - smallest of buffers as wide as that range, and a bitmap
 * of the offsets taken proves the ids distinct.  Offsets no row took (ids
 * deleted, or never used) close up at the end by one move of each run of
 * rows, in order.
 *
 * Nothing here trusts the index: an id outside the range, or read twice,
 * ends placing at that row (the rows read so far close up in id order and
 * the rest are appended, then ordered as before), so a wrong or stale
 * index costs time, never a wrong input, and a duplicate id still raises
 * the serial read's error.  A range much wider than the table's estimated
 * rows is not placed, since its buffers would be mostly holes.
 *
 * A parallel read (input_parallel.c) places its rows the same way: the
 * backend finds the range before the workers start, each participant
 * decodes its chunks' rows straight to their offsets in the shared output
 * and sets their bits with an atomic OR, and the backend closes the rows
 * up once all are read.  There an id outside the range, or read twice,
 * fails the parallel read, and the serial read that follows decides.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_place.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_opfamily_d.h"
#include "executor/tuptable.h"
#include "input/input_internal.h"
#include "miscadmin.h"
#include "odp_engine.h"
#include "optimizer/plancat.h"
#include "port/pg_bitutils.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* Index entries looked at for a visible row at each end before giving up. */
#define ODP_ID_RANGE_TRIES		64

/* The widest range placed, as a multiple of the estimated rows, plus slack. */
#define ODP_PLACE_WIDTH			1.25
#define ODP_PLACE_SLACK			1024

/* Rows moved between two looks for a cancel while closing up. */
#define ODP_PLACE_CHECK_ROWS	((int64) 1 << 16)

/*
 * Whether index (open) is a valid, complete btree index whose first key
 * is attnum of its table, ordered as integers.
 */
static bool
OdpIndexOrdersIds(Relation index, AttrNumber attnum)
{
	Form_pg_index form = index->rd_index;

	return index->rd_rel->relam == BTREE_AM_OID &&
		form->indisvalid && form->indisready && form->indislive &&
		form->indnkeyatts >= 1 &&
		form->indkey.values[0] == attnum &&
		index->rd_opfamily[0] == INTEGER_BTREE_FAM_OID &&
		RelationGetIndexPredicate(index) == NIL;
}

/*
 * The id of the first row snapshot sees from one end of index (dir), its
 * NULL entries skipped; false where none is found in ODP_ID_RANGE_TRIES
 * entries.
 */
static bool
OdpIndexEndId(Relation rel, Relation index, const OdpColumn *idcol,
			  Snapshot snapshot, ScanDirection dir, TupleTableSlot *slot,
			  int64 *id)
{
	ScanKeyData key;
	IndexScanDesc scan;
	bool		found = false;

	ScanKeyEntryInitialize(&key, SK_ISNULL | SK_SEARCHNOTNULL, 1,
						   InvalidStrategy, InvalidOid, InvalidOid,
						   InvalidOid, (Datum) 0);
	scan = index_beginscan(rel, index, snapshot, 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	for (int tries = 0; tries < ODP_ID_RANGE_TRIES && !found; tries++)
	{
		bool		isnull;
		Datum		value;

		if (index_getnext_tid(scan, dir) == NULL)
			break;
		if (!index_fetch_heap(scan, slot))
			continue;
		value = slot_getattr(slot, idcol->pos, &isnull);
		if (isnull)
			continue;
		*id = OdpIdValue(idcol, value);
		found = true;
	}
	index_endscan(scan);
	return found;
}

/*
 * The smallest and largest id that snapshot sees in rel, found through a
 * valid btree index whose first column is the id column (idcol: its
 * position is the attribute number); false where there is no such index, the table has no
 * rows or the ends of the index hold too many dead entries.
 */
static bool
OdpIdRangeFromIndex(Relation rel, const OdpColumn *idcol, Snapshot snapshot,
					int64 *lo, int64 *hi)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	bool		found = false;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);

		if (OdpIndexOrdersIds(index, idcol->pos))
		{
			TupleTableSlot *slot = table_slot_create(rel, NULL);
			int64		a = 0;
			int64		b = 0;

			found = OdpIndexEndId(rel, index, idcol, snapshot,
								  ForwardScanDirection, slot, &a) &&
				OdpIndexEndId(rel, index, idcol, snapshot,
							  BackwardScanDirection, slot, &b);
			ExecDropSingleTupleTableSlot(slot);
			if (found)
			{
				/* a descending index gives its ends the other way round */
				*lo = Min(a, b);
				*hi = Max(a, b);
			}
		}
		index_close(index, AccessShareLock);
		if (found)
			break;
	}
	list_free(indexes);
	return found;
}

/* See input_internal.h. */
bool
OdpPlacementRange(const OdpReader *r, Relation rel, Snapshot snapshot,
				  int64 *lo, int64 *span)
{
	BlockNumber pages;
	double		estimated_rows;
	double		allvisfrac;
	int64		hi;
	uint64		width;

	if (r->plan->pieces ||
		!OdpIdRangeFromIndex(rel, &r->plan->id, snapshot, lo, &hi))
		return false;
	width = (uint64) hi - (uint64) *lo + 1;
	estimate_rel_size(rel, NULL, &pages, &estimated_rows, &allvisfrac);
	if (width > (uint64) ODP_MAX_ROWS ||
		(double) width > estimated_rows * ODP_PLACE_WIDTH + ODP_PLACE_SLACK)
		return false;
	*span = (int64) width;
	return true;
}

/* See input_internal.h. */
bool
OdpReaderPlaceTable(OdpReader *r, Relation rel, Snapshot snapshot)
{
	int64		lo;
	int64		span;
	uint64	   *bits;

	Assert(r->rows == 0 && r->place == NULL);
	if (!OdpPlacementRange(r, rel, snapshot, &lo, &span))
		return false;
	if (r->capacity < span)
		OdpReaderReserve(r, span);
	bits = MemoryContextAllocHuge(r->outcxt, OdpPlacementWords(span) * sizeof(uint64));
	memset(bits, 0, OdpPlacementWords(span) * sizeof(uint64));
	OdpReaderAdoptPlacement(r, bits, lo, span);
	return true;
}

/* See input_internal.h. */
void
OdpReaderAdoptPlacement(OdpReader *r, uint64 *bits, int64 base, int64 span)
{
	r->place = bits;
	r->place_base = base;
	r->place_span = span;
}

/*
 * The first offset at or after from whose bit is set (want) or clear
 * (!want), or span where there is none.
 */
static int64
OdpNextPlaced(const uint64 *bits, int64 from, int64 span, bool want)
{
	int64		w = from / 64;
	uint64		word;

	if (from >= span)
		return span;
	word = want ? bits[w] : ~bits[w];
	word &= ~UINT64CONST(0) << (from % 64);
	while (word == 0)
	{
		if (++w * 64 >= span)
			return span;
		word = want ? bits[w] : ~bits[w];
	}
	return Min(w * 64 + pg_rightmost_one_pos64(word), span);
}

/*
 * Moves the placed rows to the front, in offset (so id) order, one move of
 * each run of placed rows per array; returns how many there are.
 */
static int64
OdpClosePlaced(OdpReader *r)
{
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	int			n;
	int64		to = 0;
	int64		start;
	int64		moved = 0;

	if (r->rows == 0)
		return 0;
	n = OdpReaderArrays(r, arrays);
	start = OdpNextPlaced(r->place, 0, r->place_span, true);
	while (start < r->place_span)
	{
		int64		end = OdpNextPlaced(r->place, start, r->place_span, false);

		if (start != to)
		{
			for (int a = 0; a < n; a++)
				memmove(*arrays[a].ptr + (Size) to * arrays[a].rowbytes,
						*arrays[a].ptr + (Size) start * arrays[a].rowbytes,
						(Size) (end - start) * arrays[a].rowbytes);
			moved += end - start;
			if (moved >= ODP_PLACE_CHECK_ROWS)
			{
				CHECK_FOR_INTERRUPTS();
				moved = 0;
			}
		}
		to += end - start;
		start = OdpNextPlaced(r->place, end, r->place_span, true);
	}
	Assert(to == r->rows);
	return to;
}

/* See input_internal.h. */
void
OdpReaderUnplace(OdpReader *r)
{
	OdpClosePlaced(r);
	pfree(r->place);
	r->place = NULL;
	/* in id order so far: appending checks the rest */
	r->sorted = true;
}

/* See input_internal.h. */
void
OdpReaderEndPlacement(OdpReader *r)
{
	if (r->place == NULL)
		return;
	OdpReaderUnplace(r);
	/* the bitmap proved every id distinct */
	r->unique = true;
	r->order = "placed";
}
