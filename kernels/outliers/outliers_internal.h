/*-------------------------------------------------------------------------
 *
 * outliers_internal.h
 *	  Declarations shared by the outlier analytics (outliers.c, the
 *	  top-n dispatcher in solvingset.c) and their CPU, GPU and split paths.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/outliers_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_OUTLIERS_INTERNAL_H
#define ODP_OUTLIERS_INTERNAL_H

#include "include/odp_outliers.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Shared argument checks of the outlier analytics (outliers.c): resets
 * ctx's outputs, validates m, k and metric, and for cosine returns every
 * row's norm in a new array that the caller frees: *norms for float32
 * rows, *norms64 for float64 ones (the other, and both for the other
 * metrics, NULL).
 */
extern OdpStatus odp_outlier_prepare(OdpContext *ctx, const OdpMatrix *m,
									 OdpMetric metric, int32_t k,
									 float **norms, double **norms64);

/*
 * Per-path implementations; arguments already validated by the dispatcher
 * (kernels/outliers/outliers.c).  norms is NULL unless metric is cosine, then it
 * holds odp_row_norm of every row, none of them zero; for float64 rows
 * the CPU path takes norms64 (odp_row_norm64) instead.
 */
extern OdpStatus odp_cpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
										OdpMetric metric, int32_t k,
										const float *norms,
										const double *norms64, double *scores);
extern OdpStatus odp_gpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
										OdpMetric metric, int32_t k,
										const float *norms, double *scores);

/*
 * GPU scores through the tensor-core filter only, for AUTO's choice in
 * solvingset.c: where the filter would not serve every chunk, or more
 * than max_overflow (> 0) of a chunk's lists overflow (rows in tight
 * clusters, each such row then scanning every other), it stops early,
 * sets *gave_up and returns ODP_OK with scores undefined.
 */
extern OdpStatus odp_gpu_outlier_scores_filtered(OdpContext *ctx,
												 const OdpMatrix *m,
												 OdpMetric metric, int32_t k,
												 const float *norms,
												 double max_overflow,
												 double *scores, bool *gave_up);

/*
 * odp_gpu_outlier_scores for rows [first, first + count) only (count 0:
 * every row), against every row; writes scores[first ..].  The parts of a
 * split call (knn_split.c) take disjoint ranges.
 */
extern OdpStatus odp_gpu_outlier_scores_rows(OdpContext *ctx,
											 const OdpMatrix *m,
											 OdpMetric metric, int32_t k,
											 const float *norms,
											 int64_t first, int64_t count,
											 double *scores);

/*
 * Whether a filter-only run (odp_gpu_outlier_scores_filtered) may serve
 * outlier scores of this shape: the tensor-core filter or the exact
 * integer path, whichever the data allows (false without CUDA).
 */
extern bool odp_gpu_outliers_filter_eligible(OdpMetric metric, int64_t rows,
											 int32_t dims, int32_t k);

/*
 * Outlier scores over the call's device set (outliers_split.c): the rows
 * whose score each part computes split into contiguous ranges, every row
 * on every device; with one part odp_gpu_outlier_scores.
 */
extern OdpStatus odp_split_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
										  OdpMetric metric, int32_t k,
										  const float *norms, double *scores);

/*
 * Outlier scores of float64 rows (m->data64) on the GPU (outliers_gpu.cu
 * over knn_gpu_wide.cu's primitive): rows [first, first + count) (count 0:
 * every row) against every row, distances by odp_distance64 summed with
 * odp_sum_ascending64, bit-identical to the CPU path; norms as
 * odp_row_norm64 for cosine, else NULL.  The split form spreads the rows
 * over the call's device set as odp_split_outlier_scores does.
 */
extern OdpStatus odp_gpu_outlier_scores64_rows(OdpContext *ctx,
											   const OdpMatrix *m,
											   OdpMetric metric, int32_t k,
											   const double *norms,
											   int64_t first, int64_t count,
											   double *scores);
extern OdpStatus odp_split_outlier_scores64(OdpContext *ctx, const OdpMatrix *m,
											OdpMetric metric, int32_t k,
											const double *norms,
											double *scores);
/*
 * Brute-force scores on ctx->device, after odp_outlier_prepare (outliers.c),
 * with its norms.
 */
extern OdpStatus odp_outlier_scores_on_device(OdpContext *ctx,
											  const OdpMatrix *m,
											  OdpMetric metric, int32_t k,
											  const float *norms,
											  const double *norms64,
											  double *scores);


#ifdef __cplusplus
}
#endif

#endif							/* ODP_OUTLIERS_INTERNAL_H */
