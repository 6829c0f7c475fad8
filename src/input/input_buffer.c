/*-------------------------------------------------------------------------
 *
 * input_buffer.c
 *	  The reader's buffers: they grow as rows arrive, get their width from
 *	  the first vector, and are sorted by id and trimmed when reading ends.
 *
 * Rows arrive in scan order.  The buffers grow geometrically with
 * repalloc_huge and are trimmed at the end; all sizes are computed in Size
 * with overflow checks.  If the ids are not already ascending (the
 * decoder checks while storing them), the rows are put in id order: ids
 * that are distinct and dense (1..n shuffled, as a table loaded by
 * several sessions or rewritten holds them) are ranked in linear time
 * through a bitmap of their range, others by sorting (id, row) pairs, so
 * that a large table read out of order costs no n log n sort.  Narrow
 * arrays (the ids, a few values per row) are then gathered through one
 * scratch copy, wide ones permuted in place by following cycles, so that
 * no second copy of the matrix is needed.  Duplicate ids are then found
 * by comparing neighbours.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_buffer.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "common/int.h"
#include "port/pg_bitutils.h"
#include "input/input_checks.h"
#include "service/service.h"
#include "service/service_shmem.h"
#include "service/service_staging.h"
#include "backend_staging.h"
#include "engine_glue.h"
#include "settings.h"
#include "shared_buffers.h"
#include "miscadmin.h"
#include "storage/dsm_impl.h"
#include "odp_engine.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

/* Rows the output buffers start with when the size is unknown. */
#define ODP_INPUT_INITIAL_ROWS	1024

/* A (id, row) pair, sorted to order the rows by id. */
typedef struct OdpIdRow
{
	int64		id;
	int64		row;
} OdpIdRow;

#define ST_SORT OdpSortIdRows
#define ST_ELEMENT_TYPE OdpIdRow
#define ST_COMPARE(a, b) ((a)->id < (b)->id ? -1 : ((a)->id > (b)->id ? 1 : 0))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* ---- checks ---- */

/* Ensure one more row stays within the engine's limit. */
static inline void
OdpEnsureRowLimit(int64 rows, const char *desc)
{
	if (rows >= ODP_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("source %s has more than the maximum of %lld rows",
						desc, (long long) ODP_MAX_ROWS),
				 errhint("Read a subset of the rows with a query source.")));
}

/* Ensure the source returned at least one row. */
static inline void
OdpEnsureHasRows(int64 rows, const char *desc)
{
	if (rows == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("source %s has no rows", desc),
				 errhint("Check that the source returns rows; row-level security policies can hide them.")));
}

/* Ensure two neighbouring ids (in ascending order) differ. */
static inline void
OdpEnsureIdsDiffer(int64 previous, int64 id, const OdpColumn *col)
{
	if (unlikely(previous == id))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("id column \"%s\" has duplicate value %lld",
						col->name, (long long) id),
				 errhint("Name a unique column with id_column => '...', or remove the duplicates in a query source.")));
}

/* Ensure a byte count did not overflow. */
static inline void
OdpEnsureSizeFits(bool overflow)
{
	if (overflow)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("input is too large to fit in memory")));
}

/* ---- growing ---- */

/* Returns a * b as Size, raising an error on overflow. */
static inline Size
OdpMulSize(Size a, Size b)
{
	uint64		result;

	OdpEnsureSizeFits(pg_mul_u64_overflow((uint64) a, (uint64) b, &result));
	return (Size) result;
}

/* Buffers at least this large are backed by huge pages where the OS can. */
#define ODP_INPUT_HUGE_PAGES	((Size) 32 << 20)

/*
 * Asks Linux to back the 2 MB-aligned part of a large buffer with
 * transparent huge pages.  Reading a large input is mostly spent on first
 * touches of the buffer it fills (a page fault and a cleared page per
 * 4 kB); huge pages take 512 times fewer faults.  Only advice: without
 * transparent huge pages (or on other systems) nothing changes.
 */
