/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc.cuh
 *	  Exact k-NN through a tensor-core filter: half-precision products bound
 *	  every distance from below, and only the candidates whose bound
 *	  reaches a query's threshold get their exact distance (see
 *	  knn_gpu_tc.cu).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_KNN_TC_CUH
#define ODP_GPU_KNN_TC_CUH

#include "knn/knn_gpu.cuh"

/*
 * Whether OdpKnnTcSearch serves problem p with k neighbours: euclidean,
 * squared euclidean, cosine or inner product, small k, enough candidates
 * to pay for the threshold pass, no candidate side or split.
 */
extern bool OdpKnnTcEligible(const OdpKnnProblem *p, int32_t k);

/*
 * Fills state (fresh: the same result as OdpKnnReset + OdpKnnAccumulate
 * of p) with every query's k nearest candidates.  Takes at most budget
 * bytes of device memory of its own.  Sets *done false, leaving state
 * undefined, when it cannot finish that way (too little memory, values
 * whose centring overflows, or more overflowed lists than
 * p->tc_max_overflow allows): the caller then runs OdpKnnAccumulate or a
 * method of its own.  A query with more threshold passers than a list
 * holds (many equal distances) scans every candidate by itself.
 */
extern OdpStatus OdpKnnTcSearch(OdpContext *ctx, const OdpGpuDevice *dev,
								cudaStream_t stream, const OdpKnnProblem *p,
								OdpKnnState *state, size_t budget,
								bool *done, double *compute_ms);

#endif							/* ODP_GPU_KNN_TC_CUH */
