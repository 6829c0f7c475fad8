/*-------------------------------------------------------------------------
 *
 * knn_gpu_few.cu
 *	  A few k-NN queries (odp_knn's single query, the GPU service's shared
 *	  passes) against many float32 candidates on the GPU: every distance
 *	  into device memory, then each query's k smallest by a radix select.
 *
 * The tiled kernel of knn_gpu.cu owns 64 queries a block and fills the
 * GPU only with many queries; one query there left most lanes idle and
 * took 6 ms over 10^6 x 128 rows on the H200.  Here one thread computes
 * one candidate's distances to every query, reading its row once, in
 * 16-byte loads where the rows allow, with odp_dist_step in index order
 * (the file is compiled with -fmad=false): the same bits as the CPU path.
 * A block stages the queries' values in shared memory a tile of
 * dimensions at a time, so that 32 queries cost one shared load per
 * query and four values.  A candidate matrix the call holds on the device
 * (the GPU service's table cache) is read in place: no copy at all.
 *
 * The selection keys each distance by (its bits, its row): the distances
 * of these metrics are +0 or more, so the bits order them as floats, and
 * the keys are distinct and ordered as the engine's tie rule (distance,
 * then index).  A radix select over all queries at once, 11 bits a pass
 * from the top, finds the key of each query's k-th; a pass counts the
 * keys under the prefix chosen so far in shared-memory histograms, and a
 * block a query picks the next digit.  Most calls end after the three
 * passes of the distance's bits; the row's bits only decide ties that
 * straddle the k-th.  The keys at or below the k-th are exactly k: they
 * are gathered (in no order) and the host orders each query's k with the
 * CPU path's heap.  Sorting every distance instead (a radix sort a
 * query) took 8 sorts and 8 waits a pass of 8 queries.
 *
 * Candidates are taken in chunks, so that the distances of 32 queries
 * over a table of 10^8 rows need not fit the device at once; each
 * chunk's k per query join the host's heap.  The scratch is allocated in
 * the stream's order: passes run side by side in the GPU service, and
 * cudaFree would make each wait for the others' kernels.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_few.cu
 *
 *-------------------------------------------------------------------------
 */
#include <cub/block/block_scan.cuh>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "include/odp_cost.h"
#include "include/odp_distance.h"
#include "knn/knn_internal.h"

#define ODP_HEAP_PREFIX few_heap
#define ODP_HEAP_KEY float
#include "common/select_heap.h"

#define FEW_THREADS		256
#define FEW_DIM_TILE	32		/* dimensions of the queries staged at once */
#define FEW_CHUNK_VALUES ((int64_t) 1 << 25)	/* distances held at once */
#define SEL_BITS		11		/* a pass's digit, at most */
#define SEL_BINS		(1 << SEL_BITS)
#define SEL_THREADS		256
#define SEL_PER_THREAD	(SEL_BINS / SEL_THREADS)
#define SEL_BLOCKS_MAX	128		/* blocks a query's count or gather */
#define SEL_BLOCKS_ALL	1024	/* and all queries' together, if more */

/* Test counter: calls that took this path. */
int64_t		odp_gpu_knn_few_runs = 0;

/* A query's radix select: the key's top bits chosen so far. */
typedef struct FewSelect
{
	unsigned long long prefix;	/* the top "bits" bits of the k-th key */
	int32_t		bits;
	int32_t		need;			/* keys still to take under prefix */
	int32_t		done;			/* every key under prefix is taken */
	int32_t		pad;
} FewSelect;

/* See knn_internal.h. */
extern "C" bool
odp_gpu_knn_few_fits(const OdpMatrix *queries, const OdpMatrix *cands, OdpMetric metric,
					 int32_t k, bool self_join)
{
	return odp_knn_few_shape(queries->rows, cands->rows, k, odp_matrix_is64(queries),
							 self_join, metric);
}

/* Adds four values v of a row, at t in the queries' tile, to each query's acc. */
template <OdpMetric metric, int QB>
__device__ static inline void
FewStep4(float *acc, const float *t, float4 v, int nq)
{
#pragma unroll
	for (int q = 0; q < QB; q++)
		if (q < nq)
		{
			const float4 w = *(const float4 *) (t + q * FEW_DIM_TILE);

			acc[q] = odp_dist_step(metric, acc[q], w.x, v.x);
			acc[q] = odp_dist_step(metric, acc[q], w.y, v.y);
			acc[q] = odp_dist_step(metric, acc[q], w.z, v.z);
			acc[q] = odp_dist_step(metric, acc[q], w.w, v.w);
		}
}