static void
OdpAdviseHugePages(void *buf, Size size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	const uintptr_t huge = (uintptr_t) 2 << 20;
	uintptr_t	start = ((uintptr_t) buf + huge - 1) & ~(huge - 1);
	uintptr_t	end = ((uintptr_t) buf + size) & ~(huge - 1);

	if (size >= ODP_INPUT_HUGE_PAGES && end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#else
	(void) buf;
	(void) size;
#endif
}

/* See input_internal.h. */
void
OdpPopulate(const char *dst, Size bytes, bool read)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE) && defined(MADV_POPULATE_READ)
	uintptr_t	page = (uintptr_t) sysconf(_SC_PAGESIZE);
	uintptr_t	start = ((uintptr_t) dst + page - 1) & ~(page - 1);
	uintptr_t	end = ((uintptr_t) dst + bytes) & ~(page - 1);

	if (end > start)
		(void) madvise((void *) start, end - start,
					   read ? MADV_POPULATE_READ : MADV_POPULATE_WRITE);
#else
	(void) dst;
	(void) bytes;
	(void) read;
#endif
}

/*
 * Allocates or reallocates buf (of old_size bytes, in the reader's output
 * context) to size bytes, huge allowed: in dynamic shared memory where
 * the GPU service may read it (shared_buffers.h), else in the context.
 */
static void *
OdpResize(OdpReader *r, void *buf, Size old_size, Size size)
{
	if (size == 0)
		size = 1;
	if (r->shared != 0 && size >= ODP_SHARED_MIN_BYTES)
	{
		void	   *shared = OdpSharedBufferResize(r->outcxt, buf, old_size, size, r->shared);

		if (shared != NULL)
			return shared;
		if (r->shared & ODP_SHARED_STAGING)
			OdpStagingCountMiss();
	}
	if (buf != NULL && OdpSharedBufferIs(buf))
	{
		/* a shared buffer that must shrink or move back: copy it out */
		void	   *own = MemoryContextAllocHuge(r->outcxt, size);

		memcpy(own, buf, Min(old_size, size));
		OdpSharedBufferFree(buf);
		buf = own;
	}
	else if (buf == NULL)
		buf = MemoryContextAllocHuge(r->outcxt, size);
	else
		buf = repalloc_huge(buf, size);
	OdpAdviseHugePages(buf, size);
	/* fresh pages of a large buffer: mapped in one call, not a fault each */
	if (size > old_size && size - old_size >= ODP_SHARED_MIN_BYTES)
		OdpPopulate((char *) buf + old_size, size - old_size, false);
	return buf;
}

/* Frees one of the reader's buffers. */
static void
OdpRelease(void *buf)
{
	if (OdpSharedBufferIs(buf))
		OdpSharedBufferFree(buf);
	else
		pfree(buf);
}

/*
 * Sizes the value buffers (data or data64, and missing; or the bounds of
 * regions) for capacity rows.
 */
static void
OdpReaderResizeValues(OdpReader *r, int64 old_capacity, int64 capacity)
{
	Size		values = OdpMulSize(capacity, r->dims);
	Size		old = OdpMulSize(old_capacity, r->dims);

	if (r->plan->regions)
	{
		r->lower = OdpResize(r, r->lower, old * sizeof(uint64), OdpMulSize(values, sizeof(uint64)));
		r->upper = OdpResize(r, r->upper, old * sizeof(uint64), OdpMulSize(values, sizeof(uint64)));
		r->bflags = OdpResize(r, r->bflags, old, values);
		if (r->keep_exact)
			r->exact = OdpResize(r, r->exact, old * 2 * sizeof(Numeric),
								 OdpMulSize(values, 2 * sizeof(Numeric)));
		return;
	}
	if (r->f64)
		r->data64 = OdpResize(r, r->data64, old * sizeof(double), OdpMulSize(values, sizeof(double)));
	else
		r->data = OdpResize(r, r->data, old * sizeof(float), OdpMulSize(values, sizeof(float)));
	if (r->missing_ok)
		r->missing = OdpResize(r, r->missing, old, values);
}

