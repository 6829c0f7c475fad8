/*-------------------------------------------------------------------------
 *
 * gpu_disabled.c
 *	  The GPU entry points of a build without CUDA (make WITH_CUDA=no):
 *	  every one reports that no GPU is usable, so odp_gpu.device = auto
 *	  computes on the CPU and gpu fails with a clear message.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_disabled.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "pearson/pearson_internal.h"
#include "intervals/intervals_internal.h"
#include "skyline/skyline_internal.h"

#define NO_CUDA_MESSAGE "odp_gpu was built without CUDA (make WITH_CUDA=no)"

/* Reports that this build has no GPU path. */
bool
odp_gpu_compiled(void)
{
	return false;
}

/* Reports that no CUDA version was built in. */
int
odp_gpu_build_version(void)
{
	return 0;
}

/* Finds no GPU, always. */
OdpStatus
odp_gpu_probe(OdpContext *ctx, int *count, int *driver_version,
			  int *runtime_version)
{
	/* every output pointer may be NULL, as in the CUDA build */
	if (count)
		*count = 0;
	if (driver_version)
		*driver_version = 0;
	if (runtime_version)
		*runtime_version = 0;
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
}

/* Has no device to describe. */
OdpStatus
odp_gpu_device_info(OdpContext *ctx, int index, OdpGpuInfo *info)
{
	(void) index;
	(void) info;
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
}

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
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
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
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
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
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
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

/* Cannot run; the dispatcher only gets here when the caller forced it. */
OdpStatus
odp_gpu_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
			const float *qnorms, const float *cnorms, OdpMetric metric,
			int32_t k, bool self_join, float *dist, int64_t *index)
{
	(void) queries;
	(void) cands;
	(void) qnorms;
	(void) cnorms;
	(void) metric;
	(void) k;
	(void) self_join;
	(void) dist;
	(void) index;
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
}

/* Cannot run; the dispatcher only gets here when the caller forced it. */
OdpStatus
odp_gpu_knn_rows(OdpContext *ctx, const OdpMatrix *queries,
				 const OdpMatrix *cands, const float *qnorms,
				 const float *cnorms, OdpMetric metric, int32_t k,
				 bool self_join, int64_t first, int64_t count, float *dist,
				 int64_t *index)
{
	(void) first;
	(void) count;
	return odp_gpu_knn(ctx, queries, cands, qnorms, cnorms, metric, k,
					   self_join, dist, index);
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
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
}

/* Cannot run; the correlation dispatcher only gets here when forced. */
OdpStatus
odp_gpu_pearson(OdpContext *ctx, const OdpPearsonJob *job)
{
	(void) job;
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
}

/* No GPU path for the correlations without CUDA. */
OdpStatus
odp_gpu_pearson_available(OdpContext *ctx)
{
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
}

/* Cannot run; the skyline dispatcher only gets here when forced. */
OdpStatus
odp_gpu_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
				int32_t *dominated_by, OdpSkylineStats *stats)
{
	(void) p;
	(void) dominated_by;
	(void) stats;
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
}

/* Cannot run; the matching driver only gets here when forced. */
OdpStatus
odp_gpu_iv_backend(OdpContext *ctx, const OdpIvPrep *prep, OdpIvBackend *backend)
{
	(void) prep;
	memset(backend, 0, sizeof(*backend));
	return odp_fail(ctx, ODP_ERR_NO_GPU, NO_CUDA_MESSAGE);
}

/* Nothing is ever pinned without CUDA. */
void
odp_gpu_pin_thread_disable(void)
{
}
