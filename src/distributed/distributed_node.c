/*-------------------------------------------------------------------------
 *
 * distributed_node.c
 *	  The node's side of the distributed calls: plain SQL functions that
 *	  any coordinator can drive over a connection (the calling server of a
 *	  sharded table does, distributed.c; a Citus coordinator could).
 *
 * A distributed SolvingSet keeps state between calls: odp_node_ss_open
 * reads the shard once and returns a handle, odp_node_ss_first, _exact
 * and _next do one step each on it (bytea payloads in and out, distributed_wire.h)
 * and odp_node_ss_close frees it.  The state belongs to the connection
 * (the backend), not to a transaction, so a driver that commits between
 * steps works too; closing the connection frees it with the backend.  It
 * holds host memory only: every step takes and frees its GPU memory.
 * odp_node_knn and odp_node_skyline (skyline.c) are single calls.
 *
 * The rows are read in the distances' precision (input.h), which the
 * calling server sets on the connection (odp_gpu.distance_precision =
 * float32 or float64, as it decided from the table's column types), so
 * that every node computes in the calling server's precision whatever its
 * own column types; every payload says which it is in.
 *
 * Every function reads with the caller's rights: on a node that is the
 * role the calling server's user mapping names, so that role's privileges
 * and row-level security decide what the shard holds.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed_node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "args.h"
#include "distributed/distributed_wire.h"
#include "engine_glue.h"
#include "fmgr.h"
#include "funcapi.h"
#include "input/input.h"
#include "settings.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(odp_node_protocol);
PG_FUNCTION_INFO_V1(odp_node_ss_open);
PG_FUNCTION_INFO_V1(odp_node_ss_first);
PG_FUNCTION_INFO_V1(odp_node_ss_exact);
PG_FUNCTION_INFO_V1(odp_node_ss_next);
PG_FUNCTION_INFO_V1(odp_node_ss_close);
PG_FUNCTION_INFO_V1(odp_node_knn);

/* Open SolvingSet states one connection may hold. */
#define NODE_MAX_SESSIONS 16

typedef struct NodeSession
{
	int32		handle;
	MemoryContext cxt;			/* holds in and this struct */
	OdpInput	in;
	OdpMatrix	matrix;
	OdpShardState node;			/* here or in the GPU service */
	int32		k;
	bool		wide;			/* float64 rows */
} NodeSession;

static NodeSession *node_sessions[NODE_MAX_SESSIONS];
static int32 node_next_handle = 1;

static void
NodeSessionFree(int slot)
{
	NodeSession *s = node_sessions[slot];

	node_sessions[slot] = NULL;
	OdpShardStateClose(&s->node);
	MemoryContextDelete(s->cxt);
}

static int
NodeSessionSlot(FunctionCallInfo fcinfo)
{
	int32		handle;

	OdpArgNotNull(fcinfo, 0, "handle");
	handle = PG_GETARG_INT32(0);
	for (int i = 0; i < NODE_MAX_SESSIONS; i++)
		if (node_sessions[i] != NULL && node_sessions[i]->handle == handle)
			return i;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("no open SolvingSet state %d in this connection", handle),
			 errhint("odp_node_ss_open returns the handle; states belong to the connection that opened them.")));
	return -1;
}

/* k of a node step: the engine needs one more than k at most ODP_MAX_K. */
static int32
NodeArgK(FunctionCallInfo fcinfo, int argno)
{
	int32		k = OdpArgK(fcinfo, argno);

	if (k >= ODP_MAX_K)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k = %d: a node step takes k up to %d", k, ODP_MAX_K - 1)));
	return k;
}

static int64
NodeArgBatch(FunctionCallInfo fcinfo, int argno)
{
	int64		m;

	OdpArgNotNull(fcinfo, argno, "m");
	m = PG_GETARG_INT64(argno);
	if (m < 1 || m > ODP_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("m = " INT64_FORMAT " is out of range", m)));
	return m;
}

/*
 * Reads a shard in the distances' precision: the one the calling server
 * set (float32 or float64, even for no rows), else the rule of the
 * column types.  Sets *wide for float64 rows.
 */
static void
NodeReadShard(OdpInputSpec *spec, OdpMetric metric, OdpInput *in, bool *wide)
{
	switch ((OdpPrecisionSetting) odp_distance_precision)
	{
		case ODP_PRECISION_FLOAT32:
			spec->values = ODP_VALUES_FLOAT4;
			break;
		case ODP_PRECISION_FLOAT64:
			spec->values = ODP_VALUES_FLOAT8;
			break;
		case ODP_PRECISION_AUTO:
			spec->values = ODP_VALUES_DISTANCE;
			break;
	}
	OdpReadInput(spec, in);
	OdpCheckCosineRows(in, metric);
	*wide = spec->values == ODP_VALUES_FLOAT8 || in->data64 != NULL;
}

