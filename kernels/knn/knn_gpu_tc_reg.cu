/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc_reg.cu
 *	  The tensor-core filter's register-resident kernel
 *	  (TcFilterRegKernel): rows of 16 or 32 padded dimensions, each warp's
 *	  queries held in registers for the whole sweep, and the symmetric
 *	  filter of a self join (step 2 of knn_gpu_tc.cu).
 *
 * Map of this file: the folded test (TcTestFolded), the symmetric
 * filter's mirrored test (TcTestMirrored), TcFilterRegKernel, and
 * TcRegFilter, which hands TcSearch (knn_gpu_tc.cu) the kernel's instance
 * for a row width.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc_reg.cu
 *
 *-------------------------------------------------------------------------
 */
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "knn/knn_gpu_tc_internal.cuh"

/*
 * TcTestFragments for products that started from -cw / 2 (the MMA's C
 * operand), so that acc = q.c - cw / 2 and a pair passes when
 * acc >= -thr / 2 (half, per row; +inf once the row's list is full):
 * one maximum per pair.  Not for the inner product, whose weight has a
 * per-query factor.  The symmetric filter's products also start from
 * -rw (TcTestMirrored), and half is then -thr / 2 - rw.
 */
template <int MI, int NJ>
static __device__ __forceinline__ void
TcTestFolded(const float (&acc)[MI][NJ][4], float (&half)[MI][2],
			 int64_t qw, int64_t c0, int32_t *count, int32_t *list)
{
	const int	g = (threadIdx.x & 31) >> 2;
	const int	t = threadIdx.x & 3;

#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int h = 0; h < 2; h++)
		{
			float		m = -INFINITY;

#pragma unroll
			for (int j = 0; j < NJ; j++)
				m = fmaxf(m, fmaxf(acc[i][j][h * 2], acc[i][j][h * 2 + 1]));
			if (m >= half[i][h])
			{
				const int64_t q = qw + i * 16 + g + h * 8;

#pragma unroll
				for (int j = 0; j < NJ; j++)
#pragma unroll
					for (int e = 0; e < 2; e++)
						if (acc[i][j][h * 2 + e] >= half[i][h])
							TcAppend(count, list, q, c0 + j * 8 + 2 * t + e, half[i][h], INFINITY);
			}
		}
}

/*
 * The mirrored test of a self join's symmetric filter: the pair of row r
 * and candidate c read the other way round, c as the query and r as its
 * candidate, appended to c's list.  The products start from -(rw + cw /
 * 2), rw = w_r / 2 (TcMirrorKernel), so that acc = q.c - (w_r + w_c) / 2
 * serves both tests: r's against -thr_r / 2 - rw (TcTestFolded), c's
 * against cv = -thr_c / 2 - w_c / 2: one maximum per pair, a column's
 * maximum first.  (Subtracting rw in the test instead cost as much; a
 * weaker first test, max acc against cv + min rw over products from -cw
 * / 2 alone, passed so often on 1e6 x 32 Gaussian rows that the filter
 * took 46% longer.)
 */
template <int NJ>
static __device__ __forceinline__ void
TcTestMirrored(const float (&acc)[4][NJ][4], const float *cv,
			   int64_t qw, int64_t c0, int32_t *count, int32_t *list)
{
	const int	g = (threadIdx.x & 31) >> 2;
	const int	t = threadIdx.x & 3;

#pragma unroll
	for (int j = 0; j < NJ; j++)
#pragma unroll
		for (int e = 0; e < 2; e++)
		{
			const float v = cv[j * 8 + 2 * t + e];
			float		m = -INFINITY;

#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int h = 0; h < 2; h++)
					m = fmaxf(m, acc[i][j][h * 2 + e]);
			if (m >= v)
			{
				const int64_t c = c0 + j * 8 + 2 * t + e;

#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int h = 0; h < 2; h++)
						if (acc[i][j][h * 2 + e] >= v)
						{
							const int	pos = atomicAdd(count + c, 1);

							if (pos < TC_CAP)
								list[c * TC_CAP + pos] = (int32_t) (qw + i * 16 + g + h * 8);
						}
			}
		}
}

/*
 * The filter for rows of DP = 16 or 32 padded dimensions, where a tile's
 * products are too few to hide the staging of the query tile: each warp
 * keeps the A fragments of its 64 queries in registers for the whole
 * sweep, so a block covers TC_REG_BM = 8 x 64 queries and its warps share
 * every candidate tile.  The ring holds whole candidate tiles (all DP
 * dimensions) with their weights; a warp takes a tile CPS candidates at a
 * time (32 at DP = 16; 16 at DP = 32, whose A fragments take twice the
 * registers).  FOLD: the products start from -cw / 2 (TcTestFolded).
 * Grid and padding as TcFilterKernel, with TC_REG_BM-query tiles.
 *
 * SYM (a self join, FOLD): each pair of rows is tested once for both
 * queries.  A block takes only the candidate tiles from its own rows on:
 * those of its own rows get the usual test; every later one also the
 * mirrored test (TcTestMirrored), its slot holding the candidates'
 * mirrored thresholds after their weights.  The products then start
 * from -(rw + cw / 2) and the rows' thresholds are -thr / 2 - rw.  Half
 * the products.
 */
