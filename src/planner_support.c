/*-------------------------------------------------------------------------
 *
 * planner_support.c
 *	  odp_rows_support: tells the planner how many rows odp_gpu's
 *	  set-returning functions return, where the arguments say it.
 *
 * Without it the planner assumes each function's ROWS (1000 by default)
 * whatever the call, and a join of odp_top_outliers(..., n => 10) with a
 * large table may scan the table instead of looking the ten ids up.  The
 * estimates, for constant arguments (after the planner has put named and
 * default arguments in place):
 *
 *	  odp_top_outliers		n, at most the source's rows
 *	  odp_outlier_scores	the source's rows
 *	  odp_knn				k, at most the source's rows
 *	  odp_knn_join			the queries' rows times k
 *	  odp_pearson_top		the source's rows times k
 *	  odp_pearson			every pair (min_abs_r = 0): n(n - 1)/2, or n x m
 *							for two sources
 *	  odp_outlier_predict	the new rows
 *
 * A source's rows are its relation's reltuples (OdpSourceRowEstimate); a
 * query, an unanalysed table or a non-constant argument leaves the
 * function's ROWS in place.  The support function never raises an error.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/planner_support.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "input/input.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(odp_rows_support);

/* Argument i of args when it is a non-null constant of type typid. */
static const Const *
SupportConstArg(List *args, int i, Oid typid)
{
	Node	   *node;

	if (i >= list_length(args))
		return NULL;
	node = (Node *) list_nth(args, i);
	if (!IsA(node, Const) || ((Const *) node)->constisnull ||
		((Const *) node)->consttype != typid)
		return NULL;
	return (const Const *) node;
}

/* Integer argument i, or -1 when it is not a constant. */
static double
SupportIntArg(List *args, int i)
{
	const Const *c = SupportConstArg(args, i, INT4OID);

	return c != NULL ? (double) DatumGetInt32(c->constvalue) : -1;
}

/* The rows of the source in argument i (text or regclass), or -1 when unknown. */
static double
SupportSourceRows(List *args, int i)
{
	const Const *c = SupportConstArg(args, i, TEXTOID);
	const Const *r = SupportConstArg(args, i, REGCLASSOID);

	if (r != NULL)
		return OdpRelationRowEstimate(DatumGetObjectId(r->constvalue));
	return c != NULL ? OdpSourceRowEstimate(DatumGetTextPP(c->constvalue)) : -1;
}

/* The estimate for a call of name with args, or -1 for the function's ROWS. */
static double
SupportEstimate(const char *name, List *args)
{
	int			nargs = list_length(args);

	if (strcmp(name, "odp_top_outliers") == 0)
	{
		double		n = SupportIntArg(args, 2);
		double		rows = SupportSourceRows(args, 0);

		return (n >= 0 && rows >= 0) ? Min(n, rows) : n;
	}
	if (strcmp(name, "odp_outlier_scores") == 0)
		return SupportSourceRows(args, 0);
	if (strcmp(name, "odp_outlier_predict") == 0)
		return SupportSourceRows(args, 1);
	if (strcmp(name, "odp_knn") == 0)
	{
		double		k = SupportIntArg(args, 2);
		double		rows = SupportSourceRows(args, 0);

		return (k >= 0 && rows >= 0) ? Min(k, rows) : k;
	}
	if (strcmp(name, "odp_knn_join") == 0)
	{
		double		k = SupportIntArg(args, 2);
		double		queries = SupportSourceRows(args, 0);

		return (k >= 0 && queries >= 0) ? k * queries : -1;
	}
	if (strcmp(name, "odp_pearson_top") == 0)
	{
		/* one source: (source, k, ...), 8 arguments; two: (source, other, k, ...) */
		bool		two = nargs > 8;
		double		k = SupportIntArg(args, two ? 2 : 1);
		double		rows = SupportSourceRows(args, 0);

		return (k >= 0 && rows >= 0) ? k * rows : -1;
	}
	if (strcmp(name, "odp_pearson") == 0)
	{
		/* one source: 7 arguments, min_abs_r second; two: 10, third */
		bool		two = nargs > 7;
		const Const *t = SupportConstArg(args, two ? 2 : 1, FLOAT8OID);
		double		x = SupportSourceRows(args, 0);
		double		y = two ? SupportSourceRows(args, 1) : x;

		/* every pair has a coefficient at threshold 0 (constant series aside) */
		if (t == NULL || DatumGetFloat8(t->constvalue) != 0.0 || x < 0 || y < 0)
			return -1;
		return two ? x * y : x * (x - 1) / 2;
	}
	return -1;
}

/*
 * odp_rows_support(internal) -> internal: answers SupportRequestRows for
 * the functions listed in the file header.
 */
Datum
odp_rows_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestRows *req;
	FuncExpr   *expr;
	char	   *name;
	double		rows;

	if (!IsA(rawreq, SupportRequestRows))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestRows *) rawreq;
	if (req->node == NULL || !IsA(req->node, FuncExpr))
		PG_RETURN_POINTER(NULL);
	expr = (FuncExpr *) req->node;
	name = get_func_name(expr->funcid);
	if (name == NULL)
		PG_RETURN_POINTER(NULL);
	rows = SupportEstimate(name, expr->args);
	if (rows < 0)
		PG_RETURN_POINTER(NULL);
	req->rows = Max(rows, 1);
	PG_RETURN_POINTER(req);
}
