/*-------------------------------------------------------------------------
 *
 * knn_team.c
 *	  A k-NN self join's team of devices (knn_internal.h, OdpKnnTeam):
 *	  its making, and the join at which its parts agree whether they
 *	  share the pairs.  The split (knn_split.c) makes it; the parts' GPU
 *	  code (knn_gpu_run.cu, knn_gpu_tc.cu) joins and meets in it.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_team.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "knn/knn_internal.h"

/* See knn_internal.h. */
OdpKnnTeam *
odp_knn_team_make(int parts, const int64_t *first, int64_t rows)
{
	OdpKnnTeam *team = calloc(1, sizeof(OdpKnnTeam));

	if (team == NULL)
		return NULL;
	team->parts = parts;
	memcpy(team->first, first, sizeof(int64_t) * (size_t) (parts + 1));
	team->meeting = odp_meeting_make(parts);
	team->kth = malloc(sizeof(float) * (size_t) (rows > 0 ? rows : 1));
	if (team->meeting == NULL || team->kth == NULL)
	{
		odp_knn_team_free(team);
		return NULL;
	}
	return team;
}

/* See knn_internal.h. */
void
odp_knn_team_free(OdpKnnTeam *team)
{
	if (team == NULL)
		return;
	odp_meeting_free(team->meeting);
	free(team->kth);
	free(team);
}

/* See knn_internal.h. */
bool
odp_knn_team_join(OdpContext *pctx, OdpKnnTeam *team, int part, bool can, bool *all)
{
	bool		met = true;

	if (!team->joined[part])
	{
		team->can[part] = can;
		team->joined[part] = true;
		met = odp_meeting_attend(pctx, team->meeting);
	}
	*all = met;
	for (int q = 0; q < team->parts; q++)
		*all = *all && team->can[q];
	return met;
}
