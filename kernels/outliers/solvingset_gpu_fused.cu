/*-------------------------------------------------------------------------
 *
 * solvingset_gpu_fused.cu
 *	  SolvingSet's GPU backend, the single pass (SsExactUpdate): the exact
 *	  and the update step of a batch in one run of the k-NN primitive, each
 *	  candidate's weight from the distances its buffer kept under its
 *	  bound.
 *
 * Map of this file: the counters of the single pass
 * (odp_gpu_ss_fused_batches, odp_gpu_ss_overflowed), the candidates'
 * bounds (SsBoundKernel), their weights (SsSortedPrefix,
 * SsBufferWeightKernel), SsExactUpdate, and the launchers the batches
 * given by value use (SsLaunchBounds, SsLaunchBufferWeight).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_gpu_fused.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include <cuda_runtime.h>
#include <cub/block/block_radix_sort.cuh>

#include "gpu/gpu_check.cuh"
#include "include/odp_distance.h"
#include "outliers/solvingset_gpu_internal.cuh"

/* The single pass' counters (solvingset_gpu_internal.cuh). */
int64_t		odp_gpu_ss_fused_batches = 0;
int64_t		odp_gpu_ss_overflowed = 0;

/* Threads of SsBufferWeightKernel, and its small sort (entries per thread). */
#define SS_WEIGHT_THREADS	128
#define SS_WEIGHT_SMALL		4

/* Per-step timings on stderr, for benchmark builds (-DODP_SS_TRACE). */
#ifdef ODP_SS_TRACE
#include <stdio.h>
#define SS_TRACE(...) fprintf(stderr, __VA_ARGS__)
#else
#define SS_TRACE(...) ((void) 0)
#endif

/*
 * Single pass: the bound of candidate i is the largest distance of its
 * partial k-list (full: the caller checked that its upper bound is
 * finite).  Its k nearest other rows all lie at or under it.
 */
static __global__ void
SsBoundKernel(const int64_t *cand, int64_t nc, const float *dist,
			  const int32_t *count, int k, float *bound, int *unbounded)
{
	const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= nc)
		return;
	if (count[cand[i]] == k)
		bound[i] = dist[cand[i] * k + k - 1];
	else
	{
		bound[i] = INFINITY;
		*unbounded = 1;
	}
}

/*
 * Writes the first min(c, n) of the block's c <= SS_WEIGHT_THREADS *
 * ITEMS buffered distances, ascending, to out.  All threads call it.
 */
template <int ITEMS>
static __device__ __forceinline__ void
SsSortedPrefix(const float *buf, int c, int n, float *out, void *temp)
{
	typedef cub::BlockRadixSort<float, SS_WEIGHT_THREADS, ITEMS> Sort;
	float		keys[ITEMS];

#pragma unroll
	for (int t = 0; t < ITEMS; t++)
	{
		const int	e = threadIdx.x * ITEMS + t;

		keys[t] = e < c ? buf[e] : INFINITY;
	}
	Sort(*(typename Sort::TempStorage *) temp).Sort(keys);
#pragma unroll
	for (int t = 0; t < ITEMS; t++)
	{
		const int	e = threadIdx.x * ITEMS + t;

		if (e < c && e < n)
			out[e] = keys[t];
	}
}

/*
 * Single pass: the exact weight of candidate blockIdx.x from its buffer,
 * which holds its c distances strictly under its bound b to the other
 * rows, and, except for cosine, its distance to itself when that is
 * under b (the primitive does not spend a load per pair to skip it; see
 * knn_gpu.cuh): one entry of that value is dropped here.  At least k
 * other rows lie at or under b (its partial list), so its k smallest
 * distances are the buffered ones, ascending, followed by copies of b
 * up to k; summed in that order as odp_sum_ascending does, that is the
 * brute-force weight to the bit.  A buffer that overflowed (c > cap) is
 * left to the caller.  rows holds the candidates' rows, in batch order.
 */
