/*-------------------------------------------------------------------------
 *
 * knn_gpu_refine64.cu
 *	  The refinement step of the float64 k-NN filter (knn_wide_filter.c):
 *	  each query's candidate list, found in float32, measured again in
 *	  float64 with the canonical distance, cut to its k smallest by
 *	  (distance, index), and certified where the filter's lower bound for
 *	  every unlisted candidate lies strictly above the k-th.
 *
 * A block per query (a warp for lists of up to 32 entries): its threads
 * compute odp_distance64 of the listed pairs (odp_dist_step64 in index
 * order, odp_dist_finish64, the rows' odp_row_norm64 for cosine; no FMA,
 * the ODP_D* helpers round every operation as the CPU does), keep them in
 * shared memory, and each entry's rank among the list by (distance,
 * index) places it: the lists hold distinct indexes, so the ranks are
 * 0 .. kp-1 and those below k are the sorted top k.  The query is
 * certified iff lower[q] > the k-th distance.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_refine64.cu
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "include/odp_distance.h"
#include "knn/knn_internal.h"

/* Queries refined per launch, so that the cancel callback is polled. */
#define REFINE_QUERIES_PER_LAUNCH	((int64_t) 1 << 16)

/*
 * Refines queries [q0, q0 + gridDim.x): see the file's comment.  Shared
 * memory: kp doubles, then kp int64_t indexes.
 */
static __global__ void
Refine64Kernel(const double *queries, const double *cands,
			   const double *qnorms, const double *cnorms, int dims,
			   OdpMetric metric, int kp, int k, int64_t q0,
			   const int64_t *list, const double *lower, double *out_dist,
			   int64_t *out_index, unsigned char *certified)
{
	extern __shared__ double refine_smem[];
	double	   *sd = refine_smem;
	int64_t    *si = (int64_t *) (sd + kp);
	const int64_t q = q0 + blockIdx.x;
	const double *qrow = queries + q * dims;

	for (int e = threadIdx.x; e < kp; e += blockDim.x)
	{
		const int64_t j = list[q * kp + e];
		const double *crow = cands + j * dims;
		double		acc = 0.0;

		for (int d = 0; d < dims; d++)
			acc = odp_dist_step64(metric, acc, qrow[d], crow[d]);
		sd[e] = odp_dist_finish64(metric, acc, qnorms ? qnorms[q] : 0.0,
								  cnorms ? cnorms[j] : 0.0);
		si[e] = j;
	}
	__syncthreads();
	for (int e = threadIdx.x; e < kp; e += blockDim.x)
	{
		const double de = sd[e];
		const int64_t ie = si[e];
		int			rank = 0;

		for (int f = 0; f < kp; f++)
			if (sd[f] < de || (sd[f] == de && si[f] < ie))
				rank++;
		if (rank < k)
		{
			out_dist[q * k + rank] = de;
			out_index[q * k + rank] = ie;
		}
		if (rank == k - 1)
			certified[q] = lower[q] > de ? 1 : 0;
	}
}

