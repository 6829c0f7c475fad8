/*-------------------------------------------------------------------------
 *
 * distributed.c
 *	  Distributed calls on a sharded table (distributed.h): the calling server is
 *	  the supervisor, every shard a node.
 *
 * Remote shards are reached over libpq (distributed_conn.c) and run the node
 * functions (distributed_node.c, skyline.c) on their own GPU or CPU path; local
 * shards run the same engine steps in this backend while the remote ones
 * work.  Only candidates, neighbour lists, queries and skyband rows travel
 * (distributed_wire.h); no shard is ever pulled.
 *
 * Every shard computes in the precision reading the table here would give
 * (OdpShardSet.float64): the local shards are read in it, the nodes are
 * told it when connecting, and every payload they return is checked to
 * be in it.
 *
 * The engine's loop (odp_ss_distributed) calls back here for each round;
 * a callback must not jump out of the engine, so an error raised in one
 * (a node's error, a lost connection, a cancel) is kept and re-thrown
 * when the loop has returned.  Connections are closed, and any command
 * still running on a node cancelled, on every path.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "args.h"
#include "catalog/pg_type.h"
#include "distributed/distributed.h"
#include "distributed/distributed_conn.h"
#include "distributed/distributed_wire.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/pg_bswap.h"
#include "settings.h"
#include "skyline_band.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/* A local shard's state. */
typedef struct DistributedLocal
{
	OdpInput	in;
	OdpMatrix	m;
	OdpShardState node;
} DistributedLocal;

/* One distributed call; palloc'd, so that PG_FINALLY sees its fields. */
typedef struct DistributedCall
{
	const OdpShardSet *set;
	const char *what;
	OdpNodeConn **conns;		/* per remote shard */
	int		   *remote_of;		/* per shard: index into conns, or -1 */
	DistributedLocal  *local;			/* per shard (local ones) */
	int32	   *handle;			/* per shard (remote SolvingSet state) */
	int64	   *rows;			/* per shard */
	int32		dims;
	int64		total_rows;
	int32		k;
	ErrorData  *pending;		/* raised in a callback, thrown after */
	MemoryContext call_cxt;
	MemoryContext step_cxt;		/* reset every round */
	int64		distances;
	double		start_ms;
} DistributedCall;

static DistributedCall *
DistributedBegin(const OdpShardSet *set, const char *what)
{
	DistributedCall   *c = palloc0(sizeof(DistributedCall));

	c->set = set;
	c->what = what;
	c->start_ms = odp_now_ms();
	c->call_cxt = CurrentMemoryContext;
	c->step_cxt = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu node round",
										ALLOCSET_DEFAULT_SIZES);
	c->conns = palloc0(sizeof(OdpNodeConn *) * Max(set->remote_count, 1));
	c->remote_of = palloc(sizeof(int) * set->count);
	c->local = palloc0(sizeof(DistributedLocal) * set->count);
	c->handle = palloc0(sizeof(int32) * set->count);
	c->rows = palloc0(sizeof(int64) * set->count);
	return c;
}

static void
DistributedConnect(DistributedCall *c)
{
	const OdpShard **remote = palloc(sizeof(OdpShard *) * Max(c->set->remote_count, 1));
	int			r = 0;

	for (int s = 0; s < c->set->count; s++)
	{
		c->remote_of[s] = c->set->shards[s].remote ? r : -1;
		if (c->set->shards[s].remote)
			remote[r++] = &c->set->shards[s];
	}
	OdpNodesConnect(remote, r, c->set->float64, c->conns);
}

/* Closes the connections and frees the engine's node states. */
static void
DistributedEnd(DistributedCall *c)
{
	OdpNodesClose(c->conns, c->set->remote_count);
	for (int s = 0; s < c->set->count; s++)
	{
		OdpShardStateClose(&c->local[s].node);
	}
}

