/*-------------------------------------------------------------------------
 *
 * knn_gpu.cu
 *	  Fused distance tiles and per-query k-smallest selection on the GPU,
 *	  the primitive behind outlier scores, k-NN queries and k-NN joins.
 *
 * Design
 * ------
 * No N x N distance matrix is ever written.  A thread block of 8 warps
 * owns 64 queries (8 per warp) and streams the candidates past them in
 * tiles of 32 * KNN_TC (128 by default).  Each lane computes an
 * 8 x KNN_TC register tile: its warp's 8 queries against candidates
 * lane*4 .. lane*4+3 (and, for KNN_TC = 8, the same 128 further on),
 * reading both operands from shared memory, where query and candidate
 * rows sit transposed (dimension-major) so that a warp reads a dimension
 * with 16-byte loads, the query ones broadcasts.  Dimensions are staged in
 * chunks of at most 16, double-buffered with cp.async, so any D from 1 to
 * ODP_MAX_DIMS works and the copy of the next tile overlaps the
 * arithmetic on this one.
 *
 * Distances use odp_dist_step/odp_dist_finish from odp_distance.h (the
 * file is compiled with -fmad=false and the helpers round every product
 * explicitly), one dimension after the other in index order, so every
 * distance is bit-identical to the CPU path's.
 *
 * Selection.  Each query keeps its k smallest (distance, candidate index)
 * pairs sorted ascending, ordered by distance and then index, which is
 * also the tie rule.  After a tile, a lane compares the minimum of its
 * candidates per query with the query's current k-th distance, and the
 * warp enters the slow path only when some lane has a candidate at or
 * under it.  Once a query has k entries few candidates pass (about
 * k*ln(N/k) over N candidates in random order), so the common tile costs
 * one compare per pair on top of the 3*D arithmetic operations.  Passers
 * go, exactly compared (distance, then index, with self-exclusion and the
 * range checks done here only), into a per-query buffer; a full buffer is
 * merged into the sorted list by the owning warp alone (the shared merge
 * of gpu_select.cuh: buffer ranks by counting, binary-search ranks in the
 * list, and an in-place move of the list from its end), which tightens
 * the threshold.  The prefilter uses
 * "<=", never "<", so a candidate that ties the k-th distance with a
 * smaller index is never lost: results do not depend on the order in
 * which candidates or candidate chunks arrive.
 *
 * Euclidean distances are compared before the square root: the threshold
 * is mapped to the largest accumulator whose sqrtf does not exceed it
 * (OdpKnnPrefilterLimit), which is exact because sqrtf is monotone.  Cosine
 * finishes every distance (it needs both norms).
 *
 * Two storage layouts share the code:
 *	- k <= 64 or k <= 128: the lists and 32-entry buffers live in shared
 *	  memory for the duration of a launch (loaded from and written back to
 *	  the device state at its ends);
 *	- larger k (up to ODP_MAX_K): lists and 256-entry buffers stay in
 *	  device memory, buffers are sorted with CUB's WarpMergeSort (slower
 *	  merges, same results).
 *
 * Memory per query in device memory: k * 12 bytes of state plus 4 bytes
 * of count (plus 256 * 12 bytes of buffer for k > 128).  Shared memory per
 * block: about 95 kB for k <= 64 and D <= 16 (two blocks per H100 SM).
 *
 * Candidate-range split (OdpKnnProblem.cand_split): a query set too small
 * to fill the GPU (SolvingSet's exact step: a few thousand queries against
 * all rows) is stacked in copies by the caller, and the block of a copy
 * only visits that copy's slice of the candidates (KnnBlockRange); the
 * caller merges the copies' lists.  Off (0) for everything else, where
 * the kernel does exactly what it did before.
 *
 * Candidate side (OdpKnnProblem.cand_bound, SolvingSet's single pass): a
 * second consumer of the same register tile.  Each lane compares its
 * columns' minimum with the candidate's limit (staged in shared memory
 * with the tile) and appends the rare passers to the candidate's buffer
 * with one global atomic each; the query side runs as usual for the rows
 * query_active marks.  A separate kernel template (CSIDE), so that the
 * other callers' kernels are unchanged.
 *
 * Launches are bounded: the host splits the work into query-block slices
 * and candidate ranges of about KNN_LAUNCH_WORK pair-dimensions, at least
 * one full wave of blocks each, synchronises after each and polls the
 * cancel callback in between.
 *
 * Performance (H100 SXM, 1.98 GHz, N rows x 10 dims, k = 50, euclidean):
 * N = 100,000 in 42 ms, N = 1,000,000 in 2.14 s.  The arithmetic floor is
 * 30 non-fused FP32 operations per pair: 1e12 pairs / (132 SMs x 128
 * lanes x 1.98 GHz) = 0.94 s.  Nsight Compute on a late launch (lists
 * full): 43 instructions per pair (30 arithmetic, ~2 in the inner loop's
 * loads and loop, ~11 per-tile staging, prefilter and bookkeeping) at 76%
 * issue utilisation, i.e. issue-bound.  At N = 100,000 selection dominates
 * (issue 43%): barrier stalls while one warp merges, and instruction-cache
 * misses in the large unrolled slow path.  Measured alternatives (same
 * results): KNN_TC = 8 (spills at 128 registers) 3.0 s and, with one block
 * per SM, 3.8 s; a shuffle sorting network for the buffers 1% slower; CUB
 * WarpMergeSort for them 1% slower still.
 *
 * Map of this file.  The declarations and the device code come first,
 * above the one divider comment ("host side"):
 *	- declarations: the tuning constants (KNN_*), the shared memory layout
 *	  KnnLayout, KnnArgs (one launch's arguments), and KnnTake and
 *	  KnnMakeLayout, which compute the layout on the host;
 *	- device helpers of the fused kernel: KnnQueryLimit, KnnFlushQuery (a
 *	  buffer merged into its list), KnnStageRows, KnnBlockRange,
 *	  KnnLoadItem (the staging of one tile and chunk), KnnDimStep (one
 *	  dimension of the register tile) and KnnCandidateSide;
 *	- kernels: KnnLimitKernel (the candidate-side limits) and
 *	  KnnTileKernel, the fused distance and selection kernel;
 *	- host side: the choice of a compiled configuration (KnnKernelFor,
 *	  KnnLimitFor, KnnTryConfig, KnnChooseConfig), then the entry points
 *	  of knn_gpu.cuh: OdpKnnLaunchShape (launch sizing, shared with
 *	  knn_gpu_wide.cu), OdpKnnStateBytesPerRow, OdpKnnStateAlloc,
 *	  OdpKnnStateReset (all three for float and double distances) and
 *	  OdpKnnAccumulate, which sizes the launches and runs them.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <limits.h>
#ifdef ODP_KNN_TRACE
#include <stdio.h>
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "gpu/gpu_select.cuh"
#include "include/odp_distance.h"
#include "knn/knn_gpu.cuh"

#define KNN_WARPS		8
#define KNN_THREADS		(KNN_WARPS * 32)
#define KNN_TQ			8		/* queries per warp (register tile rows) */
#ifndef KNN_TC
#define KNN_TC			4		/* candidates per lane (tile columns): 4 or 8 */
#endif
#ifndef KNN_MIN_BLOCKS
#define KNN_MIN_BLOCKS	2		/* resident blocks per SM the registers allow */
#endif
#ifndef KNN_DUNROLL
#define KNN_DUNROLL		2		/* dimensions per inner-loop iteration: 1 or 2 */
#endif
#define KNN_BQ			(KNN_WARPS * KNN_TQ)	/* queries per block */
#define KNN_BC			(32 * KNN_TC)	/* candidates per tile */
#define KNN_QSTRIDE		(KNN_BQ + 4)	/* floats per staged dimension */
#define KNN_CSTRIDE		(KNN_BC + 4)
#define KNN_FAST_CAP	32		/* shared-memory buffer entries per query */
#define KNN_FULL_MASK	0xffffffffu

