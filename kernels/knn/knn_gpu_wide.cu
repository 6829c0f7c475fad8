/*-------------------------------------------------------------------------
 *
 * knn_gpu_wide.cu
 *	  Fused distance tiles and per-query k-smallest selection in float64:
 *	  the k-NN primitive of knn_gpu_wide.cuh, for float64 rows.
 *
 * Design
 * ------
 * knn_gpu.cu's scheme, in double and without its float32-only options.
 * A thread block of 8 warps owns 32 queries (4 per warp) and streams the
 * candidates past them in tiles of 128.  Each lane computes a 4 x 4
 * register tile of double accumulators: its warp's 4 queries against
 * candidates 2*lane, 2*lane+1, 64+2*lane and 65+2*lane (WIDE_COLUMN), so
 * that a warp reads a staged dimension with conflict-free 16-byte loads
 * and the queries' values as broadcasts.  Rows sit in shared memory
 * transposed (dimension-major), staged in chunks of at most 16 dimensions
 * with cp.async, double-buffered, so any D from 1 to ODP_MAX_DIMS works.
 *
 * Distances are odp_dist_step64 one dimension after the other in index
 * order, then odp_dist_finish64 (odp_distance.h; the file is compiled
 * with -fmad=false and the ODP_D* helpers round every product and sum
 * explicitly), so each is bit-identical to the CPU path's odp_distance64.
 *
 * Selection.  Each query keeps its k smallest (distance, candidate index)
 * pairs, ascending by distance and then index (OdpSelLess of
 * gpu_select.cuh, keyed by double).  After a tile, each query's row of
 * the register tile is compared with its prefilter limit; a candidate at
 * or under it is checked exactly (distance, index, range, self) and the
 * passers go to a per-query buffer, which the owning warp merges into
 * the sorted list when full (OdpSelWarpMerge<double>).  The prefilter
 * admits ties ("<="), so a candidate tying the k-th distance with a
 * smaller index is never lost, and the lists do not depend on the order
 * in which candidates or chunks arrive.  Euclidean distances are
 * compared before the square root against the largest accumulator whose
 * sqrt does not exceed the k-th distance (WideLimit; sqrt is correctly
 * rounded, hence monotone, so the test is exact); cosine and the inner
 * product finish every distance first.
 *
 * Storage: for k <= 64 and k <= 128 the lists and 32-entry buffers live
 * in shared memory for a launch (about 100 kB per block for k <= 64 and
 * 16-dimension chunks: two blocks per H100 SM); for larger k (up to
 * ODP_MAX_K) lists and 256-entry buffers stay in the device state and
 * buffers are sorted with CUB's WarpMergeSort.  The state and its
 * allocation are knn_gpu.cu's (OdpKnnStateOf<double>).
 *
 * Launches are bounded as knn_gpu.cu's: query-block slices and candidate
 * ranges of about WIDE_LAUNCH_WORK pair-dimensions (half the float32
 * kernel's, FP64 running at half the FP32 rate), at least a wave of
 * blocks each, each synchronised, odp_cancel_requested polled between
 * them.  The candidate-range split of small query sets
 * (OdpKnnProblem.cand_split) is honoured as there.
 *
 * Work and floor.  N queries x N candidates x D dimensions cost 3 FP64
 * operations per pair and dimension for the Euclidean metrics (subtract,
 * multiply, add; no fused multiply-add may be used), 2 for manhattan and
 * the products, so about 3 N^2 D.  The H100 SXM's non-tensor FP64 rate,
 * 34 TFLOP/s, counts a fused multiply-add as two: unfused operations
 * issue at 64 per SM and clock, 132 x 64 x 1.98 GHz = 16.7e12 per second.
 * Floor for N = 1,000,000, D = 10: 3e13 / 16.7e12 = 1.8 s (the float32
 * kernel's is 0.94 s); N = 100,000: 18 ms.  Memory is not the limit: a
 * tile's 128 x D doubles serve 32 x 128 x D x 3 operations (12 per byte,
 * mostly from L2), and the rows cross HBM (3.35 TB/s) a few times at
 * most, 80 MB for N = 1,000,000 x 10.  The FP64 tensor cores (67 TFLOP/s)
 * could only serve a filter: their dot-product form is not the
 * definition's sum of squared differences.
 *
 * Map of this file: tuning constants, WideLayout and WideArgs; the
 * device helpers WideLimit, WideFlushQuery, WideStageRows, WideBlockRange,
 * WideLoadItem and WideDimStep; WideTileKernel; then the host side:
 * configuration (WideKernelFor, WideTryConfig, WideChooseConfig) and
 * OdpKnnAccumulate for float64 problems.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_wide.cu
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <limits.h>
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
#include "knn/knn_gpu_wide.cuh"

#define WIDE_WARPS		8
#define WIDE_THREADS	(WIDE_WARPS * 32)
#define WIDE_TQ			4		/* queries per warp (register tile rows) */
#define WIDE_TC			4		/* candidates per lane (tile columns) */
#define WIDE_MIN_BLOCKS	2		/* resident blocks per SM the registers allow */
#define WIDE_BQ			(WIDE_WARPS * WIDE_TQ)	/* queries per block */
#define WIDE_BC			(32 * WIDE_TC)	/* candidates per tile */
#define WIDE_QSTRIDE	(WIDE_BQ + 2)	/* doubles per staged dimension */
#define WIDE_CSTRIDE	(WIDE_BC + 2)
#define WIDE_FAST_CAP	32		/* shared-memory buffer entries per query */
#define WIDE_FULL_MASK	0xffffffffu

