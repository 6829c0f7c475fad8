/*-------------------------------------------------------------------------
 *
 * knn_cpu_block.h
 *	  The CPU path's distances from one row to a transposed block of
 *	  candidates, instantiated per precision like common/select_heap.h.
 *
 * The block ct is dims x cb, candidates contiguous, so that the inner
 * loop runs across candidates with unit stride and the compiler
 * vectorises it; every lane still applies the metric's step to its own
 * pair in dimension order, so the distances are the same bits as the
 * scalar definition (odp_distance.h).  Include it with
 *
 *	  #define ODP_BLOCK_NAME name		-- the function's name
 *	  #define ODP_BLOCK_T type			-- float, double
 *	  #define ODP_BLOCK_STEP step		-- odp_dist_step, odp_dist_step64
 *	  #define ODP_BLOCK_FINISH finish	-- odp_dist_finish, odp_dist_finish64
 *	  #include "knn/knn_cpu_block.h"
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_cpu_block.h
 *
 *-------------------------------------------------------------------------
 */
#include <stddef.h>

#include "include/odp_distance.h"

#if !defined(ODP_BLOCK_NAME) || !defined(ODP_BLOCK_T) || \
	!defined(ODP_BLOCK_STEP) || !defined(ODP_BLOCK_FINISH)
#error "define ODP_BLOCK_NAME, ODP_BLOCK_T, ODP_BLOCK_STEP and ODP_BLOCK_FINISH first"
#endif

/*
 * acc[c] = the distance from qrow (norm qnorm) to candidate c of the block
 * ct (dims x cb, norms cn), c < n.  Inlined where metric is a constant,
 * so that the metric's switch folds away and the loop vectorises.
 */
static inline __attribute__((always_inline)) void
ODP_BLOCK_NAME(OdpMetric metric, const ODP_BLOCK_T *qrow, ODP_BLOCK_T qnorm,
			   const ODP_BLOCK_T *ct, int cb, const ODP_BLOCK_T *cn, int dims,
			   int n, ODP_BLOCK_T *acc)
{
	for (int c = 0; c < n; c++)
		acc[c] = 0;
	for (int d = 0; d < dims; d++)
	{
		const ODP_BLOCK_T qv = qrow[d];
		const ODP_BLOCK_T *col = ct + (size_t) d * cb;

		for (int c = 0; c < n; c++)
			acc[c] = ODP_BLOCK_STEP(metric, acc[c], qv, col[c]);
	}
	for (int c = 0; c < n; c++)
		acc[c] = ODP_BLOCK_FINISH(metric, acc[c], qnorm, cn[c]);
}

#undef ODP_BLOCK_NAME
#undef ODP_BLOCK_T
#undef ODP_BLOCK_STEP
#undef ODP_BLOCK_FINISH