/*
 * Synchronised merging (shared-memory lists): once some buffer of the
 * block holds KNN_SYNC_TRIGGER entries, every warp merges, at the end of
 * the tile, each of its buffers holding at least KNN_SYNC_MIN.  A warp
 * merging alone holds the other seven at the tile barrier; merging
 * together turns that wait into work.  0 disables (benchmark builds).
 */
#ifndef KNN_SYNC_FLUSH
#define KNN_SYNC_FLUSH		1
#endif
#define KNN_SYNC_TRIGGER	16
#define KNN_SYNC_MIN		8

/*
 * Pair-dimensions per launch.  The H100 does about 5e12 per second: with
 * 2^37 the longest launch measured 29 ms there, so 2^36 keeps launches
 * near 15 ms on it and well under 100 ms on GPUs several times slower
 * (an A100 has about a third of its FP32 rate), cosine included, whose
 * per-pair finish costs extra (counted in OdpKnnLaunchShape).
 */
#define KNN_LAUNCH_WORK ((int64_t) 1 << 36)

static_assert(KNN_BQ == ODP_KNN_BLOCK_QUERIES, "block query count");
static_assert(KNN_TC == 4 || KNN_TC == 8,
			  "lane column mapping assumes 1 or 2 groups of 4 candidates per lane");

/*
 * Tile column of a lane's candidate j: lanes take 4 consecutive columns,
 * then (for KNN_TC == 8) the same 4 columns 128 further, so each 16-byte
 * shared memory load of the warp is contiguous (no bank conflicts).
 */
#define KNN_COLUMN(lane, j)	(((j) >> 2) * 128 + (lane) * 4 + ((j) & 3))

/* Byte offsets of the dynamic shared memory regions of one block. */
struct KnnLayout
{
	int			cand;			/* 2 x dc x KNN_CSTRIDE floats */
	int			cnorm;			/* 2 x KNN_BC floats (cosine) */
	int			climit;			/* 2 x KNN_BC floats (candidate side) */
	int			cbound;			/* 2 x KNN_BC floats (candidate side) */
	int			query;			/* qstages x dc x KNN_QSTRIDE floats */
	int			qnorm;			/* KNN_BQ floats (cosine) */
	int			meta_d;			/* per query slot: exact k-th distance */
	int			meta_i;			/* ... and its index */
	int			meta_n;			/* ... entries in the buffer */
	int			meta_len;		/* ... entries in the list */
	int			list_d;			/* KCAP > 0: slots x KCAP */
	int			list_i;
	int			buf_d;			/* KCAP > 0: slots x KNN_FAST_CAP */
	int			buf_i;
	int			sort_d;			/* per warp: the sorted buffer */
	int			sort_i;
	int			sort_tmp;		/* per warp: WarpMergeSort storage */
	int			sync_flag;		/* a buffer asks for a synchronised merge */
	int			total;
};

/* Everything one launch needs, passed by value as a grid constant. */
struct KnnArgs
{
	const float *q;				/* query rows, local index 0 .. q_end-1 */
	const float *qn;			/* query norms (cosine) */
	const float *c;				/* candidate rows, local index */
	const float *cn;			/* candidate norms (cosine) */
	int64_t		q_base;			/* global index of local query 0 */
	int64_t		c_base;			/* global index of local candidate 0 */
	int64_t		q_begin;		/* first local query of this launch */
	int64_t		q_end;			/* queries in the state */
	int64_t		c_begin;		/* local candidate range of this launch */
	int64_t		c_end;
	int64_t		c_split;		/* > 0: candidates per query slice (see */
	int64_t		qb_split;		/* OdpKnnProblem), query blocks per slice */
	int64_t		c_total;		/* candidates of the problem */
	int			dims;
	int			dc;				/* dimensions per staged chunk (<= 16) */
	int			nchunks;		/* ceil(dims / dc) */
	int			qstages;		/* 2 when nchunks > 1, else 1 */
	int			lpr_log2;		/* log2 of staging threads per row, 2^x >= dc */
	int			k;
	int			exclude_self;
	int			strict;			/* ascending candidates: ties never enter */
	float	   *sd;				/* state: q_end x k distances */
	int64_t    *si;				/* state: q_end x k indices */
	int32_t    *sn;				/* state: q_end counts */
	float	   *bd;				/* large-k buffers: q_end x 256 */
	int64_t    *bi;
	const uint8_t *q_active;	/* CSIDE: query rows with 0 skip the state */
	const float *c_limit;		/* CSIDE: per local candidate, prefilter */
	const float *c_bound;		/* ... exact bound, strict */
	const int64_t *c_self;		/* ... global query index excluded */
	int32_t    *c_count;		/* ... appended distances */
	float	   *c_buf;			/* ... c_cap distances each */
	int			c_cap;
	KnnLayout	L;				/* shared memory offsets */
};

/* Rounds a region to 16 bytes so that float4 and int64 stay aligned. */
static int
KnnTake(size_t *off, size_t bytes)
{
	size_t		at = *off;

	*off += (bytes + 15) & ~(size_t) 15;
	return (int) at;
}

/*
 * Computes the shared memory layout of a KnnTileKernel<M, KCAP, IPT>
 * block on the host; the kernel reads the offsets from its arguments
 * (constant bank), which keeps them out of its registers.
 */
