/*-------------------------------------------------------------------------
 *
 * intervals.c
 *	  SQL entry points of the region matching (Data Distribution
 *	  Management): odp_interval_match, every overlapping pair of
 *	  (subscription, update) regions or of regions of one set, and
 *	  odp_interval_match_count, their number.
 *
 * Regions come from range columns (one dimension each), a box column (two)
 * or a cube column (its dimensions), or pairs of lower and upper columns
 * (input_regions.c).  Two regions overlap when they overlap in every
 * dimension, in the sense of PostgreSQL's && on those types.  Sources are
 * read sorted by id, so the engine's pairs, handed over in row order, come
 * out ordered by (subscription id, update id), and by (id_a, id_b) with
 * id_a < id_b for one set; they go straight from the engine into the
 * result's tuplestore, a batch at a time.  A source without rows has no
 * pairs.  All other memory lives in one child context deleted at the end.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/intervals.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "args.h"
#include "engine_glue.h"
#include "funcapi.h"
#include "input/input.h"
#include "intervals_pieces.h"
#include "miscadmin.h"
#include "output.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_interval_match);
PG_FUNCTION_INFO_V1(odp_interval_match_self);
PG_FUNCTION_INFO_V1(odp_interval_match_count);
PG_FUNCTION_INFO_V1(odp_interval_match_count_self);

#define INTERVAL_COLS	2

/* Argument positions of one of the four functions; -1: absent. */
typedef struct IntervalArgPos
{
	int			other;
	int			dims;
	int			id_column;
	int			other_dims;
	int			other_id_column;
	int			bounds;
} IntervalArgPos;

/* Two sources: (subscriptions, updates, dims, id_column, other_dims, other_id_column, bounds). */
static const IntervalArgPos interval_two = {1, 2, 3, 4, 5, 6};

/* One source: (regions, dims, id_column, bounds). */
static const IntervalArgPos interval_one = {-1, 1, 2, -1, -1, 3};

/* The checked arguments and the regions read. */
typedef struct IntervalCall
{
	OdpInputSpec spec;
	OdpInputSpec other;
	bool		two;
	OdpInput	a;
	OdpInput	b;
	const OdpInput *bp;			/* &b, or NULL for one set */
} IntervalCall;

/* Reads and checks the arguments, before anything is read. */
static void
IntervalReadArgs(FunctionCallInfo fcinfo, const IntervalArgPos *pos, IntervalCall *call)
{
	memset(call, 0, sizeof(*call));
	OdpArgNotNull(fcinfo, 0, pos->other >= 0 ? "subscriptions" : "regions");
	call->spec.source = OdpArgSource(fcinfo, 0);
	call->spec.features = OdpArgOptArray(fcinfo, pos->dims);
	call->spec.id_column = OdpArgOptText(fcinfo, pos->id_column);
	call->spec.values = ODP_VALUES_REGIONS;
	call->spec.pair_flags = OdpArgBounds(fcinfo, pos->bounds);
	call->spec.empty_ok = true;
	call->two = pos->other >= 0;
	if (call->two)
	{
		OdpArgNotNull(fcinfo, pos->other, "updates");
		call->other = call->spec;
		call->other.source = OdpArgSource(fcinfo, pos->other);
		if (!PG_ARGISNULL(pos->other_dims))
			call->other.features = PG_GETARG_ARRAYTYPE_P(pos->other_dims);
		if (!PG_ARGISNULL(pos->other_id_column))
			call->other.id_column = PG_GETARG_TEXT_PP(pos->other_id_column);
	}
}

/* Names dimension d of in for messages, e.g. column "r", or box "b" (y). */
static char *
IntervalDimName(const OdpInput *in, int d)
{
	const OdpRegionDim *rd = &in->region_dims[d];

	if (rd->upper_column != NULL)
		return psprintf("columns \"%s\" and \"%s\"", rd->column, rd->upper_column);
	if (rd->axis >= 0)
		return psprintf("column \"%s\" (coordinate %d)", rd->column, rd->axis + 1);
	return psprintf("column \"%s\"", rd->column);
}

