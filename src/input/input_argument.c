/*-------------------------------------------------------------------------
 *
 * input_argument.c
 *	  A vector given as an argument value rather than read from a source:
 *	  odp_knn's query (OdpVectorArgValues of input.h).
 *
 * odp_knn has three signatures, one C function: query double precision[]
 * (which every typed numeric array resolves to), text (which an untyped
 * literal or parameter resolves to) and anynonarray (pgvector's types);
 * an overload of pgvector's type or of "any" beside the float8[] one
 * would make an untyped literal ambiguous to the parser.  The argument's
 * type, read at call time, is classified as a source's column is
 * (input_columns.c): an array of a numeric type, converted exactly to
 * float8; a value of pgvector's vector, halfvec or sparsevec, read from
 * its stored bytes as a column's is (input_pgvector.c), sparsevec
 * densified; or text (or an untyped literal, a C string, where a caller
 * declares "any"), read as float8[].  The caller checks the values (nulls,
 * finite, range).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_argument.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "input/input_checks.h"
#include "odp_engine.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* Ensure a vector argument has between one and ODP_MAX_DIMS values. */
static inline void
OdpEnsureArgLength(int64 n, const char *what)
{
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what)));
	if (n > ODP_MAX_DIMS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s has %lld elements, more than the maximum of %d",
						what, (long long) n, ODP_MAX_DIMS)));
}

/*
 * Ensure an untyped literal is not pgvector's text form ('[1,2]'), which
 * array_in would reject as a malformed array without saying why; an
 * array literal with bounds ('[1:2]={1,2}') has an equals sign.
 */
static inline void
OdpEnsureArrayLiteral(const char *literal, const char *what)
{
	const char *p = literal;

	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p == '[' && strchr(p, '=') == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("%s literal \"%s\" is not an array", what, literal),
				 errdetail("A literal without a type is read as double precision[]."),
				 errhint("Write it as an array, '{1,2,3}', or give it pgvector's type, '[1,2,3]'::vector.")));
}

/*
 * Returns the values of a one-dimensional numeric array argument (col
 * describes its type) as float8, and its null flags in *nulls.
 */
static double *
OdpArrayArgValues(const OdpColumn *col, Datum value, const char *what,
				  int32 *n, bool **nulls)
{
	ArrayType  *arr = DatumGetArrayTypeP(value);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	int			count;
	double	   *values;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array, not %d-dimensional",
						what, ARR_NDIM(arr))));
	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
					  &elems, nulls, &count);
	OdpEnsureArgLength(count, what);
	values = palloc(sizeof(double) * count);
	for (int i = 0; i < count; i++)
		values[i] = (*nulls)[i] ? 0.0 : OdpDoubleValue(col->kind, elems[i]);
	*n = count;
	return values;
}

/* Returns the values of a pgvector argument (col: its type) as float8. */
static double *
OdpPgvectorArgValues(const OdpColumn *col, Datum value, const char *what,
					 int32 *n)
{
	struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));
	OdpPgvectorParts parts;
	float	   *floats;
	double	   *values;

	OdpPgvectorSplit(col->format, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), what,
					 &parts);
	OdpEnsureArgLength(parts.dim, what);
	floats = palloc(sizeof(float) * parts.dim);
	OdpPgvectorToFloats(col->format, &parts, what, floats);
	values = palloc(sizeof(double) * parts.dim);
	for (int32 i = 0; i < parts.dim; i++)
		values[i] = (double) floats[i];
	pfree(floats);
	*n = parts.dim;
	return values;
}

/* See input.h. */
double *
OdpVectorArgValues(Datum value, Oid typid, const char *what, int32 *n,
				   bool **nulls)
{
	OdpColumn	col;

	memset(&col, 0, sizeof(col));
	col.name = what;
	*nulls = NULL;
	if (typid == UNKNOWNOID || typid == TEXTOID)
	{
		/* an untyped literal or parameter, '{1,2}', read as float8[] */
		char	   *literal = typid == TEXTOID ? TextDatumGetCString(value) :
			DatumGetCString(value);
		Oid			input;
		Oid			ioparam;

		OdpEnsureArrayLiteral(literal, what);
		getTypeInputInfo(FLOAT8ARRAYOID, &input, &ioparam);
		value = OidInputFunctionCall(input, literal, ioparam, -1);
		typid = FLOAT8ARRAYOID;
	}
	OdpDescribeType(typid, &col);
	OdpEnsureVectorArgType(&col);
	if (col.format != ODP_FORMAT_ARRAY)
		return OdpPgvectorArgValues(&col, value, what, n);
	return OdpArrayArgValues(&col, value, what, n, nulls);
}
