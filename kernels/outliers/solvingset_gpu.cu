/*-------------------------------------------------------------------------
 *
 * solvingset_gpu.cu
 *	  GPU backend of SolvingSet (seed 001, section 3.5): the two
 *	  distance-heavy steps of a candidate batch, on the shared k-NN
 *	  primitive (knn_gpu.cu).
 *
 * The driver (solvingset.c) owns pruning, candidate choice and the
 * solving set; this file only answers exact() and update() of the
 * OdpSsBackend contract (solvingset_internal.h).
 *
 * Design, re-thought for a modern GPU rather than the paper's Fermi-era
 * kernels (per-thread heaps, an m x N distance matrix in device memory):
 *	- The matrix stays resident in device memory for the whole
 *	  computation, and so does the update state: every row's k smallest
 *	  distances to the candidates seen so far (an OdpKnnState over all
 *	  rows, reset once, accumulated across batches).  No distance matrix
 *	  is ever stored: the primitive fuses distances and selection.
 *	- exact(): the candidate rows are gathered on the device from an
 *	  uploaded index list, and the primitive runs with them as queries
 *	  against all rows, keeping k + 1 neighbours and no self-exclusion
 *	  (the gathered queries have no contiguous global indexes).  The
 *	  (k + 1)-list of all rows, minus the row itself where it occurs, is
 *	  exactly the k-list of the other rows, ties and duplicates included,
 *	  so the weight kernel skips the entry whose index is the candidate's
 *	  own and sums the first k others with odp_sum_ascending's loop: the
 *	  same doubles as the CPU path.  A batch of a few thousand queries is
 *	  a fraction of one wave of thread blocks, so the candidate rows are
 *	  split into ranges, each served by its own copy of the queries
 *	  (OdpKnnProblem.cand_split), and the weight kernel merges the
 *	  per-range lists, which are sorted by (distance, index) and
 *	  disjoint, into the global order.
 *	- update(): queries are all rows, candidates the gathered batch, with
 *	  global candidate indexes made unique across batches by a running
 *	  base (the primitive's merge needs unique keys; the upper bound only
 *	  needs the distances).  A kernel then writes upper[p] for every row.
 *	  A candidate's own list receives its distance 0 to itself, which is
 *	  harmless: it is in the solving set and its upper bound is unused.
 *	- Single pass (SsExactUpdate, from the second batch on, k <= 128):
 *	  exact() and update() in one primitive call over all rows x the
 *	  batch, each distance computed once; a candidate's weight comes from
 *	  the distances under its own partial list's k-th (a buffer per
 *	  candidate, SsBufferWeightKernel).  Pruning and the next batch are
 *	  then chosen on the device (SsSelect), so the upper bounds never
 *	  travel to the host.  Measured on the H100 (Poker stand-in, 1M x 10,
 *	  k = 50): 1.73 s with two passes and host selection, 1.13 s this way.
 *	- Two-pass mode only (k > 128, or no room for the single pass'
 *	  buffers): inactive rows are dropped from the update queries once they are a
 *	  quarter of them (SsCompact): the active rows' states move into a
 *	  second state buffer and their rows into a query buffer, and their
 *	  upper bounds are scattered back on the host.  The driver never
 *	  reactivates a row, so nothing dropped is needed again.
 *
 * Memory: rows x dims floats of input, rows x (12 k + 4) bytes of update
 * state, and per batch slot a few hundred bytes.  When that exceeds the
 * budget the constructor fails with ODP_ERR_GPU_OOM, and the driver falls
 * back to brute force, which chunks.
 *
 * Map of this file.  From top to bottom:
 *	- declarations: the tuning knobs and counters of the tests and the
 *	  harness (odp_gpu_ss_*), the backend's state GpuSs, SS_TRACE
 *	  and SsPad;
 *	- kernels: SsGatherKernel, the exact weights (SsWeightKernel), the
 *	  upper bounds (SsUpperKernel), the single pass' bounds
 *	  (SsBoundKernel), the selection on the device (SsPruneKernel,
 *	  SsIotaKernel), the single pass' weights (SsSortedPrefix,
 *	  SsBufferWeightKernel) and SsCompactKernel;
 *	- the two passes: helpers (SsCompact, SsGather, SsSplitFor), exact()
 *	  (SsExactFrom, SsExact) and update() (SsBatchProblem, SsUpperBounds,
 *	  SsUpdateFrom, SsUpdate);
 *	- batches given by value: SsExternalReserve, SsExternalUpload,
 *	  SsExternalFused (their single pass), SsRowBounds and SsExternal;
 *	- the single pass (SsExactUpdate) and the selection (SsSelect);
 *	- SsRelease and the constructor, odp_gpu_ss_backend.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "common/engine_internal.h"
#include "common/host_sort.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "include/odp_distance.h"
#include "knn/knn_gpu.cuh"
#include "knn/knn_merge.h"
#include "outliers/solvingset_internal.h"

/* Candidates handled per primitive call; larger batches are chunked. */
#define SS_MAX_BATCH	32768

/* Most candidate ranges the exact step splits all rows into. */
#define SS_MAX_SPLIT	16

/*
 * Candidate-range split of the exact step: -1 chooses by occupancy, 0 or
 * 1 disables it, larger values force that many ranges.  A tuning knob for
 * the benchmark harness (test/bench/outliers_engine_bench.c), not an interface.
 */
extern "C" int odp_gpu_ss_split;
int			odp_gpu_ss_split = -1;

/*
 * Compaction of the update step's queries to the active rows: when the
 * active rows fall to this share of the rows it updates, it keeps only
 * them (0 disables; a tuning knob for the harness like the one above).
 */
extern "C" double odp_gpu_ss_compact;
double		odp_gpu_ss_compact = 0.75;

/*
 * Single pass (SsExactUpdate): distances a candidate's buffer holds.  -1
 * picks SS_FUSED_CAP, 0 disables the single pass, a positive value (at
 * most SS_FUSED_CAP) forces that capacity: the tests force small ones so
 * that buffers overflow.  A tuning knob like the ones above.
 */
extern "C" int odp_gpu_ss_fused_cap;
int			odp_gpu_ss_fused_cap = -1;

/*
 * Process-wide counts of single-pass batches and of candidates whose
 * buffer overflowed, for the tests and the harness to see which way the
 * work went.
 */
extern "C" int64_t odp_gpu_ss_fused_batches;
extern "C" int64_t odp_gpu_ss_overflowed;
int64_t		odp_gpu_ss_fused_batches = 0;
int64_t		odp_gpu_ss_overflowed = 0;

