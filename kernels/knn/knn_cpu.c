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

#include "common/engine_internal.h"
#include "common/host_threads.h"
#include "include/odp_distance.h"
#include "knn/knn_cpu_bits.h"
#include "knn/knn_internal.h"
#include "knn/knn_merge.h"

/*
 * Candidate rows per block: the transposed block (dims x rows floats) is
 * kept near 64 kB so it stays in L2 while a query block sweeps it.
 */
#define CPU_CAND_BLOCK_MAX	1024
#define CPU_CAND_BLOCK_MIN	16
#define CPU_BLOCK_FLOATS	16384
#define CPU_MAX_THREADS 256

/* One thread's buffers. */
typedef struct CpuKnnScratch
{
	int			cand_block;		/* candidates per block */
	float	   *ct;				/* dims x cand_block, transposed block */
	float	   *cnorm;			/* cand_block norms (cosine) */
	float	   *acc;			/* cand_block distances of one query */
	float	   *hd;				/* query_block x k heap distances */
	int64_t    *hi;				/* query_block x k heap indexes */
	int32_t    *sizes;			/* query_block heap sizes */
} CpuKnnScratch;

typedef struct CpuKnnJob
{
	const OdpCpuKnnArgs *args;
	int64_t		query_block;	/* queries per block */
	int64_t		nblocks;		/* work items: query blocks x ranges */

	/*
	 * Candidate ranges (few queries): item b covers query block b / ranges
	 * and candidate range b % ranges, and leaves its sorted lists in
	 * part_* (ranges x queries x k) for the merge; 1 = no split, items
	 * emit directly.
	 */
	int			ranges;
	int64_t		range_rows;		/* candidates per range */
	float	   *part_d;
	int64_t    *part_i;
	int32_t    *part_n;
	atomic_llong next_block;
	atomic_int	stop;
	OdpStatus	worker_status;	/* first worker failure, under stop */
	OdpKnnBits	bits;			/* 0/1 rows as bits, or words = 0 */
} CpuKnnJob;

/* heap_offer and heap_sort_ascending over float distances */
#define ODP_HEAP_PREFIX heap
#define ODP_HEAP_KEY float
#include "common/select_heap.h"

/*
 * Processes one block of queries [q0, q1) against every candidate.
 *
 * Each candidate block is first copied transposed (dimension-major) into
 * ct, so that the innermost loop runs across candidates with unit stride
 * and the compiler vectorises it; every lane still applies odp_dist_step
 * to its own pair in dimension order, so the distances are the same bits
 * as the scalar definition.  Inlined with a constant metric so the
 * per-dimension switch folds away.  Returns false when stopped early
 * (cancel or another thread's failure).
 */
static inline __attribute__((always_inline)) bool
knn_query_block(CpuKnnJob *job, OdpMetric metric, int64_t q0, int64_t q1,
				int range, CpuKnnScratch *sc, bool poll)
{
	const OdpCpuKnnArgs *a = job->args;
	const OdpKnnBits *bits = &job->bits;
	const bool	by_bits = bits->words > 0;
	const int	dims = a->queries->dims;
	const int32_t k = a->k;
	const int64_t cfirst = (int64_t) range * job->range_rows;
	const int64_t ncand = cfirst + job->range_rows < a->candidates->rows ?
		cfirst + job->range_rows : a->candidates->rows;
	const int	cb = sc->cand_block;

	for (int64_t q = q0; q < q1; q++)
		sc->sizes[q - q0] = 0;

	for (int64_t c0 = cfirst; c0 < ncand; c0 += cb)
	{
		int			nc = (int) (c0 + cb < ncand ? cb : ncand - c0);

		/* the float path's transposed block; bits are packed already */
		if (!by_bits)
			for (int c = 0; c < nc; c++)
			{
				const float *crow = a->candidates->data + (c0 + c) * dims;

				for (int d = 0; d < dims; d++)
					sc->ct[(size_t) d * cb + c] = crow[d];
				sc->cnorm[c] = a->cand_norms ? a->cand_norms[c0 + c] : 0.0f;
			}

		for (int64_t q = q0; q < q1; q++)
		{
			const float *qrow = a->queries->data + q * dims;
			float		qnorm = a->query_norms ? a->query_norms[q] : 0.0f;
			int64_t		self = a->query_rows ? a->query_rows[q] - c0 :
				(a->self_join ? q - c0 : -1);
			float	   *qd = sc->hd + (q - q0) * k;
			int64_t    *qi = sc->hi + (q - q0) * k;
			int32_t    *size = &sc->sizes[q - q0];
			float	   *acc = sc->acc;

			odp_cpu_block_distances(metric, bits, by_bits ? bits->queries + q * bits->words : NULL,
									by_bits ? bits->cands + c0 * bits->words : NULL,
									qrow, qnorm, sc->ct, cb, sc->cnorm, dims, nc, acc);

			for (int c = 0; c < nc; c++)
			{
				if (c == self)
					continue;
				if (*size < k || acc[c] < qd[0])
					heap_offer(qd, qi, size, k, acc[c], c0 + c);
			}
		}
		if (atomic_load_explicit(&job->stop, memory_order_relaxed))
			return false;
		/* one candidate block is bounded work: a cheap place to poll */
		if (poll && odp_cancel_requested(a->ctx))
		{
			atomic_store(&job->stop, 1);
			return false;
		}
	}

	for (int64_t q = q0; q < q1; q++)
	{
		float	   *qd = sc->hd + (q - q0) * k;
		int64_t    *qi = sc->hi + (q - q0) * k;

		heap_sort_ascending(qd, qi, sc->sizes[q - q0]);
		if (job->ranges == 1)
			a->emit(a->emit_arg, q, qd, qi, sc->sizes[q - q0]);
		else
		{
			const size_t at = (size_t) range * a->queries->rows + q;

			memcpy(job->part_d + at * k, qd, sizeof(float) * sc->sizes[q - q0]);
			memcpy(job->part_i + at * k, qi, sizeof(int64_t) * sc->sizes[q - q0]);
			job->part_n[at] = sc->sizes[q - q0];
		}
	}
	return true;
}