/* Pair-dimensions per launch (see the file's comment). */
#define WIDE_LAUNCH_WORK ((int64_t) 1 << 35)

/*
 * Tile column of a lane's candidate j: two pairs of neighbours, 64 apart,
 * each read by the warp as one contiguous 512-byte row.
 */
#define WIDE_COLUMN(lane, j)	(((j) >> 1) * 64 + (lane) * 2 + ((j) & 1))

static_assert(ODP_KNN_BLOCK_QUERIES % WIDE_BQ == 0,
			  "the driver's query chunks and copies are whole blocks");
static_assert(WIDE_TC == 4 && WIDE_TQ == 4, "WideDimStep reads 4 x 4");

/* Byte offsets of the dynamic shared memory regions of one block. */
struct WideLayout
{
	int			cand;			/* 2 x dc x WIDE_CSTRIDE doubles */
	int			cnorm;			/* 2 x WIDE_BC doubles (cosine) */
	int			query;			/* qstages x dc x WIDE_QSTRIDE doubles */
	int			qnorm;			/* WIDE_BQ doubles (cosine) */
	int			meta_d;			/* per query slot: exact k-th distance */
	int			meta_i;			/* ... and its index */
	int			meta_n;			/* ... entries in the buffer */
	int			meta_len;		/* ... entries in the list */
	int			list_d;			/* KCAP > 0: slots x KCAP */
	int			list_i;
	int			buf_d;			/* KCAP > 0: slots x WIDE_FAST_CAP */
	int			buf_i;
	int			sort_d;			/* per warp: the sorted buffer */
	int			sort_i;
	int			sort_tmp;		/* per warp: WarpMergeSort storage */
	int			total;
};

/* Everything one launch needs, passed by value as a grid constant. */
struct WideArgs
{
	const double *q;			/* query rows, local index 0 .. q_end-1 */
	const double *qn;			/* query norms (cosine) */
	const double *c;			/* candidate rows, local index */
	const double *cn;			/* candidate norms (cosine) */
	int64_t		q_base;			/* global index of local query 0 */
	int64_t		c_base;			/* global index of local candidate 0 */
	int64_t		q_begin;		/* first local query of this launch */
	int64_t		q_end;			/* queries in the state */
	int64_t		c_begin;		/* local candidate range of this launch */
	int64_t		c_end;
	int64_t		c_split;		/* > 0: candidates per query slice, */
	int64_t		qb_split;		/* query blocks per slice */
	int64_t		c_total;		/* candidates of the problem */
	int			dims;
	int			dc;				/* dimensions per staged chunk (<= 16) */
	int			nchunks;		/* ceil(dims / dc) */
	int			lpr_log2;		/* log2 of staging threads per row, 2^x >= dc */
	int			k;
	int			exclude_self;
	double	   *sd;				/* state: q_end x k distances */
	int64_t    *si;				/* state: q_end x k indices */
	int32_t    *sn;				/* state: q_end counts */
	double	   *bd;				/* large-k buffers: q_end x 256 */
	int64_t    *bi;
	WideLayout	L;				/* shared memory offsets */
};

/* Rounds a region to 16 bytes so that double2 and int64 stay aligned. */
static int
WideTake(size_t *off, size_t bytes)
{
	size_t		at = *off;

	*off += (bytes + 15) & ~(size_t) 15;
	return (int) at;
}