static int64
DistributedBytes(const DistributedCall *c)
{
	int64		bytes = 0;

	for (int r = 0; r < c->set->remote_count; r++)
		if (c->conns[r] != NULL)
			bytes += OdpNodeBytes(c->conns[r]);
	return bytes;
}

/* A text[] literal of names (C strings), for a parameter. */
static char *
DistributedTextArrayLiteral(List *names)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	foreach(lc, names)
	{
		const char *name = (const char *) lfirst(lc);

		if (lc != list_head(names))
			appendStringInfoChar(&buf, ',');
		appendStringInfoChar(&buf, '"');
		for (const char *p = name; *p; p++)
		{
			if (*p == '"' || *p == '\\')
				appendStringInfoChar(&buf, '\\');
			appendStringInfoChar(&buf, *p);
		}
		appendStringInfoChar(&buf, '"');
	}
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/* Reads a local shard in-process, as the parent's query would. */
static void
DistributedReadLocal(DistributedCall *c, int s, const OdpInputSpec *like, OdpMetric metric)
{
	OdpInputSpec spec;
	DistributedLocal  *l = &c->local[s];

	OdpLocalShardSpec(c->set, &c->set->shards[s], like, &spec);
	/* as the nodes read theirs: in the call's precision */
	spec.values = c->set->float64 ? ODP_VALUES_FLOAT8 : ODP_VALUES_FLOAT4;
	OdpReadInput(&spec, &l->in);
	OdpCheckCosineRows(&l->in, metric);
	l->m.data = l->in.data;
	l->m.data64 = l->in.data64;
	l->m.rows = l->in.rows;
	l->m.dims = l->in.dims;
	l->m.ids = l->in.ids;
	c->rows[s] = l->in.rows;
}

/* Records a shard's dimensions; shards must agree. */
static void
DistributedCheckDims(DistributedCall *c, int s, int32 dims)
{
	if (c->rows[s] == 0)
		return;
	if (c->dims == 0)
		c->dims = dims;
	else if (dims != c->dims)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("the shards of %s have different numbers of features", c->set->desc),
				 errdetail("%s has %d, another shard %d.", c->set->shards[s].desc,
						   dims, c->dims)));
}

/* Waits for every remote shard's reply. */
static void
DistributedWait(DistributedCall *c)
{
	OdpNodesWait(c->conns, c->set->remote_count);
}

/* The binary payload of remote shard s's last reply. */
static void
DistributedReply(DistributedCall *c, int s, OdpWireKind kind, OdpWire *w)
{
	int			len;
	const char *v = OdpNodeValue(c->conns[c->remote_of[s]], 0, &len);

	OdpWireRead(v, (Size) len, kind, c->set->shards[s].desc, w);
}

/* Keeps the error being raised in c, for after the engine's loop. */
static void
DistributedKeepError(DistributedCall *c, MemoryContext old)
{
	MemoryContextSwitchTo(c->call_cxt);
	c->pending = CopyErrorData();
	FlushErrorState();
	MemoryContextSwitchTo(old);
}

/* ---- SolvingSet rounds ---- */

/* One round's arguments, as the engine's callbacks receive them. */
typedef enum DistributedRoundKind
{
	DISTRIBUTED_ROUND_FIRST,
	DISTRIBUTED_ROUND_EXACT,
	DISTRIBUTED_ROUND_NEXT
} DistributedRoundKind;

typedef struct DistributedRound
{
	DistributedRoundKind kind;
	int64		m;
	OdpSsRows  *props;
	const OdpSsRows *cands;
	double	  **lists;
	bool		prune;
	double		min_out;
} DistributedRound;

