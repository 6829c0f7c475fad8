/*-------------------------------------------------------------------------
 *
 * spatial_gpu.cu
 *	  The spatial path on the GPU (spatial.h): the k-d tree built on the
 *	  device (one CUB radix sort of all rows per level down to subtrees of
 *	  SP_LOCAL_ROWS rows, which one block each finishes in shared memory;
 *	  then the boxes level by level), then one thread per query.
 *
 * Neighbouring threads search neighbouring boxes: a self join's queries
 * are the tree's own rows in tree order, each searched from its own leaf
 * upwards; a join's are sorted by Morton code in the frame of the
 * candidates' box (the root's).  Under auto a probe of a few queries may
 * hand the call back to the brute force (spatial.h).  Scores go straight to their
 * rows on the device and come back once; so do lists where a quarter of
 * the budget holds them all, else they come back a chunk of queries at a
 * time and are put in place on the host.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/spatial_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "include/odp_distance.h"
#include "include/odp_order.h"
#include "knn/spatial.h"

#include "knn/spatial_instances.h"

/* Queries of one launch of the search: a cancel point between launches. */
#define SP_QUERY_CHUNK		((int64_t) 1 << 21)
/* Bytes of lists one chunk brings back. */
#define SP_LIST_BYTES		((size_t) 256 << 20)
#define SP_THREADS			128

/*
 * The last levels of the k-d build run a subtree of SP_LOCAL_ROWS rows per
 * block in shared memory (SpatialKdLocalKernel), where each level over all
 * rows costs a radix sort of them in device memory.
 */
#define SP_LOCAL_THREADS	256
#define SP_LOCAL_ITEMS		16
#define SP_LOCAL_ROWS		(SP_LOCAL_THREADS * SP_LOCAL_ITEMS)
#define SP_LOCAL_WARPS		(SP_LOCAL_THREADS / 32)
#define SP_LOCAL_NODES		(SP_LOCAL_ROWS / (2 * ODP_SPATIAL_LEAF))

/* The last call's tree build and search, ms: the benchmark's phases. */
extern "C" double odp_gpu_spatial_build_ms;
extern "C" double odp_gpu_spatial_search_ms;
double		odp_gpu_spatial_build_ms = 0.0;
double		odp_gpu_spatial_search_ms = 0.0;

/* The instance of spatial_body.h for each precision. */
template <typename T> struct SpatialOf;

template <> struct SpatialOf<float>
{
	typedef spatial32_Tree Tree;
	static __device__ void leaf(const float *pts, const uint32_t *order, int64_t n, int dims,
								int64_t first, int64_t j, float *lo, float *hi, uint32_t *nmin)
	{
		spatial32_leaf_box(pts, order, n, dims, first, j, lo, hi, nmin);
	}
	static __device__ void merge(int dims, int64_t v, float *lo, float *hi, uint32_t *nmin)
	{
		spatial32_merge_box(dims, v, lo, hi, nmin);
	}
	static __device__ int64_t search(const Tree *t, OdpMetric m, const float *q, int64_t self,
									 int k, float *bd, uint32_t *bi)
	{
		return spatial32_search(t, m, q, self, k, bd, bi);
	}
	static __device__ int64_t search_own(const Tree *t, OdpMetric m, int64_t p, int k,
										 float *bd, uint32_t *bi)
	{
		return spatial32_search_own(t, m, p, k, bd, bi);
	}
	static __device__ double sum(const float *bd, int k)
	{
		return odp_sum_ascending(bd, k);
	}
	static const float *rows(const OdpMatrix *m)
	{
		return m->data;
	}
};

template <> struct SpatialOf<double>
{
	typedef spatial64_Tree Tree;
	static __device__ void leaf(const double *pts, const uint32_t *order, int64_t n, int dims,
								int64_t first, int64_t j, double *lo, double *hi, uint32_t *nmin)
	{
		spatial64_leaf_box(pts, order, n, dims, first, j, lo, hi, nmin);
	}
	static __device__ void merge(int dims, int64_t v, double *lo, double *hi, uint32_t *nmin)
	{
		spatial64_merge_box(dims, v, lo, hi, nmin);
	}
	static __device__ int64_t search(const Tree *t, OdpMetric m, const double *q, int64_t self,
									 int k, double *bd, uint32_t *bi)
	{
		return spatial64_search(t, m, q, self, k, bd, bi);
	}
	static __device__ int64_t search_own(const Tree *t, OdpMetric m, int64_t p, int k,
										 double *bd, uint32_t *bi)
	{
		return spatial64_search_own(t, m, p, k, bd, bi);
	}
	static __device__ double sum(const double *bd, int k)
	{
		return odp_sum_ascending64(bd, k);
	}
	static const double *rows(const OdpMatrix *m)
	{
		return m->data64;
	}
};

