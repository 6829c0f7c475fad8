/*-------------------------------------------------------------------------
 *
 * odp_distance.h
 *	  The one definition of every metric, shared by the CPU and GPU paths.
 *
 * A distance is accumulated one dimension at a time, in index order, in
 * float32, with explicitly rounded multiplies and adds on the device so
 * that no fused multiply-add changes the result.  Compiled by the C
 * compiler (with -ffp-contract=off) and by nvcc, it yields bit-identical
 * distances on both paths, which is what makes their rankings identical.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_distance.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DISTANCE_H
#define ODP_DISTANCE_H

#include <math.h>

#include "odp_engine.h"
#include "odp_hostdev.h"

#ifdef __CUDA_ARCH__
#define ODP_FMUL(a, b) __fmul_rn((a), (b))
#define ODP_FADD(a, b) __fadd_rn((a), (b))
#define ODP_FSUB(a, b) __fsub_rn((a), (b))
#define ODP_DMUL(a, b) __dmul_rn((a), (b))
#define ODP_DADD(a, b) __dadd_rn((a), (b))
#define ODP_DSUB(a, b) __dsub_rn((a), (b))
#else
#define ODP_FMUL(a, b) ((a) * (b))
#define ODP_FADD(a, b) ((a) + (b))
#define ODP_FSUB(a, b) ((a) - (b))
#define ODP_DMUL(a, b) ((a) * (b))
#define ODP_DADD(a, b) ((a) + (b))
#define ODP_DSUB(a, b) ((a) - (b))
#endif

/*
 * A dimension's term of metric m, before it joins the accumulator: split
 * from odp_dist_step so that a kernel may compute the terms of many
 * dimensions at once (in parallel) and still add them in index order.
 */
ODP_HD float
odp_dist_term(OdpMetric m, float a, float b)
{
	float		t;

	switch (m)
	{
		case ODP_METRIC_EUCLIDEAN:
		case ODP_METRIC_SQEUCLIDEAN:
			t = ODP_FSUB(a, b);
			return ODP_FMUL(t, t);
		case ODP_METRIC_MANHATTAN:
		case ODP_METRIC_CHEBYSHEV:
			return fabsf(ODP_FSUB(a, b));
		case ODP_METRIC_COSINE:
		case ODP_METRIC_INNER_PRODUCT:
			return ODP_FMUL(a, b);
	}
	return 0.0f;
}

/* Adds a dimension's term (odp_dist_term) to the accumulator of metric m. */
ODP_HD float
odp_dist_add(OdpMetric m, float acc, float t)
{
	if (m == ODP_METRIC_CHEBYSHEV)
		return t > acc ? t : acc;
	return ODP_FADD(acc, t);
}

/* Adds dimension (a, b) to the running accumulator of metric m. */
ODP_HD float
odp_dist_step(OdpMetric m, float acc, float a, float b)
{
	return odp_dist_add(m, acc, odp_dist_term(m, a, b));
}

/*
 * Turns an accumulator into a distance.  norm_a and norm_b are the rows'
 * Euclidean norms (odp_row_norm), used by cosine only; they are never zero
 * there because the engine rejects zero vectors under cosine.  Cosine is
 * clamped to [0, 2] to absorb rounding.  The inner product is negated,
 * so that "smaller first" ranks the largest inner product first (the
 * engine's public entry points negate it back).
 */
ODP_HD float
odp_dist_finish(OdpMetric m, float acc, float norm_a, float norm_b)
{
	float		d;

	switch (m)
	{
		case ODP_METRIC_EUCLIDEAN:
			return sqrtf(acc);
		case ODP_METRIC_SQEUCLIDEAN:
		case ODP_METRIC_MANHATTAN:
		case ODP_METRIC_CHEBYSHEV:
			return acc;
		case ODP_METRIC_COSINE:
			d = ODP_FSUB(1.0f, acc / ODP_FMUL(norm_a, norm_b));
			return d < 0.0f ? 0.0f : (d > 2.0f ? 2.0f : d);
		case ODP_METRIC_INNER_PRODUCT:
			return -acc;
	}
	return acc;
}