/* See input_internal.h: the row capacity of the buffers (values only once dims is known). */
void
OdpReaderReserve(OdpReader *r, int64 capacity)
{
	r->ids = OdpResize(r, r->ids, (Size) r->capacity * sizeof(int64),
					   OdpMulSize(capacity, sizeof(int64)));
	if (r->plan->pieces)
		r->piece = OdpResize(r, r->piece, (Size) r->capacity, (Size) capacity);
	if (r->dims >= 0)
		OdpReaderResizeValues(r, r->capacity, capacity);
	r->capacity = capacity;
}

/* Makes room for one more row, growing the buffers geometrically. */
void
OdpReaderGrow(OdpReader *r)
{
	int64		capacity;

	OdpEnsureRowLimit(r->rows, r->desc);
	capacity = Min(Max(r->capacity * 2, ODP_INPUT_INITIAL_ROWS),
				   ODP_MAX_ROWS);
	OdpReaderReserve(r, capacity);
}

/* Sets the number of dimensions from the first vector and allocates data. */
void
OdpReaderSetDims(OdpReader *r, int32 dims)
{
	Assert(r->dims < 0 && r->data == NULL && r->data64 == NULL && r->lower == NULL);
	OdpEnsureDimsLimit(dims, r->max_dims);
	r->dims = dims;
	if (r->first_room > 0)
	{
		/*
		 * Room for the input's row count would be cleared and mapped for
		 * nothing (128 MB in every participant of a parallel read of
		 * 1,024 rows of 16,384 float8); the ids' larger buffer is only
		 * trimmed when the reader grows.
		 */
		OdpReaderArray arrays[ODP_READER_ARRAYS];
		int			n = OdpReaderArrays(r, arrays);
		Size		row = 0;

		for (int a = 0; a < n; a++)
			row += arrays[a].rowbytes;
		r->capacity = Min(r->capacity,
						  Max(r->rows, (int64) Max(r->first_room / row, 1)));
	}
	OdpReaderResizeValues(r, 0, r->capacity);
}

/* ---- finishing ---- */

/* See input_internal.h. */
int
OdpReaderArrays(OdpReader *r, OdpReaderArray *arrays)
{
	Size		dims = (Size) Max(r->dims, 0);
	int			n = 0;

	arrays[n++] = (OdpReaderArray) {(char **) &r->ids, sizeof(int64)};
	if (r->plan->regions)
	{
		arrays[n++] = (OdpReaderArray) {(char **) &r->lower, sizeof(uint64) * dims};
		arrays[n++] = (OdpReaderArray) {(char **) &r->upper, sizeof(uint64) * dims};
		arrays[n++] = (OdpReaderArray) {(char **) &r->bflags, dims};
		if (r->keep_exact)
			arrays[n++] = (OdpReaderArray) {(char **) &r->exact, sizeof(Numeric) * 2 * dims};
		if (r->plan->pieces)
			arrays[n++] = (OdpReaderArray) {(char **) &r->piece, 1};
	}
	else if (r->f64)
		arrays[n++] = (OdpReaderArray) {(char **) &r->data64, sizeof(double) * dims};
	else
		arrays[n++] = (OdpReaderArray) {(char **) &r->data, sizeof(float) * dims};
	if (r->missing_ok)
		arrays[n++] = (OdpReaderArray) {(char **) &r->missing, dims};
	Assert(n <= ODP_READER_ARRAYS);
	return n;
}