static unsigned
SpatialGrid(int64_t n)
{
	int64_t		g = (n + SP_THREADS - 1) / SP_THREADS;

	return (unsigned) (g < 1 ? 1 : g);
}

/* Morton codes of rows in frame f, and their indexes. */
template <typename T>
static __global__ void
SpatialKeyKernel(const T *v, int64_t n, OdpSpatialFrame f, uint64_t *key, uint32_t *idx)
{
	const int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (r >= n)
		return;
	key[r] = odp_spatial_key(&f, (double) v[r * f.dims],
							 f.dims > 1 ? (double) v[r * f.dims + 1] : 0.0,
							 f.dims > 2 ? (double) v[r * f.dims + 2] : 0.0);
	idx[r] = (uint32_t) r;
}

/* Rows in sorted order. */
template <typename T>
static __global__ void
SpatialGatherKernel(const T *v, const uint32_t *order, int64_t n, int dims, T *out)
{
	const int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (r >= n)
		return;
	for (int d = 0; d < dims; d++)
		out[r * dims + d] = v[(int64_t) order[r] * dims + d];
}

/* The 32-bit order key of a value (the high half of a double's). */
static __device__ __forceinline__ uint32_t
SpatialOrd32(float x)
{
	uint32_t	u = __float_as_uint(x + 0.0f);

	return (u >> 31) ? ~u : (u | 0x80000000u);
}

static __device__ __forceinline__ uint32_t
SpatialOrd32(double x)
{
	return (uint32_t) (odp_order_float64(x) >> 32);
}

/*
 * Keys of one level of the k-d build: a row's node (its position over
 * the level's span) above its value in the level's dimension.  Rows stay
 * where they came; order[p] is the row at tree position p.
 */
template <typename T>
static __global__ void
SpatialKdKeyKernel(const T *rows, const uint32_t *order, int64_t n, int dims, int dim,
				   int64_t span, uint64_t *key)
{
	const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (p >= n)
		return;
	key[p] = ((uint64_t) (p / span) << 32) | SpatialOrd32(rows[(int64_t) order[p] * dims + dim]);
}

static __global__ void
SpatialIotaKernel(uint32_t *order, int64_t n)
{
	const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (p < n)
		order[p] = (uint32_t) p;
}

typedef cub::BlockRadixSort<uint32_t, SP_LOCAL_THREADS, SP_LOCAL_ITEMS, uint16_t> SpatialLocalSort;

/* SpatialKdLocalKernel's shared memory: the sort's, then the counts'. */
struct SpatialLocalShared
{
	union
	{
		SpatialLocalSort::TempStorage sort;
		uint16_t	count[SP_LOCAL_WARPS][SP_LOCAL_NODES];
	}			u;
	uint16_t	pos[SP_LOCAL_ROWS];		/* each row's place in the subtree */
	uint16_t	by[ODP_SPATIAL_MAX_DIMS][SP_LOCAL_ROWS];	/* rows by value */
};

/*
 * The levels of spans span0 .. 2 * LEAF of the k-d build (level0 the
 * first's), for the subtree at positions [b * span0, (b + 1) * span0) of
 * block b, in shared memory; order is the rows' order after the levels
 * above, and the subtree's rows go to order_out and pts_out in tree order.
 *
 * Each dimension's rows are sorted by value once (by[d]).  A level then
 * keeps each node's rows in the order of by[d] and splits them at the
 * middle: a stable ranking of by[d] by node (pos / span), whose rank is
 * the row's new place, as a radix sort of (node, value) would give.
 * Each warp ranks an eighth of by[d]: it counts its rows of each node,
 * the counts of the warps before it give its start in each node, and a
 * row's rank among the warp's 32 rows of its node comes from
 * __match_any_sync.
 */
