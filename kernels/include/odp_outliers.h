/*-------------------------------------------------------------------------
 *
 * odp_outliers.h
 *	  Engine API of the distance-based outliers: every row's score and
 *	  the top n (brute force or SolvingSet).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_outliers.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_OUTLIERS_H
#define ODP_OUTLIERS_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Outlier scores (seed 001, Definition 3.1): for every row p, the sum of
 * the distances from p to its k nearest neighbours among the other rows
 * (p itself excluded by index; a duplicate of p counts, at distance 0).
 *
 * Requires 1 <= k < rows and k <= ODP_MAX_K.  scores must hold rows
 * doubles.  Runs on ctx->device.
 */
extern OdpStatus odp_compute_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
											OdpMetric metric, int32_t k,
											double *scores);

/* How odp_compute_top_outliers finds the top n. */
typedef enum OdpOutlierMethod
{
	ODP_METHOD_AUTO = 0,		/* whichever is expected to be faster */
	ODP_METHOD_BRUTEFORCE,		/* every row's score, then the n best */
	ODP_METHOD_SOLVINGSET,		/* SolvingSet (seeds 000, 001): prunes rows */
	ODP_METHOD_SPATIAL			/* every row's score through the spatial
								 * path (low dimensions), then the n best */
} OdpOutlierMethod;

/* What a top-n outlier computation did. */
typedef struct OdpTopOutliersStats
{
	OdpOutlierMethod method;	/* the method that ran (never AUTO) */
	int64_t		distances;		/* distance evaluations performed */
	int64_t		solving_set_size;	/* rows whose exact score was computed */
	int32_t		iterations;		/* SolvingSet candidate batches */
	int32_t		batch_size;		/* SolvingSet candidates per batch (m) */
} OdpTopOutliersStats;

/*
 * Top-n outliers: the min(n, rows) rows with the highest outlier scores
 * (as odp_compute_outlier_scores defines them), best first, ties by
 * smaller row index.  Writes their row indexes into order and their exact
 * scores into scores (both min(n, rows) long) and returns the count in
 * *count.  Every method returns exactly the same rows, order and scores.
 *
 * If solving_set is not NULL it must hold rows entries; the rows whose
 * exact score the computation established (the solving set, seed 001
 * Definition 3.3, for SolvingSet; every row for brute force) are written
 * there in ascending row order with their scores in solving_scores, and
 * stats->solving_set_size says how many.  The solving set is the same on
 * both paths.
 *
 * batch_size is SolvingSet's number of candidates per batch (m), 0 for
 * its default rule (rows / 64 within 4,096 .. 16,384); either is raised to
 * n and capped at rows.  A smaller m makes a smaller solving set in more
 * iterations.  The top n do not depend on it.
 *
 * Requires 1 <= k < rows, k < ODP_MAX_K for SolvingSet, n >= 1,
 * batch_size >= 0.
 */
extern OdpStatus odp_compute_top_outliers(OdpContext *ctx, const OdpMatrix *m,
										  OdpMetric metric, int32_t k,
										  int64_t n, OdpOutlierMethod method,
										  int64_t batch_size,
										  int64_t *order, double *scores,
										  int64_t *count,
										  int64_t *solving_set,
										  double *solving_scores,
										  OdpTopOutliersStats *stats);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_OUTLIERS_H */
