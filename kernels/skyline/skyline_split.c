/*-------------------------------------------------------------------------
 *
 * skyline_split.c
 *	  The skyline and k-skyband spread over the devices of the call's
 *	  device set (device_set.h): one block loop run by every device, each
 *	  counting its share of the rows of the blocks that repay it.
 *
 * Partitioning the rows (local bands, then the union compared on one
 * device) gains nothing where the local bands prune nothing: anti-
 * correlated data of many dimensions, whose skyline is most of the rows,
 * made the merge the whole problem, and two H200s took 1.27 times one's
 * compute on 3 x 10^6 x 8 rows (2026-11-28).  So the parts split the
 * tests instead (skyline_internal.h, OdpSkyTeam): each presorts every row
 * and keeps the whole window; a block met by a large window is counted
 * by every part for its own share of the block's rows, and the parts add
 * their counts at two meetings per block (after each step), so that they
 * go on with the same counts and append the same members.  A row's count
 * is then what one device gives: each row is counted by one part against
 * the same partners, and the counts below the band are exact whatever
 * order partners are met in (skyline_internal.h).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_split.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "devices/device_set.h"
#include "skyline/skyline_internal.h"
#include "skyline/skyline_math.h"

/*
 * Fewest rows for a split: below, no block meets a window large enough to
 * be split, and the parts would only repeat one device's work.
 */
#define SKY_SPLIT_MIN_ROWS		(odp_sky_split_window + ODP_SKY_GPU_BLOCK)

/* One split call. */
typedef struct SkySplit
{
	const OdpSkylineProblem *p;
	int32_t    *dominated_by;
	OdpSkyTeam *team;
	OdpSkylineStats stats[ODP_MAX_GPUS];
} SkySplit;

/* Part p: the block loop with the team; part 0 writes the result. */
static OdpStatus
SkySplitPart(void *arg, int part, OdpContext *pctx)
{
	SkySplit   *s = (SkySplit *) arg;

	return odp_gpu_skyline_part(pctx, s->p, part == 0 ? s->dominated_by : NULL,
								&s->stats[part], s->team, part);
}

/* Adds a part's counters to *to; times are the longest. */
static void
SkyAddStats(OdpSkylineStats *to, const OdpSkylineStats *from)
{
	to->pair_tests += from->pair_tests;
	to->full_tests += from->full_tests;
	if (from->blocks > to->blocks)
		to->blocks = from->blocks;
	if (from->presort_ms > to->presort_ms)
		to->presort_ms = from->presort_ms;
	if (from->loop_ms > to->loop_ms)
		to->loop_ms = from->loop_ms;
}

/* See skyline_internal.h. */
OdpStatus
odp_split_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
				  int32_t *dominated_by, OdpSkylineStats *stats)
{
	OdpDeviceSet set;
	SkySplit	s;
	OdpStatus	status;
	const OdpMatrix64 *m = p->points;
	OdpSharedInputs in = {0};

	if ((status = OdpDeviceSetResolve(ctx, &set)) != ODP_OK)
		return status;
	if (m->rows < SKY_SPLIT_MIN_ROWS || m->rows < 2 ||
		!OdpDeviceSetWorth(ctx, &set, odp_one_device_ms(ODP_WORK_SKYLINE, m->rows, 0, 0)))
		return odp_gpu_skyline(ctx, p, dominated_by, stats);

	memset(&s, 0, sizeof(s));
	s.p = p;
	s.dominated_by = dominated_by;
	if ((s.team = odp_sky_team_make(set.count)) == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	/* every part copies every row: page-locked once for all of them */
	OdpSharedInputsPin(ctx, &in, m->data, sizeof(double) * (size_t) m->rows * (size_t) m->dims);
	status = OdpDeviceSetRun(ctx, &set, SkySplitPart, &s, NULL, NULL);
	OdpSharedInputsRelease(ctx, &in);
	odp_sky_team_free(s.team);
	memset(stats, 0, sizeof(*stats));
	for (int q = 0; q < set.count; q++)
		SkyAddStats(stats, &s.stats[q]);
	return status;
}