/* A round's command and parameters for remote shard s. */
static void
DistributedRoundSend(DistributedCall *c, int s, const DistributedRound *r, const bytea *cands,
					 const uint64 *min_out_bits)
{
	OdpNodeConn *node = c->conns[c->remote_of[s]];
	const char *schema = OdpNodeSchema(node);
	const char *handle = psprintf("%d", c->handle[s]);
	const char *m = psprintf(INT64_FORMAT, r->m);

	switch (r->kind)
	{
		case DISTRIBUTED_ROUND_FIRST:
			{
				const char *values[2] = {handle, m};

				OdpNodeSend(node, psprintf("SELECT %s.odp_node_ss_first($1::int4, $2::int8)", schema),
							2, values, NULL, NULL);
				break;
			}
		case DISTRIBUTED_ROUND_EXACT:
			{
				const char *values[2] = {handle, VARDATA(cands)};
				const int	lengths[2] = {0, (int) (VARSIZE(cands) - VARHDRSZ)};
				const int	formats[2] = {0, 1};

				OdpNodeSend(node, psprintf("SELECT %s.odp_node_ss_exact($1::int4, $2::bytea)", schema),
							2, values, lengths, formats);
				break;
			}
		case DISTRIBUTED_ROUND_NEXT:
			{
				const char *values[4] = {handle, r->prune ? "true" : "false",
				(const char *) min_out_bits, m};
				const int	lengths[4] = {0, 0, sizeof(uint64), 0};
				const int	formats[4] = {0, 0, 1, 0};

				OdpNodeSend(node, psprintf("SELECT %s.odp_node_ss_next($1::int4, $2::bool, $3::float8, $4::int8)",
										   schema),
							4, values, lengths, formats);
				break;
			}
	}
}

/* A round's step on local shard s, in this backend or in the GPU service. */
static void
DistributedRoundLocal(DistributedCall *c, int s, const DistributedRound *r)
{
	DistributedLocal *l = &c->local[s];

	switch (r->kind)
	{
		case DISTRIBUTED_ROUND_FIRST:
			OdpShardStateFirst(&l->node, r->m, &r->props[s]);
			break;
		case DISTRIBUTED_ROUND_EXACT:
			OdpShardStateExact(&l->node, r->cands, r->lists[s], &c->distances);
			break;
		case DISTRIBUTED_ROUND_NEXT:
			OdpShardStateNext(&l->node, r->prune, r->min_out, r->m, &r->props[s]);
			break;
	}
}

/* Remote shard s's reply to a round, into the round's buffers. */
static void
DistributedRoundReceive(DistributedCall *c, int s, const DistributedRound *r)
{
	OdpWire		w;

	if (r->kind != DISTRIBUTED_ROUND_EXACT)
	{
		DistributedReply(c, s, ODP_WIRE_ROWS, &w);
		OdpWireToRows(&w, &r->props[s], c->set->shards[s].desc);
		return;
	}
	DistributedReply(c, s, ODP_WIRE_LISTS, &w);
	if (w.count != r->cands->count || w.width != c->k)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("malformed message from %s: lists of another shape",
						c->set->shards[s].desc)));
	OdpWireCheckPrecision(&w, c->set->float64, c->set->shards[s].desc);
	OdpWireDistances(&w, r->lists[s]);
	c->distances += w.figure;
}

/*
 * One round on every shard: the commands go to the remote shards first,
 * so that they work while the local shards' steps run here.
 */
static void
DistributedRoundAll(DistributedCall *c, const DistributedRound *r)
{
	bytea	   *cands = NULL;
	uint64		bits = 0;

	if (r->kind == DISTRIBUTED_ROUND_EXACT)
	{
		cands = OdpWireFromRows(r->cands, 0);
		if (VARSIZE(cands) - VARHDRSZ > (Size) INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a candidate batch of " INT64_FORMAT " rows is too large to send",
							r->cands->count)));
	}
	if (r->kind == DISTRIBUTED_ROUND_NEXT)
	{
		memcpy(&bits, &r->min_out, sizeof(bits));
		bits = pg_hton64(bits);
	}
	for (int s = 0; s < c->set->count; s++)
		if (c->remote_of[s] >= 0)
			DistributedRoundSend(c, s, r, cands, &bits);
	for (int s = 0; s < c->set->count; s++)
		if (c->remote_of[s] < 0)
			DistributedRoundLocal(c, s, r);
	DistributedWait(c);
	for (int s = 0; s < c->set->count; s++)
		if (c->remote_of[s] >= 0)
			DistributedRoundReceive(c, s, r);
}

