/*-------------------------------------------------------------------------
 *
 * input_internal.h
 *	  What the input files (src/input/input_*.c) share: the reader's types and
 *	  each file's functions for the others.  input.h is the API the rest
 *	  of src/ uses.
 *
 * The files by concern, and who calls whom (arrows run one way, down):
 *
 *	  input_reader.c     the entry points OdpReadInput, OdpResolveSource
 *	                     and the parallel workers' OdpParallelReadMain;
 *	                     table scan and SPI
 *	  input_aggregate.c  OdpRowAccum*: rows given one at a time
 *	  input_argument.c   a vector given as an argument (odp_knn's query)
 *	       |
 *	  input_parallel.c   a table read by parallel workers into shared
 *	       |             buffers, in physical order
 *	       |
 *	  input_decode.c     a row's id and values into the buffers
 *	       |
 *	  input_regions.c    region columns and their bounds; a multirange
 *	       |             row as several pieces
 *	  input_exact.c      numeric bounds kept exactly, ranked together
 *	       |             once every source is read
 *	  input_place.c      rows placed at their ids' offsets, where an
 *	       |             index bounds the ids
 *	  input_stream.c     a TOASTed array's values into their row by
 *	       |             stores that bypass the cache
 *	  input_buffer.c     growable buffers, sorting by id, finishing
 *	       |
 *	  input_source.c     query or relation name; opening the relation
 *	  input_columns.c    value kinds, finding and resolving columns,
 *	       |             primary key, privileges
 *	       |
 *	  input_pgvector.c   pgvector's types: found in the catalog by name
 *	                     and storage, their stored layouts
 *	  input_checks.h     checks several files run (static inline)
 *
 * The reader also calls the files below decode (to resolve columns and
 * to describe regions), the aggregate the buffer, and the argument the
 * columns and pgvector's layouts; no file calls one above it.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_INPUT_INTERNAL_H
#define ODP_INPUT_INTERNAL_H

#include "access/attnum.h"
#include "access/tupdesc.h"
#include "access/tupmacs.h"
#include "executor/tuptable.h"
#include "input/input.h"
#include "service/table_cache.h"
#include "storage/shm_toc.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

/* Rows between interrupt checks; SPI fetch size. */
#define ODP_INPUT_BATCH_ROWS	8192

/*
 * Rows between resets of the reader's row context: what decoding a row
 * allocates (a multirange's intervals, a detoasted copy) stays within the
 * context's first blocks.  Reset every batch, 8,192 rows of multiranges
 * grew it by megabytes, given back and faulted in again every batch (10^6
 * multiranges on two cores: 80 ms of a read of 500,000 rows).
 */
#define ODP_INPUT_RESET_ROWS	64

/* The numeric types a feature or id value can have. */
typedef enum OdpValueKind
{
	ODP_VALUE_INT2,
	ODP_VALUE_INT4,
	ODP_VALUE_INT8,
	ODP_VALUE_FLOAT4,
	ODP_VALUE_FLOAT8,
	ODP_VALUE_NUMERIC
} OdpValueKind;

/* Returns whether kind is one of the integer kinds (valid for ids). */
static inline bool
OdpIsIntegerKind(OdpValueKind kind)
{
	return kind == ODP_VALUE_INT2 || kind == ODP_VALUE_INT4 ||
		kind == ODP_VALUE_INT8;
}

/*
 * Converts a numeric Datum to the nearest double (NaN and infinities pass
 * through); a finite value beyond float64's range becomes an infinity
 * instead of an error, so that the caller can name its row.
 */
static inline double
OdpNumericToDouble(Datum value)
{
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, value));
}

/* Returns a scalar value of a numeric kind as float64 (unchecked). */
static inline double
OdpDoubleValue(OdpValueKind kind, Datum value)
{
	switch (kind)
	{
		case ODP_VALUE_INT2:
			return (double) DatumGetInt16(value);
		case ODP_VALUE_INT4:
			return (double) DatumGetInt32(value);
		case ODP_VALUE_INT8:
			return (double) DatumGetInt64(value);
		case ODP_VALUE_FLOAT4:
			return (double) DatumGetFloat4(value);
		case ODP_VALUE_FLOAT8:
			return DatumGetFloat8(value);
		case ODP_VALUE_NUMERIC:
			return OdpNumericToDouble(value);
	}
	return 0.0;					/* keep compiler quiet */
}

