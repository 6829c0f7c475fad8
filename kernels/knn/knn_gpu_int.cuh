/*-------------------------------------------------------------------------
 *
 * knn_gpu_int.cuh
 *	  Exact k-NN of integer-valued rows on the integer tensor cores: the
 *	  euclidean metrics (and manhattan on 0/1 data) computed exactly in
 *	  int8 products and 32-bit sums, with a selection whose cost does not
 *	  grow with equal distances (see knn_gpu_int.cu).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_int.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_KNN_INT_CUH
#define ODP_GPU_KNN_INT_CUH

#include "knn/knn_gpu.cuh"

/*
 * Fills state (fresh: the same result as OdpKnnReset + OdpKnnAccumulate
 * of p, bit for bit) with every query's k nearest candidates when the
 * problem's rows are integers that the integer path computes exactly:
 * euclidean, squared euclidean, or manhattan on data whose every
 * dimension spans at most 1 (0/1 attributes, where it equals the squared
 * distance), k <= 64, at most 256 dimensions, every value an integer of
 * magnitude at most 2^24, every dimension's values
 * (queries and candidates together) within 255 of each other, and the
 * largest possible distance small enough that the canonical float32 sum
 * is exact too (squared: below 2^24; euclidean: below 2^22, so that the
 * square roots of distinct sums stay distinct floats); for k-NN lists
 * (not p->values_only), the largest distance below 256 too.  Otherwise, or
 * without the memory it needs (at most budget bytes), it sets *done
 * false and leaves state undefined: the caller's paths run.
 */
extern OdpStatus OdpKnnIntSearch(OdpContext *ctx, const OdpGpuDevice *dev,
								 cudaStream_t stream, const OdpKnnProblem *p,
								 OdpKnnState *state, size_t budget,
								 bool *done, double *compute_ms);

/*
 * Whether the integer path may take problem p with k neighbours: its
 * metric, k, dimensions and size; whether its rows are integers that fit
 * is the data's to say (OdpKnnIntSearch finds out on the device).
 */
extern bool OdpKnnIntEligible(const OdpKnnProblem *p, int k);

#endif							/* ODP_GPU_KNN_INT_CUH */
