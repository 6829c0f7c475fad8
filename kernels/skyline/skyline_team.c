/*-------------------------------------------------------------------------
 *
 * skyline_team.c
 *	  The meeting place of a split skyline's parts (skyline_internal.h,
 *	  OdpSkyTeam): the devices' meeting (device_set.h), and the sum of
 *	  the parts' counts of a block.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_team.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "devices/device_set.h"
#include "skyline/skyline_internal.h"

int64_t		odp_sky_split_window = ODP_SKY_SPLIT_WINDOW;

/* The parts' meeting place (skyline_internal.h). */
struct OdpSkyTeam
{
	int			parts;
	OdpMeeting *meeting;
	int64_t		planned[ODP_MAX_GPUS];
	int32_t    *counts[2][ODP_MAX_GPUS];	/* by meeting parity and part */
};

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
	*stopped = !odp_meeting_attend(pctx, team->meeting);
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
	if (!odp_meeting_attend(pctx, team->meeting))
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
	odp_meeting_free(team->meeting);
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
	if ((team->meeting = odp_meeting_make(parts)) == NULL)
	{
		free(team);
		return NULL;
	}
	for (int a = 0; a < 2; a++)
		for (int q = 0; q < parts; q++)
			if ((team->counts[a][q] = malloc(sizeof(int32_t) * ODP_SKY_GPU_BLOCK)) == NULL)
			{
				odp_sky_team_free(team);
				return NULL;
			}
	return team;
}