template <typename T>
static __global__ void __launch_bounds__(SP_LOCAL_THREADS)
SpatialKdLocalKernel(const T *rows, const uint32_t *order, int64_t n, int dims, int level0,
					 int span0, uint32_t *order_out, T *pts_out)
{
	extern __shared__ __align__(16) unsigned char sp_local_raw[];
	SpatialLocalShared *sh = reinterpret_cast<SpatialLocalShared *>(sp_local_raw);
	const int64_t base = (int64_t) blockIdx.x * span0;
	const int	cnt = (int) (n - base < span0 ? n - base : span0);
	const int	warp = threadIdx.x / 32;
	const int	lane = threadIdx.x % 32;
	const int	chunk = SP_LOCAL_ROWS / SP_LOCAL_WARPS;
	int			level = level0;

	for (int d = 0; d < dims; d++)
	{
		uint32_t	key[SP_LOCAL_ITEMS];
		uint16_t	row[SP_LOCAL_ITEMS];

		for (int i = 0; i < SP_LOCAL_ITEMS; i++)
		{
			const int	r = threadIdx.x * SP_LOCAL_ITEMS + i;

			/* padding sorts last: no value's key is all ones (no NaN) */
			key[i] = r < cnt ? SpatialOrd32(rows[(int64_t) order[base + r] * dims + d]) : 0xFFFFFFFFu;
			row[i] = (uint16_t) r;
		}
		SpatialLocalSort(sh->u.sort).Sort(key, row);
		for (int i = 0; i < SP_LOCAL_ITEMS; i++)
			sh->by[d][threadIdx.x * SP_LOCAL_ITEMS + i] = row[i];
		__syncthreads();
	}
	for (int r = threadIdx.x; r < SP_LOCAL_ROWS; r += SP_LOCAL_THREADS)
		sh->pos[r] = (uint16_t) r;
	__syncthreads();

	for (int span = span0; span > ODP_SPATIAL_LEAF; span /= 2, level++)
	{
		const uint16_t *by = sh->by[level % dims];
		const int	nodes = span0 / span;

		for (int v = threadIdx.x; v < SP_LOCAL_WARPS * SP_LOCAL_NODES; v += SP_LOCAL_THREADS)
			sh->u.count[v / SP_LOCAL_NODES][v % SP_LOCAL_NODES] = 0;
		__syncthreads();
		/* each warp counts its rows of each node */
		for (int j = warp * chunk + lane; j < (warp + 1) * chunk; j += 32)
		{
			const int	r = by[j];
			const bool	real = r < cnt;
			const int	node = real ? sh->pos[r] / span : -1;
			const unsigned peers = __match_any_sync(0xffffffffu, node);

			if (real && lane == __ffs(peers) - 1)
				sh->u.count[warp][node] += (uint16_t) __popc(peers);
		}
		__syncthreads();
		/* each node's start for each warp: the node's first place, then
		 * the rows the warps before took */
		for (int v = threadIdx.x; v < nodes; v += SP_LOCAL_THREADS)
		{
			int			at = v * span;

			for (int w = 0; w < SP_LOCAL_WARPS; w++)
			{
				const int	c = sh->u.count[w][v];

				sh->u.count[w][v] = (uint16_t) at;
				at += c;
			}
		}
		__syncthreads();
		for (int j = warp * chunk + lane; j < (warp + 1) * chunk; j += 32)
		{
			const int	r = by[j];
			const bool	real = r < cnt;
			const int	node = real ? sh->pos[r] / span : -1;
			const unsigned peers = __match_any_sync(0xffffffffu, node);
			const int	start = real ? sh->u.count[warp][node] : 0;

			__syncwarp();
			if (real)
			{
				sh->pos[r] = (uint16_t) (start + __popc(peers & ((1u << lane) - 1)));
				if (lane == __ffs(peers) - 1)
					sh->u.count[warp][node] = (uint16_t) (start + __popc(peers));
			}
			__syncwarp();
		}
		__syncthreads();
	}
	for (int r = threadIdx.x; r < cnt; r += SP_LOCAL_THREADS)
	{
		const uint32_t g = order[base + r];
		const int64_t p = base + sh->pos[r];

		order_out[p] = g;
		for (int d = 0; d < dims; d++)
			pts_out[p * dims + d] = rows[(int64_t) g * dims + d];
	}
}

template <typename T>
static __global__ void
SpatialLeafKernel(const T *pts, const uint32_t *order, int64_t n, int dims, int64_t first,
			 T *lo, T *hi, uint32_t *nmin)
{
	const int64_t j = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (j > first)
		return;
	SpatialOf<T>::leaf(pts, order, n, dims, first, j, lo, hi, nmin);
}

/* Inner nodes [v0, v0 + count) of one level. */
template <typename T>
static __global__ void
SpatialMergeKernel(int dims, int64_t v0, int64_t count, T *lo, T *hi, uint32_t *nmin)
{
	const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= count)
		return;
	SpatialOf<T>::merge(dims, v0 + i, lo, hi, nmin);
}

/*
 * Searches nq sorted queries from s0, stride apart: query s is row
 * qorder[s], at qpts + s * dims; a self join's queries are the tree's own
 * rows, each searched from its leaf up, itself skipped.  Scores go to
 * scores[row]; lists to dist and index at the row (at_row) or at the
 * query's place in the launch.  The distances computed add up a warp at a
 * time into *evals.
 */