/* The domain's name, for messages. */
static const char *
IntervalDomainName(const OdpRegionDim *rd)
{
	if (rd->box)
		return "box coordinates";
	switch (rd->domain)
	{
		case ODP_DOMAIN_INTEGER:
			return "integers";
		case ODP_DOMAIN_FLOAT:
			return "real, double precision or numeric values";
		case ODP_DOMAIN_DATE:
			return "dates";
		case ODP_DOMAIN_TIMESTAMP:
			return "timestamps";
		case ODP_DOMAIN_TIMESTAMPTZ:
			return "timestamps with time zone";
	}
	return "values";
}

/*
 * Ensures the two sources' regions can be compared: as many dimensions,
 * and each dimension's bounds of one domain (and box coordinates only
 * with box coordinates, which && compares with a tolerance).  A source
 * without rows has no pairs, whatever its dimensions.
 */
static void
IntervalCheckCompatible(const OdpInput *a, const OdpInput *b)
{
	if (a->rows == 0 || b->rows == 0)
		return;
	if (a->dims != b->dims)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("subscriptions have %d dimension%s but updates have %d",
						a->dims, a->dims == 1 ? "" : "s", b->dims),
				 errdetail("The regions of %s and of %s must have the same number of dimensions.",
						   a->source_desc, b->source_desc),
				 errhint("Name the columns to match with dims => '{...}' and other_dims => '{...}'.")));
	for (int d = 0; d < a->dims; d++)
	{
		const OdpRegionDim *ra = &a->region_dims[d];
		const OdpRegionDim *rb = &b->region_dims[d];

		if (ra->domain != rb->domain || ra->box != rb->box)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("dimension %d compares %s with %s", d + 1,
							IntervalDomainName(ra), IntervalDomainName(rb)),
					 errdetail("Dimension %d is %s (%s) of %s and %s (%s) of %s.", d + 1,
							   IntervalDimName(a, d), format_type_be(ra->typid), a->source_desc,
							   IntervalDimName(b, d), format_type_be(rb->typid), b->source_desc),
					 errhint("Give both sources bounds of one kind in each dimension, casting them in a query source if needed.")));
	}
}

/* Reads the sources (one read when both name the same data) and checks them. */
static void
IntervalReadSources(IntervalCall *call)
{
	OdpReadInput(&call->spec, &call->a);
	call->bp = NULL;
	if (!call->two)
		return;
	if (OdpSameSource(&call->spec, &call->other))
		call->b = call->a;
	else
		OdpReadInput(&call->other, &call->b);
	IntervalCheckCompatible(&call->a, &call->b);
	call->bp = &call->b;
}

/*
 * Reads the sources and makes their keys comparable: numeric bounds
 * ranked together (input_exact.c).
 */
static void
IntervalPrepareSources(IntervalCall *call)
{
	double		start;

	IntervalReadSources(call);
	start = odp_now_ms();
	if (!OdpRankExactBounds(&call->a, call->two ? &call->b : NULL))
	{
		/*
		 * A source read in parallel lacks values the ranking needs: read it
		 * again serially.  (One set, or one source twice, never gets here:
		 * a parallel read that would need its own values falls back itself.)
		 */
		OdpInput   *b = call->two ? &call->b : NULL;
		bool		again_a = OdpExactValuesMissing(&call->a, b);
		bool		again_b = OdpExactValuesMissing(b, &call->a);
		double		first_reads = (again_a ? call->a.read_ms : 0.0) +
			(again_b ? call->b.read_ms : 0.0);

		call->spec.serial = call->other.serial = true;
		if (again_a)
			OdpReadInput(&call->spec, &call->a);
		if (again_b)
			OdpReadInput(&call->other, &call->b);
		call->a.read_ms += first_reads;
		if (!OdpRankExactBounds(&call->a, b))
			elog(ERROR, "numeric bounds read serially still lack their values");
	}
	/* making keys is reading's work: counted in the subscriptions' read */
	call->a.read_ms += odp_now_ms() - start;
}

/* Whether a row of either source became several pieces (multiranges). */
static bool
IntervalHasPieces(const IntervalCall *call)
{
	return call->a.pieces || (call->bp != NULL && call->bp->pieces);
}

/* Where the pairs go: the result and the ids of both sides. */
typedef struct IntervalSink
{
	ReturnSetInfo *rsinfo;
	const int64 *ids_a;
	const int64 *ids_b;
} IntervalSink;