/* odp_node_protocol() -> the version of the node functions' protocol. */
Datum
odp_node_protocol(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(ODP_NODE_PROTOCOL);
}

/*
 * odp_node_ss_open(source, k, id_column, features, metric, bounds)
 *	  -> (handle int, rows bigint, dims int): reads the shard and keeps a
 *	  SolvingSet node state over it (bounds false: for a brute force).
 */
Datum
odp_node_ss_open(PG_FUNCTION_ARGS)
{
	OdpInputSpec spec;
	OdpMetric	metric;
	int32		k;
	bool		bounds;
	int			slot = -1;
	NodeSession *s;
	MemoryContext cxt,
				old;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	OdpArgNotNull(fcinfo, 0, "source");
	k = NodeArgK(fcinfo, 1);
	metric = OdpArgMetric(fcinfo, 4, false);
	OdpArgNotNull(fcinfo, 5, "bounds");
	bounds = PG_GETARG_BOOL(5);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "odp_node_ss_open must return a record");
	for (int i = 0; i < NODE_MAX_SESSIONS; i++)
		if (node_sessions[i] == NULL)
		{
			slot = i;
			break;
		}
	if (slot < 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("this connection holds %d open SolvingSet states already",
						NODE_MAX_SESSIONS),
				 errhint("Close them with odp_node_ss_close.")));

	memset(&spec, 0, sizeof(spec));
	spec.source = PG_GETARG_TEXT_PP(0);
	spec.id_column = OdpArgOptText(fcinfo, 2);
	spec.features = OdpArgOptArray(fcinfo, 3);
	spec.empty_ok = true;

	cxt = AllocSetContextCreate(TopMemoryContext, "odp_gpu node state",
								ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		old = MemoryContextSwitchTo(cxt);
		s = palloc0(sizeof(NodeSession));
		s->cxt = cxt;
		NodeReadShard(&spec, metric, &s->in, &s->wide);
		MemoryContextSwitchTo(old);
		s->matrix.data = s->in.data;
		s->matrix.data64 = s->in.data64;
		s->matrix.rows = s->in.rows;
		s->matrix.dims = s->in.dims;
		s->matrix.ids = s->in.ids;
		s->k = k;
		OdpShardStateOpen(&s->node, OdpChooseGpu(s->in.rows, s->in.rows), &s->matrix,
					metric, k, bounds);
	}
	PG_CATCH();
	{
		MemoryContextDelete(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	s->handle = node_next_handle++;
	if (node_next_handle <= 0)
		node_next_handle = 1;
	node_sessions[slot] = s;

	values[0] = Int32GetDatum(s->handle);
	values[1] = Int64GetDatum(s->in.rows);
	values[2] = Int32GetDatum(s->in.rows > 0 ? s->in.dims : 0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/* odp_node_ss_first(handle, m) -> the first proposals (rows payload). */
Datum
odp_node_ss_first(PG_FUNCTION_ARGS)
{
	NodeSession *s = node_sessions[NodeSessionSlot(fcinfo)];
	int64		m = NodeArgBatch(fcinfo, 1);
	OdpSsRows	out;

	OdpSsRowsAlloc(&out, Min(m, s->in.rows), s->in.dims, s->wide);
	OdpShardStateFirst(&s->node, m, &out);
	PG_RETURN_BYTEA_P(OdpWireFromRows(&out, 0));
}

/*
 * odp_node_ss_exact(handle, candidates) -> every candidate's k smallest
 * distances to the shard (lists payload, with the distances evaluated),
 * after which the node's bounds include the candidates.
 */
Datum
odp_node_ss_exact(PG_FUNCTION_ARGS)
{
	NodeSession *s = node_sessions[NodeSessionSlot(fcinfo)];
	bytea	   *payload;
	OdpWire		w;
	OdpSsRows	cands;
	double	   *lists;
	int64		distances = 0;

	OdpArgNotNull(fcinfo, 1, "candidates");
	payload = PG_GETARG_BYTEA_PP(1);
	OdpWireRead(VARDATA_ANY(payload), VARSIZE_ANY_EXHDR(payload), ODP_WIRE_ROWS,
				"the coordinator", &w);
	OdpWireCheckPrecision(&w, s->wide, "the coordinator");
	OdpWireRowsView(&w, &cands);
	lists = MemoryContextAllocHuge(CurrentMemoryContext,
								   sizeof(double) * (Size) Max(w.count, 1) * (Size) s->k);
	OdpShardStateExact(&s->node, &cands, lists, &distances);
	PG_RETURN_BYTEA_P(OdpWireFromLists(lists, w.count, s->k, s->wide, distances));
}

/*
 * odp_node_ss_next(handle, prune, min_out, m) -> the node's next
 * proposals (rows payload), after pruning below min_out when prune.
 */
Datum
odp_node_ss_next(PG_FUNCTION_ARGS)
{
	NodeSession *s = node_sessions[NodeSessionSlot(fcinfo)];
	bool		prune;
	double		min_out;
	int64		m;
	OdpSsRows	out;

	OdpArgNotNull(fcinfo, 1, "prune");
	OdpArgNotNull(fcinfo, 2, "min_out");
	prune = PG_GETARG_BOOL(1);
	min_out = PG_GETARG_FLOAT8(2);
	m = NodeArgBatch(fcinfo, 3);
	OdpSsRowsAlloc(&out, Min(m, s->in.rows), s->in.dims, s->wide);
	OdpShardStateNext(&s->node, prune, min_out, m, &out);
	PG_RETURN_BYTEA_P(OdpWireFromRows(&out, 0));
}

/* odp_node_ss_close(handle) -> frees the state; true when it was open. */
Datum
odp_node_ss_close(PG_FUNCTION_ARGS)
{
	int32		handle;

	OdpArgNotNull(fcinfo, 0, "handle");
	handle = PG_GETARG_INT32(0);
	for (int i = 0; i < NODE_MAX_SESSIONS; i++)
		if (node_sessions[i] != NULL && node_sessions[i]->handle == handle)
		{
			NodeSessionFree(i);
			PG_RETURN_BOOL(true);
		}
	PG_RETURN_BOOL(false);
}

/*
 * odp_node_knn(source, queries, k, id_column, features, metric,
 *				exclude_self)
 *	  -> for every query row (rows payload), its k nearest rows of the
 *	  shard (k-NN payload: ids, -1 where the shard has too few rows, and
 *	  distances); exclude_self leaves out the row whose id is the query's.
 */
Datum
odp_node_knn(PG_FUNCTION_ARGS)
{
	OdpInputSpec spec;
	OdpInput	in;
	bytea	   *payload;
	OdpWire		w;
	OdpMatrix	qm = {0};
	OdpMatrix	sm = {0};
	OdpMetric	metric;
	int32		k;
	bool		exclude_self;
	bool		wide;
	double	   *dist;
	int64	   *ids;
	Size		n;

	OdpArgNotNull(fcinfo, 0, "source");
	OdpArgNotNull(fcinfo, 1, "queries");
	k = NodeArgK(fcinfo, 2);
	metric = OdpArgMetric(fcinfo, 5, true);
	OdpArgNotNull(fcinfo, 6, "exclude_self");
	exclude_self = PG_GETARG_BOOL(6);
	payload = PG_GETARG_BYTEA_PP(1);
	OdpWireRead(VARDATA_ANY(payload), VARSIZE_ANY_EXHDR(payload), ODP_WIRE_ROWS,
				"the coordinator", &w);

	memset(&spec, 0, sizeof(spec));
	spec.source = PG_GETARG_TEXT_PP(0);
	spec.id_column = OdpArgOptText(fcinfo, 3);
	spec.features = OdpArgOptArray(fcinfo, 4);
	spec.empty_ok = true;
	NodeReadShard(&spec, metric, &in, &wide);
	OdpWireCheckPrecision(&w, wide, "the coordinator");
	if (in.rows > 0 && w.count > 0 && w.dims != in.dims)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("queries have %d values but the rows of %s have %d",
						w.dims, in.source_desc, in.dims)));
	qm.data = w.floats;
	qm.data64 = w.doubles;
	qm.rows = w.count;
	qm.dims = w.dims;
	sm.data = in.data;
	sm.data64 = in.data64;
	sm.rows = in.rows;
	sm.dims = in.dims;
	n = (Size) Max(w.count, 1) * (Size) k;
	dist = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * n);
	ids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
	OdpComputeKnnExcluding(&qm, exclude_self ? w.ids : NULL, &sm, in.ids,
						   metric, k, dist, ids);
	PG_RETURN_BYTEA_P(OdpWireFromKnn(dist, ids, w.count, k, wide));
}
