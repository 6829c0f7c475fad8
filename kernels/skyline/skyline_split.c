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
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/host_threads.h"
#include "devices/device_set.h"
#include "gpu/gpu_runtime.h"
#include "skyline/skyline_internal.h"
#include "skyline/skyline_math.h"

/*
 * Fewest rows for a split: below, no block meets a window large enough to
 * be split, and the parts would only repeat one device's work.
 */
#define SKY_SPLIT_MIN_ROWS		(odp_sky_split_window + ODP_SKY_GPU_BLOCK)

int64_t		odp_sky_split_window = ODP_SKY_SPLIT_WINDOW;

/* How long a part spins at a meeting before it sleeps, in nanoseconds. */
#define SKY_MEET_SPIN_NS		200000L

/* The parts' meeting place (skyline_internal.h). */
struct OdpSkyTeam
{
	int			parts;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int			arrived;		/* under lock */
	atomic_llong meetings;		/* meetings held */
	int64_t		planned[ODP_MAX_GPUS];
	int32_t    *counts[2][ODP_MAX_GPUS];	/* by meeting parity and part */
};

/* One split call. */
typedef struct SkySplit
{
	const OdpSkylineProblem *p;
	int32_t    *dominated_by;
	OdpSkyTeam *team;
	OdpSkylineStats stats[ODP_MAX_GPUS];
} SkySplit;

static int64_t
SkyNowNs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Waits until every part has come: true, or false when the run was
 * stopped (a part failed or the call was cancelled) meanwhile.  Parts
 * usually arrive within microseconds of each other, so a part spins a
 * while before it sleeps.
 */
static bool
SkyMeet(OdpContext *pctx, OdpSkyTeam *team)
{
	long long	held;
	int64_t		until;

	pthread_mutex_lock(&team->lock);
	held = atomic_load(&team->meetings);
	if (++team->arrived == team->parts)
	{
		team->arrived = 0;
		atomic_store(&team->meetings, held + 1);
		pthread_cond_broadcast(&team->cond);
		pthread_mutex_unlock(&team->lock);
		return true;
	}
	pthread_mutex_unlock(&team->lock);
	until = SkyNowNs() + SKY_MEET_SPIN_NS;
	while (atomic_load(&team->meetings) == held && SkyNowNs() < until)
		;
	pthread_mutex_lock(&team->lock);
	while (atomic_load(&team->meetings) == held)
	{
		struct timespec wake;

		if (odp_cancel_requested(pctx))
		{
			pthread_mutex_unlock(&team->lock);
			return false;
		}
		odp_deadline_after(&wake, 1000000L);
		(void) pthread_cond_timedwait(&team->cond, &team->lock, &wake);
	}
	pthread_mutex_unlock(&team->lock);
	return true;
}

/* See skyline_internal.h. */
int
odp_sky_team_parts(const OdpSkyTeam *team)
{
	return team->parts;
}

/* See skyline_internal.h. */
int64_t
odp_sky_team_block(OdpContext *pctx, OdpSkyTeam *team, int part,
				   int64_t planned, bool *stopped)
{
	int64_t		block = planned;

	team->planned[part] = planned;
	*stopped = !SkyMeet(pctx, team);
	for (int q = 0; q < team->parts; q++)
		if (team->planned[q] < block)
			block = team->planned[q];
	return block;
}

/* See skyline_internal.h. */
bool
odp_sky_team_add(OdpContext *pctx, OdpSkyTeam *team, int part, int64_t round,
				 const int32_t *counts, const int32_t *base, int64_t nb,
				 int32_t *sum)
{
	const int	at = (int) (round & 1);

	/*
	 * Two sets of buffers: a part that has summed may write the next
	 * meeting's while a slower one still reads this one's, but not the one
	 * after, which waits for the slower part at the next meeting.
	 */
	memcpy(team->counts[at][part], counts, sizeof(int32_t) * (size_t) nb);
	if (!SkyMeet(pctx, team))
		return false;
	for (int64_t i = 0; i < nb; i++)
	{
		int64_t		b = base != NULL ? base[i] : 0;
		int64_t		t = b;

		for (int q = 0; q < team->parts; q++)
			t += team->counts[at][q][i] - b;
		sum[i] = (int32_t) t;
	}
	return true;
}

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

static void
SkyTeamFree(OdpSkyTeam *team)
{
	for (int a = 0; a < 2; a++)
		for (int q = 0; q < team->parts; q++)
			free(team->counts[a][q]);
	pthread_mutex_destroy(&team->lock);
	pthread_cond_destroy(&team->cond);
	free(team);
}

static OdpSkyTeam *
SkyTeamMake(int parts)
{
	OdpSkyTeam *team = calloc(1, sizeof(OdpSkyTeam));

	if (team == NULL)
		return NULL;
	team->parts = parts;
	pthread_mutex_init(&team->lock, NULL);
	pthread_cond_init(&team->cond, NULL);
	atomic_init(&team->meetings, 0);
	for (int a = 0; a < 2; a++)
		for (int q = 0; q < parts; q++)
			if ((team->counts[a][q] = malloc(sizeof(int32_t) * ODP_SKY_GPU_BLOCK)) == NULL)
			{
				SkyTeamFree(team);
				return NULL;
			}
	return team;
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
	void	   *pinned;
	double		before,
				pin_ms;

	if ((status = OdpDeviceSetResolve(ctx, &set)) != ODP_OK)
		return status;
	if (m->rows < SKY_SPLIT_MIN_ROWS || m->rows < 2 ||
		!OdpDeviceSetWorth(ctx, &set, odp_one_device_ms(ODP_WORK_SKYLINE, (double) m->rows)))
		return odp_gpu_skyline(ctx, p, dominated_by, stats);

	memset(&s, 0, sizeof(s));
	s.p = p;
	s.dominated_by = dominated_by;
	if ((s.team = SkyTeamMake(set.count)) == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	/* every part copies every row: page-locked once for all of them */
	before = ctx->transfer_ms;
	pinned = odp_gpu_pin_shared(ctx, m->data, sizeof(double) * (size_t) m->rows * (size_t) m->dims);
	pin_ms = ctx->transfer_ms - before;
	status = OdpDeviceSetRun(ctx, &set, SkySplitPart, &s, NULL, NULL);
	ctx->transfer_ms += pin_ms;
	odp_gpu_unpin_shared(ctx, pinned);
	SkyTeamFree(s.team);
	memset(stats, 0, sizeof(*stats));
	for (int q = 0; q < set.count; q++)
		SkyAddStats(stats, &s.stats[q]);
	return status;
}
