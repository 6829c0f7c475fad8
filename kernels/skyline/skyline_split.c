/*-------------------------------------------------------------------------
 *
 * skyline_split.c
 *	  The skyline and k-skyband spread over the devices of the call's
 *	  device set (device_set.h): partitioned local skybands, then a merge.
 *
 * Each part takes a contiguous range of the rows and computes its local
 * k-skyband (band = k) on its device: every row's number of dominators
 * within its range, capped at k.  A row dominated by k rows of its own
 * range is dominated by at least k rows, so it is out of the band, with
 * dominated_by = k as one device says.  The rows left, the union U of the
 * local bands, are then compared with each other on the first device, and
 * a row of U gets the number of its dominators within U, capped at k.
 * That is its number among all rows:
 *
 *	- a row r of the band (fewer than k dominators overall) has all its
 *	  dominators in U: a dominator q of r has every dominator of q as a
 *	  dominator of r (dominance is transitive) and not r itself, so fewer
 *	  than k dominators overall, hence fewer than k in its range;
 *	- a row r with k or more dominators has k of them in U: either all
 *	  of them are in U, or one, q, is not, and then q has k dominators in
 *	  its range; the first k of those in an order where every row comes
 *	  after its dominators each have fewer than k dominators in the range,
 *	  so they are in U, and they dominate r.
 *
 * So every row gets exactly the number one device gives (and the CPU
 * path), whatever the partition.  The merge is the whole problem where
 * the local bands prune nothing (k large, or anti-correlated data of many
 * dimensions), and the spread then gains nothing.
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

/* Fewest rows per part; smaller inputs run on one device. */
#define SKY_SPLIT_MIN_ROWS		4096

/* One split call. */
typedef struct SkySplit
{
	const OdpSkylineProblem *p;
	int32_t    *dominated_by;
	int64_t		first[ODP_MAX_GPUS + 1];
	OdpSkylineStats stats[ODP_MAX_GPUS];
} SkySplit;

/* Part p: the local k-skyband of its rows, into its rows of dominated_by. */
static OdpStatus
SkySplitPart(void *arg, int part, OdpContext *pctx)
{
	SkySplit   *s = (SkySplit *) arg;
	const OdpMatrix64 *m = s->p->points;
	const int64_t r0 = s->first[part];
	OdpMatrix64 sub;
	OdpSkylineProblem sp;

	sub.data = m->data + r0 * m->dims;
	sub.missing = NULL;
	sub.rows = s->first[part + 1] - r0;
	sub.dims = m->dims;
	sp = *s->p;
	sp.points = &sub;
	if (sub.rows == 0)
		return ODP_OK;
	return odp_gpu_skyline(pctx, &sp, s->dominated_by + r0, &s->stats[part]);
}

/* Adds a part's counters to *to; times are the longest. */
static void
SkyAddStats(OdpSkylineStats *to, const OdpSkylineStats *from)
{
	to->pair_tests += from->pair_tests;
	to->full_tests += from->full_tests;
	to->blocks += from->blocks;
	if (from->presort_ms > to->presort_ms)
		to->presort_ms = from->presort_ms;
	if (from->loop_ms > to->loop_ms)
		to->loop_ms = from->loop_ms;
}

/*
 * The merge: the rows of U (dominated_by < band) against each other on
 * the first device; their counts replace the local ones.
 */
static OdpStatus
SkyMerge(OdpContext *ctx, const OdpSkylineProblem *p, int32_t *dominated_by,
		 OdpSkylineStats *stats)
{
	const OdpMatrix64 *m = p->points;
	const size_t dims = (size_t) m->dims;
	int64_t		nu = 0;
	int64_t    *rows = NULL;
	double	   *data = NULL;
	int32_t    *du = NULL;
	OdpMatrix64 sub;
	OdpSkylineProblem sp;
	OdpSkylineStats ms;
	OdpStatus	status;

	for (int64_t i = 0; i < m->rows; i++)
		nu += dominated_by[i] < p->band;
	rows = malloc(sizeof(int64_t) * (size_t) nu);
	data = malloc(sizeof(double) * dims * (size_t) nu);
	du = malloc(sizeof(int32_t) * (size_t) nu);
	if (rows == NULL || data == NULL || du == NULL)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the %lld rows of the local skybands",
						  (long long) nu);
		goto done;
	}
	nu = 0;
	for (int64_t i = 0; i < m->rows; i++)
	{
		if (dominated_by[i] >= p->band)
			continue;
		rows[nu] = i;
		memcpy(data + (size_t) nu * dims, m->data + (size_t) i * dims,
			   dims * sizeof(double));
		nu++;
	}
	sub.data = data;
	sub.missing = NULL;
	sub.rows = nu;
	sub.dims = m->dims;
	sp = *p;
	sp.points = &sub;
	memset(&ms, 0, sizeof(ms));
	status = odp_gpu_skyline(ctx, &sp, du, &ms);
	if (status == ODP_OK)
	{
		for (int64_t u = 0; u < nu; u++)
			dominated_by[rows[u]] = du[u];
		stats->pair_tests += ms.pair_tests;
		stats->full_tests += ms.full_tests;
		stats->blocks += ms.blocks;
		stats->presort_ms += ms.presort_ms;
		stats->loop_ms += ms.loop_ms;
	}
done:
	free(rows);
	free(data);
	free(du);
	return status;
}

/* See skyline_internal.h. */
OdpStatus
odp_split_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
				  int32_t *dominated_by, OdpSkylineStats *stats)
{
	OdpDeviceSet set;
	SkySplit   *s;
	OdpStatus	status;
	double		transfer_ms,
				compute_ms;
	int64_t		chunks;

	if ((status = OdpDeviceSetResolve(ctx, &set)) != ODP_OK)
		return status;
	if (set.count == 1 || p->points->rows < (int64_t) set.count * SKY_SPLIT_MIN_ROWS)
		return odp_gpu_skyline(ctx, p, dominated_by, stats);

	s = calloc(1, sizeof(SkySplit));
	if (s == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	s->p = p;
	s->dominated_by = dominated_by;
	OdpSplitRows(p->points->rows, set.count, false, 1, s->first);
	status = OdpDeviceSetRun(ctx, &set, SkySplitPart, s, NULL, NULL);
	memset(stats, 0, sizeof(*stats));
	for (int q = 0; q < set.count; q++)
		SkyAddStats(stats, &s->stats[q]);
	free(s);
	if (status != ODP_OK)
		return status;

	/* the merge runs alone on the first device, with its whole budget */
	transfer_ms = ctx->transfer_ms;
	compute_ms = ctx->compute_ms;
	chunks = ctx->chunks;
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	status = SkyMerge(ctx, p, dominated_by, stats);
	ctx->transfer_ms += transfer_ms;
	ctx->compute_ms += compute_ms;
	ctx->chunks += chunks;
	return status;
}
