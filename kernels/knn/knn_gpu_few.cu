/*-------------------------------------------------------------------------
 *
 * knn_gpu_few.cu
 *	  A few k-NN queries (odp_knn's single query, small batches) against
 *	  many float32 candidates on the GPU: every distance into device
 *	  memory, then each query's k smallest by CUB's radix sort.
 *
 * The tiled kernel of knn_gpu.cu owns 64 queries a block and fills the
 * GPU only with many queries; one query there left most lanes idle and
 * took 6 ms over 10^6 x 128 rows on the H200.  Here one thread computes
 * one candidate's distances to every query, reading its row once, in
 * 16-byte loads where the rows allow, with odp_dist_step in index order
 * (the file is compiled with -fmad=false): the same bits as the CPU path.
 * The distances of these metrics are +0 or more, so a stable radix sort
 * of (distance, index) pairs that start in index order gives the lists
 * in (distance, index) order, the engine's tie rule.  A candidate matrix
 * the call holds on the device (the GPU service's table cache) is read
 * in place: no copy at all.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_few.cu
 *
 *-------------------------------------------------------------------------
 */
#include <cub/device/device_radix_sort.cuh>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "include/odp_cost.h"
#include "include/odp_distance.h"
#include "knn/knn_internal.h"

#define FEW_THREADS 256

/* Launches FewDistances for metric M (in odp_gpu_knn_few). */
#define FEW_LAUNCH(M) \
	do { \
		if (vec) \
			FewDistances<M, true><<<grid, FEW_THREADS, 0, stream>>>(d_cands, n, dims, d_queries, nq, d_dist, d_order); \
		else \
			FewDistances<M, false><<<grid, FEW_THREADS, 0, stream>>>(d_cands, n, dims, d_queries, nq, d_dist, d_order); \
	} while (0)

/* Test counter: calls that took this path. */
int64_t		odp_gpu_knn_few_runs = 0;

/* See knn_internal.h. */
extern "C" bool
odp_gpu_knn_few_fits(const OdpMatrix *queries, const OdpMatrix *cands, OdpMetric metric,
					 bool self_join)
{
	return odp_knn_few_shape(queries->rows, cands->rows, odp_matrix_is64(queries),
							 self_join, metric);
}

/*
 * dist[q * n + c] = the distance of query q to candidate c, and
 * order[c] = c (the sort's values).  VEC: rows read 4 values at a time.
 * The metric is a constant, so that odp_dist_step's switch folds away.
 */
template <OdpMetric metric, bool VEC>
__global__ static void
FewDistances(const float *__restrict__ cands, int64_t n, int dims,
			 const float *__restrict__ queries, int nq,
			 float *__restrict__ dist, uint32_t *__restrict__ order)
{
	const int64_t c = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	float		acc[ODP_KNN_FEW_MAX_QUERIES];
	const float *row;

	if (c >= n)
		return;
	row = cands + c * dims;
	for (int q = 0; q < ODP_KNN_FEW_MAX_QUERIES; q++)
		acc[q] = 0.0f;
	if (VEC)
	{
		for (int d = 0; d < dims; d += 4)
		{
			const float4 v = __ldg((const float4 *) (row + d));

#pragma unroll
			for (int q = 0; q < ODP_KNN_FEW_MAX_QUERIES; q++)
				if (q < nq)
				{
					const float *qr = queries + (size_t) q * dims + d;

					acc[q] = odp_dist_step(metric, acc[q], qr[0], v.x);
					acc[q] = odp_dist_step(metric, acc[q], qr[1], v.y);
					acc[q] = odp_dist_step(metric, acc[q], qr[2], v.z);
					acc[q] = odp_dist_step(metric, acc[q], qr[3], v.w);
				}
		}
	}
	else
		for (int d = 0; d < dims; d++)
		{
			const float v = __ldg(row + d);

#pragma unroll
			for (int q = 0; q < ODP_KNN_FEW_MAX_QUERIES; q++)
				if (q < nq)
					acc[q] = odp_dist_step(metric, acc[q], queries[(size_t) q * dims + d], v);
		}
#pragma unroll
	for (int q = 0; q < ODP_KNN_FEW_MAX_QUERIES; q++)
		if (q < nq)
			dist[(size_t) q * n + c] = odp_dist_finish(metric, acc[q], 0.0f, 0.0f);
	order[c] = (uint32_t) c;
}

