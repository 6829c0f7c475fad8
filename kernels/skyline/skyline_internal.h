/*-------------------------------------------------------------------------
 *
 * skyline_internal.h
 *	  Declarations shared by the skyline dispatcher (skyline.c), the
 *	  presort (skyline_presort.c), the two paths (skyline_cpu.c,
 *	  skyline_gpu.cu) and the split (skyline_split.c): the presorted rank
 *	  matrix and the per-path entry points.
 *
 * Both paths run the same algorithm on the same presorted ranks
 * (skyline_math.h): rows in blocks of key order; each row of a block is
 * compared with the band members of earlier blocks (step 1), then with the
 * earlier rows of its block that step 1 left in the band (step 2); the
 * block's band members join the window.  A row's count is exact while it
 * is below band: every dominator of a band member is itself a band member
 * earlier in key order, and any set of comparison partners that contains
 * those and nothing but rows before it counts exactly those.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SKY_INTERNAL_H
#define ODP_SKY_INTERNAL_H

#include "common/engine_internal.h"
#include "include/odp_skyline.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* The rows in key order, as ranks (skyline_math.h). */
typedef struct OdpSkyPrep
{
	int64_t		rows;
	int32_t		dims;
	uint32_t   *ranks;			/* rows x dims, row-major, in key order */
	uint64_t   *masks;			/* per position */
	int64_t    *order;			/* position -> input row */
} OdpSkyPrep;

/*
 * Ranks, keys, masks and the key order of p's rows on the host, with
 * ctx->cpu_threads threads; on failure nothing is left allocated.
 */
extern OdpStatus odp_sky_prepare(OdpContext *ctx, const OdpSkylineProblem *p,
								 OdpSkyPrep *prep);
extern void odp_sky_prep_free(OdpSkyPrep *prep);

/*
 * The error both paths report for a NaN or infinity, found while ranking:
 * row is the smallest row that has one.
 */
extern OdpStatus odp_sky_not_finite(OdpContext *ctx, int64_t row);

/* Rows per block of the block loop on each path. */
#define ODP_SKY_CPU_BLOCK	4096
#define ODP_SKY_GPU_BLOCK	16384

/* Per-path implementations; arguments checked by odp_compute_skyline. */
extern OdpStatus odp_cpu_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
								 int32_t *dominated_by, OdpSkylineStats *stats);
extern OdpStatus odp_gpu_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
								 int32_t *dominated_by, OdpSkylineStats *stats);

/* The GPU path spread over ctx's devices (skyline_split.c). */
extern OdpStatus odp_split_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
								   int32_t *dominated_by, OdpSkylineStats *stats);

/*
 * The parts of a split skyline (skyline_split.c), each on its own device
 * and thread, run one block loop together.  Every part presorts every row
 * and keeps the whole window, so the parts' windows stay identical; a
 * block met by a window of at least ODP_SKY_SPLIT_WINDOW rows is split:
 * each part counts its share of the block's rows (CTAs taken in turn),
 * and the parts add up their counts at a meeting after each step.  A
 * block met by a smaller window, whose tests cost less than the meetings,
 * is counted whole by every part, with the same counts.
 */
#define ODP_SKY_SPLIT_WINDOW	((int64_t) 4 * ODP_SKY_GPU_BLOCK)

/* ODP_SKY_SPLIT_WINDOW; a test hook: tests lower it to split small calls. */
extern int64_t odp_sky_split_window;

typedef struct OdpSkyTeam OdpSkyTeam;

/* A team of parts parts (skyline_team.c); NULL without memory. */
extern OdpSkyTeam *odp_sky_team_make(int parts);
extern void odp_sky_team_free(OdpSkyTeam *team);

extern int	odp_sky_team_parts(const OdpSkyTeam *team);

/* Rows per block the parts agree on: the smallest any of them planned. */
extern int64_t odp_sky_team_block(OdpContext *pctx, OdpSkyTeam *team, int part,
								  int64_t planned, bool *stopped);

/*
 * A split block's meeting: part's counts of the block's nb rows (at most
 * ODP_SKY_GPU_BLOCK; its own rows counted from base, the others as base;
 * base NULL: zeros) into sum, the counts every part then holds.  round is the part's count of
 * meetings so far (every part meets as often).  False when the run was
 * stopped meanwhile.
 */
extern bool odp_sky_team_add(OdpContext *pctx, OdpSkyTeam *team, int part,
							 int64_t round, const int32_t *counts,
							 const int32_t *base, int64_t nb, int32_t *sum);

/*
 * odp_gpu_skyline as part part of team (NULL: alone); only part 0 writes
 * dominated_by (the others may pass NULL).
 */
extern OdpStatus odp_gpu_skyline_part(OdpContext *ctx, const OdpSkylineProblem *p,
									  int32_t *dominated_by, OdpSkylineStats *stats,
									  OdpSkyTeam *team, int part);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_SKY_INTERNAL_H */
