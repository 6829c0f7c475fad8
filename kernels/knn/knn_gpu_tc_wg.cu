/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc_wg.cu
 *	  The tensor-core filter's warpgroup kernel (TcFilterWgKernel) on
 *	  Hopper's warpgroup products (sm_90a): tiles of 256 queries x 128
 *	  candidates fed by bulk copies, passers buffered per warp (step 2 of
 *	  knn_gpu_tc.cu), and the probe that tells whether a device runs it.
 *
 * Map of this file: the deferred appends (TcWarpBuf, TcWgFlush), a warp's
 * test (TcWgTest), the stages' copies (TcWgIssue), TcFilterWgKernel, its
 * shared memory (TcWgSharedBytes), the probe (TcWgmmaProbeKernel,
 * TcWgmmaUsable), and TcWgFilter, which hands TcSearch (knn_gpu_tc.cu)
 * the kernel's instance.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc_wg.cu
 *
 *-------------------------------------------------------------------------
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu/gpu_wgmma.cuh"
#include "knn/knn_gpu_tc_internal.cuh"

#define TC_WG_BUF		192		/* deferred appends per warp (TcWarpBuf) */

/*
 * The warpgroup filter's deferred appends (TcFilterWgKernel): a warp's
 * passers wait in shared memory, as entry (candidate - c_first) << 4 |
 * (query - qw), until TcWgFlush moves them to their lists, 32 at a time.
 * A global atomic per passer, whose result the warp (and with it its
 * warpgroup's next products) would wait for, becomes a store of the
 * warp's own into shared memory.
 */
struct TcWarpBuf
{
	uint32_t   *entry;			/* TC_WG_BUF entries */
	int		   *n;				/* entries held */
	unsigned   *over;			/* rows that lost entries: their lists
								 * are marked full (TcWgFlush) */
	int64_t		qw;				/* the warp's first query (16 rows) */
	int64_t		c_first;		/* the block's first candidate */
};

/*
 * Moves a warp's buffered passers to their lists (all lanes); a row whose
 * list fills up gets the limit never, as with TcAppend (lane's rows: g and
 * g + 8 of the warp's 16), and so does a row marked in wb.over, whose list
 * is marked full.  Every lane runs every atomic (adding 0 where it has no
 * entry), on branches the compiler knows are uniform: a global atomic on a
 * path it takes for divergent makes it serialise the warpgroup products
 * of the whole kernel (ptxas C7520).
 */
static __device__ __forceinline__ void
TcWgFlush(const TcWarpBuf &wb, int32_t *count, int32_t *list, float (&limit)[1][2], float never)
{
	const int	lane = threadIdx.x & 31;
	unsigned	full = 0;
	int			n;

	__syncwarp();
	n = __shfl_sync(0xffffffffu, *wb.n, 0);
	for (int i0 = 0; i0 < n; i0 += 32)
	{
		const bool	mine = i0 + lane < n;
		const uint32_t e = mine ? wb.entry[i0 + lane] : 0;
		const int64_t q = wb.qw + (e & 15);
		const int	pos = atomicAdd(count + q, mine ? 1 : 0);

		if (mine && pos < TC_CAP)
			list[q * TC_CAP + pos] = (int32_t) (wb.c_first + (e >> 4));
		full |= (mine && pos >= TC_CAP ? 1u : 0u) << (e & 15);
	}
	full = __reduce_or_sync(0xffffffffu, full | *wb.over);
	if (full != 0)
		atomicMax(count + wb.qw + (lane & 15), ((full >> (lane & 15)) & 1) ? TC_CAP + 1 : 0);
#pragma unroll
	for (int h = 0; h < 2; h++)
		if ((full >> ((lane >> 2) + h * 8)) & 1)
			limit[0][h] = never;
	__syncwarp();
	if (lane == 0)
	{
		*wb.n = 0;
		*wb.over = 0;
	}
	__syncwarp();
}

