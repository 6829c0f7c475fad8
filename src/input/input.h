/*-------------------------------------------------------------------------
 *
 * input.h
 *	  Reads a table, view or query into a dense matrix plus ids.
 *
 * Every table-reading SQL function of odp_gpu takes a "source" (a relation
 * name resolved like regclass, or a query starting with SELECT, WITH,
 * VALUES or TABLE), an optional id column and an optional list of feature
 * columns.  OdpReadInput turns them into the N x D row-major matrix the
 * engine takes, with the rows sorted by ascending, unique id: float32 for
 * the distance analytics, float64 as stored (with flags of missing
 * values, if asked) for the correlations, or the bounds of regions, one
 * interval per dimension, as order-preserving keys, for the matching.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_INPUT_H
#define ODP_INPUT_H

#include "fmgr.h"
#include "nodes/pg_list.h"
#include "utils/array.h"

#include "odp_intervals.h"

/*
 * How OdpReadInput delivers the feature values.  The distance analytics
 * take their rows in the precision the features are stored in
 * (ODP_VALUES_DISTANCE): float32 for real, real[], pgvector's types and
 * smallint; float64 for double precision, numeric, integer and bigint,
 * scalar or array, and for any mix of columns that includes one of them
 * (odp_gpu.distance_precision may force either).  float32 rounds 1.7e9
 * epoch seconds to 128 s, so stored float64 values are never squeezed
 * through it unless the user asks.
 */
typedef enum OdpValueType
{
	ODP_VALUES_DISTANCE = 0,	/* data (float32, checked to fit) or data64
								 * (float64), by the rule above */
	ODP_VALUES_FLOAT4,			/* float32 whatever the types (the sharded
								 * nodes' wire format) */
	ODP_VALUES_FLOAT8,			/* float64 as stored (correlations) */
	ODP_VALUES_REGIONS			/* bounds of regions (interval matching) */
} OdpValueType;

/* The domain a dimension's bounds are compared in. */
typedef enum OdpBoundDomain
{
	ODP_DOMAIN_INTEGER,			/* smallint, integer, bigint; int4range, ... */
	ODP_DOMAIN_FLOAT,			/* real, double precision, numeric; numrange,
								 * box, cube */
	ODP_DOMAIN_DATE,
	ODP_DOMAIN_TIMESTAMP,
	ODP_DOMAIN_TIMESTAMPTZ
} OdpBoundDomain;

/* What one dimension of a source's regions is, for checks and messages. */
typedef struct OdpRegionDim
{
	OdpBoundDomain domain;
	bool		box;			/* compared as box && (fuzzy) */
	const char *column;			/* the column (a pair's lower one) */
	const char *upper_column;	/* a pair's upper column, or NULL */
	int			axis;			/* box, cube: the coordinate (0 = x); -1 */
	Oid			typid;			/* the column's type */
} OdpRegionDim;

typedef struct OdpInputSpec
{
	text	   *source;			/* table/view name or query; never NULL (caller
								 * checks) */
	text	   *id_column;		/* NULL = default */
	ArrayType  *features;		/* text[] or NULL = default */

	/*
	 * zeroing the struct gives the defaults: the distances' precision, no
	 * missing values
	 */
	OdpValueType values;
	bool		missing_ok;		/* FLOAT8 only: a NULL or NaN value (not a
								 * NULL vector) is missing, flagged in
								 * OdpInput.missing, instead of an error */
	int32		max_dims;		/* values per row; 0 = ODP_MAX_DIMS */

	/* ODP_VALUES_REGIONS: features names the region columns (dims) */
	uint8		pair_flags;		/* ODP_BOUND_* exclusivity of pairs' bounds */
	bool		serial;			/* read without parallel workers (numeric
								 * bounds whose values are needed) */
	bool		empty_ok;		/* a source without rows is no error */

	/*
	 * A partition of this relation, whose privileges OdpResolveSource has
	 * checked for the caller: source (the partition) is read directly,
	 * as a query on the parent reads it, without checks of its own.
	 */
	Oid			checked_parent;
} OdpInputSpec;

typedef struct OdpInput
{
	int64		rows;
	int32		dims;
	float	   *data;			/* float32 rows: rows * dims, row-major,
								 * sorted by ascending id; else NULL */
	double	   *data64;			/* float64 rows (ODP_VALUES_FLOAT8, or
								 * ODP_VALUES_DISTANCE on float64 features):
								 * the same; else NULL (exactly one is set,
								 * but for regions) */
	uint8	   *missing;		/* missing_ok: rows * dims flags, 1 = missing
								 * (the value is 0); NULL when none is */
	uint64	   *lower;			/* ODP_VALUES_REGIONS: rows * dims keys of
								 * the lower bounds (odp_order.h) */
	uint64	   *upper;			/* and of the upper bounds */
	uint8	   *bound_flags;	/* rows * dims ODP_BOUND_* flags, or NULL:
								 * every interval closed, finite and not
								 * empty */
	OdpRegionDim *region_dims;	/* dims entries (dims 0 when a source of
								 * cubes has no rows) */
	struct NumericData **exact_bounds;	/* rows * dims * (lower, upper):
										 * the numeric bounds whose keys
										 * are not yet ranks, or NULL
										 * (OdpRankExactBounds) */
	uint8	   *exact_dims;		/* numeric bounds: dims ODP_EXACT_* flags
								 * (input_internal.h), or NULL */
	bool		exact_kept;		/* and exact_bounds has their values (not
								 * read by parallel workers) */
	bool		exact_long;		/* some numeric bound's key is not exact */
	bool		pieces;			/* a row became several (multiranges):
								 * ids repeat, one per piece */

	int64	   *ids;			/* rows, strictly ascending (unique; with
								 * pieces, ascending, a row's pieces
								 * sharing its id) */
	char	   *source_desc;	/* for messages, e.g. "table \"public\".\"points\""
								 * or "query" */
	bool		heap_scan;		/* read by a direct heap scan */
	int			read_workers;	/* parallel workers that read with the
								 * backend */
	const char *read_order;		/* how the rows came to be in id order:
								 * "scan" (the table's own), "placed" (at
								 * their ids' offsets as read: an index
								 * bounds the ids), "moved" (ranked or
								 * sorted after the read), "cache" */
	bool		aggregate;		/* given row by row to an aggregate (neither
								 * heap scan nor SPI) */
	double		read_ms;		/* wall time of OdpReadInput */

	/*
	 * The table cache (input_cache.c): the input came from an entry
	 * (cached, found valid in cache_check_ms), or was read and is an entry
	 * now (cache_kept).  Either way its arrays are the entry's, shared and
	 * read-only: OdpInputOwnArrays before changing them.
	 */
	bool		cached;
	bool		cache_kept;
	double		cache_check_ms;
	const char *cache_why;		/* neither: why (a constant), or NULL */
} OdpInput;

