/*-------------------------------------------------------------------------
 *
 * input_parallel.c
 *	  Reads a plain table with PostgreSQL parallel workers: the backend and
 *	  its workers scan the table's blocks in chunks, decode their rows and
 *	  write them straight into the output buffers in shared memory, in the
 *	  table's physical order, as the serial scan would have stored them.
 *
 * How the rows keep their order.  The blocks are cut into chunks taken in
 * ascending order from a shared counter.  A participant decodes the rows
 * of its chunk into a small private stage (with every check of the serial
 * reader) and publishes the chunk's row count; a chunk's place in the
 * output is the sum of the counts of the chunks before it, known as soon
 * as those are published.  The participant copies each staged chunk to its
 * place once known, while it goes on with the next chunks; it waits only
 * when it holds many chunks whose places are not yet known.  Nobody waits
 * for a chunk that is not being decoded, so the read cannot deadlock.
 * Wide rows (TOASTed arrays) skip the stage, and land in id order: the
 * participants first count each chunk's rows and write their ids at the
 * chunk's place (a scan of a few heap blocks); everyone publishes before
 * waiting, so this cannot deadlock either.  Once every chunk is counted,
 * the backend ranks the ids (the order the serial read's sort would
 * give) and shares each row's place; the participants then decode the
 * chunks again, each row straight into its final place.  Rows out of id
 * order so cost no move of the decoded rows afterwards (a pass over the
 * whole input, which took longer than the parallel read itself for
 * 512 MB of float8[] rows inserted by concurrent sessions).  A
 * participant maps the output's pages it is about to write in one call
 * per copy, not one fault per page.  Narrow rows out of id order are
 * staged and copied in table order as before; once every chunk is in the
 * output, the backend ranks the ids and every participant gathers a share
 * of the rows into a second output, in id order (where no second output
 * can be had, the backend alone moves them in place afterwards, as the
 * serial read does).
 *
 * Where an index on the ids gives their range (input_place.c), none of
 * that ordering happens: the backend finds the range before the workers
 * start, and every participant decodes each row of its chunks straight to
 * its id's offset in the output, narrow and wide rows alike, with no
 * stage and no counting round, marking the offset in a shared bitmap
 * (an id outside the range or taken twice fails the read, and the serial
 * read decides); the backend closes the rows up at the end.  Narrow rows
 * so placed map the output 64 kB at a time, once per participant.
 *
 * The output is sized before reading from the table's statistics (rows
 * per block times the blocks, or the planner's estimate for a table never
 * analysed), with a margin; a table that holds more rows than that is
 * read again serially.  Dimensions that the first row sets (arrays,
 * cubes) are found by the backend alone: only it takes chunks until it
 * has read a row, so the first row is the physically first one, as in
 * the serial read; it makes the output right after that row, so that the
 * workers start while it finishes its chunk.
 *
 * Errors.  The parallel read runs in a subtransaction.  Whatever fails in
 * it, in the backend or in a worker (a NULL, a NaN, a ragged array, no
 * shared memory), is rolled back, workers and buffers included, and the
 * table is then read serially, which raises the very error the serial
 * read raises, naming the same row.  Cancels, timeouts and shutdowns are
 * re-raised at once.
 *
 * Map of this file.  From top to bottom:
 *	- how many workers: OdpParallelReadWorkers, OdpParallelCapacity;
 *	- placing chunks: OdpPublishRows/Ids/Chunk, OdpCountCopied,
 *	  OdpPlaceStaged, OdpWaitToPlace;
 *	- waiting: OdpWaitUntil, and the states waited for (OdpChunkPlaced...);
 *	- the output: OdpScanChunk, OdpMapBuffers, OdpMapOutput, OdpMakeOutput;
 *	- wide rows: OdpCountChunkDirect (first round), OdpRankRows and
 *	  OdpAwaitOrder, OdpDecodeChunkDirect (second round);
 *	- rows placed at their ids' offsets: OdpMapPlaceWindow, OdpPlaceChunk;
 *	- taking the next chunk of a round: OdpTakeChunk; the second round's
 *	  loop, OdpDecodeInPlaces;
 *	- narrow rows: OdpReadChunkRows; OdpParticipate, every participant's
 *	  loop; OdpPlanGather and OdpGatherInOrder (rows out of id order);
 *	- the backend: OdpRunParallelRead, OdpReadTableParallel;
 *	- a worker: OdpParallelWorkerSpec, OdpParallelWorkerRead.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_parallel.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef __linux__
#include <sys/mman.h>
#endif
#include <math.h>
#include <unistd.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "input/input_internal.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/paths.h"
#include "optimizer/plancat.h"
#include "port/atomics.h"
#include "postmaster/bgworker_internals.h"
#include "service/service_staging.h"
#include "settings.h"
#include "shared_buffers.h"
#include "storage/bufmgr.h"
#include "storage/condition_variable.h"
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

#define ODP_PARALLEL_KEY_READ	UINT64CONST(0x4F44500000000001)
#define ODP_PARALLEL_KEY_SPEC	UINT64CONST(0x4F44500000000002)

/* Chunks per participant the blocks are cut into, and a chunk's limits. */
#define ODP_CHUNKS_PER_PARTICIPANT	64
#define ODP_CHUNK_MAX_BLOCKS		64

/* Decoded chunks, or bytes, a participant holds before it waits. */
#define ODP_MAX_STAGED_CHUNKS	32
#define ODP_MAX_STAGED_BYTES	((Size) 64 << 20)

/*
 * Where a table's values live out of line (TOAST), a heap block holds a
 * hundred rows of megabytes: a block is then cut into pieces of about
 * this many bytes of TOAST (at most ODP_MAX_BLOCK_PIECES), by line pointer,
 * so that the participants finish together (H200 host: the backend waited
 * 8-12 ms for the workers' last blocks of a 512 MB read, against 62-72 ms
 * for the whole of PostgreSQL's scan).
 */
#define ODP_PIECE_TOAST_BYTES	((double) (1 << 20))
#define ODP_MAX_BLOCK_PIECES	64

/* A participant's private stage starts with room for this many bytes. */
#define ODP_STAGE_FIRST_ROOM	((Size) 1 << 20)

/* Rows of at least this many bytes are decoded in place (OdpReadsDirect). */
#define ODP_DIRECT_ROW_BYTES	2048

/* Room in the output for more rows than the statistics say. */
#define ODP_CAPACITY_MARGIN		1.10
#define ODP_CAPACITY_SLACK		1024
/* And for the pieces per row, which the first chunks estimate. */
#define ODP_PIECES_MARGIN		1.25

/* One chunk of blocks. */
typedef struct OdpReadChunk
{
	int64		rows;			/* -1 until decoded */
	int64		offset;			/* its first output row, once placed */
	int64		first_id;
	int64		last_id;
	bool		ascending;		/* ids strictly ascending within */
} OdpReadChunk;

/* Where wide rows go (OdpReadsDirect): known once every chunk is counted. */
typedef enum OdpOrderState
{
	ODP_ORDER_PENDING,
	ODP_ORDER_IDENTITY,			/* ids ascending: each chunk at its offset */
	ODP_ORDER_PERMUTED			/* each row at its rank (order_handle) */
} OdpOrderState;

/* Whether staged rows are gathered in id order once all are copied. */
typedef enum OdpReorderState
{
	ODP_REORDER_PENDING,
	ODP_REORDER_NONE,			/* in order, or left to the backend alone */
	ODP_REORDER_GATHER			/* everyone gathers spans of rows */
} OdpReorderState;

/* Rows a participant gathers at a time. */
#define ODP_GATHER_SPAN_ROWS	16384

typedef enum OdpOutputState
{
	ODP_OUTPUT_PENDING,			/* the backend looks for the first row */
	ODP_OUTPUT_READY,			/* output allocated: every participant reads */
	ODP_OUTPUT_NONE				/* no row anywhere: nothing to read */
} OdpOutputState;

