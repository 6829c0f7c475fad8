/*-------------------------------------------------------------------------
 *
 * input_columns.c
 *	  The columns of a source: the numeric kinds of values, a description
 *	  of each column, finding one by name, the id column and the features
 *	  (with their defaults), a relation's primary key, and the caller's
 *	  privileges on the columns used.
 *
 * Columns are matched by exact name: a name that matches only when case
 * is ignored is an error whose hint names the column.  Defaults: the id
 * is the single-column integer primary key, else an integer column named
 * "id"; the features are the only numeric array column, else every
 * numeric column except the id.  A column of one of pgvector's types
 * (vector, halfvec, sparsevec; input_pgvector.c) counts as an array of
 * float4 values; a type only called like one of them is refused, even as
 * a default, rather than silently left out.  For a relation, SELECT on
 * the table or on every column used is checked before any row is read.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_columns.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "input/input_checks.h"
#include "miscadmin.h"
#include "odp_engine.h"
#include "settings.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

static const char *const odp_numeric_types_hint =
"Name columns of type smallint, integer, bigint, real, double precision or numeric, or one array column of such a type, or one vector, halfvec or sparsevec column of pgvector.";

/* ---- checks ---- */

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

/* ---- describing and finding columns ---- */

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
 * Classifies type typid into col's is_array, is_numeric, kind and format:
 * a numeric type, an array of one, one of pgvector's types (an array of
 * float4 values to the reader), or none of those (not numeric).
 */
void
OdpDescribeType(Oid typid, OdpColumn *col)
{
	Oid			elemtype = get_element_type(getBaseType(typid));

	col->typid = typid;
	col->format = OdpVectorFormatOf(typid);
	col->is_array = OidIsValid(elemtype);
	if (col->format == ODP_FORMAT_LOOKALIKE)
	{
		col->is_array = false;
		col->is_numeric = false;
	}
	else if (col->format != ODP_FORMAT_ARRAY)
	{
		col->is_array = true;
		col->is_numeric = true;
		col->kind = ODP_VALUE_FLOAT4;
	}
	else if (col->is_array)
		col->is_numeric = OdpValueKindOf(elemtype, &col->kind);
	else
		col->is_numeric = OdpValueKindOf(typid, &col->kind);
}

/*
 * Whether a column's values lose precision in float32: double precision,
 * numeric, integer and bigint, scalars or elements.  real, smallint
 * (exact in float32) and pgvector's types are float32 as stored.
 */
static bool
OdpColumnStoredWide(const OdpColumn *col)
{
	if (col->format != ODP_FORMAT_ARRAY)
		return false;
	return col->kind == ODP_VALUE_INT4 || col->kind == ODP_VALUE_INT8 ||
		col->kind == ODP_VALUE_FLOAT8 || col->kind == ODP_VALUE_NUMERIC;
}

/* See input_internal.h. */
bool
OdpColumnsNeedFloat64(const OdpColumn *cols, int ncols)
{
	switch ((OdpPrecisionSetting) odp_distance_precision)
	{
		case ODP_PRECISION_FLOAT32:
			return false;
		case ODP_PRECISION_FLOAT64:
			return true;
		case ODP_PRECISION_AUTO:
			break;
	}
	for (int i = 0; i < ncols; i++)
		if (OdpColumnStoredWide(&cols[i]))
			return true;
	return false;
}

/* See input.h. */
bool
OdpTypesNeedFloat64(const Oid *typids, int n)
{
	OdpColumn  *cols = palloc0(sizeof(OdpColumn) * Max(n, 1));
	bool		wide;

	for (int i = 0; i < n; i++)
		OdpDescribeType(typids[i], &cols[i]);
	wide = OdpColumnsNeedFloat64(cols, n);
	pfree(cols);
	return wide;
}

/*
 * Describes the columns of tupdesc, skipping dropped ones.  For a relation
 * (is_relation) positions are attribute numbers; for a query, positions in
 * the result.  Returns the count in *ncols.
 */
OdpColumn *
OdpDescribeColumns(TupleDesc tupdesc, bool is_relation, int *ncols)
{
	OdpColumn  *cols = palloc0(sizeof(OdpColumn) * Max(tupdesc->natts, 1));
	int			n = 0;

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		OdpColumn  *col = &cols[n];

		if (att->attisdropped)
			continue;
		col->name = pstrdup(NameStr(att->attname));
		col->pos = i + 1;
		col->attnum = is_relation ? att->attnum : InvalidAttrNumber;
		OdpDescribeType(att->atttypid, col);
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
 * Returns the number of elements of arr, a text[] of column names (the
 * argument called what), and the elements in *names and *nulls.
 */
int
OdpColumnNames(ArrayType *arr, const char *what, Datum **names, bool **nulls)
{
	int			n;

	if (ARR_ELEMTYPE(arr) != TEXTOID)
		elog(ERROR, "%s must be of type text[]", what);
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, names, nulls, &n);
	return n;
}

/* ---- the id column and the features ---- */

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
 * Resolves the id column of the source whose columns are cols (of a
 * relation if is_relation, whose single-column primary key is pk_attnum
 * or InvalidAttrNumber; else of a query): spec's id_column, which must
 * have an integer type, else the default (OdpDefaultIdColumn).  desc
 * words the errors.
 */
const OdpColumn *
OdpResolveIdColumn(const OdpColumn *cols, int ncols, bool is_relation,
				   AttrNumber pk_attnum, const OdpInputSpec *spec,
				   const char *desc)
{
	const OdpColumn *id;

	if (spec->id_column == NULL)
		return OdpDefaultIdColumn(cols, ncols, pk_attnum, is_relation, desc);
	id = OdpFindColumn(cols, ncols, text_to_cstring(spec->id_column),
					   "id column", desc, false);
	OdpEnsureIdType(id);
	return id;
}

/*
 * Resolves the features of the source whose columns are cols, id
 * resolved already: the columns spec->features names, in order, numeric
 * scalars or one numeric array; by default the only numeric array
 * column, else every numeric column except the id.  Fills plan's
 * features, nfeatures and vector; desc words the errors.
 */
void
OdpResolveFeatureColumns(const OdpColumn *cols, int ncols, const OdpColumn *id,
						 const OdpInputSpec *spec, const char *desc,
						 OdpColumnPlan *plan)
{
	if (spec->features != NULL)
	{
		Datum	   *names;
		bool	   *nulls;
		int			nnames;

		nnames = OdpColumnNames(spec->features, "features", &names, &nulls);
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
			OdpEnsurePgvectorOwn(col, "column");
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
			if (cols[i].pos == id->pos)
				continue;
			OdpEnsurePgvectorOwn(&cols[i], "column");
			if (!cols[i].is_numeric)
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
}

/* ---- the relation: primary key and privileges ---- */

/*
 * Returns the attnum of rel's primary key if it has exactly one column,
 * else InvalidAttrNumber.
 */
AttrNumber
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
void
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
void
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