/*
 * dist[q * stride + c] = the distance of query q (of nq <= QB) to
 * candidate c of n.  VEC: rows and tiles read 4 values at a time.  The
 * metric is a constant, so that odp_dist_step's switch folds away.
 */
template <OdpMetric metric, int QB, bool VEC>
__global__ static void
FewDistances(const float *__restrict__ cands, int64_t n, int dims,
			 const float *__restrict__ queries, int nq,
			 float *__restrict__ dist, int64_t stride)
{
	__shared__ __align__(16) float tile[QB * FEW_DIM_TILE];
	const int64_t c = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const bool	live = c < n;
	const float *row = cands + (live ? c : 0) * dims;
	float		acc[QB];

#pragma unroll
	for (int q = 0; q < QB; q++)
		acc[q] = 0.0f;
	for (int d0 = 0; d0 < dims; d0 += FEW_DIM_TILE)
	{
		const int	dt = dims - d0 < FEW_DIM_TILE ? dims - d0 : FEW_DIM_TILE;
		const bool	whole = VEC && QB <= 8 && live && dt == FEW_DIM_TILE;
		float4		v[FEW_DIM_TILE / 4];

		/*
		 * A whole tile of the row is loaded before the queries' tile is
		 * staged: eight loads in flight a thread, not one at a time (one
		 * query over 10^6 x 128 read at 2.5 TB/s of the H200's 4.8 so).
		 * Not for 32 queries, whose arithmetic bounds them: the registers
		 * would halve the threads an SM holds.
		 */
		if (whole)
#pragma unroll
			for (int u = 0; u < FEW_DIM_TILE / 4; u++)
				v[u] = __ldg((const float4 *) (row + d0) + u);
		__syncthreads();
		for (int i = threadIdx.x; i < nq * FEW_DIM_TILE; i += blockDim.x)
		{
			const int	j = i % FEW_DIM_TILE;

			tile[i] = j < dt ? queries[(size_t) (i / FEW_DIM_TILE) * dims + d0 + j] : 0.0f;
		}
		__syncthreads();
		if (!live)
			continue;
		if (whole)
#pragma unroll
			for (int u = 0; u < FEW_DIM_TILE / 4; u++)
				FewStep4<metric, QB>(acc, tile + 4 * u, v[u], nq);
		else if (VEC)
			for (int j = 0; j < dt; j += 4)
				FewStep4<metric, QB>(acc, tile + j, __ldg((const float4 *) (row + d0 + j)), nq);
		else
			for (int j = 0; j < dt; j++)
			{
				const float v = __ldg(row + d0 + j);

#pragma unroll
				for (int q = 0; q < QB; q++)
					if (q < nq)
						acc[q] = odp_dist_step(metric, acc[q], tile[q * FEW_DIM_TILE + j], v);
			}
	}
	if (live)
#pragma unroll
		for (int q = 0; q < QB; q++)
			if (q < nq)
				dist[(size_t) q * stride + c] = odp_dist_finish(metric, acc[q], 0.0f, 0.0f);
}

/* The select key of candidate c: its distance's bits, then its row. */
__device__ static inline unsigned long long
FewKey(const float *dist, int64_t c)
{
	return ((unsigned long long) __float_as_uint(dist[c]) << 32) | (unsigned int) c;
}

/* Whether key lies under (or at) the prefix s holds. */
__device__ static inline bool
FewUnder(const FewSelect *s, unsigned long long key, bool at_most)
{
	unsigned long long top;

	if (s->bits == 0)
		return true;
	top = s->bits == 64 ? key : key >> (64 - s->bits);
	return at_most ? top <= s->prefix : top == s->prefix;
}

/* Each query's select starts: take min(k, n) of n keys. */
__global__ static void
FewSelectStart(FewSelect *sel, unsigned int *hist, int32_t k, int64_t n)
{
	const int	q = blockIdx.x;

	if (threadIdx.x == 0)
	{
		sel[q].prefix = 0;
		sel[q].bits = 0;
		sel[q].need = (int32_t) (k < n ? k : n);
		sel[q].done = k >= n;
	}
	for (int i = threadIdx.x; i < SEL_BINS; i += blockDim.x)
		hist[(size_t) q * SEL_BINS + i] = 0;
}

