/*-------------------------------------------------------------------------
 *
 * odp_pearson.h
 *	  Engine API of the Pearson and Spearman correlation of series.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_pearson.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_PEARSON_H
#define ODP_PEARSON_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* Which coefficient odp_compute_pearson_* compute. */
typedef enum OdpPearsonMethod
{
	ODP_PEARSON_METHOD_PEARSON = 0,
	ODP_PEARSON_METHOD_SPEARMAN			/* Pearson of the ranks, ties averaged */
} OdpPearsonMethod;

/* What odp_compute_pearson_top ranks partners by (largest first). */
typedef enum OdpPearsonRank
{
	ODP_PEARSON_RANK_ABS = 0,		/* |r| */
	ODP_PEARSON_RANK_POSITIVE,		/* r */
	ODP_PEARSON_RANK_NEGATIVE		/* -r */
} OdpPearsonRank;

/*
 * The common arguments of a correlation call.  x holds series a, y (or
 * NULL) series b; with y NULL every pair of distinct rows of x is
 * correlated (a self correlation), else every row of x with every row of
 * y, and both must have the same dims.
 *
 * A pair's coefficient uses the positions where both series have a value
 * (all of them unless a matrix has missing flags, pandas' pairwise-
 * complete rule); a pair with fewer than min_periods such positions, or
 * over which either series is constant, has no coefficient.  Spearman
 * needs complete data (no missing flags).  r is computed in float64 from
 * centred series (never from one-pass sums of squares) and lies in
 * [-1, 1].
 */
typedef struct OdpPearsonProblem
{
	const OdpMatrix64 *x;
	const OdpMatrix64 *y;		/* or NULL: x against itself */
	OdpPearsonMethod method;
	int32_t		min_periods;	/* >= 1; pairs need max(2, this) positions */
} OdpPearsonProblem;

/*
 * Receives pairs of odp_compute_pearson_pairs in ascending (a, b) order, a
 * and b row indexes of x and of y (of x for a self correlation).  Called
 * from the caller's thread only.  Returning false stops the computation:
 * the call then frees everything and returns ODP_ERR_CANCELLED.
 */
typedef bool (*OdpPearsonPairFn) (void *arg, const int64_t *a, const int64_t *b,
							   const double *r, int64_t count);

/*
 * Every pair (a, b) with |r| >= min_abs_r (0 <= min_abs_r <= 1), passed
 * to emit in ascending (a, b) order; a self correlation gives each
 * unordered pair once, as a < b.  *pairs receives the number of pairs.
 * Runs on ctx->device.
 */
extern OdpStatus odp_compute_pearson_pairs(OdpContext *ctx,
										const OdpPearsonProblem *p,
										double min_abs_r, OdpPearsonPairFn emit,
										void *emit_arg, int64_t *pairs);

/*
 * For every row a of x its k partners (rows b of y, or of x other than a
 * for a self correlation) ranked first by rank, ties by smaller b: writes
 * them to other[a * k ..] and their coefficients to r[a * k ..], best
 * first; where a has fewer than k partners with a coefficient the list
 * ends with other = -1.  Requires 1 <= k <= ODP_MAX_K.  Runs on
 * ctx->device.
 */
extern OdpStatus odp_compute_pearson_top(OdpContext *ctx, const OdpPearsonProblem *p,
									  int32_t k, OdpPearsonRank rank,
									  int64_t *other, double *r);

/*
 * Whether the GPU path of the correlations can run: a GPU is usable and
 * cuBLAS, which it loads at first use, could be loaded.  Otherwise
 * returns ODP_ERR_NO_GPU with the reason in ctx->message.
 */
extern OdpStatus odp_gpu_pearson_available(OdpContext *ctx);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_PEARSON_H */
