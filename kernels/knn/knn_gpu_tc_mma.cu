/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc_mma.cu
 *	  The tensor-core filter's tile kernel (TcFilterKernel): mma.sync
 *	  products of 128 queries x 128 candidates staged through a cp.async
 *	  ring, for the rows the register-resident and warpgroup filters do
 *	  not take (step 2 of knn_gpu_tc.cu).
 *
 * Map of this file: the staging of the query tile (TcStageQueries), one
 * k-step of a warp's products (TcStep), the copies of a ring stage
 * (TcIssueStage), TcFilterKernel, and TcTileFilter, which hands TcSearch
 * (knn_gpu_tc.cu) the kernel's instance.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc_mma.cu
 *
 *-------------------------------------------------------------------------
 */
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "knn/knn_gpu_tc_internal.cuh"

/* Copies the query tile (TC_BM rows of dp halves) into dst (row stride dp + 8). */
static __device__ __forceinline__ void
TcStageQueries(const __half *src, int dp, __half *dst)
{
	const int	per_row = dp / 8;

	for (int t = threadIdx.x; t < TC_BM * per_row; t += TC_THREADS)
	{
		const int	r = t / per_row;
		const int	v = t - r * per_row;

		__pipeline_memcpy_async(dst + r * (dp + 8) + v * 8, src + (int64_t) r * dp + v * 8, 16);
	}
}

/*
 * One k-step of 16 dimensions for a warp's 64 x 32 block: A fragments
 * from the shared addresses a_addr[i] (+ koff bytes), B from b_addr[jp].
 */