/* See knn_internal.h. */
extern "C" OdpStatus
odp_gpu_knn_few(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
				OdpMetric metric, int32_t k, float *dist, int64_t *index)
{
	OdpStatus	status = ODP_OK;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream = NULL;
	const int64_t n = cands->rows;
	const int	dims = cands->dims;
	const int	nq = (int) queries->rows;
	const size_t row_bytes = sizeof(float) * (size_t) dims;
	const float *d_cands;
	void	   *d_own = NULL;
	float	   *d_queries = NULL;
	float	   *d_dist = NULL;
	float	   *d_keys = NULL;
	uint32_t   *d_order = NULL;
	uint32_t   *d_sorted = NULL;
	void	   *d_temp = NULL;
	size_t		temp_bytes = 0;
	uint32_t   *h_sorted = NULL;
	double		t0 = odp_now_ms();
	double		t1;

	ctx->transfer_ms = 0.0;
	ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	memset(&arena, 0, sizeof(arena));
	ODP_TRY(OdpGpuBegin(ctx, &dev));
	OdpGpuArenaInit(&arena, dev.budget);
	h_sorted = (uint32_t *) malloc(sizeof(uint32_t) * (size_t) k);
	if (h_sorted == NULL)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %d neighbours", (int) k);
		goto cleanup;
	}
	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	d_cands = (const float *) OdpGpuResidentOn(ctx, cands->data, row_bytes * (size_t) n);
	if (d_cands == NULL)
	{
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, row_bytes * (size_t) n, "candidate rows", &d_own));
		ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, d_own, cands->data, row_bytes * (size_t) n, stream),
					 "copying the candidate rows to the GPU");
		d_cands = (const float *) d_own;
	}
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, row_bytes * (size_t) nq, "query rows", (void **) &d_queries));
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, d_queries, queries->data, row_bytes * (size_t) nq, stream),
				 "copying the query rows to the GPU");
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, sizeof(float) * (size_t) n * nq, "distances", (void **) &d_dist));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, sizeof(float) * (size_t) n, "sorted distances", (void **) &d_keys));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, sizeof(uint32_t) * (size_t) n, "row order", (void **) &d_order));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, sizeof(uint32_t) * (size_t) n, "sorted row order", (void **) &d_sorted));
	ODP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, d_dist, d_keys, d_order,
													  d_sorted, n, 0, 32, stream),
				 "sizing the neighbours' sort");
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, temp_bytes, "the neighbours' sort", &d_temp));
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the rows to the GPU");
	t1 = odp_now_ms();
	ctx->transfer_ms += t1 - t0;

	{
		const bool	vec = dims % 4 == 0 && ((uintptr_t) d_cands & 15) == 0;
		const unsigned grid = (unsigned) ((n + FEW_THREADS - 1) / FEW_THREADS);

		switch (metric)
		{
			case ODP_METRIC_EUCLIDEAN:
				FEW_LAUNCH(ODP_METRIC_EUCLIDEAN);
				break;
			case ODP_METRIC_SQEUCLIDEAN:
				FEW_LAUNCH(ODP_METRIC_SQEUCLIDEAN);
				break;
			case ODP_METRIC_MANHATTAN:
				FEW_LAUNCH(ODP_METRIC_MANHATTAN);
				break;
			default:
				FEW_LAUNCH(ODP_METRIC_CHEBYSHEV);
				break;
		}
	}
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the few-query distance kernel");
	for (int q = 0; q < nq; q++)
	{
		if (odp_cancel_requested(ctx))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
			goto cleanup;
		}
		ODP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(d_temp, temp_bytes, d_dist + (size_t) q * n,
														  d_keys, d_order, d_sorted, n, 0, 32, stream),
					 "sorting a query's distances");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(dist + (size_t) q * k, d_keys, sizeof(float) * (size_t) k,
										  cudaMemcpyDeviceToHost, stream),
					 "copying a query's neighbours from the GPU");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(h_sorted, d_sorted, sizeof(uint32_t) * (size_t) k,
										  cudaMemcpyDeviceToHost, stream),
					 "copying a query's neighbours from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "sorting a query's distances");
		for (int32_t i = 0; i < k; i++)
			index[(size_t) q * k + i] = (int64_t) h_sorted[i];
	}
	ctx->compute_ms += odp_now_ms() - t1;
	ctx->chunks = 1;
	odp_gpu_knn_few_runs++;

cleanup:
	if (stream != NULL)
	{
		(void) cudaStreamSynchronize(stream);
		(void) cudaStreamDestroy(stream);
	}
	OdpGpuArenaRelease(&arena);
	free(h_sorted);
	return status;
}
