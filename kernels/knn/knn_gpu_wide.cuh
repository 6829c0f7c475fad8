/*-------------------------------------------------------------------------
 *
 * knn_gpu_wide.cuh
 *	  The GPU k-NN primitive for float64 rows: fused distance tiles and
 *	  per-query k-smallest selection in double (knn_gpu_wide.cu).
 *
 * The same contract as knn_gpu.cuh's OdpKnnAccumulate, for an
 * OdpKnnProblemOf<double> (device rows of doubles) and an
 * OdpKnnStateOf<double> (double distances, allocated and reset by the
 * shared OdpKnnStateAlloc and OdpKnnStateReset): for every query the k
 * smallest (odp_distance64, candidate index) pairs, ascending by distance
 * and then index, accumulated exactly over any chunking of the
 * candidates.  Of the problem's fields it reads the rows, norms, bases,
 * counts, dims, metric, exclude_self and the candidate-range split
 * (cand_split, split_queries); the float32-only options
 * (ascending_candidates, the candidate side, the tensor-core filter's)
 * must be left unset.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_wide.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_KNN_WIDE_CUH
#define ODP_GPU_KNN_WIDE_CUH

#include "knn/knn_gpu.cuh"

/*
 * Merges all candidates of p into the state of p's queries, in float64;
 * otherwise as the float32 OdpKnnAccumulate (knn_gpu.cuh): bounded
 * launches, odp_cancel_requested polled between them (ODP_ERR_CANCELLED
 * with the stream idle), elapsed time added to *compute_ms.
 */
extern OdpStatus OdpKnnAccumulate(OdpContext *ctx, const OdpGpuDevice *dev,
								  cudaStream_t stream,
								  const OdpKnnProblemOf<double> *p,
								  OdpKnnStateOf<double> *state,
								  double *compute_ms);

#endif							/* ODP_GPU_KNN_WIDE_CUH */
