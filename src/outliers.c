/*-------------------------------------------------------------------------
 *
 * outliers.c
 *	  SQL entry points of the distance-based outlier analytics:
 *	  odp_outlier_scores, odp_top_outliers and odp_solving_set.
 *
 * Each checks every argument, reads the source into a dense matrix (sorted
 * by id, so "ties by smaller id" is "ties by smaller row index" in the
 * engine), runs the engine and returns rows in materialized mode.
 * odp_outlier_scores computes every row's weight; the other two find the
 * top n, by brute force or by SolvingSet (seeds 000, 001), which computes
 * exact weights only for the rows it cannot prune.  All their memory
 * lives in one child context deleted at the end.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/outliers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "args.h"
#include "engine_glue.h"
#include "funcapi.h"
#include "input.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_outlier_scores);
PG_FUNCTION_INFO_V1(odp_top_outliers);
PG_FUNCTION_INFO_V1(odp_solving_set);

#define OUTLIER_SCORES_COLS 2
#define TOP_OUTLIERS_COLS	3
#define SOLVING_SET_COLS	2

/* Arguments common to both functions, already checked. */
typedef struct OutlierArgs
{
	OdpInputSpec spec;
	int32		k;
	OdpMetric	metric;
} OutlierArgs;

/* Reads and checks the shared arguments at the given positions. */
static void
OutlierReadArgs(FunctionCallInfo fcinfo, int k_arg, int id_arg,
				int features_arg, int metric_arg, OutlierArgs *args)
{
	OdpArgNotNull(fcinfo, 0, "source");
	args->spec.source = PG_GETARG_TEXT_PP(0);
	args->k = OdpArgK(fcinfo, k_arg);
	args->spec.id_column = PG_ARGISNULL(id_arg) ? NULL : PG_GETARG_TEXT_PP(id_arg);
	args->spec.features = PG_ARGISNULL(features_arg) ? NULL : PG_GETARG_ARRAYTYPE_P(features_arg);
	args->metric = OdpArgMetric(fcinfo, metric_arg);
}

/*
 * Reads the source and checks it against k and the metric, allocating in
 * the current memory context.
 */
static void
OutlierReadSource(const OutlierArgs *args, OdpInput *in)
{
	OdpReadInput(&args->spec, in);
	OdpCheckKAgainstRows(args->k, in->rows, in->source_desc);
	OdpCheckCosineRows(in, args->metric);
}

/*
 * Reads the source and computes every row's score, allocating in the
 * current memory context.
 */
static double *
OutlierScoresCompute(const OutlierArgs *args, OdpInput *in, OdpRunInfo *info)
{
	double	   *scores;

	OutlierReadSource(args, in);
	scores = (double *) MemoryContextAllocHuge(CurrentMemoryContext,
											   sizeof(double) * (Size) in->rows);
	OdpComputeOutlierScores(in, args->metric, args->k, scores, info);
	return scores;
}

/*
 * odp_outlier_scores(source, k, id_column, features, metric)
 *	  -> TABLE(id bigint, score float8), every row, in id order.
 */
