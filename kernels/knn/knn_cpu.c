/*-------------------------------------------------------------------------
 *
 * knn_cpu.c
 *	  CPU path: blocked brute-force k-nearest-neighbour selection, the
 *	  shared primitive behind the CPU k-NN queries and joins, the outlier
 *	  scores and SolvingSet's exact step.
 *
 * Work is split into blocks of query rows; each block sweeps the
 * candidate rows in cache-sized blocks and keeps, per query, a max-heap of
 * its k best (distance, index) pairs.  Candidates arrive in ascending
 * index order and only a strictly better pair enters a full heap, so among
 * equal distances the smaller index wins, as on the GPU path.
 *
 * A query can be excluded from its own candidates: by position
 * (self_join, queries == candidates) or by a global row index per query
 * (query_rows, queries gathered from the candidate matrix).
 *
 * Float32 and float64 rows run the same code (knn_cpu_body.h, included
 * once per precision), each in its own precision throughout; rows of 0/1
 * values compare as bits in both (knn_cpu_bits.c).
 *
 * Threads: with cpu_threads > 1 the caller's thread and cpu_threads - 1
 * POSIX threads take query blocks from a shared counter.  Only the
 * caller's thread polls the cancel callback (it may touch the host
 * program's state); workers see a flag.  Workers are started by
 * odp_cpu_workers_start (host_threads.h), every signal blocked.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_cpu.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <xmmintrin.h>
#endif

#include "common/engine_internal.h"
#include "common/host_threads.h"
#include "include/odp_distance.h"
#include "knn/knn_cpu_bits.h"
#include "knn/knn_internal.h"
#include "knn/knn_merge.h"

/*
 * Candidate rows per block: the transposed block (dims x rows values) is
 * kept near 64 kB so it stays in L2 while a query block sweeps it.
 */
#define CPU_CAND_BLOCK_MAX	1024
#define CPU_CAND_BLOCK_MIN	16
#define CPU_BLOCK_FLOATS	16384
#define CPU_MAX_THREADS 256

/* heap_offer, heap64_offer and their sorts: float and float64 distances */
#define ODP_HEAP_PREFIX heap
#define ODP_HEAP_KEY float
#include "common/select_heap.h"
#define ODP_HEAP_PREFIX heap64
#define ODP_HEAP_KEY double
#include "common/select_heap.h"

/*
 * Copies m (at most KNN_TILE) rows of dims values, row-major at tile, into
 * the transposed block at ct (dimension d's values at ct + d * cb).  The
 * rows stay in L1 while each dimension's values are written side by side;
 * float32 rows of a full tile go 4 rows by 4 dimensions at a time through
 * SSE registers.  A copy: the values keep their bits.
 */
static inline void
transpose_tile(const float *tile, int m, int dims, float *ct, size_t cb)
{
	int			d = 0;

#ifdef __SSE2__
	if (m == 16)
		for (; d + 4 <= dims; d += 4)
			for (int t = 0; t < 16; t += 4)
			{
				const float *r = tile + (size_t) t * dims + d;
				__m128		r0 = _mm_loadu_ps(r);
				__m128		r1 = _mm_loadu_ps(r + dims);
				__m128		r2 = _mm_loadu_ps(r + 2 * (size_t) dims);
				__m128		r3 = _mm_loadu_ps(r + 3 * (size_t) dims);
				float	   *out = ct + (size_t) d * cb + t;

				_MM_TRANSPOSE4_PS(r0, r1, r2, r3);
				_mm_storeu_ps(out, r0);
				_mm_storeu_ps(out + cb, r1);
				_mm_storeu_ps(out + 2 * cb, r2);
				_mm_storeu_ps(out + 3 * cb, r3);
			}
#endif
	for (; d < dims; d++)
		for (int t = 0; t < m; t++)
			ct[(size_t) d * cb + t] = tile[(size_t) t * dims + d];
}

