/*-------------------------------------------------------------------------
 *
 * engine_internal.h
 *	  Declarations shared inside the engine: messages, cancellation, and
 *	  the per-path entry points behind odp_engine.h.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/engine_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ENGINE_INTERNAL_H
#define ODP_ENGINE_INTERNAL_H

#include <pthread.h>

#include "include/odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

#if defined(__GNUC__)
#define ODP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ODP_PRINTF(f, a)
#endif

/* Records a message in ctx and returns status, for "return odp_fail(...)". */
extern OdpStatus odp_fail(OdpContext *ctx, OdpStatus status,
						  const char *fmt,...) ODP_PRINTF(3, 4);

/*
 * Every row's norm (odp_row_norm) in a new array *norms that the caller
 * frees, for cosine; a zero or infinite norm is ODP_ERR_DATA, naming the
 * row as "<what> <index>".  Nothing is left allocated on failure.
 */
extern OdpStatus odp_matrix_norms(OdpContext *ctx, const OdpMatrix *m,
							   const char *what, float **norms);

/* Asks the caller's cancel callback; false when there is none. */
extern bool odp_cancel_requested(OdpContext *ctx);

/*
 * Receives one query's neighbours, sorted ascending by (distance, index);
 * count = min(k, candidates available).  May be called from several
 * threads at once, never twice for one query.
 */
typedef void (*OdpKnnEmitFn) (void *arg, int64_t query, const float *dist,
							  const int64_t *index, int32_t count);

/* Arguments of the CPU k-nearest-neighbour primitive (knn_cpu.c). */
typedef struct OdpCpuKnnArgs
{
	OdpContext *ctx;
	const OdpMatrix *queries;
	const OdpMatrix *candidates;
	const float *query_norms;	/* cosine only, else NULL */
	const float *cand_norms;	/* cosine only, else NULL */
	OdpMetric	metric;
	int32_t		k;
	bool		self_join;		/* queries == candidates: skip the pair (i, i) */
	const int64_t *query_rows;	/* or NULL; else query q is candidate row
								 * query_rows[q], and that pair is skipped */
	OdpKnnEmitFn emit;
	void	   *emit_arg;
} OdpCpuKnnArgs;

extern OdpStatus odp_cpu_knn(const OdpCpuKnnArgs *args);

/* Worker threads of the CPU path (knn_cpu.c): see there. */
extern int	odp_cpu_workers_start(pthread_t *threads, int nthreads,
								  void *(*fn) (void *), void *arg);
extern void odp_cpu_workers_join(pthread_t *threads, int started);

/*
 * Runs fn(arg, task) for task = 0 .. tasks-1 on ctx->cpu_threads threads
 * (host_threads.c); the caller's thread polls the cancel callback between
 * its tasks.  Returns ODP_ERR_CANCELLED when asked to stop, else ODP_OK;
 * fn reports its own failures through arg.
 */
typedef void (*OdpTaskFn) (void *arg, int64_t task);
extern OdpStatus odp_parallel_tasks(OdpContext *ctx, int64_t tasks,
									OdpTaskFn fn, void *arg);

/* Entries of the count scratch odp_radix_sort takes. */
#define ODP_RADIX_COUNTS	2048

/*
 * Sorts key[0 .. n) ascending by their low bits bits, stably, carrying
 * val when it is not NULL (host_sort.c); tkey and tval are scratch of n
 * entries, count of ODP_RADIX_COUNTS.  Serial.
 */
extern void odp_radix_sort(uint64_t *key, uint32_t *val, uint64_t *tkey,
						   uint32_t *tval, int64_t n, int bits,
						   int64_t *count);

/*
 * Sorts key[0 .. n) ascending by their low bits bits on ctx->cpu_threads
 * threads; tkey is scratch of n entries.  Fails only when cancelled or out
 * of host memory.
 */
extern OdpStatus odp_radix_sort_parallel(OdpContext *ctx, uint64_t *key,
										 uint64_t *tkey, int64_t n, int bits);

/*
 * Shared argument checks of the outlier analytics (outliers.c): resets
 * ctx's outputs, validates m, k and metric, and for cosine returns every
 * row's norm in a new array *norms (else NULL) that the caller frees.
 */
extern OdpStatus odp_outlier_prepare(OdpContext *ctx, const OdpMatrix *m,
									 OdpMetric metric, int32_t k,
									 float **norms);

/*
 * Per-path implementations; arguments already validated by the dispatcher
 * (kernels/outliers/outliers.c).  norms is NULL unless metric is cosine, then it
 * holds odp_row_norm of every row, none of them zero.
 */
extern OdpStatus odp_cpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
										OdpMetric metric, int32_t k,
										const float *norms, double *scores);
extern OdpStatus odp_gpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
										OdpMetric metric, int32_t k,
										const float *norms, double *scores);

