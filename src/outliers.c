/*-------------------------------------------------------------------------
 *
 * outliers.c
 *	  SQL entry points of the distance-based outlier analytics:
 *	  odp_outlier_scores, odp_top_outliers, odp_solving_set and
 *	  odp_outlier_predict.
 *
 * Each checks every argument, reads the source into a dense matrix (sorted
 * by id, so "ties by smaller id" is "ties by smaller row index" in the
 * engine), runs the engine and returns rows in materialized mode.
 * odp_outlier_scores computes every row's weight; the other two find the
 * top n, by brute force or by SolvingSet (seeds 000, 001), which computes
 * exact weights only for the rows it cannot prune.  odp_outlier_predict
 * weighs new rows against a solving set with the k-NN steps of knn.c
 * (knn.h).  All their memory lives in one child context deleted at the
 * end.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/outliers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "args.h"
#include "distributed/distributed.h"
#include "engine_glue.h"
#include "funcapi.h"
#include "input/input.h"
#include "knn.h"
#include "miscadmin.h"
#include "odp_distance.h"
#include "output.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_outlier_scores);
PG_FUNCTION_INFO_V1(odp_top_outliers);
PG_FUNCTION_INFO_V1(odp_solving_set);
PG_FUNCTION_INFO_V1(odp_outlier_predict);

#define OUTLIER_SCORES_COLS 2
#define TOP_OUTLIERS_COLS	3
#define SOLVING_SET_COLS	2
#define PREDICT_COLS		3

/* Arguments common to the scores, the top n and the solving set, checked. */
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
	memset(args, 0, sizeof(*args));
	args->spec.source = OdpArgSource(fcinfo, 0);
	args->k = OdpArgK(fcinfo, k_arg);
	args->spec.id_column = OdpArgOptText(fcinfo, id_arg);
	args->spec.features = OdpArgOptArray(fcinfo, features_arg);
	args->metric = OdpArgMetric(fcinfo, metric_arg, false);
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

/* What odp_top_outliers and odp_solving_set compute. */
typedef struct OutlierTop
{
	bool		distributed;	/* computed on a sharded table's nodes */
	OdpInput	in;				/* the rows read (not distributed) */
	OdpRunInfo	info;
	int64	   *order;			/* count row indexes, best first */
	double	   *scores;			/* their scores */
	int64		count;
	int64	   *members;		/* solving set rows (want_set), else NULL */
	double	   *member_scores;
	int64		nmembers;
	OdpDistributedTop	dist;			/* distributed: ids instead of rows */
} OutlierTop;

/* The id of the r-th best row, and of the i-th solving-set member. */
static inline int64
OutlierTopId(const OutlierTop *top, int64 r)
{
	return top->distributed ? top->dist.ids[r] : top->in.ids[top->order[r]];
}

static inline int64
OutlierMemberId(const OutlierTop *top, int64 i)
{
	return top->distributed ? top->dist.member_ids[i] : top->in.ids[top->members[i]];
}

/*
 * Reads the source and finds its top n by method (SolvingSet with
 * batch_size candidates per batch, 0 for the default); with want_set also
 * the solving set.  A sharded table is computed on its nodes.  Allocates
 * in the current memory context.
 */
