/*-------------------------------------------------------------------------
 *
 * input.c
 *	  Reads a table, view or query into a dense matrix plus ids: float32
 *	  for the distance analytics, float64 (with flags of missing values
 *	  where the caller accepts them) for the correlations.
 *
 * Phases of OdpReadInput:
 *
 * 1. Classify the source.  Text that starts (after white space and opening
 *	  parentheses) with the keyword SELECT, WITH, VALUES or TABLE is a query;
 *	  anything else must parse as a possibly qualified relation name, the
 *	  way regclass parses it.  Text that is neither is rejected before any
 *	  catalog access.
 *
 * 2. Resolve the columns.  For a relation: open it with AccessShareLock
 *	  (held to the end of the transaction), reject unsupported relkinds and
 *	  other sessions' temporary tables, and check SELECT on the table or on
 *	  every column used, before any row is read.  For a query: open it as a
 *	  read-only SPI cursor with the caller's rights and use the cursor's
 *	  result descriptor.  The id column and the features are then matched
 *	  by exact name (see OdpResolveColumns for the defaults).
 *
 * 3. Read the rows.  A plain heap-like table without row-level security in
 *	  effect and without inheritance children is read by a direct table
 *	  scan under the active snapshot, deforming only the attributes used.
 *	  Everything else (views, partitioned and foreign tables, materialized
 *	  views, tables under RLS, queries) goes through an SPI cursor fetched
 *	  in batches, so that a large input never exists twice in memory; for
 *	  relations the query is generated from quote_identifier'd names only.
 *	  Array values are read in place from the (possibly short-header)
 *	  varlena, so that the common case allocates nothing per row; what is
 *	  allocated (detoasted values, numeric conversions) lives in a row
 *	  context that is reset every batch.  Values are checked as they are
 *	  stored: float32 ones must be finite and fit; float64 ones must be
 *	  finite, except that with spec->missing_ok a NULL or NaN value (an
 *	  array element or a scalar column; never a whole vector) is flagged
 *	  missing instead.

 *
 * 4. Finish.  Rows arrive in scan order.  If the ids are not already
 *	  ascending (checked while reading), (id, row) pairs are sorted and the
 *	  matrix is permuted in place by following cycles, so that the sort
 *	  needs no second copy of the matrix.  Duplicate ids are then found by
 *	  comparing neighbours.
 *
 * The output buffers grow geometrically with repalloc_huge and are trimmed
 * at the end; all sizes are computed in Size with overflow checks.
 *
 * Aggregates receive rows one at a time instead of reading a source; the
 * OdpRowAccum functions at the end feed them through the same reader, so
 * that they check values, sort by id and reject duplicates exactly as the
 * table functions do, with the same messages and SQLSTATEs.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "input_internal.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "odp_engine.h"
#include "parser/scansup.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/rel.h"
#include "utils/regproc.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

/* Rows between interrupt checks and row-context resets; SPI fetch size. */
#define ODP_INPUT_BATCH_ROWS	8192

/* Rows the output buffers start with when the size is unknown. */
#define ODP_INPUT_INITIAL_ROWS	1024

/* Largest row count accepted (the macro in odp_engine.h is unparenthesised). */
#define ODP_INPUT_MAX_ROWS		((int64) (ODP_MAX_ROWS))

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

static const char *const odp_numeric_types_hint =
"Name columns of type smallint, integer, bigint, real, double precision or numeric, or one array column of such a type.";

static const char *const odp_bad_value_hint =
"Filter out or replace such rows, for example in a query source.";

/* ---- checks ---- */

/* Ensure the source text names a relation. */
static inline void
OdpEnsureSourceIsName(bool ok, const char *source)
{
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source \"%s\" is neither a table name nor a query",
						source),
				 errhint("Pass a table or view name such as 'public.points', or a query starting with SELECT, WITH, VALUES or TABLE.")));
}

/* Ensure the relation is of a kind that can be read. */
static inline void
OdpEnsureReadableRelkind(Relation rel)
{
	char		relkind = rel->rd_rel->relkind;

	if (relkind != RELKIND_RELATION &&
		relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_VIEW &&
		relkind != RELKIND_MATVIEW &&
		relkind != RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot read rows from relation \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail_relkind_not_supported(relkind),
				 errhint("Name a table, view, materialized view or foreign table, or pass a query.")));
}

/* Ensure the relation is not another session's temporary table. */
static inline void
OdpEnsureNotOtherTemp(Relation rel)
{
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
}

/* Ensure the id column has an integer type. */
static inline void
OdpEnsureIdType(const OdpColumn *col)
{
	if (col->is_array || !col->is_numeric || !OdpIsIntegerKind(col->kind))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("id column \"%s\" has type %s", col->name,
						format_type_be(col->typid)),
				 errhint("Name a column of type smallint, integer or bigint with id_column => '...'.")));
}

/* Ensure a feature column is numeric or an array of a numeric type. */
static inline void
OdpEnsureFeatureNumeric(const OdpColumn *col)
{
	if (!col->is_numeric)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("feature column \"%s\" has type %s, which is not numeric",
						col->name, format_type_be(col->typid)),
				 errhint("%s", odp_numeric_types_hint)));
}

/* Ensure the features argument names at least one column. */
static inline void
OdpEnsureFeaturesNotEmpty(int nnames)
{
	if (nnames == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("features must name at least one column"),
				 errhint("Pass NULL to use the default features.")));
}

/* Ensure the features argument has no null element. */
static inline void
OdpEnsureFeatureNameNotNull(bool isnull)
{
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("features must not contain null elements")));
}

/* Ensure the id column is not also used as a feature. */
static inline void
OdpEnsureNotIdFeature(const OdpColumn *col, const OdpColumn *id)
{
	if (col->pos == id->pos)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("id column \"%s\" cannot be a feature", col->name),
				 errhint("Remove it from features, or name another id column with id_column => '...'.")));
}

/* Ensure a feature column is listed once. */
static inline void
OdpEnsureFeatureOnce(const OdpColumn *cols, int n, const OdpColumn *col)
{
	for (int i = 0; i < n; i++)
		if (cols[i].pos == col->pos)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("feature column \"%s\" is listed more than once",
							col->name)));
}

/* Ensure features is either one array column or only scalar columns. */
static inline void
OdpEnsureNoMixedFeatures(const OdpColumn *col, int nfeatures)
{
	if (col->is_array && nfeatures > 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("features mixes array column \"%s\" with other columns",
						col->name),
				 errhint("Name either one array column or a list of numeric columns.")));
}

/* Ensure the number of dimensions is within the limit max. */
static inline void
OdpEnsureDimsLimit(int64 dims, int32 max)
{
	if (dims > max)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("input has %lld dimensions, more than the maximum of %d",
						(long long) dims, (int) max),
				 errhint("Use fewer features.")));
}

/* Ensure one more row stays within the engine's limit. */
static inline void
OdpEnsureRowLimit(int64 rows, const char *desc)
{
	if (rows >= ODP_INPUT_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("source %s has more than the maximum of %lld rows",
						desc, (long long) ODP_INPUT_MAX_ROWS),
				 errhint("Read a subset of the rows with a query source.")));
}

/* Ensure a row's id is not null. */
static inline void
OdpEnsureIdNotNull(bool isnull, const OdpColumn *col)
{
	if (unlikely(isnull))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("id column \"%s\" contains a null value", col->name),
				 errhint("Give every row an id, or filter out rows with a null id in a query source.")));
}

/* Ensure a feature value is not null. */
void
OdpEnsureValueNotNull(bool isnull, const OdpColumn *col, int64 id)
{
	if (unlikely(isnull))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column \"%s\" is null in the row with id %lld",
						col->name, (long long) id),
				 errhint("%s", odp_bad_value_hint)));
}

/* Ensure an array element is not null (element is 0-based). */
static inline void
OdpEnsureElementNotNull(bool isnull, const OdpColumn *col, int64 id,
						int element)
{
	if (unlikely(isnull))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column \"%s\" has a null element in the row with id %lld",
						col->name, (long long) id),
				 errdetail("Element %d is null.", element + 1),
				 errhint("%s", odp_bad_value_hint)));
}