template <int KCAP, int IPT>
static KnnLayout
KnnMakeLayout(int dc, int qstages, bool cosine, bool cside)
{
	typedef typename OdpSelSort<float, IPT>::Sort Sort;
	const size_t slots = KNN_WARPS * KNN_TQ;
	KnnLayout	L;
	size_t		off = 0;

	L.cand = KnnTake(&off, (size_t) 2 * dc * KNN_CSTRIDE * sizeof(float));
	L.cnorm = KnnTake(&off, cosine ? 2 * KNN_BC * sizeof(float) : 0);
	L.climit = KnnTake(&off, cside ? 2 * KNN_BC * sizeof(float) : 0);
	L.cbound = KnnTake(&off, cside ? 2 * KNN_BC * sizeof(float) : 0);
	L.query = KnnTake(&off, (size_t) qstages * dc * KNN_QSTRIDE * sizeof(float));
	L.qnorm = KnnTake(&off, cosine ? KNN_BQ * sizeof(float) : 0);
	L.meta_d = KnnTake(&off, slots * sizeof(float));
	L.meta_i = KnnTake(&off, slots * sizeof(int64_t));
	L.meta_n = KnnTake(&off, slots * sizeof(int));
	L.meta_len = KnnTake(&off, slots * sizeof(int));
	L.list_d = KnnTake(&off, slots * KCAP * sizeof(float));
	L.list_i = KnnTake(&off, slots * KCAP * sizeof(int64_t));
	L.buf_d = KnnTake(&off, KCAP > 0 ? slots * KNN_FAST_CAP * sizeof(float) : 0);
	L.buf_i = KnnTake(&off, KCAP > 0 ? slots * KNN_FAST_CAP * sizeof(int64_t) : 0);
	L.sort_d = KnnTake(&off, (size_t) KNN_WARPS * IPT * 32 * sizeof(float));
	L.sort_i = KnnTake(&off, (size_t) KNN_WARPS * IPT * 32 * sizeof(int64_t));
	L.sort_tmp = KnnTake(&off, KNN_WARPS * sizeof(typename Sort::TempStorage));
	L.sync_flag = KnnTake(&off, sizeof(int));
	L.total = (int) off;
	return L;
}

/*
 * The prefilter limit for a query whose exact k-th distance is t: with
 * a.strict (ascending candidates, see OdpKnnProblem) only distances
 * strictly below a finite t can enter, else those at or below t.
 */
template <OdpMetric M>
static __device__ __forceinline__ float
KnnQueryLimit(const KnnArgs &a, float t)
{
	if (a.strict && t < INFINITY)
		t = nextafterf(t, -INFINITY);
	return OdpKnnPrefilterLimit<M>(t);
}

/*
 * Merges the buffer of query slot (warp, i) into its list and updates the
 * slot's metadata (length, empty buffer, exact threshold).  Returns the
 * new prefilter threshold.  Called by all lanes of the owning warp.
 */
template <OdpMetric M, int KCAP, int IPT>
static __device__ __noinline__ float
KnnFlushQuery(const KnnArgs *a, unsigned char *smem, int warp, int i)
{
	typedef typename OdpSelSort<float, IPT>::Sort Sort;
	const KnnLayout &L = a->L;
	const int	lane = threadIdx.x & 31;
	const int	slot = warp * KNN_TQ + i;
	const int64_t ql = a->q_begin + (int64_t) blockIdx.x * KNN_BQ + slot;
	float	   *meta_d = (float *) (smem + L.meta_d);
	int64_t    *meta_i = (int64_t *) (smem + L.meta_i);
	int		   *meta_n = (int *) (smem + L.meta_n);
	int		   *meta_len = (int *) (smem + L.meta_len);
	typename Sort::TempStorage *tmp = (typename Sort::TempStorage *) (smem + L.sort_tmp);
	float	   *ld;
	int64_t    *li;
	const float *bd;
	const int64_t *bi;
	int			len;
	float		td = INFINITY;
	int64_t		ti = INT64_MAX;

	if (KCAP > 0)
	{
		ld = (float *) (smem + L.list_d) + (size_t) slot * KCAP;
		li = (int64_t *) (smem + L.list_i) + (size_t) slot * KCAP;
		bd = (float *) (smem + L.buf_d) + (size_t) slot * KNN_FAST_CAP;
		bi = (int64_t *) (smem + L.buf_i) + (size_t) slot * KNN_FAST_CAP;
	}
	else
	{
		ld = a->sd + ql * a->k;
		li = a->si + ql * a->k;
		bd = a->bd + ql * ODP_KNN_GLOBAL_CAP;
		bi = a->bi + ql * ODP_KNN_GLOBAL_CAP;
	}

	len = OdpSelWarpMerge<float, IPT>(ld, li, meta_len[slot], a->k, bd, bi,
									  meta_n[slot],
							(float *) (smem + L.sort_d) + warp * IPT * 32,
							(int64_t *) (smem + L.sort_i) + warp * IPT * 32,
							tmp[warp]);
	if (len == a->k)
	{
		td = ld[a->k - 1];
		ti = li[a->k - 1];
	}
	__syncwarp();
	if (lane == 0)
	{
		meta_len[slot] = len;
		meta_n[slot] = 0;
		meta_d[slot] = td;
		meta_i[slot] = ti;
	}
	__syncwarp();
	return KnnQueryLimit<M>(*a, td);
}

/*
 * Starts the asynchronous copy of rows [0, valid) x dims [0, dn) of src
 * (row stride dims) into dst transposed (dimension-major, row stride
 * stride); rows valid .. rows-1 are zero-filled.  Thread t copies
 * dimension t mod 2^lpr_log2 of every (256 >> lpr_log2)-th row, so no
 * division is needed (2^lpr_log2 >= dn, from the host).  All threads of
 * the block call it; completion via __pipeline_wait_prior and a barrier.
 */
static __device__ __forceinline__ void
KnnStageRows(const float *src, int valid, int rows, int dn, int dims,
			 float *dst, int stride, int lpr_log2)
{
	const int	dd = threadIdx.x & ((1 << lpr_log2) - 1);
	const int	step = KNN_THREADS >> lpr_log2;
	const size_t src_step = (size_t) step * dims;
	int			r = threadIdx.x >> lpr_log2;
	const float *s = src + (size_t) r * dims + dd;
	float	   *d = dst + dd * stride + r;

	if (dd >= dn)
		return;
	for (; r < rows; r += step, s += src_step, d += step)
	{
		if (r < valid)
			__pipeline_memcpy_async(d, s, sizeof(float));
		else
			*d = 0.0f;
	}
}

/*
 * The local candidate range [*lo, *hi) of this block in this launch: the
 * launch's range, or with a split (a.c_split > 0) that range shifted to
 * the block's query slice and clipped to it and to the candidates.
 */
static __device__ __forceinline__ void
KnnBlockRange(const KnnArgs &a, int64_t *lo, int64_t *hi)
{
	if (a.c_split > 0)
	{
		const int64_t base = ((int64_t) blockIdx.x + a.q_begin / KNN_BQ) /
			a.qb_split * a.c_split;

		*lo = base + a.c_begin;
		*hi = min(base + a.c_end, a.c_total);
	}
	else
	{
		*lo = a.c_begin;
		*hi = a.c_end;
	}
}

/*
 * Starts staging work item (tile, chunk): the tile's candidate rows for
 * the chunk's dimensions (and their norms for cosine) into stage, and the
 * block's query rows when load_q.
 */