/*
 * Runs a round for the engine's loop in the round context, turning an
 * error into a status and keeping it for the caller to throw.
 */
static OdpStatus
DistributedRunRound(DistributedCall *c, const DistributedRound *r)
{
	MemoryContext old = MemoryContextSwitchTo(c->step_cxt);
	volatile OdpStatus status = ODP_OK;

	MemoryContextReset(c->step_cxt);
	PG_TRY();
	{
		DistributedRoundAll(c, r);
	}
	PG_CATCH();
	{
		DistributedKeepError(c, c->step_cxt);
		status = ODP_ERR_INTERNAL;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	return status;
}

static OdpStatus
DistributedCbFirst(void *arg, int64 m, OdpSsRows *props)
{
	DistributedRound	r = {.kind = DISTRIBUTED_ROUND_FIRST, .m = m, .props = props};

	return DistributedRunRound((DistributedCall *) arg, &r);
}

static OdpStatus
DistributedCbExact(void *arg, const OdpSsRows *cands, double **lists)
{
	DistributedRound	r = {.kind = DISTRIBUTED_ROUND_EXACT, .cands = cands, .lists = lists};

	return DistributedRunRound((DistributedCall *) arg, &r);
}

static OdpStatus
DistributedCbNext(void *arg, bool prune, double min_out, int64 m, OdpSsRows *props)
{
	DistributedRound	r = {.kind = DISTRIBUTED_ROUND_NEXT, .prune = prune, .min_out = min_out,
	.m = m, .props = props};

	return DistributedRunRound((DistributedCall *) arg, &r);
}

/* Opens the SolvingSet state on every shard, remote ones meanwhile. */
static void
DistributedOpenShards(DistributedCall *c, const OdpInputSpec *spec, OdpMetric metric, bool bounds)
{
	for (int s = 0; s < c->set->count; s++)
	{
		const OdpShard *shard = &c->set->shards[s];
		OdpNodeConn *node;
		const char *values[6];

		if (c->remote_of[s] < 0)
			continue;
		node = c->conns[c->remote_of[s]];
		values[0] = shard->source;
		values[1] = psprintf("%d", c->k);
		values[2] = shard->id_column;
		values[3] = DistributedTextArrayLiteral(shard->features);
		values[4] = odp_metric_name(metric);
		values[5] = bounds ? "true" : "false";
		OdpNodeSend(node, psprintf("SELECT handle, rows, dims FROM %s.odp_node_ss_open("
								   "$1::text, $2::int4, $3::text, $4::text[], $5::text, $6::bool)",
								   OdpNodeSchema(node)),
					6, values, NULL, NULL);
	}
	for (int s = 0; s < c->set->count; s++)
	{
		DistributedLocal  *l = &c->local[s];

		if (c->remote_of[s] >= 0)
			continue;
		DistributedReadLocal(c, s, spec, metric);
		OdpShardStateOpen(&l->node, OdpChooseGpu(l->in.rows, l->in.rows), &l->m, metric,
					c->k, bounds);
		DistributedCheckDims(c, s, l->in.dims);
	}
	DistributedWait(c);
	for (int s = 0; s < c->set->count; s++)
	{
		OdpNodeConn *node;
		int			len;
		const char *v;

		if (c->remote_of[s] < 0)
			continue;
		node = c->conns[c->remote_of[s]];
		v = OdpNodeValue(node, 0, &len);
		c->handle[s] = (int32) pg_ntoh32(*(const uint32 *) v);
		v = OdpNodeValue(node, 1, &len);
		{
			uint64		r;

			memcpy(&r, v, sizeof(r));
			c->rows[s] = (int64) pg_ntoh64(r);
		}
		v = OdpNodeValue(node, 2, &len);
		DistributedCheckDims(c, s, (int32) pg_ntoh32(*(const uint32 *) v));
	}
	for (int s = 0; s < c->set->count; s++)
		c->total_rows += c->rows[s];
}

/* Raises the overflow of the distances from what, in the call's precision. */
static void
DistributedOverflow(const OdpShardSet *set, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("distances from %s overflow %s precision", what,
					set->float64 ? "double" : "single"),
			 errdetail("odp_gpu computes these distances in %s, whose largest value is about %s.",
					   set->float64 ? "float64" : "float32",
					   set->float64 ? "1.8e308" : "3.4e38"),
			 errhint("Scale the features down, for example by dividing them by their standard deviation.")));
}