/* The shared memory layout of a WideTileKernel<M, KCAP, IPT> block. */
template <int KCAP, int IPT>
static WideLayout
WideMakeLayout(int dc, int qstages, bool cosine)
{
	typedef typename OdpSelSort<double, IPT>::Sort Sort;
	const size_t slots = WIDE_BQ;
	WideLayout	L;
	size_t		off = 0;

	L.cand = WideTake(&off, (size_t) 2 * dc * WIDE_CSTRIDE * sizeof(double));
	L.cnorm = WideTake(&off, cosine ? 2 * WIDE_BC * sizeof(double) : 0);
	L.query = WideTake(&off, (size_t) qstages * dc * WIDE_QSTRIDE * sizeof(double));
	L.qnorm = WideTake(&off, cosine ? WIDE_BQ * sizeof(double) : 0);
	L.meta_d = WideTake(&off, slots * sizeof(double));
	L.meta_i = WideTake(&off, slots * sizeof(int64_t));
	L.meta_n = WideTake(&off, slots * sizeof(int));
	L.meta_len = WideTake(&off, slots * sizeof(int));
	L.list_d = WideTake(&off, slots * KCAP * sizeof(double));
	L.list_i = WideTake(&off, slots * KCAP * sizeof(int64_t));
	L.buf_d = WideTake(&off, KCAP > 0 ? slots * WIDE_FAST_CAP * sizeof(double) : 0);
	L.buf_i = WideTake(&off, KCAP > 0 ? slots * WIDE_FAST_CAP * sizeof(int64_t) : 0);
	L.sort_d = WideTake(&off, (size_t) WIDE_WARPS * IPT * 32 * sizeof(double));
	L.sort_i = WideTake(&off, (size_t) WIDE_WARPS * IPT * 32 * sizeof(int64_t));
	L.sort_tmp = WideTake(&off, WIDE_WARPS * sizeof(typename Sort::TempStorage));
	L.total = (int) off;
	return L;
}

/*
 * The prefilter limit for a query whose exact k-th distance is t: every
 * raw accumulator whose distance is at most t is at most the limit.  For
 * euclidean the largest double a with sqrt(a) <= t (sqrt is correctly
 * rounded, so monotone, and "acc <= a" holds exactly when
 * "sqrt(acc) <= t"); elsewhere t itself.
 */
template <OdpMetric M>
static __device__ __forceinline__ double
WideLimit(double t)
{
	double		a;

	if (M != ODP_METRIC_EUCLIDEAN || !(t < INFINITY))
		return t;
	a = __dmul_rn(t, t);
	if (a == INFINITY)
		return DBL_MAX;
	/* a >= 0: its neighbours are its bit pattern minus and plus one */
	while (a > 0.0 && sqrt(a) > t)
		a = __longlong_as_double(__double_as_longlong(a) - 1);
	while (a < DBL_MAX && sqrt(__longlong_as_double(__double_as_longlong(a) + 1)) <= t)
		a = __longlong_as_double(__double_as_longlong(a) + 1);
	return a;
}

/*
 * Merges the buffer of query slot (warp, i) into its list and updates the
 * slot's metadata (length, empty buffer, exact threshold).  Returns the
 * new prefilter limit.  Called by all lanes of the owning warp.
 */