/* Ensure an array is one-dimensional and not empty. */
static inline void
OdpEnsureVectorShape(int ndim, int nitems, const OdpColumn *col, int64 id)
{
	if (unlikely(ndim == 0 || (ndim == 1 && nitems == 0)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("column \"%s\" has an empty array in the row with id %lld",
						col->name, (long long) id),
				 errhint("Give every vector at least one element.")));
	if (unlikely(ndim != 1))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("column \"%s\" has a %d-dimensional array in the row with id %lld",
						col->name, ndim, (long long) id),
				 errhint("Store each vector as a one-dimensional array.")));
}

/* Ensure a vector has as many elements as the first one read. */
static inline void
OdpEnsureSameLength(int nitems, int32 dims, const OdpColumn *col, int64 id)
{
	if (unlikely(nitems != dims))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("vectors have different lengths"),
				 errdetail("Column \"%s\" has %d elements in the row with id %lld, but %d in the first row read.",
						   col->name, nitems, (long long) id, (int) dims),
				 errhint("Give every vector the same number of elements.")));
}

/*
 * Ensure a value is finite.  element is the 0-based array element, or -1
 * for a scalar column.
 */
static inline void
OdpEnsureFinite(double value, const OdpColumn *col, int64 id, int element)
{
	if (unlikely(isnan(value) || isinf(value)))
	{
		const char *what = isnan(value) ? "NaN" :
			(value > 0 ? "Infinity" : "-Infinity");

		if (element >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("column \"%s\" has a non-finite value in the row with id %lld",
							col->name, (long long) id),
					 errdetail("Element %d is %s.", element + 1, what),
					 errhint("%s", odp_bad_value_hint)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("column \"%s\" has a non-finite value in the row with id %lld",
							col->name, (long long) id),
					 errdetail("The value is %s.", what),
					 errhint("%s", odp_bad_value_hint)));
	}
}

/* Ensure a finite double fits in float32 (element as for OdpEnsureFinite). */
static inline void
OdpEnsureFloat4Range(double value, const OdpColumn *col, int64 id, int element)
{
	if (unlikely(fabs(value) > FLT_MAX))
	{
		if (element >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("column \"%s\" has a value out of range for type real in the row with id %lld",
							col->name, (long long) id),
					 errdetail("Element %d is %g.", element + 1, value),
					 errhint("Scale the values into the range of type real (about 3.4e38).")));
		else
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("column \"%s\" has a value out of range for type real in the row with id %lld",
							col->name, (long long) id),
					 errdetail("The value is %g.", value),
					 errhint("Scale the values into the range of type real (about 3.4e38).")));
	}
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

/* ---- source classification ---- */

/* Returns whether c can continue an SQL keyword or unquoted identifier. */
static inline bool
OdpIsIdentChar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '_' || c == '$' || IS_HIGHBIT_SET(c);
}

/*
 * Returns whether source is a query: after white space and opening
 * parentheses it starts with SELECT, WITH, VALUES or TABLE as a word.
 */
static bool
OdpSourceIsQuery(const char *source)
{
	static const char *const keywords[] = {"select", "with", "values", "table"};
	const char *p = source;

	while (*p != '\0' && (scanner_isspace(*p) || *p == '('))
		p++;
	for (int i = 0; i < lengthof(keywords); i++)
	{
		size_t		len = strlen(keywords[i]);

		if (pg_strncasecmp(p, keywords[i], len) == 0 &&
			!OdpIsIdentChar(p[len]))
			return true;
	}
	return false;
}

/*
 * Parses source as a possibly qualified relation name, as regclass does;
 * raises 22023 if it is not one.  Returns the list of name parts.
 */
static List *
OdpSourceNameList(const char *source)
{
	char	   *raw = pstrdup(source);
	List	   *parts = NIL;
	bool		ok;

	ok = SplitIdentifierString(raw, '.', &parts) && parts != NIL;
	OdpEnsureSourceIsName(ok, source);
	return stringToQualifiedNameList(source);
}

/* See input.h. */
Oid
OdpSourceRelid(const text *source)
{
	char	   *raw = text_to_cstring(source);
	List	   *parts = NIL;
	List	   *names = NIL;
	ListCell   *lc;

	if (OdpSourceIsQuery(raw) || !SplitIdentifierString(raw, '.', &parts) ||
		list_length(parts) < 1 || list_length(parts) > 3)
		return InvalidOid;
	foreach(lc, parts)
		names = lappend(names, makeString((char *) lfirst(lc)));
	return RangeVarGetRelid(makeRangeVarFromNameList(names), NoLock, true);
}

/*
 * The planner's row estimate of the relation source names (pg_class's
 * reltuples), or -1 when source is a query, names nothing, names a
 * relation never analysed, or is not a name at all.  Never raises an
 * error: the planner calls it while estimating.
 */
double
OdpSourceRowEstimate(const text *source)
{
	Oid			relid = OdpSourceRelid(source);
	HeapTuple	tuple;
	double		rows = -1;

	if (!OidIsValid(relid))
		return -1;
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_class rel = (Form_pg_class) GETSTRUCT(tuple);

		if (rel->reltuples >= 0 && rel->relkind != RELKIND_VIEW)
			rows = rel->reltuples;
		ReleaseSysCache(tuple);
	}
	return rows;
}

/* Whether two optional text arguments are both absent or equal. */
static bool
OdpSameText(const text *a, const text *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/*
 * Whether two specs name the same data: the same options, and the same
 * source text or two names of the same relation.  Names that do not
 * resolve are not the same (reading them reports the error).
 */
bool
OdpSameSource(const OdpInputSpec *a, const OdpInputSpec *b)
{
	char	   *sa;
	char	   *sb;
	Oid			ra;
	Oid			rb;

	if (!OdpSameText(a->id_column, b->id_column) || a->values != b->values ||
		a->pair_flags != b->pair_flags)
		return false;
	if ((a->features == NULL) != (b->features == NULL) ||
		(a->features != NULL &&
		 (VARSIZE(a->features) != VARSIZE(b->features) ||
		  memcmp(a->features, b->features, VARSIZE(a->features)) != 0)))
		return false;
	if (OdpSameText(a->source, b->source))
		return true;
	sa = text_to_cstring(a->source);
	sb = text_to_cstring(b->source);
	if (OdpSourceIsQuery(sa) || OdpSourceIsQuery(sb))
		return false;
	ra = RangeVarGetRelid(makeRangeVarFromNameList(OdpSourceNameList(sa)), NoLock, true);
	rb = RangeVarGetRelid(makeRangeVarFromNameList(OdpSourceNameList(sb)), NoLock, true);
	return OidIsValid(ra) && ra == rb;
}

/* Returns e.g. "table \"public\".\"points\"", for messages. */
static char *
OdpRelationDesc(Relation rel)
{
	const char *kind;

	switch (rel->rd_rel->relkind)
	{
		case RELKIND_PARTITIONED_TABLE:
			kind = "partitioned table";
			break;
		case RELKIND_VIEW:
			kind = "view";
			break;
		case RELKIND_MATVIEW:
			kind = "materialized view";
			break;
		case RELKIND_FOREIGN_TABLE:
			kind = "foreign table";
			break;
		default:
			kind = "table";
			break;
	}
	return psprintf("%s \"%s\".\"%s\"", kind,
					get_namespace_name(RelationGetNamespace(rel)),
					RelationGetRelationName(rel));
}

/* ---- column resolution ---- */

/* Classifies a type; returns false if it is not one of the numeric types. */
bool
OdpValueKindOf(Oid typid, OdpValueKind *kind)
{
	switch (getBaseType(typid))
	{
		case INT2OID:
			*kind = ODP_VALUE_INT2;
			return true;
		case INT4OID:
			*kind = ODP_VALUE_INT4;
			return true;
		case INT8OID:
			*kind = ODP_VALUE_INT8;
			return true;
		case FLOAT4OID:
			*kind = ODP_VALUE_FLOAT4;
			return true;
		case FLOAT8OID:
			*kind = ODP_VALUE_FLOAT8;
			return true;
		case NUMERICOID:
			*kind = ODP_VALUE_NUMERIC;
			return true;
		default:
			return false;
	}
}

/*
 * Describes the columns of tupdesc, skipping dropped ones.  For a relation
 * (is_relation) positions are attribute numbers; for a query, positions in
 * the result.  Returns the count in *ncols.
 */
static OdpColumn *
OdpDescribeColumns(TupleDesc tupdesc, bool is_relation, int *ncols)
{
	OdpColumn  *cols = palloc0(sizeof(OdpColumn) * Max(tupdesc->natts, 1));
	int			n = 0;

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		OdpColumn  *col = &cols[n];
		Oid			elemtype;

		if (att->attisdropped)
			continue;
		col->name = pstrdup(NameStr(att->attname));
		col->pos = i + 1;
		col->attnum = is_relation ? att->attnum : InvalidAttrNumber;
		col->typid = att->atttypid;
		elemtype = get_element_type(getBaseType(att->atttypid));
		col->is_array = OidIsValid(elemtype);
		if (col->is_array)
			col->is_numeric = OdpValueKindOf(elemtype, &col->kind);
		else
			col->is_numeric = OdpValueKindOf(att->atttypid, &col->kind);
		n++;
	}
	*ncols = n;
	return cols;
}

