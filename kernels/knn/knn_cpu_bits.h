/*-------------------------------------------------------------------------
 *
 * knn_cpu_bits.h
 *	  The CPU path's rows of 0/1 values as bits (knn_cpu_bits.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_cpu_bits.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_KNN_CPU_BITS_H
#define ODP_KNN_CPU_BITS_H

#include <stdbool.h>
#include <stdint.h>

#include "include/odp_distance.h"
#include "include/odp_engine.h"

/*
 * Queries and candidates whose every value is 0 or 1, packed 64 to a word,
 * with the canonical distance of a pair by the number of positions where
 * they differ, in the rows' precision: distance and block for float32
 * rows, distance64 and block64 for float64 ones (the others NULL).  words
 * = 0: not in use.
 */
typedef struct OdpKnnBits
{
	int			words;			/* 64-bit words per row */
	uint64_t   *queries;		/* query rows x words */
	uint64_t   *cands;			/* candidate rows x words (may be queries) */
	float	   *distance;		/* dims + 1 canonical distances, by count */
	double	   *distance64;

	/*
	 * out[c] = distance[differing positions of q and row c of cands], for
	 * n rows of cands.
	 */
	void		(*block) (const uint64_t *q, const uint64_t *cands, int words,
						  int n, const float *distance, float *out);
	void		(*block64) (const uint64_t *q, const uint64_t *cands, int words,
							int n, const double *distance, double *out);
} OdpKnnBits;

/*
 * Packs queries and candidates (one matrix for both where they are the
 * same) when metric is euclidean, squared euclidean, manhattan or
 * chebyshev and every value of both is 0 or 1; otherwise, or without the
 * memory, leaves bits unused (words = 0) and the float path runs.
 */
extern void odp_knn_bits_prepare(OdpMetric metric, const OdpMatrix *queries,
								 const OdpMatrix *cands, OdpKnnBits *bits);
extern void odp_knn_bits_free(OdpKnnBits *bits);

/*
 * Packs one row of dims values into words 64-bit words at out; false, out
 * undefined, when a value is neither 0 nor 1.
 */
extern bool odp_knn_bits_pack_row(const float *row, int dims, uint64_t *out);
extern bool odp_knn_bits_pack_row64(const double *row, int dims, uint64_t *out);

/* Test counter: CPU k-NN runs that compared bits. */
extern int64_t odp_cpu_knn_bits_runs;

/*
 * Queries from which odp_cpu_knn compares 0/1 rows as bits: packing the
 * candidates costs about what eight queries' float distances do, so a
 * single query (odp_knn) keeps the float path.  A variable for the tests.
 */
extern int64_t odp_cpu_knn_bits_min_queries;

/*
 * The canonical distances from one row to n candidates of a block, into
 * acc: by bits where cbits is given (the block's first candidate of
 * bits->cands or a copy; qbits the row), else over the block ct
 * transposed (dims x cb, candidates contiguous, norms cn) from the row
 * qrow of norm qnorm.  Shared by the k-NN primitive and SolvingSet's
 * update pass; inlined where metric is a constant, so that the float
 * loop vectorises for it.  odp_cpu_block_distances64 is the same for
 * float64 rows.
 */
#define ODP_BLOCK_NAME odp_cpu_float_distances
#define ODP_BLOCK_T float
#define ODP_BLOCK_STEP odp_dist_step
#define ODP_BLOCK_FINISH odp_dist_finish
#include "knn/knn_cpu_block.h"

static inline __attribute__((always_inline)) void
odp_cpu_block_distances(OdpMetric metric, const OdpKnnBits *bits,
						const uint64_t *qbits, const uint64_t *cbits,
						const float *qrow, float qnorm, const float *ct,
						int cb, const float *cn, int dims, int n, float *acc)
{
	if (cbits != NULL)
	{
		bits->block(qbits, cbits, bits->words, n, bits->distance, acc);
		return;
	}
	odp_cpu_float_distances(metric, qrow, qnorm, ct, cb, cn, dims, n, acc);
}

#define ODP_BLOCK_NAME odp_cpu_double_distances
#define ODP_BLOCK_T double
#define ODP_BLOCK_STEP odp_dist_step64
#define ODP_BLOCK_FINISH odp_dist_finish64
#include "knn/knn_cpu_block.h"

static inline __attribute__((always_inline)) void
odp_cpu_block_distances64(OdpMetric metric, const OdpKnnBits *bits,
						  const uint64_t *qbits, const uint64_t *cbits,
						  const double *qrow, double qnorm, const double *ct,
						  int cb, const double *cn, int dims, int n, double *acc)
{
	if (cbits != NULL)
	{
		bits->block64(qbits, cbits, bits->words, n, bits->distance64, acc);
		return;
	}
	odp_cpu_double_distances(metric, qrow, qnorm, ct, cb, cn, dims, n, acc);
}

#endif							/* ODP_KNN_CPU_BITS_H */
