/*-------------------------------------------------------------------------
 *
 * skyline.c
 *	  SQL entry points of the skyline: odp_skyline (the k-skyband of a
 *	  source, with each row's number of dominators) and odp_skyline_agg
 *	  (the skyline or k-skyband of each group).
 *
 * Features are read as float64 as stored; directions say, per feature,
 * whether smaller (min) or larger (max) is better.  Sources are read
 * sorted by id, so rows come out by id.  All memory of a call lives in
 * one child context deleted at the end.
 *
 * The aggregate keeps its rows as odp_top_outliers_agg does
 * (input_aggregate.c's OdpRowAccum, float64 here), checks that directions
 * and band are the same in every row of a group, and returns the ids in
 * ascending order.  Parsing directions and a source's k-skyband, which
 * the distributed skyline (distributed.c) shares, are in skyline_band.c.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/skyline.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "args.h"
#include "catalog/pg_type.h"
#include "distributed/distributed.h"
#include "distributed/distributed_wire.h"
#include "engine_glue.h"
#include "fmgr.h"
#include "funcapi.h"
#include "input/input.h"
#include "miscadmin.h"
#include "output.h"
#include "skyline_band.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_skyline);
PG_FUNCTION_INFO_V1(odp_skyline_agg_transfn);
PG_FUNCTION_INFO_V1(odp_skyline_agg_finalfn);
PG_FUNCTION_INFO_V1(odp_node_skyline);

#define SKYLINE_COLS	2

/* Argument positions of odp_skyline. */
#define SKY_ARG_SOURCE		0
#define SKY_ARG_DIRECTIONS	1
#define SKY_ARG_BAND		2
#define SKY_ARG_ID_COLUMN	3
#define SKY_ARG_FEATURES	4

/* Argument positions of the transition function (0 is the state). */
#define SKY_AGG_ARG_ID			1
#define SKY_AGG_ARG_FEATURES	2
#define SKY_AGG_ARG_DIRECTIONS	3
#define SKY_AGG_ARG_BAND		4

/*
 * Reads odp_skyline's arguments (odp_node_skyline's are the same) into
 * spec; returns band.
 */
static int32
SkylineReadArgs(FunctionCallInfo fcinfo, OdpInputSpec *spec)
{
	OdpArgNotNull(fcinfo, SKY_ARG_SOURCE, "source");
	memset(spec, 0, sizeof(*spec));
	spec->source = OdpArgSource(fcinfo, SKY_ARG_SOURCE);
	spec->id_column = OdpArgOptText(fcinfo, SKY_ARG_ID_COLUMN);
	spec->features = OdpArgOptArray(fcinfo, SKY_ARG_FEATURES);
	spec->values = ODP_VALUES_FLOAT8;
	return OdpArgPositive(fcinfo, SKY_ARG_BAND, "band");
}