static void
OutlierTopCompute(const OutlierArgs *args, int32 n, OdpOutlierMethod method,
				  int64 batch_size, bool want_set, const char *what,
				  OutlierTop *top)
{
	OdpInput   *in = &top->in;
	OdpShardSet shards;

	memset(top, 0, sizeof(*top));
	if (args->k < ODP_MAX_K && OdpFindShards(&args->spec, &shards))
	{
		top->distributed = true;
		OdpDistributedTopOutliers(&shards, &args->spec, args->metric, args->k, n, method,
								  batch_size, want_set, what, &top->dist);
		top->count = top->dist.count;
		top->scores = top->dist.scores;
		top->nmembers = top->dist.members;
		top->member_scores = top->dist.member_scores;
		return;
	}
	OutlierReadSource(args, in);
	top->count = Min((int64) n, in->rows);
	top->order = (int64 *) MemoryContextAllocHuge(CurrentMemoryContext,
												  sizeof(int64) * (Size) top->count);
	top->scores = (double *) MemoryContextAllocHuge(CurrentMemoryContext,
													sizeof(double) * (Size) top->count);
	top->members = NULL;
	top->member_scores = NULL;
	top->nmembers = 0;
	if (want_set)
	{
		top->members = (int64 *) MemoryContextAllocHuge(CurrentMemoryContext,
														sizeof(int64) * (Size) in->rows);
		top->member_scores = (double *) MemoryContextAllocHuge(CurrentMemoryContext,
															   sizeof(double) * (Size) in->rows);
	}
	OdpComputeTopOutliers(in, args->metric, args->k, n, method, batch_size, top->order,
						  top->scores, &top->count, top->members,
						  top->member_scores, want_set ? &top->nmembers : NULL,
						  &top->info);
}

/*
 * odp_outlier_scores(source, k, id_column, features, metric)
 *	  -> TABLE(id bigint, score float8), every row, in id order.
 */
