/*-------------------------------------------------------------------------
 *
 * pearson.c
 *	  SQL entry points of the correlations: odp_pearson (every pair over a
 *	  threshold) and odp_pearson_top (each series' k strongest partners),
 *	  each for one source (every pair of its series) or two (every series
 *	  of the first against every series of the second).
 *
 * Each row of a source is one series, its feature vector the values in
 * order, read as float64 as stored.  Sources are read sorted by id, so
 * the engine's "ties by smaller row" is "ties by smaller id", and its
 * pairs, handed over in row order, come out ordered by (id_a, id_b).
 * Pairs go straight from the engine into the result's tuplestore, a
 * batch at a time, so that a large result never exists twice in memory.
 * All other memory lives in one child context deleted at the end.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/pearson.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "args.h"
#include "engine_glue.h"
#include "funcapi.h"
#include "input/input.h"
#include "miscadmin.h"
#include "output.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_pearson);
PG_FUNCTION_INFO_V1(odp_pearson_other);
PG_FUNCTION_INFO_V1(odp_pearson_top);
PG_FUNCTION_INFO_V1(odp_pearson_top_other);

#define PEARSON_COLS		3
#define PEARSON_TOP_COLS	4

/* Argument positions of one of the four functions; -1: absent. */
typedef struct PearsonArgPos
{
	int			other;
	int			id_column;
	int			features;
	int			method;
	int			nulls;
	int			min_periods;
	int			other_id_column;
	int			other_features;
} PearsonArgPos;

/* The checked arguments shared by the four functions. */
typedef struct PearsonArgs
{
	OdpInputSpec spec;
	OdpInputSpec other;
	bool		has_other;
	OdpPearsonMethod method;
	bool		pairwise;
	int32		min_periods;
} PearsonArgs;

/* The series read for a call. */
typedef struct PearsonInput
{
	OdpInput	x;
	OdpInput	y;
	const OdpInput *yp;			/* &y, or NULL for one source */
} PearsonInput;

/* Reads a text argument that must be given, as a C string. */
static char *
PearsonArgName(FunctionCallInfo fcinfo, int argno, const char *name)
{
	OdpArgNotNull(fcinfo, argno, name);
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/* Parses method: pearson or spearman. */
static OdpPearsonMethod
PearsonArgMethod(FunctionCallInfo fcinfo, int argno)
{
	char	   *name = PearsonArgName(fcinfo, argno, "method");

	if (strcmp(name, "pearson") == 0)
		return ODP_PEARSON_METHOD_PEARSON;
	if (strcmp(name, "spearman") == 0)
		return ODP_PEARSON_METHOD_SPEARMAN;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown correlation method \"%s\"", name),
			 errhint("Use pearson or spearman.")));
	return ODP_PEARSON_METHOD_PEARSON;	/* keep compiler quiet */
}

/* Parses nulls: error (false) or pairwise (true). */
static bool
PearsonArgNulls(FunctionCallInfo fcinfo, int argno)
{
	char	   *name = PearsonArgName(fcinfo, argno, "nulls");

	if (strcmp(name, "error") == 0)
		return false;
	if (strcmp(name, "pairwise") == 0)
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown nulls option \"%s\"", name),
			 errhint("Use error (a null value is an error) or pairwise (each pair uses the positions where both series have a value).")));
	return false;				/* keep compiler quiet */
}

/* Parses sign: abs, positive or negative. */
static OdpPearsonRank
PearsonArgSign(FunctionCallInfo fcinfo, int argno)
{
	char	   *name = PearsonArgName(fcinfo, argno, "sign");

	if (strcmp(name, "abs") == 0)
		return ODP_PEARSON_RANK_ABS;
	if (strcmp(name, "positive") == 0)
		return ODP_PEARSON_RANK_POSITIVE;
	if (strcmp(name, "negative") == 0)
		return ODP_PEARSON_RANK_NEGATIVE;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown sign \"%s\"", name),
			 errhint("Use abs (rank partners by |r|), positive (by r) or negative (by -r).")));
	return ODP_PEARSON_RANK_ABS;	/* keep compiler quiet */
}

/* Ensures min_abs_r is given and within [0, 1]. */
static double
PearsonArgMinAbsR(FunctionCallInfo fcinfo, int argno)
{
	double		t;

	OdpArgNotNull(fcinfo, argno, "min_abs_r");
	t = PG_GETARG_FLOAT8(argno);
	if (!(t >= 0.0 && t <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_abs_r must lie between 0 and 1, not %g", t),
				 errhint("Pass the smallest |r| a pair needs, for example 0.9.")));
	return t;
}

/*
 * Reads and checks the arguments every function shares, before anything
 * is read.
 */