/*
 * Finds the column called name (exact match).  what ("id column", "feature
 * column") and desc word the errors: 42703 when there is none, 42702 when a
 * query has several.  Returns NULL instead of raising 42703 if missing_ok.
 */
const OdpColumn *
OdpFindColumn(const OdpColumn *cols, int ncols, const char *name,
			  const char *what, const char *desc, bool missing_ok)
{
	const OdpColumn *found = NULL;
	const char *near = NULL;

	for (int i = 0; i < ncols; i++)
	{
		if (strcmp(cols[i].name, name) == 0)
		{
			if (found != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_AMBIGUOUS_COLUMN),
						 errmsg("%s \"%s\" is ambiguous in %s", what, name, desc),
						 errhint("Give the columns distinct names with AS.")));
			found = &cols[i];
		}
		else if (near == NULL && pg_strcasecmp(cols[i].name, name) == 0)
			near = cols[i].name;
	}
	if (found == NULL && !missing_ok)
	{
		if (near != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("%s \"%s\" does not exist in %s", what, name, desc),
					 errhint("Column names are matched exactly, without quoting; perhaps you meant \"%s\".",
							 near)));
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("%s \"%s\" does not exist in %s", what, name, desc)));
	}
	return found;
}

/*
 * Picks the default id column: the single-column integer primary key
 * (pk_attnum, InvalidAttrNumber if none), else an integer column named
 * "id"; raises 42703 otherwise.  is_relation words the error.
 */
static const OdpColumn *
OdpDefaultIdColumn(const OdpColumn *cols, int ncols, AttrNumber pk_attnum,
				   bool is_relation, const char *desc)
{
	const OdpColumn *col;

	if (pk_attnum != InvalidAttrNumber)
	{
		for (int i = 0; i < ncols; i++)
			if (cols[i].attnum == pk_attnum && cols[i].is_numeric &&
				!cols[i].is_array && OdpIsIntegerKind(cols[i].kind))
				return &cols[i];
	}

	col = OdpFindColumn(cols, ncols, "id", "id column", desc, true);
	if (col != NULL && !col->is_array && col->is_numeric &&
		OdpIsIntegerKind(col->kind))
		return col;

	if (col != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("%s has no integer id column", desc),
				 is_relation ?
				 errdetail("Column \"id\" has type %s, and there is no single-column integer primary key.",
						   format_type_be(col->typid)) :
				 errdetail("Column \"id\" has type %s.",
						   format_type_be(col->typid)),
				 errhint("Name the id column with id_column => '...'.")));
	if (is_relation)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("%s has no integer id column", desc),
				 errdetail("There is no single-column integer primary key and no column named \"id\"."),
				 errhint("Name the id column with id_column => '...'.")));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("%s has no integer id column", desc),
			 errdetail("The query has no column named \"id\"."),
			 errhint("Name the id column with id_column => '...', or add one to the query with AS id.")));
	return NULL;				/* keep compiler quiet */
}

/*
 * Resolves the id column and the features of the source whose columns are
 * cols (of a relation if is_relation, else of a query).  Defaults: id is the single-column integer primary key, else an
 * integer column "id"; features is the only numeric array column, else
 * every numeric column except the id.  Fills *plan.
 */
static void
OdpResolveColumns(const OdpColumn *cols, int ncols, bool is_relation,
				  AttrNumber pk_attnum, const OdpInputSpec *spec,
				  const char *desc, OdpColumnPlan *plan)
{
	const OdpColumn *id;

	memset(plan, 0, sizeof(*plan));

	/* the id column */
	if (spec->id_column != NULL)
	{
		id = OdpFindColumn(cols, ncols, text_to_cstring(spec->id_column),
						   "id column", desc, false);
		OdpEnsureIdType(id);
	}
	else
		id = OdpDefaultIdColumn(cols, ncols, pk_attnum, is_relation, desc);
	plan->id = *id;
	plan->maxpos = id->pos;

	if (spec->values == ODP_VALUES_REGIONS)
	{
		OdpResolveRegionColumns(cols, ncols, id, spec, desc, plan);
		for (int i = 0; i < plan->nfeatures; i++)
			plan->maxpos = Max(plan->maxpos, plan->features[i].pos);
		return;
	}

	if (spec->features != NULL)
	{
		Datum	   *names;
		bool	   *nulls;
		int			nnames;

		if (ARR_ELEMTYPE(spec->features) != TEXTOID)
			elog(ERROR, "features must be of type text[]");
		deconstruct_array(spec->features, TEXTOID, -1, false, TYPALIGN_INT,
						  &names, &nulls, &nnames);
		OdpEnsureFeaturesNotEmpty(nnames);
		plan->features = palloc0(sizeof(OdpColumn) * nnames);
		for (int i = 0; i < nnames; i++)
		{
			const OdpColumn *col;

			OdpEnsureFeatureNameNotNull(nulls[i]);
			col = OdpFindColumn(cols, ncols, TextDatumGetCString(names[i]),
								"feature column", desc, false);
			OdpEnsureNotIdFeature(col, id);
			OdpEnsureFeatureOnce(plan->features, i, col);
			OdpEnsureFeatureNumeric(col);
			OdpEnsureNoMixedFeatures(col, nnames);
			plan->features[i] = *col;
		}
		plan->nfeatures = nnames;
		plan->vector = plan->features[0].is_array;
	}
	else
	{
		int			narrays = 0;
		int			nscalars = 0;
		const OdpColumn *array = NULL;

		for (int i = 0; i < ncols; i++)
		{
			if (!cols[i].is_numeric || cols[i].pos == id->pos)
				continue;
			if (cols[i].is_array)
			{
				narrays++;
				if (array == NULL)
					array = &cols[i];
			}
			else
				nscalars++;
		}
		if (narrays > 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has %d numeric array columns", desc, narrays),
					 errhint("Name the vector column with features => '{%s}'.",
							 array->name)));
		if (narrays == 0 && nscalars == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has no numeric feature columns", desc),
					 errhint("%s", odp_numeric_types_hint)));

		if (narrays == 1)
		{
			plan->features = palloc(sizeof(OdpColumn));
			plan->features[0] = *array;
			plan->nfeatures = 1;
			plan->vector = true;
		}
		else
		{
			plan->features = palloc(sizeof(OdpColumn) * nscalars);
			for (int i = 0; i < ncols; i++)
				if (cols[i].is_numeric && !cols[i].is_array &&
					cols[i].pos != id->pos)
					plan->features[plan->nfeatures++] = cols[i];
		}
	}

	if (!plan->vector)
		OdpEnsureDimsLimit(plan->nfeatures,
						   spec->max_dims > 0 ? spec->max_dims : ODP_MAX_DIMS);
	for (int i = 0; i < plan->nfeatures; i++)
		plan->maxpos = Max(plan->maxpos, plan->features[i].pos);
}

