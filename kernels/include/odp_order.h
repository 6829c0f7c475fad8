/*-------------------------------------------------------------------------
 *
 * odp_order.h
 *	  Order-preserving 64-bit images of values, shared by the host, the
 *	  device and the PostgreSQL side: key(x) < key(y) exactly when x < y,
 *	  so that one unsigned comparison or one radix sort orders values of
 *	  any of the types the analytics compare exactly.
 *
 * Integers (and dates and timestamps, which PostgreSQL stores as integers)
 * flip their sign bit.  A float64 that is not NaN maps its negative values
 * to their complement and its positive ones to themselves with the sign
 * bit set: adjacent doubles get adjacent images, -0 and 0 the image of 0.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_order.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ORDER_H
#define ODP_ORDER_H

#include <stdint.h>
#include <string.h>

#include "odp_hostdev.h"

#define ODP_ORDER_SIGN	((uint64_t) 1 << 63)

/* The image of a 64-bit signed integer. */
ODP_HD uint64_t
odp_order_int64(int64_t v)
{
	return (uint64_t) v ^ ODP_ORDER_SIGN;
}

/* The integer whose image is key. */
ODP_HD int64_t
odp_order_int64_value(uint64_t key)
{
	return (int64_t) (key ^ ODP_ORDER_SIGN);
}

/* The image of a double that is not NaN; -0 and 0 have the same one. */
ODP_HD uint64_t
odp_order_float64(double v)
{
	uint64_t	u;

	v += 0.0;					/* -0 + 0 is 0 */
	memcpy(&u, &v, sizeof(u));
	return (u >> 63) ? ~u : (u | ODP_ORDER_SIGN);
}

/* The double whose image is key (the inverse of odp_order_float64). */
ODP_HD double
odp_order_float64_value(uint64_t key)
{
	uint64_t	u = (key & ODP_ORDER_SIGN) ? (key & ~ODP_ORDER_SIGN) : ~key;
	double		v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

#endif							/* ODP_ORDER_H */