template <OdpMetric M, int DP, bool FOLD, bool SYM>
static __global__ void __launch_bounds__(TC_THREADS, 2)
TcFilterRegKernel(const __grid_constant__ TcArgs a)
{
	extern __shared__ __align__(16) __half tsm[];
	constexpr int SLD = DP + 8;		/* conflict-free ldmatrix */
	constexpr int ROW_BYTES = TC_BN * SLD * (int) sizeof(__half);
	constexpr int SLOT_BYTES = ROW_BYTES + (SYM ? 2 : 1) * TC_BN * (int) sizeof(float);
	constexpr int COPIES = TC_BN * DP / 8 / TC_THREADS;
	constexpr int KS = DP / 16;
	constexpr int CPS = DP == 16 ? 32 : 16;	/* candidates per step */
	constexpr int NJ = CPS / 8;
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int	g = lane >> 2;
	const int	t = lane & 3;
	const int64_t qw = (int64_t) blockIdx.x * TC_REG_BM + warp * 64;
	/* SYM: the first candidate tile of the block's own rows */
	const int	diag = (int) blockIdx.x * (TC_REG_BM / TC_BN);
	const int	group_tile0 = (int) ((a.group0 + blockIdx.y) * a.tiles);
	const int	tile0 = SYM ? max(group_tile0, diag) : group_tile0;
	const int	tiles = min(a.tiles - (tile0 - group_tile0), a.ctiles - tile0);
	const int64_t cbase = (int64_t) tile0 * TC_BN;
	char	   *ring = (char *) tsm;
	const uint32_t ring_addr = (uint32_t) __cvta_generic_to_shared(ring);
	uint32_t	af[4][KS][4];
	uint32_t	b_off[NJ / 2];
	float		thr[4][2];
	float		alpha[4][2];
	float		rw[4][2];

	if (SYM && tiles <= 0)
		return;					/* the whole block: all its tiles precede its rows */
	TcLoadLimits<M>(a, qw, thr, alpha);
	if (SYM)
#pragma unroll
		for (int i = 0; i < 4; i++)
#pragma unroll
			for (int h = 0; h < 2; h++)
				rw[i][h] = a.rw[qw + i * 16 + g + h * 8];
	if (FOLD)
#pragma unroll
		for (int i = 0; i < 4; i++)
#pragma unroll
			for (int h = 0; h < 2; h++)
			{
				thr[i][h] *= -0.5f;
				if (SYM)
					thr[i][h] = __fsub_rn(thr[i][h], rw[i][h]);
			}
#pragma unroll
	for (int i = 0; i < 4; i++)
	{
#pragma unroll
		for (int kk = 0; kk < KS; kk++)
		{
			const __half *r0 = a.q + (qw + i * 16 + g) * DP + kk * 16 + 2 * t;
			const __half *r1 = r0 + 8 * DP;

			af[i][kk][0] = *(const uint32_t *) r0;
			af[i][kk][1] = *(const uint32_t *) r1;
			af[i][kk][2] = *(const uint32_t *) (r0 + 8);
			af[i][kk][3] = *(const uint32_t *) (r1 + 8);
		}
	}
	/* this lane's ldmatrix row of 16 candidates jp, relative to a slot */
#pragma unroll
	for (int jp = 0; jp < NJ / 2; jp++)
		b_off[jp] = (uint32_t) (((jp * 16 + (lane & 7) + (lane >> 4) * 8) * SLD +
								 ((lane >> 3) & 1) * 8) * sizeof(__half));

#define TC_REG_ISSUE(s_) \
	do { \
		char	   *slot_ = ring + ((s_) % TC_STAGES) * SLOT_BYTES; \
		const int64_t first_ = cbase + (int64_t) (s_) * TC_BN; \
\
		for (int u_ = 0; u_ < COPIES; u_++) \
		{ \
			const int	x_ = threadIdx.x + u_ * TC_THREADS; \
\
			__pipeline_memcpy_async((__half *) slot_ + (x_ / (DP / 8)) * SLD + (x_ % (DP / 8)) * 8, \
									a.c + (first_ + x_ / (DP / 8)) * DP + (x_ % (DP / 8)) * 8, 16); \
		} \
		if (threadIdx.x < TC_BN / 4) \
			__pipeline_memcpy_async(slot_ + ROW_BYTES + threadIdx.x * 16, \
									a.cw + first_ + threadIdx.x * 4, 16); \
		else if (SYM && threadIdx.x < TC_BN / 2) \
			__pipeline_memcpy_async(slot_ + ROW_BYTES + threadIdx.x * 16, \
									a.cv + first_ + (threadIdx.x - TC_BN / 4) * 4, 16); \
	} while (0)

#pragma unroll
	for (int s = 0; s < TC_STAGES - 1; s++)
	{
		if (s < tiles)
			TC_REG_ISSUE(s);
		__pipeline_commit();
	}
	for (int s = 0; s < tiles; s++)
	{
		const int	slot = s % TC_STAGES;
		const uint32_t rows = ring_addr + slot * SLOT_BYTES;
		const float *w = (const float *) (ring + slot * SLOT_BYTES + ROW_BYTES);

		__pipeline_wait_prior(TC_STAGES - 2);
		/* tile s has landed; everyone is done with tile s - 1's slot */
		__syncthreads();
		if (s + TC_STAGES - 1 < tiles)
			TC_REG_ISSUE(s + TC_STAGES - 1);
		__pipeline_commit();
#pragma unroll 1
		for (int sc = 0; sc < TC_BN / CPS; sc++)
		{
			float		acc[4][NJ][4];
			float		cw[NJ][2];

#pragma unroll
			for (int j = 0; j < NJ; j++)
			{
				const float2 v = *(const float2 *) (w + sc * CPS + j * 8 + 2 * t);

				cw[j][0] = v.x;
				cw[j][1] = v.y;
			}
			if (SYM)
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < NJ; j++)
#pragma unroll
						for (int h = 0; h < 2; h++)
#pragma unroll
							for (int e = 0; e < 2; e++)
								acc[i][j][h * 2 + e] = __fsub_rn(-0.5f * cw[j][e], rw[i][h]);
			else if (FOLD)
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < NJ; j++)
					{
						acc[i][j][0] = acc[i][j][2] = -0.5f * cw[j][0];
						acc[i][j][1] = acc[i][j][3] = -0.5f * cw[j][1];
					}
#pragma unroll
			for (int kk = 0; kk < KS; kk++)
			{
				uint32_t	bf[NJ / 2][4];

#pragma unroll
				for (int jp = 0; jp < NJ / 2; jp++)
					TcLdm4(bf[jp], rows + b_off[jp] + (uint32_t) ((sc * CPS * SLD + kk * 16) * sizeof(__half)));
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < NJ; j++)
					{
						if (kk == 0 && !FOLD)
							TcMma<true>(acc[i][j], af[i][kk], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
						else
							TcMma<false>(acc[i][j], af[i][kk], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
					}
			}
			if (FOLD)
				TcTestFolded<4, NJ>(acc, thr, qw, cbase + (int64_t) s * TC_BN + sc * CPS,
								 a.count, a.list);
			else
				TcTestFragments<M, 4, NJ>(acc, cw, thr, alpha, qw, cbase + (int64_t) s * TC_BN + sc * CPS,
									   a.count, a.list);
			if (SYM && tile0 + s >= diag + TC_REG_BM / TC_BN)
				TcTestMirrored<NJ>(acc, w + TC_BN + sc * CPS, qw,
								   cbase + (int64_t) s * TC_BN + sc * CPS, a.count, a.list);
		}
	}