/*
 * How a vector is stored: a PostgreSQL array, or one of the types of the
 * pgvector extension (input_pgvector.c), which odp_gpu reads from their
 * stored bytes without linking against pgvector.
 */
typedef enum OdpVectorFormat
{
	ODP_FORMAT_ARRAY = 0,		/* an array (or no vector at all) */
	ODP_FORMAT_VECTOR,			/* vector: float4 elements */
	ODP_FORMAT_HALFVEC,			/* halfvec: IEEE binary16 elements */
	ODP_FORMAT_SPARSEVEC,		/* sparsevec: the non-zero elements'
								 * indices, then their float4 values */
	ODP_FORMAT_LOOKALIKE		/* named like one of those but stored
								 * otherwise: refused where used */
} OdpVectorFormat;

/* One column of the source, as resolution sees it. */
typedef struct OdpColumn
{
	const char *name;
	int			pos;			/* 1-based position in the tuples read */
	AttrNumber	attnum;			/* relation attnum; InvalidAttrNumber for
								 * queries */
	Oid			typid;			/* declared type (for messages) */
	bool		is_array;		/* a one-or-more dimensional array type, or
								 * a pgvector type (a vector of values) */
	bool		is_numeric;		/* value (or element) type is numeric */
	OdpValueKind kind;			/* of the value or of the elements (float4
								 * for the pgvector types) */
	OdpVectorFormat format;		/* how a vector column is stored */
} OdpColumn;

/* Returns the id in value, whose kind is an integer kind. */
static inline int64
OdpIdValue(const OdpColumn *col, Datum value)
{
	switch (col->kind)
	{
		case ODP_VALUE_INT2:
			return DatumGetInt16(value);
		case ODP_VALUE_INT4:
			return DatumGetInt32(value);
		case ODP_VALUE_INT8:
			return DatumGetInt64(value);
		default:
			elog(ERROR, "id column of unexpected kind %d", (int) col->kind);
	}
	return 0;					/* keep compiler quiet */
}

/* How a column (or a pair of columns) holds regions. */
typedef enum OdpRegionKind
{
	ODP_REGION_RANGE,			/* a range type: one dimension */
	ODP_REGION_MULTIRANGE,		/* a multirange type: one dimension, a
								 * piece of the row per range */
	ODP_REGION_BOX,				/* box: two dimensions, compared as box && */
	ODP_REGION_CUBE,			/* contrib cube: its dimensions */
	ODP_REGION_PAIR				/* two scalar columns, lower and upper */
} OdpRegionKind;

/* The types a bound can have, with the domain they are compared in. */
typedef enum OdpBoundKind
{
	ODP_BOUND_INT2,
	ODP_BOUND_INT4,
	ODP_BOUND_INT8,
	ODP_BOUND_FLOAT4,
	ODP_BOUND_FLOAT8,
	ODP_BOUND_NUMERIC,
	ODP_BOUND_DATE,
	ODP_BOUND_TIMESTAMP,
	ODP_BOUND_TIMESTAMPTZ
} OdpBoundKind;

/* One column of regions (the lower one of a pair), as the plan reads it. */
typedef struct OdpRegionColumn
{
	OdpRegionKind kind;
	int			feature;		/* index in plan->features; a pair's upper
								 * column is the next one */
	int			dim;			/* first dimension it fills */
	int			ndims;			/* 1, 2 for box; -1 for a cube, whose
								 * dimensions the first row sets (the
								 * reader's dims, the cube's the last) */
	OdpBoundKind bound;			/* the bounds' type (box, cube: float8; a
								 * pair's lower column) */
	OdpBoundKind upper_bound;	/* a pair's upper column's type */
	bool		canonical;		/* integer or date intervals are compared
								 * as sets of values: excluded bounds become
								 * included ones (int4range and its kin) */
	struct TypeCacheEntry *range;	/* ranges: the type's cache entry;
									 * multiranges: their ranges' */
	struct TypeCacheEntry *multirange;	/* multiranges: the type's */
} OdpRegionColumn;

