/*-------------------------------------------------------------------------
 *
 * pearson_math.h
 *	  The one definition of the correlation arithmetic that both paths
 *	  share: coefficients from pairwise sums, the exact recomputation of
 *	  one pair, average ranks, and the ranking keys of top-k lists.
 *
 * How a coefficient is computed (both paths):
 *
 * 1. Every series is prepared once: scaled by a power of two (exact) so
 *	  that its largest magnitude is below 1 and no sum can overflow, then
 *	  centred on its mean in two passes (the mean, then the mean of the
 *	  residuals subtracted again, which removes the rounding of the first
 *	  mean: a series of 1e9 + noise keeps every digit of the noise).
 *	  Complete data: the centred series is divided by its norm, so that r
 *	  is one dot product, computed as a matrix product of the prepared
 *	  series (cuBLAS DGEMM on the GPU, a blocked loop on the CPU).
 *	  Pairwise-complete data (missing values): the centred series c, its
 *	  squares c^2 and its presence mask m (1 or 0; c = 0 where missing)
 *	  are kept, and six matrix products give, for every pair, the count n
 *	  of common positions and the sums of x, y, x^2, y^2 and xy over them;
 *	  the scaled values themselves are kept too, for step 2.
 *
 * 2. From the sums, odp_pearson_from_sums centres on the pair's own means
 *	  (cov = Sxy - Sx Sy / n and likewise the variances).  Because the
 *	  series are already centred on their overall means this subtraction
 *	  loses little, except where a pair's common positions sit far from a
 *	  series' mean (a level shift, say); then the variance keeps less than
 *	  ODP_PEARSON_TRUSTED_SHARE of the raw sum of squares, and the pair is
 *	  recomputed from its scaled values (not from c, whose rounding at the
 *	  series' mean would show at the pair's much smaller spread) by
 *	  odp_pearson_pair_exact, a two-pass computation over the common
 *	  positions.  That is also how a pair over
 *	  whose common positions a series is constant is recognised (its
 *	  variance is zero up to rounding): it has no coefficient.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_math.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_PEARSON_MATH_H
#define ODP_PEARSON_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "include/odp_hostdev.h"
#include "include/odp_pearson.h"

/* Fewest common positions any coefficient needs. */
#define ODP_PEARSON_MIN_POSITIONS	2

/*
 * Pairwise sums are trusted while each series' variance over the common
 * positions keeps more than this share of its sum of squares (a loss of
 * at most 4 bits to cancellation); below it the pair is recomputed.
 */
#define ODP_PEARSON_TRUSTED_SHARE	(1.0 / 16.0)

/* Clamps a coefficient that rounding put outside [-1, 1]. */
ODP_HD double
odp_pearson_clamp(double r)
{
	return r > 1.0 ? 1.0 : (r < -1.0 ? -1.0 : r);
}

/* Common positions a pair needs under min_periods. */
ODP_HD double
odp_pearson_min_positions(int32_t min_periods)
{
	return (double) (min_periods > ODP_PEARSON_MIN_POSITIONS ?
					 min_periods : ODP_PEARSON_MIN_POSITIONS);
}

/*
 * The power of two that brings a largest magnitude amax (> 0, finite)
 * into [0.5, 1): multiplying by it is exact.
 */
ODP_HD double
odp_pearson_scale_of(double amax)
{
	int			e;

	(void) frexp(amax, &e);
	return ldexp(1.0, -e);
}

/*
 * The coefficient of one pair from the sums over its n common positions
 * of series centred on their overall means: returns 1 and sets *r, 0 when
 * the pair has no coefficient (fewer than min_n positions), or -1 when
 * the sums cannot be trusted and odp_pearson_pair_exact must decide.
 */
ODP_HD int
odp_pearson_from_sums(double n, double sx, double sy, double sxx, double syy,
					  double sxy, double min_n, double *r)
{
	double		vx;
	double		vy;

	if (n < min_n)
		return 0;
	vx = sxx - sx * sx / n;
	vy = syy - sy * sy / n;
	if (!(vx > sxx * ODP_PEARSON_TRUSTED_SHARE) ||
		!(vy > syy * ODP_PEARSON_TRUSTED_SHARE))
		return -1;
	*r = odp_pearson_clamp((sxy - sx * sy / n) / (sqrt(vx) * sqrt(vy)));
	return 1;
}

