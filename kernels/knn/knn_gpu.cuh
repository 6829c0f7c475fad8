/*-------------------------------------------------------------------------
 *
 * knn_gpu.cuh
 *	  The shared GPU primitive: fused distance tiles and per-query
 *	  k-smallest selection of a query set Q against a candidate set C.
 *
 * For every query q the primitive keeps, in device memory, the k smallest
 * (distance, global candidate index) pairs seen so far, sorted ascending
 * by distance and then by candidate index; that order is also the tie
 * rule (equal distances prefer the smaller index).  Calls accumulate: the
 * caller may feed the candidates of one query set in several chunks, in
 * any order, and gets exactly the result of one pass over all of them.
 *
 * Used by the outlier scores (Q = C, self-exclusion on) and meant for the
 * k-NN query and the k-NN join (Q != C).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_KNN_CUH
#define ODP_GPU_KNN_CUH

#include <float.h>
#include <math.h>

#include <cuda_runtime.h>

#include "gpu/gpu_runtime.cuh"

/*
 * Pending-candidate buffer per query of the large-k path (k above
 * ODP_KNN_FAST_MAX_K), held in device memory next to the state.
 */
#define ODP_KNN_GLOBAL_CAP		256

/* Largest k served by the shared-memory (fast) selection. */
#define ODP_KNN_FAST_MAX_K		128

/* Query rows one thread block handles; a good multiple for chunk sizes. */
#define ODP_KNN_BLOCK_QUERIES	64

/*
 * One accumulation problem.  Row data are device pointers, row-major
 * rows x dims of T: float32 (OdpKnnProblem, this file's kernel) or
 * float64 (OdpKnnProblemOf<double>, knn_gpu_wide.cuh, which reads only
 * the fields up to split_queries).  Global indices (query_base + i,
 * cand_base + j) are what the state records and what self-exclusion
 * compares.
 */
template <typename T>
struct OdpKnnProblemOf
{
	const T    *queries;		/* nq x dims */
	const T    *query_norms;	/* nq, cosine only, else NULL */
	int64_t		query_base;		/* global index of queries[0] */
	int64_t		nq;
	const T    *cands;			/* nc x dims */
	const T    *cand_norms;		/* nc, cosine only, else NULL */
	int64_t		cand_base;		/* global index of cands[0] */
	int64_t		nc;
	int32_t		dims;			/* 1 .. ODP_MAX_DIMS */
	OdpMetric	metric;
	bool		exclude_self;	/* skip pairs whose global indices are equal */

	/*
	 * The caller promises that candidate global indexes ascend through
	 * the problem and exceed every index already in the state (the
	 * primitive visits candidates in ascending local order).  A candidate
	 * that ties a query's k-th distance then can never enter, so the
	 * prefilter lets only strictly smaller distances through: data with
	 * many equal distances (integer grids) skips most exact checks.
	 */
	bool		ascending_candidates;

	/*
	 * Candidate-range split, for query sets too small to fill the GPU: 0
	 * (the default) lets every query see every candidate.  Otherwise
	 * query i sees only candidates [s * cand_split, (s + 1) * cand_split)
	 * with s = i / split_queries, so a caller can stack copies of its
	 * queries, one per candidate range, and merge their lists afterwards.
	 * split_queries must be a multiple of ODP_KNN_BLOCK_QUERIES.
	 */
	int64_t		cand_split;
	int64_t		split_queries;

	/*
	 * Candidate side, for SolvingSet's single pass (solvingset_gpu.cu):
	 * with cand_bound set, every pair (query q, candidate c) with
	 * distance < cand_bound[c] (strictly) and q < nq also appends its
	 * distance to candidate c's buffer,
	 * cand_buf[c * cand_cap ...], counting in cand_count[c] (which the
	 * caller zeroes; a count above cand_cap means the buffer overflowed and
	 * holds only cand_cap of them, in no order).  The pair of c with
	 * itself (query_base + q == cand_self[c]) is skipped for cosine only;
	 * for the other metrics it is exactly 0 and is appended when 0 <
	 * cand_bound[c], and the caller discounts it.  cand_limit is nc floats of
	 * scratch.  query_active (nq flags, or NULL) then limits the query side:
	 * rows with 0 are neither read from nor written to the state.  Needs
	 * k <= ODP_KNN_FAST_MAX_K and no cand_split.
	 */
	const float *cand_bound;	/* nc, or NULL: no candidate side */
	const int64_t *cand_self;	/* nc global query indexes to skip */
	float	   *cand_limit;		/* nc, scratch */
	int32_t    *cand_count;		/* nc */
	float	   *cand_buf;		/* nc x cand_cap */
	int32_t		cand_cap;
	const uint8_t *query_active;	/* nq, or NULL */

