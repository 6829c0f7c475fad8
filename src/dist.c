/*-------------------------------------------------------------------------
 *
 * dist.c
 *	  Distributed calls on a sharded table (dist.h): the calling server is
 *	  the supervisor, every shard a node.
 *
 * Remote shards are reached over libpq (node_conn.c) and run the node
 * functions (node.c, skyline.c) on their own GPU or CPU path; local
 * shards run the same engine steps in this backend while the remote ones
 * work.  Only candidates, neighbour lists, queries and skyband rows travel
 * (dist_wire.h); no shard is ever pulled.
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
 *	  src/dist.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "args.h"
#include "catalog/pg_type.h"
#include "dist.h"
#include "dist_wire.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "node_conn.h"
#include "port/pg_bswap.h"
#include "settings.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/* A local shard's state. */
typedef struct DistLocal
{
	OdpInput	in;
	OdpMatrix	m;
	OdpSsNode  *ss;
	bool		on_gpu;
} DistLocal;

/* One distributed call; palloc'd, so that PG_FINALLY sees its fields. */
typedef struct DistCall
{
	const OdpShardSet *set;
	const char *what;
	OdpNodeConn **conns;		/* per remote shard */
	int		   *remote_of;		/* per shard: index into conns, or -1 */
	DistLocal  *local;			/* per shard (local ones) */
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
} DistCall;

static DistCall *
DistBegin(const OdpShardSet *set, const char *what)
{
	DistCall   *c = palloc0(sizeof(DistCall));

	c->set = set;
	c->what = what;
	c->start_ms = odp_now_ms();
	c->call_cxt = CurrentMemoryContext;
	c->step_cxt = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu node round",
										ALLOCSET_DEFAULT_SIZES);
	c->conns = palloc0(sizeof(OdpNodeConn *) * Max(set->remote_count, 1));
	c->remote_of = palloc(sizeof(int) * set->count);
	c->local = palloc0(sizeof(DistLocal) * set->count);
	c->handle = palloc0(sizeof(int32) * set->count);
	c->rows = palloc0(sizeof(int64) * set->count);
	return c;
}

static void
DistConnect(DistCall *c)
{
	const OdpShard **remote = palloc(sizeof(OdpShard *) * Max(c->set->remote_count, 1));
	int			r = 0;

	for (int s = 0; s < c->set->count; s++)
	{
		c->remote_of[s] = c->set->shards[s].remote ? r : -1;
		if (c->set->shards[s].remote)
			remote[r++] = &c->set->shards[s];
	}
	OdpNodesConnect(remote, r, c->conns);
}

/* Closes the connections and frees the engine's node states. */
static void
DistEnd(DistCall *c)
{
	OdpNodesClose(c->conns, c->set->remote_count);
	for (int s = 0; s < c->set->count; s++)
	{
		odp_ss_node_free(c->local[s].ss);
		c->local[s].ss = NULL;
	}
}

static int64
DistBytes(const DistCall *c)
{
	int64		bytes = 0;

	for (int r = 0; r < c->set->remote_count; r++)
		if (c->conns[r] != NULL)
			bytes += OdpNodeBytes(c->conns[r]);
	return bytes;
}

/* A text[] literal of names (C strings), for a parameter. */
static char *
DistTextArrayLiteral(List *names)
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
DistReadLocal(DistCall *c, int s, const OdpInputSpec *like, OdpMetric metric)
{
	OdpInputSpec spec;
	DistLocal  *l = &c->local[s];

	OdpLocalShardSpec(c->set, &c->set->shards[s], like, &spec);
	OdpReadInput(&spec, &l->in);
	OdpCheckCosineRows(&l->in, metric);
	l->m.data = l->in.data;
	l->m.rows = l->in.rows;
	l->m.dims = l->in.dims;
	l->m.ids = l->in.ids;
	c->rows[s] = l->in.rows;
}

/* Records a shard's dimensions; shards must agree. */
static void
DistCheckDims(DistCall *c, int s, int32 dims)
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
DistWait(DistCall *c)
{
	OdpNodesWait(c->conns, c->set->remote_count);
}

/* The binary payload of remote shard s's last reply. */
static void
DistReply(DistCall *c, int s, OdpWireKind kind, OdpWire *w)
{
	int			len;
	const char *v = OdpNodeValue(c->conns[c->remote_of[s]], 0, &len);

	OdpWireRead(v, (Size) len, kind, c->set->shards[s].desc, w);
}