template <OdpMetric M, int KCAP, int IPT>
static __device__ __noinline__ double
WideFlushQuery(const WideArgs *a, unsigned char *smem, int warp, int i)
{
	typedef typename OdpSelSort<double, IPT>::Sort Sort;
	const WideLayout &L = a->L;
	const int	lane = threadIdx.x & 31;
	const int	slot = warp * WIDE_TQ + i;
	const int64_t ql = a->q_begin + (int64_t) blockIdx.x * WIDE_BQ + slot;
	double	   *meta_d = (double *) (smem + L.meta_d);
	int64_t    *meta_i = (int64_t *) (smem + L.meta_i);
	int		   *meta_n = (int *) (smem + L.meta_n);
	int		   *meta_len = (int *) (smem + L.meta_len);
	typename Sort::TempStorage *tmp = (typename Sort::TempStorage *) (smem + L.sort_tmp);
	double	   *ld;
	int64_t    *li;
	const double *bd;
	const int64_t *bi;
	int			len;
	double		td = INFINITY;
	int64_t		ti = INT64_MAX;

	if (KCAP > 0)
	{
		ld = (double *) (smem + L.list_d) + (size_t) slot * KCAP;
		li = (int64_t *) (smem + L.list_i) + (size_t) slot * KCAP;
		bd = (double *) (smem + L.buf_d) + (size_t) slot * WIDE_FAST_CAP;
		bi = (int64_t *) (smem + L.buf_i) + (size_t) slot * WIDE_FAST_CAP;
	}
	else
	{
		ld = a->sd + ql * a->k;
		li = a->si + ql * a->k;
		bd = a->bd + ql * ODP_KNN_GLOBAL_CAP;
		bi = a->bi + ql * ODP_KNN_GLOBAL_CAP;
	}

	len = OdpSelWarpMerge<double, IPT>(ld, li, meta_len[slot], a->k, bd, bi,
									   meta_n[slot],
							(double *) (smem + L.sort_d) + warp * IPT * 32,
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
	return WideLimit<M>(td);
}

/*
 * Starts the asynchronous copy of rows [0, valid) x dims [0, dn) of src
 * (row stride dims) into dst transposed (dimension-major, row stride
 * stride); rows valid .. rows-1 are zero-filled.  Thread t copies
 * dimension t mod 2^lpr_log2 of every (256 >> lpr_log2)-th row
 * (2^lpr_log2 >= dn).  All threads of the block call it; completion via
 * __pipeline_wait_prior and a barrier.
 */
static __device__ __forceinline__ void
WideStageRows(const double *src, int valid, int rows, int dn, int dims,
			  double *dst, int stride, int lpr_log2)
{
	const int	dd = threadIdx.x & ((1 << lpr_log2) - 1);
	const int	step = WIDE_THREADS >> lpr_log2;
	const size_t src_step = (size_t) step * dims;
	int			r = threadIdx.x >> lpr_log2;
	const double *s = src + (size_t) r * dims + dd;
	double	   *d = dst + dd * stride + r;

	if (dd >= dn)
		return;
	for (; r < rows; r += step, s += src_step, d += step)
	{
		if (r < valid)
			__pipeline_memcpy_async(d, s, sizeof(double));
		else
			*d = 0.0;
	}
}

/*
 * The local candidate range [*lo, *hi) of this block in this launch: the
 * launch's range, or with a split (a.c_split > 0) that range shifted to
 * the block's query slice and clipped to it and to the candidates.
 */
static __device__ __forceinline__ void
WideBlockRange(const WideArgs &a, int64_t *lo, int64_t *hi)
{
	if (a.c_split > 0)
	{
		const int64_t base = ((int64_t) blockIdx.x + a.q_begin / WIDE_BQ) /
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
template <bool COSINE>
static __device__ __forceinline__ void
WideLoadItem(const WideArgs &a, unsigned char *smem, int64_t qblock,
			 int64_t c_lo, int64_t c_hi, int tile, int chunk, int stage,
			 bool load_q)
{
	const WideLayout &L = a.L;
	const int	d0 = chunk * a.dc;
	const int	dn = min(a.dc, a.dims - d0);
	const int64_t c0 = c_lo + (int64_t) tile * WIDE_BC;
	const int	crows = (int) min((int64_t) WIDE_BC, c_hi - c0);

	WideStageRows(a.c + c0 * a.dims + d0, crows, WIDE_BC, dn, a.dims,
				  (double *) (smem + L.cand) + (size_t) stage * a.dc * WIDE_CSTRIDE,
				  WIDE_CSTRIDE, a.lpr_log2);
	if (COSINE)
	{
		double	   *cns = (double *) (smem + L.cnorm) + stage * WIDE_BC;

		for (int t = threadIdx.x; t < WIDE_BC; t += WIDE_THREADS)
		{
			if (t < crows)
				__pipeline_memcpy_async(cns + t, a.cn + c0 + t, sizeof(double));
			else
				cns[t] = 1.0;
		}
	}
	if (load_q)
	{
		const int	qrows = (int) min((int64_t) WIDE_BQ, a.q_end - qblock);
		const int	qstage = a.nchunks > 1 ? stage : 0;

		WideStageRows(a.q + qblock * a.dims + d0, qrows, WIDE_BQ, dn, a.dims,
					  (double *) (smem + L.query) + (size_t) qstage * a.dc * WIDE_QSTRIDE,
					  WIDE_QSTRIDE, a.lpr_log2);
	}
}

/*
 * Adds one dimension to the lane's register tile: qp points at the warp's
 * 4 query values of that dimension, cp at the lane's first candidate
 * value (its others at +1, +64 and +65, WIDE_COLUMN).
 */
template <OdpMetric M>
static __device__ __forceinline__ void
WideDimStep(double (&acc)[WIDE_TQ][WIDE_TC], const double *qp, const double *cp)
{
	const double2 qa = *(const double2 *) qp;
	const double2 qb = *(const double2 *) (qp + 2);
	const double2 ca = *(const double2 *) cp;
	const double2 cb = *(const double2 *) (cp + 64);
	const double qv[WIDE_TQ] = {qa.x, qa.y, qb.x, qb.y};
	const double cv[WIDE_TC] = {ca.x, ca.y, cb.x, cb.y};

#pragma unroll
	for (int i = 0; i < WIDE_TQ; i++)
#pragma unroll
		for (int j = 0; j < WIDE_TC; j++)
			acc[i][j] = odp_dist_step64(M, acc[i][j], qv[i], cv[j]);
}

/*
 * The fused kernel.  Grid: one block per 32 queries starting at local
 * query a.q_begin (the last block may be partial); 256 threads.  Merges
 * candidates [a.c_begin, a.c_end) (with a split: that range within the
 * block's slice, WideBlockRange) into the state of its queries.  Shared
 * memory: a.L.total bytes (WideMakeLayout<KCAP, IPT>).  KCAP > 0 keeps
 * lists of up to KCAP entries (k <= KCAP) and buffers in shared memory,
 * IPT must then be 1; KCAP == 0 keeps them in the state arrays, IPT must
 * be ODP_KNN_GLOBAL_CAP / 32.
 */
template <OdpMetric M, int KCAP, int IPT>
static __global__ void __launch_bounds__(WIDE_THREADS, WIDE_MIN_BLOCKS)
WideTileKernel(const __grid_constant__ WideArgs a)
{
	extern __shared__ __align__(16) unsigned char smem[];
	constexpr bool COSINE = (M == ODP_METRIC_COSINE);
	constexpr int CAP = IPT * 32;
	const WideLayout &L = a.L;
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const unsigned lanes_below = (1u << lane) - 1;
	const int64_t qblock = a.q_begin + (int64_t) blockIdx.x * WIDE_BQ;
	const int64_t qwarp = qblock + warp * WIDE_TQ;
	double	   *meta_d = (double *) (smem + L.meta_d);
	int64_t    *meta_i = (int64_t *) (smem + L.meta_i);
	int		   *meta_n = (int *) (smem + L.meta_n);
	int		   *meta_len = (int *) (smem + L.meta_len);
	int64_t		c_lo;
	int64_t		c_hi;
	int			nitems;
	double		thk[WIDE_TQ];
	double		acc[WIDE_TQ][WIDE_TC];
	int			tile = 0;
	int			chunk = 0;

	static_assert(KCAP == 0 ? CAP == ODP_KNN_GLOBAL_CAP : CAP == WIDE_FAST_CAP,
				  "buffer capacity");

	/* a split can leave a block of the last slice nothing in this launch */
	WideBlockRange(a, &c_lo, &c_hi);
	if (c_lo >= c_hi)
		return;
	/* the host keeps a launch's item count within int */
	nitems = (int) ((c_hi - c_lo + WIDE_BC - 1) / WIDE_BC) * a.nchunks;

	/* Start staging the first item while the state loads. */
	WideLoadItem<COSINE>(a, smem, qblock, c_lo, c_hi, 0, 0, 0, true);
	__pipeline_commit();

	/* Load this warp's queries' state and limits. */
#pragma unroll
	for (int i = 0; i < WIDE_TQ; i++)
	{
		const int64_t ql = qwarp + i;
		const int	slot = warp * WIDE_TQ + i;
		int			len = 0;
		double		td = INFINITY;
		int64_t		ti = INT64_MAX;

		thk[i] = -INFINITY;		/* rows past the end skip the slow path */
		if (ql < a.q_end)
		{
			const double *sd = a.sd + ql * a.k;
			const int64_t *si = a.si + ql * a.k;

			len = a.sn[ql];
			if (KCAP > 0)
			{
				double	   *ld = (double *) (smem + L.list_d) + (size_t) slot * KCAP;
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
			thk[i] = WideLimit<M>(td);
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
		double	   *qns = (double *) (smem + L.qnorm);

		for (int t = threadIdx.x; t < WIDE_BQ; t += WIDE_THREADS)
			qns[t] = qblock + t < a.q_end ? a.qn[qblock + t] : 1.0;
	}

#pragma unroll
	for (int i = 0; i < WIDE_TQ; i++)
#pragma unroll
		for (int j = 0; j < WIDE_TC; j++)
			acc[i][j] = 0.0;

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
			WideLoadItem<COSINE>(a, smem, qblock, c_lo, c_hi, ntile, nchunk,
								 stage ^ 1, a.nchunks > 1);
			__pipeline_commit();
			__pipeline_wait_prior(1);
		}
		else
			__pipeline_wait_prior(0);
		__syncthreads();

		/* Accumulate this chunk's dimensions into the register tile. */
		{
			const double *qp = (const double *) (smem + L.query) +
				(size_t) (a.nchunks > 1 ? stage : 0) * a.dc * WIDE_QSTRIDE +
				warp * WIDE_TQ;
			const double *cp = (const double *) (smem + L.cand) +
				(size_t) stage * a.dc * WIDE_CSTRIDE + lane * 2;

#pragma unroll 1
			for (int d = 0; d < dn; d++)
				WideDimStep<M>(acc, qp + d * WIDE_QSTRIDE, cp + d * WIDE_CSTRIDE);
		}

		if (chunk == a.nchunks - 1)
		{
			const int64_t tile_c0 = c_lo + (int64_t) tile * WIDE_BC;
			unsigned	pm = 0;
			unsigned	wm;

			/* Prefilter: does any of my candidates reach a query's limit? */
#pragma unroll
			for (int i = 0; i < WIDE_TQ; i++)
			{
				double		mn = INFINITY;

#pragma unroll
				for (int j = 0; j < WIDE_TC; j++)
				{
					if (COSINE)
					{
						const double *qns = (const double *) (smem + L.qnorm);
						const double *cns = (const double *) (smem + L.cnorm) + stage * WIDE_BC;

						acc[i][j] = odp_dist_finish64(M, acc[i][j],
													  qns[warp * WIDE_TQ + i],
													  cns[WIDE_COLUMN(lane, j)]);
					}
					else if (M == ODP_METRIC_INNER_PRODUCT)
						acc[i][j] = odp_dist_finish64(M, acc[i][j], 1.0, 1.0);
					mn = fmin(mn, acc[i][j]);
				}
				if (mn <= thk[i])
					pm |= 1u << i;
			}
			wm = __reduce_or_sync(WIDE_FULL_MASK, pm);

			/*
			 * Slow path: exact checks and buffering, rare once lists fill.
			 * Every branch below is uniform over the warp.
			 */
			if (wm != 0)
			{
#pragma unroll
				for (int j = 0; j < WIDE_TC; j++)
				{
					const int64_t cloc = tile_c0 + WIDE_COLUMN(lane, j);
					const int64_t cg = a.c_base + cloc;
					const bool	in_range = cloc < c_hi;

#pragma unroll
					for (int i = 0; i < WIDE_TQ; i++)
					{
						const int	slot = warp * WIDE_TQ + i;
						const int64_t ql = qwarp + i;
						bool		ok;
						bool		pass;
						double		dist;
						unsigned	b;
						int			n;

						if ((wm & (1u << i)) == 0 ||
							!__any_sync(WIDE_FULL_MASK, acc[i][j] <= thk[i]))
							continue;
						/* the other metrics' accumulators are finished already */
						dist = (M == ODP_METRIC_EUCLIDEAN) ? sqrt(acc[i][j]) : acc[i][j];
						ok = in_range && ql < a.q_end &&
							!(a.exclude_self && cg == a.q_base + ql);
						pass = ok && OdpSelLess(dist, cg, meta_d[slot], meta_i[slot]);
						b = __ballot_sync(WIDE_FULL_MASK, pass);
						if (b == 0)
							continue;
						n = meta_n[slot];
						if (n + __popc(b) > CAP)
						{
							thk[i] = WideFlushQuery<M, KCAP, IPT>(&a, smem, warp, i);
							pass = ok && OdpSelLess(dist, cg, meta_d[slot], meta_i[slot]);
							b = __ballot_sync(WIDE_FULL_MASK, pass);
							n = 0;
						}
						if (pass)
						{
							const int	p = n + __popc(b & lanes_below);

							if (KCAP > 0)
							{
								((double *) (smem + L.buf_d))[slot * WIDE_FAST_CAP + p] = dist;
								((int64_t *) (smem + L.buf_i))[slot * WIDE_FAST_CAP + p] = cg;
							}
							else
							{
								a.bd[ql * ODP_KNN_GLOBAL_CAP + p] = dist;
								a.bi[ql * ODP_KNN_GLOBAL_CAP + p] = cg;
							}
						}
						__syncwarp();
						if (lane == 0)
							meta_n[slot] = n + __popc(b);
						__syncwarp();
					}
				}
			}

#pragma unroll
			for (int i = 0; i < WIDE_TQ; i++)
#pragma unroll
				for (int j = 0; j < WIDE_TC; j++)
					acc[i][j] = 0.0;
		}

		/* Nobody may overwrite this stage before everyone is done with it. */
		__syncthreads();
		if (++chunk == a.nchunks)
		{
			chunk = 0;
			tile++;
		}
	}

	/* Merge what is still buffered and write the state back. */
	for (int i = 0; i < WIDE_TQ; i++)
	{
		const int	slot = warp * WIDE_TQ + i;
		const int64_t ql = qwarp + i;

		if (ql >= a.q_end)
			continue;
		if (meta_n[slot] > 0)
			(void) WideFlushQuery<M, KCAP, IPT>(&a, smem, warp, i);
		if (KCAP > 0)
		{
			const double *ld = (const double *) (smem + L.list_d) + (size_t) slot * KCAP;
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

typedef void (*WideKernelFn) (WideArgs);

/* A compiled configuration: kernel, its shared memory layout and size. */
typedef struct WideConfig
{
	WideKernelFn fn;
	WideLayout	layout;
	size_t		smem;
	int			dc;
	int			nchunks;
	int			blocks_per_sm;
} WideConfig;

/* The kernel for metric m with the given storage template. */
template <int KCAP, int IPT>
static WideKernelFn
WideKernelFor(OdpMetric m)
{
	switch (m)
	{
		case ODP_METRIC_EUCLIDEAN:
			return WideTileKernel<ODP_METRIC_EUCLIDEAN, KCAP, IPT>;
		case ODP_METRIC_SQEUCLIDEAN:
			return WideTileKernel<ODP_METRIC_SQEUCLIDEAN, KCAP, IPT>;
		case ODP_METRIC_MANHATTAN:
			return WideTileKernel<ODP_METRIC_MANHATTAN, KCAP, IPT>;
		case ODP_METRIC_CHEBYSHEV:
			return WideTileKernel<ODP_METRIC_CHEBYSHEV, KCAP, IPT>;
		case ODP_METRIC_COSINE:
			return WideTileKernel<ODP_METRIC_COSINE, KCAP, IPT>;
		case ODP_METRIC_INNER_PRODUCT:
			return WideTileKernel<ODP_METRIC_INNER_PRODUCT, KCAP, IPT>;
	}
	return NULL;
}

/*
 * Fills *cfg for one storage template and one chunk width limit; returns
 * false when the block does not fit the device's shared memory.
 */
template <int KCAP, int IPT>
static bool
WideTryConfig(const OdpGpuDevice *dev, OdpMetric m, int dims, int dc_max,
			  WideConfig *cfg)
{
	const int	nchunks = (dims + dc_max - 1) / dc_max;
	const int	dc = (dims + nchunks - 1) / nchunks;
	WideLayout	L = WideMakeLayout<KCAP, IPT>(dc, nchunks > 1 ? 2 : 1,
											  m == ODP_METRIC_COSINE);

	cfg->fn = WideKernelFor<KCAP, IPT>(m);
	cfg->layout = L;
	cfg->smem = (size_t) L.total;
	cfg->dc = dc;
	cfg->nchunks = nchunks;
	cfg->blocks_per_sm = 0;
	return cfg->fn != NULL && cfg->smem <= dev->smem_per_block;
}

/*
 * Chooses the configuration for (metric, k, dims) on dev: shared-memory
 * lists when k allows and they fit, with the chunk width (16 or 8
 * dimensions) that gives more resident blocks; device-memory lists
 * otherwise, where the state has their buffers (k above
 * ODP_KNN_FAST_MAX_K).  Raises the kernel's dynamic shared memory limit.
 */
static OdpStatus
WideChooseConfig(OdpContext *ctx, const OdpGpuDevice *dev, OdpMetric m,
				 int k, int dims, WideConfig *best)
{
	WideConfig	cand[2];
	int			ncand = 0;
	const int	dcs[2] = {16, 8};

	for (int t = 0; t < 2; t++)
	{
		bool		ok = false;

		if (k <= 64)
			ok = WideTryConfig<64, 1>(dev, m, dims, dcs[t], &cand[ncand]);
		else if (k <= ODP_KNN_FAST_MAX_K)
			ok = WideTryConfig<ODP_KNN_FAST_MAX_K, 1>(dev, m, dims, dcs[t], &cand[ncand]);
		if (ok)
			ncand++;
	}
	if (ncand == 0 && k > ODP_KNN_FAST_MAX_K)
	{
		for (int t = 0; t < 2; t++)
			if (WideTryConfig<0, ODP_KNN_GLOBAL_CAP / 32>(dev, m, dims, dcs[t], &cand[ncand]))
				ncand++;
	}
	if (ncand == 0)
		return odp_fail(ctx, ODP_ERR_GPU,
						"the GPU offers %zu bytes of shared memory per block, too few for the float64 k-NN kernel with k = %d",
						dev->smem_per_block, k);

	best->fn = NULL;
	for (int t = 0; t < ncand; t++)
	{
		WideConfig *c = &cand[t];

		ODP_CUDA_RETURN(ctx, OdpGpuFuncSharedAtLeast((const void *) c->fn, c->smem),
						"setting the float64 k-NN kernel's shared memory size");
		ODP_CUDA_RETURN(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c->blocks_per_sm,
																		   (const void *) c->fn,
																		   WIDE_THREADS, c->smem),
						"computing the float64 k-NN kernel's occupancy");
		if (c->blocks_per_sm > 0 &&
			(best->fn == NULL || c->blocks_per_sm > best->blocks_per_sm))
			*best = *c;
	}
	if (best->fn == NULL)
		return odp_fail(ctx, ODP_ERR_GPU,
						"the float64 k-NN kernel cannot run on this GPU (no block fits a multiprocessor)");
	return ODP_OK;
}

/* See knn_gpu_wide.cuh. */
OdpStatus
OdpKnnAccumulate(OdpContext *ctx, const OdpGpuDevice *dev,
				 cudaStream_t stream, const OdpKnnProblemOf<double> *p,
				 OdpKnnStateOf<double> *state, double *compute_ms)
{
	OdpStatus	status = ODP_OK;
	WideConfig	cfg;
	WideArgs	args;
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
							   p->split_queries % WIDE_BQ != 0)) ||
		p->ascending_candidates || p->cand_bound != NULL ||
		p->tc_max_overflow > 0.0)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"invalid float64 k-NN problem (nq %lld, nc %lld, state rows %lld, k %d, dims %d)",
						(long long) p->nq, (long long) p->nc,
						(long long) state->rows, state->k, p->dims);

	status = WideChooseConfig(ctx, dev, p->metric, state->k, p->dims, &cfg);
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
	args.lpr_log2 = 0;
	while ((1 << args.lpr_log2) < cfg.dc)
		args.lpr_log2++;
	args.k = state->k;
	args.exclude_self = p->exclude_self ? 1 : 0;
	args.sd = state->dist;
	args.si = state->index;
	args.sn = state->count;
	args.bd = state->buf_dist;
	args.bi = state->buf_index;
	args.L = cfg.layout;
	args.c_total = p->nc;
	if (p->cand_split > 0 && p->cand_split < p->nc)
	{
		args.c_split = p->cand_split;
		args.qb_split = p->split_queries / WIDE_BQ;
	}
	/* candidates one query sees, which the launches below cover */
	span = args.c_split > 0 ? args.c_split : p->nc;

	/* launches of about WIDE_LAUNCH_WORK each, as the float32 kernel's */
	wave = (int64_t) cfg.blocks_per_sm * dev->sm_count;
	OdpKnnLaunchShape(p->metric, p->dims, p->nq, span, wave, WIDE_BQ, WIDE_BC,
					  cfg.nchunks, WIDE_LAUNCH_WORK, &blocks_total, &qblocks,
					  &cslice);

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
			args.q_begin = qb * WIDE_BQ;
			args.c_begin = c0;
			args.c_end = span - c0 < cslice ? span : c0 + cslice;
			cfg.fn<<<(unsigned) nb, WIDE_THREADS, cfg.smem, stream>>>(args);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the float64 k-NN distance kernel");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream),
						 "running the float64 k-NN distance kernel");
		}
	}

cleanup:
	*compute_ms += odp_now_ms() - t0;
	return status;
}