static __global__ void __launch_bounds__(SS_WEIGHT_THREADS)
SsBufferWeightKernel(const float *buf, const int32_t *count,
					 const float *bound, const float *rows, int dims,
					 OdpMetric metric, int cap, int k, double *weight, int *bad,
					 const int64_t *own, float *lists)
{
	typedef cub::BlockRadixSort<float, SS_WEIGHT_THREADS, SS_WEIGHT_SMALL> SmallSort;
	typedef cub::BlockRadixSort<float, SS_WEIGHT_THREADS,
								SS_FUSED_CAP / SS_WEIGHT_THREADS> LargeSort;
	__shared__ union
	{
		typename SmallSort::TempStorage small;
		typename LargeSort::TempStorage large;
	}			temp;
	__shared__ float sorted[ODP_KNN_FAST_MAX_K + 1];
	const int64_t i = blockIdx.x;
	const int	c = count[i];
	const float *b = buf + i * (int64_t) cap;

	if (c > cap)
		return;
	/* c is the same for the whole block: the barriers inside agree */
	if (c <= SS_WEIGHT_THREADS * SS_WEIGHT_SMALL)
		SsSortedPrefix<SS_WEIGHT_SMALL>(b, c, k + 1, sorted, &temp.small);
	else
		SsSortedPrefix<SS_FUSED_CAP / SS_WEIGHT_THREADS>(b, c, k + 1, sorted, &temp.large);
	__syncthreads();
	if (threadIdx.x == 0)
	{
		const int	have = c < k + 1 ? c : k + 1;
		int			skip = -1;
		int			taken = 0;
		double		s = 0.0;

		/* a candidate of another shard has no row here, so no self pair */
		if (metric != ODP_METRIC_COSINE && (own == NULL || own[i] >= 0))
		{
			const float *row = rows + i * (int64_t) dims;
			const float self = odp_distance(metric, row, row, dims, 1.0f, 1.0f);

			if (self < bound[i])
			{
				for (int e = 0; e < have && skip < 0; e++)
					if (sorted[e] == self)
						skip = e;
				if (skip < 0)
					atomicExch(bad, 1);	/* the pass must have appended it */
			}
		}
		for (int e = 0; e < have && taken < k; e++)
		{
			if (e == skip)
				continue;
			if (lists != NULL)
				lists[i * k + taken] = sorted[e];
			else
				s += (double) sorted[e];
			taken++;
		}
		for (; taken < k; taken++)
		{
			if (lists != NULL)
				lists[i * k + taken] = INFINITY;
			else
				s += (double) bound[i];
		}
		if (lists == NULL)
			weight[i] = s;
	}
}

/*
 * See OdpSsBackend.exact_update in solvingset_internal.h.  The single pass of
 * seed 001 (Fig. 1, lines 13-21), re-thought for the primitive: queries
 * are all rows, candidates the batch; the query side merges each active
 * row's distances into its update list as SsUpdate does, and the
 * candidate side (OdpKnnProblem.cand_bound) keeps, per candidate, only
 * the distances strictly under its bound, the largest entry of its own
 * partial list, which SsBufferWeightKernel turns into the exact weight.
 * Each (row, candidate) distance is computed once instead of twice, and
 * the candidate side costs a compare per pair.
 *
 * Every candidate needs a full partial list for its bound: the first
 * batch (and any batch holding a candidate with an infinite upper bound)
 * takes the two passes.  A candidate whose buffer overflows gets its
 * weight from SsExact.  Both give the same bits, so the result does not
 * depend on which way a candidate went.
 */