/* One pass: query blockIdx.y's histogram of the next width bits. */
__global__ static void
FewSelectCount(const float *__restrict__ dist, int64_t stride, int64_t n,
			   const FewSelect *__restrict__ sel, unsigned int *__restrict__ hist, int width)
{
	__shared__ unsigned int h[SEL_BINS];
	const int	q = blockIdx.y;
	const FewSelect s = sel[q];
	const float *d = dist + (size_t) q * stride;
	const int	shift = 64 - s.bits - width;
	const unsigned long long mask = (1ull << width) - 1;

	if (s.done)
		return;
	for (int i = threadIdx.x; i < SEL_BINS; i += blockDim.x)
		h[i] = 0;
	__syncthreads();
	for (int64_t c = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; c < n;
		 c += (int64_t) gridDim.x * blockDim.x)
	{
		const unsigned long long key = FewKey(d, c);

		if (FewUnder(&s, key, false))
			atomicAdd(&h[(key >> shift) & mask], 1u);
	}
	__syncthreads();
	for (int i = threadIdx.x; i < SEL_BINS; i += blockDim.x)
		if (h[i] != 0)
			atomicAdd(&hist[(size_t) q * SEL_BINS + i], h[i]);
}

/*
 * One pass: query blockIdx.x's digit, the bin where its need-th key
 * lies; the bins below it are taken whole.  Clears the histogram.
 */
__global__ static void
FewSelectPick(FewSelect *sel, unsigned int *hist, int width)
{
	typedef cub::BlockScan<unsigned int, SEL_THREADS> Scan;
	__shared__ typename Scan::TempStorage scan;
	const int	q = blockIdx.x;
	unsigned int *h = hist + (size_t) q * SEL_BINS;
	const int	first = threadIdx.x * SEL_PER_THREAD;
	const unsigned int need = (unsigned int) sel[q].need;
	unsigned int mine[SEL_PER_THREAD];
	unsigned int sum = 0,
				below;

	if (sel[q].done)
		return;
	for (int i = 0; i < SEL_PER_THREAD; i++)
	{
		mine[i] = h[first + i];
		sum += mine[i];
	}
	Scan(scan).ExclusiveSum(sum, below);
	if (below < need && need <= below + sum)
	{
		for (int i = 0; i < SEL_PER_THREAD; i++)
		{
			if (need <= below + mine[i])
			{
				FewSelect  *s = &sel[q];

				s->need = (int32_t) (need - below);
				s->prefix = (s->prefix << width) | (unsigned long long) (first + i);
				s->bits += width;
				s->done = mine[i] == need - below || s->bits == 64;
				break;
			}
			below += mine[i];
		}
	}
	for (int i = 0; i < SEL_PER_THREAD; i++)
		h[first + i] = 0;
}

/* Gathers query blockIdx.y's keys at or below its k-th, in no order. */
__global__ static void
FewSelectTake(const float *__restrict__ dist, int64_t stride, int64_t n,
			  const FewSelect *__restrict__ sel, unsigned int *__restrict__ taken,
			  float *__restrict__ out_dist, unsigned int *__restrict__ out_row, int32_t k)
{
	const int	q = blockIdx.y;
	const FewSelect s = sel[q];
	const float *d = dist + (size_t) q * stride;

	for (int64_t c = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; c < n;
		 c += (int64_t) gridDim.x * blockDim.x)
	{
		const unsigned long long key = FewKey(d, c);

		if (FewUnder(&s, key, true))
		{
			const unsigned int at = atomicAdd(&taken[q], 1u);

			if (at < (unsigned int) k)
			{
				out_dist[(size_t) q * k + at] = d[c];
				out_row[(size_t) q * k + at] = (unsigned int) c;
			}
		}
	}
}

/* Launches FewDistances for metric M over the chunk (in odp_gpu_knn_few). */
#define FEW_LAUNCH_QB(M, QB) \
	do { \
		if (vec) \
			FewDistances<M, QB, true><<<grid, FEW_THREADS, 0, stream>>>(d_cands + c0 * dims, cn, dims, d_queries, nq, d_dist, chunk); \
		else \
			FewDistances<M, QB, false><<<grid, FEW_THREADS, 0, stream>>>(d_cands + c0 * dims, cn, dims, d_queries, nq, d_dist, chunk); \
	} while (0)
#define FEW_LAUNCH(M) \
	do { \
		if (nq == 1) \
			FEW_LAUNCH_QB(M, 1); \
		else if (nq <= 8) \
			FEW_LAUNCH_QB(M, 8); \
		else \
			FEW_LAUNCH_QB(M, ODP_KNN_FEW_MAX_QUERIES); \
	} while (0)