/* Which columns are read, and how. */
typedef struct OdpColumnPlan
{
	OdpColumn	id;
	bool		vector;			/* features is one array column */
	int			nfeatures;
	OdpColumn  *features;		/* nfeatures entries (regions: every column
								 * read, a pair's two one after the other) */
	int			maxpos;			/* largest pos used */

	/* regions (OdpInputSpec.values == ODP_VALUES_REGIONS) */
	bool		regions;
	int			nregions;
	OdpRegionColumn *region;	/* nregions entries */
	uint8		pair_flags;		/* ODP_BOUND_* of pairs' bounds */
	bool		exact_bounds;	/* some bound is numeric: kept exactly
								 * (input_exact.c) */
	bool		pieces;			/* some column is a multirange */
} OdpColumnPlan;

/* Accumulation state while rows arrive. */
typedef struct OdpReader
{
	const OdpColumnPlan *plan;
	int			shared;			/* where large buffers go: ODP_SHARED_* bits
								 * (shared_buffers.h), 0: this backend */
	MemoryContext outcxt;		/* where data and ids live (the caller's) */
	MemoryContext rowcxt;		/* reset every ODP_INPUT_RESET_ROWS rows */
	int64		rows;
	int64		added;			/* rows OdpReaderAddSlot was given */
	int64		capacity;		/* rows that data and ids have room for */
	Size		first_room;		/* > 0: once dims is known, the buffers
								 * start with room for at most this many
								 * bytes of rows (a parallel read's private
								 * stage holds a chunk, not the input) */
	int32		dims;			/* -1 until the first vector is read */
	int32		max_dims;		/* limit on dims */
	bool		f64;			/* values as float64 (data64), else data */
	bool		missing_ok;		/* NULL and NaN values are missing */
	bool		any_missing;	/* some value was */
	float	   *data;
	double	   *data64;
	uint8	   *missing;		/* missing_ok: a flag per value */
	uint64	   *lower;			/* regions: rows x dims keys of the bounds */
	uint64	   *upper;
	uint8	   *bflags;			/* regions: ODP_BOUND_* per interval */
	bool		any_bflag;		/* some interval has a flag */
	struct NumericData **exact; /* exact_bounds: rows x dims x (lower,
								 * upper) numeric bounds, NULL where the
								 * key is exact (input_exact.c) */
	uint8		exact_dims[ODP_MAX_INTERVAL_DIMS];	/* ODP_EXACT_* of each
													 * dimension's bounds */
	bool		exact_long;		/* a numeric bound whose key is not exact
								 * (input_exact.c) */
	bool		keep_exact;		/* exact_bounds: numerics kept in exact
								 * (not by a parallel read's participants) */
	char	   *arena;			/* where the numeric bounds are kept */
	Size		arena_left;
	uint8	   *piece;			/* pieces: 1 where a row continues the
								 * previous row's pieces (same id) */
	bool		any_piece;		/* some row has several pieces */
	bool		empty_ok;		/* a source without rows is no error */
	int64	   *ids;
	int64		slot;			/* the row being read goes here: at rows, or
								 * while placing at its id's offset */
	uint64	   *place;			/* placing (input_place.c): a bit for each id
								 * of [place_base, place_base + place_span)
								 * read so far; NULL: rows are appended */
	int64		place_base;
	int64		place_span;
	const char *order;			/* OdpInput's read_order; NULL: "scan" */
	int8		direct;			/* ODP_DIRECT_*: what of a heap tuple is read
								 * from its bytes, without deforming it */
	int16		direct_natts;	/* attributes a tuple read so must have */
	int16		direct_id_len;	/* the id's bytes, at direct_id_off */
	int32		direct_id_off;	/* in the tuple's data */
	int32		direct_value_off;	/* ODP_DIRECT_RANGE: where the range's
									 * varlena starts, before alignment */
	char		direct_value_align;
	bool		sorted;			/* ids so far are non-decreasing */
	bool		unique;			/* and known strictly ascending: finishing
								 * skips the check for duplicates */
	const char *desc;
} OdpReader;

