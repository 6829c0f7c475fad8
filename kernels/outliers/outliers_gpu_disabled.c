/*-------------------------------------------------------------------------
 *
 * outliers_gpu_disabled.c
 *	  The GPU entry points of the outlier analytics in a build without
 *	  CUDA: each reports that no GPU is usable (gpu/gpu_disabled.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/outliers_gpu_disabled.c
 *
 *-------------------------------------------------------------------------
 */
#include "common/engine_internal.h"
#include "gpu/gpu_runtime.h"
#include "outliers/outliers_internal.h"
#include "outliers/solvingset_internal.h"

/* Cannot run; the dispatcher only gets here when the caller forced it. */
OdpStatus
odp_gpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
					   int32_t k, const float *norms, double *scores)
{
	(void) m;
	(void) metric;
	(void) k;
	(void) norms;
	(void) scores;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* Cannot run; the dispatcher only gets here when the caller forced it. */
OdpStatus
odp_gpu_outlier_scores_rows(OdpContext *ctx, const OdpMatrix *m,
							OdpMetric metric, int32_t k, const float *norms,
							int64_t first, int64_t count, double *scores)
{
	(void) m;
	(void) metric;
	(void) k;
	(void) norms;
	(void) first;
	(void) count;
	(void) scores;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* Cannot run; nothing calls it where the filter is not eligible. */
OdpStatus
odp_gpu_outlier_scores_filtered(OdpContext *ctx, const OdpMatrix *m,
								OdpMetric metric, int32_t k, const float *norms,
								double max_overflow, double *scores,
								bool *gave_up)
{
	(void) m;
	(void) metric;
	(void) k;
	(void) norms;
	(void) max_overflow;
	(void) scores;
	*gave_up = false;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* No filter without CUDA. */
bool
odp_gpu_outliers_filter_eligible(OdpMetric metric, int64_t rows, int32_t dims,
								 int32_t k)
{
	(void) metric;
	(void) rows;
	(void) dims;
	(void) k;
	return false;
}

/* Cannot run; the SolvingSet driver only gets here when the caller forced it. */
OdpStatus
odp_gpu_ss_backend(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
				   int32_t k, const float *norms, OdpSsBackend *backend)
{
	(void) m;
	(void) metric;
	(void) k;
	(void) norms;
	(void) backend;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* Cannot run; the dispatcher only gets here when the caller forced it. */
OdpStatus
odp_gpu_outlier_scores64_rows(OdpContext *ctx, const OdpMatrix *m,
							  OdpMetric metric, int32_t k, const double *norms,
							  int64_t first, int64_t count, double *scores)
{
	(void) m;
	(void) metric;
	(void) k;
	(void) norms;
	(void) first;
	(void) count;
	(void) scores;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}