/* Largest candidate buffer of the single pass (SsBufferWeightKernel). */
#define SS_FUSED_CAP		4096

/* Candidates per single-pass primitive call. */
#define SS_FUSED_BATCH		16384

/* Threads of SsBufferWeightKernel, and its small sort (entries per thread). */
#define SS_WEIGHT_THREADS	128
#define SS_WEIGHT_SMALL		4

/* Everything the backend holds between calls. */
typedef struct GpuSs
{
	OdpContext *ctx;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream;
	int64_t		rows;
	int32_t		dims;
	int32_t		k;
	OdpMetric	metric;
	bool		cosine;
	int32_t		cap;			/* candidates per primitive call */
	int64_t		qcap;			/* query rows the exact buffers hold */
	float	   *d_data;			/* rows x dims, resident */
	float	   *d_norms;		/* rows, cosine only */
	int64_t    *d_cand;			/* cap candidate row indexes */
	float	   *d_gather;		/* qcap x dims */
	float	   *d_gnorm;		/* qcap, cosine only */
	OdpKnnState exact_state;	/* qcap rows, k + 1 */
	double	   *d_weight;		/* cap */
	OdpKnnState upd_state;		/* nq used rows, k, persistent */
	OdpKnnState alt_state;		/* rows, k: compaction target, then swapped */
	int64_t		nq;				/* rows the update step serves */
	bool		compacted;		/* queries are d_q, row ids in h_qrow */
	int64_t    *h_qrow;			/* nq row ids of the update queries */
	int64_t    *h_pos;			/* compaction: kept entries' old positions */
	double	   *h_upper;		/* nq upper bounds, before scattering */
	int64_t    *d_qrow;			/* rows: row ids, then old positions */
	float	   *d_q;			/* rows x dims: compacted query rows */
	float	   *d_qnorm;		/* rows, cosine only */
	double	   *d_upper;		/* rows */
	int		   *d_bad;			/* set by a kernel when an invariant fails */
	int64_t		cand_seen;		/* running base of update candidate indexes */
	bool		upd_ready;		/* upd_state was reset */

	/* single pass (SsExactUpdate); fused false leaves all of these unset */
	bool		fused;
	int32_t		fcap;			/* distances per candidate buffer */
	int32_t		fbatch;			/* candidates per call */
	uint8_t    *d_active;		/* rows */
	float	   *d_bound;		/* fbatch: each candidate's bound */
	float	   *d_limit;		/* fbatch: scratch of the primitive */
	int32_t    *d_fcount;		/* fbatch */
	float	   *d_fbuf;			/* fbatch x fcap */
	int32_t    *h_fcount;		/* fbatch */
	int64_t    *h_over;			/* fbatch: overflowed candidates' rows */
	double	   *h_overw;		/* fbatch: their weights */
	int64_t    *h_overpos;		/* fbatch: their positions in the batch */
	int		   *d_unbounded;	/* set when a candidate's list is short */
	double	   *d_keys;			/* rows x 2: selection keys in and out */
	int64_t    *d_rowid;		/* rows x 2: row ids in (ascending) and out */
	void	   *d_sort_tmp;		/* CUB's temporary storage */
	size_t		sort_tmp_bytes;
	int32_t    *d_nact;			/* active rows after pruning */

	/* batches given by value (SsExternal), allocated on first use */
	int64_t		ext_cap;		/* candidates the buffers below hold */
	float	   *d_ext;			/* ext_cap x dims candidate vectors */
	float	   *d_ext_norms;	/* ext_cap, cosine only */
	int64_t    *d_own;			/* ext_cap: a candidate's row, or -1 */
	float	   *d_lists;		/* ext_cap x k */
	int64_t    *h_iota;			/* ext_cap: 0, 1, ... (gather positions) */
	float	   *h_ext_norms;	/* ext_cap, cosine only */
	int64_t    *d_own2;			/* ext_cap: own rows of overflowed candidates */
	float	   *d_ext_bound;	/* ext_cap: row bounds (SsRowBounds) */
} GpuSs;

/* Per-step timings on stderr, for benchmark builds (-DODP_SS_TRACE). */
#ifdef ODP_SS_TRACE
#include <stdio.h>
#define SS_TRACE(...) fprintf(stderr, __VA_ARGS__)
#else
#define SS_TRACE(...) ((void) 0)
#endif

/* Rounds n up to whole thread blocks of queries of the primitive. */
static int64_t
SsPad(int64_t n)
{
	return (n + ODP_KNN_BLOCK_QUERIES - 1) / ODP_KNN_BLOCK_QUERIES * ODP_KNN_BLOCK_QUERIES;
}

/*
 * Copies the rows cand[0 .. nc) of data (and their norms) into copies
 * consecutive blocks of pad rows each of dst; rows nc .. pad-1 of every
 * block repeat row cand[0] (they are computed and never read).  One
 * thread per (copy, row, dimension).
 */
static __global__ void
SsGatherKernel(const float *data, const float *norms, int dims,
			   const int64_t *cand, int64_t nc, int64_t pad, int copies,
			   float *dst, float *dst_norms)
{
	const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const int64_t per_copy = pad * dims;
	int64_t		r;
	int			d;
	int64_t		src;

	if (t >= per_copy * copies)
		return;
	r = (t % per_copy) / dims;
	d = (int) (t % dims);
	src = cand[r < nc ? r : 0];
	dst[t] = data[src * dims + d];
	if (norms != NULL && d == 0)
		dst_norms[t / dims] = norms[src];
}

/*
 * Exact weight of query i: merges its copies' (k + 1)-lists (copy s at
 * state row s * pad + i, each sorted by (distance, index), the copies'
 * index ranges disjoint), skips the entry of the row itself (cand[i])
 * and sums the first k others in order, as odp_sum_ascending does.  Sets
 * *bad when a list is short of what its candidate range guarantees.
 * With lists (a batch given by value) it writes the k distances there
 * instead, +inf padded.
 */