/*
 * OdpReader.direct: heap tuples without nulls whose id (and range) follow
 * fixed-width columns only are read from their bytes (input_direct.c).
 */
#define ODP_DIRECT_UNKNOWN	0	/* not looked at yet */
#define ODP_DIRECT_NONE		1	/* every row is deformed */
#define ODP_DIRECT_ID		2	/* the id at a fixed offset */
#define ODP_DIRECT_RANGE	3	/* the id, then a range of a by-value type:
								 * the whole row (OdpRegionsAddTuple) */

/*
 * Ends the reader's next row (its values stored) with its id; piece says
 * the row continues the previous row's pieces.
 */
static inline void
OdpReaderPushId(OdpReader *r, int64 id, bool piece)
{
	if (r->place != NULL)
	{
		r->ids[r->slot] = id;
		r->rows++;
		return;
	}
	if (r->rows > 0 && id < r->ids[r->rows - 1])
		r->sorted = false;
	if (r->piece != NULL)
		r->piece[r->rows] = piece;
	r->ids[r->rows++] = id;
}

/* ---- input_source.c ---- */

extern bool OdpSourceIsQuery(const char *source);
extern Relation OdpOpenSourceRelation(const char *source);
extern char *OdpRelationDesc(Relation rel);

/* ---- input_columns.c ---- */

extern bool OdpValueKindOf(Oid typid, OdpValueKind *kind);
extern void OdpDescribeType(Oid typid, OdpColumn *col);

/*
 * Whether the distances read features stored as cols in float64 (the rule
 * of input.h, under odp_gpu.distance_precision).
 */
extern bool OdpColumnsNeedFloat64(const OdpColumn *cols, int ncols);
extern OdpColumn *OdpDescribeColumns(TupleDesc tupdesc, bool is_relation,
									 int *ncols);
extern const OdpColumn *OdpFindColumn(const OdpColumn *cols, int ncols,
									  const char *name, const char *what,
									  const char *desc, bool missing_ok);
extern int	OdpColumnNames(ArrayType *arr, const char *what, Datum **names,
						   bool **nulls);
extern const OdpColumn *OdpResolveIdColumn(const OdpColumn *cols, int ncols,
										   bool is_relation,
										   AttrNumber pk_attnum,
										   const OdpInputSpec *spec,
										   const char *desc);
extern void OdpResolveFeatureColumns(const OdpColumn *cols, int ncols,
									 const OdpColumn *id,
									 const OdpInputSpec *spec,
									 const char *desc, OdpColumnPlan *plan);
extern AttrNumber OdpPrimaryKeyColumn(Relation rel);
extern void OdpCheckAnyPrivilege(Relation rel);
extern void OdpCheckColumnPrivileges(Relation rel, const OdpColumnPlan *plan);

/* ---- input_pgvector.c ---- */

/* A pgvector value's parts, as stored (possibly unaligned). */
typedef struct OdpPgvectorParts
{
	int32		dim;			/* dimensions of the (dense) vector */
	int32		nnz;			/* sparsevec: elements stored; else dim */
	const char *values;			/* nnz float4 or binary16 values */
	const char *indices;		/* sparsevec: nnz int32, 0-based, ascending;
								 * else NULL */
} OdpPgvectorParts;

extern OdpVectorFormat OdpVectorFormatOf(Oid typid);
extern Size OdpPgvectorHeaderBytes(OdpVectorFormat format);
extern Size OdpPgvectorElementBytes(OdpVectorFormat format);
extern int32 OdpPgvectorHeaderDim(OdpVectorFormat format, const char *header);
extern void OdpCorruptPgvector(OdpVectorFormat format, const char *column)
			pg_attribute_noreturn();
