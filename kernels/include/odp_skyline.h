/*-------------------------------------------------------------------------
 *
 * odp_skyline.h
 *	  Engine API of the skyline and k-skyband.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_skyline.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SKYLINE_H
#define ODP_SKYLINE_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * A skyline problem: the rows of points (no missing values, every value
 * finite), each feature to be minimised, or maximised where maximize[d]
 * is nonzero (maximize NULL: minimise every feature).  Row p dominates row
 * q when p is at least as good as q in every feature and strictly better
 * in one; equal rows do not dominate each other.  Values are compared as
 * the float64 they are (-0 equals 0).
 */
typedef struct OdpSkylineProblem
{
	const OdpMatrix64 *points;
	const uint8_t *maximize;	/* dims flags, or NULL */
	int32_t		band;			/* >= 1: the k of the k-skyband */
} OdpSkylineProblem;

/* What a skyline computation did. */
typedef struct OdpSkylineStats
{
	int64_t		members;		/* rows dominated by fewer than band others */
	int64_t		pair_tests;		/* (dominator candidate, row) pairs looked at */
	int64_t		full_tests;		/* of them, compared feature by feature */
	int64_t		blocks;			/* blocks of rows, in presorted order */
	double		presort_ms;		/* of compute_ms: ranks, keys, order */
	double		loop_ms;		/* of compute_ms: the blocks' comparisons */
} OdpSkylineStats;

/*
 * The k-skyband (band = k; the skyline for band = 1): writes, for every
 * row r, dominated_by[r] = the number of rows that dominate r when that is
 * less than band, else band (r is not in the band).  stats may be NULL.
 * Both paths give the same numbers.
 */
extern OdpStatus odp_compute_skyline(OdpContext *ctx,
									 const OdpSkylineProblem *p,
									 int32_t *dominated_by,
									 OdpSkylineStats *stats);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_SKYLINE_H */