static __global__ void
SsWeightKernel(const float *dist, const int64_t *index, const int32_t *count,
			   const int64_t *cand, int64_t nc, int64_t pad, int copies,
			   int k, double *weight, float *lists, int *bad)
{
	const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const int	k1 = k + 1;
	int			pos[SS_MAX_SPLIT];
	int			len[SS_MAX_SPLIT];
	int64_t		self;
	double		s = 0.0;
	int			taken = 0;

	if (i >= nc)
		return;
	self = cand[i];
	for (int c = 0; c < copies; c++)
	{
		pos[c] = 0;
		len[c] = count[(c * pad + i)];
	}
	while (taken < k)
	{
		const int	c = odp_merge_next(dist + i * k1, index + i * k1, pad * k1,
									   copies, pos, len);
		int64_t		at;

		if (c < 0 && lists != NULL)
		{
			/* a batch given by value: the matrix may hold fewer rows */
			for (; taken < k; taken++)
				lists[i * k + taken] = INFINITY;
			return;
		}
		if (c < 0)
		{
			atomicExch(bad, 1);
			weight[i] = 0.0;
			return;
		}
		at = (c * pad + i) * k1 + pos[c];
		pos[c]++;
		if (index[at] == self)
			continue;
		if (lists != NULL)
			lists[i * k + taken] = dist[at];
		else
			s += (double) dist[at];
		taken++;
	}
	if (lists == NULL)
		weight[i] = s;
}

/*
 * Upper bound of every row: the ascending sum of its partial k-list when
 * it is full, +inf otherwise.
 */
static __global__ void
SsUpperKernel(const float *dist, const int32_t *count, int64_t rows, int k,
			  double *upper)
{
	const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (p >= rows)
		return;
	upper[p] = count[p] == k ? odp_sum_ascending(dist + p * k, k) : INFINITY;
}

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
 * Selection on the GPU (SsSelect): prunes active rows whose upper bound
 * is under min_out (when prune) and writes the sort keys, the upper bound
 * of each active row and -inf for the others (upper bounds are sums of
 * distances or +inf, never -inf); counts the active rows into *nact.
 */
static __global__ void
SsPruneKernel(uint8_t *active, const double *upper, int64_t rows, int prune,
			  double min_out, double *keys, int32_t *nact)
{
	const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	bool		a = false;
	unsigned	n;

	if (p < rows)
	{
		a = active[p] != 0 && !(prune && upper[p] < min_out);
		active[p] = a ? 1 : 0;
		keys[p] = a ? upper[p] : -INFINITY;
	}
	n = __popc(__ballot_sync(0xffffffffu, a));
	if ((threadIdx.x & 31) == 0 && n > 0)
		atomicAdd(nact, (int32_t) n);
}

/* Fills ids[p] = p: the row ids that the selection sorts. */
static __global__ void
SsIotaKernel(int64_t *ids, int64_t rows)
{
	const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (p < rows)
		ids[p] = p;
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
 * Moves state entry pos[j] of src to entry j of dst, for j < n (the
 * update queries kept by a compaction).
 */
static __global__ void
SsCompactKernel(const float *sd, const int64_t *si, const int32_t *sn,
				const int64_t *pos, int64_t n, int k,
				float *dd, int64_t *di, int32_t *dn)
{
	const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		j;
	int			e;

	if (t >= n * k)
		return;
	j = t / k;
	e = (int) (t % k);
	dd[t] = sd[pos[j] * k + e];
	di[t] = si[pos[j] * k + e];
	if (e == 0)
		dn[j] = sn[pos[j]];
}

/*
 * Keeps only the active rows among the update queries when they are few
 * enough (odp_gpu_ss_compact): copies their state into the other state
 * buffer, gathers their rows into d_q, and swaps.  The discarded rows are
 * inactive for good (the driver never reactivates a row), so their upper
 * bounds are no longer needed.
 */
static OdpStatus
SsCompact(GpuSs *ss, const uint8_t *active)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	int64_t		n = 0;
	OdpKnnState tmp;
	double		t0 = odp_now_ms();

	for (int64_t j = 0; j < ss->nq; j++)
	{
		const int64_t r = ss->compacted ? ss->h_qrow[j] : j;

		if (active[r])
		{
			ss->h_pos[n] = j;
			ss->h_qrow[n] = r;	/* n <= j: never overwrites an unread id */
			n++;
		}
	}
	if (n == ss->nq)
		return ODP_OK;
	ss->compacted = true;
	ss->nq = n;
	if (n == 0)
		return ODP_OK;
	/* old positions first: the state moves before the ids replace them */
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_qrow, ss->h_pos, (size_t) n * sizeof(int64_t),
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying SolvingSet active rows to the GPU");
	SsCompactKernel<<<(unsigned) ((n * ss->k + 255) / 256), 256, 0, ss->stream>>>(ss->upd_state.dist, ss->upd_state.index, ss->upd_state.count, ss->d_qrow, n, ss->k, ss->alt_state.dist, ss->alt_state.index, ss->alt_state.count);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet compaction kernel");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_qrow, ss->h_qrow, (size_t) n * sizeof(int64_t),
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying SolvingSet active rows to the GPU");
	SsGatherKernel<<<(unsigned) ((n * ss->dims + 255) / 256), 256, 0, ss->stream>>>(ss->d_data, ss->d_norms, ss->dims, ss->d_qrow, n, n, 1, ss->d_q, ss->d_qnorm);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet gather kernel");
	/* the host buffers are rewritten before the next use: wait for them */
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "compacting the SolvingSet state");
	tmp = ss->upd_state;
	ss->upd_state = ss->alt_state;
	ss->alt_state = tmp;
	ss->alt_state.rows = ss->rows;
cleanup:
	ctx->compute_ms += odp_now_ms() - t0;
	return status;
}

/*
 * Uploads cand[0 .. nc) and gathers those rows into copies blocks of the
 * gather buffer.
 */
static OdpStatus
SsGather(GpuSs *ss, const float *src, const float *src_norms, const int64_t *cand,
		 int64_t nc, int64_t pad, int copies)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	const int64_t total = pad * ss->dims * copies;
	double		t0 = odp_now_ms();

	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_cand, cand, (size_t) nc * sizeof(int64_t),
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying SolvingSet candidates to the GPU");
	SsGatherKernel<<<(unsigned) ((total + 255) / 256), 256, 0, ss->stream>>>(src, src_norms, ss->dims, ss->d_cand, nc, pad, copies, ss->d_gather, ss->d_gnorm);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet gather kernel");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	return status;
}

/*
 * How many candidate ranges the exact step uses for nq queries: enough
 * query blocks for at most one full wave of the primitive (two blocks per
 * multiprocessor), each range at least a few thousand rows.
 */