/*
 * TcFilterWgKernel's test of a warp's 16 x 128 block of pairs (queries
 * from wb.qw, candidates from c0; acc in OdpWgMma64x128's layout): the
 * test of TcTestFolded (FOLD: thr holds -thr / 2) or TcTestFragments.  A
 * lane with a passer in a row takes its row's bit mask; then the warp
 * finds each lane's place in its buffer (flushed first if it would
 * overflow) and writes every lane's passers there, with no wait on
 * memory.  A tile with more passers than a buffer marks their rows' lists
 * full instead (they are scanned whole), as a list past its capacity.
 */
template <OdpMetric M, bool FOLD>
static __device__ __forceinline__ void
TcWgTest(const float (&acc)[1][16][4], const float (&cw)[16][2], float (&thr)[1][2],
		 const float (&alpha)[1][2], int64_t c0, const TcWarpBuf &wb,
		 int32_t *count, int32_t *list)
{
	const int	lane = threadIdx.x & 31;
	const int	g = lane >> 2;
	const int	t = lane & 3;
	uint32_t	pass[2] = {0, 0};
	unsigned	lost = 0;
	int			n,
				before,
				total,
				base;

#pragma unroll
	for (int h = 0; h < 2; h++)
	{
		float		m = FOLD ? -INFINITY : INFINITY;

#pragma unroll
		for (int j = 0; j < 16; j++)
#pragma unroll
			for (int e = 0; e < 2; e++)
				m = FOLD ? fmaxf(m, acc[0][j][h * 2 + e])
					: fminf(m, TcTestValue<M>(acc[0][j][h * 2 + e], cw[j][e], alpha[0][h]));
		if (FOLD ? m >= thr[0][h] : m <= thr[0][h])
#pragma unroll
			for (int j = 0; j < 16; j++)
#pragma unroll
				for (int e = 0; e < 2; e++)
					if (FOLD ? acc[0][j][h * 2 + e] >= thr[0][h]
						: TcTestValue<M>(acc[0][j][h * 2 + e], cw[j][e], alpha[0][h]) <= thr[0][h])
						pass[h] |= 1u << (j * 2 + e);
	}
	n = __popc(pass[0]) + __popc(pass[1]);
	before = n;
	for (int o = 1; o < 32; o <<= 1)
	{
		const int	v = __shfl_up_sync(0xffffffffu, before, o);

		if (lane >= o)
			before += v;
	}
	/* before: this lane's passers and those of the lanes below it */
	total = __shfl_sync(0xffffffffu, before, 31);
	if (total == 0)
		return;
	__syncwarp();
	/* the vote and the shuffles make branches the compiler knows are uniform */
	if (__any_sync(0xffffffffu, *wb.n + total > TC_WG_BUF))
		TcWgFlush(wb, count, list, thr, FOLD ? INFINITY : -INFINITY);
	base = *wb.n + before - n;
#pragma unroll
	for (int h = 0; h < 2; h++)
		while (pass[h] != 0)
		{
			const int	b = __ffs(pass[h]) - 1;
			const int64_t c = c0 + (b >> 1) * 8 + 2 * t + (b & 1);

			pass[h] &= pass[h] - 1;
			if (base < TC_WG_BUF)
				wb.entry[base] = (uint32_t) ((c - wb.c_first) << 4) | (uint32_t) (g + h * 8);
			else
				lost |= 1u << (g + h * 8);	/* more than a buffer in one tile */
			base++;
		}
	lost = __reduce_or_sync(0xffffffffu, lost);
	__syncwarp();
	if (lane == 0)
	{
		*wb.n = min(*wb.n + total, TC_WG_BUF);
		*wb.over |= lost;
	}
	__syncwarp();
}

/*
 * Issues stage p of a TcFilterWgKernel block (candidate tile tile0 +
 * p / kc, dimensions (p % kc) BK ..) into its slot p % S: one bulk copy
 * of the stage (laid out by TcHalfIndex, 128 x BK) and, with the tile's
 * first stage (FOLD) or last, one of the tile's weights.
 */
