/*-------------------------------------------------------------------------
 *
 * pearson_split.c
 *	  Correlations spread over the devices of the call's device set
 *	  (device_set.h).
 *
 * Each part takes a contiguous range of the rows a of x, prepares every
 * series on its device and computes the tiles of its row blocks against
 * all partners (for a self correlation's pairs, the upper triangle from
 * its rows on, so ranges are sized to hold equal shares of the triangle).
 * A part's top-k lists are written straight into the rows of the outputs
 * it owns; its pairs, produced in ascending (a, b) order, go through the
 * pair relay, which hands them to the caller's receiver part after part:
 * the same pairs in the same order as one device.  Range boundaries are
 * multiples of PEARSON_SPLIT_ALIGN rows, the granule of the GPU path's row
 * blocks, so that a part's blocks are, where its plan matches one
 * device's, the same products.
 *
 * A part computes its own rows' lists by sweeping every partner, where
 * one device computes a self correlation's lists from the triangle (each
 * tile serving both of its sides): the parts then do more work in all
 * than one device.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_split.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "devices/device_set.h"
#include "devices/pair_relay.h"
#include "pearson/pearson_internal.h"

/* Rows of a part's range come in multiples of this many. */
#define PEARSON_SPLIT_ALIGN		64

/* One split call: the caller's job and what its parts share. */
typedef struct PearsonSplit
{
	const OdpPearsonJob *job;
	OdpPairRelay relay;
	int64_t		first[ODP_MAX_GPUS + 1];
	struct PearsonSplitPart
	{
		struct PearsonSplit *split;
		int			part;
		OdpPearsonEmitter emitter;
	}			parts[ODP_MAX_GPUS];
} PearsonSplit;

/* A part's receiver: queues its pairs in the relay (its own thread). */
static bool
PearsonSplitPush(void *arg, const int64_t *a, const int64_t *b, const double *r,
				 int64_t count)
{
	struct PearsonSplitPart *sp = (struct PearsonSplitPart *) arg;

	return OdpRelayPush(&sp->split->relay, sp->part, a, b, r, count, 0, 0,
						false);
}

/* Runs part p's rows on its device. */
static OdpStatus
PearsonSplitRun(void *arg, int part, OdpContext *pctx)
{
	PearsonSplit  *s = (PearsonSplit *) arg;
	struct PearsonSplitPart *sp = &s->parts[part];
	OdpPearsonJob	job = *s->job;
	OdpStatus	status = ODP_OK;

	job.row_begin = s->first[part];
	job.row_end = s->first[part + 1];
	if (!job.top)
	{
		memset(&sp->emitter, 0, sizeof(sp->emitter));
		sp->emitter.fn = PearsonSplitPush;
		sp->emitter.arg = sp;
		job.emitter = &sp->emitter;
	}
	if (job.row_end > job.row_begin)
		status = odp_gpu_pearson(pctx, &job);
	if (!job.top)
		OdpRelayFinish(&s->relay, part, status);
	return status;
}

/* The caller's receiver, called by the relay on the caller's thread. */
static bool
PearsonSplitEmit(void *arg, const int64_t *a, const int64_t *b, const double *r,
				 int64_t count)
{
	OdpPearsonEmitter *e = (OdpPearsonEmitter *) arg;

	return e->fn(e->arg, a, b, r, count);
}

/* See pearson_internal.h. */
OdpStatus
odp_split_pearson(OdpContext *ctx, const OdpPearsonJob *job)
{
	OdpDeviceSet set;
	PearsonSplit  *s;
	OdpStatus	status;
	const OdpMatrix64 *x = job->p->x;
	const OdpMatrix64 *y = job->p->y;
	const int64_t rows = x->rows;
	OdpSharedInputs in = {0};

	if ((status = OdpDeviceSetResolve(ctx, &set)) != ODP_OK)
		return status;
	if (rows < (int64_t) set.count * PEARSON_SPLIT_ALIGN ||
		!OdpDeviceSetWorth(ctx, &set, odp_one_device_ms(ODP_WORK_CORRELATIONS, rows,
													 y != NULL ? y->rows : 0, x->dims)))
		return odp_gpu_pearson(ctx, job);
	/* cuBLAS is loaded once per process, here, before any part runs */
	if ((status = odp_gpu_pearson_available(ctx)) != ODP_OK)
		return status;

	s = calloc(1, sizeof(PearsonSplit));
	if (s == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	s->job = job;
	for (int p = 0; p < set.count; p++)
	{
		s->parts[p].split = s;
		s->parts[p].part = p;
	}
	OdpSplitRows(rows, set.count, !job->top && job->p->y == NULL,
				 PEARSON_SPLIT_ALIGN, s->first);
	/* every part copies every series: page-locked once for all of them */
	OdpSharedInputsPin(ctx, &in, x->data, sizeof(double) * (size_t) rows * (size_t) x->dims);
	if (y != NULL)
		OdpSharedInputsPin(ctx, &in, y->data, sizeof(double) * (size_t) y->rows * (size_t) y->dims);
	if (job->top)
		status = OdpDeviceSetRun(ctx, &set, PearsonSplitRun, s, NULL, NULL);
	else
	{
		OdpRelayInit(&s->relay, set.count, true, PearsonSplitEmit, job->emitter);
		status = OdpRelayRun(ctx, &set, PearsonSplitRun, s, &s->relay);
		job->emitter->emitted += s->relay.emitted;
		job->emitter->ms += s->relay.emit_ms;
		OdpRelayRelease(&s->relay);
	}
	OdpSharedInputsRelease(ctx, &in);
	free(s);
	return status;
}
