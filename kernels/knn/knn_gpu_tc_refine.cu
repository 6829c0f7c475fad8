/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc_refine.cu
 *	  The tensor-core filter's refinement (step 3 of knn_gpu_tc.cu): the
 *	  canonical distances of every query's listed candidates and their k
 *	  smallest (TcRefineKernel), and the scan of every candidate for the
 *	  queries whose list overflowed (TcScanKernel).
 *
 * Map of this file: the query's own row (TcIsSelf), the distance keys
 * (TcCandKey, TcListKeys, TcCountBelow), TcRefineKernel, TcScanKernel,
 * and their launchers (knn_gpu_tc_internal.cuh).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc_refine.cu
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "include/odp_distance.h"
#include "knn/knn_gpu_tc_internal.cuh"
#include "knn/knn_merge.h"

#define TC_REFINE_WARPS	3		/* with their keys and terms 39 KB of shared
								 * memory (five blocks an SM; registers, 146
								 * a thread, allow four) */
#define TC_SCAN_WARPS	16		/* warps sharing one overflowed query's scan */

/* Whether local candidate c is query ql of the chunk itself, left out. */
static __device__ __forceinline__ bool
TcIsSelf(const TcRefineArgs &a, int64_t ql, int64_t c)
{
	return a.exclude_self && a.c_base + c == a.q_base + ql;
}

/*
 * Key of the canonical distance from query ql of the chunk (row qrow,
 * norm qn) to local candidate c; TC_KEY_NONE for the query itself.
 */
template <OdpMetric M>
static __device__ __forceinline__ uint32_t
TcCandKey(const TcRefineArgs &a, int64_t ql, const float *qrow, float qn, int64_t c)
{
	if (TcIsSelf(a, ql, c))
		return TC_KEY_NONE;
	return TcKeyOf(odp_distance(M, qrow, a.c + c * a.dims, a.dims, qn,
								M == ODP_METRIC_COSINE ? a.cn[c] : 1.0f));
}

/*
 * Keys of the canonical distances from query ql (row qrow, norm qn) to
 * the n listed candidates, into rk; returns how many take part (every
 * lane gets it).  32 entries at a time, a 32-dimension slice at a time:
 * the warp reads the slice of each entry's row together (one line per
 * row, where a lane per entry touches 32 lines at each load, which made
 * the refinement wait on the L1 for three quarters of its time at 32
 * dimensions), each lane leaves its terms (odp_dist_term) in terms, and
 * each lane then adds its own entry's terms in index order: the
 * canonical distance, bit for bit.  The dimensions past the last whole
 * slice (all of them in rows of fewer than 32) each lane reads from its
 * own entry's row: spread over the lanes too they cost more, one load
 * in flight per lane where a lane's own row has them all (H100,
 * 2026-11-27, same samples: 1e6 x 10 all-kNN 370-374 ms against
 * 343-349; 1e6 x 16, k = 30: 510 against 461-465).
 */
#define TC_REFINE_BATCH	32		/* rows whose slices a lane loads at once */

template <OdpMetric M>
static __device__ __forceinline__ int
TcListKeys(const TcRefineArgs &a, int64_t ql, const float *qrow, float qn,
		   const int32_t *list, int n, uint32_t *rk, float (*terms)[33])
{
	const int	lane = threadIdx.x & 31;
	const int	dims = a.dims;
	const int	whole = dims / 32 * 32;	/* dimensions in whole slices */
	int			valid = 0;

	for (int e0 = 0; e0 < n; e0 += 32)
	{
		const int	m = n - e0 < 32 ? n - e0 : 32;
		const int32_t mine = lane < m ? list[e0 + lane] : 0;
		float		acc = 0.0f;

		for (int b = 0; b < whole; b += 32)
		{
			const float qv = qrow[b + lane];

			for (int i0 = 0; i0 < m; i0 += TC_REFINE_BATCH)
			{
				float		v[TC_REFINE_BATCH];

#pragma unroll
				for (int u = 0; u < TC_REFINE_BATCH; u++)
				{
					const int32_t c = __shfl_sync(0xffffffffu, mine, (i0 + u) & 31);

					v[u] = i0 + u < m ? __ldg(a.c + (int64_t) c * dims + b + lane) : 0.0f;
				}
#pragma unroll
				for (int u = 0; u < TC_REFINE_BATCH; u++)
					if (i0 + u < m)
						terms[i0 + u][lane] = odp_dist_term(M, qv, v[u]);
			}
			__syncwarp();
			if (lane < m)
				for (int j = 0; j < 32; j++)
					acc = odp_dist_add(M, acc, terms[lane][j]);
			__syncwarp();
		}
		if (lane < m)
		{
			const float *crow = a.c + (int64_t) mine * dims;
			uint32_t	key = TC_KEY_NONE;

			for (int d = whole; d < dims; d++)
				acc = odp_dist_step(M, acc, qrow[d], crow[d]);
			if (!TcIsSelf(a, ql, mine))
				key = TcKeyOf(odp_dist_finish(M, acc, qn, M == ODP_METRIC_COSINE ? a.cn[mine] : 1.0f));
			rk[e0 + lane] = key;
			valid += key != TC_KEY_NONE;
		}
	}
	return (int) __reduce_add_sync(0xffffffffu, (unsigned) valid);
}