/*
 * GPU scores through the tensor-core filter only, for AUTO's choice in
 * solvingset.c: where the filter would not serve every chunk, or more
 * than max_overflow (> 0) of a chunk's lists overflow (rows in tight
 * clusters, each such row then scanning every other), it stops early,
 * sets *gave_up and returns ODP_OK with scores undefined.
 */
extern OdpStatus odp_gpu_outlier_scores_filtered(OdpContext *ctx,
												 const OdpMatrix *m,
												 OdpMetric metric, int32_t k,
												 const float *norms,
												 double max_overflow,
												 double *scores, bool *gave_up);

/*
 * odp_gpu_outlier_scores for rows [first, first + count) only (count 0:
 * every row), against every row; writes scores[first ..].  The parts of a
 * split call (knn_split.c) take disjoint ranges.
 */
extern OdpStatus odp_gpu_outlier_scores_rows(OdpContext *ctx,
											 const OdpMatrix *m,
											 OdpMetric metric, int32_t k,
											 const float *norms,
											 int64_t first, int64_t count,
											 double *scores);

/* Whether the filter serves outlier scores of this shape (false without CUDA). */
extern bool odp_gpu_outliers_filter_eligible(OdpMetric metric, int64_t rows,
											 int32_t dims, int32_t k);

/*
 * GPU path of odp_compute_knn (knn_gpu_search.cu), arguments checked;
 * norms set exactly for cosine (qnorms == cnorms for a self join); dist
 * receives the metric's ranking values (the inner product negated).
 */
extern OdpStatus odp_gpu_knn(OdpContext *ctx, const OdpMatrix *queries,
							 const OdpMatrix *cands, const float *qnorms,
							 const float *cnorms, OdpMetric metric, int32_t k,
							 bool self_join, float *dist, int64_t *index);

/*
 * odp_gpu_knn for query rows [first, first + count) only (count 0: every
 * row); writes their lists at dist/index[first * k ..].
 */
extern OdpStatus odp_gpu_knn_rows(OdpContext *ctx, const OdpMatrix *queries,
								  const OdpMatrix *cands, const float *qnorms,
								  const float *cnorms, OdpMetric metric,
								  int32_t k, bool self_join, int64_t first,
								  int64_t count, float *dist, int64_t *index);

/*
 * Makes OdpGpuPinHost return NULL in the calling thread from now on: the
 * threads of a split call's parts (device_set.c), which share inputs, copy
 * them unpinned.  Nothing without CUDA.
 */
extern void odp_gpu_pin_thread_disable(void);

/*
 * The GPU paths spread over ctx's devices (split_*.c): each resolves the
 * device set and, with one part, runs the one-device path unchanged.
 */
/* The row of m whose id is id (ids ascending; NULL: the id is the row), or -1. */
extern int64_t odp_row_of_id(const OdpMatrix *m, int64_t id);

/*
 * SolvingSet over the call's device set (solvingset_split.c): when the set
 * has several parts and the rows give each a few thousand, sets *split
 * and runs the distributed SolvingSet with one node per part, writing the
 * results as the single-device driver does (rows, not ids); else leaves
 * *split false and does nothing.  give_up_at as for the driver: past that
 * many distances it stops with *gave_up set and ODP_OK.
 */
extern OdpStatus odp_split_solvingset(OdpContext *ctx, const OdpMatrix *mat,
									 OdpMetric metric, int32_t k, int64_t n,
									 int64_t m, int64_t give_up_at,
									 int64_t *order, double *scores,
									 int64_t *count, int64_t *solving_set,
									 double *solving_scores,
									 OdpTopOutliersStats *st, bool *split,
									 bool *gave_up);

extern OdpStatus odp_split_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
										 OdpMetric metric, int32_t k,
										 const float *norms, double *scores);
extern OdpStatus odp_split_knn(OdpContext *ctx, const OdpMatrix *queries,
							  const OdpMatrix *cands, const float *qnorms,
							  const float *cnorms, OdpMetric metric, int32_t k,
							  bool self_join, float *dist, int64_t *index);

/* Brute-force scores on ctx->device, after odp_outlier_prepare (outliers.c). */
extern OdpStatus odp_outlier_scores_on_device(OdpContext *ctx,
											  const OdpMatrix *m,
											  OdpMetric metric, int32_t k,
											  const float *norms,
											  double *scores);

/*
 * SolvingSet backend: the two distance-heavy steps of one candidate batch,
 * done by the CPU (solvingset_cpu.c) or the GPU (solvingset_gpu.cu).  The
 * driver (solvingset.c) owns everything else, so pruning, candidate choice
 * and the solving set are the same on both paths.
 *
 * Candidates are given as ascending-or-not row indexes cand[0 .. nc).
 */