/* See input_internal.h. */
bool
OdpReaderShareBuffers(OdpReader *r, int64 capacity)
{
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	void	   *shared[ODP_READER_ARRAYS];
	int			n = OdpReaderArrays(r, arrays);

	Assert(r->rows == 0 && r->dims >= 0);

	/*
	 * No row yet: the buffers go first, so that an area that holds the
	 * input once is not asked to hold it twice.  Where no shared memory
	 * can be had the reader is left empty, to grow from nothing.
	 */
	for (int a = 0; a < n; a++)
	{
		if (*arrays[a].ptr != NULL)
			OdpRelease(*arrays[a].ptr);
		*arrays[a].ptr = NULL;
	}
	r->capacity = 0;
	if (r->shared & ODP_SHARED_OWN)
	{
		Size		total = 0;

		for (int a = 0; a < n; a++)
			total += OdpMulSize(Max(capacity, 1), arrays[a].rowbytes);
		OdpBackendStagingExpect(total);
	}
	for (int a = 0; a < n; a++)
	{
		shared[a] = OdpSharedBufferCreate(r->outcxt,
										  OdpMulSize(Max(capacity, 1), arrays[a].rowbytes),
										  r->shared | ODP_SHARED_SEGMENT);
		if (shared[a] == NULL)
		{
			while (--a >= 0)
				OdpSharedBufferFree(shared[a]);
			return false;
		}
	}
	for (int a = 0; a < n; a++)
		*arrays[a].ptr = shared[a];
	r->capacity = capacity;
	r->shared |= ODP_SHARED_SEGMENT;
	return true;
}

/* See input_internal.h. */
void
OdpReaderDropExact(OdpReader *r)
{
	if (r->exact != NULL)
		OdpRelease(r->exact);
	r->exact = NULL;
	r->keep_exact = false;
}

/* See input_internal.h. */
void
OdpReaderDiscard(OdpReader *r)
{
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	int			n = OdpReaderArrays(r, arrays);

	for (int a = 0; a < n; a++)
		if (*arrays[a].ptr != NULL)
		{
			OdpRelease(*arrays[a].ptr);
			*arrays[a].ptr = NULL;
		}
	r->rows = r->capacity = 0;
}

/*
 * Ids spanning at most this many values per row (plus the slack) are
 * ranked through a bitmap of their range instead of being sorted.
 */
#define ODP_DENSE_IDS_PER_ROW	16
#define ODP_DENSE_IDS_SLACK		65536

/* Arrays with rows no wider are gathered through a scratch copy. */
#define ODP_GATHER_ROW_BYTES	16

/*
 * Sets from[j] to the row whose id is the j-th smallest, in time linear
 * in the rows, where the ids are distinct and span a range of at most a
 * few values per row (ids 1..n in any order, the common case): each id
 * sets its bit in a bitmap of the range, and its rank is the bits set
 * before it.  Returns false, having set nothing, where the range is wider
 * or two rows share an id (the comparison sort then orders them, and the
 * check for duplicates names the smallest).
 */
static bool
OdpDenseIdOrder(const OdpReader *r, int64 *from)
{
	int64		n = r->rows;
	int64		min = r->ids[0];
	int64		max = r->ids[0];
	uint64		range;
	Size		nwords;
	uint64	   *bits;
	int64	   *before;
	int64		count = 0;
	bool		distinct = true;

	for (int64 i = 1; i < n; i++)
	{
		min = Min(min, r->ids[i]);
		max = Max(max, r->ids[i]);
	}
	range = (uint64) max - (uint64) min;
	if (range >= (uint64) n * ODP_DENSE_IDS_PER_ROW + ODP_DENSE_IDS_SLACK)
		return false;
	nwords = (Size) (range / 64 + 1);
	bits = MemoryContextAllocHuge(CurrentMemoryContext, nwords * sizeof(uint64));
	memset(bits, 0, nwords * sizeof(uint64));
	for (int64 i = 0; i < n; i++)
	{
		uint64		off = (uint64) r->ids[i] - (uint64) min;
		uint64		bit = UINT64CONST(1) << (off % 64);

		if (unlikely(bits[off / 64] & bit))
		{
			distinct = false;
			break;
		}
		bits[off / 64] |= bit;
	}
	if (!distinct)
	{
		pfree(bits);
		return false;
	}
	if (range == (uint64) n - 1)
	{
		/* n distinct ids over n values: each id's rank is its offset */
		pfree(bits);
		for (int64 i = 0; i < n; i++)
			from[(uint64) r->ids[i] - (uint64) min] = i;
		return true;
	}
	before = MemoryContextAllocHuge(CurrentMemoryContext, nwords * sizeof(int64));
	for (Size w = 0; w < nwords; w++)
	{
		before[w] = count;
		count += pg_popcount64(bits[w]);
	}
	for (int64 i = 0; i < n; i++)
	{
		uint64		off = (uint64) r->ids[i] - (uint64) min;
		uint64		below = bits[off / 64] & ((UINT64CONST(1) << (off % 64)) - 1);

		from[before[off / 64] + pg_popcount64(below)] = i;
	}
	pfree(before);
	pfree(bits);
	return true;
}