static int
SsSplitFor(const GpuSs *ss, int64_t nq)
{
	int64_t		blocks = SsPad(nq) / ODP_KNN_BLOCK_QUERIES;
	int64_t		want = 2 * (int64_t) ss->dev.sm_count;
	int			s;

	if (odp_gpu_ss_split >= 0)
		s = odp_gpu_ss_split < 1 ? 1 : odp_gpu_ss_split;
	else
		s = (int) (want / blocks);	/* whole waves: a partial one costs a full one */
	if (s > SS_MAX_SPLIT)
		s = SS_MAX_SPLIT;
	if (s > ss->qcap / SsPad(nq))
		s = (int) (ss->qcap / SsPad(nq));
	while (s > 1 && ss->rows / s < 4096)
		s--;
	return s < 1 ? 1 : s;
}

/*
 * The exact step over a batch gathered from src (rows cand[] of it; the
 * matrix itself, or the vectors of a batch given by value): every
 * candidate's k nearest rows other than its own, own_dev[i] on the device
 * (NULL: the gathered row cand[i] is its own), into weight or, with
 * lists, as distances.
 */
static OdpStatus
SsExactFrom(GpuSs *ss, const float *src, const float *src_norms,
			const int64_t *cand, const int64_t *own_dev, int32_t nc_all,
			double *weight, float *lists, int64_t *distances)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	int			bad = 0;

	ODP_CUDA_RETURN(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	for (int32_t c0 = 0; c0 < nc_all; c0 += ss->cap)
	{
		const int64_t nc = nc_all - c0 < ss->cap ? nc_all - c0 : ss->cap;
		const int64_t pad = SsPad(nc);
		const int	copies = SsSplitFor(ss, nc);
		const int64_t range = (ss->rows + copies - 1) / copies;
		OdpKnnProblem prob;
		double		t0;

		ODP_TRY(SsGather(ss, src, src_norms, cand + c0, nc, pad, copies));
		ss->exact_state.rows = pad * copies;
		ODP_TRY(OdpKnnStateReset(ctx, ss->stream, &ss->exact_state));

		memset(&prob, 0, sizeof(prob));
		prob.queries = ss->d_gather;
		prob.query_norms = ss->d_gnorm;
		prob.query_base = 0;
		prob.nq = pad * copies;
		prob.cands = ss->d_data;
		prob.cand_norms = ss->d_norms;
		prob.cand_base = 0;
		prob.nc = ss->rows;
		prob.dims = ss->dims;
		prob.metric = ss->metric;
		prob.exclude_self = false;
		prob.ascending_candidates = true;
		if (copies > 1)
		{
			prob.cand_split = range;
			prob.split_queries = pad;
		}
		ODP_TRY(OdpKnnAccumulate(ctx, &ss->dev, ss->stream, &prob,
								&ss->exact_state, &ctx->compute_ms));
		ctx->chunks++;
		*distances += nc * ss->rows;

		t0 = odp_now_ms();
		SsWeightKernel<<<(unsigned) ((nc + 127) / 128), 128, 0, ss->stream>>>(ss->exact_state.dist, ss->exact_state.index, ss->exact_state.count, own_dev ? own_dev + c0 : ss->d_cand, nc, pad, copies, ss->k, ss->d_weight, lists ? ss->d_lists : NULL, ss->d_bad);
		ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet weight kernel");
		if (lists != NULL)
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(lists + (size_t) c0 * ss->k, ss->d_lists,
											  (size_t) nc * ss->k * sizeof(float),
											  cudaMemcpyDeviceToHost, ss->stream),
						 "copying SolvingSet neighbour lists from the GPU");
		else
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(weight + c0, ss->d_weight,
											  (size_t) nc * sizeof(double),
											  cudaMemcpyDeviceToHost, ss->stream),
						 "copying SolvingSet weights from the GPU");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, ss->d_bad, sizeof(int),
										  cudaMemcpyDeviceToHost, ss->stream),
					 "copying SolvingSet weights from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
					 "computing SolvingSet weights");
		ctx->compute_ms += odp_now_ms() - t0;
		if (bad != 0)
			return odp_fail(ctx, ODP_ERR_INTERNAL,
							"a SolvingSet candidate kept fewer than k = %d neighbours on the GPU",
							ss->k);
	}
cleanup:
	return status;
}

/* See OdpSsBackend.exact in solvingset_internal.h. */
static OdpStatus
SsExact(void *self, const int64_t *cand, int32_t nc_all, double *weight,
		int64_t *distances)
{
	GpuSs	   *ss = (GpuSs *) self;

	return SsExactFrom(ss, ss->d_data, ss->d_norms, cand, NULL, nc_all, weight, NULL,
					   distances);
}

/*
 * The primitive problem of an update over a batch: queries (nq rows, and
 * their norms for cosine) against the batch's nc candidate rows gathered
 * in d_gather, whose global indexes continue from cand_seen, so that they
 * ascend across batches (ascending_candidates holds).
 */
static void
SsBatchProblem(const GpuSs *ss, const float *queries, const float *query_norms,
			   int64_t nq, int64_t nc, OdpKnnProblem *prob)
{
	memset(prob, 0, sizeof(*prob));
	prob->queries = queries;
	prob->query_norms = query_norms;
	prob->query_base = 0;
	prob->nq = nq;
	prob->cands = ss->d_gather;
	prob->cand_norms = ss->d_gnorm;
	prob->cand_base = ss->cand_seen;
	prob->nc = nc;
	prob->dims = ss->dims;
	prob->metric = ss->metric;
	prob->exclude_self = false;
	prob->ascending_candidates = true;
}

/*
 * Computes the upper bound of every row the update state serves into
 * d_upper and copies them into upper (scattered to their rows when
 * compacted), unless upper is NULL.
 */
static OdpStatus
SsUpperBounds(GpuSs *ss, double *upper)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	SsUpperKernel<<<(unsigned) ((ss->nq + 255) / 256), 256, 0, ss->stream>>>(ss->upd_state.dist, ss->upd_state.count, ss->nq, ss->k, ss->d_upper);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet upper bound kernel");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "computing SolvingSet upper bounds");
	ctx->compute_ms += odp_now_ms() - t0;
	if (upper == NULL)
		return ODP_OK;			/* SsSelect reads them on the device */
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->compacted ? ss->h_upper : upper, ss->d_upper,
									  (size_t) ss->nq * sizeof(double),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet upper bounds from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "copying SolvingSet upper bounds from the GPU");
	if (ss->compacted)
		for (int64_t j = 0; j < ss->nq; j++)
			upper[ss->h_qrow[j]] = ss->h_upper[j];
	ctx->transfer_ms += odp_now_ms() - t0;
cleanup:
	return status;
}