static void
PearsonReadArgs(FunctionCallInfo fcinfo, const PearsonArgPos *pos,
				PearsonArgs *args)
{
	memset(args, 0, sizeof(*args));
	OdpArgNotNull(fcinfo, 0, "source");
	args->method = PearsonArgMethod(fcinfo, pos->method);
	args->pairwise = PearsonArgNulls(fcinfo, pos->nulls);
	if (args->pairwise && args->method == ODP_PEARSON_METHOD_SPEARMAN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nulls => 'pairwise' works only with method => 'pearson'"),
				 errdetail("Spearman correlation ranks each series as a whole, which missing values leave undefined."),
				 errhint("Filter out or fill the missing values, or use method => 'pearson'.")));
	OdpArgNotNull(fcinfo, pos->min_periods, "min_periods");
	args->min_periods = PG_GETARG_INT32(pos->min_periods);
	if (args->min_periods < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_periods must be at least 1, not %d", args->min_periods),
				 errdetail("A coefficient needs at least 2 common values whatever min_periods says.")));

	args->spec.source = OdpArgSource(fcinfo, 0);
	args->spec.id_column = OdpArgOptText(fcinfo, pos->id_column);
	args->spec.features = OdpArgOptArray(fcinfo, pos->features);
	args->spec.values = ODP_VALUES_FLOAT8;
	args->spec.missing_ok = args->pairwise;
	args->spec.max_dims = ODP_MAX_SERIES_LEN;
	args->has_other = pos->other >= 0;
	if (args->has_other)
	{
		OdpArgNotNull(fcinfo, pos->other, "other");
		args->other = args->spec;
		args->other.source = OdpArgSource(fcinfo, pos->other);
		if (!PG_ARGISNULL(pos->other_id_column))
			args->other.id_column = PG_GETARG_TEXT_PP(pos->other_id_column);
		if (!PG_ARGISNULL(pos->other_features))
			args->other.features = PG_GETARG_ARRAYTYPE_P(pos->other_features);
	}
}

/* Ensures the series of in have at least two values each. */
static void
PearsonCheckLength(const OdpInput *in)
{
	if (in->dims < 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("every series of %s has only one value", in->source_desc),
				 errdetail("A correlation needs at least two values per series."),
				 errhint("Store each series as an array of its values, or name several numeric columns with features => '{...}'.")));
}

/*
 * Reads the source (and the other source) as float64 series and checks
 * them: two values per series at least, two series for one source, the
 * same length for two.  Allocates in the current memory context.
 */
static void
PearsonReadSources(const PearsonArgs *args, PearsonInput *in)
{
	OdpReadInput(&args->spec, &in->x);
	PearsonCheckLength(&in->x);
	in->yp = NULL;
	if (!args->has_other)
	{
		if (in->x.rows < 2)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("source %s has only one series", in->x.source_desc),
					 errdetail("Correlation needs at least two series."),
					 errhint("Correlate it with another source: odp_pearson(source, other).")));
		return;
	}
	/* the same data twice is read once */
	if (OdpSameSource(&args->spec, &args->other))
		in->y = in->x;
	else
	{
		OdpReadInput(&args->other, &in->y);
		PearsonCheckLength(&in->y);
	}
	if (in->y.dims != in->x.dims)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("series have different lengths"),
				 errdetail("The series of %s have %d values but those of %s have %d.",
						   in->x.source_desc, in->x.dims, in->y.source_desc, in->y.dims),
				 errhint("Give both sources series of the same length.")));
	in->yp = &in->y;
}

/* Where the pairs go: the result and the ids of both sides. */
typedef struct PearsonPairSink
{
	ReturnSetInfo *rsinfo;
	const int64 *ids_a;
	const int64 *ids_b;
} PearsonPairSink;

/* Stores a batch of pairs as result rows (id_a, id_b, r). */
static void
PearsonPutPairs(void *arg, const int64 *a, const int64 *b, const double *r,
				int64 count)
{
	PearsonPairSink *sink = (PearsonPairSink *) arg;
	bool		nulls[PEARSON_COLS] = {false, false, false};

	for (int64 i = 0; i < count; i++)
	{
		Datum		values[PEARSON_COLS];

		values[0] = Int64GetDatum(sink->ids_a[a[i]]);
		values[1] = Int64GetDatum(sink->ids_b[b[i]]);
		values[2] = Float8GetDatum(r[i]);
		tuplestore_putvalues(sink->rsinfo->setResult, sink->rsinfo->setDesc,
							 values, nulls);
	}
}

