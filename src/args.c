/*-------------------------------------------------------------------------
 *
 * args.c
 *	  Checks of SQL arguments shared by every analytic: NULLs, k, n,
 *	  metric and method names, the k-NN query vector.  Each runs before any table is read or memory taken.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/args.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "args.h"
#include "odp_intervals.h"
#include "catalog/pg_type.h"
#include "input/input.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* Ensures argument argno is not NULL; the functions are not STRICT. */
void
OdpArgNotNull(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
}

/*
 * Reads a source argument (not NULL): a table name or a query as text,
 * or a relation as regclass (the function's regclass overload, which the
 * same C function serves).  A relation becomes its schema-qualified,
 * quoted name, which the input layer resolves as it resolves any name, so
 * that both forms read, check and report alike; a name with a schema finds
 * the same relation whatever the search_path, as pg_restore's empty one.
 */
text *
OdpArgSource(FunctionCallInfo fcinfo, int argno)
{
	Oid			relid;
	char	   *relname;
	char	   *nspname;
	Oid		   *types;
	int			nargs;

	/* the overload called, by its declared types (not the argument's) */
	get_func_signature(fcinfo->flinfo->fn_oid, &types, &nargs);
	if (argno >= nargs || types[argno] != REGCLASSOID)
		return PG_GETARG_TEXT_PP(argno);
	relid = PG_GETARG_OID(argno);
	relname = get_rel_name(relid);
	nspname = relname != NULL ? get_namespace_name(get_rel_namespace(relid)) : NULL;
	if (nspname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return cstring_to_text(quote_qualified_identifier(nspname, relname));
}

/* Reads an optional text argument: NULL when the argument is NULL. */
text *
OdpArgOptText(FunctionCallInfo fcinfo, int argno)
{
	return PG_ARGISNULL(argno) ? NULL : PG_GETARG_TEXT_PP(argno);
}

/* Reads an optional array argument (text[]): NULL when the argument is NULL. */
ArrayType *
OdpArgOptArray(FunctionCallInfo fcinfo, int argno)
{
	return PG_ARGISNULL(argno) ? NULL : PG_GETARG_ARRAYTYPE_P(argno);
}

/*
 * Parses the metric argument; unknown names list the known ones.  The
 * inner product ranks by similarity, so only the k-NN functions take it
 * (allow_inner_product).
 */
OdpMetric
OdpArgMetric(FunctionCallInfo fcinfo, int argno, bool allow_inner_product)
{
	char	   *name;
	OdpMetric	metric;

	OdpArgNotNull(fcinfo, argno, "metric");
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (!odp_metric_from_name(name, &metric))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown metric \"%s\"", name),
				 allow_inner_product ?
				 errhint("Use one of euclidean, sqeuclidean, manhattan, chebyshev, cosine or inner_product.") :
				 errhint("Use one of euclidean, sqeuclidean, manhattan, chebyshev or cosine.")));
	if (!allow_inner_product && !odp_metric_is_distance(metric))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metric \"%s\" is not a distance", name),
				 errdetail("Outlier scores sum distances to the nearest neighbours; the inner product ranks by similarity."),
				 errhint("Use one of euclidean, sqeuclidean, manhattan, chebyshev or cosine; odp_knn and odp_knn_join take inner_product.")));
	pfree(name);
	return metric;
}

/* Parses an outlier method name; unknown names list the known ones. */
OdpOutlierMethod
OdpArgMethod(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;
	OdpOutlierMethod method;

	OdpArgNotNull(fcinfo, argno, "method");
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (strcmp(name, "auto") == 0)
		method = ODP_METHOD_AUTO;
	else if (strcmp(name, "bruteforce") == 0)
		method = ODP_METHOD_BRUTEFORCE;
	else if (strcmp(name, "solvingset") == 0)
		method = ODP_METHOD_SOLVINGSET;
	else if (strcmp(name, "spatial") == 0)
		method = ODP_METHOD_SPATIAL;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown method \"%s\"", name),
				 errhint("Use one of auto, bruteforce, solvingset or spatial.")));
	pfree(name);
	return method;
}