template <bool COSINE, bool CSIDE>
static __device__ __forceinline__ void
KnnLoadItem(const KnnArgs &a, const KnnLayout &L, unsigned char *smem,
			int64_t qblock, int64_t c_lo, int64_t c_hi, int tile, int chunk,
			int stage, bool load_q)
{
	const int	d0 = chunk * a.dc;
	const int	dn = min(a.dc, a.dims - d0);
	const int64_t c0 = c_lo + (int64_t) tile * KNN_BC;
	const int	crows = (int) min((int64_t) KNN_BC, c_hi - c0);

	KnnStageRows(a.c + c0 * a.dims + d0, crows, KNN_BC, dn, a.dims,
				 (float *) (smem + L.cand) + (size_t) stage * a.dc * KNN_CSTRIDE,
				 KNN_CSTRIDE, a.lpr_log2);
	if (COSINE)
	{
		float	   *cns = (float *) (smem + L.cnorm) + stage * KNN_BC;

		for (int t = threadIdx.x; t < KNN_BC; t += KNN_THREADS)
		{
			if (t < crows)
				__pipeline_memcpy_async(cns + t, a.cn + c0 + t, sizeof(float));
			else
				cns[t] = 1.0f;
		}
	}
	if (CSIDE)
	{
		/* every item, so that the tile's last chunk finds them in its stage */
		float	   *lim = (float *) (smem + L.climit) + stage * KNN_BC;
		float	   *bnd = (float *) (smem + L.cbound) + stage * KNN_BC;

		for (int t = threadIdx.x; t < KNN_BC; t += KNN_THREADS)
		{
			if (t < crows)
			{
				__pipeline_memcpy_async(lim + t, a.c_limit + c0 + t, sizeof(float));
				__pipeline_memcpy_async(bnd + t, a.c_bound + c0 + t, sizeof(float));
			}
			else
				lim[t] = -INFINITY;	/* past the end: nothing passes */
		}
	}
	if (load_q)
	{
		const int	qrows = (int) min((int64_t) KNN_BQ, a.q_end - qblock);
		const int	qstage = a.nchunks > 1 ? stage : 0;

		KnnStageRows(a.q + qblock * a.dims + d0, qrows, KNN_BQ, dn, a.dims,
					 (float *) (smem + L.query) + (size_t) qstage * a.dc * KNN_QSTRIDE,
					 KNN_QSTRIDE, a.lpr_log2);
	}
}

/*
 * Adds one dimension to the lane's register tile: qp points at the warp's
 * 8 query values of that dimension, cp at the lane's candidate values.
 */
template <OdpMetric M>
static __device__ __forceinline__ void
KnnDimStep(float (&acc)[KNN_TQ][KNN_TC], const float *qp, const float *cp)
{
	const float4 qa = *(const float4 *) qp;
	const float4 qb = *(const float4 *) (qp + 4);
	const float4 ca = *(const float4 *) cp;
#if KNN_TC == 8
	const float4 cb = *(const float4 *) (cp + 128);
	const float cv[KNN_TC] = {ca.x, ca.y, ca.z, ca.w, cb.x, cb.y, cb.z, cb.w};
#else
	const float cv[KNN_TC] = {ca.x, ca.y, ca.z, ca.w};
#endif
	const float qv[KNN_TQ] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};

#pragma unroll
	for (int i = 0; i < KNN_TQ; i++)
#pragma unroll
		for (int j = 0; j < KNN_TC; j++)
			acc[i][j] = odp_dist_step(M, acc[i][j], qv[i], cv[j]);
}

/*
 * Candidate side of column j of a lane's register tile (see
 * OdpKnnProblem.cand_bound): appends the distances of its queries that
 * are strictly under the candidate's bound.  lim is the candidate's
 * prefilter limit, inclusive, so it lets through every strict passer.
 */
template <OdpMetric M>
static __device__ __forceinline__ void
KnnCandidateSide(const KnnArgs &a, const float (&acc)[KNN_TQ][KNN_TC], int j,
				 int64_t cloc, int64_t qwarp, float lim, float bound)
{
	/* cosine only: elsewhere the pair with itself is exactly 0 (see knn_gpu.cuh) */
	const int64_t self = M == ODP_METRIC_COSINE ? a.c_self[cloc] : -1;

#pragma unroll
	for (int i = 0; i < KNN_TQ; i++)
	{
		const int64_t ql = qwarp + i;
		float		dist;

		if (!(acc[i][j] <= lim) || ql >= a.q_end ||
			(M == ODP_METRIC_COSINE && a.q_base + ql == self))
			continue;
		dist = (M == ODP_METRIC_EUCLIDEAN) ? sqrtf(acc[i][j]) : acc[i][j];
		if (dist < bound)
		{
			const int	pos = atomicAdd(a.c_count + cloc, 1);

			if (pos < a.c_cap)
				a.c_buf[cloc * a.c_cap + pos] = dist;
		}
	}
}

/*
 * Candidate-side prefilter limits: limit[c] lets through every
 * accumulator whose distance is at most bound[c].
 */
template <OdpMetric M>
static __global__ void
KnnLimitKernel(const float *bound, int64_t n, float *limit)
{
	const int64_t c = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (c < n)
		limit[c] = OdpKnnPrefilterLimit<M>(bound[c]);
}

/*
 * The fused kernel.  Grid: one block per 64 queries starting at local
 * query a.q_begin (the last block may be partial); 256 threads.  Merges
 * candidates [a.c_begin, a.c_end) (with a split: that range within the
 * block's slice, KnnBlockRange) into the state of its queries.  Shared
 * memory: a.L.total bytes (KnnMakeLayout<KCAP, IPT>).
 * KCAP > 0 keeps lists of up to KCAP entries (k <= KCAP) and buffers in
 * shared memory, IPT must then be 1; KCAP == 0 keeps them in the state
 * arrays, IPT must be ODP_KNN_GLOBAL_CAP / 32.
 */