/* The state every participant shares, in the parallel context's segment. */
typedef struct OdpParallelRead
{
	BlockNumber nblocks;
	BlockNumber chunk_blocks;
	int			pieces;			/* chunks a block is cut into (chunk_blocks
								 * is then 1), by line pointer: piece i holds
								 * offsets [i * piece_span + 1, (i + 1) *
								 * piece_span], the last all the rest */
	int			piece_span;
	int64		nchunks;
	pg_atomic_uint64 next_chunk;
	ConditionVariable cv;		/* output ready, or chunks placed */
	slock_t		mutex;

	/* set by the backend before READY; read-only after */
	int			output;			/* OdpOutputState (under mutex) */
	int32		dims;
	int64		capacity;		/* under mutex until capacity_final */
	bool		capacity_final; /* rows of pieces (multiranges): set when
								 * the backend has seen a chunk's pieces */
	int			narrays;
	dsm_handle	handles[ODP_READER_ARRAYS]; /* 0: in the staging area */
	Size		offsets[ODP_READER_ARRAYS]; /* in the area or the segment */

	/* under mutex */
	int64		placed_chunks;	/* chunks < this have their offsets */
	int64		placed_rows;
	bool		overflow;		/* more rows than capacity: read again */
	bool		any_missing;
	bool		any_bflag;
	bool		exact_long;		/* numeric bounds: input_exact.c */
	uint8		exact_dims[ODP_MAX_INTERVAL_DIMS];

	/* wide rows: counted, then decoded in a second round */
	int64		counted_chunks; /* under mutex: ids published */
	int			order;			/* OdpOrderState, under mutex */
	dsm_handle	order_handle;	/* PERMUTED: each row's place, in table order */
	pg_atomic_uint64 next_decode;

	/* narrow rows out of id order: gathered in id order by everyone */
	int64		copied_chunks;	/* under mutex: chunks in the output */
	int			reorder;		/* OdpReorderState, under mutex */
	dsm_handle	from_handle;	/* from[j]: the row that goes to place j */
	dsm_handle	gather_handles[ODP_READER_ARRAYS];	/* the second output */
	Size		gather_offsets[ODP_READER_ARRAYS];
	pg_atomic_uint64 next_span;
	int64		spans_done;		/* under mutex */

	/*
	 * Rows placed at their ids' offsets (input_place.c), decided before
	 * the workers start: a bit per offset taken, place_offset bytes from
	 * this struct
	 */
	bool		placing;
	int64		place_base;
	int64		place_span;
	Size		place_offset;
	int64		placed_total;	/* under mutex: rows placed */

	OdpReadChunk chunks[FLEXIBLE_ARRAY_MEMBER];
} OdpParallelRead;

/* The bitmap of offsets taken of a read that places its rows. */
static inline pg_atomic_uint64 *
OdpPlaceBits(OdpParallelRead *s)
{
	return (pg_atomic_uint64 *) ((char *) s + s->place_offset);
}

/* What a worker needs of the spec to resolve the columns as the backend did. */
typedef struct OdpSpecWire
{
	Oid			relid;
	OdpValueType values;
	bool		missing_ok;
	int32		max_dims;
	uint8		pair_flags;
	bool		empty_ok;
	Size		id_column_len;	/* 0 = NULL */
	Size		features_len;	/* 0 = NULL */
	char		data[FLEXIBLE_ARRAY_MEMBER];
} OdpSpecWire;

/* One participant (the backend or a worker) while it reads. */
typedef struct OdpParticipant
{
	OdpParallelRead *shared;
	Relation	rel;
	OdpReader	stage;			/* decoded rows not yet copied */
	MemoryContext cxt;			/* the stage's, deleted when done */
	int			narrays;
	char	   *out[ODP_READER_ARRAYS];	/* this process's mapping */
	dsm_segment *segs[ODP_READER_ARRAYS];	/* a worker's mappings of them */
	int			nstaged;
	int64		staged_chunk[ODP_MAX_STAGED_CHUNKS];
	int64		staged_start[ODP_MAX_STAGED_CHUNKS];
	int64	   *chunk_ids;		/* wide rows: a chunk's ids while counted */
	int64		chunk_ids_room;
	const int64 *place;			/* wide rows out of id order: row -> place */
	dsm_segment *order_seg;		/* the mapping of place */
	dsm_segment *from_seg;		/* narrow rows out of id order: the order */
	int64		placed;			/* rows this participant placed */
	uint8	   *mapped[ODP_READER_ARRAYS];	/* placing narrow rows: a bit per
											 * window of each array's output
											 * this process has mapped */
} OdpParticipant;

/* ---- how many workers ---- */

/*
 * The workers PostgreSQL would give a scan of rel: its parallel_workers
 * option, else one more for every tripling of its size beyond
 * min_parallel_table_scan_size, as the planner sizes a parallel
 * sequential scan; the size counts the TOAST table, which the read
 * detoasts.  Capped by max_parallel_workers_per_gather.  None where
 * workers cannot help: a temporary table, a table access method other
 * than heap, or an operation already parallel.
 */
static int
OdpParallelReadWorkers(Relation rel, BlockNumber heap_blocks)
{
	BlockNumber blocks = heap_blocks;
	int			workers;

	if (odp_parallel_read == ODP_PARALLEL_READ_OFF ||
		max_parallel_workers_per_gather <= 0 || IsInParallelMode() ||
		!IsUnderPostmaster || RelationUsesLocalBuffers(rel) ||
		rel->rd_tableam != GetHeapamTableAmRoutine() || heap_blocks == 0)
		return 0;
	if (odp_parallel_read == ODP_PARALLEL_READ_FORCE)
		return max_parallel_workers_per_gather;

	workers = RelationGetParallelWorkers(rel, -1);
	if (workers < 0)
	{
		double		threshold = Max(min_parallel_table_scan_size, 1);

		if (OidIsValid(rel->rd_rel->reltoastrelid))
		{
			Relation	toast = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);

			blocks += RelationGetNumberOfBlocks(toast);
			table_close(toast, AccessShareLock);
		}
		if (blocks < threshold)
			return 0;
		workers = 1;
		while (blocks >= threshold * 3 && workers < MAX_PARALLEL_WORKER_LIMIT)
		{
			workers++;
			threshold *= 3;
		}
	}
	return Min(workers, max_parallel_workers_per_gather);
}

/*
 * Rows the output has room for: the table's rows per block (last VACUUM
 * or ANALYZE) times its blocks now, or the planner's estimate from column
 * widths for a table never analysed, with a margin.
 */
static int64
OdpParallelCapacity(Relation rel)
{
	BlockNumber pages;
	double		tuples;
	double		allvisfrac;

	estimate_rel_size(rel, NULL, &pages, &tuples, &allvisfrac);
	return (int64) Min(tuples * ODP_CAPACITY_MARGIN + ODP_CAPACITY_SLACK,
					   (double) ODP_MAX_ROWS);
}

/* ---- placing chunks ---- */

/* Publishes chunk c's row count and the places that are now known. */
static void
OdpPublishRows(OdpParallelRead *s, int64 c, int64 rows)
{
	bool		advanced = false;

	SpinLockAcquire(&s->mutex);
	s->chunks[c].rows = rows;
	while (s->placed_chunks < s->nchunks && s->chunks[s->placed_chunks].rows >= 0)
	{
		s->chunks[s->placed_chunks].offset = s->placed_rows;
		s->placed_rows += s->chunks[s->placed_chunks].rows;
		s->placed_chunks++;
		advanced = true;
	}
	if (s->capacity_final && s->placed_rows > s->capacity)
		s->overflow = true;
	SpinLockRelease(&s->mutex);
	if (advanced)
		ConditionVariableBroadcast(&s->cv);
}

/* Records the first and last ids of chunk c's n rows, ids; counts c. */
static void
OdpPublishIds(OdpParallelRead *s, int64 c, const int64 *ids, int64 n)
{
	bool		ascending = true;
	bool		all;

	for (int64 i = 1; i < n; i++)
		ascending &= ids[i] > ids[i - 1];

	SpinLockAcquire(&s->mutex);
	s->chunks[c].first_id = n > 0 ? ids[0] : 0;
	s->chunks[c].last_id = n > 0 ? ids[n - 1] : 0;
	s->chunks[c].ascending = ascending;
	all = ++s->counted_chunks == s->nchunks;
	SpinLockRelease(&s->mutex);
	/* wide rows: the backend waits for the last chunk's ids to rank them */
	if (all)
		ConditionVariableBroadcast(&s->cv);
}

