/*-------------------------------------------------------------------------
 *
 * solvingset_cpu.c
 *	  CPU backend of the SolvingSet driver (solvingset.c): the exact
 *	  weights of a candidate batch and the upper-bound update of every
 *	  active row.
 *
 * exact() gathers the candidate rows and runs the shared k-NN primitive
 * (knn_cpu.c) with them as queries against the whole matrix, each query
 * excluding its own row by index, so each weight is the same float64 sum
 * of the same k smallest floats that brute force computes.
 *
 * update() keeps, for every row, a max-heap of the k smallest distances
 * to the candidates seen so far (rows x k floats, allocated once).  For
 * every active row p that is not a candidate it computes the distances to
 * the batch, blocked and transposed as in knn_cpu.c so that the inner loop
 * vectorises without changing any bit, merges them into p's heap and, if
 * the heap changed, rewrites upper[p]: the ascending float64 sum of a
 * sorted copy (odp_sum_ascending), or +inf while it holds fewer than k.
 *
 * exact_update() is the single pass of seed 000 (each row-candidate
 * distance once), used once every candidate's heap is full: every row
 * computes its distances to the batch; active rows merge them into their
 * heaps as update() does, and each distance under the candidate's bound
 * (the largest entry of the candidate's own heap: at least k other rows
 * lie at or under it) goes into the thread's max-heap of the k smallest
 * for that candidate.  The threads' heaps are then merged; the k smallest
 * other-row distances of a candidate are the merged ones under its bound,
 * ascending, followed by copies of the bound, so the weight is brute
 * force's to the bit.  The GPU backend computes the same weights the same
 * way (solvingset_gpu.cu).
 *
 * Threads: with cpu_threads > 1, the caller's thread and cpu_threads - 1
 * POSIX threads (all signals blocked) take blocks of rows from a shared
 * counter; only the caller's thread polls the cancel callback.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_cpu.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "common/host_threads.h"
#include "include/odp_distance.h"
#include "knn/knn_cpu_bits.h"
#include "knn/knn_internal.h"
#include "outliers/solvingset_internal.h"

#define SS_CAND_BLOCK_MAX	1024
#define SS_CAND_BLOCK_MIN	16
#define SS_BLOCK_FLOATS		16384	/* transposed candidate block, ~64 kB */
#define SS_ROW_BLOCK		64		/* rows per unit of update work */
#define SS_MAX_THREADS		256

/* The single pass: largest k, and most bytes of per-thread candidate heaps. */
#define SS_FUSED_MAX_K		128
#define SS_FUSED_MAX_BYTES	((size_t) 512 << 20)

/*
 * 0 makes exact_update() always take the two passes: a knob for the tests,
 * which check that both ways agree.
 */
int			odp_cpu_ss_fused = 1;

/* The backend's state (OdpSsBackend.self). */
typedef struct CpuSs
{
	OdpContext *ctx;
	const OdpMatrix *m;
	OdpMetric	metric;
	int32_t		k;
	const float *norms;			/* cosine only, else NULL */

	float	   *heap;			/* rows x k: per row, max-heap of distances */
	int32_t    *hsize;			/* rows: entries in each heap */
	uint8_t    *is_cand;		/* rows: 1 for the rows of the current batch */
	int			cand_block;		/* candidates per transposed block */

	/* per-batch buffers, grown on demand */
	int64_t		cap;			/* candidates the buffers below hold */
	float	   *gq;				/* cap x dims gathered candidate rows */
	float	   *gnorm;			/* cap gathered norms (cosine) */
	float	   *ct;				/* blocks of dims x cand_block, transposed */
	float	   *ctnorm;			/* cap norms in block order (cosine) */
	OdpKnnBits	bits;			/* the matrix's 0/1 rows as bits, or words = 0 */
	uint64_t   *cbits;			/* cap x bits.words: the batch as bits */

	/* the single pass (exact_update) */
	int32_t    *cand_pos;		/* rows: position in the batch, if is_cand */
	float	   *bound;			/* cap: each candidate's bound */
	float	   *th;				/* threads x cap x k: candidate heaps */
	int32_t    *thsize;			/* threads x cap */
	int64_t		th_cap;			/* candidates th holds per thread */
	float	   *merge;			/* threads x k: merge scratch */
} CpuSs;