template <OdpMetric M, int KCAP, int IPT, bool CSIDE>
static __global__ void __launch_bounds__(KNN_THREADS, KNN_MIN_BLOCKS)
KnnTileKernel(const __grid_constant__ KnnArgs a)
{
	extern __shared__ __align__(16) unsigned char smem[];
	constexpr bool COSINE = (M == ODP_METRIC_COSINE);
	constexpr int CAP = IPT * 32;
	const KnnLayout &L = a.L;
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const unsigned lanes_below = (1u << lane) - 1;
	const int64_t qblock = a.q_begin + (int64_t) blockIdx.x * KNN_BQ;
	const int64_t qwarp = qblock + warp * KNN_TQ;
	float	   *meta_d = (float *) (smem + L.meta_d);
	int64_t    *meta_i = (int64_t *) (smem + L.meta_i);
	int		   *meta_n = (int *) (smem + L.meta_n);
	int		   *meta_len = (int *) (smem + L.meta_len);
	int64_t		c_lo;
	int64_t		c_hi;
	int			ntiles;
	int			nitems;
	float		thk[KNN_TQ];
	float		acc[KNN_TQ][KNN_TC];
	int			tile = 0;
	int			chunk = 0;

	static_assert(KCAP == 0 ? CAP == ODP_KNN_GLOBAL_CAP : CAP == KNN_FAST_CAP,
				  "buffer capacity");

	/* a split can leave a block of the last slice nothing in this launch */
	KnnBlockRange(a, &c_lo, &c_hi);
	if (c_lo >= c_hi)
		return;
	/* the host keeps a launch's item count within int */
	ntiles = (int) ((c_hi - c_lo + KNN_BC - 1) / KNN_BC);
	nitems = ntiles * a.nchunks;

	if (threadIdx.x == 0)
		*(int *) (smem + L.sync_flag) = 0;

	/* Start staging the first item while the state loads. */
	KnnLoadItem<COSINE, CSIDE>(a, L, smem, qblock, c_lo, c_hi, 0, 0, 0, true);
	__pipeline_commit();

	/* Load this warp's queries' state and thresholds. */
#pragma unroll
	for (int i = 0; i < KNN_TQ; i++)
	{
		const int64_t ql = qwarp + i;
		const int	slot = warp * KNN_TQ + i;
		int			len = 0;
		float		td = INFINITY;
		int64_t		ti = INT64_MAX;

		thk[i] = -INFINITY;		/* rows past the end never pass */
		if (ql < a.q_end && (!CSIDE || a.q_active == NULL || a.q_active[ql]))
		{
			const float *sd = a.sd + ql * a.k;
			const int64_t *si = a.si + ql * a.k;

			len = a.sn[ql];
			if (KCAP > 0)
			{
				float	   *ld = (float *) (smem + L.list_d) + (size_t) slot * KCAP;
				int64_t    *li = (int64_t *) (smem + L.list_i) + (size_t) slot * KCAP;

				for (int t = lane; t < len; t += 32)
				{
					ld[t] = sd[t];
					li[t] = si[t];
				}
			}
			if (len == a.k)
			{
				td = sd[a.k - 1];
				ti = si[a.k - 1];
			}
			thk[i] = KnnQueryLimit<M>(a, td);
		}
		if (lane == 0)
		{
			meta_d[slot] = td;
			meta_i[slot] = ti;
			meta_n[slot] = 0;
			meta_len[slot] = len;
		}
	}
	if (COSINE)
	{
		float	   *qns = (float *) (smem + L.qnorm);

		for (int t = threadIdx.x; t < KNN_BQ; t += KNN_THREADS)
			qns[t] = qblock + t < a.q_end ? a.qn[qblock + t] : 1.0f;
	}

#pragma unroll
	for (int i = 0; i < KNN_TQ; i++)
#pragma unroll
		for (int j = 0; j < KNN_TC; j++)
			acc[i][j] = 0.0f;

	for (int it = 0; it < nitems; it++)
	{
		const int	stage = it & 1;
		const int	dn = min(a.dc, a.dims - chunk * a.dc);

		/* Stage the next item into the other buffer, then wait for ours. */
		if (it + 1 < nitems)
		{
			int			ntile = tile;
			int			nchunk = chunk + 1;

			if (nchunk == a.nchunks)
			{
				nchunk = 0;
				ntile++;
			}
			KnnLoadItem<COSINE, CSIDE>(a, L, smem, qblock, c_lo, c_hi, ntile, nchunk,
								stage ^ 1, a.nchunks > 1);
			__pipeline_commit();
			__pipeline_wait_prior(1);
		}
		else
			__pipeline_wait_prior(0);
		__syncthreads();

		/* Accumulate this chunk's dimensions into the register tile. */
		{
			const float *qp = (const float *) (smem + L.query) +
				(size_t) (a.nchunks > 1 ? stage : 0) * a.dc * KNN_QSTRIDE + warp * KNN_TQ;
			const float *cp = (const float *) (smem + L.cand) +
				(size_t) stage * a.dc * KNN_CSTRIDE + lane * 4;

			int			d = 0;

#if KNN_DUNROLL == 2
#pragma unroll 1
			for (; d + 1 < dn; d += 2)
			{
				KnnDimStep<M>(acc, qp + d * KNN_QSTRIDE, cp + d * KNN_CSTRIDE);
				KnnDimStep<M>(acc, qp + (d + 1) * KNN_QSTRIDE, cp + (d + 1) * KNN_CSTRIDE);
			}
#endif
#pragma unroll 1
			for (; d < dn; d++)
				KnnDimStep<M>(acc, qp + d * KNN_QSTRIDE, cp + d * KNN_CSTRIDE);
		}

		if (chunk == a.nchunks - 1)
		{
			const int64_t tile_c0 = c_lo + (int64_t) tile * KNN_BC;
			unsigned	pm = 0;
			unsigned	wm;

			/* Prefilter: does any of my candidates beat a query's k-th? */
#pragma unroll
			for (int i = 0; i < KNN_TQ; i++)
			{
				float		mn = INFINITY;

#pragma unroll
				for (int j = 0; j < KNN_TC; j++)
				{
					if (COSINE)
					{
						const float *qns = (const float *) (smem + L.qnorm);
						const float *cns = (const float *) (smem + L.cnorm) + stage * KNN_BC;

						acc[i][j] = odp_dist_finish(M, acc[i][j],
													qns[warp * KNN_TQ + i],
													cns[KNN_COLUMN(lane, j)]);
					}
					else if (M == ODP_METRIC_INNER_PRODUCT)
						acc[i][j] = odp_dist_finish(M, acc[i][j], 1.0f, 1.0f);
					mn = fminf(mn, acc[i][j]);
				}
				if (mn <= thk[i])
					pm |= 1u << i;
			}
			wm = __reduce_or_sync(KNN_FULL_MASK, pm);

			/*
			 * Slow path: exact checks and buffering, rare once lists fill.
			 * Candidates outer, queries inner, so that a candidate's index
			 * values die before the next candidate's are formed (register
			 * pressure).
			 */
			if (wm != 0)
			{
#pragma unroll
				for (int j = 0; j < KNN_TC; j++)
				{
					const int	cl = KNN_COLUMN(lane, j);
					const int64_t cloc = tile_c0 + cl;
					const int64_t cg = a.c_base + cloc;
					const bool	in_range = cloc < c_hi;

#pragma unroll
					for (int i = 0; i < KNN_TQ; i++)
					{
						const int	slot = warp * KNN_TQ + i;
						bool		ok;
						bool		pass;
						float		dist;
						unsigned	b;
						int			n;

						if ((wm & (1u << i)) == 0 ||
							!__any_sync(KNN_FULL_MASK, acc[i][j] <= thk[i]))
							continue;
						dist = (M == ODP_METRIC_EUCLIDEAN) ? sqrtf(acc[i][j]) : acc[i][j];
						ok = in_range &&
							!(a.exclude_self && cg == a.q_base + qwarp + i);
						pass = ok && OdpSelLess(dist, cg, meta_d[slot], meta_i[slot]);
						b = __ballot_sync(KNN_FULL_MASK, pass);
						if (b == 0)
							continue;
						n = meta_n[slot];
						if (n + __popc(b) > CAP)
						{
							thk[i] = KnnFlushQuery<M, KCAP, IPT>(&a, smem, warp, i);
							pass = ok && OdpSelLess(dist, cg, meta_d[slot], meta_i[slot]);
							b = __ballot_sync(KNN_FULL_MASK, pass);
							n = 0;
						}
						if (pass)
						{
							const int	p = n + __popc(b & lanes_below);

							if (KCAP > 0)
							{
								((float *) (smem + L.buf_d))[slot * KNN_FAST_CAP + p] = dist;
								((int64_t *) (smem + L.buf_i))[slot * KNN_FAST_CAP + p] = cg;
							}
							else
							{
								a.bd[(qwarp + i) * ODP_KNN_GLOBAL_CAP + p] = dist;
								a.bi[(qwarp + i) * ODP_KNN_GLOBAL_CAP + p] = cg;
							}
						}
						__syncwarp();
						if (lane == 0)
						{
							meta_n[slot] = n + __popc(b);
							if (KNN_SYNC_FLUSH && KCAP > 0 &&
								n + __popc(b) >= KNN_SYNC_TRIGGER)
								*(volatile int *) (smem + L.sync_flag) = 1;
						}
						__syncwarp();
					}
				}
			}

			/*
			 * Candidate side: the lane's own columns, against each
			 * candidate's bound; passers are rare and go to the
			 * candidate's buffer one atomic at a time, so lanes diverge
			 * freely here.
			 */
			if (CSIDE)
			{
#pragma unroll
				for (int j = 0; j < KNN_TC; j++)
				{
					const int	col = stage * KNN_BC + KNN_COLUMN(lane, j);
					const float lim = ((const float *) (smem + L.climit))[col];
					float		mn = acc[0][j];

#pragma unroll
					for (int i = 1; i < KNN_TQ; i++)
						mn = fminf(mn, acc[i][j]);
					if (mn <= lim)
						KnnCandidateSide<M>(a, acc, j, tile_c0 + KNN_COLUMN(lane, j),
											qwarp, lim,
											((const float *) (smem + L.cbound))[col]);
				}
			}

#pragma unroll
			for (int i = 0; i < KNN_TQ; i++)
#pragma unroll
				for (int j = 0; j < KNN_TC; j++)
					acc[i][j] = 0.0f;
		}

		/* Nobody may overwrite this stage before everyone is done with it. */
		__syncthreads();
		if (KNN_SYNC_FLUSH && KCAP > 0 && chunk == a.nchunks - 1 &&
			*(volatile int *) (smem + L.sync_flag) != 0)
		{
#pragma unroll
			for (int i = 0; i < KNN_TQ; i++)
			{
				if (meta_n[warp * KNN_TQ + i] >= KNN_SYNC_MIN)
					thk[i] = KnnFlushQuery<M, KCAP, IPT>(&a, smem, warp, i);
			}
			/* everyone has read the flag before it is cleared */
			__syncthreads();
			if (threadIdx.x == 0)
				*(volatile int *) (smem + L.sync_flag) = 0;
		}
		if (++chunk == a.nchunks)
		{
			chunk = 0;
			tile++;
		}
	}

	/* Merge what is still buffered and write the state back. */
	for (int i = 0; i < KNN_TQ; i++)
	{
		const int	slot = warp * KNN_TQ + i;
		const int64_t ql = qwarp + i;

		if (ql >= a.q_end || (CSIDE && a.q_active != NULL && !a.q_active[ql]))
			continue;
		if (meta_n[slot] > 0)
			(void) KnnFlushQuery<M, KCAP, IPT>(&a, smem, warp, i);
		if (KCAP > 0)
		{
			const float *ld = (const float *) (smem + L.list_d) + (size_t) slot * KCAP;
			const int64_t *li = (const int64_t *) (smem + L.list_i) + (size_t) slot * KCAP;
			const int	len = meta_len[slot];

			for (int t = lane; t < len; t += 32)
			{
				a.sd[ql * a.k + t] = ld[t];
				a.si[ql * a.k + t] = li[t];
			}
		}
		if (lane == 0)
			a.sn[ql] = meta_len[slot];
	}
}