Datum
odp_outlier_scores(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OutlierArgs args;
	OdpInput	in;
	OdpRunInfo	info;
	MemoryContext work,
				old;
	double	   *scores;
	double		start;

	OutlierReadArgs(fcinfo, 1, 2, 3, 4, &args);
	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == OUTLIER_SCORES_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu outlier scores",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	scores = OutlierScoresCompute(&args, &in, &info);
	MemoryContextSwitchTo(old);

	start = odp_now_ms();
	for (int64 i = 0; i < in.rows; i++)
	{
		Datum		values[OUTLIER_SCORES_COLS];
		bool		nulls[OUTLIER_SCORES_COLS] = {false, false};

		/* a million rows take a while to store */
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(in.ids[i]);
		values[1] = Float8GetDatum(scores[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	OdpReportTiming("odp_outlier_scores", &in, &info, odp_now_ms() - start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/*
 * odp_top_outliers(source, k, n, id_column, features, metric, method)
 *	  -> TABLE(rank int, id bigint, score float8), the n highest scores,
 *	  best first, ties by smaller id.  Every method gives the same rows.
 */
Datum
odp_top_outliers(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OutlierArgs args;
	OdpInput	in;
	OdpRunInfo	info;
	OdpOutlierMethod method;
	MemoryContext work,
				old;
	double	   *scores;
	int64	   *order;
	int64		count;
	int32		n;
	double		start;

	OutlierReadArgs(fcinfo, 1, 3, 4, 5, &args);
	n = OdpArgPositive(fcinfo, 2, "n");
	method = OdpArgMethod(fcinfo, 6);
	OdpCheckKForMethod(args.k, method);
	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == TOP_OUTLIERS_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu top outliers",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	OutlierReadSource(&args, &in);
	count = Min((int64) n, in.rows);
	order = (int64 *) MemoryContextAllocHuge(work, sizeof(int64) * (Size) count);
	scores = (double *) MemoryContextAllocHuge(work, sizeof(double) * (Size) count);
	OdpComputeTopOutliers(&in, args.metric, args.k, n, method, order, scores,
						  &count, NULL, NULL, NULL, &info);
	MemoryContextSwitchTo(old);

	start = odp_now_ms();
	for (int64 r = 0; r < count; r++)
	{
		Datum		values[TOP_OUTLIERS_COLS];
		bool		nulls[TOP_OUTLIERS_COLS] = {false, false, false};

		values[0] = Int32GetDatum((int32) (r + 1));
		values[1] = Int64GetDatum(in.ids[order[r]]);
		values[2] = Float8GetDatum(scores[r]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	OdpReportTiming("odp_top_outliers", &in, &info, odp_now_ms() - start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/*
 * odp_solving_set(source, k, n, id_column, features, metric)
 *	  -> TABLE(id bigint, score float8): the solving set that SolvingSet
 *	  (seed 001, Definition 3.3) builds while finding the top n, in id
 *	  order, with exact scores.  It contains the top-n outliers.
 */
Datum
odp_solving_set(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OutlierArgs args;
	OdpInput	in;
	OdpRunInfo	info;
	MemoryContext work,
				old;
	double	   *scores;
	int64	   *order;
	int64	   *members;
	double	   *member_scores;
	int64		count;
	int64		nmembers = 0;
	int32		n;
	double		start;

	OutlierReadArgs(fcinfo, 1, 3, 4, 5, &args);
	n = OdpArgPositive(fcinfo, 2, "n");
	OdpCheckKForMethod(args.k, ODP_METHOD_SOLVINGSET);
	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == SOLVING_SET_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu solving set",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	OutlierReadSource(&args, &in);
	count = Min((int64) n, in.rows);
	order = (int64 *) MemoryContextAllocHuge(work, sizeof(int64) * (Size) count);
	scores = (double *) MemoryContextAllocHuge(work, sizeof(double) * (Size) count);
	members = (int64 *) MemoryContextAllocHuge(work, sizeof(int64) * (Size) in.rows);
	member_scores = (double *) MemoryContextAllocHuge(work, sizeof(double) * (Size) in.rows);
	OdpComputeTopOutliers(&in, args.metric, args.k, n, ODP_METHOD_SOLVINGSET,
						  order, scores, &count, members, member_scores,
						  &nmembers, &info);
	MemoryContextSwitchTo(old);

	if (nmembers < 0 || nmembers > in.rows)
		elog(ERROR, "odp_gpu engine returned a solving set of " INT64_FORMAT " rows out of " INT64_FORMAT,
			 nmembers, in.rows);
	start = odp_now_ms();
	for (int64 i = 0; i < nmembers; i++)
	{
		Datum		values[SOLVING_SET_COLS];
		bool		nulls[SOLVING_SET_COLS] = {false, false};

		/* a solving set can be most of a large table */
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(in.ids[members[i]]);
		values[1] = Float8GetDatum(member_scores[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	OdpReportTiming("odp_solving_set", &in, &info, odp_now_ms() - start);
	MemoryContextDelete(work);
	return (Datum) 0;
}