/* One update() call, shared by its threads. */
typedef struct CpuSsJob
{
	CpuSs	   *ss;
	int32_t		nc;
	const uint8_t *active;
	double	   *upper;
	int64_t		nblocks;
	bool		fused;			/* single pass: every row, candidate heaps */
	bool		bits;			/* the batch compared as bits (cbits) */
	atomic_int	next_tid;
	atomic_llong next_block;
	atomic_llong distances;
	atomic_int	stop;
	atomic_int	oom;
} CpuSsJob;

/* Emit callback of exact(): the weight of query q into weights[q]. */
static void
ss_exact_emit(void *arg, int64_t query, const float *dist,
			  const int64_t *index, int32_t count)
{
	double	   *weights = (double *) arg;

	(void) index;
	weights[query] = odp_sum_ascending(dist, count);
}

/*
 * Makes the per-batch buffers hold at least nc candidates; out of memory
 * (the old buffers then still owned by ss) is ODP_ERR_HOST_OOM.
 */
static OdpStatus
ss_reserve(CpuSs *ss, int64_t nc)
{
	int			dims = ss->m->dims;
	int64_t		nblk;
	float	   *p;

	if (nc <= ss->cap)
		return ODP_OK;
	nblk = (nc + ss->cand_block - 1) / ss->cand_block;
	if ((p = realloc(ss->gq, sizeof(float) * (size_t) nc * dims)) == NULL)
		goto oom;
	ss->gq = p;
	if ((p = realloc(ss->gnorm, sizeof(float) * (size_t) nc)) == NULL)
		goto oom;
	ss->gnorm = p;
	if ((p = realloc(ss->ct, sizeof(float) * (size_t) nblk * ss->cand_block * dims)) == NULL)
		goto oom;
	ss->ct = p;
	if ((p = realloc(ss->ctnorm, sizeof(float) * (size_t) nblk * ss->cand_block)) == NULL)
		goto oom;
	ss->ctnorm = p;
	if (ss->bits.words > 0)
	{
		uint64_t   *b = realloc(ss->cbits, sizeof(uint64_t) * (size_t) nc * ss->bits.words);

		if (b == NULL)
			goto oom;
		ss->cbits = b;
	}
	ss->cap = nc;
	return ODP_OK;
oom:
	return odp_fail(ss->ctx, ODP_ERR_HOST_OOM,
					"out of host memory for %lld SolvingSet candidates", (long long) nc);
}

/*
 * The k-NN primitive with the batch's nc vectors (norms in gnorm for
 * cosine) as queries against the whole matrix, query i skipping row
 * own[i] (-1: none), k nearest each, to emit.
 */
static OdpStatus
ss_batch_knn(CpuSs *ss, const float *vectors, const int64_t *own, int32_t nc,
			 int32_t k, OdpKnnEmitFn emit, void *emit_arg)
{
	OdpMatrix	q = {0};
	OdpCpuKnnArgs args = {0};

	q.data = vectors;
	q.rows = nc;
	q.dims = ss->m->dims;
	args.ctx = ss->ctx;
	args.queries = &q;
	args.candidates = ss->m;
	args.query_norms = ss->norms ? ss->gnorm : NULL;
	args.cand_norms = ss->norms;
	args.metric = ss->metric;
	args.k = k;
	args.self_join = false;
	args.query_rows = own;
	args.emit = emit;
	args.emit_arg = emit_arg;
	return odp_cpu_knn(&args);
}

/*
 * OdpSsBackend.exact: the exact weight of every candidate against all
 * other rows, through the k-NN primitive.
 */
static OdpStatus
ss_exact(void *self, const int64_t *cand, int32_t nc, double *weight,
		 int64_t *distances)
{
	CpuSs	   *ss = (CpuSs *) self;
	const OdpMatrix *m = ss->m;
	OdpStatus	status;

	if (nc <= 0)
		return ODP_OK;
	if ((status = ss_reserve(ss, nc)) != ODP_OK)
		return status;
	for (int32_t i = 0; i < nc; i++)
	{
		memcpy(ss->gq + (size_t) i * m->dims, m->data + cand[i] * m->dims,
			   sizeof(float) * m->dims);
		ss->gnorm[i] = ss->norms ? ss->norms[cand[i]] : 0.0f;
	}
	status = ss_batch_knn(ss, ss->gq, cand, nc, ss->k, ss_exact_emit, weight);
	if (status == ODP_OK)
		*distances += (int64_t) nc * (m->rows - 1);
	return status;
}