/* ---- host side ---- */

typedef void (*KnnKernelFn) (KnnArgs);
typedef void (*KnnLimitFn) (const float *, int64_t, float *);

/* A compiled configuration: kernel, its smem layout size, and k range. */
typedef struct KnnConfig
{
	KnnKernelFn fn;
	KnnLayout	layout;
	size_t		smem;
	int			dc;
	int			nchunks;
	int			blocks_per_sm;
} KnnConfig;

/*
 * Returns the kernel for metric m with the given storage template, with
 * or without the candidate side.
 */
template <int KCAP, int IPT, bool CSIDE>
static KnnKernelFn
KnnKernelFor(OdpMetric m)
{
	switch (m)
	{
		case ODP_METRIC_EUCLIDEAN:
			return KnnTileKernel<ODP_METRIC_EUCLIDEAN, KCAP, IPT, CSIDE>;
		case ODP_METRIC_SQEUCLIDEAN:
			return KnnTileKernel<ODP_METRIC_SQEUCLIDEAN, KCAP, IPT, CSIDE>;
		case ODP_METRIC_MANHATTAN:
			return KnnTileKernel<ODP_METRIC_MANHATTAN, KCAP, IPT, CSIDE>;
		case ODP_METRIC_CHEBYSHEV:
			return KnnTileKernel<ODP_METRIC_CHEBYSHEV, KCAP, IPT, CSIDE>;
		case ODP_METRIC_COSINE:
			return KnnTileKernel<ODP_METRIC_COSINE, KCAP, IPT, CSIDE>;
		case ODP_METRIC_INNER_PRODUCT:
			return CSIDE ? NULL : KnnTileKernel<ODP_METRIC_INNER_PRODUCT, KCAP, IPT, false>;
	}
	return NULL;
}

/* The candidate-side limit kernel for metric m. */
static KnnLimitFn
KnnLimitFor(OdpMetric m)
{
	switch (m)
	{
		case ODP_METRIC_EUCLIDEAN:
			return KnnLimitKernel<ODP_METRIC_EUCLIDEAN>;
		case ODP_METRIC_SQEUCLIDEAN:
			return KnnLimitKernel<ODP_METRIC_SQEUCLIDEAN>;
		case ODP_METRIC_MANHATTAN:
			return KnnLimitKernel<ODP_METRIC_MANHATTAN>;
		case ODP_METRIC_CHEBYSHEV:
			return KnnLimitKernel<ODP_METRIC_CHEBYSHEV>;
		case ODP_METRIC_COSINE:
			return KnnLimitKernel<ODP_METRIC_COSINE>;
		case ODP_METRIC_INNER_PRODUCT:
			return KnnLimitKernel<ODP_METRIC_INNER_PRODUCT>;
	}
	return NULL;
}

/*
 * Fills *cfg for one storage template and one chunk width limit; returns
 * false when the block does not fit the device's shared memory.
 */