/* Stores the rows of in that fewer than band rows dominate. */
static void
SkylineEmit(ReturnSetInfo *rsinfo, const OdpInput *in, const int32 *dominated_by,
			int32 band)
{
	for (int64 r = 0; r < in->rows; r++)
	{
		Datum		values[SKYLINE_COLS];
		bool		nulls[SKYLINE_COLS] = {false, false};

		if (dominated_by[r] >= band)
			continue;
		/* an anti-correlated skyline holds a third of the rows */
		if ((r & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		values[0] = Int64GetDatum(in->ids[r]);
		values[1] = Int32GetDatum(dominated_by[r]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * odp_node_skyline(source, directions, band, id_column, features)
 *	  -> the shard's rows that fewer than band of its rows dominate, with
 *	  their values (skyband payload), for a coordinator to merge.
 */
Datum
odp_node_skyline(PG_FUNCTION_ARGS)
{
	OdpInputSpec spec;
	OdpInput	in;
	uint8	   *maximize;
	int			nentries;
	int32		band;

	band = SkylineReadArgs(fcinfo, &spec);
	spec.empty_ok = true;
	maximize = OdpSkylineParseDirections(OdpArgOptArray(fcinfo, SKY_ARG_DIRECTIONS),
										 &nentries);
	OdpSkylineBandRows(&spec, maximize, nentries, band, &in);
	PG_RETURN_BYTEA_P(OdpWireFromSkyband(in.ids, in.data64, in.rows,
										 in.rows > 0 ? in.dims : 0));
}

/*
 * odp_skyline(source, directions, band, id_column, features)
 *	  -> TABLE(id bigint, dominated_by int): the rows fewer than band
 *	  rows dominate, by id, with their number of dominators.
 */
Datum
odp_skyline(PG_FUNCTION_ARGS)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OdpInputSpec spec;
	OdpInput	in;
	OdpRunInfo	info;
	MemoryContext work,
				old;
	uint8	   *maximize;
	int			nentries;
	int32		band;
	int32	   *dominated_by;
	double		start;

	band = SkylineReadArgs(fcinfo, &spec);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == SKYLINE_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu skyline",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	maximize = OdpSkylineParseDirections(OdpArgOptArray(fcinfo, SKY_ARG_DIRECTIONS),
										 &nentries);
	{
		OdpShardSet shards;

		if (OdpFindShards(&spec, &shards))
		{
			OdpDistributedSkyline(&shards, OdpArgOptArray(fcinfo, SKY_ARG_DIRECTIONS),
								  maximize, nentries, band, &in, &dominated_by);
			MemoryContextSwitchTo(old);
			SkylineEmit(rsinfo, &in, dominated_by, band);
			MemoryContextDelete(work);
			return (Datum) 0;
		}
	}
	OdpReadInput(&spec, &in);
	OdpSkylineCheckDirections(nentries, &in);
	dominated_by = MemoryContextAllocHuge(work, sizeof(int32) * (Size) in.rows);
	OdpComputeSkyline(&in, maximize, band, dominated_by, &info);
	MemoryContextSwitchTo(old);

	start = odp_now_ms();
	SkylineEmit(rsinfo, &in, dominated_by, band);
	OdpReportTiming("odp_skyline", &in, &info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/* Per-group state, in the aggregate's memory context. */
typedef struct SkylineAggState
{
	OdpRowAccum *rows;
	ArrayType  *directions;		/* the first row's, copied, or NULL */
	uint8	   *maximize;		/* parsed, or NULL (all min) */
	int			nentries;		/* their number; -1 for NULL */
	int32		band;
} SkylineAggState;

/*
 * Whether a row's directions are the state's: the same array, byte for
 * byte, is (the common case, checked without parsing); else they are
 * parsed and compared entry by entry, so that '{MIN}' equals '{min}'.
 */
static bool
SkylineSameDirections(const SkylineAggState *state, ArrayType *arr)
{
	uint8	   *maximize;
	int			nentries;

	if (arr == NULL || state->directions == NULL)
		return arr == NULL && state->directions == NULL;
	if (VARSIZE(arr) == VARSIZE(state->directions) &&
		memcmp(arr, state->directions, VARSIZE(arr)) == 0)
		return true;
	maximize = OdpSkylineParseDirections(arr, &nentries);
	if (state->nentries != nentries)
		return false;
	return nentries == 0 || memcmp(state->maximize, maximize, nentries) == 0;
}

/*
 * odp_skyline_agg transition function:
 *	  (internal, id bigint, features "any", directions text[] [, band int])
 *	  -> internal.  features is a numeric array or a pgvector value, read
 *	  as float64 as a source's vector column is.  Not strict: null ids and
 *	  vectors are errors, as in the table function; null directions mean
 *	  all min.
 */
Datum
odp_skyline_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	SkylineAggState *state;
	ArrayType  *directions;
	int32		band = 1;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "odp_skyline_agg_transfn called in non-aggregate context");
	if (PG_NARGS() > SKY_AGG_ARG_BAND)
		band = OdpArgPositive(fcinfo, SKY_AGG_ARG_BAND, "band");
	directions = OdpArgOptArray(fcinfo, SKY_AGG_ARG_DIRECTIONS);

	if (PG_ARGISNULL(0))
	{
		Oid			vectype = get_fn_expr_argtype(fcinfo->flinfo, SKY_AGG_ARG_FEATURES);
		MemoryContext old;

		state = (SkylineAggState *) MemoryContextAllocZero(aggcxt, sizeof(SkylineAggState));
		state->rows = OdpRowAccumCreate(aggcxt, "id", "features", vectype,
										ODP_VALUES_FLOAT8);
		old = MemoryContextSwitchTo(aggcxt);
		state->maximize = OdpSkylineParseDirections(directions, &state->nentries);
		if (directions != NULL)
			state->directions = DatumGetArrayTypePCopy(PointerGetDatum(directions));
		MemoryContextSwitchTo(old);
		state->band = band;
	}
	else
	{
		state = (SkylineAggState *) PG_GETARG_POINTER(0);
		if (!SkylineSameDirections(state, directions))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("directions must be the same in every row of a group"),
					 errhint("Pass a constant directions array.")));
		if (state->band != band)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("band must be the same in every row of a group, but is %d and %d",
							state->band, band),
					 errhint("Pass a constant band.")));
	}

	OdpRowAccumAdd(state->rows, fcinfo, SKY_AGG_ARG_ID, SKY_AGG_ARG_FEATURES);
	PG_RETURN_POINTER(state);
}

/*
 * odp_skyline_agg final function: (internal) -> bigint[], the ids of the
 * group's skyline (k-skyband), ascending; NULL for no rows.  Orders the
 * state's rows in place.
 */
Datum
odp_skyline_agg_finalfn(PG_FUNCTION_ARGS)
{
	double		call_start = odp_now_ms();
	SkylineAggState *state;
	MemoryContext work,
				old;
	OdpInput	in;
	OdpRunInfo	info;
	int32	   *dominated_by;
	Datum	   *elems;
	int64		count = 0;
	ArrayType  *result;
	double		start;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "odp_skyline_agg_finalfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (SkylineAggState *) PG_GETARG_POINTER(0);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu skyline aggregate",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	OdpRowAccumFinish(state->rows, "the group", &in);
	OdpSkylineCheckDirections(state->nentries, &in);
	dominated_by = MemoryContextAllocHuge(work, sizeof(int32) * (Size) in.rows);
	OdpComputeSkyline(&in, state->maximize, state->band, dominated_by, &info);

	start = odp_now_ms();
	elems = (Datum *) MemoryContextAllocHuge(work, sizeof(Datum) * (Size) in.rows);
	for (int64 r = 0; r < in.rows; r++)
		if (dominated_by[r] < state->band)
			elems[count++] = Int64GetDatum(in.ids[r]);

	/* the array is the result: build it in the caller's context */
	MemoryContextSwitchTo(old);
	result = construct_array(elems, (int) count, INT8OID, sizeof(int64),
							 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	OdpReportTiming("odp_skyline_agg", &in, &info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	PG_RETURN_ARRAYTYPE_P(result);
}