/*
 * The update step over a batch gathered from src (rows cand[] of it: the
 * matrix, or the vectors of a batch given by value).
 */
static OdpStatus
SsUpdateFrom(GpuSs *ss, const float *src, const float *src_norms,
			 const int64_t *cand, int32_t nc_all, const uint8_t *active,
			 double *upper, int64_t *distances)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;

	ODP_CUDA_TRY(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	if (!ss->upd_ready)
	{
		ODP_TRY(OdpKnnStateReset(ctx, ss->stream, &ss->upd_state));
		ss->upd_ready = true;
	}
	else if (odp_gpu_ss_compact > 0.0 && !ss->fused)
	{
		int64_t		nact = 0;

		/* compact only when it pays: the copy costs about one batch */
		for (int64_t j = 0; j < ss->nq; j++)
			nact += active[ss->compacted ? ss->h_qrow[j] : j] != 0;
		if ((double) nact <= odp_gpu_ss_compact * (double) ss->nq)
			ODP_TRY(SsCompact(ss, active));
	}
	if (ss->nq == 0)
		return ODP_OK;			/* no active row is left to update */
	ss->upd_state.rows = ss->nq;
	for (int32_t c0 = 0; c0 < nc_all; c0 += ss->cap)
	{
		const int64_t nc = nc_all - c0 < ss->cap ? nc_all - c0 : ss->cap;
		OdpKnnProblem prob;

		ODP_TRY(SsGather(ss, src, src_norms, cand + c0, nc, nc, 1));
		SsBatchProblem(ss, ss->compacted ? ss->d_q : ss->d_data,
					   ss->compacted ? ss->d_qnorm : ss->d_norms, ss->nq, nc, &prob);
		ODP_TRY(OdpKnnAccumulate(ctx, &ss->dev, ss->stream, &prob,
								&ss->upd_state, &ctx->compute_ms));
		ctx->chunks++;
		ss->cand_seen += nc;
		*distances += nc * ss->nq;
	}

	status = SsUpperBounds(ss, upper);
cleanup:
	return status;
}

/* See OdpSsBackend.update in solvingset_internal.h. */
static OdpStatus
SsUpdate(void *self, const int64_t *cand, int32_t nc_all,
		 const uint8_t *active, double *upper, int64_t *distances)
{
	GpuSs	   *ss = (GpuSs *) self;

	return SsUpdateFrom(ss, ss->d_data, ss->d_norms, cand, nc_all, active, upper,
						distances);
}

/* Makes the buffers of batches given by value hold nc candidates. */
static OdpStatus
SsExternalReserve(GpuSs *ss, int64_t nc)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	int64_t    *iota;
	float	   *norms = NULL;

	if (nc <= ss->ext_cap)
		return ODP_OK;
	OdpGpuArenaFree(&ss->arena, ss->d_ext);
	OdpGpuArenaFree(&ss->arena, ss->d_ext_norms);
	OdpGpuArenaFree(&ss->arena, ss->d_own);
	OdpGpuArenaFree(&ss->arena, ss->d_lists);
	OdpGpuArenaFree(&ss->arena, ss->d_own2);
	OdpGpuArenaFree(&ss->arena, ss->d_ext_bound);
	ss->d_ext = NULL;
	ss->d_ext_norms = NULL;
	ss->d_own = NULL;
	ss->d_lists = NULL;
	ss->d_own2 = NULL;
	ss->d_ext_bound = NULL;
	ss->ext_cap = 0;
	iota = (int64_t *) realloc(ss->h_iota, sizeof(int64_t) * (size_t) nc);
	if (iota != NULL)
		ss->h_iota = iota;
	if (ss->cosine)
	{
		norms = (float *) realloc(ss->h_ext_norms, sizeof(float) * (size_t) nc);
		if (norms != NULL)
			ss->h_ext_norms = norms;
	}
	if (iota == NULL || (ss->cosine && norms == NULL))
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld SolvingSet candidates", (long long) nc);
	for (int64_t i = 0; i < nc; i++)
		ss->h_iota[i] = i;
	status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * ss->dims * sizeof(float),
							  "the candidates of other shards", (void **) &ss->d_ext);
	if (status == ODP_OK && ss->cosine)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * sizeof(float),
								  "the norms of other shards' candidates",
								  (void **) &ss->d_ext_norms);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * sizeof(int64_t),
								  "the candidates' own rows", (void **) &ss->d_own);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * ss->k * sizeof(float),
								  "the candidates' neighbour lists", (void **) &ss->d_lists);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * sizeof(int64_t),
								  "the candidates' own rows", (void **) &ss->d_own2);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * sizeof(float),
								  "the rows' bounds", (void **) &ss->d_ext_bound);
	if (status == ODP_OK)
		ss->ext_cap = nc;
	return status;
}

/* Uploads a batch given by value: vectors (and norms), own rows. */
static OdpStatus
SsExternalUpload(GpuSs *ss, const float *vectors, const int64_t *own, int32_t nc)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	for (int32_t i = 0; i < nc && ss->cosine; i++)
		ss->h_ext_norms[i] = odp_row_norm(vectors + (size_t) i * ss->dims, ss->dims);
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_ext, vectors, (size_t) nc * ss->dims * sizeof(float),
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying candidates to the GPU");
	if (ss->cosine)
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_ext_norms, ss->h_ext_norms,
										  (size_t) nc * sizeof(float),
										  cudaMemcpyHostToDevice, ss->stream),
					 "copying candidate norms to the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_own, own, (size_t) nc * sizeof(int64_t),
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying candidates to the GPU");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	return status;
}

/*
 * The single pass for a batch given by value, every bound known (from
 * the candidates' home nodes): SsExactUpdate's pass with the candidates'
 * own rows (-1 for another shard's) and their bounds uploaded, the
 * buffers turned into k-lists of the distances under the bound, and an
 * overflowed buffer's candidate taken by the exact step.
 */