/* Counts chunks copied to the output (an empty one counts at once). */
static void
OdpCountCopied(OdpParallelRead *s, int64 chunks)
{
	bool		all;

	SpinLockAcquire(&s->mutex);
	s->copied_chunks += chunks;
	all = s->copied_chunks == s->nchunks;
	SpinLockRelease(&s->mutex);
	/* the backend waits for the last copy to order the rows */
	if (all)
		ConditionVariableBroadcast(&s->cv);
}

/* Publishes chunk c's rows, the stage's from start on. */
static void
OdpPublishChunk(OdpParallelRead *s, int64 c, const OdpReader *stage, int64 start)
{
	OdpPublishIds(s, c, stage->ids + start, stage->rows - start);
	OdpPublishRows(s, c, stage->rows - start);
	if (stage->rows == start)
		OdpCountCopied(s, 1);
}

/* OdpPopulate for a write. */
static void
OdpPrefault(char *dst, Size bytes)
{
	OdpPopulate(dst, bytes, false);
}

/*
 * Copies the staged chunks whose places are known to the output; returns
 * whether any is left.  Once all are copied the stage starts empty again.
 */
static bool
OdpPlaceStaged(OdpParticipant *p)
{
	OdpParallelRead *s = p->shared;
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	int64		placed;
	bool		overflow;
	int			done = 0;

	SpinLockAcquire(&s->mutex);
	placed = s->placed_chunks;
	overflow = s->overflow;
	SpinLockRelease(&s->mutex);

	if (!overflow)
	{
		(void) OdpReaderArrays(&p->stage, arrays);
		for (; done < p->nstaged && p->staged_chunk[done] < placed; done++)
		{
			const OdpReadChunk *chunk = &s->chunks[p->staged_chunk[done]];
			int64		start = p->staged_start[done];

			for (int a = 0; a < p->narrays; a++)
			{
				char	   *dst = p->out[a] + (Size) chunk->offset * arrays[a].rowbytes;
				Size		bytes = (Size) chunk->rows * arrays[a].rowbytes;

				OdpPrefault(dst, bytes);
				memcpy(dst, *arrays[a].ptr + (Size) start * arrays[a].rowbytes, bytes);
			}
		}
		if (done > 0)
			OdpCountCopied(s, done);
	}
	else
		done = p->nstaged;		/* the rows are read again serially */

	if (done == p->nstaged)
	{
		p->nstaged = 0;
		p->stage.rows = 0;
		return false;
	}
	/* keep the rest, in chunk order */
	memmove(p->staged_chunk, p->staged_chunk + done, sizeof(int64) * (p->nstaged - done));
	memmove(p->staged_start, p->staged_start + done, sizeof(int64) * (p->nstaged - done));
	p->nstaged -= done;
	return true;
}

/* Bytes the stage holds. */
static Size
OdpStagedBytes(OdpParticipant *p)
{
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	int			n = OdpReaderArrays(&p->stage, arrays);
	Size		row = 0;

	for (int a = 0; a < n; a++)
		row += arrays[a].rowbytes;
	return row * (Size) p->stage.rows;
}

/* Waits until the first staged chunk has its place, and copies what can be. */
static void
OdpWaitToPlace(OdpParticipant *p)
{
	ConditionVariablePrepareToSleep(&p->shared->cv);
	while (OdpPlaceStaged(p))
		ConditionVariableSleep(&p->shared->cv, PG_WAIT_EXTENSION);
	ConditionVariableCancelSleep();
}

/* A state the participants wait for, tested under the shared mutex. */
typedef bool (*OdpReadTest) (const OdpParallelRead *s, int64 arg);

/* Sleeps on the shared condition variable until test(s, arg) holds. */
static void
OdpWaitUntil(OdpParallelRead *s, OdpReadTest test, int64 arg)
{
	bool		done;

	ConditionVariablePrepareToSleep(&s->cv);
	for (;;)
	{
		SpinLockAcquire(&s->mutex);
		done = test(s, arg);
		SpinLockRelease(&s->mutex);
		if (done)
			break;
		ConditionVariableSleep(&s->cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
}

/* The states waited for (OdpWaitUntil); overflow ends every wait for chunks. */
static bool
OdpOutputDecided(const OdpParallelRead *s, int64 arg)
{
	return s->output != ODP_OUTPUT_PENDING;
}

/* Chunk arg has its offset. */
static bool
OdpChunkPlaced(const OdpParallelRead *s, int64 arg)
{
	return s->placed_chunks > arg || s->overflow;
}

/* Every chunk's ids are published (wide rows, the backend). */
static bool
OdpAllCounted(const OdpParallelRead *s, int64 arg)
{
	return s->counted_chunks == s->nchunks || s->overflow;
}

/* The wide rows' places are known (a worker). */
static bool
OdpOrderDecided(const OdpParallelRead *s, int64 arg)
{
	return s->order != ODP_ORDER_PENDING || s->overflow;
}

/* Every staged chunk is in the output (narrow rows, the backend). */
static bool
OdpAllCopied(const OdpParallelRead *s, int64 arg)
{
	return s->copied_chunks == s->nchunks || s->overflow;
}

/* Whether the rows are gathered is known (a worker). */
static bool
OdpReorderDecided(const OdpParallelRead *s, int64 arg)
{
	return s->reorder != ODP_REORDER_PENDING;
}

/* All arg spans are gathered (the backend). */
static bool
OdpSpansGathered(const OdpParallelRead *s, int64 arg)
{
	return s->spans_done == arg;
}

/* ---- scanning ---- */

/* Restarts scan on chunk c's blocks (OdpChunkNext gives its rows). */
static void
OdpScanChunk(const OdpParallelRead *s, TableScanDesc scan, int64 c)
{
	BlockNumber start = (BlockNumber) (c / s->pieces * s->chunk_blocks);

	table_rescan(scan, NULL);
	heap_setscanlimits(scan, start, Min(s->chunk_blocks, s->nblocks - start));
}

/*
 * The next row of chunk c into slot; false when the chunk has no more.  A
 * piece of a block skips the rows before its line pointers, and stops at
 * the first after them (a block's rows come in line pointer order).
 */
static inline bool
OdpChunkNext(const OdpParallelRead *s, TableScanDesc scan, TupleTableSlot *slot,
			 int64 c)
{
	int			piece;
	OffsetNumber first;

	if (s->pieces == 1)
		return table_scan_getnextslot(scan, ForwardScanDirection, slot);
	piece = (int) (c % s->pieces);
	first = (OffsetNumber) (piece * s->piece_span + 1);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		OffsetNumber off = ItemPointerGetOffsetNumber(&slot->tts_tid);

		if (off < first)
			continue;
		return piece == s->pieces - 1 || off < first + s->piece_span;
	}
	return false;
}

/*
 * How many pieces each block is cut into (ODP_PIECE_TOAST_BYTES), and in
 * *span the line pointers of a piece (the rows a block holds, as the
 * statistics say, shared by its pieces): 1 but where chunks are single
 * blocks whose rows' TOAST is large.
 */
static int
OdpBlockPieces(Relation rel, BlockNumber nblocks, BlockNumber chunk_blocks, int *span)
{
	Relation	toastrel;
	double		toast_per_block;
	BlockNumber pages;
	double		tuples;
	double		allvisfrac;
	int			pieces;

	*span = MaxHeapTuplesPerPage;
	if (chunk_blocks > 1 || nblocks == 0 || !OidIsValid(rel->rd_rel->reltoastrelid))
		return 1;
	toastrel = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);
	toast_per_block = (double) RelationGetNumberOfBlocks(toastrel) * BLCKSZ / nblocks;
	table_close(toastrel, AccessShareLock);
	pieces = (int) Max(1, Min(toast_per_block / ODP_PIECE_TOAST_BYTES, ODP_MAX_BLOCK_PIECES));
	estimate_rel_size(rel, NULL, &pages, &tuples, &allvisfrac);
	*span = (int) Max(1, Min(ceil(tuples / nblocks / pieces), (double) MaxHeapTuplesPerPage));
	return pieces;
}