/* Euclidean norm of one row, accumulated in index order. */
ODP_HD float
odp_row_norm(const float *row, int dims)
{
	float		acc = 0.0f;

	for (int d = 0; d < dims; d++)
		acc = ODP_FADD(acc, ODP_FMUL(row[d], row[d]));
	return sqrtf(acc);
}

/* Distance between two rows; the reference every fast path must match. */
ODP_HD float
odp_distance(OdpMetric m, const float *a, const float *b, int dims,
			 float norm_a, float norm_b)
{
	float		acc = 0.0f;

	for (int d = 0; d < dims; d++)
		acc = odp_dist_step(m, acc, a[d], b[d]);
	return odp_dist_finish(m, acc, norm_a, norm_b);
}

/*
 * Outlier weight from the k smallest distances sorted ascending: summed in
 * float64 in that order, so every path that sorts the same k floats gets
 * the same double.
 */
ODP_HD double
odp_sum_ascending(const float *sorted, int k)
{
	double		s = 0.0;

	for (int i = 0; i < k; i++)
		s += (double) sorted[i];
	return s;
}

/*
 * The same definitions in float64, for float64 rows (OdpMatrix.data64):
 * each function is its float32 namesake with every operation in double,
 * rounded explicitly on the device, so both paths give the same bits.
 */
ODP_HD double
odp_dist_term64(OdpMetric m, double a, double b)
{
	double		t;

	switch (m)
	{
		case ODP_METRIC_EUCLIDEAN:
		case ODP_METRIC_SQEUCLIDEAN:
			t = ODP_DSUB(a, b);
			return ODP_DMUL(t, t);
		case ODP_METRIC_MANHATTAN:
		case ODP_METRIC_CHEBYSHEV:
			return fabs(ODP_DSUB(a, b));
		case ODP_METRIC_COSINE:
		case ODP_METRIC_INNER_PRODUCT:
			return ODP_DMUL(a, b);
	}
	return 0.0;
}

ODP_HD double
odp_dist_add64(OdpMetric m, double acc, double t)
{
	if (m == ODP_METRIC_CHEBYSHEV)
		return t > acc ? t : acc;
	return ODP_DADD(acc, t);
}

ODP_HD double
odp_dist_step64(OdpMetric m, double acc, double a, double b)
{
	return odp_dist_add64(m, acc, odp_dist_term64(m, a, b));
}

ODP_HD double
odp_dist_finish64(OdpMetric m, double acc, double norm_a, double norm_b)
{
	double		d;

	switch (m)
	{
		case ODP_METRIC_EUCLIDEAN:
			return sqrt(acc);
		case ODP_METRIC_SQEUCLIDEAN:
		case ODP_METRIC_MANHATTAN:
		case ODP_METRIC_CHEBYSHEV:
			return acc;
		case ODP_METRIC_COSINE:
			d = ODP_DSUB(1.0, acc / ODP_DMUL(norm_a, norm_b));
			return d < 0.0 ? 0.0 : (d > 2.0 ? 2.0 : d);
		case ODP_METRIC_INNER_PRODUCT:
			return -acc;
	}
	return acc;
}

ODP_HD double
odp_row_norm64(const double *row, int dims)
{
	double		acc = 0.0;

	for (int d = 0; d < dims; d++)
		acc = ODP_DADD(acc, ODP_DMUL(row[d], row[d]));
	return sqrt(acc);
}

ODP_HD double
odp_distance64(OdpMetric m, const double *a, const double *b, int dims,
			   double norm_a, double norm_b)
{
	double		acc = 0.0;

	for (int d = 0; d < dims; d++)
		acc = odp_dist_step64(m, acc, a[d], b[d]);
	return odp_dist_finish64(m, acc, norm_a, norm_b);
}

/* odp_sum_ascending of float64 distances: the outlier weight of a list. */
ODP_HD double
odp_sum_ascending64(const double *sorted, int k)
{
	double		s = 0.0;

	for (int i = 0; i < k; i++)
		s += sorted[i];
	return s;
}

#endif							/* ODP_DISTANCE_H */