/*
 * Returns the attnum of rel's primary key if it has exactly one column,
 * else InvalidAttrNumber.
 */
static AttrNumber
OdpPrimaryKeyColumn(Relation rel)
{
	Oid			pkoid = RelationGetPrimaryKeyIndex(rel);
	AttrNumber	attnum = InvalidAttrNumber;
	HeapTuple	tuple;

	if (!OidIsValid(pkoid))
		return InvalidAttrNumber;
	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(pkoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for index %u", pkoid);
	{
		Form_pg_index index = (Form_pg_index) GETSTRUCT(tuple);

		if (index->indnkeyatts == 1)
			attnum = index->indkey.values[0];
	}
	ReleaseSysCache(tuple);
	return attnum;
}

/*
 * Raises the usual permission error unless the user may SELECT from rel
 * at all (on the table or on some column).  Call before resolving columns.
 */
static void
OdpCheckAnyPrivilege(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			userid = GetUserId();

	if (pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK)
		return;
	if (pg_attribute_aclcheck_all(relid, userid, ACL_SELECT,
								  ACLMASK_ANY) == ACLCHECK_OK)
		return;
	aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(rel->rd_rel->relkind),
				   RelationGetRelationName(rel));
}

/*
 * Raises the usual permission error unless the user may SELECT the table,
 * or every column plan uses.  Call before reading.
 */
static void
OdpCheckColumnPrivileges(Relation rel, const OdpColumnPlan *plan)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			userid = GetUserId();
	ObjectType	objtype = get_relkind_objtype(rel->rd_rel->relkind);

	if (pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK)
		return;
	for (int i = -1; i < plan->nfeatures; i++)
	{
		const OdpColumn *col = i < 0 ? &plan->id : &plan->features[i];
		AclResult	result;

		result = pg_attribute_aclcheck(relid, col->attnum, userid, ACL_SELECT);
		if (result != ACLCHECK_OK)
			aclcheck_error_col(result, objtype, RelationGetRelationName(rel),
							   col->name);
	}
}

/* ---- reading values ---- */

/* Converts a numeric Datum to double (NaN and infinities pass through). */
static double
OdpNumericToDouble(Datum value)
{
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8, value));
}

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

/* Returns a scalar feature value as float, checked finite and in range. */
static inline float
OdpScalarValue(const OdpColumn *col, Datum value, int64 id)
{
	double		d;

	switch (col->kind)
	{
		case ODP_VALUE_INT2:
			return (float) DatumGetInt16(value);
		case ODP_VALUE_INT4:
			return (float) DatumGetInt32(value);
		case ODP_VALUE_INT8:
			return (float) DatumGetInt64(value);
		case ODP_VALUE_FLOAT4:
			{
				float		f = DatumGetFloat4(value);

				OdpEnsureFinite(f, col, id, -1);
				return f;
			}
		case ODP_VALUE_FLOAT8:
			d = DatumGetFloat8(value);
			break;
		case ODP_VALUE_NUMERIC:
			d = OdpNumericToDouble(value);
			break;
		default:
			elog(ERROR, "feature column of unexpected kind %d", (int) col->kind);
			return 0;			/* keep compiler quiet */
	}
	OdpEnsureFinite(d, col, id, -1);
	OdpEnsureFloat4Range(d, col, id, -1);
	return (float) d;
}

/* Returns whether all n floats are finite (no NaN, no infinity). */
static inline bool
OdpAllFinite(const float *v, int n)
{
	uint32		bad = 0;

	for (int i = 0; i < n; i++)
	{
		uint32		bits;

		memcpy(&bits, &v[i], sizeof(bits));
		bad |= (uint32) ((bits & 0x7f800000) == 0x7f800000);
	}
	return bad == 0;
}

/*
 * Copies n contiguous elements of the given kind from src (possibly
 * unaligned) to dst as floats, checking each value.
 */
static void
OdpCopyElements(const OdpColumn *col, const char *src, int n, float *dst,
				int64 id)
{
	switch (col->kind)
	{
		case ODP_VALUE_FLOAT4:
			memcpy(dst, src, sizeof(float) * n);
			if (unlikely(!OdpAllFinite(dst, n)))
			{
				for (int i = 0; i < n; i++)
					OdpEnsureFinite(dst[i], col, id, i);
			}
			break;
		case ODP_VALUE_FLOAT8:
			for (int i = 0; i < n; i++)
			{
				double		d;

				memcpy(&d, src + sizeof(double) * i, sizeof(double));
				OdpEnsureFinite(d, col, id, i);
				OdpEnsureFloat4Range(d, col, id, i);
				dst[i] = (float) d;
			}
			break;
		case ODP_VALUE_INT2:
			for (int i = 0; i < n; i++)
			{
				int16		v;

				memcpy(&v, src + sizeof(int16) * i, sizeof(int16));
				dst[i] = (float) v;
			}
			break;
		case ODP_VALUE_INT4:
			for (int i = 0; i < n; i++)
			{
				int32		v;

				memcpy(&v, src + sizeof(int32) * i, sizeof(int32));
				dst[i] = (float) v;
			}
			break;
		case ODP_VALUE_INT8:
			for (int i = 0; i < n; i++)
			{
				int64		v;

				memcpy(&v, src + sizeof(int64) * i, sizeof(int64));
				dst[i] = (float) v;
			}
			break;
		default:
			elog(ERROR, "array column of unexpected kind %d", (int) col->kind);
	}
}

/* Returns the size in bytes of one element of a fixed-width kind. */
static inline Size
OdpElementSize(OdpValueKind kind)
{
	switch (kind)
	{
		case ODP_VALUE_INT2:
			return sizeof(int16);
		case ODP_VALUE_INT4:
		case ODP_VALUE_FLOAT4:
			return sizeof(int32);
		case ODP_VALUE_INT8:
		case ODP_VALUE_FLOAT8:
			return sizeof(int64);
		default:
			return 0;
	}
}

/* ---- accumulating rows ---- */

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

/* Allocates or reallocates buf (in cxt) to size bytes, huge allowed. */
static void *
OdpResize(MemoryContext cxt, void *buf, Size size)
{
	if (size == 0)
		size = 1;
	if (buf == NULL)
		buf = MemoryContextAllocHuge(cxt, size);
	else
		buf = repalloc_huge(buf, size);
	OdpAdviseHugePages(buf, size);
	return buf;
}

/*
 * Sizes the value buffers (data or data64, and missing; or the bounds of
 * regions) for capacity rows.
 */
static void
OdpReaderResizeValues(OdpReader *r, int64 capacity)
{
	Size		values = OdpMulSize(capacity, r->dims);

	if (r->plan->regions)
	{
		r->lower = OdpResize(r->outcxt, r->lower, OdpMulSize(values, sizeof(uint64)));
		r->upper = OdpResize(r->outcxt, r->upper, OdpMulSize(values, sizeof(uint64)));
		r->bflags = OdpResize(r->outcxt, r->bflags, values);
		return;
	}
	if (r->f64)
		r->data64 = OdpResize(r->outcxt, r->data64, OdpMulSize(values, sizeof(double)));
	else
		r->data = OdpResize(r->outcxt, r->data, OdpMulSize(values, sizeof(float)));
	if (r->missing_ok)
		r->missing = OdpResize(r->outcxt, r->missing, values);
}

/* Sets the row capacity of the reader's buffers (values only once dims is known). */
static void
OdpReaderReserve(OdpReader *r, int64 capacity)
{
	r->ids = OdpResize(r->outcxt, r->ids, OdpMulSize(capacity, sizeof(int64)));
	if (r->dims >= 0)
		OdpReaderResizeValues(r, capacity);
	r->capacity = capacity;
}