/* Keeps the error being raised in c, for after the engine's loop. */
static void
DistKeepError(DistCall *c, MemoryContext old)
{
	MemoryContextSwitchTo(c->call_cxt);
	c->pending = CopyErrorData();
	FlushErrorState();
	MemoryContextSwitchTo(old);
}

/* ---- SolvingSet rounds ---- */

/* One round's arguments, as the engine's callbacks receive them. */
typedef enum DistRoundKind
{
	DIST_ROUND_FIRST,
	DIST_ROUND_EXACT,
	DIST_ROUND_NEXT
} DistRoundKind;

typedef struct DistRound
{
	DistRoundKind kind;
	int64		m;
	OdpSsRows  *props;
	const OdpSsRows *cands;
	float	  **lists;
	bool		prune;
	double		min_out;
} DistRound;

/* A round's command and parameters for remote shard s. */
static void
DistRoundSend(DistCall *c, int s, const DistRound *r, const bytea *cands,
			  const uint64 *min_out_bits)
{
	OdpNodeConn *node = c->conns[c->remote_of[s]];
	const char *schema = OdpNodeSchema(node);
	const char *handle = psprintf("%d", c->handle[s]);
	const char *m = psprintf(INT64_FORMAT, r->m);

	switch (r->kind)
	{
		case DIST_ROUND_FIRST:
			{
				const char *values[2] = {handle, m};

				OdpNodeSend(node, psprintf("SELECT %s.odp_node_ss_first($1::int4, $2::int8)", schema),
							2, values, NULL, NULL);
				break;
			}
		case DIST_ROUND_EXACT:
			{
				const char *values[2] = {handle, VARDATA(cands)};
				const int	lengths[2] = {0, (int) (VARSIZE(cands) - VARHDRSZ)};
				const int	formats[2] = {0, 1};

				OdpNodeSend(node, psprintf("SELECT %s.odp_node_ss_exact($1::int4, $2::bytea)", schema),
							2, values, lengths, formats);
				break;
			}
		case DIST_ROUND_NEXT:
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

/* A round's step on local shard s, in this backend. */
static void
DistRoundLocal(DistCall *c, int s, const DistRound *r)
{
	DistLocal  *l = &c->local[s];
	OdpEngineCall call;
	OdpStatus	status = ODP_OK;

	OdpEngineCallBegin(&call, l->on_gpu);
	switch (r->kind)
	{
		case DIST_ROUND_FIRST:
			status = odp_ss_node_first(&call.ctx, l->ss, r->m, &r->props[s]);
			break;
		case DIST_ROUND_EXACT:
			status = odp_ss_node_exact(&call.ctx, l->ss, r->cands, r->lists[s],
									   &c->distances);
			break;
		case DIST_ROUND_NEXT:
			status = odp_ss_node_next(&call.ctx, l->ss, r->prune, r->min_out, r->m,
									  &r->props[s]);
			break;
	}
	OdpEngineCallEnd(&call, status);
}

/* Remote shard s's reply to a round, into the round's buffers. */
static void
DistRoundReceive(DistCall *c, int s, const DistRound *r)
{
	OdpWire		w;

	if (r->kind != DIST_ROUND_EXACT)
	{
		DistReply(c, s, ODP_WIRE_ROWS, &w);
		OdpWireToRows(&w, &r->props[s], c->set->shards[s].desc);
		return;
	}
	DistReply(c, s, ODP_WIRE_LISTS, &w);
	if (w.count != r->cands->count || w.width != c->k)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("malformed message from %s: lists of another shape",
						c->set->shards[s].desc)));
	memcpy(r->lists[s], w.floats, sizeof(float) * (Size) w.count * (Size) c->k);
	c->distances += w.figure;
}

/*
 * One round on every shard: the commands go to the remote shards first,
 * so that they work while the local shards' steps run here.
 */
static void
DistRoundAll(DistCall *c, const DistRound *r)
{
	bytea	   *cands = NULL;
	uint64		bits = 0;

	if (r->kind == DIST_ROUND_EXACT)
	{
		cands = OdpWireFromRows(r->cands, 0);
		if (VARSIZE(cands) - VARHDRSZ > (Size) INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a candidate batch of " INT64_FORMAT " rows is too large to send",
							r->cands->count)));
	}
	if (r->kind == DIST_ROUND_NEXT)
	{
		memcpy(&bits, &r->min_out, sizeof(bits));
		bits = pg_hton64(bits);
	}
	for (int s = 0; s < c->set->count; s++)
		if (c->remote_of[s] >= 0)
			DistRoundSend(c, s, r, cands, &bits);
	for (int s = 0; s < c->set->count; s++)
		if (c->remote_of[s] < 0)
			DistRoundLocal(c, s, r);
	DistWait(c);
	for (int s = 0; s < c->set->count; s++)
		if (c->remote_of[s] >= 0)
			DistRoundReceive(c, s, r);
}