template <bool ZERO>
static __device__ __forceinline__ void
TcStep(float (&acc)[4][4][4], const uint32_t (&a_addr)[4], uint32_t a_koff,
	   const uint32_t (&b_addr)[2], uint32_t b_koff)
{
	uint32_t	af[4][4];
	uint32_t	bf[2][4];

#pragma unroll
	for (int i = 0; i < 4; i++)
		TcLdm4(af[i], a_addr[i] + a_koff);
#pragma unroll
	for (int jp = 0; jp < 2; jp++)
		TcLdm4(bf[jp], b_addr[jp] + b_koff);
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
			TcMma<ZERO>(acc[i][j], af[i], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
}

/*
 * Issues the copies of one ring stage into slot: BK dimensions from
 * knext of the candidate tile at cnext (and of the query tile unless
 * QRES); then advances (cnext, knext) to the next stage.
 */
template <bool QRES, int BK>
static __device__ __forceinline__ void
TcIssueStage(__half *slot, const __half *qtile, const __half *&cnext, int &knext, int dp,
			 const int (&src_off)[TC_BN * BK / 8 / TC_THREADS],
			 const int (&dst_off)[TC_BN * BK / 8 / TC_THREADS])
{
	constexpr int SLD = BK + 8;
	constexpr int COPIES = TC_BN * BK / 8 / TC_THREADS;

#pragma unroll
	for (int u = 0; u < COPIES; u++)
	{
		if (!QRES)
			__pipeline_memcpy_async(slot + TC_BN * SLD + dst_off[u], qtile + knext + src_off[u], 16);
		__pipeline_memcpy_async(slot + dst_off[u], cnext + knext + src_off[u], 16);
	}
	knext += BK;
	if (knext == dp)
	{
		knext = 0;
		cnext += (int64_t) TC_BN * dp;
	}
}

/*
 * The filter.  Grid: x = query tiles, y = candidate groups from
 * a.group0, each of a.tiles candidate tiles (fewer in the last); queries
 * vary fastest, so the blocks running at once share their candidates in
 * L2.  8 warps, warp w covering queries (w / 4) * 64 .. + 64 and
 * candidates (w % 4) * 32 .. + 32 of the block tile as 4 x 4 m16n8
 * fragments.  QRES: the query tile stays in shared memory (padded row
 * stride dp + 8, conflict-free) and the ring stages BK dimensions of
 * candidates; otherwise each stage holds BK dimensions of both.  The
 * ring runs on from one candidate tile into the next; one barrier per
 * stage.
 */
template <OdpMetric M, bool QRES, int BK>
static __global__ void __launch_bounds__(TC_THREADS, 2)
TcFilterKernel(const __grid_constant__ TcArgs a)
{
	extern __shared__ __align__(16) __half tsm[];
	constexpr int SLD = BK + 8;		/* stage row stride: conflict-free ldmatrix */
	constexpr int STAGE = (QRES ? 1 : 2) * TC_BN * SLD;	/* halves per slot */
	constexpr int COPIES = TC_BN * BK / 8 / TC_THREADS;	/* 16-byte copies per thread and row block */
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int	t = lane & 3;
	const int	wm = warp >> 2;
	const int	wn = warp & 3;
	const int64_t q0 = (int64_t) blockIdx.x * TC_BM;
	const int	tile0 = (int) ((a.group0 + blockIdx.y) * a.tiles);
	const int	tiles = min(a.tiles, a.ctiles - tile0);
	const int	kc = a.dp / BK;
	const int	steps = tiles * kc;
	const int	qld = a.dp + 8;
	__half	   *ring = tsm + (QRES ? TC_BM * qld : 0);
	const __half *qtile = a.q + q0 * a.dp;
	const __half *cnext;		/* the next stage's candidate rows */
	int			knext = 0;		/* and first dimension */
	int			src_off[COPIES];
	int			dst_off[COPIES];
	uint32_t	a_addr[4];
	uint32_t	b_addr[2];
	float		acc[4][4][4];
	float		thr[4][2];
	float		alpha[4][2];

	TcLoadLimits<M>(a, q0 + wm * 64, thr, alpha);
#pragma unroll
	for (int u = 0; u < COPIES; u++)
	{
		const int	x = threadIdx.x + u * TC_THREADS;

		src_off[u] = (x / (BK / 8)) * a.dp + (x % (BK / 8)) * 8;
		dst_off[u] = (x / (BK / 8)) * SLD + (x % (BK / 8)) * 8;
	}
	/* ldmatrix row addresses of this lane, in slot 0 / at dimension 0 */
#pragma unroll
	for (int i = 0; i < 4; i++)
	{
		const int	row = wm * 64 + i * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
		const __half *p = QRES ? tsm + row * qld : ring + TC_BN * SLD + row * SLD;

		a_addr[i] = (uint32_t) __cvta_generic_to_shared(p + (lane >> 4) * 8);
	}
#pragma unroll
	for (int jp = 0; jp < 2; jp++)
	{
		const int	row = wn * 32 + jp * 16 + (lane & 7) + (lane >> 4) * 8;

		b_addr[jp] = (uint32_t) __cvta_generic_to_shared(ring + row * SLD + ((lane >> 3) & 1) * 8);
	}

	/* prologue: the query tile (QRES) and the first TC_STAGES - 1 stages */
	if (QRES)
		TcStageQueries(qtile, a.dp, tsm);
	cnext = a.c + (int64_t) tile0 * TC_BN * a.dp;
#pragma unroll
	for (int s = 0; s < TC_STAGES - 1; s++)
	{
		if (s < steps)
			TcIssueStage<QRES, BK>(ring + s * STAGE, qtile, cnext, knext, a.dp, src_off, dst_off);
		__pipeline_commit();
	}
	for (int s = 0, kchunk = 0, tile = tile0; s < steps; s++)
	{
		const int	slot = s % TC_STAGES;
		const uint32_t slot_bytes = (uint32_t) (slot * STAGE * sizeof(__half));
		const uint32_t a_koff = QRES ? (uint32_t) (kchunk * BK * sizeof(__half)) : slot_bytes;

		__pipeline_wait_prior(TC_STAGES - 2);
		/* stage s has landed; everyone is done with stage s - 1's slot */
		__syncthreads();
		if (s + TC_STAGES - 1 < steps)
			TcIssueStage<QRES, BK>(ring + ((s + TC_STAGES - 1) % TC_STAGES) * STAGE, qtile,
								   cnext, knext, a.dp, src_off, dst_off);
		__pipeline_commit();
		if (kchunk == 0)
			TcStep<true>(acc, a_addr, a_koff, b_addr, slot_bytes);
		else
			TcStep<false>(acc, a_addr, a_koff, b_addr, slot_bytes);
#pragma unroll
		for (int kk = 16; kk < BK; kk += 16)
			TcStep<false>(acc, a_addr, a_koff + kk * sizeof(__half), b_addr, slot_bytes + kk * sizeof(__half));

		if (++kchunk == kc)
		{
			/* the tile is done: test every pair, a row's minimum first */
			const int64_t c0 = (int64_t) tile * TC_BN + wn * 32;
			float		cw[4][2];

			kchunk = 0;
			tile++;
#pragma unroll
			for (int j = 0; j < 4; j++)
			{
				const float2 w = *(const float2 *) (a.cw + c0 + j * 8 + 2 * t);

				cw[j][0] = w.x;
				cw[j][1] = w.y;
			}
			TcTestFragments<M, 4, 4>(acc, cw, thr, alpha, q0 + wm * 64, c0, a.count, a.list);
		}
	}
}

/* See knn_gpu_tc_internal.cuh. */
template <OdpMetric M>
TcFilterFn
TcTileFilter(bool qres, int bk)
{
	return !qres ? TcFilterKernel<M, false, 32>
		: (bk == 64 ? TcFilterKernel<M, true, 64> : TcFilterKernel<M, true, 32>);
}

/* The instances TcSearch runs: one per metric (TC_FOR_EACH_METRIC). */
#define TC_TILE_METRIC(M) template TcFilterFn TcTileFilter<M>(bool, int);
TC_FOR_EACH_METRIC(TC_TILE_METRIC)
#undef TC_TILE_METRIC