template <typename T, int KMAX>
static __global__ void __launch_bounds__(SP_THREADS)
SpatialSearchKernel(typename SpatialOf<T>::Tree t, OdpMetric metric, int k, bool self_join,
			   const T *qpts, const uint32_t *qorder, int64_t s0, int64_t stride, int64_t nq,
			   double *scores, double *dist, int64_t *index, bool at_row,
			   unsigned long long *evals)
{
	const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const int64_t s = s0 + i * stride;
	T			bd[KMAX];
	uint32_t	bi[KMAX];
	unsigned long long e = 0;

	if (i < nq)
	{
		const int64_t q = (int64_t) qorder[s];

		if (self_join)
			e = (unsigned long long) SpatialOf<T>::search_own(&t, metric, s, k, bd, bi);
		else
			e = (unsigned long long) SpatialOf<T>::search(&t, metric, qpts + s * t.dims,
														 -1, k, bd, bi);
		if (scores != NULL)
			scores[q] = SpatialOf<T>::sum(bd, k);
		else
		{
			const int64_t at = (at_row ? q : i) * k;

			for (int j = 0; j < k; j++)
			{
				dist[at + j] = (double) bd[j];
				index[at + j] = (int64_t) bi[j];
			}
		}
	}
	/* one atomic a warp: one per query stalled 10^8 queries on one word */
	for (int off = 16; off > 0; off /= 2)
		e += __shfl_down_sync(0xffffffffu, e, off);
	if ((threadIdx.x & 31) == 0 && e != 0)
		atomicAdd(evals, e);
}

/* One call's device state. */
template <typename T>
struct SpatialGpu
{
	OdpContext *ctx;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream;
	int64_t		n;
	int			dims;
	int64_t		first_leaf;
	OdpSpatialFrame frame;
	T		   *d_rows;			/* input rows, then reused */
	T		   *d_pts;			/* tree order */
	uint32_t   *d_order;
	T		   *d_lo;
	T		   *d_hi;
	uint32_t   *d_nmin;
	T		   *d_qpts;			/* sorted queries (a join) */
	uint32_t   *d_qorder;
	unsigned long long *d_counts;	/* distances computed */
};

/* Allocates n bytes of the call's arena into *p. */
template <typename T, typename P>
static OdpStatus
SpatialAlloc(SpatialGpu<T> *g, size_t bytes, const char *what, P **p)
{
	return OdpGpuArenaAlloc(g->ctx, &g->arena, bytes, what, (void **) p);
}

/*
 * Sorts rows (d_in, n of them) by Morton code in g's frame into d_sorted
 * (their values) and d_order (their indexes), through d_key scratch.
 */
template <typename T>
static OdpStatus
SpatialSortRows(SpatialGpu<T> *g, const T *d_in, int64_t n, T *d_sorted, uint32_t *d_order)
{
	OdpContext *ctx = g->ctx;
	OdpStatus	status = ODP_OK;
	uint64_t   *d_key = NULL;
	uint64_t   *d_key2 = NULL;
	uint32_t   *d_idx = NULL;
	void	   *d_temp = NULL;
	size_t		temp_bytes = 0;
	const int	bits = odp_spatial_key_bits(g->dims);

	ODP_TRY(SpatialAlloc(g, sizeof(uint64_t) * (size_t) n, "Morton codes", &d_key));
	ODP_TRY(SpatialAlloc(g, sizeof(uint64_t) * (size_t) n, "Morton codes", &d_key2));
	ODP_TRY(SpatialAlloc(g, sizeof(uint32_t) * (size_t) n, "row order", &d_idx));
	SpatialKeyKernel<T><<<SpatialGrid(n), SP_THREADS, 0, g->stream>>>(d_in, n, g->frame, d_key, d_idx);
	ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "computing Morton codes");
	ODP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, d_key, d_key2, d_idx,
													  d_order, (int64_t) n, 0, bits, g->stream),
				 "sizing the sort of Morton codes");
	ODP_TRY(SpatialAlloc(g, temp_bytes, "sort scratch", &d_temp));
	ODP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(d_temp, temp_bytes, d_key, d_key2, d_idx,
													  d_order, (int64_t) n, 0, bits, g->stream),
				 "sorting Morton codes");
	SpatialGatherKernel<T><<<SpatialGrid(n), SP_THREADS, 0, g->stream>>>(d_in, d_order, n, g->dims, d_sorted);
	ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "ordering rows");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g->stream), "ordering rows");
cleanup:
	OdpGpuArenaFree(&g->arena, d_temp);
	OdpGpuArenaFree(&g->arena, d_idx);
	OdpGpuArenaFree(&g->arena, d_key2);
	OdpGpuArenaFree(&g->arena, d_key);
	return status;
}

/*
 * Orders the candidates (d_rows) as a k-d tree in the heap's shape into
 * d_pts and d_order: level by level, every node's rows sorted by the
 * level's dimension (one radix sort of node and value for all nodes,
 * carrying the row indexes), so that its first half of leaves takes the
 * smaller ones; the levels of subtrees of SP_LOCAL_ROWS rows and less in
 * shared memory, which also put the rows in tree order.
 */