/*
 * Runs a round for the engine's loop in the round context, turning an
 * error into a status and keeping it for the caller to throw.
 */
static OdpStatus
DistRunRound(DistCall *c, const DistRound *r)
{
	MemoryContext old = MemoryContextSwitchTo(c->step_cxt);
	volatile OdpStatus status = ODP_OK;

	MemoryContextReset(c->step_cxt);
	PG_TRY();
	{
		DistRoundAll(c, r);
	}
	PG_CATCH();
	{
		DistKeepError(c, c->step_cxt);
		status = ODP_ERR_INTERNAL;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	return status;
}

static OdpStatus
DistCbFirst(void *arg, int64 m, OdpSsRows *props)
{
	DistRound	r = {.kind = DIST_ROUND_FIRST, .m = m, .props = props};

	return DistRunRound((DistCall *) arg, &r);
}

static OdpStatus
DistCbExact(void *arg, const OdpSsRows *cands, float **lists)
{
	DistRound	r = {.kind = DIST_ROUND_EXACT, .cands = cands, .lists = lists};

	return DistRunRound((DistCall *) arg, &r);
}

static OdpStatus
DistCbNext(void *arg, bool prune, double min_out, int64 m, OdpSsRows *props)
{
	DistRound	r = {.kind = DIST_ROUND_NEXT, .prune = prune, .min_out = min_out,
	.m = m, .props = props};

	return DistRunRound((DistCall *) arg, &r);
}

/* Opens the SolvingSet state on every shard, remote ones meanwhile. */
static void
DistOpenShards(DistCall *c, const OdpInputSpec *spec, OdpMetric metric, bool bounds)
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
		values[3] = DistTextArrayLiteral(shard->features);
		values[4] = odp_metric_name(metric);
		values[5] = bounds ? "true" : "false";
		OdpNodeSend(node, psprintf("SELECT handle, rows, dims FROM %s.odp_node_ss_open("
								   "$1::text, $2::int4, $3::text, $4::text[], $5::text, $6::bool)",
								   OdpNodeSchema(node)),
					6, values, NULL, NULL);
	}
	for (int s = 0; s < c->set->count; s++)
	{
		DistLocal  *l = &c->local[s];
		OdpEngineCall call;

		if (c->remote_of[s] >= 0)
			continue;
		DistReadLocal(c, s, spec, metric);
		l->on_gpu = OdpChooseGpu(l->in.rows, l->in.rows);
		OdpEngineCallBegin(&call, l->on_gpu);
		OdpEngineCallEnd(&call, odp_ss_node_create(&call.ctx, &l->m, metric, c->k,
												   bounds, &l->ss));
		DistCheckDims(c, s, l->in.dims);
	}
	DistWait(c);
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
		DistCheckDims(c, s, (int32) pg_ntoh32(*(const uint32 *) v));
	}
	for (int s = 0; s < c->set->count; s++)
		c->total_rows += c->rows[s];
}

static void
DistReport(const DistCall *c, const char *extra)
{
	double		total = odp_now_ms() - c->start_ms;

	if (!odp_report_timing)
		return;
	ereport(NOTICE,
			(errmsg("odp_gpu timing: %s distributed nodes=%d remote=%d rows=" INT64_FORMAT
					" dims=%d total=%.1f ms bytes=" INT64_FORMAT "%s",
					c->what, c->set->count, c->set->remote_count, c->total_rows,
					c->dims, total, DistBytes(c), extra)));
}

