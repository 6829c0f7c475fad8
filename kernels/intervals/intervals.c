/*-------------------------------------------------------------------------
 *
 * intervals.c
 *	  Region matching (odp_compute_interval_pairs, _count): argument
 *	  checks, then the matching on the CPU (intervals_match.c) or on the
 *	  GPU spread over the call's devices (intervals_split.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals.c
 *
 *-------------------------------------------------------------------------
 */
#include "intervals/intervals_internal.h"

/* Ensures one side's regions are well formed. */
static OdpStatus
iv_check_regions(OdpContext *ctx, const OdpRegions *r, const char *what)
{
	if (r->rows < 0 || r->rows > ODP_MAX_ROWS)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%lld %s: matching takes 0 .. %lld",
						(long long) r->rows, what, (long long) ODP_MAX_ROWS);
	if (r->dims < 1 || r->dims > ODP_MAX_INTERVAL_DIMS)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"regions of %d dimensions: matching takes 1 .. %d",
						(int) r->dims, ODP_MAX_INTERVAL_DIMS);
	if (r->rows > 0 && (r->lower == NULL || r->upper == NULL))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing bounds of the %s", what);
	return ODP_OK;
}

/* Checks the whole problem; resets ctx's outputs. */
static OdpStatus
iv_check_problem(OdpContext *ctx, const OdpIntervalProblem *p)
{
	OdpStatus	status;

	ctx->message[0] = '\0';
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	if (p == NULL || p->a == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing regions");
	if ((status = iv_check_regions(ctx, p->a, "subscriptions")) != ODP_OK)
		return status;
	if (p->b != NULL)
	{
		if ((status = iv_check_regions(ctx, p->b, "updates")) != ODP_OK)
			return status;
		if (p->b->dims != p->a->dims)
			return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
							"subscriptions have %d dimensions but updates have %d",
							(int) p->a->dims, (int) p->b->dims);
	}
	if (p->compare != NULL)
	{
		for (int d = 0; d < p->a->dims; d++)
		{
			if (p->compare[d] != ODP_INTERVAL_EXACT && p->compare[d] != ODP_INTERVAL_BOX)
				return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
								"unknown comparison %d for dimension %d",
								(int) p->compare[d], d + 1);
		}
	}
	return ODP_OK;
}

/* The shared body of both entry points. */
static OdpStatus
iv_compute(OdpContext *ctx, const OdpIntervalProblem *p, bool count_only,
		   OdpIntervalPairFn emit, void *emit_arg, int64_t *pairs,
		   OdpIntervalStats *stats)
{
	OdpStatus	status;

	if (pairs != NULL)
		*pairs = 0;
	if (ctx == NULL)
		return ODP_ERR_INVALID_ARGUMENT;
	if ((status = iv_check_problem(ctx, p)) != ODP_OK)
		return status;
	if (!count_only && emit == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing receiver of the pairs");
	if (pairs == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing output");
	if (ctx->device == ODP_DEVICE_GPU)
		return odp_split_intervals(ctx, p, count_only, emit, emit_arg, pairs,
								   stats);
	return odp_iv_match(ctx, p, count_only, emit, emit_arg, pairs, stats);
}

/* See odp_intervals.h. */
OdpStatus
odp_compute_interval_pairs(OdpContext *ctx, const OdpIntervalProblem *p,
						   OdpIntervalPairFn emit, void *emit_arg,
						   int64_t *pairs, OdpIntervalStats *stats)
{
	return iv_compute(ctx, p, false, emit, emit_arg, pairs, stats);
}

/* See odp_intervals.h. */
OdpStatus
odp_compute_interval_count(OdpContext *ctx, const OdpIntervalProblem *p,
						   int64_t *pairs, OdpIntervalStats *stats)
{
	return iv_compute(ctx, p, true, NULL, NULL, pairs, stats);
}