template <typename T>
static OdpStatus
SpatialKdBuild(SpatialGpu<T> *g)
{
	OdpContext *ctx = g->ctx;
	OdpStatus	status = ODP_OK;
	const int64_t n = g->n;
	uint64_t   *d_key = NULL;
	uint64_t   *d_key2 = NULL;
	uint32_t   *d_order2 = NULL;
	void	   *d_temp = NULL;
	size_t		temp_bytes = 0;
	uint32_t   *order = g->d_order;
	uint32_t   *order2;
	int64_t		span;
	int			level = 0;

	ODP_TRY(SpatialAlloc(g, sizeof(uint64_t) * (size_t) n, "k-d keys", &d_key));
	ODP_TRY(SpatialAlloc(g, sizeof(uint64_t) * (size_t) n, "k-d keys", &d_key2));
	ODP_TRY(SpatialAlloc(g, sizeof(uint32_t) * (size_t) n, "row order", &d_order2));
	order2 = d_order2;
	ODP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, d_key, d_key2, order,
													  order2, (int64_t) n, 0, 64, g->stream),
				 "sizing the k-d sort");
	ODP_TRY(SpatialAlloc(g, temp_bytes, "sort scratch", &d_temp));
	SpatialIotaKernel<<<SpatialGrid(n), SP_THREADS, 0, g->stream>>>(order, n);
	ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "numbering rows");
	for (span = (g->first_leaf + 1) * ODP_SPATIAL_LEAF; span > SP_LOCAL_ROWS; span /= 2, level++)
	{
		uint32_t   *to;

		SpatialKdKeyKernel<T><<<SpatialGrid(n), SP_THREADS, 0, g->stream>>>(g->d_rows, order, n, g->dims,
																			level % g->dims, span, d_key);
		ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "keying a k-d level");
		ODP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(d_temp, temp_bytes, d_key, d_key2, order,
														  order2, (int64_t) n, 0, 32 + level + 1,
														  g->stream),
					 "sorting a k-d level");
		to = order;
		order = order2;
		order2 = to;
	}
	if (span > ODP_SPATIAL_LEAF)
	{
		const size_t smem = sizeof(SpatialLocalShared);

		/* the subtrees write d_order: their input is the other buffer */
		if (order == g->d_order)
		{
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(order2, order, sizeof(uint32_t) * (size_t) n,
											  cudaMemcpyDeviceToDevice, g->stream), "ordering rows");
			order = order2;
		}
		ODP_CUDA_TRY(ctx, cudaFuncSetAttribute((const void *) SpatialKdLocalKernel<T>,
											   cudaFuncAttributeMaxDynamicSharedMemorySize,
											   (int) smem), "setting up the k-d subtrees");
		SpatialKdLocalKernel<T><<<(unsigned) ((n + span - 1) / span), SP_LOCAL_THREADS, smem,
			g->stream>>>(g->d_rows, order, n, g->dims, level, (int) span, g->d_order, g->d_pts);
		ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "building the k-d subtrees");
	}
	else
	{
		if (order != g->d_order)
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(g->d_order, order, sizeof(uint32_t) * (size_t) n,
											  cudaMemcpyDeviceToDevice, g->stream), "ordering rows");
		SpatialGatherKernel<T><<<SpatialGrid(n), SP_THREADS, 0, g->stream>>>(g->d_rows, g->d_order, n,
																			 g->dims, g->d_pts);
		ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "ordering rows");
	}
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g->stream), "building the k-d tree");
cleanup:
	OdpGpuArenaFree(&g->arena, d_temp);
	OdpGpuArenaFree(&g->arena, d_order2);
	OdpGpuArenaFree(&g->arena, d_key2);
	OdpGpuArenaFree(&g->arena, d_key);
	return status;
}

/* Builds the tree over the candidates, uploaded to d_rows. */
template <typename T>
static OdpStatus
SpatialBuild(SpatialGpu<T> *g)
{
	OdpContext *ctx = g->ctx;
	OdpStatus	status = ODP_OK;

	ODP_TRY(SpatialKdBuild(g));
	SpatialLeafKernel<T><<<SpatialGrid(g->first_leaf + 1), SP_THREADS, 0, g->stream>>>(g->d_pts, g->d_order, g->n, g->dims,
																			   g->first_leaf, g->d_lo, g->d_hi,
																			   g->d_nmin);
	ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "boxing the leaves");
	for (int64_t width = (g->first_leaf + 1) / 2; width >= 1; width /= 2)
	{
		SpatialMergeKernel<T><<<SpatialGrid(width), SP_THREADS, 0, g->stream>>>(g->dims, width - 1, width, g->d_lo,
																	   g->d_hi, g->d_nmin);
		ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "boxing the tree");
	}
cleanup:
	return status;
}

/*
 * The frame of a join's Morton order: the candidates' box, the root's
 * (every row's smallest and largest value in each dimension).
 */