/* Stores a batch of pairs as result rows (id, id). */
static void
IntervalPutPairs(void *arg, const int64 *a, const int64 *b, const double *r,
				 int64 count)
{
	IntervalSink *sink = (IntervalSink *) arg;
	bool		nulls[INTERVAL_COLS] = {false, false};

	(void) r;
	for (int64 i = 0; i < count; i++)
	{
		Datum		values[INTERVAL_COLS];

		values[0] = Int64GetDatum(sink->ids_a[a[i]]);
		values[1] = Int64GetDatum(sink->ids_b[b[i]]);
		tuplestore_putvalues(sink->rsinfo->setResult, sink->rsinfo->setDesc,
							 values, nulls);
	}
}

/* The body of both odp_interval_match functions. */
static Datum
IntervalPairs(FunctionCallInfo fcinfo, const IntervalArgPos *pos)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	IntervalCall call;
	IntervalSink sink;
	OdpRunInfo	info;
	MemoryContext work,
				old;

	IntervalReadArgs(fcinfo, pos, &call);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == INTERVAL_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu interval match",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	IntervalPrepareSources(&call);
	sink.rsinfo = rsinfo;
	sink.ids_a = call.a.ids;
	sink.ids_b = call.bp != NULL ? call.bp->ids : call.a.ids;
	if (IntervalHasPieces(&call))
	{
		IntervalPieceMerge *merge = IntervalPieceMergeCreate(&call.a, call.bp,
															 IntervalPutPairs, &sink);

		OdpComputeIntervalPairs(&call.a, call.bp, IntervalPieceMergeAdd, merge, &info);
		info.pairs = IntervalPieceMergeFinish(merge);
	}
	else
		OdpComputeIntervalPairs(&call.a, call.bp, IntervalPutPairs, &sink, &info);
	MemoryContextSwitchTo(old);

	OdpReportTiming("odp_interval_match", &call.a, &info, info.emit_ms, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/* The body of both odp_interval_match_count functions. */
static Datum
IntervalCount(FunctionCallInfo fcinfo, const IntervalArgPos *pos)
{
	double		call_start = odp_now_ms();
	IntervalCall call;
	OdpRunInfo	info;
	MemoryContext work,
				old;
	int64		count;

	IntervalReadArgs(fcinfo, pos, &call);
	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu interval count",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	IntervalPrepareSources(&call);
	if (IntervalHasPieces(&call))
	{
		/* pairs of rows, not of pieces: the pairs are needed to count them */
		IntervalPieceMerge *merge = IntervalPieceMergeCreate(&call.a, call.bp, NULL, NULL);

		OdpComputeIntervalPairs(&call.a, call.bp, IntervalPieceMergeAdd, merge, &info);
		count = info.pairs = IntervalPieceMergeFinish(merge);
	}
	else
		count = OdpComputeIntervalCount(&call.a, call.bp, &info);
	MemoryContextSwitchTo(old);

	OdpReportTiming("odp_interval_match_count", &call.a, &info, 0.0, call_start);
	MemoryContextDelete(work);
	PG_RETURN_INT64(count);
}

/*
 * odp_interval_match(subscriptions, updates, dims, id_column, other_dims,
 *					  other_id_column, bounds)
 *	  -> TABLE(subscription_id bigint, update_id bigint): every
 *	  overlapping pair, by subscription_id, update_id.
 */
Datum
odp_interval_match(PG_FUNCTION_ARGS)
{
	return IntervalPairs(fcinfo, &interval_two);
}

/*
 * odp_interval_match(regions, dims, id_column, bounds)
 *	  -> TABLE(id_a bigint, id_b bigint): every overlapping pair of one
 *	  set, once (id_a < id_b), by id_a, id_b.
 */
Datum
odp_interval_match_self(PG_FUNCTION_ARGS)
{
	return IntervalPairs(fcinfo, &interval_one);
}

/* odp_interval_match_count(subscriptions, updates, ...) -> bigint */
Datum
odp_interval_match_count(PG_FUNCTION_ARGS)
{
	return IntervalCount(fcinfo, &interval_two);
}

/* odp_interval_match_count(regions, ...) -> bigint */
Datum
odp_interval_match_count_self(PG_FUNCTION_ARGS)
{
	return IntervalCount(fcinfo, &interval_one);
}