/*
 * Puts d in place of the root of max-heap h[0 .. size) and sifts it down.
 * The caller has checked that d belongs in the heap.
 */
static inline void
ss_heap_sift_down(float *h, int32_t size, float d)
{
	int32_t		i = 0;

	for (;;)
	{
		int32_t		l = 2 * i + 1,
					r = l + 1,
					w = l;

		if (l >= size)
			break;
		if (r < size && h[r] > h[l])
			w = r;
		if (h[w] <= d)
			break;
		h[i] = h[w];
		i = w;
	}
	h[i] = d;
}

/* Pushes d into p's max-heap of at most k distances; true if it changed. */
static inline bool
ss_heap_offer(float *h, int32_t *size, int32_t k, float d)
{
	int32_t		i;

	if (*size < k)
	{
		i = (*size)++;
		while (i > 0)
		{
			int32_t		p = (i - 1) / 2;

			if (h[p] >= d)
				break;
			h[i] = h[p];
			i = p;
		}
		h[i] = d;
		return true;
	}
	if (!(d < h[0]))
		return false;
	ss_heap_sift_down(h, k, d);
	return true;
}

/* Sorts a max-heap of n floats ascending in place (heap sort). */
static void
ss_heap_sort(float *h, int32_t n)
{
	for (int32_t end = n - 1; end > 0; end--)
	{
		float		d = h[end];

		h[end] = h[0];
		ss_heap_sift_down(h, end, d);
	}
}

/*
 * Updates rows [r0, r1) against the current batch (already transposed in
 * ss->ct).  acc and tmp are the thread's scratch (cand_block and k
 * floats).  Inlined with a constant metric so the switch folds away.
 * Returns the number of distances computed.
 */
static inline __attribute__((always_inline)) int64_t
ss_update_rows(CpuSsJob *job, OdpMetric metric, int64_t r0, int64_t r1,
			   float *acc, float *tmp, float *th, int32_t *thsize)
{
	CpuSs	   *ss = job->ss;
	const int	dims = ss->m->dims;
	const int32_t k = ss->k;
	const int	cb = ss->cand_block;
	const int32_t nc = job->nc;
	int64_t		count = 0;

	for (int64_t p = r0; p < r1; p++)
	{
		const float *prow = ss->m->data + p * dims;
		float		pnorm = ss->norms ? ss->norms[p] : 0.0f;
		float	   *h = ss->heap + p * k;
		int32_t    *size = &ss->hsize[p];
		bool		changed = false;
		const bool	row_side = job->active[p] && !ss->is_cand[p];
		const int32_t self = ss->is_cand[p] ? ss->cand_pos[p] : -1;

		if (!row_side && !job->fused)
			continue;
		for (int32_t c0 = 0; c0 < nc; c0 += cb)
		{
			int			n = c0 + cb < nc ? cb : nc - c0;
			const float *ct = ss->ct + (size_t) c0 * dims;
			const float *cn = ss->ctnorm + c0;

			odp_cpu_block_distances(metric, &ss->bits,
									job->bits ? ss->bits.queries + p * ss->bits.words : NULL,
									job->bits ? ss->cbits + (size_t) c0 * ss->bits.words : NULL,
									prow, pnorm, ct, cb, cn, dims, n, acc);
			if (row_side)
				for (int c = 0; c < n; c++)
					if (*size < k || acc[c] < h[0])
						changed |= ss_heap_offer(h, size, k, acc[c]);
			if (job->fused)
				for (int c = 0; c < n; c++)
					if (acc[c] < ss->bound[c0 + c] && c0 + c != self)
						(void) ss_heap_offer(th + (size_t) (c0 + c) * k,
											 &thsize[c0 + c], k, acc[c]);
		}
		count += nc;
		if (!row_side)
			continue;
		if (*size < k)
			job->upper[p] = INFINITY;
		else if (changed)
		{
			memcpy(tmp, h, sizeof(float) * k);
			ss_heap_sort(tmp, k);
			job->upper[p] = odp_sum_ascending(tmp, k);
		}
	}
	return count;
}