/* How many of the warp's n keys in rk lie below t (every lane gets it). */
static __device__ __forceinline__ int
TcCountBelow(const uint32_t *rk, int n, uint32_t t)
{
	int			c = 0;

	for (int e = threadIdx.x & 31; e < n; e += 32)
		c += rk[e] < t;
	return (int) __reduce_add_sync(0xffffffffu, (unsigned) c);
}

/*
 * One warp per query: the canonical distance of every listed candidate
 * (as a key, in shared memory), then the k smallest by (distance, index)
 * without sorting the list: the k-th smallest key x by a bitwise search
 * (largest x with fewer than k keys below it), and, when more keys equal
 * x than are needed, the largest local index y to take among them, the
 * same way.  The k chosen entries are then ranked among themselves.
 * Local indexes order like global ones (c_base + local).
 */
template <OdpMetric M>
static __global__ void __launch_bounds__(TC_REFINE_WARPS * 32)
TcRefineKernel(const __grid_constant__ TcRefineArgs a)
{
	__shared__ uint32_t keys[TC_REFINE_WARPS][TC_CAP];
	__shared__ uint32_t sel_key[TC_REFINE_WARPS][TC_REFINE_SEL];
	__shared__ int32_t sel_idx[TC_REFINE_WARPS][TC_REFINE_SEL];
	__shared__ float terms[TC_REFINE_WARPS][32][33];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int64_t ql = (int64_t) blockIdx.x * TC_REFINE_WARPS + warp;
	const int64_t q = a.q_first + ql;
	uint32_t   *rk = keys[warp];
	const int32_t *list;
	const float *qrow;
	float		qn = 1.0f;
	int			n,
				valid,
				kk,
				below,
				equal,
				base = 0;
	uint32_t	x = 0;
	int32_t		y = INT32_MAX;

	if (ql >= a.nq)
		return;
	n = a.count[ql];
	if (n > TC_CAP)
	{
		if (lane == 0)
			a.over[atomicAdd(a.overflow, 1)] = (int32_t) ql;
		return;
	}
	list = a.list + ql * TC_CAP;
	qrow = a.q + q * a.dims;
	if (M == ODP_METRIC_COSINE)
		qn = a.qn[q];
	valid = TcListKeys<M>(a, ql, qrow, qn, list, n, rk, terms[warp]);
	__syncwarp();
	kk = valid < a.k ? valid : a.k;
	if (kk > 0)
	{
		/* x: the kk-th smallest key */
		for (int b = 31; b >= 0; b--)
		{
			const uint32_t t = x | (1u << b);

			if (TcCountBelow(rk, n, t) < kk)
				x = t;
		}
		below = TcCountBelow(rk, n, x);
		equal = TcCountBelow(rk, n, x + 1) - below;
		/* ties at x beyond what is needed: y, the largest local index taken */
		if (equal > kk - below)
		{
			y = 0;
			for (int b = 30; b >= 0; b--)
			{
				const int32_t t = y | (1 << b);
				int			cnt = 0;

				for (int e = lane; e < n; e += 32)
					cnt += rk[e] == x && list[e] < t;
				if ((int) __reduce_add_sync(0xffffffffu, (unsigned) cnt) < kk - below)
					y = t;
			}
		}
		/* gather the kk chosen entries, in list order */
		for (int e0 = 0; e0 < n; e0 += 32)
		{
			const int	e = e0 + lane;
			bool		take = false;
			int32_t		c = 0;
			unsigned	mask;

			if (e < n && rk[e] <= x)
			{
				c = list[e];
				take = rk[e] < x || c <= y;
			}
			mask = __ballot_sync(0xffffffffu, take);
			if (take)
			{
				const int	pos = base + __popc(mask & ((1u << lane) - 1u));

				sel_key[warp][pos] = rk[e];
				sel_idx[warp][pos] = c;
			}
			base += __popc(mask);
		}
		__syncwarp();
		/* each chosen entry's rank among the chosen */
		for (int s = lane; s < kk; s += 32)
		{
			const uint32_t key = sel_key[warp][s];
			const int32_t c = sel_idx[warp][s];
			int			r = 0;

			for (int j = 0; j < kk; j++)
			{
				const uint32_t ok = sel_key[warp][j];

				r += ok < key || (ok == key && sel_idx[warp][j] < c);
			}
			a.sd[q * a.k + r] = TcFloatOf(key);
			a.si[q * a.k + r] = a.c_base + c;
		}
	}
	if (lane == 0)
	{
		a.sn[q] = kk;
		if (kk < a.k || base != kk)
			atomicExch(a.bad, 1);
	}
}