/* The body of both odp_pearson functions. */
static Datum
PearsonPairs(FunctionCallInfo fcinfo, const PearsonArgPos *pos, int min_abs_r_arg)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PearsonArgs args;
	PearsonInput in;
	PearsonPairSink sink;
	OdpRunInfo	info;
	MemoryContext work,
				old;
	double		min_abs_r;

	PearsonReadArgs(fcinfo, pos, &args);
	min_abs_r = PearsonArgMinAbsR(fcinfo, min_abs_r_arg);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == PEARSON_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu pearson",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	PearsonReadSources(&args, &in);
	sink.rsinfo = rsinfo;
	sink.ids_a = in.x.ids;
	sink.ids_b = in.yp ? in.yp->ids : in.x.ids;
	OdpComputePearsonPairs(&in.x, in.yp, args.method, args.min_periods, min_abs_r,
						   PearsonPutPairs, &sink, &info);
	MemoryContextSwitchTo(old);

	OdpReportTiming("odp_pearson", &in.x, &info, info.emit_ms, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/*
 * odp_pearson(source, min_abs_r, id_column, features, method, nulls,
 *			   min_periods)
 *	  -> TABLE(id_a bigint, id_b bigint, r float8): every pair of series
 *	  of source with |r| >= min_abs_r, once (id_a < id_b), by id_a, id_b.
 */
Datum
odp_pearson(PG_FUNCTION_ARGS)
{
	static const PearsonArgPos pos = {-1, 2, 3, 4, 5, 6, -1, -1};

	return PearsonPairs(fcinfo, &pos, 1);
}

/*
 * odp_pearson(source, other, min_abs_r, id_column, features, method, nulls,
 *			   min_periods, other_id_column, other_features)
 *	  -> TABLE(id_a bigint, id_b bigint, r float8): every series of source
 *	  against every series of other with |r| >= min_abs_r, by id_a, id_b.
 */
Datum
odp_pearson_other(PG_FUNCTION_ARGS)
{
	static const PearsonArgPos pos = {1, 3, 4, 5, 6, 7, 8, 9};

	return PearsonPairs(fcinfo, &pos, 2);
}

/* The body of both odp_pearson_top functions. */
static Datum
PearsonTop(FunctionCallInfo fcinfo, const PearsonArgPos *pos, int k_arg,
		   int sign_arg)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PearsonArgs args;
	PearsonInput in;
	OdpRunInfo	info;
	MemoryContext work,
				old;
	const int64 *ids_b;
	OdpPearsonRank rank;
	int64	   *other;
	double	   *r;
	int32		k;
	double		start;

	PearsonReadArgs(fcinfo, pos, &args);
	k = OdpArgK(fcinfo, k_arg);
	rank = PearsonArgSign(fcinfo, sign_arg);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == PEARSON_TOP_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu pearson top",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	PearsonReadSources(&args, &in);
	other = MemoryContextAllocHuge(work, sizeof(int64) * (Size) in.x.rows * k);
	r = MemoryContextAllocHuge(work, sizeof(double) * (Size) in.x.rows * k);
	OdpComputePearsonTop(&in.x, in.yp, args.method, args.min_periods, k, rank,
						 other, r, &info);
	MemoryContextSwitchTo(old);

	start = odp_now_ms();
	ids_b = in.yp ? in.yp->ids : in.x.ids;
	for (int64 a = 0; a < in.x.rows; a++)
	{
		/* a million series take a while to store */
		CHECK_FOR_INTERRUPTS();
		for (int32 q = 0; q < k; q++)
		{
			const Size	at = (Size) a * k + q;
			Datum		values[PEARSON_TOP_COLS];
			bool		nulls[PEARSON_TOP_COLS] = {false, false, false, false};

			if (other[at] < 0)
				break;
			values[0] = Int64GetDatum(in.x.ids[a]);
			values[1] = Int32GetDatum(q + 1);
			values[2] = Int64GetDatum(ids_b[other[at]]);
			values[3] = Float8GetDatum(r[at]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	OdpReportTiming("odp_pearson_top", &in.x, &info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/*
 * odp_pearson_top(source, k, sign, id_column, features, method, nulls,
 *				   min_periods)
 *	  -> TABLE(id bigint, rank int, other_id bigint, r float8): for every
 *	  series of source its k other series ranked first by sign, ties by
 *	  smaller id, by id and rank.
 */
Datum
odp_pearson_top(PG_FUNCTION_ARGS)
{
	static const PearsonArgPos pos = {-1, 3, 4, 5, 6, 7, -1, -1};

	return PearsonTop(fcinfo, &pos, 1, 2);
}

/*
 * odp_pearson_top(source, other, k, sign, id_column, features, method,
 *				   nulls, min_periods, other_id_column, other_features)
 *	  -> TABLE(id bigint, rank int, other_id bigint, r float8): for every
 *	  series of source its k series of other ranked first by sign.
 */
Datum
odp_pearson_top_other(PG_FUNCTION_ARGS)
{
	static const PearsonArgPos pos = {1, 4, 5, 6, 7, 8, 9, 10};

	return PearsonTop(fcinfo, &pos, 2, 3);
}