/*
 * Sets from[j] to the row whose id is the j-th smallest by sorting
 * (id, row) pairs.
 */
static void
OdpSortedIdOrder(const OdpReader *r, int64 *from)
{
	int64		n = r->rows;
	OdpIdRow   *pairs;

	pairs = MemoryContextAllocHuge(CurrentMemoryContext,
								   OdpMulSize(n, sizeof(OdpIdRow)));
	for (int64 i = 0; i < n; i++)
	{
		pairs[i].id = r->ids[i];
		pairs[i].row = i;
	}
	OdpSortIdRows(pairs, n);
	for (int64 i = 0; i < n; i++)
		from[i] = pairs[i].row;
	pfree(pairs);
}

/* See input_internal.h: ranked where the ids are dense, else sorted. */
void
OdpReaderIdOrder(const OdpReader *r, int64 *from)
{
	if (r->piece != NULL || !OdpDenseIdOrder(r, from))
		OdpSortedIdOrder(r, from);
}

/* Copies row from[j] of src to place j of dst, for j in [j0, j1). */
static pg_attribute_always_inline void
OdpGatherRange(char *dst, const char *src, const int64 *from, int64 j0,
			   int64 j1, Size rowbytes)
{
	for (int64 j = j0; j < j1; j++)
		memcpy(dst + rowbytes * j, src + rowbytes * from[j], rowbytes);
}

/*
 * See input_internal.h.  The reads are independent of each other (from is
 * read in order), so the memory system overlaps them, where following the
 * permutation's cycles waits for every row in turn.
 */
void
OdpGatherRowsInOrder(char *dst, const char *src, const int64 *from, int64 j0,
					 int64 j1, Size rowbytes)
{
	/* constant widths, so that each copy is a move or two */
	switch (rowbytes)
	{
		case 1:
			OdpGatherRange(dst, src, from, j0, j1, 1);
			break;
		case 4:
			OdpGatherRange(dst, src, from, j0, j1, 4);
			break;
		case 8:
			OdpGatherRange(dst, src, from, j0, j1, 8);
			break;
		case 16:
			OdpGatherRange(dst, src, from, j0, j1, 16);
			break;
		default:
			OdpGatherRange(dst, src, from, j0, j1, rowbytes);
			break;
	}
}

/* Bytes gathered between two looks for a cancel (and at most these rows). */
#define ODP_GATHER_CHECK_BYTES	((Size) 2 << 20)
#define ODP_GATHER_CHECK_ROWS	((int64) ODP_INPUT_BATCH_ROWS << 4)

/* OdpGatherRowsInOrder of all n rows, letting the user cancel. */
static void
OdpGatherAll(char *dst, const char *src, const int64 *from, int64 n, Size rowbytes)
{
	const int64 step = Min(ODP_GATHER_CHECK_ROWS,
						   Max((int64) (ODP_GATHER_CHECK_BYTES / rowbytes), 1));

	for (int64 j0 = 0; j0 < n; j0 += step)
	{
		CHECK_FOR_INTERRUPTS();
		OdpGatherRowsInOrder(dst, src, from, j0, Min(j0 + step, n), rowbytes);
	}
}