template <int KCAP, int IPT, bool CSIDE>
static bool
KnnTryConfig(const OdpGpuDevice *dev, OdpMetric m, int dims, int dc_max,
			 KnnConfig *cfg)
{
	const int	nchunks = (dims + dc_max - 1) / dc_max;
	const int	dc = (dims + nchunks - 1) / nchunks;
	KnnLayout	L = KnnMakeLayout<KCAP, IPT>(dc, nchunks > 1 ? 2 : 1,
											 m == ODP_METRIC_COSINE, CSIDE);

	cfg->fn = KnnKernelFor<KCAP, IPT, CSIDE>(m);
	cfg->layout = L;
	cfg->smem = (size_t) L.total;
	cfg->dc = dc;
	cfg->nchunks = nchunks;
	cfg->blocks_per_sm = 0;
	return cfg->fn != NULL && cfg->smem <= dev->smem_per_block;
}

/*
 * Chooses the configuration for (metric, k, dims) on dev: the
 * shared-memory lists when k allows and they fit, with the chunk width
 * (16 or 8 dimensions) that gives more resident blocks; the device-memory
 * lists otherwise.  Sets the kernel's dynamic shared memory limit and
 * occupancy.
 */
static OdpStatus
KnnChooseConfig(OdpContext *ctx, const OdpGpuDevice *dev, OdpMetric m,
				int k, int dims, bool cside, KnnConfig *best)
{
	OdpStatus	status = ODP_OK;
	KnnConfig	cand[4];
	int			ncand = 0;
	int			dcs[2] = {16, 8};

	for (int t = 0; t < 2; t++)
	{
		bool		ok;

		if (k <= 64)
			ok = cside ? KnnTryConfig<64, 1, true>(dev, m, dims, dcs[t], &cand[ncand])
				: KnnTryConfig<64, 1, false>(dev, m, dims, dcs[t], &cand[ncand]);
		else if (k <= ODP_KNN_FAST_MAX_K)
			ok = cside ? KnnTryConfig<ODP_KNN_FAST_MAX_K, 1, true>(dev, m, dims, dcs[t], &cand[ncand])
				: KnnTryConfig<ODP_KNN_FAST_MAX_K, 1, false>(dev, m, dims, dcs[t], &cand[ncand]);
		else
			ok = false;
		if (ok)
			ncand++;
	}
	if (ncand == 0 && !cside)
	{
		for (int t = 0; t < 2; t++)
			if (KnnTryConfig<0, ODP_KNN_GLOBAL_CAP / 32, false>(dev, m, dims, dcs[t], &cand[ncand]))
				ncand++;
	}
	if (ncand == 0)
		return odp_fail(ctx, ODP_ERR_GPU,
						"the GPU offers %zu bytes of shared memory per block, too few for the k-NN kernel",
						dev->smem_per_block);

	best->fn = NULL;
	for (int t = 0; t < ncand; t++)
	{
		KnnConfig  *c = &cand[t];

		ODP_CUDA_RETURN(ctx, OdpGpuFuncSharedAtLeast((const void *) c->fn, c->smem),
						"setting the k-NN kernel's shared memory size");
		ODP_CUDA_RETURN(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c->blocks_per_sm,
																		   (const void *) c->fn,
																		   KNN_THREADS, c->smem),
						"computing the k-NN kernel's occupancy");
		if (c->blocks_per_sm > 0 &&
			(best->fn == NULL || c->blocks_per_sm > best->blocks_per_sm))
			*best = *c;
	}
	if (best->fn == NULL)
		return odp_fail(ctx, ODP_ERR_GPU,
						"the k-NN kernel cannot run on this GPU (no block fits a multiprocessor)");
	/* the limit only grows, so it still admits the winner's size */
	return status;
}

/* See knn_gpu.cuh. */
void
OdpKnnLaunchShape(OdpMetric m, int dims, int64_t nq, int64_t span,
				  int64_t wave, int block_queries, int tile, int nchunks,
				  int64_t work, int64_t *blocks_total, int64_t *qblocks,
				  int64_t *cslice)
{
	/* selection adds ~2 steps per pair; cosine's division about 12 more */
	const int64_t pair_cost = (int64_t) dims + 2 + (m == ODP_METRIC_COSINE ? 12 : 0);
	const double per_block = (double) block_queries * (double) span * (double) pair_cost;
	int64_t		qb = (int64_t) ((double) work / per_block);
	int64_t		cs;

	*blocks_total = (nq + block_queries - 1) / block_queries;
	if (qb >= wave)
	{
		qb = qb / wave * wave;
		cs = span;
	}
	else
	{
		qb = wave < *blocks_total ? wave : *blocks_total;
		cs = work / (qb * block_queries * pair_cost);
		cs = cs / tile * tile;
		if (cs < tile)
			cs = tile;
		if (cs > span)
			cs = span;
	}
	/* the kernel counts a launch's tiles x chunks in an int */
	if (cs / tile + 1 > INT_MAX / nchunks)
		cs = (int64_t) (INT_MAX / nchunks - 1) * tile;
	if (qb > *blocks_total)
		qb = *blocks_total;
	if (qb > INT_MAX)
		qb = INT_MAX;
	*qblocks = qb;
	*cslice = cs;
}

/* See knn_gpu.cuh. */
template <typename T>
size_t
OdpKnnStateBytesPerRow(int32_t k)
{
	size_t		b = (size_t) k * (sizeof(T) + sizeof(int64_t)) + sizeof(int32_t);

	if (k > ODP_KNN_FAST_MAX_K)
		b += (size_t) ODP_KNN_GLOBAL_CAP * (sizeof(T) + sizeof(int64_t));
	return b;
}

/* See knn_gpu.cuh. */
template <typename T>
OdpStatus
OdpKnnStateAlloc(OdpContext *ctx, OdpGpuArena *arena, int64_t rows,
				 int32_t k, OdpKnnStateOf<T> *state)
{
	OdpStatus	status;
	size_t		n_k;
	size_t		b;

	memset(state, 0, sizeof(*state));
	state->rows = rows;
	state->k = k;
	if (!OdpSizeMul((size_t) rows, (size_t) k, &n_k) ||
		!OdpSizeMul(n_k, sizeof(int64_t), &b))
		return odp_fail(ctx, ODP_ERR_LIMIT,
						"k-NN state for %lld rows and k = %d overflows the address space",
						(long long) rows, k);

	status = OdpGpuArenaAlloc(ctx, arena, n_k * sizeof(T),
							  "the k-NN distances", (void **) &state->dist);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, arena, n_k * sizeof(int64_t),
								  "the k-NN indices", (void **) &state->index);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, arena, (size_t) rows * sizeof(int32_t),
								  "the k-NN counts", (void **) &state->count);
	if (status == ODP_OK && k > ODP_KNN_FAST_MAX_K)
	{
		status = OdpGpuArenaAlloc(ctx, arena,
								  (size_t) rows * ODP_KNN_GLOBAL_CAP * sizeof(T),
								  "the k-NN candidate buffers",
								  (void **) &state->buf_dist);
		if (status == ODP_OK)
			status = OdpGpuArenaAlloc(ctx, arena,
									  (size_t) rows * ODP_KNN_GLOBAL_CAP * sizeof(int64_t),
									  "the k-NN candidate buffers",
									  (void **) &state->buf_index);
	}
	return status;
}

