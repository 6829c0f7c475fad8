/*-------------------------------------------------------------------------
 *
 * knn_cpu_body.h
 *	  The CPU k-nearest-neighbour primitive (knn_cpu.c) for one precision
 *	  of the rows, instantiated like common/select_heap.h: float32 and
 *	  float64 rows run the same blocked, threaded, cancellable algorithm.
 *
 * Include it with
 *
 *	  #define ODP_KNN_PREFIX name		-- names name_run, name_Job, ...
 *	  #define ODP_KNN_T type			-- float, double: values, distances
 *	  #define ODP_KNN_ROWS(m) rows		-- (m)->data, (m)->data64
 *	  #define ODP_KNN_QNORMS member		-- query_norms, query_norms64
 *	  #define ODP_KNN_CNORMS member		-- cand_norms, cand_norms64
 *	  #define ODP_KNN_EMIT member		-- emit, emit64
 *	  #define ODP_KNN_BLOCK name		-- odp_cpu_block_distances, ..64
 *	  #define ODP_KNN_TRANSPOSE name	-- copies a tile of rows transposed
 *	  #define ODP_KNN_HEAP(x) name		-- the select_heap.h instance's x
 *	  #define ODP_KNN_MERGE_NEXT name	-- odp_merge_next, odp_merge_next64
 *	  #include "knn/knn_cpu_body.h"
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_cpu_body.h
 *
 *-------------------------------------------------------------------------
 */
#if !defined(ODP_KNN_PREFIX) || !defined(ODP_KNN_T) || !defined(ODP_KNN_ROWS) || \
	!defined(ODP_KNN_QNORMS) || !defined(ODP_KNN_CNORMS) || !defined(ODP_KNN_EMIT) || \
	!defined(ODP_KNN_BLOCK) || !defined(ODP_KNN_HEAP) || !defined(ODP_KNN_TRANSPOSE) || \
	!defined(ODP_KNN_MERGE_NEXT)
#error "define the ODP_KNN_ macros before including knn_cpu_body.h"
#endif

#define KNN_CAT_(a, b) a##_##b
#define KNN_CAT(a, b) KNN_CAT_(a, b)
#define KNN_NAME(x) KNN_CAT(ODP_KNN_PREFIX, x)
/* Rows a tile of the transposed copy takes (16 floats: one cache line). */
#define KNN_TILE 16

/* One thread's buffers. */
typedef struct KNN_NAME(Scratch)
{
	int			cand_block;		/* candidates per block */
	ODP_KNN_T  *ct;				/* dims x cand_block, transposed block */
	ODP_KNN_T  *cnorm;			/* cand_block norms (cosine) */
	ODP_KNN_T  *acc;			/* cand_block distances of one query */
	ODP_KNN_T  *hd;				/* query_block x k heap distances */
	int64_t    *hi;				/* query_block x k heap indexes */
	int32_t    *sizes;			/* query_block heap sizes */
} KNN_NAME(Scratch);

