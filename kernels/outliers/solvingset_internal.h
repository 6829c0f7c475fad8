/*-------------------------------------------------------------------------
 *
 * solvingset_internal.h
 *	  Declarations shared by the SolvingSet driver (solvingset.c), its
 *	  CPU and GPU backends, its split over devices and its distributed form.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SOLVINGSET_INTERNAL_H
#define ODP_SOLVINGSET_INTERNAL_H

#include "include/odp_outliers.h"

#ifdef __cplusplus
extern "C"
{
#endif

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

/* The row of m whose id is id (ids ascending; NULL: the id is the row), or -1. */
extern int64_t odp_row_of_id(const OdpMatrix *m, int64_t id);

/*
 * SolvingSet backend: the two distance-heavy steps of one candidate batch,
 * done by the CPU (solvingset_cpu.c) or the GPU (solvingset_gpu.cu), or for
 * float64 rows by either path's k-NN primitive (solvingset_wide.c).  The
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
 * SolvingSet's first candidates (solvingset_first.c): the min(m, rows)
 * rows of smallest (odp_ss_first_key(id), id), ids NULL meaning id = row,
 * written to out ascending.  Expected time O(rows).
 */
extern OdpStatus odp_ss_first_rows(OdpContext *ctx, const int64_t *ids,
								   int64_t rows, int64_t m, int64_t *out);

/*
 * Test hook of the distributed node (solvingset_distributed.c): 0 keeps
 * every node on the k-NN engine instead of the path's SolvingSet backend,
 * so that the tests check both ways.  1 in production.
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

/*
 * The backend of float64 rows (m->data64; solvingset_wide.c), on either
 * path: exact and update over the k-NN primitive of ctx->device, norms64
 * odp_row_norm64 of every row for cosine, else NULL.  It has neither the
 * single pass nor the distributed node's entries (external, row_bounds).
 */
extern OdpStatus odp_wide_ss_backend(OdpContext *ctx, const OdpMatrix *m,
									 OdpMetric metric, int32_t k,
									 const double *norms64,
									 OdpSsBackend *backend);


#ifdef __cplusplus
}
#endif

#endif							/* ODP_SOLVINGSET_INTERNAL_H */
