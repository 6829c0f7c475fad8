/*-------------------------------------------------------------------------
 *
 * odp_intervals.h
 *	  Engine API of the interval (region) matching.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_intervals.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_INTERVALS_H
#define ODP_INTERVALS_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * A set of regions: axis-parallel boxes of dims dimensions, one interval
 * per dimension, as order-preserving 64-bit keys of their bounds
 * (odp_order.h: odp_order_int64 for integers, dates and timestamps,
 * odp_order_float64 for floating-point values), rows x dims each,
 * row-major.  flags holds rows x dims ODP_BOUND_* bits; the key of an
 * infinite bound is ignored.  flags NULL promises that every bound is
 * included and finite and that no lower key exceeds its upper key (no
 * interval is empty): then nothing is checked or copied.
 *
 * Overlap in one dimension is what PostgreSQL's range && means: a lower
 * bound L and an upper bound U "meet" when L's value is below U's, or
 * equal and both included; an infinite bound meets every bound; two
 * intervals overlap when each one's lower bound meets the other's upper
 * bound.  An interval flagged empty, or whose own bounds do not meet,
 * overlaps nothing, and so does its region.  Two regions overlap when
 * they overlap in every dimension.
 */
#define ODP_BOUND_LOWER_EXCLUSIVE	0x01
#define ODP_BOUND_UPPER_EXCLUSIVE	0x02
#define ODP_BOUND_LOWER_INFINITE	0x04
#define ODP_BOUND_UPPER_INFINITE	0x08
#define ODP_BOUND_EMPTY				0x10

typedef struct OdpRegions
{
	const uint64_t *lower;
	const uint64_t *upper;
	const uint8_t *flags;		/* or NULL */
	int64_t		rows;
	int32_t		dims;
} OdpRegions;

/* How the bounds of one dimension are compared. */
typedef enum OdpIntervalCompare
{
	ODP_INTERVAL_EXACT = 0,		/* as keys, with the flags (above) */
	ODP_INTERVAL_BOX			/* keys of float64 values, with no flags,
								 * compared as PostgreSQL's box && compares
								 * coordinates: L meets U when L <= U + 1e-6
								 * (EPSILON of utils/geo_decls.h), in float64 */
} OdpIntervalCompare;

/* Most dimensions a region may have. */
#define ODP_MAX_INTERVAL_DIMS	100

/*
 * A matching problem: every region of a (subscriptions) against every
 * region of b (updates), or, with b NULL, every pair of distinct regions
 * of a.  compare has dims entries (NULL: every dimension exact); a and b
 * have the same dims, from 1 to ODP_MAX_INTERVAL_DIMS, and at most
 * ODP_MAX_ROWS rows each (0 is allowed: no pairs).
 */
typedef struct OdpIntervalProblem
{
	const OdpRegions *a;
	const OdpRegions *b;		/* or NULL */
	const uint8_t *compare;		/* OdpIntervalCompare per dimension, or NULL */
} OdpIntervalProblem;

/* What a matching computation did. */
typedef struct OdpIntervalStats
{
	int64_t		pairs;			/* overlapping pairs */
	int64_t		candidates;		/* pairs that overlap in the sweep dimension,
								 * whose other dimensions were tested (or,
								 * with one exact dimension, all pairs) */
	int64_t		empty;			/* regions that overlap nothing */
	int32_t		sweep_dim;		/* the dimension whose sorted lower bounds
								 * drive the search */
	int32_t		runs;			/* chunks of subscriptions x chunks of
								 * updates the path ran */
	double		prep_ms;		/* of compute_ms: positions, empty regions and
								 * the sweep dimension, on the host */
	double		setup_ms;		/* of compute_ms: the path's start (GPU:
								 * device, plan, buffers) and end */
	double		match_ms;		/* of compute_ms: sorted structures, windows,
								 * candidates and the pairs' order */
	double		sort_ms;		/* of match_ms: ordering the pairs */
} OdpIntervalStats;

/*
 * Receives pairs of odp_compute_interval_pairs in ascending (a, b) order,
 * a a row of p->a, b a row of p->b (of p->a, with a < b, for one set).
 * Called from the caller's thread only.  Returning false stops the
 * computation: the call then frees everything and returns
 * ODP_ERR_CANCELLED.
 */
typedef bool (*OdpIntervalPairFn) (void *arg, const int64_t *a,
								   const int64_t *b, int64_t count);

/*
 * Every overlapping pair, handed to emit in ascending (a, b) order; *pairs
 * receives their number.  Sort-based matching: the lower bounds of the
 * sweep dimension are sorted, each region finds the regions whose lower
 * bound lies within its interval there by binary search, and the other
 * dimensions are tested on the fly.  Runs on ctx->device; both paths give
 * the same pairs.  stats may be NULL.
 */
extern OdpStatus odp_compute_interval_pairs(OdpContext *ctx,
											const OdpIntervalProblem *p,
											OdpIntervalPairFn emit,
											void *emit_arg, int64_t *pairs,
											OdpIntervalStats *stats);

/*
 * The number of overlapping pairs, without producing them (with one exact
 * dimension, without looking at them).  stats may be NULL.
 */
extern OdpStatus odp_compute_interval_count(OdpContext *ctx,
											const OdpIntervalProblem *p,
											int64_t *pairs,
											OdpIntervalStats *stats);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_INTERVALS_H */