/* Makes room for one more row, growing the buffers geometrically. */
static void
OdpReaderGrow(OdpReader *r)
{
	int64		capacity;

	OdpEnsureRowLimit(r->rows, r->desc);
	capacity = Min(Max(r->capacity * 2, ODP_INPUT_INITIAL_ROWS),
				   ODP_INPUT_MAX_ROWS);
	OdpReaderReserve(r, capacity);
}

/* Sets the number of dimensions from the first vector and allocates data. */
void
OdpReaderSetDims(OdpReader *r, int32 dims)
{
	Assert(r->dims < 0 && r->data == NULL && r->data64 == NULL && r->lower == NULL);
	OdpEnsureDimsLimit(dims, r->max_dims);
	r->dims = dims;
	OdpReaderResizeValues(r, r->capacity);
}

/*
 * Stores value d of a row's element i (col and element name it in errors,
 * element -1 for a scalar column) into the float64 row dst (and its
 * missing flags miss, when the reader has them): NaN is a missing value
 * where the reader accepts them; infinities are always errors.
 */
static inline void
OdpStore64(OdpReader *r, double *dst, uint8 *miss, int i, double d,
		   const OdpColumn *col, int64 id, int element)
{
	if (unlikely(isnan(d)) && r->missing_ok)
	{
		dst[i] = 0.0;
		miss[i] = 1;
		r->any_missing = true;
		return;
	}
	OdpEnsureFinite(d, col, id, element);
	dst[i] = d;
	if (miss != NULL)
		miss[i] = 0;
}

/* Marks element i of a row missing, or raises the null-element error. */
static inline void
OdpStoreNull64(OdpReader *r, double *dst, uint8 *miss, int i,
			   const OdpColumn *col, int64 id, int element)
{
	if (!r->missing_ok)
	{
		if (element >= 0)
			OdpEnsureElementNotNull(true, col, id, element);
		OdpEnsureValueNotNull(true, col, id);
	}
	dst[i] = 0.0;
	miss[i] = 1;
	r->any_missing = true;
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

/* Returns whether all n doubles are finite (no NaN, no infinity). */
static inline bool
OdpAllFinite64(const double *v, int n)
{
	uint64		bad = 0;

	for (int i = 0; i < n; i++)
	{
		uint64		bits;

		memcpy(&bits, &v[i], sizeof(bits));
		bad |= (uint64) ((bits & UINT64CONST(0x7ff0000000000000)) ==
						 UINT64CONST(0x7ff0000000000000));
	}
	return bad == 0;
}

/*
 * Copies the n elements of a fixed-width array body at src (possibly
 * unaligned; with a null bitmap, or NULL, where only the non-null
 * elements are stored, one after the other) into the float64 row dst and
 * its flags miss, checking each value.  float8 arrays without nulls, the
 * common case, are copied whole and checked in one pass.
 */
static void
OdpCopyElements64(OdpReader *r, const OdpColumn *col, const char *src, int n,
				  const bits8 *bitmap, double *dst, uint8 *miss, int64 id)
{
	Size		elsize = OdpElementSize(col->kind);

	if (col->kind == ODP_VALUE_FLOAT8 && bitmap == NULL)
	{
		memcpy(dst, src, sizeof(double) * n);
		if (miss != NULL)
			memset(miss, 0, n);
		if (likely(OdpAllFinite64(dst, n)))
			return;
	}
	for (int i = 0; i < n; i++)
	{
		double		d;

		if (bitmap != NULL && (bitmap[i / 8] & (1 << (i % 8))) == 0)
		{
			OdpStoreNull64(r, dst, miss, i, col, id, i);
			continue;
		}
		switch (col->kind)
		{
			case ODP_VALUE_INT2:
				{
					int16		v;

					memcpy(&v, src, sizeof(v));
					d = (double) v;
					break;
				}
			case ODP_VALUE_INT4:
				{
					int32		v;

					memcpy(&v, src, sizeof(v));
					d = (double) v;
					break;
				}
			case ODP_VALUE_INT8:
				{
					int64		v;

					memcpy(&v, src, sizeof(v));
					d = (double) v;
					break;
				}
			case ODP_VALUE_FLOAT4:
				{
					float		v;

					memcpy(&v, src, sizeof(v));
					d = (double) v;
					break;
				}
			case ODP_VALUE_FLOAT8:
				memcpy(&d, src, sizeof(d));
				break;
			default:
				elog(ERROR, "array column of unexpected kind %d", (int) col->kind);
				return;
		}
		src += elsize;
		OdpStore64(r, dst, miss, i, d, col, id, i);
	}
}


/*
 * Reads an array value into the next row of data (or data64).  Fixed-width
 * element types are read in place from the packed (possibly short-header)
 * varlena, whose body has the ArrayType layout shifted by VARHDRSZ;
 * numeric arrays are deconstructed.  A null element is an error unless
 * the reader takes missing values (float64 only).
 */
static void
OdpReadVector(OdpReader *r, const OdpColumn *col, Datum value, int64 id)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(value);
	struct varlena *v = pg_detoast_datum_packed(raw);
	const char *body = VARDATA_ANY(v);
	Size		bodylen = VARSIZE_ANY_EXHDR(v);
	int32		ndim;
	int32		dataoffset;
	int32		nitems = 0;
	Size		elsize = OdpElementSize(col->kind);
	Size		at;
	float	   *dst = NULL;
	double	   *dst64 = NULL;
	uint8	   *miss = NULL;

	/* body: ndim, dataoffset, elemtype, dims[ndim], lbound[ndim], ... */
	if (bodylen < 3 * sizeof(int32))
		elog(ERROR, "corrupt array in column \"%s\"", col->name);
	memcpy(&ndim, body, sizeof(int32));
	memcpy(&dataoffset, body + sizeof(int32), sizeof(int32));
	if (ndim > 0)
	{
		if (bodylen < (3 + 2 * (Size) ndim) * sizeof(int32))
			elog(ERROR, "corrupt array in column \"%s\"", col->name);
		memcpy(&nitems, body + 3 * sizeof(int32), sizeof(int32));
	}
	OdpEnsureVectorShape(ndim, nitems, col, id);

	if (r->dims < 0)
		OdpReaderSetDims(r, nitems);
	OdpEnsureSameLength(nitems, r->dims, col, id);
	at = (Size) r->rows * (Size) r->dims;
	if (r->f64)
	{
		dst64 = r->data64 + at;
		miss = r->missing ? r->missing + at : NULL;
	}
	else
		dst = r->data + at;

	if (elsize == 0)
	{
		/* numeric elements: the general, allocating path */
		ArrayType  *array = DatumGetArrayTypeP(PointerGetDatum(v));
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(array, NUMERICOID, -1, false, TYPALIGN_INT,
						  &elems, &nulls, &n);
		Assert(n == nitems);
		for (int i = 0; i < n; i++)
		{
			double		d;

			if (r->f64)
			{
				if (nulls[i])
					OdpStoreNull64(r, dst64, miss, i, col, id, i);
				else
					OdpStore64(r, dst64, miss, i, OdpNumericToDouble(elems[i]),
							   col, id, i);
				continue;
			}
			OdpEnsureElementNotNull(nulls[i], col, id, i);
			d = OdpNumericToDouble(elems[i]);
			OdpEnsureFinite(d, col, id, i);
			OdpEnsureFloat4Range(d, col, id, i);
			dst[i] = (float) d;
		}
	}
	else
	{
		const bits8 *bitmap = NULL;
		Size		offset;
		Size		stored = (Size) nitems;

		if (dataoffset != 0)
		{
			/* a null bitmap follows lbound: a clear bit is a null element */
			bitmap = (const bits8 *) body + (3 + 2 * (Size) ndim) * sizeof(int32);
			if (bodylen < (3 + 2 * (Size) ndim) * sizeof(int32) +
				((Size) nitems + 7) / 8)
				elog(ERROR, "corrupt array in column \"%s\"", col->name);
			for (int i = 0; i < nitems; i++)
			{
				bool		isnull = (bitmap[i / 8] & (1 << (i % 8))) == 0;

				if (!r->missing_ok)
					OdpEnsureElementNotNull(isnull, col, id, i);
				stored -= isnull ? 1 : 0;
			}
			offset = (Size) dataoffset - VARHDRSZ;
		}
		else
			offset = ARR_OVERHEAD_NONULLS(ndim) - VARHDRSZ;
		/* only the non-null elements are stored */
		if (offset + elsize * stored > bodylen)
			elog(ERROR, "corrupt array in column \"%s\"", col->name);
		if (r->f64)
			OdpCopyElements64(r, col, body + offset, nitems, bitmap, dst64, miss, id);
		else
			OdpCopyElements(col, body + offset, nitems, dst, id);
	}

	/* toasted or compressed values were copied; free them now */
	if (v != raw)
		pfree(v);
}