typedef struct OdpSsBackend
{
	void	   *self;

	/*
	 * Exact weight of every candidate: the sum, ascending, in float64
	 * (odp_sum_ascending), of its k smallest distances to all other rows.
	 * Writes weight[i] for cand[i].  Adds the distance evaluations it
	 * performed to *distances.
	 */
	OdpStatus	(*exact) (void *self, const int64_t *cand, int32_t nc,
						  double *weight, int64_t *distances);

	/*
	 * Merges the distances from every row p to every candidate (p not a
	 * candidate itself) into p's partial list of its k smallest distances
	 * seen so far, kept across calls, then writes upper[p] for every row:
	 * odp_sum_ascending of p's partial list when it holds k distances, +inf
	 * otherwise.  Rows with active[p] == 0 may be skipped (their upper[] is
	 * then left as is).  Adds its distance evaluations to *distances.
	 */
	OdpStatus	(*update) (void *self, const int64_t *cand, int32_t nc,
						   const uint8_t *active, double *upper,
						   int64_t *distances);

	/*
	 * Optional (NULL: the driver calls exact, then update): both steps of
	 * one batch at once, with the same results, so that a backend can
	 * compute each (row, candidate) distance once for both.  active
	 * already marks the candidates inactive.
	 */
	OdpStatus	(*exact_update) (void *self, const int64_t *cand, int32_t nc,
								 const uint8_t *active, double *weight,
								 double *upper, int64_t *distances);

	/*
	 * Optional (NULL, or *done set false: the driver does it on the host
	 * from upper[]): right after a batch's exact_update, makes every
	 * active row with upper bound < min_out inactive (when prune), then
	 * writes the at most m active rows with the largest upper bounds,
	 * ties by smaller row, into cand in ascending order and their number
	 * into *nc, and updates active[] to match.  When it does this, the
	 * backend need not have written upper[] for the batch.
	 */
	OdpStatus	(*select) (void *self, bool prune, double min_out, int64_t m,
						   uint8_t *active, int64_t *cand, int64_t *nc,
						   bool *done);

	/*
	 * For a distributed node (solvingset_distributed.c): a batch given by value, from any
	 * shard: vectors (nc x dims), own[i], the row of candidate i in this
	 * matrix or -1, and bounds[i] (OdpSsRows.bound).  Writes each
	 * candidate's k smallest distances to the rows other than own[i],
	 * ascending, into lists[i * k ..] (+inf where the matrix has too few
	 * rows), then does what update() does for the batch (the caller has
	 * made the own candidates inactive).  When every bound is finite the
	 * backend may take the batch in one pass, as exact_update() does, and
	 * keep in a list only the distances under the bound (then +inf).  The
	 * distances are exact()'s and update()'s, bit for bit.
	 */
	OdpStatus	(*external) (void *self, const float *vectors, const int64_t *own,
							 const float *bounds, int32_t nc, const uint8_t *active,
							 float *lists, double *upper, int64_t *distances);

	/*
	 * For a distributed node: the bound of each of rows[0 .. n) (the
	 * largest distance of its partial list when full, else +inf) into
	 * out.  +inf everywhere is always allowed (the batch then takes two
	 * passes).
	 */
	void		(*row_bounds) (void *self, const int64_t *rows, int64_t n, float *out);

	/* Frees everything the backend holds; called once, on every path. */
	void		(*release) (void *self);
} OdpSsBackend;

/*
 * SolvingSet's first candidates: the min(m, rows) rows of smallest
 * (odp_ss_first_key(id), id), ids NULL meaning id = row, written to out
 * ascending.  Expected time O(rows).
 */
extern OdpStatus odp_ss_first_rows(OdpContext *ctx, const int64_t *ids,
								   int64_t rows, int64_t m, int64_t *out);

/*
 * Test hook of the distributed node (solvingset_distributed.c): 0 keeps every node on
 * the k-NN engine instead of the path's SolvingSet backend, so that the
 * tests check both ways.  1 in production.
 */
extern int	odp_ss_node_backend;

/*
 * Test hook of the SolvingSet driver: when > 0, the batch size m used
 * instead of the default (still at least n, at most rows), on both paths.
 * Only the engine tests set it.
 */
extern int64_t odp_ss_test_batch_size;

/*
 * Backend constructors: prepare for matrix m (norms as in the per-path
 * functions above) and k; on failure nothing is left allocated.
 */
extern OdpStatus odp_cpu_ss_backend(OdpContext *ctx, const OdpMatrix *m,
									OdpMetric metric, int32_t k,
									const float *norms, OdpSsBackend *backend);
extern OdpStatus odp_gpu_ss_backend(OdpContext *ctx, const OdpMatrix *m,
									OdpMetric metric, int32_t k,
									const float *norms, OdpSsBackend *backend);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_ENGINE_INTERNAL_H */