template <int BK, bool FOLD>
static __device__ __forceinline__ void
TcWgIssue(const TcArgs &a, int tile0, int kc, int p, int S, uint32_t ring,
		  uint32_t weights, uint32_t full)
{
	const uint32_t bytes = TC_BN * BK * sizeof(__half);
	const int	tile = tile0 + p / kc;
	const int	k = p % kc;
	const int	slot = p % S;
	const bool	with_w = FOLD ? k == 0 : k == kc - 1;

	OdpMbarArrive(full + 8 * slot, bytes + (with_w ? TC_BN * sizeof(float) : 0));
	OdpBulkCopy(ring + slot * bytes, a.c + ((int64_t) tile * kc + k) * TC_BN * BK, bytes,
				full + 8 * slot);
	if (with_w)
		OdpBulkCopy(weights + slot * TC_BN * sizeof(float), a.cw + (int64_t) tile * TC_BN,
					TC_BN * sizeof(float), full + 8 * slot);
}

/*
 * The filter on Hopper's warpgroup products (sm_90a: run only where
 * TcWgmmaUsable).  Grid and arguments as TcFilterKernel, with tiles of
 * TC_WG_BM = 256 queries: four warpgroups of 64 queries share each
 * candidate tile, and warp w tests queries w * 16 .. + 16 against all 128
 * candidates (OdpWgMma64x128's layout).
 *
 * Why: TcFilterKernel's 128-query tiles were bound by the copies of
 * candidates into shared memory (H100, 2026-11-27, 1e4 x 1e6 x 128: 8.7
 * ms; without the copies 4.8).  Here twice the queries share a copy, and
 * the copies are bulk copies of whole stages by the copy unit: the host
 * writes both half copies in the operands' order (TcHalfIndex), the
 * query tile in one block, a candidate tile in stages of BK dimensions.
 * Measured in one run: 6.0 ms against 8.7 (the batch above).  A tile's
 * test stalls its warpgroup's products: testing one half of the tile
 * while the other's products run makes ptxas serialise every product
 * (C7514: accumulators read while any product is in flight), so that
 * overlap would take warpgroups that take turns (a ping-pong of
 * producer-fed consumers), not one warpgroup's two halves.
 *
 * Pipeline: a ring of S slots, each with a barrier "full" (the copy has
 * landed) and "empty" (all 16 warps are done with it).  Thread 0 issues
 * stage s + S - 2 before the block's products of stage s, once every warp
 * has released stage s - 2; a warpgroup releases a stage when its
 * products are known complete (one group left in flight), a tile's last
 * stage after the tile's test.  No block-wide barrier after the start.
 *
 * FOLD (all metrics but the inner product): the products start from
 * -cw / 2, read from the tile's first stage, and the test is one maximum
 * per pair (as TcTestFolded's); the inner product reads the weights from
 * the last stage for TcTestFragments' test.  Passers go to the warp's
 * buffer (TcWgTest), flushed before it would overflow and at the end.
 */