/*
 * Maps n shared buffers given by handles (0: the staging area) and
 * offsets into out, the segments this process attached in segs (a
 * worker).
 */
static void
OdpMapBuffers(int n, const dsm_handle *handles, const Size *offsets,
			  char **out, dsm_segment **segs)
{
	for (int a = 0; a < n; a++)
	{
		dsm_segment *seg = NULL;

		segs[a] = NULL;
		/* the staging area is mapped in every process, at one address */
		if (handles[a] == 0)
		{
			out[a] = OdpStagingBase() + offsets[a];
			continue;
		}
		/*
		 * A segment mapped already (several arrays in the backend's own
		 * area, or a second output in the area of the first) is mapped once:
		 * attaching it again is an error.
		 */
		seg = dsm_find_mapping(handles[a]);
		if (seg == NULL)
		{
			seg = segs[a] = dsm_attach(handles[a]);
			if (seg == NULL)
				elog(ERROR, "odp_gpu: could not map the parallel read's output");
		}
		out[a] = (char *) dsm_segment_address(seg) + offsets[a];
	}
}

/* Detaches what OdpMapBuffers attached. */
static void
OdpUnmapBuffers(int n, dsm_segment **segs)
{
	for (int a = 0; a < n; a++)
		if (segs[a] != NULL)
			dsm_detach(segs[a]);
}

/* Maps the output buffers the backend made (a worker). */
static void
OdpMapOutput(OdpParticipant *p)
{
	OdpParallelRead *s = p->shared;

	p->narrays = s->narrays;
	OdpMapBuffers(s->narrays, s->handles, s->offsets, p->out, p->segs);
}

/* Where shared buffer buf is, for the workers (handle 0: the staging area). */
static void
OdpLocateBuffer(const void *buf, dsm_handle *handle, Size *offset)
{
	OdpSharedLocation loc;

	if (!OdpSharedBufferFind(buf, 1, &loc))
		elog(ERROR, "odp_gpu: parallel read output is not in shared memory");
	*handle = loc.staged ? 0 : loc.handle;
	*offset = loc.offset;
}

/* Waits until the backend has made the output (a worker); false: no rows. */
static bool
OdpWaitForOutput(OdpParallelRead *s)
{
	int			state;

	OdpWaitUntil(s, OdpOutputDecided, 0);
	SpinLockAcquire(&s->mutex);
	state = s->output;
	SpinLockRelease(&s->mutex);
	return state == ODP_OUTPUT_READY;
}

/* Sets the output state and wakes the workers (the backend). */
static void
OdpSetOutputState(OdpParallelRead *s, OdpOutputState state)
{
	SpinLockAcquire(&s->mutex);
	s->output = state;
	SpinLockRelease(&s->mutex);
	ConditionVariableBroadcast(&s->cv);
}

/*
 * Sizes the output of a read of pieces (multiranges: a row can make
 * several) from the rows the statistics give times the pieces per row of
 * the chunks the backend has read, with a margin; a table with more
 * pieces than that is read again serially, like any overflow.
 */
static void
OdpFinalCapacity(OdpParallelRead *s, const OdpReader *stage)
{
	int64		rows = 0;
	double		per_row;

	for (int64 i = 0; i < stage->rows; i++)
		rows += stage->piece[i] == 0;
	per_row = (double) stage->rows / (double) Max(rows, 1);
	SpinLockAcquire(&s->mutex);
	s->capacity = (int64) Min(s->capacity * per_row * ODP_PIECES_MARGIN + ODP_CAPACITY_SLACK,
							  (double) ODP_MAX_ROWS);
	s->capacity_final = true;
	if (s->placed_rows > s->capacity)
		s->overflow = true;
	SpinLockRelease(&s->mutex);
}

/*
 * Makes the output once the stage knows the dimensions (the backend):
 * the final reader's buffers move to shared memory, which the workers
 * map.  Raises an error where no shared memory can be had (the read is
 * then done serially).
 */
static void
OdpMakeOutput(OdpParticipant *p, OdpReader *r)
{
	OdpParallelRead *s = p->shared;
	OdpReaderArray arrays[ODP_READER_ARRAYS];

	if (r->dims < 0)
	{
		/* its buffers are made anew in shared memory just below */
		r->first_room = 1;
		OdpReaderSetDims(r, p->stage.dims);
	}
	if (!s->capacity_final)
		OdpFinalCapacity(s, &p->stage);
	if (!OdpReaderShareBuffers(r, s->capacity))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("odp_gpu: no shared memory for a parallel read")));
	p->narrays = OdpReaderArrays(r, arrays);
	s->narrays = p->narrays;
	s->dims = r->dims;
	for (int a = 0; a < p->narrays; a++)
	{
		p->out[a] = *arrays[a].ptr;
		OdpLocateBuffer(p->out[a], &s->handles[a], &s->offsets[a]);
	}
	OdpSetOutputState(s, ODP_OUTPUT_READY);
}

/*
 * Whether the rows are wide enough (TOASTed arrays) to be decoded straight
 * into the output: a chunk's rows are then counted first, which costs a
 * scan of its heap blocks but lets every participant publish its chunk's
 * count at once and write at its place without a private stage and a
 * second copy.  Narrow rows are staged: a second scan would cost more than
 * the copy.  Pieces (multiranges) are staged: their count is the decoded
 * rows'.
 */
static bool
OdpReadsDirect(OdpParticipant *p)
{
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	int			n;
	Size		row = 0;

	if (p->stage.plan->pieces || p->stage.dims < 0)
		return false;
	n = OdpReaderArrays(&p->stage, arrays);
	for (int a = 0; a < n; a++)
		row += arrays[a].rowbytes;
	return row >= ODP_DIRECT_ROW_BYTES;
}

/*
 * Waits until the chunks before c are counted; returns chunk c's first
 * output row, or -1 where the output is too small (the table is then
 * read again serially).
 */
static int64
OdpWaitForOffset(OdpParallelRead *s, int64 c, int64 rows)
{
	bool		overflow;
	int64		offset;

	OdpWaitUntil(s, OdpChunkPlaced, c);
	SpinLockAcquire(&s->mutex);
	offset = s->chunks[c].offset;
	overflow = s->overflow;
	SpinLockRelease(&s->mutex);
	if (overflow || offset + rows > s->capacity)
		return -1;
	return offset;
}

/*
 * Counts chunk c's rows (OdpReadsDirect's first round): publishes the
 * count, and once the chunks before it are counted writes the rows' ids
 * at the chunk's place in the output, for the backend to rank.
 */
static void
OdpCountChunkDirect(OdpParticipant *p, TableScanDesc scan, TupleTableSlot *slot,
					int64 c)
{
	OdpParallelRead *s = p->shared;
	int64		rows = 0;
	int64		offset;

	OdpScanChunk(s, scan, c);
	while (OdpChunkNext(s, scan, slot, c))
	{
		if (rows == p->chunk_ids_room)
		{
			p->chunk_ids_room = Max(p->chunk_ids_room * 2, 1024);
			p->chunk_ids = p->chunk_ids == NULL ?
				MemoryContextAlloc(p->cxt, sizeof(int64) * p->chunk_ids_room) :
				repalloc(p->chunk_ids, sizeof(int64) * p->chunk_ids_room);
		}
		p->chunk_ids[rows++] = OdpSlotId(&p->stage, slot);
	}
	OdpPublishRows(s, c, rows);
	if (rows > 0)
	{
		offset = OdpWaitForOffset(s, c, rows);
		if (offset < 0)
			return;
		memcpy(p->out[0] + (Size) offset * sizeof(int64), p->chunk_ids,
			   sizeof(int64) * rows);
	}
	OdpPublishIds(s, c, p->chunk_ids, rows);
}

/* Whether the ids ascend within each chunk and from chunk to chunk. */
static bool
OdpChunksAscending(const OdpParallelRead *s)
{
	int64		last = 0;
	bool		any = false;

	for (int64 c = 0; c < s->nchunks; c++)
	{
		const OdpReadChunk *chunk = &s->chunks[c];

		if (chunk->rows == 0)
			continue;
		if (!chunk->ascending || (any && chunk->first_id <= last))
			return false;
		last = chunk->last_id;
		any = true;
	}
	return true;
}

