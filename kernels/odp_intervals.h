/*-------------------------------------------------------------------------
 *
 * odp_intervals.h
 *	  The region matching's arithmetic, shared by the host and the device:
 *	  when a lower bound meets an upper bound, the binary searches of the
 *	  sweep, and the keys that order the pairs.
 *
 * Bounds arrive as positions (intervals.c): 64-bit integers such that a
 * lower bound meets an upper bound exactly when its position is not
 * above the upper bound's, so that every exact test is one unsigned
 * comparison.  A dimension compared as PostgreSQL's box && compares holds
 * the order-preserving images of float64 values instead, and its test is
 * the geometric types' fuzzy FPle(lower, upper): lower <= upper + 1e-6,
 * evaluated in float64 exactly as PostgreSQL evaluates it.  For a fixed
 * upper bound both tests are monotone in the lower bound: true for the
 * smaller ones, false from some point on.  That is what lets a binary
 * search over sorted lower bounds find where a region's candidates end.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/odp_intervals.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_INTERVALS_H
#define ODP_INTERVALS_H

#include <stdbool.h>
#include <stdint.h>

#include "odp_hostdev.h"
#include "odp_order.h"

/* EPSILON of PostgreSQL's utils/geo_decls.h. */
#define ODP_IV_BOX_EPSILON	1.0E-06

/* Whether lower bound lo meets upper bound hi (positions, or box keys). */
ODP_HD bool
odp_iv_meets(uint64_t lo, uint64_t hi, bool box)
{
	if (box)
		return odp_order_float64_value(lo) <=
			odp_order_float64_value(hi) + ODP_IV_BOX_EPSILON;
	return lo <= hi;
}

/* Whether intervals [alo, ahi] and [blo, bhi] overlap. */
ODP_HD bool
odp_iv_overlap(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi, bool box)
{
	return odp_iv_meets(alo, bhi, box) && odp_iv_meets(blo, ahi, box);
}

/* First i in [from, n) with key[i] >= v, or n (key ascending). */
ODP_HD int64_t
odp_iv_lower_bound(const uint64_t *key, int64_t from, int64_t n, uint64_t v)
{
	int64_t		lo = from,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (key[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First i in [from, n) with key[i] > v, or n (key ascending). */
ODP_HD int64_t
odp_iv_upper_bound(const uint64_t *key, int64_t from, int64_t n, uint64_t v)
{
	int64_t		lo = from,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (key[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * End of a window of sorted lower bounds key[from .. n): the first i at
 * or after from whose lower bound does not meet upper bound hi.
 */
ODP_HD int64_t
odp_iv_window_end(const uint64_t *key, int64_t from, int64_t n, uint64_t hi,
				  bool box)
{
	int64_t		lo = from,
				top = n;

	if (!box)
		return odp_iv_upper_bound(key, from, n, hi);
	while (lo < top)
	{
		int64_t		mid = lo + (top - lo) / 2;

		if (odp_iv_meets(key[mid], hi, true))
			lo = mid + 1;
		else
			top = mid;
	}
	return lo;
}

/* How a run pairs its two ranges (iv_internal.h). */
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
 * The window of driver i, whose sweep interval is [lo, hi], in the
 * sorted lower bounds t[0 .. n) of its targets: [*start, *end).  Drivers
 * of set 0 (A) take case 1 (targets from their own lower bound on), of
 * set 1 (B) case 2 (targets strictly above it); one whole set takes the
 * targets after the driver's own place.
 */
ODP_HD void
odp_iv_window(OdpIvScheme scheme, int set, int64_t i, uint64_t lo, uint64_t hi,
			  const uint64_t *t, int64_t n, bool box, int64_t *start,
			  int64_t *end)
{
	int64_t		s;

	if (scheme == ODP_IV_SELF)
		s = i + 1;
	else if (set == 0)
		s = odp_iv_lower_bound(t, 0, n, lo);
	else
		s = odp_iv_upper_bound(t, 0, n, lo);
	*start = s;
	*end = odp_iv_window_end(t, s, n, hi, box);
}

/*
 * Whether driver di (of dn sorted regions) and target ti (of tn) overlap
 * in the ntest test dimensions, stored test-dimension-major.
 */
ODP_HD bool
odp_iv_test(const uint64_t *dlo, const uint64_t *dhi, int64_t dn, int64_t di,
			const uint64_t *tlo, const uint64_t *thi, int64_t tn, int64_t ti,
			int ntest, const uint8_t *box)
{
	for (int k = 0; k < ntest; k++)
	{
		if (!odp_iv_overlap(dlo[k * dn + di], dhi[k * dn + di],
							tlo[k * tn + ti], thi[k * tn + ti], box[k]))
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

#endif							/* ODP_INTERVALS_H */
