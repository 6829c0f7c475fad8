/*-------------------------------------------------------------------------
 *
 * skyline_math.h
 *	  The skyline's arithmetic, shared by the host and the device: ranks,
 *	  the presort key, the pruning mask and the dominance test.
 *
 * Dominance depends only on the order of the values within each feature,
 * so both paths replace every value by its dense rank in its feature
 * (after negating the features to maximise): equal values get equal
 * ranks, and every comparison afterwards is an exact 32-bit integer
 * comparison.
 *
 * The presort key is a weighted sum of the ranks with positive integer
 * weights, computed exactly in 64 bits, so p dominating q implies
 * key(p) < key(q): a row can only be dominated by rows before it in key
 * order.  Each weight scales its feature's ranks to about 2^32, so that
 * features with few distinct values count as much as the others and the
 * first rows are strong pruners (sort-filter-skyline, Chomicki et al.).
 *
 * The mask is a thermometer code per feature: bit i of feature d is set
 * when the rank reaches the feature's i-th quantile threshold.  Ranks
 * p <= q give mask bits p <= q, so a p with a bit that q lacks cannot
 * dominate q; one 64-bit test discards most pairs before any feature is
 * compared (the idea of SkyAlign's static partitioning, Bøgh et al.).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_math.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SKYLINE_MATH_H
#define ODP_SKYLINE_MATH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "include/odp_hostdev.h"
#include "include/odp_order.h"

/* Mask bits per row. */
#define ODP_SKY_MASK_BITS	64

/* Most threshold bits one feature gets (small D). */
#define ODP_SKY_MAX_BITS_PER_DIM	15

/* Features that contribute mask bits: the first 64 at most. */
ODP_HD int
odp_sky_mask_dims(int dims)
{
	return dims < ODP_SKY_MASK_BITS ? dims : ODP_SKY_MASK_BITS;
}

/* Threshold bits per masked feature. */
ODP_HD int
odp_sky_bits_per_dim(int dims)
{
	int			t = ODP_SKY_MASK_BITS / odp_sky_mask_dims(dims);

	return t < ODP_SKY_MAX_BITS_PER_DIM ? t : ODP_SKY_MAX_BITS_PER_DIM;
}

/*
 * Position, in a feature's ascending order of rows rows, whose rank is
 * threshold i (0 .. bits-1): the (i+1)/(bits+1) quantile.
 */
ODP_HD int64_t
odp_sky_threshold_pos(int64_t rows, int i, int bits)
{
	return rows * (int64_t) (i + 1) / (int64_t) (bits + 1);
}

/* The value compared for feature d: negated when maximised, -0 as 0. */
ODP_HD double
odp_sky_value(double v, bool maximize)
{
	return (maximize ? -v : v) + 0.0;
}

/* Weight of a feature whose ranks go 0 .. max_rank; at least 1. */
ODP_HD uint64_t
odp_sky_weight(uint32_t max_rank)
{
	return ((uint64_t) 1 << 32) / ((uint64_t) max_rank + 1);
}

/*
 * The mask bits of one feature's rank: bits thresholds, bit i set when
 * rank >= thr[i]; placed at bit d * bits.
 */
ODP_HD uint64_t
odp_sky_mask_bits(uint32_t rank, const uint32_t *thr, int bits, int d)
{
	uint64_t	m = 0;

	for (int i = 0; i < bits; i++)
		m |= (uint64_t) (rank >= thr[i]) << i;
	return m << (d * bits);
}

/* Whether mask mp allows p to dominate q (mask mq). */
ODP_HD bool
odp_sky_mask_allows(uint64_t mp, uint64_t mq)
{
	return (mp & ~mq) == 0;
}

/* Whether rank vector p dominates rank vector q. */
ODP_HD bool
odp_sky_dominates(const uint32_t *p, const uint32_t *q, int dims)
{
	bool		strict = false;

	for (int d = 0; d < dims; d++)
	{
		if (p[d] > q[d])
			return false;
		strict |= p[d] < q[d];
	}
	return strict;
}

#endif							/* ODP_SKYLINE_MATH_H */