/*
 * The queries whose list overflowed (more than TC_CAP candidates passed
 * the filter: many equal distances, as with many copies of a row), one
 * block per query over[blockIdx.x]: each warp scans a slice of the
 * candidates' canonical distances and keeps its k smallest (key, local
 * index) pairs sorted in shared memory (insertions are rare once its list
 * is full); then each kept pair's rank among all the warps' (keys are
 * unique) places the k smallest.
 */
template <OdpMetric M>
static __global__ void __launch_bounds__(TC_SCAN_WARPS * 32)
TcScanKernel(const __grid_constant__ TcRefineArgs a, const int32_t *over, int64_t nc)
{
	__shared__ uint64_t best[TC_SCAN_WARPS][TC_REFINE_SEL];
	__shared__ int kept[TC_SCAN_WARPS];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int64_t ql = over[blockIdx.x];
	const int64_t q = a.q_first + ql;
	const int64_t slice = (nc + 32 * TC_SCAN_WARPS - 1) / (32 * TC_SCAN_WARPS) * 32;
	const int64_t c_end = min(nc, (warp + 1) * slice);
	uint64_t   *b = best[warp];
	uint64_t	worst = UINT64_MAX;	/* the k-th key once k are kept */
	int			have = 0;
	int			total = 0;
	const float *qrow = a.q + q * a.dims;
	const float qn = M == ODP_METRIC_COSINE ? a.qn[q] : 1.0f;

	for (int64_t c0 = warp * slice; c0 < c_end; c0 += 32)
	{
		const int64_t c = c0 + lane;
		uint64_t	key = UINT64_MAX;
		unsigned	pass;

		if (c < c_end)
		{
			const uint32_t dk = TcCandKey<M>(a, ql, qrow, qn, c);

			if (dk != TC_KEY_NONE)
				key = ((uint64_t) dk << 32) | (uint64_t) c;
		}
		pass = __ballot_sync(0xffffffffu, key < worst);
		while (pass != 0)
		{
			const uint64_t nk = __shfl_sync(0xffffffffu, key, __ffs(pass) - 1);
			const int	last = have < a.k ? have : a.k - 1;
			uint64_t	moved[(TC_REFINE_SEL + 31) / 32];
			int			pos = 0;

			pass &= pass - 1;
			if (nk >= worst)
				continue;
			for (int e = lane; e < have; e += 32)
				pos += b[e] < nk;
			pos = (int) __reduce_add_sync(0xffffffffu, (unsigned) pos);
			/* entries pos .. last - 1 move up one place; the k-th drops out */
#pragma unroll
			for (int r = 0; r < (TC_REFINE_SEL + 31) / 32; r++)
				if (pos + lane + 32 * r < last)
					moved[r] = b[pos + lane + 32 * r];
			__syncwarp();
#pragma unroll
			for (int r = 0; r < (TC_REFINE_SEL + 31) / 32; r++)
				if (pos + lane + 32 * r < last)
					b[pos + lane + 32 * r + 1] = moved[r];
			if (lane == 0)
				b[pos] = nk;
			__syncwarp();
			if (have < a.k)
				have++;
			if (have == a.k)
				worst = b[a.k - 1];
		}
	}
	if (lane == 0)
		kept[warp] = have;
	__syncthreads();
	for (int w = 0; w < TC_SCAN_WARPS; w++)
		total += kept[w];
	for (int t = threadIdx.x; t < TC_SCAN_WARPS * TC_REFINE_SEL; t += blockDim.x)
	{
		const int	w = t / TC_REFINE_SEL;
		const int	e = t - w * TC_REFINE_SEL;
		uint64_t	key;
		int			rank = e;

		if (e >= kept[w])
			continue;
		key = best[w][e];
		for (int v = 0; v < TC_SCAN_WARPS; v++)
		{
			int			lo = 0,
						hi = kept[v];

			if (v == w)
				continue;
			while (lo < hi)
			{
				const int	mid = (lo + hi) >> 1;

				if (best[v][mid] < key)
					lo = mid + 1;
				else
					hi = mid;
			}
			rank += lo;
		}
		if (rank < a.k)
		{
			a.sd[q * a.k + rank] = TcFloatOf((uint32_t) (key >> 32));
			a.si[q * a.k + rank] = a.c_base + (int64_t) (key & 0xffffffffu);
		}
	}
	if (threadIdx.x == 0)
	{
		a.sn[q] = total < a.k ? total : a.k;
		if (total < a.k)
			atomicExch(a.bad, 1);
	}
}