/*
 * Appends one row.  values and isnull are indexed by column position - 1
 * and must cover plan->maxpos.  Call in the reader's row context.
 */
static void
OdpReaderAddRow(OdpReader *r, const Datum *values, const bool *isnull)
{
	const OdpColumnPlan *plan = r->plan;
	int			idx = plan->id.pos - 1;
	int64		id;

	OdpEnsureIdNotNull(isnull[idx], &plan->id);
	id = OdpIdValue(&plan->id, values[idx]);

	if (unlikely(r->rows >= r->capacity))
		OdpReaderGrow(r);

	if (plan->regions)
		OdpRegionsAddRow(r, values, isnull, id);
	else if (plan->vector)
	{
		const OdpColumn *col = &plan->features[0];

		idx = col->pos - 1;
		OdpEnsureValueNotNull(isnull[idx], col, id);
		OdpReadVector(r, col, values[idx], id);
	}
	else if (r->f64)
	{
		const Size	at = (Size) r->rows * (Size) r->dims;
		double	   *dst = r->data64 + at;
		uint8	   *miss = r->missing ? r->missing + at : NULL;

		for (int i = 0; i < plan->nfeatures; i++)
		{
			const OdpColumn *col = &plan->features[i];

			idx = col->pos - 1;
			if (isnull[idx])
				OdpStoreNull64(r, dst, miss, i, col, id, -1);
			else
				OdpStore64(r, dst, miss, i, OdpDoubleValue(col->kind, values[idx]),
						   col, id, -1);
		}
	}
	else
	{
		float	   *dst = r->data + (Size) r->rows * (Size) r->dims;

		for (int i = 0; i < plan->nfeatures; i++)
		{
			const OdpColumn *col = &plan->features[i];

			idx = col->pos - 1;
			OdpEnsureValueNotNull(isnull[idx], col, id);
			dst[i] = OdpScalarValue(col, values[idx], id);
		}
	}

	if (r->rows > 0 && id < r->ids[r->rows - 1])
		r->sorted = false;
	r->ids[r->rows++] = id;
}

/* One array of the reader's with a fixed number of bytes per row. */
typedef struct OdpRowArray
{
	char	   *base;
	Size		rowbytes;
	char	   *scratch;
} OdpRowArray;

/*
 * Orders the rows by ascending id: sorts (id, row) pairs, then permutes
 * every per-row array in place by following the permutation's cycles
 * (each row moves once, through one row of scratch space per array).
 */
static void
OdpReaderSortRows(OdpReader *r)
{
	int64		n = r->rows;
	OdpRowArray arrays[4];
	int			narrays = 0;
	OdpIdRow   *pairs;
	int64		moved = 0;
	Size		dims = (Size) Max(r->dims, 0);

	if (r->plan->regions)
	{
		arrays[narrays++] = (OdpRowArray) {(char *) r->lower, sizeof(uint64) * dims, NULL};
		arrays[narrays++] = (OdpRowArray) {(char *) r->upper, sizeof(uint64) * dims, NULL};
		arrays[narrays++] = (OdpRowArray) {(char *) r->bflags, dims, NULL};
	}
	else if (r->f64)
		arrays[narrays++] = (OdpRowArray) {(char *) r->data64, sizeof(double) * dims, NULL};
	else
		arrays[narrays++] = (OdpRowArray) {(char *) r->data, sizeof(float) * dims, NULL};
	if (r->missing != NULL)
		arrays[narrays++] = (OdpRowArray) {(char *) r->missing, dims, NULL};
	for (int a = 0; a < narrays; a++)
		arrays[a].scratch = palloc(Max(arrays[a].rowbytes, 1));

	pairs = MemoryContextAllocHuge(CurrentMemoryContext,
								   OdpMulSize(n, sizeof(OdpIdRow)));
	for (int64 i = 0; i < n; i++)
	{
		pairs[i].id = r->ids[i];
		pairs[i].row = i;
	}
	OdpSortIdRows(pairs, n);

	for (int64 i = 0; i < n; i++)
		r->ids[i] = pairs[i].id;

	/* pairs[j].row is the row that goes to position j */
	for (int64 i = 0; i < n; i++)
	{
		int64		j = i;

		if (pairs[i].row == i)
			continue;
		for (int a = 0; a < narrays; a++)
			memcpy(arrays[a].scratch, arrays[a].base + arrays[a].rowbytes * i,
				   arrays[a].rowbytes);
		for (;;)
		{
			int64		k = pairs[j].row;

			/* one cycle can span every row: let the user cancel */
			if ((++moved & (ODP_INPUT_BATCH_ROWS - 1)) == 0)
				CHECK_FOR_INTERRUPTS();
			pairs[j].row = j;
			for (int a = 0; a < narrays; a++)
				memcpy(arrays[a].base + arrays[a].rowbytes * j,
					   k == i ? arrays[a].scratch : arrays[a].base + arrays[a].rowbytes * k,
					   arrays[a].rowbytes);
			if (k == i)
				break;
			j = k;
		}
	}
	pfree(pairs);
	for (int a = 0; a < narrays; a++)
		pfree(arrays[a].scratch);
}

/*
 * Finishes reading: checks there are rows, sorts them by id if needed,
 * rejects duplicate ids and trims the buffers.
 */
static void
OdpReaderFinish(OdpReader *r)
{
	if (!r->empty_ok)
		OdpEnsureHasRows(r->rows, r->desc);
	Assert(r->dims > 0 || r->rows == 0);

	if (!r->sorted)
		OdpReaderSortRows(r);
	r->sorted = true;
	for (int64 i = 1; i < r->rows; i++)
		OdpEnsureIdsDiffer(r->ids[i - 1], r->ids[i], &r->plan->id);

	if (r->capacity > r->rows)
		OdpReaderReserve(r, r->rows);
	/* no value was missing: the caller gets complete data */
	if (r->missing && !r->any_missing)
	{
		pfree(r->missing);
		r->missing = NULL;
	}
	/* no interval was open, infinite or empty: the engine's fast case */
	if (r->bflags && !r->any_bflag)
	{
		pfree(r->bflags);
		r->bflags = NULL;
	}
	/* a source of cubes without rows has no dimensions */
	if (r->dims < 0)
		r->dims = 0;
}

/*
 * Prepares a reader for plan; capacity_hint is the expected row count, and
 * spec (or NULL: float32, no missing values) says how values are delivered.
 */
static void
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
	r->dims = plan->vector ? -1 : plan->nfeatures;
	r->f64 = spec != NULL && spec->values == ODP_VALUES_FLOAT8;
	r->missing_ok = r->f64 && spec->missing_ok;
	r->max_dims = spec != NULL && spec->max_dims > 0 ? spec->max_dims : ODP_MAX_DIMS;
	r->empty_ok = spec != NULL && spec->empty_ok;
	if (plan->regions)
	{
		const OdpRegionColumn *last = &plan->region[plan->nregions - 1];

		/* a cube's dimensions are known from its first row */
		r->dims = last->ndims < 0 ? -1 : last->dim + last->ndims;
		r->max_dims = ODP_MAX_INTERVAL_DIMS;
	}


	if (capacity_hint > ODP_INPUT_INITIAL_ROWS)
		OdpReaderReserve(r, (int64) Min(capacity_hint * 1.05 + 16,
										(double) ODP_INPUT_MAX_ROWS));
	else
		OdpReaderReserve(r, ODP_INPUT_INITIAL_ROWS);
}