template <OdpMetric M, int BK, int S>
static __global__ void __launch_bounds__(TC_WG_THREADS, 1)
TcFilterWgKernel(const __grid_constant__ TcArgs a)
{
	constexpr bool FOLD = M != ODP_METRIC_INNER_PRODUCT;
	constexpr uint32_t SLOT = TC_BN * BK * sizeof(__half);
	extern __shared__ __align__(128) unsigned char wsm[];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int	g = lane >> 2;
	const int	t = lane & 3;
	const int64_t q0 = (int64_t) blockIdx.x * TC_WG_BM;
	const int64_t qw = q0 + warp * 16;
	const int	tile0 = (int) ((a.group0 + blockIdx.y) * a.tiles);
	const int	tiles = min(a.tiles, a.ctiles - tile0);
	const int	kc = a.dp / BK;
	const int	steps = tiles * kc;
	const uint32_t qbytes = (uint32_t) (TC_WG_BM * a.dp * sizeof(__half));
	const uint32_t base = (uint32_t) __cvta_generic_to_shared(wsm);
	const uint32_t ring = base + qbytes;
	const uint32_t weights = ring + S * SLOT;
	const uint32_t full = weights + S * TC_BN * sizeof(float);
	const uint32_t empty = full + 8 * S;
	const uint32_t qbar = empty + 8 * S;
	/* this warp's deferred appends: after the barriers (8-byte aligned) */
	uint32_t   *bufs = (uint32_t *) (wsm + (qbar + 8 - base));
	const TcWarpBuf wb = {bufs + warp * TC_WG_BUF,
						  (int *) (bufs + TC_WG_THREADS / 32 * TC_WG_BUF) + warp,
						  (unsigned *) (bufs + TC_WG_THREADS / 32 * (TC_WG_BUF + 1)) + warp,
						  qw, (int64_t) tile0 * TC_BN};
	/* this warpgroup's 64 query rows: row groups of dp / 8 core matrices */
	const uint32_t qdesc = base + (warp >> 2) * 8 * (a.dp * 16);
	const float *wts = (const float *) (wsm + qbytes + S * SLOT);	/* at weights */
	float		acc[1][16][4];
	float		thr[1][2];
	float		alpha[1][2];

#pragma unroll
	for (int h = 0; h < 2; h++)
	{
		thr[0][h] = a.thr[qw + g + h * 8];
		alpha[0][h] = M == ODP_METRIC_INNER_PRODUCT ? a.alpha[qw + g + h * 8] : 0.0f;
		if (FOLD)
			thr[0][h] *= -0.5f;
	}
	if (lane == 0)
	{
		*wb.n = 0;
		*wb.over = 0;
	}
	if (threadIdx.x == 0)
	{
		OdpMbarInit(full, S, 1);
		OdpMbarInit(empty, S, TC_WG_THREADS / 32);
		OdpMbarInit(qbar, 1, 1);
		OdpMbarInitFence();
	}
	__syncthreads();
	if (threadIdx.x == 0)
	{
		OdpMbarArrive(qbar, qbytes);
		OdpBulkCopy(base, a.q + q0 * a.dp, qbytes, qbar);
		for (int p = 0; p < S - 2 && p < steps; p++)
			TcWgIssue<BK, FOLD>(a, tile0, kc, p, S, ring, weights, full);
	}
	__syncwarp();
	OdpMbarWait(qbar, 0);
	for (int tile = tile0, s = 0; tile < tile0 + tiles; tile++)
	{
		const int	s_last = s + kc - 1;	/* the tile's last stage */

		/*
		 * FOLD: the weights come with the tile's first stage.  Read here,
		 * where no product is in flight (inside the stage loop the
		 * compiler would serialise the products on the write).
		 */
		if (FOLD)
		{
			const float *w = wts + (s % S) * TC_BN;

			OdpMbarWait(full + 8 * (s % S), (s / S) & 1);
#pragma unroll
			for (int j = 0; j < 16; j++)
			{
				const float2 v = *(const float2 *) (w + j * 8 + 2 * t);

				acc[0][j][0] = acc[0][j][2] = -0.5f * v.x;
				acc[0][j][1] = acc[0][j][3] = -0.5f * v.y;
			}
		}
		for (int kchunk = 0; kchunk < kc; kchunk++, s++)
		{
			const int	slot = s % S;

			if (threadIdx.x == 0 && s + S - 2 < steps)
			{
				const int	p = s + S - 2;

				/* its slot's previous stage, p - S, is released by every warp */
				if (p >= S)
					OdpMbarWait(empty + 8 * (p % S), (p / S - 1) & 1);
				TcWgIssue<BK, FOLD>(a, tile0, kc, p, S, ring, weights, full);
			}
			__syncwarp();
			OdpMbarWait(full + 8 * slot, (s / S) & 1);
			OdpWgFence();
#pragma unroll
			for (int kk = 0; kk < BK; kk += 16)
				OdpWgMma64x128(acc[0], OdpWgDesc(qdesc + (kchunk * BK + kk) / 8 * 128, a.dp * 16),
							   OdpWgDesc(ring + slot * SLOT + kk / 8 * 128, BK * 16),
							   FOLD || kchunk > 0 || kk > 0);

			/*
			 * Every stage's products close a group of their own, on every
			 * path: a commit on one branch only made ptxas fence the
			 * accumulators itself (C7519, warpgroup.arrive injected).
			 */
			OdpWgCommit();
			if (kchunk < kc - 1)
			{
				/* stage s - 1's products are complete */
				OdpWgWait<1>();
				if (kchunk > 0 && lane == 0)
					OdpMbarArrive(empty + 8 * ((s - 1) % S), 0);
			}
		}
		OdpWgWait<0>();
		if (kc > 1 && lane == 0)
			OdpMbarArrive(empty + 8 * ((s_last - 1) % S), 0);
		{
			const float *w = wts + (s_last % S) * TC_BN;
			float		cw[16][2];

			if (!FOLD)
#pragma unroll
				for (int j = 0; j < 16; j++)
				{
					const float2 v = *(const float2 *) (w + j * 8 + 2 * t);

					cw[j][0] = v.x;
					cw[j][1] = v.y;
				}
			TcWgTest<M, FOLD>(acc, cw, thr, alpha, (int64_t) tile * TC_BN, wb, a.count, a.list);
		}
		__syncwarp();
		if (lane == 0)
			OdpMbarArrive(empty + 8 * (s_last % S), 0);
	}
	TcWgFlush(wb, a.count, a.list, thr, FOLD ? INFINITY : -INFINITY);
}