typedef struct KNN_NAME(Job)
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
	ODP_KNN_T  *part_d;
	int64_t    *part_i;
	int32_t    *part_n;
	atomic_llong next_block;
	atomic_int	stop;
	OdpStatus	worker_status;	/* first worker failure, under stop */
	OdpKnnBits	bits;			/* 0/1 rows as bits, or words = 0 */
} KNN_NAME(Job);

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
KNN_NAME(query_block)(KNN_NAME(Job) *job, OdpMetric metric, int64_t q0, int64_t q1,
				int range, KNN_NAME(Scratch) *sc, bool poll)
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

		/*
		 * The values' transposed block (bits are packed already), a tile
		 * of KNN_TILE rows at a time (ODP_KNN_TRANSPOSE).  Row by row,
		 * every value landed a block's width from the last, and the copy
		 * took nine tenths of a single query's time.
		 */
		if (!by_bits)
		{
			const ODP_KNN_T *rows = ODP_KNN_ROWS(a->candidates) + c0 * dims;

			for (int t0 = 0; t0 < nc; t0 += KNN_TILE)
				ODP_KNN_TRANSPOSE(rows + (size_t) t0 * dims,
								  nc - t0 < KNN_TILE ? nc - t0 : KNN_TILE, dims,
								  sc->ct + t0, (size_t) cb);
			for (int c = 0; c < nc; c++)
				sc->cnorm[c] = a->ODP_KNN_CNORMS ? a->ODP_KNN_CNORMS[c0 + c] : 0;
		}

		for (int64_t q = q0; q < q1; q++)
		{
			const ODP_KNN_T *qrow = ODP_KNN_ROWS(a->queries) + q * dims;
			ODP_KNN_T	qnorm = a->ODP_KNN_QNORMS ? a->ODP_KNN_QNORMS[q] : 0;
			int64_t		self = a->query_rows ? a->query_rows[q] - c0 :
				(a->self_join ? q - c0 : -1);
			ODP_KNN_T  *qd = sc->hd + (q - q0) * k;
			int64_t    *qi = sc->hi + (q - q0) * k;
			int32_t    *size = &sc->sizes[q - q0];
			ODP_KNN_T  *acc = sc->acc;

			ODP_KNN_BLOCK(metric, bits, by_bits ? bits->queries + q * bits->words : NULL,
									by_bits ? bits->cands + c0 * bits->words : NULL,
									qrow, qnorm, sc->ct, cb, sc->cnorm, dims, nc, acc);

			for (int c = 0; c < nc; c++)
			{
				if (c == self)
					continue;
				if (*size < k || acc[c] < qd[0])
					ODP_KNN_HEAP(offer)(qd, qi, size, k, acc[c], c0 + c);
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
		ODP_KNN_T  *qd = sc->hd + (q - q0) * k;
		int64_t    *qi = sc->hi + (q - q0) * k;

		ODP_KNN_HEAP(sort_ascending)(qd, qi, sc->sizes[q - q0]);
		if (job->ranges == 1)
			a->ODP_KNN_EMIT(a->emit_arg, q, qd, qi, sc->sizes[q - q0]);
		else
		{
			const size_t at = (size_t) range * a->queries->rows + q;

			memcpy(job->part_d + at * k, qd, sizeof(ODP_KNN_T) * sc->sizes[q - q0]);
			memcpy(job->part_i + at * k, qi, sizeof(int64_t) * sc->sizes[q - q0]);
			job->part_n[at] = sc->sizes[q - q0];
		}
	}
	return true;
}