/* Takes row blocks until none is left; poll says whether to ask cancel. */
static void
ss_update_loop(CpuSsJob *job, bool poll)
{
	CpuSs	   *ss = job->ss;
	const int64_t rows = ss->m->rows;
	float	   *acc = malloc(sizeof(float) * ss->cand_block);
	float	   *tmp = malloc(sizeof(float) * ss->k);
	int64_t		count = 0;
	const int	tid = atomic_fetch_add(&job->next_tid, 1);
	float	   *th = job->fused ? ss->th + (size_t) tid * ss->th_cap * ss->k : NULL;
	int32_t    *thsize = job->fused ? ss->thsize + (size_t) tid * ss->th_cap : NULL;

	if (acc == NULL || tmp == NULL)
	{
		atomic_store(&job->oom, 1);
		atomic_store(&job->stop, 1);
		goto done;
	}
	for (;;)
	{
		int64_t		b = atomic_fetch_add(&job->next_block, 1);
		int64_t		r0 = b * SS_ROW_BLOCK;
		int64_t		r1 = r0 + SS_ROW_BLOCK < rows ? r0 + SS_ROW_BLOCK : rows;

		if (b >= job->nblocks || atomic_load_explicit(&job->stop, memory_order_relaxed))
			break;
		switch (ss->metric)
		{
			case ODP_METRIC_EUCLIDEAN:
				count += ss_update_rows(job, ODP_METRIC_EUCLIDEAN, r0, r1, acc, tmp, th, thsize);
				break;
			case ODP_METRIC_SQEUCLIDEAN:
				count += ss_update_rows(job, ODP_METRIC_SQEUCLIDEAN, r0, r1, acc, tmp, th, thsize);
				break;
			case ODP_METRIC_MANHATTAN:
				count += ss_update_rows(job, ODP_METRIC_MANHATTAN, r0, r1, acc, tmp, th, thsize);
				break;
			case ODP_METRIC_CHEBYSHEV:
				count += ss_update_rows(job, ODP_METRIC_CHEBYSHEV, r0, r1, acc, tmp, th, thsize);
				break;
			case ODP_METRIC_COSINE:
				count += ss_update_rows(job, ODP_METRIC_COSINE, r0, r1, acc, tmp, th, thsize);
				break;
			case ODP_METRIC_INNER_PRODUCT:
				/* not a distance: odp_outlier_prepare refuses it */
				break;
		}
		if (poll && odp_cancel_requested(ss->ctx))
		{
			atomic_store(&job->stop, 1);
			break;
		}
	}
done:
	atomic_fetch_add(&job->distances, count);
	free(acc);
	free(tmp);
}

/* pthread entry: an update worker that never polls the cancel callback. */
static void *
ss_update_thread(void *arg)
{
	ss_update_loop((CpuSsJob *) arg, false);
	return NULL;
}

/*
 * One pass over the rows against the batch: update() (fused false), or
 * the single pass of exact_update() (fused: every row, candidate heaps in
 * ss->th, which the caller has prepared for nthreads threads).
 */
static OdpStatus
ss_pass(CpuSs *ss, const int64_t *cand, const float *vectors, int32_t nc,
		const uint8_t *active, double *upper, int64_t *distances, bool fused,
		int nthreads)
{
	const int	dims = ss->m->dims;
	const int	cb = ss->cand_block;
	CpuSsJob	job;
	pthread_t	threads[SS_MAX_THREADS];
	int			started = 0;
	OdpStatus	status;

	if (nc <= 0)
		return ODP_OK;
	if ((status = ss_reserve(ss, nc)) != ODP_OK)
		return status;

	/* the batch as bits where the matrix is 0/1 and so is every vector given */
	job.bits = ss->bits.words > 0;
	for (int32_t i = 0; job.bits && i < nc; i++)
	{
		uint64_t   *dst = ss->cbits + (size_t) i * ss->bits.words;

		if (vectors)
			job.bits = odp_knn_bits_pack_row(vectors + (size_t) i * dims, dims, dst);
		else
			memcpy(dst, ss->bits.cands + cand[i] * ss->bits.words,
				   sizeof(uint64_t) * ss->bits.words);
	}

	/*
	 * otherwise transpose the batch: block b is dims x cb, candidates
	 * contiguous; given by value (vectors, norms in gnorm), a candidate's
	 * row may be -1: not in this matrix
	 */
	for (int32_t i = 0; i < nc; i++)
	{
		if (!job.bits)
		{
			const float *row = vectors ? vectors + (size_t) i * dims : ss->m->data + cand[i] * dims;
			float	   *blk = ss->ct + (size_t) (i / cb) * cb * dims;
			int			c = i % cb;

			for (int d = 0; d < dims; d++)
				blk[(size_t) d * cb + c] = row[d];
			ss->ctnorm[i] = !ss->norms ? 0.0f : (vectors ? ss->gnorm[i] : ss->norms[cand[i]]);
		}
		if (cand[i] < 0)
			continue;
		ss->is_cand[cand[i]] = 1;
		ss->cand_pos[cand[i]] = i;
	}

	job.ss = ss;
	job.nc = nc;
	job.active = active;
	job.upper = upper;
	job.fused = fused;
	atomic_init(&job.next_tid, 0);
	job.nblocks = (ss->m->rows + SS_ROW_BLOCK - 1) / SS_ROW_BLOCK;
	atomic_init(&job.next_block, 0);
	atomic_init(&job.distances, 0);
	atomic_init(&job.stop, 0);
	atomic_init(&job.oom, 0);

	started = odp_cpu_workers_start(threads, nthreads, ss_update_thread, &job);
	ss_update_loop(&job, true);
	odp_cpu_workers_join(threads, started);

	for (int32_t i = 0; i < nc; i++)
		if (cand[i] >= 0)
			ss->is_cand[cand[i]] = 0;
	*distances += atomic_load(&job.distances);
	if (atomic_load(&job.oom))
		return odp_fail(ss->ctx, ODP_ERR_HOST_OOM,
						"out of host memory for SolvingSet scratch buffers");
	if (atomic_load(&job.stop))
		return odp_fail(ss->ctx, ODP_ERR_CANCELLED, "canceled");
	return ODP_OK;
}