/* See knn_internal.h. */
extern "C" OdpStatus
odp_gpu_refine64(OdpContext *ctx, const OdpRefine64 *r, bool *too_big)
{
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream = NULL;
	OdpStatus	status = ODP_OK;
	const bool	same = r->cands == r->queries;
	const size_t qrow_bytes = (size_t) r->dims * sizeof(double);
	size_t		need = 0;
	double	   *d_q = NULL,
			   *d_c = NULL,
			   *d_qn = NULL,
			   *d_cn = NULL,
			   *d_lower = NULL,
			   *d_dist = NULL;
	int64_t    *d_list = NULL,
			   *d_index = NULL;
	unsigned char *d_cert = NULL;
	const int	threads = r->kp <= 32 ? 32 : 128;
	const size_t smem = (size_t) r->kp * (sizeof(double) + sizeof(int64_t));
	double		t0;

	*too_big = false;
	memset(&arena, 0, sizeof(arena));
	if ((status = OdpGpuBegin(ctx, &dev)) != ODP_OK)
		return status;
	OdpGpuArenaInit(&arena, dev.budget);

	/* all of it at once; a call too large for the budget is not refined */
	need = OdpGpuRounded((size_t) r->nq * qrow_bytes) +
		(same ? 0 : OdpGpuRounded((size_t) r->nc * qrow_bytes)) +
		(r->qnorms ? 2 * OdpGpuRounded((size_t) (r->nq + r->nc) * sizeof(double)) : 0) +
		OdpGpuRounded((size_t) r->nq * r->kp * sizeof(int64_t)) +
		OdpGpuRounded((size_t) r->nq * (sizeof(double) + 1)) +
		OdpGpuRounded((size_t) r->nq * r->k * (sizeof(double) + sizeof(int64_t)));
	if (dev.budget != 0 && need > dev.budget)
	{
		*too_big = true;
		return ODP_OK;
	}

	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nq * qrow_bytes,
							 "float64 query rows", (void **) &d_q));
	if (same)
		d_c = d_q;
	else
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nc * qrow_bytes,
								 "float64 candidate rows", (void **) &d_c));
	if (r->qnorms != NULL)
	{
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nq * sizeof(double),
								 "query norms", (void **) &d_qn));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nc * sizeof(double),
								 "candidate norms", (void **) &d_cn));
	}
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nq * r->kp * sizeof(int64_t),
							 "candidate lists", (void **) &d_list));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nq * sizeof(double),
							 "lower bounds", (void **) &d_lower));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nq * r->k * sizeof(double),
							 "refined distances", (void **) &d_dist));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nq * r->k * sizeof(int64_t),
							 "refined indexes", (void **) &d_index));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) r->nq,
							 "certificates", (void **) &d_cert));

	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(d_q, r->queries, (size_t) r->nq * qrow_bytes,
									  cudaMemcpyHostToDevice, stream),
				 "copying the float64 rows to the GPU");
	if (!same)
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(d_c, r->cands, (size_t) r->nc * qrow_bytes,
										  cudaMemcpyHostToDevice, stream),
					 "copying the float64 rows to the GPU");
	if (r->qnorms != NULL)
	{
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(d_qn, r->qnorms, (size_t) r->nq * sizeof(double),
										  cudaMemcpyHostToDevice, stream),
					 "copying the norms to the GPU");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(d_cn, r->cnorms, (size_t) r->nc * sizeof(double),
										  cudaMemcpyHostToDevice, stream),
					 "copying the norms to the GPU");
	}
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(d_list, r->list,
									  (size_t) r->nq * r->kp * sizeof(int64_t),
									  cudaMemcpyHostToDevice, stream),
				 "copying the candidate lists to the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(d_lower, r->lower, (size_t) r->nq * sizeof(double),
									  cudaMemcpyHostToDevice, stream),
				 "copying the lower bounds to the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the refinement's input");
	ctx->transfer_ms += odp_now_ms() - t0;

	t0 = odp_now_ms();
	for (int64_t q0 = 0; q0 < r->nq; q0 += REFINE_QUERIES_PER_LAUNCH)
	{
		const int64_t nb = r->nq - q0 < REFINE_QUERIES_PER_LAUNCH ?
			r->nq - q0 : REFINE_QUERIES_PER_LAUNCH;

		if (odp_cancel_requested(ctx))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "cancelled");
			goto cleanup;
		}
		Refine64Kernel<<<(unsigned) nb, threads, smem, stream>>>(d_q, d_c, d_qn, d_cn,
																 r->dims, r->metric,
																 r->kp, r->k, q0,
																 d_list, d_lower,
																 d_dist, d_index,
																 d_cert);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the float64 refinement");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "refining in float64");
		ctx->chunks++;
	}
	ctx->compute_ms += odp_now_ms() - t0;

	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(r->dist, d_dist, (size_t) r->nq * r->k * sizeof(double),
									  cudaMemcpyDeviceToHost, stream),
				 "copying the refined lists from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(r->index, d_index,
									  (size_t) r->nq * r->k * sizeof(int64_t),
									  cudaMemcpyDeviceToHost, stream),
				 "copying the refined lists from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(r->certified, d_cert, (size_t) r->nq,
									  cudaMemcpyDeviceToHost, stream),
				 "copying the certificates from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the refined lists from the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;

cleanup:
	if (stream != NULL)
	{
		(void) cudaStreamSynchronize(stream);
		(void) cudaStreamDestroy(stream);
	}
	OdpGpuArenaRelease(&arena);
	return status;
}