/*
 * Reads the source into a dense matrix; every problem is an
 * ereport(ERROR).  Allocates in CurrentMemoryContext (huge allocations
 * allowed).  Must run inside a transaction with an active snapshot (any
 * SQL-callable function does).
 */
extern void OdpReadInput(const OdpInputSpec *spec, OdpInput *out);

/*
 * Makes the keys of numeric bounds exact (input_exact.c): where a
 * dimension of either source has numeric bounds whose keys could tie two
 * values, or numeric bounds and bounds of another type, every key of that
 * dimension in both becomes its bound's rank among the bounds of both.
 * b may be NULL (one set) or share a's arrays.  Call before the engine
 * compares a's regions with b's.  Returns false, changing nothing, where
 * a dimension must be ranked but a source read by parallel workers has
 * numeric bounds there without their values: read that source again with
 * spec.serial (OdpExactValuesMissing says which) and call again.
 */
extern bool OdpRankExactBounds(OdpInput *a, OdpInput *b);

/* Whether in lacks values of numeric bounds that ranking with b needs. */
extern bool OdpExactValuesMissing(const OdpInput *in, const OdpInput *other);

/*
 * Resolves spec's source as OdpReadInput would, without reading rows:
 * returns false for a query; else the relation (locked), after the
 * caller's privileges on it and its columns are checked, the names of
 * the id column and of the features (a list of C strings), and whether
 * reading it would give float64 rows (*float64).
 */
extern bool OdpResolveSource(const OdpInputSpec *spec, Oid *relid,
							 char **id_name, List **features, bool *float64);

/*
 * The relation a source names, or InvalidOid for a query, a malformed name
 * or no such relation; takes no lock.  Raises no error of its own; the
 * one RangeVarGetRelid raises for a name qualified with another database
 * ("cross-database references are not implemented") passes through.
 */
extern Oid	OdpSourceRelid(const text *source);

/*
 * Whether features of these types are read as float64 by
 * ODP_VALUES_DISTANCE (the rule above, under odp_gpu.distance_precision):
 * typids are column types, scalars or arrays or pgvector's types
 * (input_columns.c).
 */
extern bool OdpTypesNeedFloat64(const Oid *typids, int n);

/*
 * Gives the input arrays of its own (copies in CurrentMemoryContext) where
 * they are a table cache entry's, so that the caller may change them.
 */
extern void OdpInputOwnArrays(OdpInput *in);

/*
 * Widens float32 rows to float64 in place (data64 replaces data; exact),
 * so that rows of both precisions can be compared; float64 rows are left
 * as they are.
 */
extern void OdpInputWiden(OdpInput *in);

/* The row estimate of the relation a source names, or -1 (input_source.c). */
extern double OdpSourceRowEstimate(const text *source);

/* The same for a relation (a regclass source); -1 for InvalidOid. */
extern double OdpRelationRowEstimate(Oid relid);

/* Whether two specs name the same data (input_source.c). */
extern bool OdpSameSource(const OdpInputSpec *a, const OdpInputSpec *b);

/*
 * A vector given as a value (odp_knn's query) of type typid: an array of
 * a numeric type, a value of pgvector's vector, halfvec or sparsevec
 * (densified; input_pgvector.c), or an untyped literal ('{1,2}'), read as
 * float8[].  Returns its *n values as float8, exactly (numeric: the
 * nearest), and in *nulls NULL or a flag per value, true for a null
 * element (whose value is 0).  Errors: 42804 for another type, 22023 for
 * an empty or multi-dimensional array, 54000 for more than ODP_MAX_DIMS
 * values; what names the argument in them (input_argument.c).
 */
extern double *OdpVectorArgValues(Datum value, Oid typid, const char *what,
								  int32 *n, bool **nulls);

/*
 * Rows given one at a time, as an aggregate receives them: (id bigint,
 * vector) pairs, the vector a numeric array or a pgvector value, checked,
 * sorted and de-duplicated exactly as OdpReadInput does.  See
 * input_aggregate.c for each function's contract.
 */
typedef struct OdpRowAccum OdpRowAccum;

extern OdpRowAccum *OdpRowAccumCreate(MemoryContext cxt, const char *id_name,
									  const char *vector_name, Oid vectype,
									  OdpValueType values);
extern void OdpRowAccumAdd(OdpRowAccum *acc, FunctionCallInfo fcinfo,
						   int id_arg, int vector_arg);
extern int64 OdpRowAccumRows(const OdpRowAccum *acc);
extern void OdpRowAccumFinish(OdpRowAccum *acc, const char *source_desc,
							  OdpInput *out);

#endif							/* ODP_INPUT_H */
