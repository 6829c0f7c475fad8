/*-------------------------------------------------------------------------
 *
 * outliers_gpu.cu
 *	  GPU path of the outlier scores: a self join through the shared k-NN
 *	  driver (knn_gpu_run.cu), each finished list turned into its score on
 *	  the device and only the scores copied back.
 *
 * The score of row p is the sum, in float64 and in ascending order, of
 * the distances to its k nearest other rows.  The k-NN primitive keeps
 * each row's k smallest distances sorted ascending, so the score kernel
 * sums them in stored order with odp_sum_ascending, the function the CPU
 * path uses: same floats, same order, same double.  Float64 rows
 * (odp_gpu_outlier_scores64_rows) take the same route through the
 * driver's float64 instance: double distances by odp_distance64, summed
 * with odp_sum_ascending64.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/outliers_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "include/odp_distance.h"
#include "knn/knn_gpu_int.cuh"
#include "knn/knn_gpu_run.cuh"
#include "knn/knn_gpu_tc.cuh"
#include "outliers/outliers_internal.h"

/*
 * What the finish hook needs; its device scratch per chunk holds the
 * chunk's scores, then an error flag.
 */
typedef struct OutlierFinish
{
	int32_t		k;
	double	   *scores;			/* host, every row */
} OutlierFinish;

/* The CPU path's sum of a sorted list, for the distances' type. */
static __device__ __forceinline__ double
OutlierSum(const float *sorted, int k)
{
	return odp_sum_ascending(sorted, k);
}

static __device__ __forceinline__ double
OutlierSum(const double *sorted, int k)
{
	return odp_sum_ascending64(sorted, k);
}

/*
 * Writes each row's score: the sum of its k stored distances in
 * ascending order.  One thread per row; count[q] must be k (every row has
 * at least k other rows), else *bad is set: an internal error.
 */
template <typename T>
static __global__ void
OutlierScoreKernel(const T *dist, const int32_t *count, int64_t rows,
				   int k, double *scores, int *bad)
{
	const int64_t q = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (q >= rows)
		return;
	if (count[q] != k)
	{
		atomicExch(bad, 1);
		scores[q] = 0.0;
		return;
	}
	scores[q] = OutlierSum(dist + q * k, k);
}

/* Finish hook: scores of rows [q0, q0 + nq), copied to the host. */
template <typename T>
static OdpStatus
OutlierFinishChunk(void *arg, OdpContext *ctx, cudaStream_t stream,
				   int64_t q0, int64_t nq, const T *dist,
				   const int64_t *index, const int32_t *count, void *scratch)
{
	OutlierFinish *f = (OutlierFinish *) arg;
	OdpStatus	status = ODP_OK;
	double	   *d_scores = (double *) scratch;
	int		   *d_bad = (int *) (d_scores + nq);
	int			bad = 0;
	double		t0 = odp_now_ms();

	(void) index;
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_bad, 0, sizeof(int), stream),
				 "clearing an error flag");
	OutlierScoreKernel<T><<<(unsigned) ((nq + 255) / 256), 256, 0, stream>>>(dist, count, nq, f->k, d_scores, d_bad);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the outlier score kernel");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "computing the outlier scores");
	ctx->compute_ms += odp_now_ms() - t0;

	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(f->scores + q0, d_scores,
									  (size_t) nq * sizeof(double),
									  cudaMemcpyDeviceToHost, stream),
				 "copying the scores from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, d_bad, sizeof(int),
									  cudaMemcpyDeviceToHost, stream),
				 "copying the scores from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the scores from the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;
	if (bad != 0)
		status = odp_fail(ctx, ODP_ERR_INTERNAL,
						  "a row kept fewer than k = %d neighbours on the GPU", f->k);
cleanup:
	return status;
}

/*
 * GPU outlier scores of rows of type T (float: m->data, double:
 * m->data64); arguments validated by the dispatcher
 * (kernels/outliers/outliers.c): 1 <= k < rows, k <= ODP_MAX_K, norms set (and
 * nonzero) exactly for cosine.  max_overflow > 0 makes it a filter-only
 * run (OdpKnnRun.filter_max_overflow, float32 rows) that may set *gave_up.
 */
template <typename T>
static OdpStatus
OutlierScores(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
			  int32_t k, const T *norms, double max_overflow,
			  int64_t first, int64_t count, double *scores, bool *gave_up)
{
	OutlierFinish finish;
	OdpKnnRunOf<T> run;

	ctx->transfer_ms = 0.0;
	ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	finish.k = k;
	finish.scores = scores;
	memset(&run, 0, sizeof(run));
	run.queries = m;
	run.query_norms = norms;
	run.cands = m;
	run.cand_norms = norms;
	run.self_join = true;
	run.metric = metric;
	run.k = k;
	run.first_query = first;
	run.query_count = count;
	/* a score per row, and room for the flag after the last one */
	run.finish_bytes_per_row = sizeof(double) + sizeof(int);
	run.finish = OutlierFinishChunk<T>;
	run.finish_arg = &finish;
	run.filter_max_overflow = max_overflow;
	run.values_only = true;
	run.gave_up = gave_up;
	return OdpKnnRunAll(ctx, &run);
}

/* See outliers_internal.h. */
extern "C" OdpStatus
odp_gpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
					   int32_t k, const float *norms, double *scores)
{
	return OutlierScores(ctx, m, metric, k, norms, 0.0, 0, 0, scores, NULL);
}

/* See outliers_internal.h. */
extern "C" OdpStatus
odp_gpu_outlier_scores_rows(OdpContext *ctx, const OdpMatrix *m,
							OdpMetric metric, int32_t k, const float *norms,
							int64_t first, int64_t count, double *scores)
{
	return OutlierScores(ctx, m, metric, k, norms, 0.0, first, count, scores,
						 NULL);
}

/* See outliers_internal.h. */
extern "C" OdpStatus
odp_gpu_outlier_scores64_rows(OdpContext *ctx, const OdpMatrix *m,
							  OdpMetric metric, int32_t k,
							  const double *norms, int64_t first,
							  int64_t count, double *scores)
{
	return OutlierScores(ctx, m, metric, k, norms, 0.0, first, count, scores,
						 NULL);
}

/* See outliers_internal.h. */
extern "C" OdpStatus
odp_gpu_outlier_scores_filtered(OdpContext *ctx, const OdpMatrix *m,
								OdpMetric metric, int32_t k,
								const float *norms, double max_overflow,
								double *scores, bool *gave_up)
{
	*gave_up = false;
	if (!(max_overflow > 0.0))
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"a filter-only run needs a positive overflow limit");
	return OutlierScores(ctx, m, metric, k, norms, max_overflow, 0, 0, scores,
						 gave_up);
}

/* See outliers_internal.h. */
extern "C" bool
odp_gpu_outliers_filter_eligible(OdpMetric metric, int64_t rows, int32_t dims,
								 int32_t k)
{
	OdpKnnProblem p;

	memset(&p, 0, sizeof(p));
	p.nq = rows;
	p.nc = rows;
	p.dims = dims;
	p.metric = metric;
	p.exclude_self = true;
	return OdpKnnTcEligible(&p, k) || OdpKnnIntEligible(&p, k);
}