static void
DistributedReport(const DistributedCall *c, const char *extra)
{
	double		total = odp_now_ms() - c->start_ms;

	if (!odp_report_timing)
		return;
	ereport(NOTICE,
			(errmsg("odp_gpu timing: %s distributed nodes=%d remote=%d rows=" INT64_FORMAT
					" dims=%d precision=%s total=%.1f ms bytes=" INT64_FORMAT "%s",
					c->what, c->set->count, c->set->remote_count, c->total_rows,
					c->dims, c->set->float64 ? "float64" : "float32", total,
					DistributedBytes(c), extra)));
}

void
OdpDistributedTopOutliers(const OdpShardSet *set, const OdpInputSpec *spec,
						  OdpMetric metric, int32 k, int64 n, OdpOutlierMethod method,
						  int64 batch_size, bool want_set, const char *what,
						  OdpDistributedTop *top)
{
	DistributedCall   *c = DistributedBegin(set, what);
	bool		prune = method != ODP_METHOD_BRUTEFORCE && method != ODP_METHOD_SPATIAL;
	OdpSsSupervisor *volatile sup = NULL;

	memset(top, 0, sizeof(*top));
	c->k = k;
	PG_TRY();
	{
		OdpEngineCall call;
		OdpSsNodes	ops;
		OdpSsRows	cands;
		OdpSsRows  *props;
		double	  **lists;
		int64		m;
		double		sup_ms = 0.0;
		OdpStatus	status;
		int32		iterations;

		DistributedConnect(c);
		DistributedOpenShards(c, spec, metric, prune);
		OdpCheckKAgainstRows(k, c->total_rows, set->desc);
		n = Min(n, c->total_rows);
		m = odp_ss_batch_size(c->total_rows, n, batch_size);
		props = palloc(sizeof(OdpSsRows) * set->count);
		lists = palloc(sizeof(double *) * set->count);
		for (int s = 0; s < set->count; s++)
		{
			OdpSsRowsAlloc(&props[s], m, c->dims, set->float64);
			lists[s] = MemoryContextAllocHuge(CurrentMemoryContext,
											  sizeof(double) * (Size) m * (Size) k);
		}
		OdpSsRowsAlloc(&cands, m, c->dims, set->float64);
		ops.count = set->count;
		ops.arg = c;
		ops.first = DistributedCbFirst;
		ops.exact = DistributedCbExact;
		ops.next = DistributedCbNext;

		/* the supervisor's own work is host work */
		OdpEngineCallBegin(&call, false);
		status = odp_ss_sup_create(&call.ctx, c->total_rows, k, n, m, prune,
								   (OdpSsSupervisor **) &sup);
		if (status == ODP_OK)
			status = odp_ss_distributed(&call.ctx, sup, &ops, props, &cands,
										lists, &sup_ms);
		if (c->pending != NULL)
			ReThrowError(c->pending);
		OdpEngineCallEnd(&call, status);

		top->ids = palloc(sizeof(int64) * Max(n, 1));
		top->scores = palloc(sizeof(double) * Max(n, 1));
		top->count = odp_ss_sup_top(sup, top->ids, top->scores);
		for (int64 i = 0; i < top->count; i++)
			if (!isfinite(top->scores[i]))
				DistributedOverflow(set, psprintf("the row with id " INT64_FORMAT,
												  top->ids[i]));
		if (want_set)
		{
			top->members = odp_ss_sup_set_size(sup);
			top->member_ids = MemoryContextAllocHuge(CurrentMemoryContext,
													 sizeof(int64) * (Size) Max(top->members, 1));
			top->member_scores = MemoryContextAllocHuge(CurrentMemoryContext,
														sizeof(double) * (Size) Max(top->members, 1));
			odp_ss_sup_set(sup, top->member_ids, top->member_scores);
		}
		top->rows = c->total_rows;
		top->dims = c->dims;
		iterations = odp_ss_sup_iterations(sup);
		{
			double		total = odp_now_ms() - c->start_ms;

			DistributedReport(c, psprintf(" method=%s iterations=%d solving_set=" INT64_FORMAT
										  " distances=" INT64_FORMAT " supervisor=%.1f ms (%.2f%%)"
										  " bytes_per_iteration=" INT64_FORMAT,
										  prune ? "solvingset" : "bruteforce", iterations,
										  odp_ss_sup_set_size(sup), c->distances, sup_ms,
										  total > 0 ? 100.0 * sup_ms / total : 0.0,
										  iterations > 0 ? DistributedBytes(c) / iterations : 0));
		}
	}
	PG_FINALLY();
	{
		odp_ss_sup_free(sup);
		DistributedEnd(c);
	}
	PG_END_TRY();
}