static inline void
transpose_tile64(const double *tile, int m, int dims, double *ct, size_t cb)
{
	for (int d = 0; d < dims; d++)
		for (int t = 0; t < m; t++)
			ct[(size_t) d * cb + t] = tile[(size_t) t * dims + d];
}

/* float32 rows: knn_run and its parts */
/* See knn_internal.h. */
void
odp_cpu_knn_plan(int64_t nq, int64_t ncand, int dims, int threads, OdpCpuKnnPlan *plan)
{
	int			nthreads = threads > 1 ? threads : 1;
	double		terms = (double) nq * (double) ncand * dims;

	if (nthreads > CPU_MAX_THREADS)
		nthreads = CPU_MAX_THREADS;
	if (terms < (double) nthreads * ODP_KNN_CPU_TERMS_PER_THREAD)
		nthreads = terms < ODP_KNN_CPU_TERMS_PER_THREAD ? 1 :
			(int) (terms / ODP_KNN_CPU_TERMS_PER_THREAD);
	plan->threads = nthreads;
	plan->ranges = 1;
	/* queries per block: enough to reuse the cached candidate block */
	plan->query_block = 16;
	plan->nblocks = (nq + plan->query_block - 1) / plan->query_block;
	if (plan->nblocks < nthreads * 4 && nq >= nthreads * 4)
	{
		plan->query_block = (nq + nthreads * 4 - 1) / (nthreads * 4);
		plan->nblocks = (nq + plan->query_block - 1) / plan->query_block;
	}
	else if (nq < nthreads * 4 && nthreads > 1 &&
			 ncand >= (int64_t) nthreads * CPU_CAND_BLOCK_MAX)
	{
		plan->ranges = nthreads;
		plan->query_block = nq;
		plan->nblocks = nthreads;
	}
}

#define ODP_KNN_PREFIX knn
#define ODP_KNN_T float
#define ODP_KNN_ROWS(m) ((m)->data)
#define ODP_KNN_QNORMS query_norms
#define ODP_KNN_CNORMS cand_norms
#define ODP_KNN_EMIT emit
#define ODP_KNN_BLOCK odp_cpu_block_distances
#define ODP_KNN_TRANSPOSE transpose_tile
#define ODP_KNN_HEAP(x) heap_##x
#define ODP_KNN_MERGE_NEXT odp_merge_next
#include "knn/knn_cpu_body.h"

/* float64 rows: knn64_run and its parts */
#define ODP_KNN_PREFIX knn64
#define ODP_KNN_T double
#define ODP_KNN_ROWS(m) ((m)->data64)
#define ODP_KNN_QNORMS query_norms64
#define ODP_KNN_CNORMS cand_norms64
#define ODP_KNN_EMIT emit64
#define ODP_KNN_BLOCK odp_cpu_block_distances64
#define ODP_KNN_TRANSPOSE transpose_tile64
#define ODP_KNN_HEAP(x) heap64_##x
#define ODP_KNN_MERGE_NEXT odp_merge_next64
#include "knn/knn_cpu_body.h"

/*
 * Computes each query's k nearest candidates (fewer if there are fewer
 * candidates) and hands them to args->emit, sorted ascending by
 * (distance, index).  emit may run on several threads at once, each time
 * for a different query.
 *
 * Many queries are shared out by query blocks.  A few (fewer than four
 * per thread, such as one k-NN query) would leave threads idle, so then
 * every thread takes a range of the candidates for all of them, and the
 * ranges' lists are merged at the end.
 */
OdpStatus
odp_cpu_knn(const OdpCpuKnnArgs *args)
{
	if (odp_matrix_is64(args->queries) != odp_matrix_is64(args->candidates))
		return odp_fail(args->ctx, ODP_ERR_INVALID_ARGUMENT,
						"queries and candidates of different precisions");
	if (odp_matrix_is64(args->queries))
		return knn64_run(args);
	return knn_run(args);
}