/*
 * A second buffer of size bytes in the same area as buf, for a gather
 * out of place; NULL where none can be had, or where buf is not in an
 * area whose pages stay mapped between calls (the staging areas): the
 * first touches of fresh pages cost more than following the cycles.
 */
static char *
OdpGatherTarget(OdpReader *r, const void *buf, Size size)
{
	OdpSharedLocation loc;

	if (!OdpSharedBufferFind(buf, 1, &loc) || loc.where == ODP_SHARED_SEGMENT)
		return NULL;
	return OdpSharedBufferCreate(r->outcxt, size, loc.where);
}

/*
 * Orders the rows by ascending id: finds the order (from[j], the row that
 * goes to position j: by ranking the ids where they are dense, else by
 * sorting), then moves every per-row array: narrow ones by a gather
 * through a scratch copy, wide ones in place by following the
 * permutation's cycles (each row moves once, through one row of scratch
 * space per array).  The scratch copy of a narrow array takes no more than
 * the pairs of the sort would.  A wide array is gathered out of place
 * instead where a second buffer can be had: its reads do not wait for
 * each other, where following the cycles waits for every row.
 */
static void
OdpReaderSortRows(OdpReader *r)
{
	int64		n = r->rows;
	OdpReaderArray arrays[ODP_READER_ARRAYS];
	OdpReaderArray narrow[ODP_READER_ARRAYS];
	OdpReaderArray wide[ODP_READER_ARRAYS];
	char	   *scratch[ODP_READER_ARRAYS];
	int			narrays;
	int			nnarrow = 0;
	int			nwide = 0;
	Size		gather_bytes = 0;
	int64	   *from;
	int64		moved = 0;

	if (n < 2)
		return;
	from = MemoryContextAllocHuge(CurrentMemoryContext,
								  OdpMulSize(n, sizeof(int64)));
	OdpReaderIdOrder(r, from);

	narrays = OdpReaderArrays(r, arrays);
	for (int a = 0; a < narrays; a++)
	{
		if (arrays[a].rowbytes == 0)
			continue;
		if (arrays[a].rowbytes <= ODP_GATHER_ROW_BYTES)
		{
			narrow[nnarrow++] = arrays[a];
			gather_bytes = Max(gather_bytes, arrays[a].rowbytes * (Size) n);
		}
		else
			wide[nwide++] = arrays[a];
	}
	if (gather_bytes > 0)
	{
		char	   *buf = MemoryContextAllocHuge(CurrentMemoryContext, gather_bytes);

		/* through the scratch copy, then back */
		for (int a = 0; a < nnarrow; a++)
		{
			char	   *base = *narrow[a].ptr;

			OdpGatherAll(buf, base, from, n, narrow[a].rowbytes);
			memcpy(base, buf, narrow[a].rowbytes * (Size) n);
		}
		pfree(buf);
	}

	for (int a = 0; a < nwide; a++)
	{
		/* the reader's capacity, as every other array has */
		Size		bytes = wide[a].rowbytes * (Size) r->capacity;
		char	   *target = OdpGatherTarget(r, *wide[a].ptr, bytes);

		if (target == NULL)
			continue;
		OdpGatherAll(target, *wide[a].ptr, from, n, wide[a].rowbytes);
		OdpRelease(*wide[a].ptr);
		*wide[a].ptr = target;
		/* gathered: the cycles below leave it alone */
		wide[a--] = wide[--nwide];
	}
	for (int a = 0; a < nwide; a++)
		scratch[a] = palloc(wide[a].rowbytes);
	/* from[j] is the row that goes to position j */
	for (int64 i = 0; i < n && nwide > 0; i++)
	{
		int64		j = i;

		if (from[i] == i)
			continue;
		for (int a = 0; a < nwide; a++)
			memcpy(scratch[a], *wide[a].ptr + wide[a].rowbytes * i,
				   wide[a].rowbytes);
		for (;;)
		{
			int64		k = from[j];

			/* one cycle can span every row: let the user cancel */
			if ((++moved & (ODP_INPUT_BATCH_ROWS - 1)) == 0)
				CHECK_FOR_INTERRUPTS();
			from[j] = j;
			for (int a = 0; a < nwide; a++)
				memcpy(*wide[a].ptr + wide[a].rowbytes * j,
					   k == i ? scratch[a] : *wide[a].ptr + wide[a].rowbytes * k,
					   wide[a].rowbytes);
			if (k == i)
				break;
			j = k;
		}
	}
	pfree(from);
	for (int a = 0; a < nwide; a++)
		pfree(scratch[a]);
}