/* Runs query blocks until none is left; poll says whether to ask cancel. */
static OdpStatus
KNN_NAME(worker_loop)(KNN_NAME(Job) *job, bool poll)
{
	const OdpCpuKnnArgs *a = job->args;
	int64_t		qb = job->query_block;
	int			dims = a->queries->dims;
	KNN_NAME(Scratch) sc;
	OdpStatus	status = ODP_OK;

	/* the same bytes per block in either precision */
	sc.cand_block = CPU_BLOCK_FLOATS * (int) sizeof(float) / (int) sizeof(ODP_KNN_T) / dims;
	if (sc.cand_block > CPU_CAND_BLOCK_MAX)
		sc.cand_block = CPU_CAND_BLOCK_MAX;
	if (sc.cand_block < CPU_CAND_BLOCK_MIN)
		sc.cand_block = CPU_CAND_BLOCK_MIN;
	sc.ct = malloc(sizeof(ODP_KNN_T) * (size_t) dims * sc.cand_block);
	sc.cnorm = malloc(sizeof(ODP_KNN_T) * sc.cand_block);
	sc.acc = malloc(sizeof(ODP_KNN_T) * sc.cand_block);
	sc.hd = malloc(sizeof(ODP_KNN_T) * qb * a->k);
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
				ok = KNN_NAME(query_block)(job, ODP_METRIC_EUCLIDEAN, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_SQEUCLIDEAN:
				ok = KNN_NAME(query_block)(job, ODP_METRIC_SQEUCLIDEAN, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_MANHATTAN:
				ok = KNN_NAME(query_block)(job, ODP_METRIC_MANHATTAN, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_CHEBYSHEV:
				ok = KNN_NAME(query_block)(job, ODP_METRIC_CHEBYSHEV, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_COSINE:
				ok = KNN_NAME(query_block)(job, ODP_METRIC_COSINE, q0, q1, range, &sc, poll);
				break;
			case ODP_METRIC_INNER_PRODUCT:
				ok = KNN_NAME(query_block)(job, ODP_METRIC_INNER_PRODUCT, q0, q1, range, &sc, poll);
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
KNN_NAME(thread_main)(void *arg)
{
	KNN_NAME(Job)  *job = (KNN_NAME(Job) *) arg;

	if (KNN_NAME(worker_loop)(job, false) != ODP_OK)
		job->worker_status = ODP_ERR_HOST_OOM;
	return NULL;
}

/*
 * Merges query q's sorted lists of the job's candidate ranges (disjoint,
 * ascending index ranges) into its k smallest and emits them.
 */
static void
KNN_NAME(merge_ranges)(KNN_NAME(Job) *job, int64_t q, ODP_KNN_T *md, int64_t *mi)
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
		const int	r = ODP_KNN_MERGE_NEXT(job->part_d + q * k, job->part_i + q * k,
									   stride, job->ranges, pos, len);

		if (r < 0)
			break;
		md[n] = job->part_d[r * stride + q * k + pos[r]];
		mi[n] = job->part_i[r * stride + q * k + pos[r]];
		pos[r]++;
		n++;
	}
	a->ODP_KNN_EMIT(a->emit_arg, q, md, mi, n);
}

/* odp_cpu_knn for this precision. */
static OdpStatus
KNN_NAME(run)(const OdpCpuKnnArgs *args)
{
	OdpContext *ctx = args->ctx;
	KNN_NAME(Job)	job;
	OdpCpuKnnPlan plan;
	int			nthreads;
	pthread_t	threads[CPU_MAX_THREADS];
	int			started = 0;
	OdpStatus	status;
	const int64_t nq = args->queries->rows;
	const int64_t ncand = args->candidates->rows;

	odp_cpu_knn_plan(nq, ncand, args->queries->dims, ctx->cpu_threads, &plan);
	nthreads = plan.threads;
	memset(&job, 0, sizeof(job));
	job.args = args;
	job.ranges = plan.ranges;
	job.range_rows = (ncand + plan.ranges - 1) / plan.ranges;
	job.query_block = plan.query_block;
	job.nblocks = plan.nblocks;
	if (plan.ranges > 1)
	{
		job.part_d = malloc(sizeof(ODP_KNN_T) * (size_t) nthreads * nq * args->k);
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

	started = odp_cpu_workers_start(threads, nthreads, KNN_NAME(thread_main), &job);
	status = KNN_NAME(worker_loop)(&job, true);
	odp_cpu_workers_join(threads, started);

	if (status == ODP_OK && job.worker_status != ODP_OK)
		status = job.worker_status;
	if (status == ODP_OK && !atomic_load(&job.stop) && job.ranges > 1)
	{
		ODP_KNN_T  *md = malloc(sizeof(ODP_KNN_T) * (size_t) args->k);
		int64_t    *mi = malloc(sizeof(int64_t) * (size_t) args->k);

		if (md == NULL || mi == NULL)
			status = ODP_ERR_HOST_OOM;
		else
			for (int64_t q = 0; q < nq; q++)
				KNN_NAME(merge_ranges)(&job, q, md, mi);
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

#undef KNN_NAME
#undef KNN_TILE
#undef KNN_CAT
#undef KNN_CAT_
#undef ODP_KNN_PREFIX
#undef ODP_KNN_T
#undef ODP_KNN_ROWS
#undef ODP_KNN_QNORMS
#undef ODP_KNN_CNORMS
#undef ODP_KNN_EMIT
#undef ODP_KNN_BLOCK
#undef ODP_KNN_TRANSPOSE
#undef ODP_KNN_HEAP
#undef ODP_KNN_MERGE_NEXT