template <typename T>
static OdpStatus
SpatialRootFrame(SpatialGpu<T> *g)
{
	OdpContext *ctx = g->ctx;
	OdpStatus	status = ODP_OK;
	T			lo[ODP_SPATIAL_MAX_DIMS],
				hi[ODP_SPATIAL_MAX_DIMS];
	double		flo[ODP_SPATIAL_MAX_DIMS],
				fhi[ODP_SPATIAL_MAX_DIMS];

	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(lo, g->d_lo, sizeof(T) * g->dims, cudaMemcpyDeviceToHost,
									  g->stream), "finding the box frame");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(hi, g->d_hi, sizeof(T) * g->dims, cudaMemcpyDeviceToHost,
									  g->stream), "finding the box frame");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g->stream), "finding the box frame");
	for (int d = 0; d < g->dims; d++)
	{
		flo[d] = (double) lo[d];
		fhi[d] = (double) hi[d];
	}
	odp_spatial_frame(&g->frame, g->dims, flo, fhi);
cleanup:
	return status;
}

/* Launches SpatialSearchKernel for lists of KMAX (see there). */
template <typename T, int KMAX>
static void
SpatialLaunchSized(SpatialGpu<T> *g, const typename SpatialOf<T>::Tree &t, OdpMetric metric, int k,
			   bool self_join, const T *qpts, const uint32_t *qorder, int64_t s0, int64_t stride,
			   int64_t nq, double *scores, double *dist, int64_t *index, bool at_row)
{
	SpatialSearchKernel<T, KMAX><<<SpatialGrid(nq), SP_THREADS, 0, g->stream>>>(
		t, metric, k, self_join, qpts, qorder, s0, stride, nq, scores, dist, index, at_row,
		g->d_counts);
}

/*
 * Launches the search of nq sorted queries from s0, stride apart, for k's
 * bucket of list sizes.
 */
template <typename T>
static void
SpatialLaunch(SpatialGpu<T> *g, OdpMetric metric, int k, bool self_join, const T *qpts,
		 const uint32_t *qorder, int64_t s0, int64_t stride, int64_t nq, double *scores,
		 double *dist, int64_t *index, bool at_row)
{
	typename SpatialOf<T>::Tree t;

	t.n = g->n;
	t.dims = g->dims;
	t.first_leaf = g->first_leaf;
	t.pts = g->d_pts;
	t.order = g->d_order;
	t.lo = g->d_lo;
	t.hi = g->d_hi;
	t.nmin = g->d_nmin;
	if (k <= 8)
		SpatialLaunchSized<T, 8>(g, t, metric, k, self_join, qpts, qorder, s0, stride, nq, scores, dist,
							 index, at_row);
	else if (k <= 16)
		SpatialLaunchSized<T, 16>(g, t, metric, k, self_join, qpts, qorder, s0, stride, nq, scores, dist,
							  index, at_row);
	else if (k <= 32)
		SpatialLaunchSized<T, 32>(g, t, metric, k, self_join, qpts, qorder, s0, stride, nq, scores, dist,
							  index, at_row);
	else if (k <= 64)
		SpatialLaunchSized<T, 64>(g, t, metric, k, self_join, qpts, qorder, s0, stride, nq, scores, dist,
							  index, at_row);
	else
		SpatialLaunchSized<T, ODP_SPATIAL_MAX_K>(g, t, metric, k, self_join, qpts, qorder, s0, stride, nq,
											 scores, dist, index, at_row);
}

/*
 * Auto's probe (spatial.h): searches ODP_SPATIAL_PROBE_QUERIES of the nq
 * sorted queries, spread over them, and says whether their distances
 * decline the path.
 */
template <typename T>
static OdpStatus
SpatialProbe(SpatialGpu<T> *g, OdpMetric metric, int k, bool self_join, const T *qpts,
			 const uint32_t *qorder, int64_t nq, bool *declined)
{
	OdpContext *ctx = g->ctx;
	OdpStatus	status = ODP_OK;
	double	   *d_dist = NULL;
	int64_t    *d_index = NULL;
	unsigned long long evals = 0;

	ODP_TRY(SpatialAlloc(g, sizeof(double) * ODP_SPATIAL_PROBE_QUERIES * k, "probe lists", &d_dist));
	ODP_TRY(SpatialAlloc(g, sizeof(int64_t) * ODP_SPATIAL_PROBE_QUERIES * k, "probe lists", &d_index));
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(g->d_counts, 0, sizeof(unsigned long long), g->stream),
				 "clearing a counter");
	SpatialLaunch(g, metric, k, self_join, qpts, qorder, odp_spatial_probe_query(0, nq),
				  odp_spatial_probe_query(1, nq), ODP_SPATIAL_PROBE_QUERIES, NULL, d_dist, d_index,
				  false);
	ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "probing the spatial tree");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&evals, g->d_counts, sizeof(evals), cudaMemcpyDeviceToHost,
									  g->stream), "probing the spatial tree");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g->stream), "probing the spatial tree");
	*declined = odp_spatial_probe_declines((int64_t) evals, g->n);