void
OdpDistTopOutliers(const OdpShardSet *set, const OdpInputSpec *spec,
				   OdpMetric metric, int32 k, int64 n, OdpOutlierMethod method,
				   int64 batch_size, bool want_set, const char *what,
				   OdpDistTop *top)
{
	DistCall   *c = DistBegin(set, what);
	bool		prune = method != ODP_METHOD_BRUTEFORCE;
	OdpSsSupervisor *volatile sup = NULL;

	memset(top, 0, sizeof(*top));
	c->k = k;
	PG_TRY();
	{
		OdpEngineCall call;
		OdpSsNodes	ops;
		OdpSsRows	cands;
		OdpSsRows  *props;
		float	  **lists;
		int64		m;
		double		sup_ms = 0.0;
		OdpStatus	status;
		int32		iterations;

		DistConnect(c);
		DistOpenShards(c, spec, metric, prune);
		OdpCheckKAgainstRows(k, c->total_rows, set->desc);
		n = Min(n, c->total_rows);
		m = odp_ss_batch_size(c->total_rows, n, batch_size);
		props = palloc(sizeof(OdpSsRows) * set->count);
		lists = palloc(sizeof(float *) * set->count);
		for (int s = 0; s < set->count; s++)
		{
			OdpSsRowsAlloc(&props[s], m, c->dims);
			lists[s] = MemoryContextAllocHuge(CurrentMemoryContext,
												 sizeof(float) * (Size) m * (Size) k);
		}
		OdpSsRowsAlloc(&cands, m, c->dims);
		ops.count = set->count;
		ops.arg = c;
		ops.first = DistCbFirst;
		ops.exact = DistCbExact;
		ops.next = DistCbNext;

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
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("distances from the row with id " INT64_FORMAT " overflow single precision",
								top->ids[i]),
						 errdetail("odp_gpu computes distances in float32, whose largest value is about 3.4e38."),
						 errhint("Scale the features down, for example by dividing them by their standard deviation.")));
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

			DistReport(c, psprintf(" method=%s iterations=%d solving_set=" INT64_FORMAT
								   " distances=" INT64_FORMAT " supervisor=%.1f ms (%.2f%%)"
								   " bytes_per_iteration=" INT64_FORMAT,
								   prune ? "solvingset" : "bruteforce", iterations,
								   odp_ss_sup_set_size(sup), c->distances, sup_ms,
								   total > 0 ? 100.0 * sup_ms / total : 0.0,
								   iterations > 0 ? DistBytes(c) / iterations : 0));
		}
	}
	PG_FINALLY();
	{
		odp_ss_sup_free(sup);
		DistEnd(c);
	}
	PG_END_TRY();
}

void
OdpDistKnn(const OdpShardSet *set, const OdpInputSpec *spec, OdpMetric metric,
		   int32 k, const float *queries, const int64 *qids, int64 nq,
		   int32 dims, bool exclude_self, const char *what, float *dist,
		   int64 *ids, int32 *k_out)
{
	DistCall   *c = DistBegin(set, what);

	c->k = k;
	c->dims = dims;
	PG_TRY();
	{
		OdpSsRows	q;
		bytea	   *payload;
		const int	formats[7] = {0, 1, 0, 0, 0, 0, 0};
		int			lengths[7] = {0};
		float	  **dl = palloc(sizeof(float *) * set->count);
		int64	  **il = palloc(sizeof(int64 *) * set->count);
		Size		n = (Size) Max(nq, 1) * (Size) k;

		DistConnect(c);
		OdpSsRowsAlloc(&q, nq, dims);
		for (int64 i = 0; i < nq; i++)
		{
			q.ids[i] = qids ? qids[i] : i;
			q.rank[i] = 0.0;
			q.bound[i] = 0.0f;
		}
		memcpy(q.vectors, queries, sizeof(float) * (Size) nq * (Size) dims);
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
			values[4] = DistTextArrayLiteral(shard->features);
			values[5] = odp_metric_name(metric);
			values[6] = exclude_self ? "true" : "false";
			OdpNodeSend(node, psprintf("SELECT %s.odp_node_knn($1::text, $2::bytea, $3::int4, "
									   "$4::text, $5::text[], $6::text, $7::bool)",
									   OdpNodeSchema(node)),
						7, values, lengths, formats);
		}
		for (int s = 0; s < set->count; s++)
		{
			OdpEngineCall call;
			OdpMatrix	qm = {0};

			if (c->remote_of[s] >= 0)
				continue;
			DistReadLocal(c, s, spec, metric);
			if (c->rows[s] > 0 && c->local[s].in.dims != dims)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_EXCEPTION),
						 errmsg("queries have %d values but the rows of %s have %d",
								dims, set->shards[s].desc, c->local[s].in.dims)));
			dl[s] = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(float) * n);
			il[s] = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
			qm.data = queries;
			qm.rows = nq;
			qm.dims = dims;
			OdpEngineCallBegin(&call, OdpChooseGpu(nq, c->rows[s]));
			OdpEngineCallEnd(&call, odp_knn_excluding(&call.ctx, &qm,
													  exclude_self ? qids : NULL,
													  &c->local[s].m, c->local[s].in.ids,
													  metric, k, dl[s], il[s]));
		}
		DistWait(c);
		for (int s = 0; s < set->count; s++)
		{
			OdpWire		w;

			if (c->remote_of[s] < 0)
				continue;
			DistReply(c, s, ODP_WIRE_KNN, &w);
			if (w.count != nq || w.width != k)
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("malformed message from %s: lists of another shape",
								set->shards[s].desc)));
			dl[s] = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(float) * n);
			il[s] = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
			memcpy(dl[s], w.floats, sizeof(float) * (Size) nq * (Size) k);
			memcpy(il[s], w.ids, sizeof(int64) * (Size) nq * (Size) k);
		}
		odp_knn_merge(metric, k, nq, (const float *const *) dl,
					  (const int64 *const *) il, set->count, dist, ids);
		*k_out = 0;
		if (nq > 0)
			while (*k_out < k && ids[*k_out] >= 0)
				(*k_out)++;
		for (int64 i = 0; i < nq; i++)
			for (int32 j = 0; j < *k_out; j++)
				if (!isfinite(dist[i * k + j]))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("distances from the query overflow single precision"),
							 errdetail("odp_gpu computes distances in float32, whose largest value is about 3.4e38."),
							 errhint("Scale the features down, for example by dividing them by their standard deviation.")));
		for (int s = 0; s < set->count; s++)
			c->total_rows += c->remote_of[s] < 0 ? c->rows[s] : 0;
		DistReport(c, psprintf(" queries=" INT64_FORMAT " k=%d", nq, *k_out));
	}
	PG_FINALLY();
	{
		DistEnd(c);
	}
	PG_END_TRY();
}