/* See knn_gpu_tc_internal.cuh. */
template <OdpMetric M>
void
TcLaunchRefine(cudaStream_t stream, const TcRefineArgs &a)
{
	TcRefineKernel<M><<<(unsigned) ((a.nq + TC_REFINE_WARPS - 1) / TC_REFINE_WARPS), TC_REFINE_WARPS * 32, 0, stream>>>(a);
}

/* See knn_gpu_tc_internal.cuh. */
template <OdpMetric M>
void
TcLaunchScan(cudaStream_t stream, const TcRefineArgs &a, const int32_t *over,
			 int64_t n, int64_t nc)
{
	TcScanKernel<M><<<(unsigned) n, TC_SCAN_WARPS * 32, 0, stream>>>(a, over, nc);
}

/* Row r's k-th sample distance, or NaN where its list is short. */
static __global__ void
TcKthKernel(const float *dist, const int32_t *count, int ks, int64_t rows, float *kth)
{
	const int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (r < rows)
		kth[r] = count[r] == ks ? dist[r * ks + ks - 1] : __int_as_float(0x7fc00000);
}

/* See knn_gpu_tc_internal.cuh. */
void
TcLaunchKth(cudaStream_t stream, const float *dist, const int32_t *count, int ks,
			int64_t rows, float *kth)
{
	TcKthKernel<<<(unsigned) ((rows + 255) / 256), 256, 0, stream>>>(dist, count, ks, rows, kth);
}

/*
 * One thread per row, through the one merge of neighbour lists
 * (knn_merge.h): the parts' lists hold disjoint candidates, but a part
 * that scanned an overflowed row holds all of them, so an entry equal to
 * the one taken before it (the same index: the same distance) is skipped.
 */
static __global__ void
TcTeamMergeKernel(const float *in_dist, const int64_t *in_index, const int32_t *in_count,
				  int lists, int64_t rows, int k, float *dist, int64_t *index,
				  int32_t *count, int *short_rows)
{
	const int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const int64_t stride = rows * k;
	int			pos[ODP_MAX_GPUS];
	int			len[ODP_MAX_GPUS];
	int			n = 0;
	int64_t		last = -1;

	if (r >= rows)
		return;
	for (int l = 0; l < lists; l++)
	{
		pos[l] = 0;
		len[l] = in_count[l * rows + r];
	}
	while (n < k)
	{
		const int	l = odp_merge_next(in_dist + r * k, in_index + r * k, stride, lists, pos, len);
		int64_t		i;

		if (l < 0)
			break;
		i = in_index[l * stride + r * k + pos[l]];
		if (i != last)
		{
			dist[r * k + n] = in_dist[l * stride + r * k + pos[l]];
			index[r * k + n] = i;
			last = i;
			n++;
		}
		pos[l]++;
	}
	count[r] = n;
	if (n < k)
		atomicAdd(short_rows, 1);
}

/* See knn_gpu_tc_internal.cuh. */
void
TcLaunchTeamMerge(cudaStream_t stream, const float *in_dist, const int64_t *in_index,
				  const int32_t *in_count, int lists, int64_t rows, int k, float *dist,
				  int64_t *index, int32_t *count, int *short_rows)
{
	TcTeamMergeKernel<<<(unsigned) ((rows + 127) / 128), 128, 0, stream>>>(
		in_dist, in_index, in_count, lists, rows, k, dist, index, count, short_rows);
}

/* The instances TcSearch runs: one per metric (TC_FOR_EACH_METRIC). */
#define TC_REFINE_METRIC(M) \
	template void TcLaunchRefine<M>(cudaStream_t, const TcRefineArgs &); \
	template void TcLaunchScan<M>(cudaStream_t, const TcRefineArgs &, const int32_t *, \
								  int64_t, int64_t);
TC_FOR_EACH_METRIC(TC_REFINE_METRIC)
#undef TC_REFINE_METRIC