void
OdpDistributedKnn(const OdpShardSet *set, const OdpInputSpec *spec, OdpMetric metric,
				  int32 k, const float *queries, const double *queries64,
				  const int64 *qids, int64 nq, int32 dims, bool exclude_self,
				  const char *what, double *dist, int64 *ids, int32 *k_out)
{
	DistributedCall   *c = DistributedBegin(set, what);

	if (queries64 != NULL && !set->float64)
		elog(ERROR, "odp_gpu: float64 queries for the float32 shards of %s", set->desc);
	c->k = k;
	c->dims = dims;
	PG_TRY();
	{
		OdpSsRows	q;
		bytea	   *payload;
		const int	formats[7] = {0, 1, 0, 0, 0, 0, 0};
		int			lengths[7] = {0};
		double	  **dl = palloc(sizeof(double *) * set->count);
		int64	  **il = palloc(sizeof(int64 *) * set->count);
		Size		n = (Size) Max(nq, 1) * (Size) k;
		Size		cells = (Size) nq * (Size) dims;

		DistributedConnect(c);
		OdpSsRowsAlloc(&q, nq, dims, set->float64);
		for (int64 i = 0; i < nq; i++)
		{
			q.ids[i] = qids ? qids[i] : i;
			q.rank[i] = 0.0;
			q.bound[i] = 0.0;
		}
		/* the queries in the shards' precision: float32 ones widen exactly */
		if (queries64 != NULL)
			memcpy(q.vectors64, queries64, sizeof(double) * cells);
		else if (set->float64)
			for (Size i = 0; i < cells; i++)
				q.vectors64[i] = queries[i];
		else
			memcpy(q.vectors, queries, sizeof(float) * cells);
		q.count = nq;
		payload = OdpWireFromRows(&q, 0);
		if (VARSIZE(payload) - VARHDRSZ > (Size) INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a batch of " INT64_FORMAT " queries is too large to send to the nodes", nq),
					 errhint("Search in smaller batches.")));
		lengths[1] = (int) (VARSIZE(payload) - VARHDRSZ);
		for (int s = 0; s < set->count; s++)
		{
			const OdpShard *shard = &set->shards[s];
			OdpNodeConn *node;
			const char *values[7];

			if (c->remote_of[s] < 0)
				continue;
			node = c->conns[c->remote_of[s]];
			values[0] = shard->source;
			values[1] = VARDATA(payload);
			values[2] = psprintf("%d", k);
			values[3] = shard->id_column;
			values[4] = DistributedTextArrayLiteral(shard->features);
			values[5] = odp_metric_name(metric);
			values[6] = exclude_self ? "true" : "false";
			OdpNodeSend(node, psprintf("SELECT %s.odp_node_knn($1::text, $2::bytea, $3::int4, "
									   "$4::text, $5::text[], $6::text, $7::bool)",
									   OdpNodeSchema(node)),
						7, values, lengths, formats);
		}
		for (int s = 0; s < set->count; s++)
		{
			OdpMatrix	qm = {0};

			if (c->remote_of[s] >= 0)
				continue;
			DistributedReadLocal(c, s, spec, metric);
			if (c->rows[s] > 0 && c->local[s].in.dims != dims)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_EXCEPTION),
						 errmsg("queries have %d values but the rows of %s have %d",
								dims, set->shards[s].desc, c->local[s].in.dims)));
			dl[s] = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * n);
			il[s] = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
			qm.data = q.vectors;
			qm.data64 = q.vectors64;
			qm.rows = nq;
			qm.dims = dims;
			OdpComputeKnnExcluding(&qm, exclude_self ? qids : NULL, &c->local[s].m,
								   c->local[s].in.ids, metric, k, dl[s], il[s]);
		}
		DistributedWait(c);
		for (int s = 0; s < set->count; s++)
		{
			OdpWire		w;

			if (c->remote_of[s] < 0)
				continue;
			DistributedReply(c, s, ODP_WIRE_KNN, &w);
			if (w.count != nq || w.width != k)
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("malformed message from %s: lists of another shape",
								set->shards[s].desc)));
			OdpWireCheckPrecision(&w, set->float64, set->shards[s].desc);
			dl[s] = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * n);
			il[s] = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
			OdpWireDistances(&w, dl[s]);
			memcpy(il[s], w.ids, sizeof(int64) * (Size) nq * (Size) k);
		}
		odp_knn_merge(metric, k, nq, (const double *const *) dl,
					  (const int64 *const *) il, set->count, dist, ids);
		*k_out = 0;
		if (nq > 0)
			while (*k_out < k && ids[*k_out] >= 0)
				(*k_out)++;
		for (int64 i = 0; i < nq; i++)
			for (int32 j = 0; j < *k_out; j++)
				if (!isfinite(dist[i * k + j]))
					DistributedOverflow(set, "the query");
		for (int s = 0; s < set->count; s++)
			c->total_rows += c->remote_of[s] < 0 ? c->rows[s] : 0;
		DistributedReport(c, psprintf(" queries=" INT64_FORMAT " k=%d", nq, *k_out));
	}
	PG_FINALLY();
	{
		DistributedEnd(c);
	}
	PG_END_TRY();
}