/* Runs query blocks until none is left; poll says whether to ask cancel. */
static OdpStatus
knn_worker_loop(CpuKnnJob *job, bool poll)
{
	const OdpCpuKnnArgs *a = job->args;
	int64_t		qb = job->query_block;
	int			dims = a->queries->dims;
	CpuKnnScratch sc;
	OdpStatus	status = ODP_OK;

	sc.cand_block = CPU_BLOCK_FLOATS / dims;
	if (sc.cand_block > CPU_CAND_BLOCK_MAX)
		sc.cand_block = CPU_CAND_BLOCK_MAX;
	if (sc.cand_block < CPU_CAND_BLOCK_MIN)
		sc.cand_block = CPU_CAND_BLOCK_MIN;
	sc.ct = malloc(sizeof(float) * (size_t) dims * sc.cand_block);
	sc.cnorm = malloc(sizeof(float) * sc.cand_block);
	sc.acc = malloc(sizeof(float) * sc.cand_block);
	sc.hd = malloc(sizeof(float) * qb * a->k);
	sc.hi = malloc(sizeof(int64_t) * qb * a->k);
	sc.sizes = malloc(sizeof(int32_t) * qb);

	if (!sc.ct || !sc.cnorm || !sc.acc || !sc.hd || !sc.hi || !sc.sizes)
	{
		status = ODP_ERR_HOST_OOM;
		atomic_store(&job->stop, 1);
		goto done;
	}

	for (;;)
	{
		int64_t		b = atomic_fetch_add(&job->next_block, 1);
		int			range = (int) (b % job->ranges);
		int64_t		q0 = b / job->ranges * qb,
					q1;
		bool		ok = true;

		if (b >= job->nblocks || atomic_load(&job->stop))
			break;
		q1 = q0 + qb < a->queries->rows ? q0 + qb : a->queries->rows;
		switch (a->metric)
		{
			case ODP_METRIC_EUCLIDEAN:
				ok = knn_query_block(job, ODP_METRIC_EUCLIDEAN, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_SQEUCLIDEAN:
				ok = knn_query_block(job, ODP_METRIC_SQEUCLIDEAN, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_MANHATTAN:
				ok = knn_query_block(job, ODP_METRIC_MANHATTAN, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_CHEBYSHEV:
				ok = knn_query_block(job, ODP_METRIC_CHEBYSHEV, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_COSINE:
				ok = knn_query_block(job, ODP_METRIC_COSINE, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_INNER_PRODUCT:
				ok = knn_query_block(job, ODP_METRIC_INNER_PRODUCT, q0, q1, range, &sc, poll);
				break;
		}
		if (!ok)
			break;
	}
done:
	free(sc.ct);
	free(sc.cnorm);
	free(sc.acc);
	free(sc.hd);
	free(sc.hi);
	free(sc.sizes);
	return status;
}

/* pthread entry: a worker that never polls the cancel callback. */
static void *
knn_thread_main(void *arg)
{
	CpuKnnJob  *job = (CpuKnnJob *) arg;

	if (knn_worker_loop(job, false) != ODP_OK)
		job->worker_status = ODP_ERR_HOST_OOM;
	return NULL;
}

/*
 * Merges query q's sorted lists of the job's candidate ranges (disjoint,
 * ascending index ranges) into its k smallest and emits them.
 */
static void
knn_merge_ranges(CpuKnnJob *job, int64_t q, float *md, int64_t *mi)
{
	const OdpCpuKnnArgs *a = job->args;
	const int32_t k = a->k;
	const int64_t stride = a->queries->rows * k;
	int			pos[CPU_MAX_THREADS] = {0};
	int			len[CPU_MAX_THREADS];
	int32_t		n = 0;

	for (int r = 0; r < job->ranges; r++)
		len[r] = job->part_n[(size_t) r * a->queries->rows + q];
	while (n < k)
	{
		const int	r = odp_merge_next(job->part_d + q * k, job->part_i + q * k,
									   stride, job->ranges, pos, len);

		if (r < 0)
			break;
		md[n] = job->part_d[r * stride + q * k + pos[r]];
		mi[n] = job->part_i[r * stride + q * k + pos[r]];
		pos[r]++;
		n++;
	}
	a->emit(a->emit_arg, q, md, mi, n);
}

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
	OdpContext *ctx = args->ctx;
	CpuKnnJob	job;
	int			nthreads = ctx->cpu_threads > 1 ? ctx->cpu_threads : 1;
	pthread_t	threads[CPU_MAX_THREADS];
	int			started = 0;
	OdpStatus	status;
	const int64_t nq = args->queries->rows;
	const int64_t ncand = args->candidates->rows;

	if (nthreads > CPU_MAX_THREADS)
		nthreads = CPU_MAX_THREADS;

	memset(&job, 0, sizeof(job));
	job.args = args;
	job.ranges = 1;
	job.range_rows = ncand;
	/* queries per block: enough to reuse the cached candidate block */
	job.query_block = 16;
	job.nblocks = (nq + job.query_block - 1) / job.query_block;
	if (job.nblocks < nthreads * 4 && nq >= nthreads * 4)
	{
		job.query_block = (nq + nthreads * 4 - 1) / (nthreads * 4);
		job.nblocks = (nq + job.query_block - 1) / job.query_block;
	}
	else if (nq < nthreads * 4 && nthreads > 1 &&
			 ncand >= (int64_t) nthreads * CPU_CAND_BLOCK_MAX)
	{
		job.ranges = nthreads;
		job.range_rows = (ncand + nthreads - 1) / nthreads;
		job.query_block = nq;
		job.nblocks = nthreads;
		job.part_d = malloc(sizeof(float) * (size_t) nthreads * nq * args->k);
		job.part_i = malloc(sizeof(int64_t) * (size_t) nthreads * nq * args->k);
		job.part_n = malloc(sizeof(int32_t) * (size_t) nthreads * nq);
		if (!job.part_d || !job.part_i || !job.part_n)
		{
			free(job.part_d);
			free(job.part_i);
			free(job.part_n);
			return odp_fail(ctx, ODP_ERR_HOST_OOM,
							"out of host memory for %d partial neighbour lists of k = %d",
							nthreads, (int) args->k);
		}
	}
	atomic_init(&job.next_block, 0);
	atomic_init(&job.stop, 0);
	job.worker_status = ODP_OK;
	if (nq >= odp_cpu_knn_bits_min_queries)
		odp_knn_bits_prepare(args->metric, args->queries, args->candidates, &job.bits);

	started = odp_cpu_workers_start(threads, nthreads, knn_thread_main, &job);
	status = knn_worker_loop(&job, true);
	odp_cpu_workers_join(threads, started);

	if (status == ODP_OK && job.worker_status != ODP_OK)
		status = job.worker_status;
	if (status == ODP_OK && !atomic_load(&job.stop) && job.ranges > 1)
	{
		float	   *md = malloc(sizeof(float) * (size_t) args->k);
		int64_t    *mi = malloc(sizeof(int64_t) * (size_t) args->k);

		if (md == NULL || mi == NULL)
			status = ODP_ERR_HOST_OOM;
		else
			for (int64_t q = 0; q < nq; q++)
				knn_merge_ranges(&job, q, md, mi);
		free(md);
		free(mi);
	}
	free(job.part_d);
	free(job.part_i);
	free(job.part_n);
	odp_knn_bits_free(&job.bits);
	if (status == ODP_ERR_HOST_OOM)
		return odp_fail(ctx, status, "out of host memory for %lld neighbour lists of k = %d",
						(long long) job.query_block, (int) args->k);
	if (atomic_load(&job.stop))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
	return ODP_OK;
}