/*
 * Ensures no two rows have one id.  A row's pieces (multiranges) share
 * their row's id and are one row: in a run of equal ids exactly one entry
 * is not a piece that continues a row, whatever order the sort left them
 * in.  Sets r->any_piece.
 */
static void
OdpReaderCheckUnique(OdpReader *r)
{
	if (r->piece == NULL)
	{
		for (int64 i = 1; i < r->rows; i++)
			OdpEnsureIdsDiffer(r->ids[i - 1], r->ids[i], &r->plan->id);
		return;
	}
	for (int64 start = 0; start < r->rows;)
	{
		int64		end = start + 1;
		int			rows = r->piece[start] == 0;

		while (end < r->rows && r->ids[end] == r->ids[start])
		{
			rows += r->piece[end] == 0;
			r->any_piece |= r->piece[end++] != 0;
		}
		if (rows > 1)
			OdpEnsureIdsDiffer(r->ids[start], r->ids[start], &r->plan->id);
		start = end;
	}
}

/*
 * Finishes reading: checks there are rows, sorts them by id if needed,
 * rejects duplicate ids and trims the buffers.
 */
void
OdpReaderFinish(OdpReader *r)
{
	if (!r->empty_ok)
		OdpEnsureHasRows(r->rows, r->desc);
	Assert(r->dims > 0 || r->rows == 0);

	if (!r->sorted)
	{
		OdpReaderSortRows(r);
		r->order = "moved";
	}
	r->sorted = true;
	if (!r->unique || r->piece != NULL)
		OdpReaderCheckUnique(r);

	if (r->capacity > r->rows)
		OdpReaderReserve(r, r->rows);
	/* no value was missing: the caller gets complete data */
	if (r->missing && !r->any_missing)
	{
		OdpRelease(r->missing);
		r->missing = NULL;
	}
	/* no interval was open, infinite or empty: the engine's fast case */
	if (r->bflags && !r->any_bflag)
	{
		OdpRelease(r->bflags);
		r->bflags = NULL;
	}
	/* pieces were needed to find duplicate ids only */
	if (r->piece != NULL)
	{
		OdpRelease(r->piece);
		r->piece = NULL;
	}
	/* a source of cubes without rows has no dimensions */
	if (r->dims < 0)
		r->dims = 0;
}

/* See input.h. */
void
OdpInputWiden(OdpInput *in)
{
	Size		n = (Size) in->rows * (Size) in->dims;
	double	   *wide;

	if (in->data == NULL)
		return;
	wide = MemoryContextAllocHuge(CurrentMemoryContext,
								  OdpMulSize(Max(n, 1), sizeof(double)));
	for (Size i = 0; i < n; i++)
		wide[i] = (double) in->data[i];
	/* an aggregate's rows stay its accumulator's */
	if (!in->aggregate)
		OdpRelease(in->data);
	in->data = NULL;
	in->data64 = wide;
}