/*
 * The coefficient of series x and y over their common positions, from
 * their values xc, yc (each scaled by a power of two, so that no sum
 * overflows) and presence masks xm, ym (dims each): the
 * means over the common positions, then the sums of products of the
 * deviations, corrected by the deviations' own sums (Chan, Golub and
 * LeVeque's two-pass algorithm).  Returns false when the pair has no
 * coefficient: fewer than min_n common positions, or a series constant
 * over them.  Sequential in index order, so both paths get the same bits.
 */
ODP_HD bool
odp_pearson_pair_exact(const double *xc, const double *xm, const double *yc,
					   const double *ym, int32_t dims, double min_n, double *r)
{
	double		n = 0.0;
	double		sx = 0.0;
	double		sy = 0.0;
	double		fx = 0.0;
	double		fy = 0.0;
	bool		x_varies = false;
	bool		y_varies = false;
	double		mx;
	double		my;
	double		dsx = 0.0;
	double		dsy = 0.0;
	double		sxx = 0.0;
	double		syy = 0.0;
	double		sxy = 0.0;
	double		vx;
	double		vy;

	for (int32_t i = 0; i < dims; i++)
	{
		if (xm[i] == 0.0 || ym[i] == 0.0)
			continue;
		if (n == 0.0)
		{
			fx = xc[i];
			fy = yc[i];
		}
		x_varies |= xc[i] != fx;
		y_varies |= yc[i] != fy;
		n += 1.0;
		sx += xc[i];
		sy += yc[i];
	}
	if (n < min_n || !x_varies || !y_varies)
		return false;
	mx = sx / n;
	my = sy / n;
	for (int32_t i = 0; i < dims; i++)
	{
		double		dx;
		double		dy;

		if (xm[i] == 0.0 || ym[i] == 0.0)
			continue;
		dx = xc[i] - mx;
		dy = yc[i] - my;
		dsx += dx;
		dsy += dy;
		sxx += dx * dx;
		syy += dy * dy;
		sxy += dx * dy;
	}
	vx = sxx - dsx * dsx / n;
	vy = syy - dsy * dsy / n;
	if (!(vx > 0.0) || !(vy > 0.0))
		return false;
	*r = odp_pearson_clamp((sxy - dsx * dsy / n) / (sqrt(vx) * sqrt(vy)));
	return true;
}

/*
 * The average 1-based rank of a value that lo values of its series lie
 * below and hi values at or below (ties share the mean of their ranks, as
 * pandas and scipy rank).  Exact: a whole or half number.
 */
ODP_HD double
odp_pearson_average_rank(int64_t lo, int64_t hi)
{
	return (double) (lo + 1 + hi) * 0.5;
}

/*
 * Top-k lists keep the k smallest (key, tag) entries (the order of the
 * shared selection, gpu_select.cuh and select_heap.h): the key of r ranks
 * the partners, and the tag is the partner's row times two plus the sign
 * of r, so that ties still go to the smaller row and |r| can be turned
 * back into r.
 */
ODP_HD double
odp_pearson_key(double r, OdpPearsonRank rank)
{
	switch (rank)
	{
		case ODP_PEARSON_RANK_POSITIVE:
			return -r;
		case ODP_PEARSON_RANK_NEGATIVE:
			return r;
		default:
			return -fabs(r);
	}
}

/* The tag of partner row b with coefficient r (see odp_pearson_key). */
ODP_HD int64_t
odp_pearson_tag(int64_t b, double r)
{
	return b * 2 + (r < 0.0 ? 1 : 0);
}

/* The partner row of a tag. */
ODP_HD int64_t
odp_pearson_tag_row(int64_t tag)
{
	return tag >> 1;
}

/* The coefficient of a (key, tag) entry ranked by rank. */
ODP_HD double
odp_pearson_r_of(double key, int64_t tag, OdpPearsonRank rank)
{
	switch (rank)
	{
		case ODP_PEARSON_RANK_POSITIVE:
			return -key;
		case ODP_PEARSON_RANK_NEGATIVE:
			return key;
		default:
			return (tag & 1) ? key : -key;
	}
}

#endif							/* ODP_PEARSON_MATH_H */
