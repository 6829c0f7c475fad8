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

#ifdef __cplusplus
}
#endif

#endif							/* ODP_SKY_INTERNAL_H */
