/*-------------------------------------------------------------------------
 *
 * gpu_select.cuh
 *	  The shared k-selection primitive of the GPU path: a warp merges a
 *	  small buffer of (key, index) entries into a sorted list of the k
 *	  smallest, in shared or global memory.
 *
 * One order serves every analytic: ascending key, then smaller index.  The
 * index breaks every tie, so a list is the same whatever order its
 * candidates arrive in.  The key type is a template parameter: float for
 * the distances of k-NN and the outlier scores (knn_gpu.cu), double for
 * the correlations of odp_pearson_top (pearson_gpu.cu).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_select.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_SELECT_CUH
#define ODP_GPU_SELECT_CUH

#include <limits.h>
#include <math.h>
#include <stdint.h>

#include <cub/warp/warp_merge_sort.cuh>

/* One selected entry: its key and global index. */
template <typename K>
struct OdpSelEntry
{
	K			d;
	int64_t		i;
};

/* The one order of the primitive: by key, then by smaller index. */
template <typename K>
static __device__ __forceinline__ bool
OdpSelLess(K da, int64_t ia, K db, int64_t ib)
{
	return da < db || (da == db && ia < ib);
}

/* OdpSelLess as a comparator object, for CUB. */
template <typename K>
struct OdpSelEntryLess
{
	__device__ __forceinline__ bool operator() (const OdpSelEntry<K> &a,
												const OdpSelEntry<K> &b) const
	{
		return OdpSelLess(a.d, a.i, b.d, b.i);
	}
};

/* Warp sort storage of the merge for IPT entries per lane. */
template <typename K, int IPT>
struct OdpSelSort
{
	typedef cub::WarpMergeSort<OdpSelEntry<K>, IPT, 32> Sort;
	typedef typename Sort::TempStorage TempStorage;
};

/* Counts the entries of sorted (d, i)[0..n) that are less than key. */
template <typename K>
static __device__ __forceinline__ int
OdpSelLowerBound(const K *d, const int64_t *ix, int n, K kd, int64_t ki)
{
	int			lo = 0;
	int			hi = n;

	while (lo < hi)
	{
		int			mid = (lo + hi) >> 1;

		if (OdpSelLess(d[mid], ix[mid], kd, ki))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Merges buffer (bd, bi)[0..n) into the sorted list (ld, li)[0..len),
 * keeping the k smallest; returns the new length.  Called by all 32 lanes
 * of one warp, which must own the list and buffer exclusively; both may
 * live in shared or global memory.  n <= IPT * 32.  sd/si is per-warp
 * scratch for IPT*32 entries, tmp the warp's sort storage.  Keys are
 * unique (an index enters a list or buffer once).
 *
 * Steps: sort the buffer into sd/si (one entry per lane: its rank by
 * counting, every lane reading the whole buffer, which avoids the
 * dependent steps of a sorting network; more: CUB WarpMergeSort); find
 * each buffer entry's rank in the list by binary search; move the list
 * entries right by their rank in the buffer, from the end so that nothing
 * unread is overwritten; drop what lands at k or beyond; fill the gaps
 * with the buffer entries.
 */
template <typename K, int IPT>
static __device__ __noinline__ int
OdpSelWarpMerge(K *ld, int64_t *li, int len, int k,
				const K *bd, const int64_t *bi, int n,
				K *sd, int64_t *si,
				typename OdpSelSort<K, IPT>::TempStorage &tmp)
{
	typedef typename OdpSelSort<K, IPT>::Sort Sort;
	const int	lane = threadIdx.x & 31;
	OdpSelEntry<K> e[IPT];
	int			pos[IPT];

#pragma unroll
	for (int t = 0; t < IPT; t++)
	{
		int			p = lane * IPT + t;

		if (p < n)
		{
			e[t].d = bd[p];
			e[t].i = bi[p];
		}
		else
		{
			e[t].d = (K) INFINITY;
			e[t].i = INT64_MAX;
		}
	}
	if (IPT == 1)
	{
		int			rank = 0;

		pos[0] = INT_MAX;
		if (lane < n)
		{
#pragma unroll 8
			for (int q = 0; q < n; q++)
				rank += OdpSelLess(bd[q], bi[q], e[0].d, e[0].i) ? 1 : 0;
			sd[rank] = e[0].d;
			si[rank] = e[0].i;
			/* the list is still unmodified here */
			pos[0] = rank + OdpSelLowerBound(ld, li, len, e[0].d, e[0].i);
		}
	}
	else
	{
		Sort(tmp).Sort(e, OdpSelEntryLess<K>());

#pragma unroll
		for (int t = 0; t < IPT; t++)
		{
			int			p = lane * IPT + t;

			pos[t] = INT_MAX;
			if (p < n)
			{
				sd[p] = e[t].d;
				si[p] = e[t].i;
				/* the list is still unmodified here */
				pos[t] = p + OdpSelLowerBound(ld, li, len, e[t].d, e[t].i);
			}
		}
	}
	__syncwarp();

	if (len > 0)
	{
		for (int base = ((len - 1) / 32) * 32; base >= 0; base -= 32)
		{
			int			p = base + lane;
			int			np = INT_MAX;
			K			d = 0;
			int64_t		ix = 0;

			if (p < len)
			{
				d = ld[p];
				ix = li[p];
				np = p + OdpSelLowerBound(sd, si, n, d, ix);
			}
			/* all reads of this group happen before any of its writes */
			__syncwarp();
			if (np < k)
			{
				ld[np] = d;
				li[np] = ix;
			}
			__syncwarp();
		}
	}

#pragma unroll
	for (int t = 0; t < IPT; t++)
	{
		if (pos[t] < k)
		{
			ld[pos[t]] = e[t].d;
			li[pos[t]] = e[t].i;
		}
	}
	__syncwarp();
	return min(k, len + n);
}

#endif							/* ODP_GPU_SELECT_CUH */