#undef TC_REG_ISSUE
}

/*
 * The register-resident filter for dp: the euclidean metrics and cosine
 * fold their weights into the products (at 16 and 32 padded dimensions);
 * the inner product, whose weight has a per-query factor, runs it at 16
 * only and keeps TcFilterKernel at 32 (the register-resident filter was
 * measured there with the fold alone).  NULL: TcFilterKernel.
 */
template <OdpMetric M>
TcFilterFn
TcRegFilter(int dp, bool sym)
{
	constexpr bool FOLD = M != ODP_METRIC_INNER_PRODUCT;
	constexpr int DP_MAX = FOLD ? 32 : 16;

	if (sym && FOLD)
		return dp == 16 ? TcFilterRegKernel<M, 16, FOLD, FOLD> :
			(dp == 32 ? TcFilterRegKernel<M, 32, FOLD, FOLD> : NULL);
	if (dp == 16)
		return TcFilterRegKernel<M, 16, FOLD, false>;
	return dp == DP_MAX ? TcFilterRegKernel<M, DP_MAX, FOLD, false> : NULL;
}

/* The instances TcSearch runs: one per metric (TC_FOR_EACH_METRIC). */
#define TC_REG_METRIC(M) template TcFilterFn TcRegFilter<M>(int, bool);
TC_FOR_EACH_METRIC(TC_REG_METRIC)
#undef TC_REG_METRIC