/* See input_internal.h. */
int32
OdpReadMaxDims(const OdpColumnPlan *plan, const OdpInputSpec *spec)
{
	if (plan->regions)
		return ODP_MAX_INTERVAL_DIMS;
	return spec->max_dims > 0 ? spec->max_dims : ODP_MAX_DIMS;
}

/* See input_internal.h. */
bool
OdpPlanReadsFloat64(const OdpColumnPlan *plan, const OdpInputSpec *spec)
{
	return spec->values == ODP_VALUES_FLOAT8 ||
		(spec->values == ODP_VALUES_DISTANCE && !plan->regions &&
		 OdpColumnsNeedFloat64(plan->features, plan->nfeatures));
}

/*
 * Prepares a reader for plan; capacity_hint is the expected row count, and
 * spec (or NULL: float32, no missing values) says how values are delivered:
 * for the distances, in the precision plan's features are stored in.
 */
void
OdpReaderInit(OdpReader *r, const OdpColumnPlan *plan, MemoryContext outcxt,
			  MemoryContext rowcxt, const char *desc, double capacity_hint,
			  const OdpInputSpec *spec)
{
	memset(r, 0, sizeof(*r));
	r->plan = plan;
	r->outcxt = outcxt;
	r->rowcxt = rowcxt;
	r->desc = desc;
	r->sorted = true;
	r->keep_exact = plan->exact_bounds;
	r->dims = plan->vector ? -1 : plan->nfeatures;
	r->f64 = spec != NULL && OdpPlanReadsFloat64(plan, spec);
	r->missing_ok = r->f64 && spec->missing_ok;
	r->max_dims = spec != NULL && spec->max_dims > 0 ? spec->max_dims : ODP_MAX_DIMS;
	r->empty_ok = spec != NULL && spec->empty_ok;
	/*
	 * Large buffers go where the GPU service reads them in place: its
	 * staging area, whose pages are mapped and page-locked already, so the
	 * read fills them without a fault or a clear per page and the copy to
	 * the GPU runs at the bus's speed.  Then, where asked, dynamic shared
	 * memory; and for a table of known size, where the server keeps memory
	 * for it (min_dynamic_shared_memory), which is mapped already too.
	 * A call on the CPU path (odp_gpu.device = cpu) reads into the staging
	 * area as well: its pages are mapped in a session after its first
	 * call, where fresh backend memory costs a fault per page on every
	 * call, and the table cache can keep what is read there.
	 */
	r->shared = 0;
	if (OdpServiceConfigured())
	{
		if (OdpStagingConfigured())
			r->shared |= ODP_SHARED_STAGING;
		if (odp_service_inputs_in_place && odp_device_setting != ODP_SETTING_CPU)
			r->shared |= ODP_SHARED_SEGMENT;
	}
	else if (OdpBackendStagingWanted())
	{
		/*
		 * the backend's own area: page-locked for its copies to the GPU,
		 * and mapped already for any call after its first
		 */
		r->shared |= ODP_SHARED_OWN;
		if (capacity_hint > 0)
			OdpBackendStagingExpect((Size) (capacity_hint * 1.05 *
											(sizeof(int64) + Max(r->dims, 16) * (r->f64 ? 8 : 4))));
	}
	if (min_dynamic_shared_memory > 0 && capacity_hint > 0)
		r->shared |= ODP_SHARED_SEGMENT;
	if (plan->regions)
	{
		const OdpRegionColumn *last = &plan->region[plan->nregions - 1];

		/* a cube's dimensions are known from its first row */
		r->dims = last->ndims < 0 ? -1 : last->dim + last->ndims;
		r->max_dims = ODP_MAX_INTERVAL_DIMS;
	}

	if (capacity_hint > ODP_INPUT_INITIAL_ROWS)
		OdpReaderReserve(r, (int64) Min(capacity_hint * 1.05 + 16,
										(double) ODP_MAX_ROWS));
	else
		OdpReaderReserve(r, ODP_INPUT_INITIAL_ROWS);
}