/* A skyband row of some shard, for the union's order by id. */
typedef struct DistributedSkyRow
{
	int64		id;
	const double *values;
} DistributedSkyRow;

static int
DistributedSkyRowCmp(const void *a, const void *b)
{
	int64		x = ((const DistributedSkyRow *) a)->id;
	int64		y = ((const DistributedSkyRow *) b)->id;

	return (x > y) - (x < y);
}

void
OdpDistributedSkyline(const OdpShardSet *set, ArrayType *directions,
					  const uint8 *maximize, int nentries, int32 band, OdpInput *in,
					  int32 **dominated_by)
{
	DistributedCall   *c = DistributedBegin(set, "odp_skyline");

	PG_TRY();
	{
		OdpInput   *parts = palloc0(sizeof(OdpInput) * set->count);
		char	   *dir_literal = NULL;
		int64		total = 0;
		DistributedSkyRow *all;
		OdpRunInfo	info;

		DistributedConnect(c);
		if (directions != NULL)
		{
			Datum	   *elems;
			bool	   *nulls;
			int			nelems;
			List	   *names = NIL;

			/* parsed already: one dimension, no nulls */
			deconstruct_array(directions, TEXTOID, -1, false, TYPALIGN_INT,
							  &elems, &nulls, &nelems);
			for (int i = 0; i < nelems; i++)
				names = lappend(names, TextDatumGetCString(elems[i]));
			dir_literal = DistributedTextArrayLiteral(names);
		}
		for (int s = 0; s < set->count; s++)
		{
			const OdpShard *shard = &set->shards[s];
			OdpNodeConn *node;
			const char *values[5];

			if (c->remote_of[s] < 0)
				continue;
			node = c->conns[c->remote_of[s]];
			values[0] = shard->source;
			values[1] = dir_literal;
			values[2] = psprintf("%d", band);
			values[3] = shard->id_column;
			values[4] = DistributedTextArrayLiteral(shard->features);
			OdpNodeSend(node, psprintf("SELECT %s.odp_node_skyline($1::text, $2::text[], $3::int4, "
									   "$4::text, $5::text[])", OdpNodeSchema(node)),
						5, values, NULL, NULL);
		}
		for (int s = 0; s < set->count; s++)
		{
			OdpInputSpec spec;
			OdpInputSpec like;

			if (c->remote_of[s] >= 0)
				continue;
			memset(&like, 0, sizeof(like));
			like.values = ODP_VALUES_FLOAT8;
			OdpLocalShardSpec(set, &set->shards[s], &like, &spec);
			OdpSkylineBandRows(&spec, maximize, nentries, band, &parts[s]);
			c->rows[s] = parts[s].rows;
			DistributedCheckDims(c, s, parts[s].dims);
		}
		DistributedWait(c);
		for (int s = 0; s < set->count; s++)
		{
			OdpWire		w;

			if (c->remote_of[s] < 0)
				continue;
			DistributedReply(c, s, ODP_WIRE_SKYBAND, &w);
			parts[s].rows = w.count;
			parts[s].dims = w.dims;
			parts[s].ids = (int64 *) w.ids;
			parts[s].data64 = (double *) w.doubles;
			c->rows[s] = w.count;
			DistributedCheckDims(c, s, w.dims);
		}
		for (int s = 0; s < set->count; s++)
			total += parts[s].rows;
		if (total == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("source %s has no rows", set->desc),
					 errhint("Check that the source returns rows; row-level security policies can hide them.")));
		all = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(DistributedSkyRow) * (Size) total);
		total = 0;
		for (int s = 0; s < set->count; s++)
			for (int64 i = 0; i < parts[s].rows; i++)
			{
				all[total].id = parts[s].ids[i];
				all[total].values = parts[s].data64 + i * parts[s].dims;
				total++;
			}
		qsort(all, (size_t) total, sizeof(DistributedSkyRow), DistributedSkyRowCmp);
		memset(in, 0, sizeof(*in));
		in->rows = total;
		in->dims = c->dims;
		in->ids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * (Size) total);
		in->data64 = MemoryContextAllocHuge(CurrentMemoryContext,
											sizeof(double) * (Size) total * (Size) c->dims);
		in->source_desc = set->desc;
		for (int64 i = 0; i < total; i++)
		{
			if (i > 0 && all[i].id == all[i - 1].id)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_EXCEPTION),
						 errmsg("two shards of %s hold the id " INT64_FORMAT, set->desc, all[i].id)));
			in->ids[i] = all[i].id;
			memcpy(in->data64 + i * c->dims, all[i].values, sizeof(double) * (Size) c->dims);
		}
		OdpSkylineCheckDirections(nentries, in);
		*dominated_by = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int32) * (Size) total);
		OdpComputeSkyline(in, maximize, band, *dominated_by, &info);
		c->total_rows = total;
		DistributedReport(c, psprintf(" band=%d merged_rows=" INT64_FORMAT, band, total));
	}
	PG_FINALLY();
	{
		DistributedEnd(c);
	}
	PG_END_TRY();
}