extern void OdpPgvectorSplit(OdpVectorFormat format, const char *body,
							 Size bodylen, const char *column,
							 OdpPgvectorParts *parts);
extern void OdpHalvesToFloats(const char *src, int32 n, float *dst);
extern void OdpPgvectorToFloats(OdpVectorFormat format,
								const OdpPgvectorParts *parts,
								const char *column, float *dst);

/* ---- input_buffer.c ---- */

extern void OdpReaderInit(OdpReader *r, const OdpColumnPlan *plan,
						  MemoryContext outcxt, MemoryContext rowcxt,
						  const char *desc, double capacity_hint,
						  const OdpInputSpec *spec);
extern void OdpReaderGrow(OdpReader *r);
/* Sets the row capacity of r's buffers (the values' once dims is known). */
extern void OdpReaderReserve(OdpReader *r, int64 capacity);
extern void OdpReaderSetDims(OdpReader *r, int32 dims);
extern void OdpReaderFinish(OdpReader *r);

/*
 * Sets from[j] to the row (of r's rows, ids in r->ids) whose id is the
 * j-th smallest; rows sharing an id end up next to each other.
 */
extern void OdpReaderIdOrder(const OdpReader *r, int64 *from);

/*
 * Copies row from[j] of src (rows of rowbytes bytes) to place j of dst,
 * for places [j0, j1): rows put in the order from gives.
 */
extern void OdpGatherRowsInOrder(char *dst, const char *src, const int64 *from,
								 int64 j0, int64 j1, Size rowbytes);

/* One of the reader's per-row arrays: where it is, bytes per row. */
typedef struct OdpReaderArray
{
	char	  **ptr;
	Size		rowbytes;
} OdpReaderArray;

#define ODP_READER_ARRAYS	6

/*
 * Lists the reader's per-row arrays (dims known), ids first, then the
 * values (or the bounds and their flags), then the missing flags;
 * returns how many (at most ODP_READER_ARRAYS).
 */
extern int	OdpReaderArrays(OdpReader *r, OdpReaderArray *arrays);

/*
 * Moves the reader's buffers (no rows yet, dims known) to new shared
 * buffers of capacity rows, which parallel workers can fill; false,
 * leaving the reader without buffers, where shared memory cannot be had.
 */
extern bool OdpReaderShareBuffers(OdpReader *r, int64 capacity);

/*
 * Makes the reader keep numeric bounds' keys without their values (a
 * parallel read's participants and output: input_exact.c).
 */
extern void OdpReaderDropExact(OdpReader *r);

/* Frees the reader's buffers (before it is initialised again). */
extern void OdpReaderDiscard(OdpReader *r);

/*
 * Maps the pages that a copy of bytes at dst is about to write (or, read,
 * to read), in one call: each process maps the pages of shared memory it
 * touches (a parallel worker is a new process every call), and fresh
 * memory is mapped page by page, where a fault per 4 kB page costs more
 * than the copy.  Only advice: where the kernel cannot, the copy faults
 * them in.
 */
extern void OdpPopulate(const char *dst, Size bytes, bool read);

/*
 * ---- input_place.c ----
 *
 * A table's rows placed at their ids' offsets as they are read, where a
 * btree index bounds the ids: rows stored out of id order then need no
 * sort or gather afterwards, and rows missing from the range are closed
 * up by a move of the rows after them.
 */

/*
 * Whether a heap scan of rel under snapshot can place its rows: an index
 * gives the range of the ids (r->plan->id.pos is the id's attribute
 * number), [lo, lo + span), and it is not much wider than the table's
 * estimated rows.
 */
extern bool OdpPlacementRange(const OdpReader *r, Relation rel,
							  Snapshot snapshot, int64 *lo, int64 *span);

/*
 * Makes r (no rows read yet) place the rows of a heap scan of rel under
 * snapshot at their ids' offsets where OdpPlacementRange allows; returns
 * whether it does.
 */
extern bool OdpReaderPlaceTable(OdpReader *r, Relation rel, Snapshot snapshot);