static OdpStatus
SsExternalFused(GpuSs *ss, const float *vectors, const int64_t *own,
				const float *bounds, int32_t nc, const uint8_t *active,
				float *lists, double *upper, int64_t *distances)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	OdpKnnProblem prob;
	int64_t		nover = 0;
	int			bad = 0;
	float	   *over_lists = NULL;
	double		t0;

	odp_gpu_ss_fused_batches++;
	ODP_TRY(SsExternalUpload(ss, vectors, own, nc));
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_bound, bounds, (size_t) nc * sizeof(float),
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying candidate bounds to the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_active, active, (size_t) ss->rows,
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying SolvingSet active rows to the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;
	ODP_TRY(SsGather(ss, ss->d_ext, ss->d_ext_norms, ss->h_iota, nc, nc, 1));
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(ss->d_fcount, 0, (size_t) nc * sizeof(int32_t),
									  ss->stream),
				 "clearing the SolvingSet candidate buffers");
	SsBatchProblem(ss, ss->d_data, ss->d_norms, ss->rows, nc, &prob);
	prob.cand_bound = ss->d_bound;
	prob.cand_self = ss->d_own;
	prob.cand_limit = ss->d_limit;
	prob.cand_count = ss->d_fcount;
	prob.cand_buf = ss->d_fbuf;
	prob.cand_cap = ss->fcap;
	prob.query_active = ss->d_active;
	ODP_TRY(OdpKnnAccumulate(ctx, &ss->dev, ss->stream, &prob, &ss->upd_state,
							&ctx->compute_ms));
	ctx->chunks++;
	ss->cand_seen += nc;
	*distances += (int64_t) nc * ss->rows;

	t0 = odp_now_ms();
	SsBufferWeightKernel<<<(unsigned) nc, SS_WEIGHT_THREADS, 0, ss->stream>>>(ss->d_fbuf, ss->d_fcount, ss->d_bound, ss->d_gather, ss->dims, ss->metric, ss->fcap, ss->k, ss->d_weight, ss->d_bad, ss->d_own, ss->d_lists);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet buffer list kernel");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(lists, ss->d_lists, (size_t) nc * ss->k * sizeof(float),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet neighbour lists from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->h_fcount, ss->d_fcount, (size_t) nc * sizeof(int32_t),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet neighbour lists from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, ss->d_bad, sizeof(int), cudaMemcpyDeviceToHost,
									  ss->stream),
				 "copying SolvingSet neighbour lists from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream), "computing SolvingSet neighbour lists");
	ctx->compute_ms += odp_now_ms() - t0;
	if (bad != 0)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"a SolvingSet candidate's buffer lacks its distance to itself on the GPU");

	/* overflowed buffers: those candidates by the exact step, full lists */
	for (int32_t i = 0; i < nc; i++)
		if (ss->h_fcount[i] > ss->fcap)
		{
			ss->h_over[nover] = i;
			ss->h_overpos[nover++] = own[i];
		}
	odp_gpu_ss_overflowed += nover;
	if (nover > 0)
	{
		over_lists = (float *) malloc(sizeof(float) * (size_t) nover * ss->k);
		if (over_lists == NULL)
			return odp_fail(ctx, ODP_ERR_HOST_OOM,
							"out of host memory for %lld neighbour lists", (long long) nover);
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_own2, ss->h_overpos,
										  (size_t) nover * sizeof(int64_t),
										  cudaMemcpyHostToDevice, ss->stream),
					 "copying candidates to the GPU");
		ODP_TRY(SsExactFrom(ss, ss->d_ext, ss->d_ext_norms, ss->h_over, ss->d_own2,
						   (int32_t) nover, NULL, over_lists, distances));
		for (int64_t j = 0; j < nover; j++)
			memcpy(lists + (size_t) ss->h_over[j] * ss->k, over_lists + (size_t) j * ss->k,
				   sizeof(float) * ss->k);
	}
	status = SsUpperBounds(ss, upper);
cleanup:
	free(over_lists);
	return status;
}

/*
 * See OdpSsBackend.row_bounds in solvingset_internal.h: the last entry of a
 * full sorted partial list, read on the device; +inf everywhere where the
 * single pass is off or on failure (the batch then takes two passes).
 */
static void
SsRowBounds(void *self, const int64_t *rows, int64_t n, float *out)
{
	GpuSs	   *ss = (GpuSs *) self;
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;

	for (int64_t i = 0; i < n; i++)
		out[i] = INFINITY;
	if (!ss->fused || !ss->upd_ready || ss->compacted || n > ss->cap)
		return;
	ODP_CUDA_TRY(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	ODP_TRY(SsExternalReserve(ss, n));
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_cand, rows, (size_t) n * sizeof(int64_t),
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying SolvingSet rows to the GPU");
	SsBoundKernel<<<(unsigned) ((n + 255) / 256), 256, 0, ss->stream>>>(ss->d_cand, n, ss->upd_state.dist, ss->upd_state.count, ss->k, ss->d_ext_bound, ss->d_unbounded);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet bound kernel");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out, ss->d_ext_bound, (size_t) n * sizeof(float),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet bounds from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream), "reading SolvingSet bounds");
cleanup:
	if (status != ODP_OK)
	{
		for (int64_t i = 0; i < n; i++)
			out[i] = INFINITY;
		ctx->message[0] = '\0';
	}
}

/*
 * See OdpSsBackend.external in solvingset_internal.h: the vectors are
 * uploaded once and both steps gather from them (positions 0, 1, ...),
 * the exact step skipping a candidate's own row by index.
 */
static OdpStatus
SsExternal(void *self, const float *vectors, const int64_t *own, const float *bounds,
		   int32_t nc, const uint8_t *active, float *lists, double *upper,
		   int64_t *distances)
{
	GpuSs	   *ss = (GpuSs *) self;
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	bool		fused = bounds != NULL && ss->fused && ss->upd_ready && nc <= ss->fbatch;

	if (nc <= 0)
		return ODP_OK;
	ODP_CUDA_RETURN(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	ODP_TRY(SsExternalReserve(ss, nc));
	for (int32_t i = 0; i < nc && fused; i++)
		fused = isfinite(bounds[i]);
	if (fused)
		return SsExternalFused(ss, vectors, own, bounds, nc, active, lists, upper,
							   distances);
	ODP_TRY(SsExternalUpload(ss, vectors, own, nc));
	ODP_TRY(SsExactFrom(ss, ss->d_ext, ss->d_ext_norms, ss->h_iota, ss->d_own, nc, NULL,
					   lists, distances));
	if (odp_cancel_requested(ctx))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
	status = SsUpdateFrom(ss, ss->d_ext, ss->d_ext_norms, ss->h_iota, nc, active, upper,
						  distances);
cleanup:
	return status;
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
static OdpStatus
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
		SsBoundKernel<<<(unsigned) ((nc_all + 255) / 256), 256, 0, ss->stream>>>(ss->d_cand, nc_all, ss->upd_state.dist, ss->upd_state.count, ss->k, ss->d_bound, ss->d_unbounded);
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
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_active, active, (size_t) ss->rows,
									  cudaMemcpyHostToDevice, ss->stream),
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
		SsBufferWeightKernel<<<(unsigned) nc, SS_WEIGHT_THREADS, 0, ss->stream>>>(ss->d_fbuf, ss->d_fcount, ss->d_bound, ss->d_gather, ss->dims, ss->metric, ss->fcap, ss->k, ss->d_weight, ss->d_bad, NULL, NULL);
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

/*
 * See OdpSsBackend.select in solvingset_internal.h.  In single-pass mode the
 * upper bounds of all rows are on the device after every batch, so
 * pruning and the choice of the next batch run there: a stable radix sort
 * of (upper bound descending, row id), whose stability keeps equal bounds
 * in ascending row order, replaces the host's pass over every row and its
 * selection.  Only the active flags and the chosen rows come back.
 */
static OdpStatus
SsSelect(void *self, bool prune, double min_out, int64_t m, uint8_t *active,
		 int64_t *cand, int64_t *nc, bool *done)
{
	GpuSs	   *ss = (GpuSs *) self;
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	int32_t		nact = 0;
	size_t		tmp_bytes = ss->sort_tmp_bytes;
	double		t0;

	*done = false;
	if (!ss->fused)
		return ODP_OK;
	ODP_CUDA_TRY(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_active, active, (size_t) ss->rows,
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying SolvingSet active rows to the GPU");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(ss->d_nact, 0, sizeof(int32_t), ss->stream),
				 "clearing a SolvingSet counter");
	SsPruneKernel<<<(unsigned) ((ss->rows + 255) / 256), 256, 0, ss->stream>>>(ss->d_active, ss->d_upper, ss->rows, prune ? 1 : 0, min_out, ss->d_keys, ss->d_nact);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet prune kernel");
	ODP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairsDescending(ss->d_sort_tmp, tmp_bytes,
																ss->d_keys, ss->d_keys + ss->rows,
																ss->d_rowid, ss->d_rowid + ss->rows,
																ss->rows, 0, 64, ss->stream),
				 "sorting SolvingSet upper bounds");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&nact, ss->d_nact, sizeof(int32_t),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet active rows from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(active, ss->d_active, (size_t) ss->rows,
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet active rows from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "selecting SolvingSet candidates");
	*nc = nact < m ? nact : m;
	if (*nc > 0)
	{
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(cand, ss->d_rowid + ss->rows,
										  (size_t) *nc * sizeof(int64_t),
										  cudaMemcpyDeviceToHost, ss->stream),
					 "copying SolvingSet candidates from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
					 "copying SolvingSet candidates from the GPU");
	}
	odp_sort_int64(cand, *nc);
	ctx->compute_ms += odp_now_ms() - t0;
	*done = true;
cleanup:
	return status;
}