/* The threads a pass uses: cpu_threads, at least 1, at most SS_MAX_THREADS. */
static int
ss_threads(const CpuSs *ss)
{
	int			n = ss->ctx->cpu_threads > 1 ? ss->ctx->cpu_threads : 1;

	return n > SS_MAX_THREADS ? SS_MAX_THREADS : n;
}

/*
 * OdpSsBackend.update: merges every active non-candidate row's distances
 * to the batch into its heap and rewrites its upper bound where it
 * changed.
 */
static OdpStatus
ss_update(void *self, const int64_t *cand, int32_t nc, const uint8_t *active,
		  double *upper, int64_t *distances)
{
	CpuSs	   *ss = (CpuSs *) self;

	return ss_pass(ss, cand, NULL, nc, active, upper, distances, false, ss_threads(ss));
}

/* qsort order of floats, ascending. */
static int
ss_cmp_float(const void *a, const void *b)
{
	const float x = *(const float *) a;
	const float y = *(const float *) b;

	return (x > y) - (x < y);
}

/*
 * Makes the single pass's buffers hold nc candidates for nthreads
 * threads; false when they do not fit (the two passes need none of it).
 */
static bool
ss_fused_reserve(CpuSs *ss, int32_t nc, int nthreads)
{
	const int32_t k = ss->k;

	if (odp_cpu_ss_fused == 0 || k > SS_FUSED_MAX_K || nc <= 0 ||
		(size_t) nthreads * nc * k * sizeof(float) > SS_FUSED_MAX_BYTES)
		return false;
	if (nc <= ss->th_cap)
		return true;
	free(ss->th);
	free(ss->thsize);
	free(ss->bound);
	free(ss->merge);
	ss->th = malloc(sizeof(float) * (size_t) nthreads * nc * k);
	ss->thsize = malloc(sizeof(int32_t) * (size_t) nthreads * nc);
	ss->bound = malloc(sizeof(float) * (size_t) nc);
	ss->merge = malloc(sizeof(float) * (size_t) nthreads * k + sizeof(float) * k);
	ss->th_cap = nc;
	if (!ss->th || !ss->thsize || !ss->bound || !ss->merge)
	{
		free(ss->th);
		free(ss->thsize);
		free(ss->bound);
		free(ss->merge);
		ss->th = NULL;
		ss->thsize = NULL;
		ss->bound = NULL;
		ss->merge = NULL;
		ss->th_cap = 0;
		return false;
	}
	return true;
}

/* The single pass over every row, the bounds in ss->bound: heaps emptied. */
static OdpStatus
ss_fused_pass(CpuSs *ss, const int64_t *cand, const float *vectors, int32_t nc,
			  const uint8_t *active, double *upper, int64_t *distances,
			  int nthreads)
{
	/* thread t's heaps are th[(t * th_cap + c) * k ...]; all empty */
	for (int t = 0; t < nthreads; t++)
		memset(ss->thsize + (size_t) t * ss->th_cap, 0, sizeof(int32_t) * (size_t) nc);
	return ss_pass(ss, cand, vectors, nc, active, upper, distances, true, nthreads);
}