OdpStatus
SsExactUpdate(void *self, const int64_t *cand, int32_t nc_all,
			  const uint8_t *active, double *weight, double *upper,
			  int64_t *distances)
{
	GpuSs	   *ss = (GpuSs *) self;
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	bool		bounded = ss->fused && ss->upd_ready && nc_all <= ss->fbatch;
	double		t0;

	/*
	 * Every candidate's partial list must be full: the device knows (the
	 * host's upper[] is stale when SsSelect runs).
	 */
	if (bounded)
	{
		int			unbounded = 0;

		ODP_CUDA_TRY(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
		ODP_TRY(SsGather(ss, ss->d_data, ss->d_norms, cand, nc_all, nc_all, 1));
		t0 = odp_now_ms();
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(ss->d_unbounded, 0, sizeof(int), ss->stream),
					 "clearing a SolvingSet flag");
		SsLaunchBounds(ss, nc_all, ss->d_bound);
		ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet bound kernel");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&unbounded, ss->d_unbounded, sizeof(int),
										  cudaMemcpyDeviceToHost, ss->stream),
					 "copying a SolvingSet flag from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
					 "computing SolvingSet candidate bounds");
		ctx->compute_ms += odp_now_ms() - t0;
		bounded = unbounded == 0;
	}
	if (!bounded)
	{
		t0 = odp_now_ms();
		status = SsExact(self, cand, nc_all, weight, distances);
		SS_TRACE("ss two-pass: %d candidates, exact %.2f ms\n", nc_all, odp_now_ms() - t0);
		if (status == ODP_OK && odp_cancel_requested(ctx))
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
		t0 = odp_now_ms();
		if (status == ODP_OK)
			status = SsUpdate(self, cand, nc_all, active, upper, distances);
		SS_TRACE("ss two-pass: update %.2f ms\n", odp_now_ms() - t0);
		return status;
	}

	ODP_CUDA_TRY(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	odp_gpu_ss_fused_batches++;
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_active, active, (size_t) ss->rows, ss->stream),
				 "copying SolvingSet active rows to the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;
	/* one chunk: the rows, bounds and ids of the candidates are in place */
	{
		const int64_t nc = nc_all;
		OdpKnnProblem prob;
		int64_t		nover = 0;
		int			bad = 0;

		t0 = odp_now_ms();
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(ss->d_fcount, 0, (size_t) nc * sizeof(int32_t),
										  ss->stream),
					 "clearing the SolvingSet candidate buffers");
		ctx->compute_ms += odp_now_ms() - t0;

		SsBatchProblem(ss, ss->d_data, ss->d_norms, ss->rows, nc, &prob);
		prob.cand_bound = ss->d_bound;
		prob.cand_self = ss->d_cand;
		prob.cand_limit = ss->d_limit;
		prob.cand_count = ss->d_fcount;
		prob.cand_buf = ss->d_fbuf;
		prob.cand_cap = ss->fcap;
		prob.query_active = ss->d_active;
		SS_TRACE("ss fused: %lld candidates, prepared in %.2f ms\n", (long long) nc, odp_now_ms() - t0);
		t0 = odp_now_ms();
		ODP_TRY(OdpKnnAccumulate(ctx, &ss->dev, ss->stream, &prob,
								&ss->upd_state, &ctx->compute_ms));
		SS_TRACE("ss fused: single pass %.2f ms\n", odp_now_ms() - t0);
		ctx->chunks++;
		ss->cand_seen += nc;
		*distances += nc * ss->rows;

		t0 = odp_now_ms();
		SsLaunchBufferWeight(ss, nc, NULL, NULL);
		ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet buffer weight kernel");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(weight, ss->d_weight, (size_t) nc * sizeof(double),
										  cudaMemcpyDeviceToHost, ss->stream),
					 "copying SolvingSet weights from the GPU");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->h_fcount, ss->d_fcount, (size_t) nc * sizeof(int32_t),
										  cudaMemcpyDeviceToHost, ss->stream),
					 "copying SolvingSet weights from the GPU");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, ss->d_bad, sizeof(int),
										  cudaMemcpyDeviceToHost, ss->stream),
					 "copying SolvingSet weights from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
					 "computing SolvingSet weights");
		if (bad != 0)
			return odp_fail(ctx, ODP_ERR_INTERNAL,
							"a SolvingSet candidate's buffer lacks its distance to itself on the GPU");
		ctx->compute_ms += odp_now_ms() - t0;
		SS_TRACE("ss fused: weights %.2f ms\n", odp_now_ms() - t0);

		/* overflowed buffers: those candidates the two-pass way */
		for (int64_t i = 0; i < nc; i++)
		{
			if (ss->h_fcount[i] > ss->fcap)
			{
				ss->h_overpos[nover] = i;
				ss->h_over[nover++] = cand[i];
			}
		}
		odp_gpu_ss_overflowed += nover;
		if (nover > 0)
		{
			t0 = odp_now_ms();
			ODP_TRY(SsExact(self, ss->h_over, (int32_t) nover, ss->h_overw, distances));
			SS_TRACE("ss fused: %lld overflowed, exact in %.2f ms\n", (long long) nover, odp_now_ms() - t0);
			for (int64_t j = 0; j < nover; j++)
				weight[ss->h_overpos[j]] = ss->h_overw[j];
		}
	}
	t0 = odp_now_ms();
	status = SsUpperBounds(ss, ss->fused ? NULL : upper);
	SS_TRACE("ss fused: upper bounds %.2f ms\n", odp_now_ms() - t0);
cleanup:
	return status;
}

/* See solvingset_gpu_internal.cuh. */
void
SsLaunchBounds(GpuSs *ss, int64_t nc, float *bound)
{
	SsBoundKernel<<<(unsigned) ((nc + 255) / 256), 256, 0, ss->stream>>>(ss->d_cand, nc, ss->upd_state.dist, ss->upd_state.count, ss->k, bound, ss->d_unbounded);
}

/* See solvingset_gpu_internal.cuh. */
void
SsLaunchBufferWeight(GpuSs *ss, int64_t nc, const int64_t *own, float *lists)
{
	SsBufferWeightKernel<<<(unsigned) nc, SS_WEIGHT_THREADS, 0, ss->stream>>>(ss->d_fbuf, ss->d_fcount, ss->d_bound, ss->d_gather, ss->dims, ss->metric, ss->fcap, ss->k, ss->d_weight, ss->d_bad, own, lists);
}