	/*
	 * For the tensor-core filter only (OdpKnnTcSearch): above 0, it gives
	 * up (done = false) as soon as more than this fraction of a query
	 * chunk's lists overflow, since each of those queries then scans every
	 * candidate.  A caller with a cheaper way for such data (SolvingSet on
	 * rows in tight clusters) sets it; 0 always finishes.
	 */
	double		tc_max_overflow;

	/*
	 * The caller reads only the distances of the lists (outlier scores):
	 * a path may leave the indexes unset and need not find which of many
	 * equal distances are the k-th (OdpKnnIntSearch counts them instead).
	 */
	bool		values_only;

	/*
	 * For the tensor-core filter only: the queries are team part
	 * team_part's own rows of a self join whose candidates are every row
	 * (knn_internal.h), or team is NULL.
	 */
	struct OdpKnnTeam *team;
	int			team_part;
};
typedef OdpKnnProblemOf<float> OdpKnnProblem;

/*
 * Per-query selection state in device memory: row q of dist/index holds
 * count[q] valid entries, ascending.  buf_* exist for k above
 * ODP_KNN_FAST_MAX_K only (else NULL); they are scratch, empty between
 * calls.  The distances have the rows' type T (float, or double for
 * float64 rows).
 */
template <typename T>
struct OdpKnnStateOf
{
	T		   *dist;			/* rows x k */
	int64_t    *index;			/* rows x k, global candidate indices */
	int32_t    *count;			/* rows */
	T		   *buf_dist;		/* rows x ODP_KNN_GLOBAL_CAP, or NULL */
	int64_t    *buf_index;
	int64_t		rows;
	int32_t		k;
};
typedef OdpKnnStateOf<float> OdpKnnState;

/*
 * Maps an exact distance threshold t to the threshold the prefilter
 * compares raw accumulators with.  For euclidean: the largest float a
 * with sqrtf(a) <= t, so "acc <= limit" holds exactly when
 * "sqrtf(acc) <= t" does (sqrtf is monotone).  Identity elsewhere.
 * Shared by the primitive and the tensor-core filter.
 */
template <OdpMetric M>
static __device__ __forceinline__ float
OdpKnnPrefilterLimit(float t)
{
	float		a;

	if (M != ODP_METRIC_EUCLIDEAN || !(t < INFINITY))
		return t;
	a = __fmul_rn(t, t);
	if (a == INFINITY)
		return FLT_MAX;
	while (a > 0.0f && sqrtf(a) > t)
		a = nextafterf(a, 0.0f);
	while (a < FLT_MAX && sqrtf(nextafterf(a, INFINITY)) <= t)
		a = nextafterf(a, INFINITY);
	return a;
}

/*
 * Device bytes of state per query row for k, rounding aside, with
 * distances of type T.  Callers plan chunk sizes with it.
 */
template <typename T = float>
extern size_t OdpKnnStateBytesPerRow(int32_t k);

/*
 * Allocates state for rows queries and k neighbours from arena; the state
 * is not yet reset.  T is float or double.
 */
template <typename T>
extern OdpStatus OdpKnnStateAlloc(OdpContext *ctx, OdpGpuArena *arena,
								  int64_t rows, int32_t k,
								  OdpKnnStateOf<T> *state);

/* Empties the state (count = 0) on stream, before the first candidates. */
template <typename T>
extern OdpStatus OdpKnnStateReset(OdpContext *ctx, cudaStream_t stream,
								  OdpKnnStateOf<T> *state);

/*
 * Launch sizing of the primitive's kernels (this one and knn_gpu_wide.cu's),
 * in units of "pair-dimension steps" of a metric on dims dimensions:
 * whole waves of blocks (wave, block_queries queries each) over every
 * candidate a query sees (span) when that stays under work, else one wave
 * over a candidate range (a multiple of tile, at least one tile).  Sets
 * the number of query blocks of nq queries, the blocks per launch and the
 * candidates per launch, keeping a launch's tiles x nchunks within int.
 */
extern void OdpKnnLaunchShape(OdpMetric m, int dims, int64_t nq, int64_t span,
							  int64_t wave, int block_queries, int tile,
							  int nchunks, int64_t work,
							  int64_t *blocks_total, int64_t *qblocks,
							  int64_t *cslice);

/*
 * Merges all candidates of p into the state of p's queries (state->rows
 * must equal p->nq).  Runs as bounded kernel launches on stream (each well
 * under 100 ms), polls odp_cancel_requested between them and returns
 * ODP_ERR_CANCELLED, with the stream idle, when asked to stop.  Adds the
 * elapsed time to *compute_ms.  Requires 1 <= k <= ODP_MAX_K and dims in
 * 1 .. ODP_MAX_DIMS; the caller has the device selected (OdpGpuBegin).
 */
extern OdpStatus OdpKnnAccumulate(OdpContext *ctx, const OdpGpuDevice *dev,
								  cudaStream_t stream, const OdpKnnProblem *p,
								  OdpKnnState *state, double *compute_ms);

#endif							/* ODP_GPU_KNN_CUH */