/* See knn_gpu.cuh. */
template <typename T>
OdpStatus
OdpKnnStateReset(OdpContext *ctx, cudaStream_t stream, OdpKnnStateOf<T> *state)
{
	ODP_CUDA_RETURN(ctx, cudaMemsetAsync(state->count, 0,
										 (size_t) state->rows * sizeof(int32_t),
										 stream),
					"clearing the k-NN state");
	return ODP_OK;
}

/* The state of float32 rows (this file's kernel) and of float64 rows. */
template size_t OdpKnnStateBytesPerRow<float>(int32_t);
template size_t OdpKnnStateBytesPerRow<double>(int32_t);
template OdpStatus OdpKnnStateAlloc<float>(OdpContext *, OdpGpuArena *, int64_t,
										   int32_t, OdpKnnStateOf<float> *);
template OdpStatus OdpKnnStateAlloc<double>(OdpContext *, OdpGpuArena *, int64_t,
											int32_t, OdpKnnStateOf<double> *);
template OdpStatus OdpKnnStateReset<float>(OdpContext *, cudaStream_t,
										   OdpKnnStateOf<float> *);
template OdpStatus OdpKnnStateReset<double>(OdpContext *, cudaStream_t,
											OdpKnnStateOf<double> *);

/* See knn_gpu.cuh. */
OdpStatus
OdpKnnAccumulate(OdpContext *ctx, const OdpGpuDevice *dev,
				 cudaStream_t stream, const OdpKnnProblem *p,
				 OdpKnnState *state, double *compute_ms)
{
	OdpStatus	status = ODP_OK;
	KnnConfig	cfg;
	KnnArgs		args;
	int64_t		blocks_total;
	int64_t		wave;
	int64_t		qblocks;
	int64_t		cslice;
	int64_t		span;
	double		t0 = odp_now_ms();

	/* inner checks: the public entry points validated these already */
	if (p->nq <= 0 || p->nc <= 0 || state->rows != p->nq ||
		state->k < 1 || state->k > ODP_MAX_K ||
		p->dims < 1 || p->dims > ODP_MAX_DIMS ||
		(p->metric == ODP_METRIC_COSINE && (!p->query_norms || !p->cand_norms)) ||
		(state->k > ODP_KNN_FAST_MAX_K && (!state->buf_dist || !state->buf_index)) ||
		p->cand_split < 0 ||
		(p->cand_split > 0 && (p->split_queries <= 0 ||
							   p->split_queries % KNN_BQ != 0)) ||
		(p->cand_bound != NULL &&
		 (state->k > ODP_KNN_FAST_MAX_K || p->cand_split > 0 ||
		  !p->cand_self || !p->cand_limit || !p->cand_count ||
		  !p->cand_buf || p->cand_cap < 1)))
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"invalid k-NN problem (nq %lld, nc %lld, state rows %lld, k %d, dims %d)",
						(long long) p->nq, (long long) p->nc,
						(long long) state->rows, state->k, p->dims);

	status = KnnChooseConfig(ctx, dev, p->metric, state->k, p->dims,
							 p->cand_bound != NULL, &cfg);
	if (status != ODP_OK)
		return status;

	memset(&args, 0, sizeof(args));
	args.q = p->queries;
	args.qn = p->query_norms;
	args.c = p->cands;
	args.cn = p->cand_norms;
	args.q_base = p->query_base;
	args.c_base = p->cand_base;
	args.q_end = p->nq;
	args.dims = p->dims;
	args.dc = cfg.dc;
	args.nchunks = cfg.nchunks;
	args.qstages = cfg.nchunks > 1 ? 2 : 1;
	args.lpr_log2 = 0;
	while ((1 << args.lpr_log2) < cfg.dc)
		args.lpr_log2++;
	args.k = state->k;
	args.exclude_self = p->exclude_self ? 1 : 0;
	args.strict = p->ascending_candidates ? 1 : 0;
	args.sd = state->dist;
	args.si = state->index;
	args.sn = state->count;
	args.bd = state->buf_dist;
	args.bi = state->buf_index;
	args.L = cfg.layout;
	args.c_total = p->nc;
	if (p->cand_bound != NULL)
	{
		args.q_active = p->query_active;
		args.c_limit = p->cand_limit;
		args.c_bound = p->cand_bound;
		args.c_self = p->cand_self;
		args.c_count = p->cand_count;
		args.c_buf = p->cand_buf;
		args.c_cap = p->cand_cap;
		KnnLimitFor(p->metric)<<<(unsigned) ((p->nc + 255) / 256), 256, 0, stream>>>(p->cand_bound, p->nc, p->cand_limit);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the k-NN candidate limit kernel");
	}
	if (p->cand_split > 0 && p->cand_split < p->nc)
	{
		args.c_split = p->cand_split;
		args.qb_split = p->split_queries / KNN_BQ;
	}
	/* candidates one query sees, which the launches below cover */
	span = args.c_split > 0 ? args.c_split : p->nc;

	wave = (int64_t) cfg.blocks_per_sm * dev->sm_count;
	OdpKnnLaunchShape(p->metric, p->dims, p->nq, span, wave, KNN_BQ, KNN_BC,
					  cfg.nchunks, KNN_LAUNCH_WORK, &blocks_total, &qblocks,
					  &cslice);
#ifdef ODP_KNN_TRACE
	fprintf(stderr, "knn: k %d dims %d dc %d nchunks %d smem %zu blocks/SM %d wave %lld; %lld query blocks per launch, %lld candidates per launch\n",
			state->k, p->dims, cfg.dc, cfg.nchunks, cfg.smem, cfg.blocks_per_sm,
			(long long) wave, (long long) qblocks, (long long) cslice);
#endif

	for (int64_t qb = 0; qb < blocks_total; qb += qblocks)
	{
		const int64_t nb = blocks_total - qb < qblocks ? blocks_total - qb : qblocks;

		for (int64_t c0 = 0; c0 < span; c0 += cslice)
		{
			/* the previous launch has finished: a cancel leaves no work */
			if (odp_cancel_requested(ctx))
			{
				status = odp_fail(ctx, ODP_ERR_CANCELLED,
								  "k-NN computation cancelled by request");
				goto cleanup;
			}
			args.q_begin = qb * KNN_BQ;
			args.c_begin = c0;
			args.c_end = span - c0 < cslice ? span : c0 + cslice;
			cfg.fn<<<(unsigned) nb, KNN_THREADS, cfg.smem, stream>>>(args);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the k-NN distance kernel");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream),
						 "running the k-NN distance kernel");
#ifdef ODP_KNN_TRACE
			fprintf(stderr, "knn: launch queries %lld+%lld x candidates %lld..%lld done at %.2f ms\n",
					(long long) args.q_begin, (long long) nb * KNN_BQ,
					(long long) args.c_begin, (long long) args.c_end,
					odp_now_ms() - t0);
#endif
		}
	}

cleanup:
	*compute_ms += odp_now_ms() - t0;
	return status;
}