/* A skyband row of some shard, for the union's order by id. */
typedef struct DistSkyRow
{
	int64		id;
	const double *values;
} DistSkyRow;

static int
DistSkyRowCmp(const void *a, const void *b)
{
	int64		x = ((const DistSkyRow *) a)->id;
	int64		y = ((const DistSkyRow *) b)->id;

	return (x > y) - (x < y);
}

void
OdpDistSkyline(const OdpShardSet *set, ArrayType *directions,
			   const uint8 *maximize, int nentries, int32 band, OdpInput *in,
			   int32 **dominated_by)
{
	DistCall   *c = DistBegin(set, "odp_skyline");

	PG_TRY();
	{
		OdpInput   *parts = palloc0(sizeof(OdpInput) * set->count);
		char	   *dir_literal = NULL;
		int64		total = 0;
		DistSkyRow *all;
		OdpRunInfo	info;

		DistConnect(c);
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
			dir_literal = DistTextArrayLiteral(names);
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
			values[4] = DistTextArrayLiteral(shard->features);
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
			DistCheckDims(c, s, parts[s].dims);
		}
		DistWait(c);
		for (int s = 0; s < set->count; s++)
		{
			OdpWire		w;

			if (c->remote_of[s] < 0)
				continue;
			DistReply(c, s, ODP_WIRE_SKYBAND, &w);
			parts[s].rows = w.count;
			parts[s].dims = w.dims;
			parts[s].ids = (int64 *) w.ids;
			parts[s].data64 = (double *) w.doubles;
			c->rows[s] = w.count;
			DistCheckDims(c, s, w.dims);
		}
		for (int s = 0; s < set->count; s++)
			total += parts[s].rows;
		if (total == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("source %s has no rows", set->desc),
					 errhint("Check that the source returns rows; row-level security policies can hide them.")));
		all = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(DistSkyRow) * (Size) total);
		total = 0;
		for (int s = 0; s < set->count; s++)
			for (int64 i = 0; i < parts[s].rows; i++)
			{
				all[total].id = parts[s].ids[i];
				all[total].values = parts[s].data64 + i * parts[s].dims;
				total++;
			}
		qsort(all, (size_t) total, sizeof(DistSkyRow), DistSkyRowCmp);
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
		DistReport(c, psprintf(" band=%d merged_rows=" INT64_FORMAT, band, total));
	}
	PG_FINALLY();
	{
		DistEnd(c);
	}
	PG_END_TRY();
}