/* Shared memory of TcFilterWgKernel<M, BK, S> for dp padded dimensions. */
size_t
TcWgSharedBytes(int dp, int bk, int slots)
{
	return (size_t) TC_WG_BM * dp * sizeof(__half) +
		(size_t) slots * (TC_BN * bk * sizeof(__half) + TC_BN * sizeof(float)) +
		(size_t) 8 * (2 * slots + 1) +
		(size_t) TC_WG_THREADS / 32 * (TC_WG_BUF + 2) * sizeof(uint32_t);
}

/* Whether the code this device runs has the sm_90a kernels: see TcWgmmaUsable. */
static __device__ int tc_wgmma_probe;

static __global__ void
TcWgmmaProbeKernel(void)
{
	tc_wgmma_probe = ODP_GPU_HAVE_WGMMA;
}

/*
 * Whether dev runs TcFilterWgKernel: a device of compute capability 9.0
 * (H100, H200) whose code from this build is sm_90a's; a build without it
 * runs its compute_90 code there, which lacks the warpgroup instructions.
 * Probed once per device and process.
 */
#define TC_WGMMA_DEVICES 64
static int	tc_wgmma_known[TC_WGMMA_DEVICES];	/* 0 unknown, 1 no, 2 yes */

bool
TcWgmmaUsable(const OdpGpuDevice *dev, cudaStream_t stream)
{
	const bool	cached = dev->id >= 0 && dev->id < TC_WGMMA_DEVICES;
	int			known = 0,
				have = 0;

	if (dev->cc_major != 9 || dev->cc_minor != 0)
		return false;
	if (cached && (known = __atomic_load_n(&tc_wgmma_known[dev->id], __ATOMIC_RELAXED)) != 0)
		return known == 2;
	TcWgmmaProbeKernel<<<1, 1, 0, stream>>>();
	if (cudaGetLastError() != cudaSuccess ||
		cudaMemcpyFromSymbolAsync(&have, tc_wgmma_probe, sizeof(int), 0,
								  cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
		cudaStreamSynchronize(stream) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;			/* the tile filter runs */
	}
	if (cached)
		__atomic_store_n(&tc_wgmma_known[dev->id], have == 1 ? 2 : 1, __ATOMIC_RELAXED);
	return have == 1;
}

/* See knn_gpu_tc_internal.cuh. */
template <OdpMetric M>
TcFilterFn
TcWgFilter(int bk, int slots)
{
	return bk == 32 ? TcFilterWgKernel<M, 32, 8>
		: (slots == 8 ? TcFilterWgKernel<M, 64, 8> : TcFilterWgKernel<M, 64, 5>);
}

/* The instances TcSearch runs: one per metric (TC_FOR_EACH_METRIC). */
#define TC_WG_METRIC(M) template TcFilterFn TcWgFilter<M>(int, int);
TC_FOR_EACH_METRIC(TC_WG_METRIC)
#undef TC_WG_METRIC
