/*-------------------------------------------------------------------------
 *
 * intervals_split.c
 *	  Region matching spread over the devices of the call's device set
 *	  (device_set.h): partitions of the first side.
 *
 * Each part takes a contiguous range [r0, r1) of the rows of a and
 * matches it, as a problem of its own on its device, against every row of
 * b; its pairs come in ascending (a, b) order, and the pair relay
 * (pair_relay.h) hands them to the caller's receiver part after part, so
 * the caller gets the pairs one device gives, in its order.  A matching
 * of one set (pairs a < b) becomes, for its part, the rows [r0, r1)
 * against the rows [r0, rows) as two sets, of whose pairs those with
 * a < b are kept: a part's rows meet only their own and later rows, and
 * the ranges are sized to hold equal shares of that triangle.  A count
 * adds the parts' counts (for one set, of their kept pairs).
 *
 * The statistics add the parts' pairs, candidates and runs; sweep_dim is
 * the first part's, and empty the largest part's count (the regions of b
 * are set aside by every part).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_split.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "devices/device_set.h"
#include "devices/pair_relay.h"
#include "intervals/intervals_internal.h"

/* Fewest rows of a per part; smaller problems run on one device. */
#define IV_SPLIT_MIN_ROWS		4096

/* One split call. */
typedef struct IvSplit
{
	const OdpIntervalProblem *p;
	bool		self;
	bool		count_only;
	OdpPairRelay relay;
	int64_t		first[ODP_MAX_GPUS + 1];
	struct IvSplitPart
	{
		struct IvSplit *split;
		int			part;
		int64_t		kept;		/* one set: the part's pairs a < b */
		int64_t		pairs;
		OdpIntervalStats stats;
	}			parts[ODP_MAX_GPUS];
} IvSplit;

/* Rows [r0, r1) of regions r as regions of their own. */
static OdpRegions
IvRows(const OdpRegions *r, int64_t r0, int64_t r1)
{
	OdpRegions	sub = *r;
	const size_t at = (size_t) r0 * (size_t) r->dims;

	sub.lower = r->lower + at;
	sub.upper = r->upper + at;
	sub.flags = r->flags != NULL ? r->flags + at : NULL;
	sub.rows = r1 - r0;
	return sub;
}

/* A part's receiver, on its own thread: to the relay. */
static bool
IvSplitPush(void *arg, const int64_t *a, const int64_t *b, int64_t count)
{
	struct IvSplitPart *sp = (struct IvSplitPart *) arg;
	IvSplit    *s = sp->split;
	const int64_t r0 = s->first[sp->part];

	if (s->self)
		for (int64_t i = 0; i < count; i++)
			sp->kept += a[i] < b[i];
	return OdpRelayPush(&s->relay, sp->part, a, b, NULL, count, r0,
						s->self ? r0 : 0, s->self);
}

/* A part's receiver when a one-set match only counts: pairs a < b. */
static bool
IvSplitCount(void *arg, const int64_t *a, const int64_t *b, int64_t count)
{
	struct IvSplitPart *sp = (struct IvSplitPart *) arg;

	for (int64_t i = 0; i < count; i++)
		sp->kept += a[i] < b[i];
	return true;
}

/* Runs part p on its device. */
static OdpStatus
IvSplitRun(void *arg, int part, OdpContext *pctx)
{
	IvSplit    *s = (IvSplit *) arg;
	struct IvSplitPart *sp = &s->parts[part];
	const OdpRegions *a = s->p->a;
	const int64_t r0 = s->first[part];
	const int64_t r1 = s->first[part + 1];
	OdpRegions	ra = IvRows(a, r0, r1);
	OdpRegions	rb;
	OdpIntervalProblem sub = *s->p;
	OdpStatus	status = ODP_OK;

	sub.a = &ra;
	if (s->self)
	{
		rb = IvRows(a, r0, a->rows);
		sub.b = &rb;
	}
	if (r1 > r0)
	{
		if (s->count_only && !s->self)
			status = odp_iv_match(pctx, &sub, true, NULL, NULL, &sp->pairs,
								  &sp->stats);
		else
			status = odp_iv_match(pctx, &sub, false,
								  s->count_only ? IvSplitCount : IvSplitPush,
								  sp, &sp->pairs, &sp->stats);
	}
	if (s->self)
		sp->pairs = sp->kept;
	if (!s->count_only)
		OdpRelayFinish(&s->relay, part, status);
	return status;
}