/* The 64-bit words of a bitmap of span offsets. */
static inline Size
OdpPlacementWords(int64 span)
{
	return (Size) ((span + 63) / 64);
}

/*
 * Makes r's rows, already at their offsets from base (a parallel read's),
 * placed: bits (palloc'd, r's from now on) has a bit set for each offset
 * a row took.  OdpReaderEndPlacement then closes them up.
 */
extern void OdpReaderAdoptPlacement(OdpReader *r, uint64 *bits, int64 base,
									int64 span);

/*
 * Stops placing: the rows read so far close up in id order, and the
 * following ones are appended.  For an id outside the range or read twice.
 */
extern void OdpReaderUnplace(OdpReader *r);

/*
 * Ends placing once every row is read: the rows close up in id order,
 * which is then known to be strictly ascending.
 */
extern void OdpReaderEndPlacement(OdpReader *r);

/*
 * Where the row with id goes (r->slot): its offset while placing, else
 * the next row, with room made for it.
 */
static inline int64
OdpReaderSlot(OdpReader *r, int64 id)
{
	if (r->place != NULL)
	{
		uint64		off = (uint64) id - (uint64) r->place_base;
		uint64		bit = UINT64CONST(1) << (off % 64);

		if (likely(off < (uint64) r->place_span && !(r->place[off / 64] & bit)))
		{
			r->place[off / 64] |= bit;
			return (int64) off;
		}
		OdpReaderUnplace(r);
	}
	if (unlikely(r->rows >= r->capacity))
		OdpReaderGrow(r);
	return r->rows;
}

/* ---- input_exact.c ---- */

/* What bounds a dimension has (OdpReader.exact_dims, OdpInput.exact_dims). */
#define ODP_EXACT_NUMERIC	0x01	/* a finite numeric */
#define ODP_EXACT_OTHER		0x02	/* a finite bound of another type */

/*
 * The key of numeric bound value: the order key of the double nearest to
 * it, exact or a stand-in until the bounds are ranked; *kept receives a
 * copy of the numeric that lives as long as the reader's output (NULL for
 * an infinity, whose key is exact, and where r does not keep them).  Sets r->exact_long where the key may
 * not tell the numeric from another.  False for NaN.
 */
extern bool OdpExactKey(OdpReader *r, Datum value, uint64 *key,
						struct NumericData **kept);

/*
 * Whether a source's numeric bounds need their values to be compared
 * (their keys could tie two of them, or sit with bounds of another type
 * in a dimension): dims flags of ODP_MAX_INTERVAL_DIMS dimensions.
 */
extern bool OdpExactNeedsValues(const uint8 *dims, bool exact_long);

/*
 * Compares two bounds exactly: keys, and where they are equal and either
 * bound is numeric (n non-NULL), the values.
 */
extern int	OdpCompareExact(uint64 ka, struct NumericData *na, uint64 kb,
							struct NumericData *nb);

/* ---- input_regions.c ---- */

extern void OdpResolveRegionColumns(const OdpColumn *cols, int ncols,
									const OdpColumn *id, const OdpInputSpec *spec,
									const char *desc, OdpColumnPlan *plan);
extern void OdpRegionsAddRow(OdpReader *r, const Datum *values,
							 const bool *isnull, int64 id);
extern bool OdpRegionsReadDirect(const OdpColumnPlan *plan);
extern bool OdpRegionsAddTuple(OdpReader *r, const char *data, int64 id);
extern OdpRegionDim *OdpDescribeRegionDims(const OdpColumnPlan *plan, int32 dims);

/*
 * input_buffer.c: whether a read by plan with spec's options gives float64
 * values (data64).
 */
extern bool OdpPlanReadsFloat64(const OdpColumnPlan *plan, const OdpInputSpec *spec);

/* input_buffer.c: the most values per row a read by plan with spec allows. */
extern int32 OdpReadMaxDims(const OdpColumnPlan *plan, const OdpInputSpec *spec);