/* Ensures k is given, at least 1 and within the engine's limit. */
int32
OdpArgK(FunctionCallInfo fcinfo, int argno)
{
	int32		k;

	OdpArgNotNull(fcinfo, argno, "k");
	k = PG_GETARG_INT32(argno);
	if (k < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must be at least 1, not %d", k)));
	if (k > ODP_MAX_K)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("k = %d exceeds the maximum of %d", k, ODP_MAX_K)));
	return k;
}

/* Ensures an integer argument (such as n) is given and at least 1. */
int32
OdpArgPositive(FunctionCallInfo fcinfo, int argno, const char *name)
{
	int32		v;

	OdpArgNotNull(fcinfo, argno, name);
	v = PG_GETARG_INT32(argno);
	if (v < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at least 1, not %d", name, v)));
	return v;
}

/* Ensures every row can have k neighbours other than itself. */
void
OdpCheckKAgainstRows(int32 k, int64 rows, const char *source_desc)
{
	if ((int64) k >= rows)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k = %d must be less than the number of rows (" INT64_FORMAT ")",
						k, rows),
				 errdetail("Each row needs k neighbours other than itself in %s.",
						   source_desc),
				 errhint("Use a smaller k or a larger source.")));
}

/*
 * Reads the query vector argument of odp_knn, of whichever of its
 * signatures was called (double precision[], text or anynonarray): an
 * array of any numeric type, a value of pgvector's vector, halfvec or
 * sparsevec, or text read as float8[] (OdpVectorArgValues).  It must be
 * non-empty, one-dimensional and without nulls, with finite values.
 * Returns a palloc'd array of its values as float64 (numeric: the
 * nearest) and its length in *dims; OdpQueryToFloat32 gives it to a
 * source whose rows are float32.
 */
double *
OdpArgQueryVector(FunctionCallInfo fcinfo, int argno, int32 *dims)
{
	Oid			typid;
	double	   *values;
	bool	   *nulls;
	int32		n;

	OdpArgNotNull(fcinfo, argno, "query");
	typid = get_fn_expr_argtype(fcinfo->flinfo, argno);
	if (!OidIsValid(typid))
		elog(ERROR, "could not determine the type of the query argument");
	values = OdpVectorArgValues(PG_GETARG_DATUM(argno), typid, "query", &n,
								&nulls);
	for (int i = 0; i < n; i++)
	{
		if (nulls != NULL && nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("query must not contain null elements"),
					 errdetail("Element %d is null.", i + 1)));
		if (!isfinite(values[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("query element %d is not finite", i + 1)));
	}
	*dims = n;
	return values;
}

/*
 * The query vector rounded to float32, for float32 rows; its values must
 * fit float32, as the rows' must.
 */
float *
OdpQueryToFloat32(const double *values, int32 n)
{
	float	   *v = palloc(sizeof(float) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		if (fabs(values[i]) > FLT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("query element %d is out of range for type real", i + 1)));
		v[i] = (float) values[i];
	}
	return v;
}

/* Ensures SolvingSet can run with k (it needs k below the engine's maximum). */
void
OdpCheckKForMethod(int32 k, OdpOutlierMethod method)
{
	if (method == ODP_METHOD_SOLVINGSET && k >= ODP_MAX_K)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("k = %d is too large for method solvingset", k),
				 errdetail("SolvingSet supports k up to %d.", ODP_MAX_K - 1),
				 errhint("Use a smaller k, or method => 'bruteforce'.")));
}

/* See args.h. */
uint8
OdpArgBounds(FunctionCallInfo fcinfo, int argno)
{
	char	   *b;
	uint8		flags = 0;

	OdpArgNotNull(fcinfo, argno, "bounds");
	b = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (strlen(b) != 2 || (b[0] != '[' && b[0] != '(') || (b[1] != ']' && b[1] != ')'))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown bounds \"%s\"", b),
				 errhint("Use '[]' (both bounds included), '[)', '(]' or '()', as the range constructors take them.")));
	if (b[0] == '(')
		flags |= ODP_BOUND_LOWER_EXCLUSIVE;
	if (b[1] == ')')
		flags |= ODP_BOUND_UPPER_EXCLUSIVE;
	return flags;
}
