/*-------------------------------------------------------------------------
 *
 * skyline_team.c
 *	  The meeting place of a split skyline's parts (skyline_internal.h,
 *	  OdpSkyTeam): a barrier that a stopped run releases, and the sum of
 *	  the parts' counts of a block.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_team.c
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
#include "skyline/skyline_internal.h"

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

/* See skyline_internal.h. */
void
odp_sky_team_free(OdpSkyTeam *team)
{
	for (int a = 0; a < 2; a++)
		for (int q = 0; q < team->parts; q++)
			free(team->counts[a][q]);
	pthread_mutex_destroy(&team->lock);
	pthread_cond_destroy(&team->cond);
	free(team);
}

/* See skyline_internal.h. */
OdpSkyTeam *
odp_sky_team_make(int parts)
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
				odp_sky_team_free(team);
				return NULL;
			}
	return team;
}
