/*-------------------------------------------------------------------------
 *
 * knn_gpu_search.cu
 *	  GPU path of odp_compute_knn: the shared k-NN driver
 *	  (knn_gpu_run.cu) with every finished query chunk's lists copied
 *	  back as they are, for float32 rows (float distances) and float64
 *	  rows (double distances, knn_gpu_wide.cu's kernel) alike.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_search.cu
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "knn/knn_gpu_run.cuh"
#include "knn/knn_internal.h"

/* Where the lists go on the host; T is the distances' type. */
template <typename T>
struct SearchOut
{
	int32_t		k;
	T		   *dist;
	int64_t    *index;
	int32_t    *count;			/* host scratch, one chunk */
};

/* Finish hook: copies rows [q0, q0 + nq) of lists to the host. */
template <typename T>
static OdpStatus
SearchFinishChunk(void *arg, OdpContext *ctx, cudaStream_t stream, int64_t q0,
				  int64_t nq, const T *dist, const int64_t *index,
				  const int32_t *count, void *scratch)
{
	SearchOut<T> *out = (SearchOut<T> *) arg;
	OdpStatus	status = ODP_OK;
	const size_t n = (size_t) nq * out->k;
	double		t0 = odp_now_ms();

	(void) scratch;
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out->dist + q0 * out->k, dist, n * sizeof(T),
									  cudaMemcpyDeviceToHost, stream),
				 "copying the neighbours from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out->index + q0 * out->k, index, n * sizeof(int64_t),
									  cudaMemcpyDeviceToHost, stream),
				 "copying the neighbours from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out->count, count, (size_t) nq * sizeof(int32_t),
									  cudaMemcpyDeviceToHost, stream),
				 "copying the neighbours from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the neighbours from the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;
	for (int64_t i = 0; i < nq; i++)
	{
		if (out->count[i] != out->k)
			return odp_fail(ctx, ODP_ERR_INTERNAL,
							"query %lld kept %d of k = %d neighbours on the GPU",
							(long long) (q0 + i), (int) out->count[i], out->k);
	}
cleanup:
	return status;
}

/* See knn_internal.h. */
extern "C" OdpStatus
odp_gpu_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
			const float *qnorms, const float *cnorms, OdpMetric metric,
			int32_t k, bool self_join, float *dist, int64_t *index)
{
	return odp_gpu_knn_rows(ctx, queries, cands, qnorms, cnorms, metric, k,
							self_join, 0, 0, dist, index);
}

/*
 * odp_gpu_knn_rows and odp_gpu_knn64_rows: the driver over rows of type T
 * (queries->data and cands->data, or data64), lists into dist/index.
 */
template <typename T>
static OdpStatus
SearchRows(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
		   const T *qnorms, const T *cnorms, OdpMetric metric, int32_t k,
		   bool self_join, int64_t first, int64_t count, T *dist,
		   int64_t *index, OdpKnnTeam *team = NULL, int team_part = 0)
{
	SearchOut<T> out;
	OdpKnnRunOf<T> run;
	OdpStatus	status;

	ctx->transfer_ms = 0.0;
	ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	out.k = k;
	out.dist = dist;
	out.index = index;
	/* a chunk is at most all queries */
	out.count = (int32_t *) malloc(sizeof(int32_t) * (size_t) queries->rows);
	if (out.count == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %lld counts",
						(long long) queries->rows);
	memset(&run, 0, sizeof(run));
	run.queries = queries;
	run.query_norms = qnorms;
	run.cands = cands;
	run.cand_norms = cnorms;
	run.self_join = self_join;
	run.metric = metric;
	run.k = k;
	run.first_query = first;
	run.query_count = count;
	run.finish = SearchFinishChunk<T>;
	run.finish_arg = &out;
	run.team = team;
	run.team_part = team_part;
	status = OdpKnnRunAll(ctx, &run);
	free(out.count);
	return status;
}

/* See knn_internal.h. */
extern "C" OdpStatus
odp_gpu_knn_rows(OdpContext *ctx, const OdpMatrix *queries,
				 const OdpMatrix *cands, const float *qnorms,
				 const float *cnorms, OdpMetric metric, int32_t k,
				 bool self_join, int64_t first, int64_t count, float *dist,
				 int64_t *index)
{
	return SearchRows(ctx, queries, cands, qnorms, cnorms, metric, k,
					  self_join, first, count, dist, index);
}

/* See knn_internal.h. */
extern "C" OdpStatus
odp_gpu_knn64_rows(OdpContext *ctx, const OdpMatrix *queries,
				   const OdpMatrix *cands, const double *qnorms,
				   const double *cnorms, OdpMetric metric, int32_t k,
				   bool self_join, int64_t first, int64_t count, double *dist,
				   int64_t *index)
{
	return SearchRows(ctx, queries, cands, qnorms, cnorms, metric, k,
					  self_join, first, count, dist, index);
}

/* See knn_internal.h. */
extern "C" OdpStatus
odp_gpu_knn_team_rows(OdpContext *ctx, const OdpMatrix *rows, const float *norms,
					  OdpMetric metric, int32_t k, OdpKnnTeam *team, int part,
					  float *dist, int64_t *index)
{
	const int64_t first = team->first[part];

	return SearchRows<float>(ctx, rows, rows, norms, norms, metric, k, true, first,
							 team->first[part + 1] - first, dist, index, team, part);
}