/*
 * Candidate i's k smallest distances under its bound, from every thread's
 * heap, ascending, then copies of the bound: the k smallest distances to
 * the other rows, as brute force finds them.  Returns ss->merge.
 */
static float *
ss_fused_merge(CpuSs *ss, int32_t i, int nthreads)
{
	const int32_t k = ss->k;
	float	   *all = ss->merge;
	int32_t		n = 0;

	for (int t = 0; t < nthreads; t++)
	{
		const int32_t sz = ss->thsize[(size_t) t * ss->th_cap + i];

		memcpy(all + n, ss->th + ((size_t) t * ss->th_cap + i) * k,
			   sizeof(float) * (size_t) sz);
		n += sz;
	}
	qsort(all, (size_t) n, sizeof(float), ss_cmp_float);
	for (int32_t e = n < k ? n : k; e < k; e++)
		all[e] = ss->bound[i];
	return all;
}

/* See OdpSsBackend.exact_update in solvingset_internal.h, and the top of the file. */
static OdpStatus
ss_exact_update(void *self, const int64_t *cand, int32_t nc,
				const uint8_t *active, double *weight, double *upper,
				int64_t *distances)
{
	CpuSs	   *ss = (CpuSs *) self;
	const int32_t k = ss->k;
	const int	nthreads = ss_threads(ss);
	bool		fused = nc > 0;
	OdpStatus	status;

	for (int32_t i = 0; i < nc && fused; i++)
		fused = ss->hsize[cand[i]] == k;
	fused = fused && ss_fused_reserve(ss, nc, nthreads);
	if (!fused)
	{
		status = ss_exact(self, cand, nc, weight, distances);
		if (status == ODP_OK && odp_cancel_requested(ss->ctx))
			status = odp_fail(ss->ctx, ODP_ERR_CANCELLED, "canceled");
		if (status == ODP_OK)
			status = ss_update(self, cand, nc, active, upper, distances);
		return status;
	}

	for (int32_t i = 0; i < nc; i++)
		ss->bound[i] = ss->heap[cand[i] * k];	/* the root: the largest */
	status = ss_fused_pass(ss, cand, NULL, nc, active, upper, distances, nthreads);
	if (status != ODP_OK)
		return status;
	for (int32_t i = 0; i < nc; i++)
	{
		float	   *all = ss_fused_merge(ss, i, nthreads);

		weight[i] = odp_sum_ascending(all, k);
	}
	return ODP_OK;
}

/* Where ss_external's emit callback writes: k-lists, +inf padded. */
typedef struct SsListsOut
{
	float	   *lists;
	int32_t		k;
} SsListsOut;

static void
ss_lists_emit(void *arg, int64_t query, const float *dist, const int64_t *index,
			  int32_t count)
{
	SsListsOut *out = (SsListsOut *) arg;
	float	   *list = out->lists + query * out->k;

	(void) index;
	memcpy(list, dist, sizeof(float) * (size_t) count);
	for (int32_t j = count; j < out->k; j++)
		list[j] = INFINITY;
}

/*
 * See OdpSsBackend.external in solvingset_internal.h: exact()'s k-NN pass with
 * the batch's vectors as queries (a candidate of this matrix skips its
 * row by index), then update()'s pass over them.
 */