/*
 * Ranks the rows' ids once every chunk is counted (the backend, r the
 * final reader, whose ids are the output's): where they are out of order,
 * shares in a segment of its own each row's place, the inverse of the
 * order OdpReaderFinish would sort them in.
 */
static void
OdpRankRows(OdpParticipant *p, OdpReader *r)
{
	OdpParallelRead *s = p->shared;
	int64		n = s->placed_rows;
	int64	   *from;
	int64	   *place;
	dsm_segment *seg;

	if (OdpChunksAscending(s))
	{
		SpinLockAcquire(&s->mutex);
		s->order = ODP_ORDER_IDENTITY;
		SpinLockRelease(&s->mutex);
		return;
	}
	r->rows = n;
	from = MemoryContextAllocHuge(p->cxt, mul_size(Max(n, 1), sizeof(int64)));
	OdpReaderIdOrder(r, from);
	r->rows = 0;
	seg = dsm_create(mul_size(Max(n, 1), sizeof(int64)), 0);
	place = dsm_segment_address(seg);
	for (int64 j = 0; j < n; j++)
		place[from[j]] = j;
	pfree(from);
	p->order_seg = seg;
	p->place = place;
	SpinLockAcquire(&s->mutex);
	s->order_handle = dsm_segment_handle(seg);
	s->order = ODP_ORDER_PERMUTED;
	SpinLockRelease(&s->mutex);
}

/*
 * Waits until every chunk is counted and the rows' places are known: the
 * backend ranks them, the workers wait for it.  False where the output
 * was too small.
 */
static bool
OdpAwaitOrder(OdpParticipant *p, OdpReader *r)
{
	OdpParallelRead *s = p->shared;
	bool		overflow;
	int			order;
	dsm_handle	handle;

	OdpWaitUntil(s, r != NULL ? OdpAllCounted : OdpOrderDecided, 0);
	SpinLockAcquire(&s->mutex);
	overflow = s->overflow;
	order = s->order;
	handle = s->order_handle;
	SpinLockRelease(&s->mutex);
	if (overflow)
		return false;
	if (r != NULL)
	{
		OdpRankRows(p, r);
		ConditionVariableBroadcast(&s->cv);
		return true;
	}
	if (order == ODP_ORDER_PERMUTED)
	{
		p->order_seg = dsm_attach(handle);
		if (p->order_seg == NULL)
			elog(ERROR, "odp_gpu: could not map the parallel read's row order");
		p->place = dsm_segment_address(p->order_seg);
	}
	return true;
}

/* Keeps what a view of the stage learnt of its rows' values in the stage. */
static void
OdpKeepViewFlags(OdpParticipant *p, const OdpReader *view)
{
	p->stage.any_missing |= view->any_missing;
	p->stage.any_bflag |= view->any_bflag;
	p->stage.exact_long |= view->exact_long;
	for (int d = 0; d < ODP_MAX_INTERVAL_DIMS; d++)
		p->stage.exact_dims[d] |= view->exact_dims[d];
}

/*
 * Decodes chunk c's rows straight into their places in the output
 * (OdpReadsDirect's second round): from the chunk's offset on where the
 * ids ascend, else each row at its rank.  The reader's state and flags
 * are the stage's; its buffers, the output's rows.
 */
static void
OdpDecodeChunkDirect(OdpParticipant *p, TableScanDesc scan, TupleTableSlot *slot,
					 int64 c)
{
	OdpParallelRead *s = p->shared;
	int64		rows = s->chunks[c].rows;
	int64		offset = s->chunks[c].offset;
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	OdpReader	view;
	int64		done = 0;
	int			n;

	if (rows <= 0)
		return;
	view = p->stage;
	view.rows = 0;
	view.capacity = p->place != NULL ? 1 : rows;
	n = OdpReaderArrays(&view, arrays);
	Assert(n == p->narrays);
	for (int a = 0; a < n && p->place == NULL; a++)
	{
		*arrays[a].ptr = p->out[a] + (Size) offset * arrays[a].rowbytes;
		OdpPrefault(*arrays[a].ptr, (Size) rows * arrays[a].rowbytes);
	}

	OdpScanChunk(s, scan, c);
	while (OdpChunkNext(s, scan, slot, c))
	{
		/* the snapshot is the same: both scans see the same rows */
		if (done >= rows)
			elog(ERROR, "odp_gpu: a chunk of %s returned more rows than it had",
				 view.desc);
		if (p->place != NULL)
		{
			int64		at = p->place[offset + done];

			for (int a = 0; a < n; a++)
			{
				*arrays[a].ptr = p->out[a] + (Size) at * arrays[a].rowbytes;
				OdpPrefault(*arrays[a].ptr, arrays[a].rowbytes);
			}
			view.rows = 0;
			OdpReaderAddSlot(&view, slot);
			/* a row at a time: what its decoding allocated goes now */
			MemoryContextReset(view.rowcxt);
			CHECK_FOR_INTERRUPTS();
		}
		else
			OdpReaderAddSlot(&view, slot);
		done++;
	}
	MemoryContextReset(view.rowcxt);
	if (done != rows)
		elog(ERROR, "odp_gpu: a chunk of %s returned fewer rows than it had",
			 view.desc);
	OdpKeepViewFlags(p, &view);
}

/* Bytes of the output a participant placing narrow rows maps at once. */
#define ODP_PLACE_MAP_BYTES		((Size) 64 << 10)

/*
 * Maps the window of array a's output (rowbytes a row) that holds row off,
 * the first time this participant writes there: rows placed by their ids
 * land all over the output, and a fault per 4 kB page costs more than
 * mapping 64 kB in one call, most of which the participant writes anyway
 * (its chunks' ids are runs, or every participant writes every page).
 */
static void
OdpMapPlaceWindow(OdpParticipant *p, int a, Size rowbytes, uint64 off)
{
	OdpParallelRead *s = p->shared;
	Size		bytes = (Size) s->place_span * rowbytes;
	Size		w = (Size) off * rowbytes / ODP_PLACE_MAP_BYTES;

	if (p->mapped[a] == NULL)
		p->mapped[a] = MemoryContextAllocZero(p->cxt,
											  bytes / ODP_PLACE_MAP_BYTES / 8 + 1);
	if (p->mapped[a][w / 8] & (1 << (w % 8)))
		return;
	p->mapped[a][w / 8] |= 1 << (w % 8);
	OdpPopulate(p->out[a] + w * ODP_PLACE_MAP_BYTES,
				Min(ODP_PLACE_MAP_BYTES, bytes - w * ODP_PLACE_MAP_BYTES), false);
}

/*
 * Decodes chunk c's rows (a read that places its rows, once the output is
 * made) each straight to its id's offset in the output, marking the
 * offset taken.  An id outside the index's range, or taken already (a
 * duplicate), fails the parallel read: the serial read that follows
 * raises the right error, or reads the table without placing it.
 */