/* ---- the two ways of reading rows ---- */

/*
 * Estimates the rows a full scan of rel returns, as the planner does: the
 * tuple density of the last VACUUM or ANALYZE times the current number of
 * blocks; 0 if never analysed.  Used only to size the first allocation of
 * a full scan, which the data fills anyway.
 */
static double
OdpEstimateRows(Relation rel)
{
	BlockNumber relpages = rel->rd_rel->relpages;
	double		reltuples = rel->rd_rel->reltuples;

	if (relpages == 0 || reltuples < 0)
		return 0;
	return reltuples / relpages * RelationGetNumberOfBlocks(rel);
}

/*
 * Reads every row of rel by a direct table scan under the active snapshot,
 * deforming only the attributes used.  No syncscan, so that the rows come
 * in physical order (often ascending id order, which saves the sort).
 */
static void
OdpReadTableScan(Relation rel, OdpReader *r)
{
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TableScanDesc scan;
	MemoryContext oldcxt;
	int64		n = 0;

	scan = table_beginscan_strat(rel, GetActiveSnapshot(), 0, NULL,
								 true, false);
	oldcxt = MemoryContextSwitchTo(r->rowcxt);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		slot_getsomeattrs(slot, r->plan->maxpos);
		OdpReaderAddRow(r, slot->tts_values, slot->tts_isnull);

		if ((++n & (ODP_INPUT_BATCH_ROWS - 1)) == 0)
		{
			/* a long scan: drop per-row garbage, let the user cancel */
			MemoryContextReset(r->rowcxt);
			CHECK_FOR_INTERRUPTS();
		}
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(r->rowcxt);
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * Opens query as a read-only, no-scroll SPI cursor; SPI must be connected.
 * The query runs with the caller's rights.
 */
static Portal
OdpOpenCursor(const char *query)
{
	SPIParseOpenOptions options;

	memset(&options, 0, sizeof(options));
	options.cursorOptions = CURSOR_OPT_NO_SCROLL;
	options.read_only = true;
	return SPI_cursor_parse_open(NULL, query, &options);
}

/* Fetches every row of portal in batches and appends it to r. */
static void
OdpReadCursor(Portal portal, OdpReader *r, MemoryContext workcxt)
{
	int			natts = portal->tupDesc->natts;
	Datum	   *values = MemoryContextAlloc(workcxt, sizeof(Datum) * Max(natts, 1));
	bool	   *isnull = MemoryContextAlloc(workcxt, sizeof(bool) * Max(natts, 1));

	Assert(r->plan->maxpos <= natts);
	for (;;)
	{
		MemoryContext oldcxt;

		/* one batch per iteration: let the user cancel in between */
		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, ODP_INPUT_BATCH_ROWS);
		if (SPI_processed == 0)
			break;

		oldcxt = MemoryContextSwitchTo(r->rowcxt);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			heap_deform_tuple(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
							  values, isnull);
			OdpReaderAddRow(r, values, isnull);
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(r->rowcxt);
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_freetuptable(SPI_tuptable);
}

/* Connects to SPI, raising an internal error if that fails. */
static void
OdpSpiConnect(void)
{
	int			rc = SPI_connect();

	if (rc != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed: %s", SPI_result_code_string(rc));
}

/*
 * Reads a query source: opens the cursor, resolves the columns from its
 * result descriptor, then fetches the rows.
 */
static void
OdpReadQuerySource(const char *query, const OdpInputSpec *spec,
				   OdpReader *r, OdpColumnPlan *plan,
				   MemoryContext outcxt, MemoryContext workcxt,
				   MemoryContext rowcxt)
{
	Portal		portal;
	OdpColumn  *cols;
	int			ncols;
	MemoryContext oldcxt;

	OdpSpiConnect();
	portal = OdpOpenCursor(query);

	oldcxt = MemoryContextSwitchTo(workcxt);
	cols = OdpDescribeColumns(portal->tupDesc, false, &ncols);
	OdpResolveColumns(cols, ncols, false, InvalidAttrNumber, spec, "query",
					  plan);
	MemoryContextSwitchTo(oldcxt);

	OdpReaderInit(r, plan, outcxt, rowcxt, "query", 0, spec);
	OdpReadCursor(portal, r, workcxt);

	SPI_cursor_close(portal);
	SPI_finish();
}

/*
 * Reads a relation source: checks it and the privileges, resolves the
 * columns, then reads by table scan when allowed, else through SPI with a
 * generated query.  Sets *desc and *heap_scan.
 */
static void
OdpReadRelationSource(const char *source, const OdpInputSpec *spec,
					  OdpReader *r, OdpColumnPlan *plan,
					  MemoryContext outcxt, MemoryContext workcxt,
					  MemoryContext rowcxt, char **desc, bool *heap_scan)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(workcxt);
	List	   *names = OdpSourceNameList(source);
	Oid			relid;
	Relation	rel;
	OdpColumn  *cols;
	int			ncols;

	relid = RangeVarGetRelid(makeRangeVarFromNameList(names), AccessShareLock,
							 false);
	rel = relation_open(relid, NoLock);
	OdpEnsureReadableRelkind(rel);
	OdpEnsureNotOtherTemp(rel);
	if (!OidIsValid(spec->checked_parent))
		OdpCheckAnyPrivilege(rel);
	*desc = OdpRelationDesc(rel);

	cols = OdpDescribeColumns(RelationGetDescr(rel), true, &ncols);
	OdpResolveColumns(cols, ncols, true, OdpPrimaryKeyColumn(rel), spec,
					  *desc, plan);
	if (!OidIsValid(spec->checked_parent))
		OdpCheckColumnPrivileges(rel, plan);

	/*
	 * A plain table, read as SELECT would: no RLS policies, no children.
	 * A partition read for its checked parent is read as the parent's
	 * query reads it: the parent's policies apply (the caller made sure
	 * it has none), not the partition's.
	 */
	if (OidIsValid(spec->checked_parent))
	{
		if (rel->rd_rel->relkind != RELKIND_RELATION || !rel->rd_rel->relispartition)
			elog(ERROR, "odp_gpu: %s is not a partition", *desc);
		*heap_scan = true;
	}
	else
		*heap_scan = rel->rd_rel->relkind == RELKIND_RELATION &&
			check_enable_rls(relid, InvalidOid, false) != RLS_ENABLED &&
			!has_subclass(relid);

	if (*heap_scan)
	{
		MemoryContextSwitchTo(oldcxt);
		OdpReaderInit(r, plan, outcxt, rowcxt, *desc, OdpEstimateRows(rel),
					  spec);
		OdpReadTableScan(rel, r);
	}
	else
	{
		StringInfoData query;
		Portal		portal;

		/* only quoted names go into the text; positions follow the list */
		initStringInfo(&query);
		appendStringInfo(&query, "SELECT %s", quote_identifier(plan->id.name));
		plan->id.pos = 1;
		for (int i = 0; i < plan->nfeatures; i++)
		{
			appendStringInfo(&query, ", %s",
							 quote_identifier(plan->features[i].name));
			plan->features[i].pos = i + 2;
		}
		plan->maxpos = plan->nfeatures + 1;
		appendStringInfo(&query, " FROM %s",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)));
		MemoryContextSwitchTo(oldcxt);

		/* no size hint: policies or filters in views may hide most rows */
		OdpReaderInit(r, plan, outcxt, rowcxt, *desc, 0, spec);
		OdpSpiConnect();
		portal = OdpOpenCursor(query.data);
		OdpReadCursor(portal, r, workcxt);
		SPI_cursor_close(portal);
		SPI_finish();
	}

	/* keep the lock until the end of the transaction */
	relation_close(rel, NoLock);
}