static OdpStatus
ss_external(void *self, const float *vectors, const int64_t *own,
			const float *bounds, int32_t nc, const uint8_t *active, float *lists,
			double *upper, int64_t *distances)
{
	CpuSs	   *ss = (CpuSs *) self;
	const OdpMatrix *m = ss->m;
	const int	nthreads = ss_threads(ss);
	bool		fused = bounds != NULL;
	SsListsOut	out;
	OdpStatus	status;

	if (nc <= 0)
		return ODP_OK;
	if ((status = ss_reserve(ss, nc)) != ODP_OK)
		return status;
	for (int32_t i = 0; i < nc && ss->norms; i++)
		ss->gnorm[i] = odp_row_norm(vectors + (size_t) i * m->dims, m->dims);

	/* every bound known: the single pass, lists of the distances under it */
	for (int32_t i = 0; i < nc && fused; i++)
		fused = isfinite(bounds[i]);
	if (fused && ss_fused_reserve(ss, nc, nthreads))
	{
		memcpy(ss->bound, bounds, sizeof(float) * (size_t) nc);
		status = ss_fused_pass(ss, own, vectors, nc, active, upper, distances, nthreads);
		for (int32_t i = 0; i < nc && status == ODP_OK; i++)
		{
			const float *all = ss_fused_merge(ss, i, nthreads);

			for (int32_t e = 0; e < ss->k; e++)
				lists[(size_t) i * ss->k + e] = all[e] < bounds[i] ? all[e] : INFINITY;
		}
		return status;
	}
	out.lists = lists;
	out.k = ss->k;
	status = ss_batch_knn(ss, vectors, own, nc, ss->k < m->rows ? ss->k : (int32_t) m->rows,
						  ss_lists_emit, &out);
	if (status != ODP_OK)
		return status;
	*distances += (int64_t) nc * m->rows;
	if (odp_cancel_requested(ss->ctx))
		return odp_fail(ss->ctx, ODP_ERR_CANCELLED, "canceled");
	return ss_pass(ss, own, vectors, nc, active, upper, distances, false, ss_threads(ss));
}

/* See OdpSsBackend.row_bounds: the root of a full heap is its largest. */
static void
ss_row_bounds(void *self, const int64_t *rows, int64_t n, float *out)
{
	CpuSs	   *ss = (CpuSs *) self;

	for (int64_t i = 0; i < n; i++)
		out[i] = ss->hsize[rows[i]] == ss->k ? ss->heap[rows[i] * ss->k] : INFINITY;
}

/* OdpSsBackend.release: frees the state; self may be NULL. */
static void
ss_release(void *self)
{
	CpuSs	   *ss = (CpuSs *) self;

	if (ss == NULL)
		return;
	free(ss->heap);
	free(ss->hsize);
	free(ss->is_cand);
	free(ss->gq);
	free(ss->gnorm);
	free(ss->ct);
	free(ss->ctnorm);
	free(ss->cbits);
	odp_knn_bits_free(&ss->bits);
	free(ss->cand_pos);
	free(ss->bound);
	free(ss->th);
	free(ss->thsize);
	free(ss->merge);
	free(ss);
}

/*
 * Builds the CPU backend for matrix m (validated by the caller; norms
 * NULL unless cosine) and k.  The caller must call backend->release once
 * on success; on failure nothing is left allocated.  The matrix, norms and
 * ctx must outlive the backend.
 */
OdpStatus
odp_cpu_ss_backend(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
				   int32_t k, const float *norms, OdpSsBackend *backend)
{
	CpuSs	   *ss = calloc(1, sizeof(CpuSs));

	if (ss == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for the SolvingSet backend");
	ss->ctx = ctx;
	ss->m = m;
	ss->metric = metric;
	ss->k = k;
	ss->norms = norms;
	ss->cand_block = SS_BLOCK_FLOATS / m->dims;
	if (ss->cand_block > SS_CAND_BLOCK_MAX)
		ss->cand_block = SS_CAND_BLOCK_MAX;
	if (ss->cand_block < SS_CAND_BLOCK_MIN)
		ss->cand_block = SS_CAND_BLOCK_MIN;
	ss->heap = malloc(sizeof(float) * (size_t) m->rows * k);
	ss->hsize = calloc((size_t) m->rows, sizeof(int32_t));
	ss->is_cand = calloc((size_t) m->rows, 1);
	ss->cand_pos = calloc((size_t) m->rows, sizeof(int32_t));
	if (ss->heap == NULL || ss->hsize == NULL || ss->is_cand == NULL ||
		ss->cand_pos == NULL)
	{
		ss_release(ss);
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld x %d SolvingSet neighbour distances",
						(long long) m->rows, (int) k);
	}
	/* 0/1 rows: distances by bits (knn_cpu_bits.c); none where it fails */
	odp_knn_bits_prepare(metric, m, m, &ss->bits);
	backend->self = ss;
	backend->exact = ss_exact;
	backend->update = ss_update;
	backend->exact_update = ss_exact_update;
	backend->select = NULL;		/* and selects on the host */
	backend->external = ss_external;
	backend->row_bounds = ss_row_bounds;
	backend->release = ss_release;
	return ODP_OK;
}