/*
 * input_cache.c: a read through the table cache (service/table_cache.h).
 * Before a heap scan of rel, OdpCacheBeforeRead decides whether the read
 * may be cached, finds a valid entry (hit: OdpCacheFillInput makes the
 * input of it, no scan) or notes the pages' state; after the scan,
 * OdpCacheAfterScan checks that state held; once the input is finished,
 * OdpCacheKeep makes it an entry where it may, or says in DEBUG1 why not.
 */
typedef struct OdpCacheUse
{
	bool		wanted;			/* the read may be cached: key is set */
	bool		hit;
	bool		stable;			/* the pages were all-visible, unchanged
								 * over the scan */
	const char *why;			/* why no entry was used, or NULL */
	double		check_ms;
	int			ncolumns;
	int16		columns[ODP_CACHE_MAX_COLUMNS];
	OdpCacheKey key;
	OdpCacheState before;
	OdpCacheHandle handle;
	OdpCacheLayout layout;
} OdpCacheUse;

extern void OdpCacheBeforeRead(Relation rel, const OdpColumnPlan *plan,
							   const OdpInputSpec *spec, OdpCacheUse *cu);
extern void OdpCacheAfterScan(Relation rel, OdpCacheUse *cu);
extern void OdpCacheFillInput(OdpCacheUse *cu, MemoryContext outcxt, OdpInput *out);
extern void OdpCacheKeep(OdpCacheUse *cu, MemoryContext outcxt, OdpInput *out);

/* ---- input_parallel.c ---- */

/*
 * Reads rel (a plain heap table, columns resolved into r's plan) with
 * parallel workers into r, which OdpReaderInit prepared; *workers is set
 * to the workers that took part.  Returns false, r untouched, where no
 * worker may be used or the parallel read failed: the caller then reads
 * serially (which raises the error, if the data has one).
 */
extern bool OdpReadTableParallel(Relation rel, const OdpInputSpec *spec,
								 OdpReader *r, const char *desc, int *workers);

/* A worker: the spec and relation the backend reads. */
extern void OdpParallelWorkerSpec(shm_toc *toc, OdpInputSpec *spec,
								  Oid *relid);

/* A worker: reads its share of rel into the backend's output. */
extern void OdpParallelWorkerRead(shm_toc *toc, Relation rel,
								  const OdpColumnPlan *plan,
								  const OdpInputSpec *spec, const char *desc);

/* ---- input_stream.c ---- */

/* The largest TOASTed value (with its header) read through the scratch. */
#define ODP_STREAM_SCRATCH_MAX	((Size) 4 << 20)

/*
 * A buffer of at least bytes (at most ODP_STREAM_SCRATCH_MAX) that stays
 * in the cache from one value to the next: this process's, kept.
 */
extern char *OdpStreamScratch(Size bytes);

/*
 * Copies n values of elsize bytes (float8 or float4) from src to dst by
 * stores that bypass the cache; returns whether every value is finite.
 */
extern bool OdpStreamValues(char *dst, const char *src, Size n, Size elsize);

/* ---- input_decode.c ---- */

extern void OdpReaderAddRow(OdpReader *r, const Datum *values,
							const bool *isnull);
extern void OdpReaderAddSlot(OdpReader *r, TupleTableSlot *slot);

/* The id of the row in slot, checked as OdpReaderAddSlot checks it. */
extern int64 OdpSlotId(OdpReader *r, TupleTableSlot *slot);

/* ---- input_direct.c ---- */

/*
 * The data (past its header) of the heap tuple in slot, where r->direct
 * lets the row be read from it: no NULLs, and every attribute it reads
 * stored (a column added later with a default is not, in older tuples);
 * NULL otherwise.  Sets r->direct at the first row.
 */
extern const char *OdpDirectData(OdpReader *r, TupleTableSlot *slot);

/*
 * The id of a tuple whose data OdpDirectData gave: fetched as deforming
 * fetches it (at its aligned offset).
 */
static inline int64
OdpDirectId(const OdpReader *r, const char *data)
{
	return OdpIdValue(&r->plan->id,
					  fetch_att(data + r->direct_id_off, true, r->direct_id_len));
}

#endif							/* ODP_INPUT_INTERNAL_H */