/* Byte offsets of one call's device scratch, 256-byte aligned. */
typedef struct FewScratch
{
	size_t		queries,
				dist,
				hist,
				sel,
				taken,
				out_dist,
				out_row,
				bytes;
} FewScratch;

static size_t
FewPlace(size_t *at, size_t bytes)
{
	const size_t here = *at;

	*at += (bytes + 255) & ~(size_t) 255;
	return here;
}

/* See knn_internal.h. */
extern "C" OdpStatus
odp_gpu_knn_few(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
				OdpMetric metric, int32_t k, float *dist, int64_t *index)
{
	OdpStatus	status = ODP_OK;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream = NULL;
	const int64_t n = cands->rows;
	const int	dims = cands->dims;
	const int	nq = (int) queries->rows;
	const size_t row_bytes = sizeof(float) * (size_t) dims;
	const int64_t chunk = n < FEW_CHUNK_VALUES / nq ? n : FEW_CHUNK_VALUES / nq;
	const int64_t nchunks = (n + chunk - 1) / chunk;
	const size_t outs = (size_t) nchunks * nq * k;	/* gathered entries, all chunks */
	FewScratch at;
	size_t		used = 0;
	const float *d_cands;
	void	   *d_own = NULL;
	char	   *d_base = NULL;
	float	   *d_queries,
			   *d_dist,
			   *d_out_dist;
	unsigned int *d_hist,
			   *d_taken,
			   *d_out_row;
	FewSelect  *d_sel;
	char	   *h_out = NULL;	/* the gathered counts and entries */
	float	   *h_dist = NULL;
	unsigned int *h_row = NULL;
	unsigned int *h_taken = NULL;
	int32_t    *size = NULL;
	double		t0 = odp_now_ms();
	double		t1;

	ctx->transfer_ms = 0.0;
	ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	memset(&arena, 0, sizeof(arena));
	at.queries = FewPlace(&used, row_bytes * nq);
	at.dist = FewPlace(&used, sizeof(float) * (size_t) chunk * nq);
	at.hist = FewPlace(&used, sizeof(unsigned int) * SEL_BINS * nq);
	at.sel = FewPlace(&used, sizeof(FewSelect) * nq);
	at.taken = FewPlace(&used, sizeof(unsigned int) * nchunks * nq);
	at.out_dist = FewPlace(&used, sizeof(float) * outs);
	at.out_row = FewPlace(&used, sizeof(unsigned int) * outs);
	at.bytes = used;

	ODP_TRY(OdpGpuBegin(ctx, &dev));
	OdpGpuArenaInit(&arena, dev.budget);
	/* taken, out_dist and out_row lie in this order: one copy back */
	h_out = (char *) malloc(at.bytes - at.taken);
	size = (int32_t *) calloc(nq, sizeof(int32_t));
	if (h_out == NULL || size == NULL)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %d neighbours", (int) k);
		goto cleanup;
	}
	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	d_cands = (const float *) OdpGpuResidentOn(ctx, cands->data, row_bytes * (size_t) n);
	if (d_cands == NULL)
	{
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, row_bytes * (size_t) n, "candidate rows", &d_own));
		ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, d_own, cands->data, row_bytes * (size_t) n, stream),
					 "copying the candidate rows to the GPU");
		d_cands = (const float *) d_own;
	}
	ODP_TRY(OdpGpuArenaAllocAsync(ctx, &arena, at.bytes, "distances and their selection",
								  stream, (void **) &d_base));
	d_queries = (float *) (d_base + at.queries);
	d_dist = (float *) (d_base + at.dist);
	d_hist = (unsigned int *) (d_base + at.hist);
	d_sel = (FewSelect *) (d_base + at.sel);
	d_taken = (unsigned int *) (d_base + at.taken);
	d_out_dist = (float *) (d_base + at.out_dist);
	d_out_row = (unsigned int *) (d_base + at.out_row);
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_taken, 0, sizeof(unsigned int) * nchunks * nq, stream),
				 "clearing the neighbours' counts");
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, d_queries, queries->data, row_bytes * (size_t) nq, stream),
				 "copying the query rows to the GPU");
	if (d_own != NULL)
	{
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the rows to the GPU");
		t1 = odp_now_ms();
		ctx->transfer_ms += t1 - t0;
	}
	else
		t1 = t0;

	for (int64_t c0 = 0, ci = 0; c0 < n; c0 += chunk, ci++)
	{
		const int64_t cn = n - c0 < chunk ? n - c0 : chunk;
		const bool	vec = dims % 4 == 0 && ((uintptr_t) d_cands & 15) == 0;
		const unsigned grid = (unsigned) ((cn + FEW_THREADS - 1) / FEW_THREADS);
		const int64_t sel_blocks = (cn + SEL_THREADS - 1) / SEL_THREADS;

		/*
		 * a query alone had 128 blocks of the GPU's 132 SMs, and its
		 * counts ran at a twentieth of the bus (17 us for 4 MB)
		 */
		const int64_t sel_max = SEL_BLOCKS_ALL / nq > SEL_BLOCKS_MAX ? SEL_BLOCKS_ALL / nq : SEL_BLOCKS_MAX;
		const dim3	sel_grid((unsigned) (sel_blocks < sel_max ? sel_blocks : sel_max),
							 (unsigned) nq);
		const size_t out0 = (size_t) ci * nq * k;

		if (odp_cancel_requested(ctx))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
			goto cleanup;
		}
		switch (metric)
		{
			case ODP_METRIC_EUCLIDEAN:
				FEW_LAUNCH(ODP_METRIC_EUCLIDEAN);
				break;
			case ODP_METRIC_SQEUCLIDEAN:
				FEW_LAUNCH(ODP_METRIC_SQEUCLIDEAN);
				break;
			case ODP_METRIC_MANHATTAN:
				FEW_LAUNCH(ODP_METRIC_MANHATTAN);
				break;
			default:
				FEW_LAUNCH(ODP_METRIC_CHEBYSHEV);
				break;
		}
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the few-query distance kernel");
		FewSelectStart<<<nq, SEL_THREADS, 0, stream>>>(d_sel, d_hist, k, cn);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the neighbours' selection");
		/* 64 key bits: the distance's in 11 + 11 + 10, then the row's */
		for (int pass = 0, left = 64; left > 0; pass++)
		{
			const int	width = pass % 3 == 2 ? 10 : SEL_BITS;

			FewSelectCount<<<sel_grid, SEL_THREADS, 0, stream>>>(d_dist, chunk, cn, d_sel,
																 d_hist, width);
			FewSelectPick<<<nq, SEL_THREADS, 0, stream>>>(d_sel, d_hist, width);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the neighbours' selection");
			left -= width;
		}
		FewSelectTake<<<sel_grid, SEL_THREADS, 0, stream>>>(d_dist, chunk, cn, d_sel,
															d_taken + ci * nq,
															d_out_dist + out0,
															d_out_row + out0, k);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the neighbours' selection");
	}
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(h_out, d_base + at.taken, at.bytes - at.taken,
									  cudaMemcpyDeviceToHost, stream),
				 "copying the neighbours from the GPU");
	h_taken = (unsigned int *) h_out;
	h_dist = (float *) (h_out + (at.out_dist - at.taken));
	h_row = (unsigned int *) (h_out + (at.out_row - at.taken));
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "selecting the neighbours");

	/* every chunk gathered min(k, its rows) per query: order them */
	for (int64_t c0 = 0, ci = 0; c0 < n; c0 += chunk, ci++)
	{
		const int64_t cn = n - c0 < chunk ? n - c0 : chunk;
		const int32_t got = (int32_t) (cn < k ? cn : k);

		for (int q = 0; q < nq; q++)
		{
			const size_t from = ((size_t) ci * nq + q) * k;

			if (h_taken[ci * nq + q] != (unsigned int) got)
			{
				status = odp_fail(ctx, ODP_ERR_INTERNAL,
								  "the GPU's selection kept %u of %d neighbours of a query",
								  h_taken[ci * nq + q], (int) got);
				goto cleanup;
			}
			for (int32_t i = 0; i < got; i++)
				few_heap_offer(dist + (size_t) q * k, index + (size_t) q * k, &size[q], k,
							   h_dist[from + i], c0 + h_row[from + i]);
		}
	}
	for (int q = 0; q < nq; q++)
		few_heap_sort_ascending(dist + (size_t) q * k, index + (size_t) q * k, size[q]);
	ctx->compute_ms += odp_now_ms() - t1;
	ctx->chunks = (int32_t) nchunks;
	odp_gpu_knn_few_runs++;

cleanup:
	/* the scratch goes back in the stream's order, before the stream */
	OdpGpuArenaRelease(&arena);
	if (stream != NULL)
	{
		(void) cudaStreamSynchronize(stream);
		(void) cudaStreamDestroy(stream);
	}
	free(h_out);
	free(size);
	return status;
}