/* See OdpSsBackend.release in solvingset_internal.h. */
static void
SsRelease(void *self)
{
	GpuSs	   *ss = (GpuSs *) self;

	if (ss == NULL)
		return;
	(void) cudaSetDevice(ss->dev.id);
	if (ss->stream != NULL)
	{
		/* nothing may still write into memory we are about to free */
		(void) cudaStreamSynchronize(ss->stream);
		(void) cudaStreamDestroy(ss->stream);
	}
	OdpGpuArenaRelease(&ss->arena);
	(void) cudaGetLastError();
	free(ss->h_qrow);
	free(ss->h_pos);
	free(ss->h_upper);
	free(ss->h_fcount);
	free(ss->h_over);
	free(ss->h_overw);
	free(ss->h_overpos);
	free(ss->h_iota);
	free(ss->h_ext_norms);
	free(ss);
}

/*
 * GPU SolvingSet backend for m; arguments validated by the driver
 * (1 <= k < rows, k < ODP_MAX_K, norms set exactly for cosine).  Uploads
 * the matrix and allocates every buffer now, so that the batches cannot
 * fail for memory; on failure nothing stays allocated.
 */
extern "C" OdpStatus
odp_gpu_ss_backend(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
				   int32_t k, const float *norms, OdpSsBackend *backend)
{
	OdpStatus	status = ODP_OK;
	GpuSs	   *ss;
	size_t		need;
	size_t		row_bytes;
	int64_t		cap_pad;
	double		t0;

	memset(backend, 0, sizeof(*backend));
	if ((metric == ODP_METRIC_COSINE) != (norms != NULL) ||
		k < 1 || k >= ODP_MAX_K || k >= m->rows)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"invalid SolvingSet backend arguments (k %d, rows %lld)",
						k, (long long) m->rows);
	ss = (GpuSs *) calloc(1, sizeof(GpuSs));
	if (ss == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for the GPU SolvingSet backend");
	ss->ctx = ctx;
	ss->rows = m->rows;
	ss->dims = m->dims;
	ss->k = k;
	ss->metric = metric;
	ss->cosine = (metric == ODP_METRIC_COSINE);
	OdpGpuArenaInit(&ss->arena, 0);
	memset(&ss->exact_state, 0, sizeof(ss->exact_state));
	memset(&ss->upd_state, 0, sizeof(ss->upd_state));

	status = OdpGpuBegin(ctx, &ss->dev);
	if (status != ODP_OK)
	{
		free(ss);
		return status;
	}
	ss->arena.budget = ss->dev.budget;
	ss->nq = m->rows;
	ss->h_qrow = (int64_t *) malloc(sizeof(int64_t) * (size_t) m->rows);
	ss->h_pos = (int64_t *) malloc(sizeof(int64_t) * (size_t) m->rows);
	ss->h_upper = (double *) malloc(sizeof(double) * (size_t) m->rows);
	if (!ss->h_qrow || !ss->h_pos || !ss->h_upper)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the GPU SolvingSet backend");
		goto cleanup;
	}
	ss->cap = m->rows < SS_MAX_BATCH ? (int32_t) m->rows : SS_MAX_BATCH;
	cap_pad = SsPad(ss->cap);
	ss->qcap = cap_pad;

	/* check the plan against the budget first, for a clear message */
	row_bytes = (size_t) m->dims * sizeof(float) + (ss->cosine ? sizeof(float) : 0);
	need = (size_t) m->rows * (2 * row_bytes + 2 * OdpKnnStateBytesPerRow(k) +
							   sizeof(double) + sizeof(int64_t)) +
		(size_t) ss->qcap * (row_bytes + OdpKnnStateBytesPerRow(k + 1)) +
		(size_t) ss->cap * (sizeof(int64_t) + sizeof(double)) +
		16 * ODP_GPU_ALLOC_ALIGN;
	/* the single pass, when k allows and its buffers fit beside the rest */
	if (k <= ODP_KNN_FAST_MAX_K && odp_gpu_ss_fused_cap != 0)
	{
		size_t		fneed;

		ss->fcap = odp_gpu_ss_fused_cap < 0 || odp_gpu_ss_fused_cap > SS_FUSED_CAP ?
			SS_FUSED_CAP : odp_gpu_ss_fused_cap;
		ss->fbatch = ss->cap < SS_FUSED_BATCH ? ss->cap : SS_FUSED_BATCH;
		/* the selection's sort needs about one more copy of its input */
		ss->sort_tmp_bytes = 0;
		if (cub::DeviceRadixSort::SortPairsDescending(NULL, ss->sort_tmp_bytes,
													  (double *) NULL, (double *) NULL,
													  (int64_t *) NULL, (int64_t *) NULL,
													  m->rows, 0, 64) != cudaSuccess)
		{
			(void) cudaGetLastError();	/* not sticky: keep it from later checks */
			ss->sort_tmp_bytes = (size_t) m->rows * 32;
		}
		fneed = (size_t) m->rows * (1 + 2 * sizeof(double) + 2 * sizeof(int64_t)) +
			ss->sort_tmp_bytes +
			(size_t) ss->fbatch * ((size_t) ss->fcap * sizeof(float) + 3 * sizeof(float)) +
			10 * ODP_GPU_ALLOC_ALIGN;
		ss->fused = need + fneed <= ss->dev.budget;
		if (ss->fused)
			need += fneed;
	}
	if (need > ss->dev.budget)
	{
		status = odp_fail(ctx, ODP_ERR_GPU_OOM,
						"GPU memory budget of %zu bytes is too small for SolvingSet on %lld rows of %d dimensions with k = %d: %zu bytes are needed (brute force needs less)",
						ss->dev.budget, (long long) m->rows, m->dims, k, need);
		goto cleanup;
	}

	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&ss->stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * m->dims * sizeof(float),
							"the input rows", (void **) &ss->d_data));
	if (ss->cosine)
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * sizeof(float),
								"the row norms", (void **) &ss->d_norms));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->cap * sizeof(int64_t),
							"the SolvingSet candidates", (void **) &ss->d_cand));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena,
							(size_t) ss->qcap * m->dims * sizeof(float),
							"the SolvingSet candidate rows", (void **) &ss->d_gather));
	if (ss->cosine)
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena,
								(size_t) ss->qcap * sizeof(float),
								"the SolvingSet candidate norms", (void **) &ss->d_gnorm));
	ODP_TRY(OdpKnnStateAlloc(ctx, &ss->arena, ss->qcap, k + 1,
							&ss->exact_state));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->cap * sizeof(double),
							"the SolvingSet weights", (void **) &ss->d_weight));
	ODP_TRY(OdpKnnStateAlloc(ctx, &ss->arena, m->rows, k, &ss->upd_state));
	ODP_TRY(OdpKnnStateAlloc(ctx, &ss->arena, m->rows, k, &ss->alt_state));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * sizeof(int64_t),
							"the SolvingSet active rows", (void **) &ss->d_qrow));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * m->dims * sizeof(float),
							"the SolvingSet active row data", (void **) &ss->d_q));
	if (ss->cosine)
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * sizeof(float),
								"the SolvingSet active row norms", (void **) &ss->d_qnorm));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * sizeof(double),
							"the SolvingSet upper bounds", (void **) &ss->d_upper));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, sizeof(int), "an error flag",
							(void **) &ss->d_bad));
	if (ss->fused)
	{
		ss->h_fcount = (int32_t *) malloc(sizeof(int32_t) * (size_t) ss->fbatch);
		ss->h_over = (int64_t *) malloc(sizeof(int64_t) * (size_t) ss->fbatch);
		ss->h_overw = (double *) malloc(sizeof(double) * (size_t) ss->fbatch);
		ss->h_overpos = (int64_t *) malloc(sizeof(int64_t) * (size_t) ss->fbatch);
		if (!ss->h_fcount || !ss->h_over || !ss->h_overw || !ss->h_overpos)
		{
			status = odp_fail(ctx, ODP_ERR_HOST_OOM,
							  "out of host memory for the GPU SolvingSet backend");
			goto cleanup;
		}
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows,
								"the SolvingSet active flags", (void **) &ss->d_active));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->fbatch * sizeof(float),
								"the SolvingSet candidate bounds", (void **) &ss->d_bound));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->fbatch * sizeof(float),
								"the SolvingSet candidate limits", (void **) &ss->d_limit));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->fbatch * sizeof(int32_t),
								"the SolvingSet candidate counts", (void **) &ss->d_fcount));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena,
								(size_t) ss->fbatch * ss->fcap * sizeof(float),
								"the SolvingSet candidate buffers", (void **) &ss->d_fbuf));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, sizeof(int), "a SolvingSet flag",
								(void **) &ss->d_unbounded));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, sizeof(int32_t), "a SolvingSet counter",
								(void **) &ss->d_nact));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * 2 * sizeof(double),
								"the SolvingSet selection keys", (void **) &ss->d_keys));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * 2 * sizeof(int64_t),
								"the SolvingSet selection rows", (void **) &ss->d_rowid));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, ss->sort_tmp_bytes > 0 ? ss->sort_tmp_bytes : 1,
								"the SolvingSet selection sort", &ss->d_sort_tmp));
		SsIotaKernel<<<(unsigned) ((m->rows + 255) / 256), 256, 0, ss->stream>>>(ss->d_rowid, m->rows);
		ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet selection setup");
	}
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(ss->d_bad, 0, sizeof(int), ss->stream),
				 "clearing an error flag");

	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_data, m->data,
									  (size_t) m->rows * m->dims * sizeof(float),
									  cudaMemcpyHostToDevice, ss->stream),
				 "copying the input rows to the GPU");
	if (ss->cosine)
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->d_norms, norms,
										  (size_t) m->rows * sizeof(float),
										  cudaMemcpyHostToDevice, ss->stream),
					 "copying the row norms to the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "copying the input rows to the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;

	backend->self = ss;
	backend->exact = SsExact;
	backend->update = SsUpdate;
	backend->exact_update = SsExactUpdate;
	backend->select = SsSelect;
	backend->external = SsExternal;
	backend->row_bounds = SsRowBounds;
	backend->release = SsRelease;
	return ODP_OK;

cleanup:
	SsRelease(ss);
	return status;
}