Datum
odp_outlier_scores(PG_FUNCTION_ARGS)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OutlierArgs args;
	OdpInput	in;
	OdpRunInfo	info;
	MemoryContext work,
				old;
	double	   *scores;
	double		start;

	OutlierReadArgs(fcinfo, 1, 2, 3, 4, &args);
	OdpOutputInit(fcinfo);
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
	OdpReportTiming("odp_outlier_scores", &in, &info, odp_now_ms() - start, call_start);
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
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OutlierArgs args;
	OutlierTop	top;
	OdpOutlierMethod method;
	MemoryContext work,
				old;
	int32		n;
	double		start;

	OutlierReadArgs(fcinfo, 1, 3, 4, 5, &args);
	n = OdpArgPositive(fcinfo, 2, "n");
	method = OdpArgMethod(fcinfo, 6);
	OdpCheckKForMethod(args.k, method);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == TOP_OUTLIERS_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu top outliers",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	OutlierTopCompute(&args, n, method, 0, false, "odp_top_outliers", &top);
	MemoryContextSwitchTo(old);

	start = odp_now_ms();
	for (int64 r = 0; r < top.count; r++)
	{
		Datum		values[TOP_OUTLIERS_COLS];
		bool		nulls[TOP_OUTLIERS_COLS] = {false, false, false};

		values[0] = Int32GetDatum((int32) (r + 1));
		values[1] = Int64GetDatum(OutlierTopId(&top, r));
		values[2] = Float8GetDatum(top.scores[r]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (!top.distributed)
		OdpReportTiming("odp_top_outliers", &top.in, &top.info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/*
 * odp_solving_set(source, k, n, id_column, features, metric, batch_size)
 *	  -> TABLE(id bigint, score float8): the solving set that SolvingSet
 *	  (seed 001, Definition 3.3) builds while finding the top n, in id
 *	  order, with exact scores.  It contains the top-n outliers.  batch_size
 *	  (NULL: the default rule) is the candidates per batch: fewer make a
 *	  smaller set in more iterations.
 */
Datum
odp_solving_set(PG_FUNCTION_ARGS)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OutlierArgs args;
	OutlierTop	top;
	MemoryContext work,
				old;
	int32		n;
	int64		batch_size = 0;
	double		start;

	OutlierReadArgs(fcinfo, 1, 3, 4, 5, &args);
	n = OdpArgPositive(fcinfo, 2, "n");
	if (!PG_ARGISNULL(6))
		batch_size = OdpArgPositive(fcinfo, 6, "batch_size");
	OdpCheckKForMethod(args.k, ODP_METHOD_SOLVINGSET);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == SOLVING_SET_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu solving set",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	OutlierTopCompute(&args, n, ODP_METHOD_SOLVINGSET, batch_size, true,
					  "odp_solving_set", &top);
	MemoryContextSwitchTo(old);

	if (top.nmembers < 0 ||
		top.nmembers > (top.distributed ? top.dist.rows : top.in.rows))
		elog(ERROR, "odp_gpu engine returned a solving set of " INT64_FORMAT " rows out of " INT64_FORMAT,
			 top.nmembers, top.distributed ? top.dist.rows : top.in.rows);
	start = odp_now_ms();
	for (int64 i = 0; i < top.nmembers; i++)
	{
		Datum		values[SOLVING_SET_COLS];
		bool		nulls[SOLVING_SET_COLS] = {false, false};

		/* a solving set can be most of a large table */
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(OutlierMemberId(&top, i));
		values[1] = Float8GetDatum(top.member_scores[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (!top.distributed)
		OdpReportTiming("odp_solving_set", &top.in, &top.info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/*
 * odp_outlier_predict(solving_set, new_rows, k, threshold, id_column,
 *					   features, metric, new_id_column, new_features)
 *	  -> TABLE(id bigint, weight float8, is_outlier boolean): for every row
 *	  of new_rows, by id, its weight against the rows of solving_set (the
 *	  sum of its k smallest distances to them, summed ascending in float64
 *	  as outlier scores are) and whether it reaches threshold (NULL when
 *	  threshold is).  With solving_set a solving set of a data set D for
 *	  its top n (odp_solving_set) and threshold w*, D's n-th best score
 *	  (seed 001, Definition 3.3; Angiulli, Basta and Pizzuti, TKDE 2006): a
 *	  new row weighing less than w* against the set weighs less than w*
 *	  against D too, so it would not be among D's top n; one that reaches
 *	  w* is predicted an outlier.  The new-row options default to the set's.
 */
Datum
odp_outlier_predict(PG_FUNCTION_ARGS)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OdpInputSpec sspec;
	OdpInputSpec nspec;
	OdpInput	set;
	OdpInput	rows;
	OdpKnnResult	res;
	OdpMetric	metric;
	MemoryContext work,
				old;
	int32		k;
	bool		has_threshold;
	double		threshold = 0.0;
	double		start;

	OdpArgNotNull(fcinfo, 0, "solving_set");
	OdpArgNotNull(fcinfo, 1, "new_rows");
	k = OdpArgK(fcinfo, 2);
	has_threshold = !PG_ARGISNULL(3);
	if (has_threshold)
		threshold = PG_GETARG_FLOAT8(3);
	if (isnan(threshold))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be a number, not NaN"),
				 errhint("Give the n-th best score of the data the solving set was built from.")));
	metric = OdpArgMetric(fcinfo, 6, false);
	OdpKnnArgSpecs(fcinfo, 0, 4, 1, 7, &sspec, &nspec);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == PREDICT_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu outlier predict",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	OdpReadInput(&sspec, &set);
	OdpCheckCosineRows(&set, metric);
	if (set.rows < k)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("solving set %s has " INT64_FORMAT " rows, fewer than k = %d",
						set.source_desc, set.rows, k),
				 errdetail("A weight sums the distances to the k nearest rows of the set."),
				 errhint("Use the k the solving set was built with, which it always has more rows than.")));
	OdpKnnReadQueries(&nspec, &set, metric, &rows);
	OdpKnnCompute(&rows, &set, metric, k, false, &res);
	MemoryContextSwitchTo(old);

	start = odp_now_ms();
	for (int64 q = 0; q < rows.rows; q++)
	{
		Datum		values[PREDICT_COLS];
		bool		nulls[PREDICT_COLS] = {false, false, !has_threshold};
		double		weight = odp_sum_ascending64(res.dist + (Size) q * k, k);

		/* a million new rows take a while to store */
		if ((q & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(rows.ids[q]);
		values[1] = Float8GetDatum(weight);
		values[2] = BoolGetDatum(has_threshold && weight >= threshold);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	OdpReportTiming("odp_outlier_predict", &set, &res.info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}