/* See input.h. */
bool
OdpResolveSource(const OdpInputSpec *spec, Oid *relid, char **id_name,
				 List **features)
{
	char	   *source = text_to_cstring(spec->source);
	Relation	rel;
	OdpColumn  *cols;
	OdpColumnPlan plan;
	char	   *desc;
	int			ncols;

	*features = NIL;
	if (OdpSourceIsQuery(source))
		return false;
	*relid = RangeVarGetRelid(makeRangeVarFromNameList(OdpSourceNameList(source)),
							  AccessShareLock, false);
	rel = relation_open(*relid, NoLock);
	OdpEnsureReadableRelkind(rel);
	OdpEnsureNotOtherTemp(rel);
	OdpCheckAnyPrivilege(rel);
	desc = OdpRelationDesc(rel);
	cols = OdpDescribeColumns(RelationGetDescr(rel), true, &ncols);
	OdpResolveColumns(cols, ncols, true, OdpPrimaryKeyColumn(rel), spec,
					  desc, &plan);
	OdpCheckColumnPrivileges(rel, &plan);
	*id_name = pstrdup(plan.id.name);
	for (int i = 0; i < plan.nfeatures; i++)
		*features = lappend(*features, pstrdup(plan.features[i].name));
	relation_close(rel, NoLock);
	return true;
}

/* ---- entry point ---- */

/*
 * Reads spec's source into out (see input.h).  The matrix and ids are
 * allocated in the caller's CurrentMemoryContext; all scratch memory lives
 * in a child context deleted before returning.
 */
void
OdpReadInput(const OdpInputSpec *spec, OdpInput *out)
{
	MemoryContext outcxt = CurrentMemoryContext;
	MemoryContext workcxt;
	MemoryContext rowcxt;
	instr_time	start;
	instr_time	duration;
	OdpColumnPlan plan;
	OdpReader	reader;
	char	   *source;
	char	   *desc = NULL;
	bool		heap_scan = false;

	Assert(spec->source != NULL);
	INSTR_TIME_SET_CURRENT(start);
	memset(out, 0, sizeof(*out));

	workcxt = AllocSetContextCreate(outcxt, "odp_gpu input",
									ALLOCSET_DEFAULT_SIZES);
	rowcxt = AllocSetContextCreate(workcxt, "odp_gpu input rows",
								   ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(workcxt);
	source = text_to_cstring(spec->source);

	if (OdpSourceIsQuery(source))
	{
		desc = "query";
		OdpReadQuerySource(source, spec, &reader, &plan, outcxt, workcxt,
						   rowcxt);
	}
	else
		OdpReadRelationSource(source, spec, &reader, &plan, outcxt, workcxt,
							  rowcxt, &desc, &heap_scan);

	MemoryContextSwitchTo(workcxt);
	OdpReaderFinish(&reader);
	MemoryContextSwitchTo(outcxt);

	out->rows = reader.rows;
	out->dims = reader.dims;
	out->data = reader.data;
	out->data64 = reader.data64;
	out->missing = reader.missing;
	out->lower = reader.lower;
	out->upper = reader.upper;
	out->bound_flags = reader.bflags;
	if (plan.regions)
		out->region_dims = OdpDescribeRegionDims(&plan, reader.dims);
	out->ids = reader.ids;
	out->source_desc = pstrdup(desc);
	out->heap_scan = heap_scan;
	MemoryContextDelete(workcxt);

	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	out->read_ms = INSTR_TIME_GET_MILLISEC(duration);
}

/* ---- rows given one at a time (aggregates) ---- */

/* An OdpReader fed by an aggregate, with its one-off column plan. */
struct OdpRowAccum
{
	OdpColumn	columns[2];		/* the id, then the vector */
	OdpColumnPlan plan;
	OdpReader	reader;
};

/*
 * Creates an accumulator of (id bigint, vector) rows in cxt, which must
 * outlive it (an aggregate's context).  id_name and vector_name name the
 * values in messages; elemtype is the vector's element type, FLOAT4OID or
 * FLOAT8OID; values says how they are delivered (as OdpInputSpec.values).
 */
OdpRowAccum *
OdpRowAccumCreate(MemoryContext cxt, const char *id_name,
				  const char *vector_name, Oid elemtype, OdpValueType values)
{
	OdpInputSpec spec;
	OdpRowAccum *acc;
	OdpColumn  *id;
	OdpColumn  *vec;

	if (elemtype != FLOAT4OID && elemtype != FLOAT8OID)
		elog(ERROR, "vector of unexpected element type %u", elemtype);
	acc = MemoryContextAllocZero(cxt, sizeof(OdpRowAccum));
	id = &acc->columns[0];
	id->name = MemoryContextStrdup(cxt, id_name);
	id->pos = 1;
	id->attnum = InvalidAttrNumber;
	id->typid = INT8OID;
	id->is_numeric = true;
	id->kind = ODP_VALUE_INT8;
	vec = &acc->columns[1];
	vec->name = MemoryContextStrdup(cxt, vector_name);
	vec->pos = 2;
	vec->attnum = InvalidAttrNumber;
	vec->typid = elemtype == FLOAT4OID ? FLOAT4ARRAYOID : FLOAT8ARRAYOID;
	vec->is_array = true;
	vec->is_numeric = true;
	vec->kind = elemtype == FLOAT4OID ? ODP_VALUE_FLOAT4 : ODP_VALUE_FLOAT8;

	acc->plan.id = *id;
	acc->plan.vector = true;
	acc->plan.nfeatures = 1;
	acc->plan.features = vec;
	acc->plan.maxpos = 2;
	memset(&spec, 0, sizeof(spec));
	spec.values = values;
	OdpReaderInit(&acc->reader, &acc->plan, cxt, NULL, "group", 0, &spec);
	return acc;
}

/*
 * Appends one row, the id and the vector of an aggregate's arguments id_arg
 * and vector_arg, checking it as OdpReadInput checks rows (null id or
 * vector, null or non-finite elements, shape, length).  Temporary memory
 * goes to CurrentMemoryContext and is freed before returning.
 */
void
OdpRowAccumAdd(OdpRowAccum *acc, FunctionCallInfo fcinfo, int id_arg,
			   int vector_arg)
{
	Datum		values[2];
	bool		isnull[2];

	isnull[0] = PG_ARGISNULL(id_arg);
	values[0] = isnull[0] ? (Datum) 0 : PG_GETARG_DATUM(id_arg);
	isnull[1] = PG_ARGISNULL(vector_arg);
	values[1] = isnull[1] ? (Datum) 0 : PG_GETARG_DATUM(vector_arg);
	OdpReaderAddRow(&acc->reader, values, isnull);
}

/* Returns the number of rows appended so far. */
int64
OdpRowAccumRows(const OdpRowAccum *acc)
{
	return acc->reader.rows;
}

/*
 * Sorts the rows by id, rejects duplicate ids, and points out at the
 * accumulated matrix (which stays owned by the accumulator; the rows are
 * not changed, only ordered, so more rows may be added afterwards).
 * source_desc names the rows in messages, e.g. "the group".  Requires at
 * least one row.
 */
void
OdpRowAccumFinish(OdpRowAccum *acc, const char *source_desc, OdpInput *out)
{
	instr_time	start;
	instr_time	duration;

	INSTR_TIME_SET_CURRENT(start);
	memset(out, 0, sizeof(*out));
	OdpReaderFinish(&acc->reader);
	out->rows = acc->reader.rows;
	out->dims = acc->reader.dims;
	out->data = acc->reader.data;
	out->data64 = acc->reader.data64;
	out->ids = acc->reader.ids;
	out->source_desc = pstrdup(source_desc);
	out->heap_scan = false;
	out->aggregate = true;
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	out->read_ms = INSTR_TIME_GET_MILLISEC(duration);
}