/* The caller's receiver, called by the relay on the caller's thread. */
typedef struct IvCaller
{
	OdpIntervalPairFn emit;
	void	   *arg;
} IvCaller;

static bool
IvSplitEmit(void *arg, const int64_t *a, const int64_t *b, const double *r,
			int64_t count)
{
	IvCaller   *c = (IvCaller *) arg;

	(void) r;
	return c->emit(c->arg, a, b, count);
}

/* See intervals_internal.h. */
OdpStatus
odp_split_intervals(OdpContext *ctx, const OdpIntervalProblem *p,
					bool count_only, OdpIntervalPairFn emit, void *emit_arg,
					int64_t *pairs, OdpIntervalStats *stats)
{
	OdpDeviceSet set;
	IvSplit    *s;
	IvCaller	caller;
	OdpIntervalStats local;
	OdpStatus	status;
	double		t0 = odp_now_ms();

	if (ctx->gpu_count == 0)
		return odp_iv_match(ctx, p, count_only, emit, emit_arg, pairs, stats);
	if ((status = OdpDeviceSetResolve(ctx, &set)) != ODP_OK)
		return status;
	if (p->a->rows < (int64_t) set.count * IV_SPLIT_MIN_ROWS ||
		!OdpDeviceSetWorth(ctx, &set,
						   odp_one_device_ms(ODP_WORK_REGIONS, p->a->rows,
											 p->b != NULL ? p->b->rows : 0, 0)))
		return odp_iv_match(ctx, p, count_only, emit, emit_arg, pairs, stats);

	s = calloc(1, sizeof(IvSplit));
	if (s == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	s->p = p;
	s->self = p->b == NULL;
	s->count_only = count_only;
	for (int q = 0; q < set.count; q++)
	{
		s->parts[q].split = s;
		s->parts[q].part = q;
	}
	OdpSplitRows(p->a->rows, set.count, s->self, 1, s->first);
	memset(&local, 0, sizeof(local));
	if (count_only)
		status = OdpDeviceSetRun(ctx, &set, IvSplitRun, s, NULL, NULL);
	else
	{
		caller.emit = emit;
		caller.arg = emit_arg;
		OdpRelayInit(&s->relay, set.count, false, IvSplitEmit, &caller);
		status = OdpRelayRun(ctx, &set, IvSplitRun, s, &s->relay);
		OdpRelayRelease(&s->relay);
	}
	for (int q = 0; q < set.count; q++)
	{
		const OdpIntervalStats *ps = &s->parts[q].stats;

		local.pairs += s->parts[q].pairs;
		local.candidates += ps->candidates;
		local.runs += ps->runs;
		if (ps->empty > local.empty)
			local.empty = ps->empty;
		if (ps->prep_ms > local.prep_ms)
			local.prep_ms = ps->prep_ms;
		if (ps->setup_ms > local.setup_ms)
			local.setup_ms = ps->setup_ms;
		if (ps->match_ms > local.match_ms)
			local.match_ms = ps->match_ms;
		if (ps->sort_ms > local.sort_ms)
			local.sort_ms = ps->sort_ms;
	}
	local.sweep_dim = s->parts[0].stats.sweep_dim;
	if (!count_only)
	{
		if (s->relay.emitted != local.pairs && status == ODP_OK)
			status = odp_fail(ctx, ODP_ERR_INTERNAL,
							  "a split call handed over %lld of %lld pairs",
							  (long long) s->relay.emitted, (long long) local.pairs);
		/* the receiver's time is the caller's output, not the engine's */
		ctx->compute_ms = odp_now_ms() - t0 - ctx->transfer_ms - s->relay.emit_ms;
	}
	free(s);
	if (status == ODP_OK)
		*pairs = local.pairs;
	if (stats != NULL)
		*stats = local;
	return status;
}