cleanup:
	OdpGpuArenaFree(&g->arena, d_index);
	OdpGpuArenaFree(&g->arena, d_dist);
	return status;
}

template <typename T>
static void
SpatialRelease(SpatialGpu<T> *g)
{
	if (g->stream != NULL)
	{
		(void) cudaStreamSynchronize(g->stream);
		(void) cudaStreamDestroy(g->stream);
	}
	OdpGpuArenaRelease(&g->arena);
}

/* The GPU spatial path over rows of type T; see spatial.h. */
template <typename T>
static OdpStatus
SpatialRun(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
	  OdpMetric metric, int32_t k, bool self_join, const OdpSpatialOut *out)
{
	SpatialGpu<T>	g;
	OdpStatus	status = ODP_OK;
	const int64_t nq = queries->rows;
	const size_t row_bytes = sizeof(T) * (size_t) cands->dims;
	const T    *qpts;
	const uint32_t *qorder;
	uint32_t   *h_qorder = NULL;
	double	   *d_scores = NULL;
	double	   *d_dist = NULL;
	int64_t    *d_index = NULL;
	double	   *h_dist = NULL;
	int64_t    *h_index = NULL;
	int64_t		chunk;
	bool		at_row = false;
	unsigned long long evals = 0;
	double		start = odp_now_ms();
	double		t0;

	memset(&g, 0, sizeof(g));
	g.ctx = ctx;
	g.n = cands->rows;
	g.dims = cands->dims;
	g.first_leaf = odp_spatial_first_leaf(g.n);
	ctx->transfer_ms = 0.0;
	ctx->chunks = 0;
	ODP_TRY(OdpGpuBegin(ctx, &g.dev));
	OdpGpuArenaInit(&g.arena, g.dev.budget);
	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	{
		const int64_t nodes = 2 * (g.first_leaf + 1) - 1;

		ODP_TRY(SpatialAlloc(&g, row_bytes * (size_t) g.n, "rows", &g.d_rows));
		ODP_TRY(SpatialAlloc(&g, row_bytes * (size_t) g.n, "rows in tree order", &g.d_pts));
		ODP_TRY(SpatialAlloc(&g, sizeof(uint32_t) * (size_t) g.n, "row order", &g.d_order));
		ODP_TRY(SpatialAlloc(&g, sizeof(T) * (size_t) nodes * g.dims, "tree boxes", &g.d_lo));
		ODP_TRY(SpatialAlloc(&g, sizeof(T) * (size_t) nodes * g.dims, "tree boxes", &g.d_hi));
		ODP_TRY(SpatialAlloc(&g, sizeof(uint32_t) * (size_t) nodes, "tree indexes", &g.d_nmin));
		ODP_TRY(SpatialAlloc(&g, sizeof(unsigned long long), "counters",
						&g.d_counts));
	}
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, g.d_rows, SpatialOf<T>::rows(cands), row_bytes * (size_t) g.n, g.stream), "copying rows to the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "copying rows to the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;
	t0 = odp_now_ms();
	ODP_TRY(SpatialBuild(&g));
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "building the spatial tree");
	odp_gpu_spatial_build_ms = odp_now_ms() - t0;

	if (self_join)
	{
		qpts = g.d_pts;
		qorder = g.d_order;
	}
	else
	{
		/* the queries, sorted in the candidates' frame, reuse d_rows */
		OdpGpuArenaFree(&g.arena, g.d_rows);
		g.d_rows = NULL;
		ODP_TRY(SpatialAlloc(&g, row_bytes * (size_t) nq, "query rows", &g.d_rows));
		ODP_TRY(SpatialAlloc(&g, row_bytes * (size_t) nq, "sorted query rows", &g.d_qpts));
		ODP_TRY(SpatialAlloc(&g, sizeof(uint32_t) * (size_t) nq, "query order", &g.d_qorder));
		t0 = odp_now_ms();
		ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, g.d_rows, SpatialOf<T>::rows(queries), row_bytes * (size_t) nq, g.stream),
					 "copying query rows to the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "copying query rows to the GPU");
		ctx->transfer_ms += odp_now_ms() - t0;
		ODP_TRY(SpatialRootFrame(&g));
		ODP_TRY(SpatialSortRows(&g, g.d_rows, nq, g.d_qpts, g.d_qorder));
		qpts = g.d_qpts;
		qorder = g.d_qorder;
	}
	if (odp_spatial_probe_wanted(ctx->spatial, nq, g.n))
	{
		bool		declined;

		ODP_TRY(SpatialProbe(&g, metric, k, self_join, qpts, qorder, nq, &declined));
		if (declined)
		{
			ctx->spatial_used = 0;
			goto cleanup;
		}
	}
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(g.d_counts, 0, sizeof(unsigned long long), g.stream),
				 "clearing a counter");

	if (out->scores != NULL)
	{
		ODP_TRY(SpatialAlloc(&g, sizeof(double) * (size_t) nq, "scores", &d_scores));
		chunk = SP_QUERY_CHUNK;
	}
	else if (g.dev.budget == 0 ||
			 (size_t) nq * k * (sizeof(double) + sizeof(int64_t)) <= g.dev.budget / 4)
	{
		/* every list on the device at its row, copied back at once */
		at_row = true;
		chunk = SP_QUERY_CHUNK;
		ODP_TRY(SpatialAlloc(&g, sizeof(double) * (size_t) nq * k, "lists", &d_dist));
		ODP_TRY(SpatialAlloc(&g, sizeof(int64_t) * (size_t) nq * k, "lists", &d_index));
	}
	else
	{
		const size_t list_bytes = g.dev.budget / 4 < SP_LIST_BYTES ? g.dev.budget / 4 : SP_LIST_BYTES;

		chunk = (int64_t) (list_bytes / ((size_t) k * (sizeof(double) + sizeof(int64_t))));
		if (chunk > nq)
			chunk = nq;
		if (chunk < 1)
			chunk = 1;
		ODP_TRY(SpatialAlloc(&g, sizeof(double) * (size_t) chunk * k, "lists", &d_dist));
		ODP_TRY(SpatialAlloc(&g, sizeof(int64_t) * (size_t) chunk * k, "lists", &d_index));
		h_dist = (double *) malloc(sizeof(double) * (size_t) chunk * k);
		h_index = (int64_t *) malloc(sizeof(int64_t) * (size_t) chunk * k);
		h_qorder = (uint32_t *) malloc(sizeof(uint32_t) * (size_t) nq);
		if (h_dist == NULL || h_index == NULL || h_qorder == NULL)
		{
			status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for k-NN lists");
			goto cleanup;
		}
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(h_qorder, qorder, sizeof(uint32_t) * (size_t) nq,
										  cudaMemcpyDeviceToHost, g.stream), "copying the query order");
	}

	t0 = odp_now_ms();
	for (int64_t s0 = 0; s0 < nq; s0 += chunk)
	{
		const int64_t m = nq - s0 < chunk ? nq - s0 : chunk;

		if (odp_cancel_requested(ctx))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "the computation was cancelled");
			goto cleanup;
		}
		SpatialLaunch(&g, metric, k, self_join, qpts, qorder, s0, 1, m, d_scores, d_dist, d_index, at_row);
		ODP_CUDA_TRY_LAUNCH(ctx, g.stream, "searching the spatial tree");
		ctx->chunks++;
		if (out->scores == NULL && !at_row)
		{
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(h_dist, d_dist, sizeof(double) * (size_t) m * k,
											  cudaMemcpyDeviceToHost, g.stream), "copying lists");
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(h_index, d_index, sizeof(int64_t) * (size_t) m * k,
											  cudaMemcpyDeviceToHost, g.stream), "copying lists");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "searching the spatial tree");
			for (int64_t i = 0; i < m; i++)
			{
				const int64_t q = (int64_t) h_qorder[s0 + i];

				memcpy(out->dist + q * k, h_dist + i * k, sizeof(double) * (size_t) k);
				memcpy(out->index + q * k, h_index + i * k, sizeof(int64_t) * (size_t) k);
			}
		}
		else
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "searching the spatial tree");
	}
	odp_gpu_spatial_search_ms = odp_now_ms() - t0;
	t0 = odp_now_ms();
	if (out->scores != NULL)
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out->scores, d_scores, sizeof(double) * (size_t) nq,
										  cudaMemcpyDeviceToHost, g.stream), "copying scores");
	if (at_row)
	{
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out->dist, d_dist, sizeof(double) * (size_t) nq * k,
										  cudaMemcpyDeviceToHost, g.stream), "copying lists");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out->index, d_index, sizeof(int64_t) * (size_t) nq * k,
										  cudaMemcpyDeviceToHost, g.stream), "copying lists");
	}
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&evals, g.d_counts, sizeof(evals), cudaMemcpyDeviceToHost,
									  g.stream), "copying a counter");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "copying scores");
	ctx->transfer_ms += odp_now_ms() - t0;
	ctx->spatial_distances = (int64_t) evals;

cleanup:
	SpatialRelease(&g);
	free(h_dist);
	free(h_index);
	free(h_qorder);
	ctx->compute_ms = odp_now_ms() - start - ctx->transfer_ms;
	return status;
}

/* See spatial.h. */
OdpStatus
odp_gpu_spatial_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
					OdpMetric metric, int32_t k, bool self_join, const OdpSpatialOut *out)
{
	if (odp_matrix_is64(cands))
		return SpatialRun<double>(ctx, queries, cands, metric, k, self_join, out);
	return SpatialRun<float>(ctx, queries, cands, metric, k, self_join, out);
}