static void
OdpPlaceChunk(OdpParticipant *p, TableScanDesc scan, TupleTableSlot *slot,
			  int64 c)
{
	OdpParallelRead *s = p->shared;
	pg_atomic_uint64 *bits = OdpPlaceBits(s);
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	OdpReader	view;
	int			n;

	view = p->stage;
	view.rows = 0;
	view.capacity = 1;
	n = OdpReaderArrays(&view, arrays);
	Assert(n == p->narrays);

	OdpScanChunk(s, scan, c);
	while (OdpChunkNext(s, scan, slot, c))
	{
		uint64		off = (uint64) OdpSlotId(&view, slot) - (uint64) s->place_base;
		uint64		bit = UINT64CONST(1) << (off % 64);

		if (off >= (uint64) s->place_span ||
			(pg_atomic_fetch_or_u64(&bits[off / 64], bit) & bit) != 0)
			elog(ERROR, "odp_gpu: an id of %s is outside its index's range or repeats",
				 view.desc);
		for (int a = 0; a < n; a++)
		{
			*arrays[a].ptr = p->out[a] + (Size) off * arrays[a].rowbytes;
			/*
			 * the pages in one call, not a fault per page: a wide row's
			 * own, or the window of 64 kB around a narrower one, once
			 */
			if (arrays[a].rowbytes >= ODP_PLACE_MAP_BYTES)
				OdpPrefault(*arrays[a].ptr, arrays[a].rowbytes);
			else
				OdpMapPlaceWindow(p, a, arrays[a].rowbytes, off);
		}
		view.rows = 0;
		OdpReaderAddSlot(&view, slot);
		/* a row at a time: what its decoding allocated goes now */
		MemoryContextReset(view.rowcxt);
		if ((++p->placed & (ODP_INPUT_BATCH_ROWS - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	OdpKeepViewFlags(p, &view);
}

/*
 * The next chunk of a round whose counter is next, or -1 when none is left
 * or the output overflowed; lets the user cancel first.
 */
static int64
OdpTakeChunk(OdpParallelRead *s, pg_atomic_uint64 *next)
{
	bool		overflow;
	int64		c;

	CHECK_FOR_INTERRUPTS();
	SpinLockAcquire(&s->mutex);
	overflow = s->overflow;
	SpinLockRelease(&s->mutex);
	if (overflow)
		return -1;
	c = (int64) pg_atomic_fetch_add_u64(next, 1);
	return c < s->nchunks ? c : -1;
}

/*
 * The second round of a read of wide rows, once the backend's and the
 * workers' first rounds have counted every chunk: decodes chunks until
 * none is left.
 */
static void
OdpDecodeInPlaces(OdpParticipant *p, OdpReader *r, TableScanDesc scan,
				  TupleTableSlot *slot)
{
	int64		c;

	if (!OdpAwaitOrder(p, r))
		return;
	while ((c = OdpTakeChunk(p->shared, &p->shared->next_decode)) >= 0)
		OdpDecodeChunkDirect(p, scan, slot, c);
}

/*
 * Decodes the rows of chunk c into the stage and publishes it.  The
 * backend whose output is not made yet (*ready false) makes it as soon as
 * its first row has set the dimensions, in the middle of the chunk, so
 * that the workers, which wait for the output, start at once rather than
 * after the backend's whole first chunk (many megabytes where rows are
 * TOASTed arrays).  A read of pieces waits for the chunk's end: its
 * rows' pieces size the output.
 */
static void
OdpReadChunkRows(OdpParticipant *p, OdpReader *r, bool *ready,
				 TableScanDesc scan, TupleTableSlot *slot, int64 c)
{
	OdpParallelRead *s = p->shared;
	int64		first = p->stage.rows;
	bool		early = !*ready && !p->stage.plan->pieces;

	OdpScanChunk(s, scan, c);
	while (OdpChunkNext(s, scan, slot, c))
	{
		OdpReaderAddSlot(&p->stage, slot);
		if (unlikely(early) && p->stage.dims >= 0 && p->stage.rows > 0)
		{
			OdpMakeOutput(p, r);
			*ready = true;
			early = false;
			if (p->shared->placing)
			{
				/* the rows staged so far are read again, in place */
				MemoryContextReset(p->stage.rowcxt);
				p->stage.rows = first;
				OdpPlaceChunk(p, scan, slot, c);
				return;
			}
			if (OdpReadsDirect(p))
			{
				/* the rows staged so far are counted, then read in place */
				MemoryContextReset(p->stage.rowcxt);
				p->stage.rows = first;
				OdpCountChunkDirect(p, scan, slot, c);
				return;
			}
		}
	}
	MemoryContextReset(p->stage.rowcxt);

	/* an empty chunk has nothing to copy: it only moves the others' places */
	if (p->stage.rows > first)
	{
		p->staged_chunk[p->nstaged] = c;
		p->staged_start[p->nstaged] = first;
		p->nstaged++;
	}
	OdpPublishChunk(s, c, &p->stage, first);
}

/*
 * Reads chunks until none is left, then copies the last staged ones.  The
 * backend (r != NULL) makes the output after its first row; until then it
 * alone takes chunks.
 */
static void
OdpParticipate(OdpParticipant *p, OdpReader *r)
{
	OdpParallelRead *s = p->shared;
	TupleTableSlot *slot = table_slot_create(p->rel, NULL);
	TableScanDesc scan;
	bool		ready = r == NULL;
	bool		direct = ready && OdpReadsDirect(p);
	int64		c;

	scan = table_beginscan_strat(p->rel, GetActiveSnapshot(), 0, NULL, true, false);
	while ((c = OdpTakeChunk(s, &s->next_chunk)) >= 0)
	{
		if (ready && s->placing)
			OdpPlaceChunk(p, scan, slot, c);
		else if (ready && direct)
			OdpCountChunkDirect(p, scan, slot, c);
		else
			OdpReadChunkRows(p, r, &ready, scan, slot, c);
		direct = ready && OdpReadsDirect(p);
		if (!ready && p->stage.dims >= 0 && p->stage.rows > 0)
		{
			OdpMakeOutput(p, r);
			ready = true;
		}
		if (ready && p->nstaged > 0)
		{
			if (p->nstaged == ODP_MAX_STAGED_CHUNKS ||
				OdpStagedBytes(p) >= ODP_MAX_STAGED_BYTES)
				OdpWaitToPlace(p);
			else
				(void) OdpPlaceStaged(p);
		}
	}
	if (!ready)
	{
		/* every chunk read by the backend, and none had a row */
		Assert(p->stage.rows == 0);
		p->nstaged = 0;
		OdpSetOutputState(s, ODP_OUTPUT_NONE);
	}
	else
	{
		if (p->nstaged > 0)
			OdpWaitToPlace(p);
		if (OdpReadsDirect(p) && !s->placing)
			OdpDecodeInPlaces(p, r, scan, slot);
	}

	SpinLockAcquire(&s->mutex);
	s->placed_total += p->placed;
	s->any_missing |= p->stage.any_missing;
	s->any_bflag |= p->stage.any_bflag;
	s->exact_long |= p->stage.exact_long;
	for (int d = 0; d < ODP_MAX_INTERVAL_DIMS; d++)
		s->exact_dims[d] |= p->stage.exact_dims[d];
	SpinLockRelease(&s->mutex);

	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
}

/* Gathers places [j0, j1) of every array into dst. */
static void
OdpGatherSpan(OdpParticipant *p, char **dst, const int64 *from, int64 j0, int64 j1)
{
	OdpReaderArray arrays[ODP_READER_ARRAYS];

	(void) OdpReaderArrays(&p->stage, arrays);
	for (int a = 0; a < p->narrays; a++)
	{
		OdpPrefault(dst[a] + (Size) j0 * arrays[a].rowbytes,
					(Size) (j1 - j0) * arrays[a].rowbytes);
		OdpGatherRowsInOrder(dst[a], p->out[a], from, j0, j1, arrays[a].rowbytes);
	}
}

/*
 * Decides, once every chunk is in the output (the backend, r the final
 * reader), whether the rows are gathered in id order by everyone: staged
 * rows whose ids are out of order, with room for a second output and the
 * order (from) in shared memory.  Sets the state the workers wait for;
 * returns the second output's buffers in dst, and from.
 */
static bool
OdpPlanGather(OdpParticipant *p, OdpReader *r, char **dst, int64 **from,
			  dsm_segment **from_seg)
{
	OdpParallelRead *s = p->shared;
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	bool		overflow;
	bool		gather = false;
	int64		n = 0;
	int			a = 0;

	if (s->output == ODP_OUTPUT_READY && !OdpReadsDirect(p))
	{
		OdpWaitUntil(s, OdpAllCopied, 0);
		SpinLockAcquire(&s->mutex);
		overflow = s->overflow;
		n = s->placed_rows;
		SpinLockRelease(&s->mutex);
		gather = !overflow && n > 1 && !OdpChunksAscending(s);
	}
	if (gather)
	{
		*from_seg = dsm_create(mul_size(n, sizeof(int64)), DSM_CREATE_NULL_IF_MAXSEGMENTS);
		gather = *from_seg != NULL;
	}
	if (gather)
	{
		int			narrays = OdpReaderArrays(r, arrays);

		for (a = 0; a < narrays; a++)
		{
			dst[a] = OdpSharedBufferCreate(r->outcxt, mul_size(n, arrays[a].rowbytes),
										   r->shared | ODP_SHARED_SEGMENT);
			if (dst[a] == NULL)
				break;
			OdpLocateBuffer(dst[a], &s->gather_handles[a], &s->gather_offsets[a]);
		}
		if (a < narrays)
		{
			/* no room for a second output: the backend moves them alone */
			while (--a >= 0)
				OdpSharedBufferFree(dst[a]);
			dsm_detach(*from_seg);
			*from_seg = NULL;
			gather = false;
		}
	}
	if (gather)
	{
		*from = dsm_segment_address(*from_seg);
		r->rows = n;
		OdpReaderIdOrder(r, *from);
		r->rows = 0;
		s->from_handle = dsm_segment_handle(*from_seg);
	}
	SpinLockAcquire(&s->mutex);
	s->reorder = gather ? ODP_REORDER_GATHER : ODP_REORDER_NONE;
	SpinLockRelease(&s->mutex);
	ConditionVariableBroadcast(&s->cv);
	return gather;
}

/*
 * Gathers the output's rows in id order into a second output, a span of
 * rows at a time, with the other participants, where the backend decided
 * so (OdpPlanGather); the backend then makes the second output its
 * reader's.  A worker waits for the decision.
 */
static void
OdpGatherInOrder(OdpParticipant *p, OdpReader *r)
{
	OdpParallelRead *s = p->shared;
	char	   *dst[ODP_READER_ARRAYS];
	dsm_segment *segs[ODP_READER_ARRAYS] = {0};
	int64	   *from = NULL;
	int64		n;
	int64		nspans;
	int			state;

	if (s->placing)
		return;
	if (r != NULL)
	{
		/* the order's segment stays until the workers are done */
		if (!OdpPlanGather(p, r, dst, &from, &p->from_seg))
			return;
	}
	else
	{
		OdpWaitUntil(s, OdpReorderDecided, 0);
		SpinLockAcquire(&s->mutex);
		state = s->reorder;
		SpinLockRelease(&s->mutex);
		if (state != ODP_REORDER_GATHER)
			return;
		/* a latecomer with nothing left to gather maps nothing */
		if (pg_atomic_read_u64(&s->next_span) * ODP_GATHER_SPAN_ROWS >= (uint64) s->placed_rows)
			return;
		OdpMapBuffers(p->narrays, s->gather_handles, s->gather_offsets, dst, segs);
		p->from_seg = dsm_attach(s->from_handle);
		if (p->from_seg == NULL)
			elog(ERROR, "odp_gpu: could not map the parallel read's row order");
		from = dsm_segment_address(p->from_seg);
	}

	/* final: every chunk is in the output */
	SpinLockAcquire(&s->mutex);
	n = s->placed_rows;
	SpinLockRelease(&s->mutex);
	nspans = (n + ODP_GATHER_SPAN_ROWS - 1) / ODP_GATHER_SPAN_ROWS;
	for (bool mapped = false;;)
	{
		int64		span = (int64) pg_atomic_fetch_add_u64(&s->next_span, 1);
		int64		j0 = span * ODP_GATHER_SPAN_ROWS;
		bool		all;

		if (span >= nspans)
			break;
		CHECK_FOR_INTERRUPTS();
		/* spans read rows from all over the first output: map it at once */
		if (!mapped)
		{
			OdpReaderArray arrays[ODP_READER_ARRAYS];

			(void) OdpReaderArrays(&p->stage, arrays);
			for (int a = 0; a < p->narrays; a++)
				OdpPopulate(p->out[a], (Size) n * arrays[a].rowbytes, true);
			mapped = true;
		}
		OdpGatherSpan(p, dst, from, j0, Min(j0 + ODP_GATHER_SPAN_ROWS, n));
		SpinLockAcquire(&s->mutex);
		all = ++s->spans_done == nspans;
		SpinLockRelease(&s->mutex);
		if (all)
			ConditionVariableBroadcast(&s->cv);
	}

	if (r != NULL)
	{
		OdpReaderArray arrays[ODP_READER_ARRAYS];
		int			narrays = OdpReaderArrays(r, arrays);

		/* every span gathered, the workers' too: the second output is r's */
		OdpWaitUntil(s, OdpSpansGathered, nspans);
		for (int a = 0; a < narrays; a++)
		{
			OdpSharedBufferFree(*arrays[a].ptr);
			*arrays[a].ptr = dst[a];
			p->out[a] = NULL;
		}
		r->capacity = n;
	}
	else
		OdpUnmapBuffers(p->narrays, segs);
}

/* Prepares a participant's private stage and contexts. */
static void
OdpParticipantInit(OdpParticipant *p, OdpParallelRead *s, Relation rel,
				   const OdpColumnPlan *plan, const OdpInputSpec *spec,
				   const char *desc, MemoryContext cxt)
{
	memset(p, 0, sizeof(*p));
	p->shared = s;
	p->rel = rel;
	p->cxt = AllocSetContextCreate(cxt, "odp_gpu parallel read",
								   ALLOCSET_DEFAULT_SIZES);
	OdpReaderInit(&p->stage, plan, p->cxt,
				  AllocSetContextCreate(p->cxt, "odp_gpu parallel read rows",
										ALLOCSET_DEFAULT_SIZES),
				  desc, 0, spec);
	/* the stage is private; only the output is shared */
	p->stage.shared = false;
	p->stage.first_room = ODP_STAGE_FIRST_ROOM;
	/* numeric bounds' keys only: their values would be the backend's */
	OdpReaderDropExact(&p->stage);
}

/* ---- the backend ---- */

/*
 * Serializes what a worker needs of spec into the context's segment; the
 * distances' precision goes as the backend's reader r decided it, so that
 * every participant fills the same buffers.
 */
static void
OdpStoreSpec(ParallelContext *pcxt, const OdpInputSpec *spec,
			 const OdpReader *r, Oid relid, Size bytes)
{
	OdpSpecWire *w = shm_toc_allocate(pcxt->toc, bytes);

	w->relid = relid;
	w->values = spec->values;
	if (spec->values == ODP_VALUES_DISTANCE)
		w->values = r->f64 ? ODP_VALUES_FLOAT8 : ODP_VALUES_FLOAT4;
	w->missing_ok = spec->missing_ok;
	w->max_dims = spec->max_dims;
	w->pair_flags = spec->pair_flags;
	w->empty_ok = spec->empty_ok;
	w->id_column_len = spec->id_column ? VARSIZE(spec->id_column) : 0;
	w->features_len = spec->features ? VARSIZE(spec->features) : 0;
	if (w->id_column_len > 0)
		memcpy(w->data, spec->id_column, w->id_column_len);
	if (w->features_len > 0)
		memcpy(w->data + MAXALIGN(w->id_column_len), spec->features, w->features_len);
	shm_toc_insert(pcxt->toc, ODP_PARALLEL_KEY_SPEC, w);
}

/*
 * Whether a failure of the parallel read is one to re-raise as it is: a
 * cancel, a timeout, a shutdown, a transaction that must roll back.
 * Anything else (bad data, no shared memory, a worker that could not
 * start) is left to the serial read, which raises its own if any.
 */
static bool
OdpReraiseAsIs(const ErrorData *edata)
{
	int			class = ERRCODE_TO_CATEGORY(edata->sqlerrcode);

	return edata->elevel > ERROR ||
		class == ERRCODE_TO_CATEGORY(ERRCODE_OPERATOR_INTERVENTION) ||
		class == ERRCODE_TO_CATEGORY(ERRCODE_TRANSACTION_ROLLBACK) ||
		class == ERRCODE_TO_CATEGORY(ERRCODE_INVALID_TRANSACTION_STATE);
}

/*
 * The read itself, inside the subtransaction: launches the workers, reads
 * as one participant, then collects the result into r; false where the
 * output was too small.
 */
static bool
OdpRunParallelRead(Relation rel, const OdpInputSpec *spec, OdpReader *r,
				   const char *desc, int nworkers, BlockNumber nblocks,
				   int *launched)
{
	ParallelContext *pcxt;
	OdpParallelRead *s;
	OdpParticipant leader;
	Size		spec_bytes;
	Size		state_bytes;
	int64		nchunks;
	BlockNumber chunk_blocks;
	int			pieces;
	int			piece_span;
	int64		capacity = OdpParallelCapacity(rel);
	int64		place_base = 0;
	int64		place_span = 0;
	bool		placing;
	Size		place_offset;
	bool		ok;

	chunk_blocks = nblocks / ((BlockNumber) (nworkers + 1) * ODP_CHUNKS_PER_PARTICIPANT);
	chunk_blocks = Max(1, Min(chunk_blocks, ODP_CHUNK_MAX_BLOCKS));
	pieces = OdpBlockPieces(rel, nblocks, chunk_blocks, &piece_span);
	nchunks = ((int64) nblocks + chunk_blocks - 1) / chunk_blocks * pieces;
	state_bytes = add_size(offsetof(OdpParallelRead, chunks),
						   mul_size(sizeof(OdpReadChunk), (Size) nchunks));
	/* the rows go straight to their ids' offsets where an index allows */
	placing = OdpPlacementRange(r, rel, GetActiveSnapshot(), &place_base, &place_span);
	place_offset = MAXALIGN(state_bytes);
	if (placing)
	{
		state_bytes = add_size(place_offset,
							   mul_size(OdpPlacementWords(place_span), sizeof(pg_atomic_uint64)));
		capacity = place_span;
	}
	spec_bytes = offsetof(OdpSpecWire, data) +
		MAXALIGN(spec->id_column ? VARSIZE(spec->id_column) : 0) +
		(spec->features ? VARSIZE(spec->features) : 0);

	EnterParallelMode();
	pcxt = CreateParallelContext("odp_gpu", "OdpParallelReadMain", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, state_bytes);
	shm_toc_estimate_chunk(&pcxt->estimator, spec_bytes);
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);

	s = shm_toc_allocate(pcxt->toc, state_bytes);
	memset(s, 0, offsetof(OdpParallelRead, chunks));
	s->nblocks = nblocks;
	s->chunk_blocks = chunk_blocks;
	s->pieces = pieces;
	s->piece_span = piece_span;
	s->nchunks = nchunks;
	s->capacity = capacity;
	s->capacity_final = !r->plan->pieces;
	s->output = ODP_OUTPUT_PENDING;
	pg_atomic_init_u64(&s->next_chunk, 0);
	pg_atomic_init_u64(&s->next_decode, 0);
	pg_atomic_init_u64(&s->next_span, 0);
	s->order = ODP_ORDER_PENDING;
	s->reorder = ODP_REORDER_PENDING;
	s->placing = placing;
	s->place_base = place_base;
	s->place_span = place_span;
	s->place_offset = place_offset;
	if (placing)
	{
		pg_atomic_uint64 *bits = OdpPlaceBits(s);

		for (Size w = 0; w < OdpPlacementWords(place_span); w++)
			pg_atomic_init_u64(&bits[w], 0);
	}
	ConditionVariableInit(&s->cv);
	SpinLockInit(&s->mutex);
	for (int64 c = 0; c < nchunks; c++)
		s->chunks[c].rows = -1;
	shm_toc_insert(pcxt->toc, ODP_PARALLEL_KEY_READ, s);
	OdpStoreSpec(pcxt, spec, r, RelationGetRelid(rel), spec_bytes);

	LaunchParallelWorkers(pcxt);
	*launched = pcxt->nworkers_launched;

	OdpParticipantInit(&leader, s, rel, r->plan, spec, desc, CurrentMemoryContext);
	OdpParticipate(&leader, r);
	OdpGatherInOrder(&leader, r);
	MemoryContextDelete(leader.cxt);
	WaitForParallelWorkersToFinish(pcxt);

	ok = !s->overflow;
	if (ok && s->output == ODP_OUTPUT_READY)
	{
		r->rows = s->placing ? s->placed_total : s->placed_rows;
		r->any_missing = s->any_missing;
		r->any_bflag = s->any_bflag;
		r->exact_long = s->exact_long;
		memcpy(r->exact_dims, s->exact_dims, sizeof(r->exact_dims));
		if (s->placing)
		{
			pg_atomic_uint64 *shared_bits = OdpPlaceBits(s);
			Size		words = OdpPlacementWords(s->place_span);
			uint64	   *bits = MemoryContextAllocHuge(CurrentMemoryContext,
													  words * sizeof(uint64));

			for (Size w = 0; w < words; w++)
				bits[w] = pg_atomic_read_u64(&shared_bits[w]);
			OdpReaderAdoptPlacement(r, bits, s->place_base, s->place_span);
			OdpReaderEndPlacement(r);
		}
		else if (s->order == ODP_ORDER_PERMUTED || s->reorder == ODP_REORDER_GATHER)
		{
			/* in id order already; ids may still repeat */
			r->sorted = true;
			r->unique = false;
			r->order = "moved";
		}
		else
			r->sorted = r->unique = OdpChunksAscending(s);
	}
	if (leader.order_seg != NULL)
		dsm_detach(leader.order_seg);
	if (leader.from_seg != NULL)
		dsm_detach(leader.from_seg);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return ok;
}

/* See input_internal.h. */
bool
OdpReadTableParallel(Relation rel, const OdpInputSpec *spec, OdpReader *r,
					 const char *desc, int *workers)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	int			nworkers = OdpParallelReadWorkers(rel, nblocks);
	int			launched = 0;
	bool		ok = false;

	*workers = 0;
	if (nworkers <= 0 || spec->serial)
		return false;
	/* numeric bounds: keys only, values being the backend's (input_exact.c) */
	OdpReaderDropExact(r);

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		ok = OdpRunParallelRead(rel, spec, r, desc, nworkers, nblocks, &launched);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (OdpReraiseAsIs(edata))
			ReThrowError(edata);
		FreeErrorData(edata);
		ok = false;
		launched = 0;
	}
	PG_END_TRY();

	/* numeric bounds whose keys are not enough: their values are needed */
	if (ok && r->plan->exact_bounds && OdpExactNeedsValues(r->exact_dims, r->exact_long))
		ok = false;
	if (!ok)
		OdpReaderDiscard(r);
	*workers = ok ? launched : 0;
	return ok;
}

/* ---- a worker ---- */

/* See input_internal.h. */
void
OdpParallelWorkerSpec(shm_toc *toc, OdpInputSpec *spec, Oid *relid)
{
	OdpSpecWire *w = shm_toc_lookup(toc, ODP_PARALLEL_KEY_SPEC, false);

	memset(spec, 0, sizeof(*spec));
	*relid = w->relid;
	spec->values = w->values;
	spec->missing_ok = w->missing_ok;
	spec->max_dims = w->max_dims;
	spec->pair_flags = w->pair_flags;
	spec->empty_ok = w->empty_ok;
	if (w->id_column_len > 0)
	{
		spec->id_column = palloc(w->id_column_len);
		memcpy(spec->id_column, w->data, w->id_column_len);
	}
	if (w->features_len > 0)
	{
		spec->features = palloc(w->features_len);
		memcpy(spec->features, w->data + MAXALIGN(w->id_column_len), w->features_len);
	}
}

/* See input_internal.h. */
void
OdpParallelWorkerRead(shm_toc *toc, Relation rel, const OdpColumnPlan *plan,
					  const OdpInputSpec *spec, const char *desc)
{
	OdpParallelRead *s = shm_toc_lookup(toc, ODP_PARALLEL_KEY_READ, false);
	OdpParticipant p;

	if (!OdpWaitForOutput(s))
		return;
	OdpParticipantInit(&p, s, rel, plan, spec, desc, CurrentMemoryContext);
	if (p.stage.dims < 0)
		OdpReaderSetDims(&p.stage, s->dims);
	OdpMapOutput(&p);
	OdpParticipate(&p, NULL);
	OdpGatherInOrder(&p, NULL);
	OdpUnmapBuffers(p.narrays, p.segs);
	if (p.order_seg != NULL)
		dsm_detach(p.order_seg);
	if (p.from_seg != NULL)
		dsm_detach(p.from_seg);
}
