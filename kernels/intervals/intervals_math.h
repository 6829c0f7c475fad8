/*-------------------------------------------------------------------------
 *
 * intervals_math.h
 *	  The region matching's arithmetic, shared by the host and the device:
 *	  when a lower bound meets an upper bound, the binary searches of the
 *	  sweep, and the keys that order the pairs.
 *
 * Bounds arrive as positions (intervals_match.c): 64-bit integers such that a
 * lower bound meets an upper bound exactly when its position is not
 * above the upper bound's, so that every exact test is one unsigned
 * comparison.  A dimension compared as PostgreSQL's box && compares holds
 * the order-preserving images of float64 values instead, and its test is
 * the geometric types' fuzzy FPle(lower, upper): lower <= upper + 1e-6,
 * evaluated in float64 exactly as PostgreSQL evaluates it, which is again
 * one unsigned comparison once the upper bound is replaced by the image
 * of upper + 1e-6 (odp_iv_box_upper).  The sorted structures hold upper
 * bounds so replaced, and then every test is one comparison of keys; and
 * for a fixed upper bound it is monotone in the lower bound, which lets a
 * binary search over sorted lower bounds find where a region's candidates
 * end.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_math.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_INTERVALS_MATH_H
#define ODP_INTERVALS_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "include/odp_hostdev.h"
#include "include/odp_order.h"

/* EPSILON of PostgreSQL's utils/geo_decls.h. */
#define ODP_IV_BOX_EPSILON	1.0E-06

/*
 * The position at which a box dimension's upper bound is compared: the
 * image of hi + 1e-6, the sum computed in float64 as FPle computes it, so
 * that L meets U exactly when L's key is not above it (adding EPSILON is
 * monotone, so the order of the images is the order FPle needs).
 */
ODP_HD uint64_t
odp_iv_box_upper(uint64_t hi)
{
	return odp_order_float64(odp_order_float64_value(hi) + ODP_IV_BOX_EPSILON);
}

/* Whether lower bound lo meets upper bound hi (positions, or box keys). */
ODP_HD bool
odp_iv_meets(uint64_t lo, uint64_t hi, bool box)
{
	return lo <= (box ? odp_iv_box_upper(hi) : hi);
}

/* Whether intervals [alo, ahi] and [blo, bhi] overlap. */
ODP_HD bool
odp_iv_overlap(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi, bool box)
{
	return odp_iv_meets(alo, bhi, box) && odp_iv_meets(blo, ahi, box);
}

/*
 * First i in [from, n) with key[i] > v (strict) or key[i] >= v (not
 * strict), or n: key ascending.
 */
ODP_HD int64_t
odp_iv_search(const uint64_t *key, int64_t from, int64_t n, uint64_t v, bool strict)
{
	int64_t		lo = from,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (key[mid] < v || (strict && key[mid] == v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How a run pairs its two ranges (intervals_internal.h). */
typedef enum OdpIvScheme
{
	ODP_IV_CROSS,				/* A range against B range: case 1 from A,
								 * case 2 from B */
	ODP_IV_SELF,				/* one set, whole: case 1 from each region
								 * after its own place; B range unused */
	ODP_IV_SELF_CROSS			/* one set in ranges: CROSS, keeping pairs
								 * with a < b */
} OdpIvScheme;

/*
 * The window of driver i, whose sweep interval is [lo, hi] (hi a
 * comparison position: odp_iv_box_upper for a box dimension), in the
 * sorted lower bounds t[0 .. n) of its targets: [*start, *end), up to the
 * first target whose lower bound does not meet hi.  Drivers of set 0 (A)
 * take case 1 (targets from their own lower bound on), of set 1 (B) case 2
 * (targets strictly above it); one whole set takes the targets after the
 * driver's own place.
 */
ODP_HD void
odp_iv_window(OdpIvScheme scheme, int set, int64_t i, uint64_t lo, uint64_t hi,
			  const uint64_t *t, int64_t n, int64_t *start, int64_t *end)
{
	int64_t		s;

	if (scheme == ODP_IV_SELF)
		s = i + 1;
	else
		s = odp_iv_search(t, 0, n, lo, set == 1);
	*start = s;
	*end = odp_iv_search(t, s, n, hi, true);
}

/*
 * Whether driver di (of dn sorted regions) and target ti (of tn) overlap
 * in the ntest test dimensions, stored test-dimension-major, their upper
 * bounds as comparison positions.
 */
ODP_HD bool
odp_iv_test(const uint64_t *dlo, const uint64_t *dhi, int64_t dn, int64_t di,
			const uint64_t *tlo, const uint64_t *thi, int64_t tn, int64_t ti,
			int ntest)
{
	for (int k = 0; k < ntest; k++)
	{
		if (dlo[k * dn + di] > thi[k * tn + ti] || tlo[k * tn + ti] > dhi[k * dn + di])
			return false;
	}
	return true;
}

/* Bits needed to hold every row index below rows (at least 1). */
ODP_HD int
odp_iv_row_bits(int64_t rows)
{
	int			bits = 1;

	while (bits < 62 && ((int64_t) 1 << bits) < rows)
		bits++;
	return bits;
}

/*
 * The key of the pair of a driver of set (position dpos) and a target
 * (position tpos), or false when scheme drops it.  Ascending keys are
 * ascending (a, b): b_bits bits hold b, the bits above them a.
 */
ODP_HD bool
odp_iv_pair_key(OdpIvScheme scheme, int set, uint64_t dpos, uint64_t tpos,
				int b_bits, uint64_t *key)
{
	uint64_t	a = set == 0 ? dpos : tpos;
	uint64_t	b = set == 0 ? tpos : dpos;

	if (scheme == ODP_IV_SELF && a > b)
	{
		uint64_t	x = a;

		a = b;
		b = x;
	}
	else if (scheme == ODP_IV_SELF_CROSS && b <= a)
		return false;
	*key = (a << b_bits) | b;
	return true;
}

#endif							/* ODP_INTERVALS_MATH_H */
