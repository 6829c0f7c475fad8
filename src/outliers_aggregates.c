/*-------------------------------------------------------------------------
 *
 * outliers_aggregates.c
 *	  Aggregate forms of the outlier analytics: odp_top_outliers_agg.
 *
 * The transition function appends each row's id and vector to a growable
 * matrix in the aggregate's memory context, checking values exactly as the
 * table functions check a source's rows (input_aggregate.c's OdpRowAccum);
 * k and n are checked on every row and must be the same in all rows of a
 * group.
 * The final function sorts the rows by id, rejects duplicate ids, runs the
 * top-n computation through the same glue as odp_top_outliers (method
 * auto, GPU when odp_gpu.device allows) and returns an odp_outlier[]
 * array, best first.  An aggregate over no rows returns NULL.
 *
 * There is no combine function, so the aggregate is not parallel safe;
 * the final function orders the state in place, so it is declared
 * FINALFUNC_MODIFY = READ_WRITE.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/outliers_aggregates.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "args.h"
#include "catalog/pg_type.h"
#include "engine_glue.h"
#include "fmgr.h"
#include "funcapi.h"
#include "input/input.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(odp_top_outliers_agg_transfn);
PG_FUNCTION_INFO_V1(odp_top_outliers_agg_finalfn);

/* Columns of the composite type odp_outlier (rank, id, score). */
#define ODP_OUTLIER_COLS	3

/* Argument positions of the transition function (0 is the state). */
#define AGG_ARG_ID			1
#define AGG_ARG_FEATURES	2
#define AGG_ARG_K			3
#define AGG_ARG_N			4

/* Per-group state, in the aggregate's memory context. */
typedef struct OutlierAggState
{
	OdpRowAccum *rows;
	int32		k;
	int32		n;
} OutlierAggState;

/* Ensure an argument that must be constant per group did not change. */
static inline void
OutlierAggEnsureSame(const char *name, int32 first, int32 value)
{
	if (first != value)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be the same in every row of a group, but is %d and %d",
						name, first, value),
				 errhint("Pass a constant %s.", name)));
}

/*
 * odp_top_outliers_agg transition function:
 *	  (internal, id bigint, features "any", k int, n int) -> internal.
 *	  features is a numeric array or a pgvector value, read as a
 *	  source's vector column is (by its type, which the first row of the
 *	  group gives).  Not strict: null ids and vectors are errors, as in
 *	  the table functions.  Must be called as an aggregate.
 */
Datum
odp_top_outliers_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	OutlierAggState *state;
	int32		k;
	int32		n;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "odp_top_outliers_agg_transfn called in non-aggregate context");

	/* check the arguments of every row before using any */
	k = OdpArgK(fcinfo, AGG_ARG_K);
	n = OdpArgPositive(fcinfo, AGG_ARG_N, "n");

	if (PG_ARGISNULL(0))
	{
		Oid			vectype = get_fn_expr_argtype(fcinfo->flinfo, AGG_ARG_FEATURES);

		state = (OutlierAggState *) MemoryContextAlloc(aggcxt, sizeof(OutlierAggState));
		state->rows = OdpRowAccumCreate(aggcxt, "id", "features", vectype,
										 ODP_VALUES_DISTANCE);
		state->k = k;
		state->n = n;
	}
	else
	{
		state = (OutlierAggState *) PG_GETARG_POINTER(0);
		OutlierAggEnsureSame("k", state->k, k);
		OutlierAggEnsureSame("n", state->n, n);
	}

	OdpRowAccumAdd(state->rows, fcinfo, AGG_ARG_ID, AGG_ARG_FEATURES);
	PG_RETURN_POINTER(state);
}

/*
 * odp_top_outliers_agg final function: (internal) -> odp_outlier[], the
 * group's top-n outliers (euclidean), best first, ties by smaller id; NULL
 * for no rows.  Orders the state's rows in place.
 */
Datum
odp_top_outliers_agg_finalfn(PG_FUNCTION_ARGS)
{
	double		call_start = odp_now_ms();
	OutlierAggState *state;
	Oid			arraytype;
	Oid			rowtype;
	TupleDesc	tupdesc;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	MemoryContext work,
				old;
	OdpInput	in;
	OdpRunInfo	info;
	int64	   *order;
	double	   *scores;
	int64		count;
	Datum	   *elems;
	ArrayType  *result;
	double		start;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "odp_top_outliers_agg_finalfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (OutlierAggState *) PG_GETARG_POINTER(0);

	arraytype = get_fn_expr_rettype(fcinfo->flinfo);
	rowtype = get_element_type(arraytype);
	if (!OidIsValid(rowtype))
		elog(ERROR, "odp_top_outliers_agg_finalfn must return an array");
	tupdesc = lookup_rowtype_tupdesc_copy(rowtype, -1);
	if (tupdesc->natts != ODP_OUTLIER_COLS)
		elog(ERROR, "type odp_outlier has %d columns, expected %d",
			 tupdesc->natts, ODP_OUTLIER_COLS);
	get_typlenbyvalalign(rowtype, &typlen, &typbyval, &typalign);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu top outliers aggregate",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	OdpRowAccumFinish(state->rows, "the group", &in);
	OdpCheckKAgainstRows(state->k, in.rows, in.source_desc);
	count = Min((int64) state->n, in.rows);
	order = (int64 *) palloc(sizeof(int64) * (Size) count);
	scores = (double *) palloc(sizeof(double) * (Size) count);
	OdpComputeTopOutliers(&in, ODP_METRIC_EUCLIDEAN, state->k, state->n,
						  ODP_METHOD_AUTO, 0, order, scores, &count,
						  NULL, NULL, NULL, &info);

	start = odp_now_ms();
	elems = (Datum *) palloc(sizeof(Datum) * (Size) Max(count, 1));
	for (int64 r = 0; r < count; r++)
	{
		Datum		values[ODP_OUTLIER_COLS];
		bool		nulls[ODP_OUTLIER_COLS] = {false, false, false};

		values[0] = Int32GetDatum((int32) (r + 1));
		values[1] = Int64GetDatum(in.ids[order[r]]);
		values[2] = Float8GetDatum(scores[r]);
		elems[r] = HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
	}

	/* the array is the result: build it in the caller's context */
	MemoryContextSwitchTo(old);
	result = construct_array(elems, (int) count, rowtype, typlen, typbyval,
							 typalign);
	OdpReportTiming("odp_top_outliers_agg", &in, &info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	PG_RETURN_ARRAYTYPE_P(result);
}
