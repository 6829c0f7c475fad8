/*-------------------------------------------------------------------------
 *
 * knn_gpu_disabled.c
 *	  The GPU entry points of the k-NN analytic in a build without CUDA:
 *	  each reports that no GPU is usable (gpu/gpu_disabled.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_disabled.c
 *
 *-------------------------------------------------------------------------
 */
#include "common/engine_internal.h"
#include "gpu/gpu_runtime.h"
#include "knn/knn_internal.h"

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
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
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

/* Cannot run; the dispatcher only gets here when the caller forced it. */
OdpStatus
odp_gpu_knn64_rows(OdpContext *ctx, const OdpMatrix *queries,
				   const OdpMatrix *cands, const double *qnorms,
				   const double *cnorms, OdpMetric metric, int32_t k,
				   bool self_join, int64_t first, int64_t count, double *dist,
				   int64_t *index)
{
	(void) queries;
	(void) cands;
	(void) qnorms;
	(void) cnorms;
	(void) metric;
	(void) k;
	(void) self_join;
	(void) first;
	(void) count;
	(void) dist;
	(void) index;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* Cannot run; odp_knn64_filtered only gets here on the GPU path. */
OdpStatus
odp_gpu_knn64_filter_rows(OdpContext *ctx, const OdpFilter64 *f, int64_t first,
						  int64_t count, double stage_ms[3], bool *refused)
{
	(void) f;
	(void) first;
	(void) count;
	stage_ms[0] = stage_ms[1] = stage_ms[2] = 0.0;
	*refused = false;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* No few-query path without CUDA. */
bool
odp_gpu_knn_few_fits(const OdpMatrix *queries, const OdpMatrix *cands, OdpMetric metric,
					 int32_t k, bool self_join)
{
	(void) queries;
	(void) cands;
	(void) metric;
	(void) k;
	(void) self_join;
	return false;
}

OdpStatus
odp_gpu_knn_few(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
				OdpMetric metric, int32_t k, float *dist, int64_t *index)
{
	(void) queries;
	(void) cands;
	(void) metric;
	(void) k;
	(void) dist;
	(void) index;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}

/* No device: no team. */
bool
odp_gpu_knn_team_fits(int64_t rows, int32_t dims, OdpMetric metric, int32_t k)
{
	(void) rows;
	(void) dims;
	(void) metric;
	(void) k;
	return false;
}

/* Cannot run: odp_gpu_knn_team_fits says no team forms. */
OdpStatus
odp_gpu_knn_team_rows(OdpContext *ctx, const OdpMatrix *rows, const float *norms,
					  OdpMetric metric, int32_t k, OdpKnnTeam *team, int part,
					  float *dist, int64_t *index)
{
	(void) rows;
	(void) norms;
	(void) metric;
	(void) k;
	(void) team;
	(void) part;
	(void) dist;
	(void) index;
	return odp_fail(ctx, ODP_ERR_NO_GPU, ODP_NO_CUDA_MESSAGE);
}
