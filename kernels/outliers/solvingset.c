/*-------------------------------------------------------------------------
 *
 * solvingset.c
 *	  Top-n distance-based outliers: the dispatcher of
 *	  odp_compute_top_outliers (brute force or SolvingSet) and the
 *	  device-independent SolvingSet driver (seed 001, Section 3 and
 *	  Definition 3.3; seed 000, chapter 2).
 *
 * SolvingSet.  The driver keeps, for every row p, a flag "active" (p may
 * still be a top-n outlier and has not had its exact weight computed) and
 * an upper bound upper[p] of its weight; the backend (CPU: solvingset_cpu.c,
 * GPU: solvingset_gpu.cu) does the distance work of each batch:
 *
 *	  C = the m rows of smallest odp_ss_first_key(id), a pseudo-random
 *		  function of the id alone (so that a split of the rows over
 *		  nodes draws the same ones, odp_distributed.h); S = {};
 *	  every row active; upper[] = +inf.
 *	  while C is not empty:
 *		  exact(C): the weight of every candidate against all other rows;
 *		  S += C; the candidates become inactive;
 *		  Top = the n best rows of S by (weight desc, row index asc);
 *		  update(C): every active row merges its distances to C into its
 *			  partial list of k smallest distances; upper[p] = the sum of
 *			  that list (+inf while it holds fewer than k);
 *		  if Top holds n rows, minOUT = the weight of its n-th row, and every
 *			  active row with upper[p] < minOUT (strictly) becomes inactive;
 *		  C = the m active rows with the largest upper, ties by smaller index.
 *
 * S is then a solving set (Definition 3.3) and Top the top-n outliers.
 *
 * Float64 rows (OdpMatrix.data64) run the same driver over one backend for
 * both paths (solvingset_wide.c, over the path's k-NN primitive), with
 * float64 distances and bounds; AUTO chooses between brute force and
 * SolvingSet by the same row rule (the GPU's float32 filters do not
 * apply), and several devices share the backend's k-NN instead of
 * running one node each.
 *
 * Why the result equals brute force, rows, order and bits:
 *	- upper[p] >= weight(p) always: p's partial list holds real distances
 *	  from p to distinct other rows, so its i-th smallest is >= the i-th
 *	  smallest of all p's distances; summing ascending in float64 is
 *	  monotone in every term (rounding is monotone), so the sums compare
 *	  the same way.  The distances are bit-symmetric (odp_distance.h:
 *	  (a-b)^2, |a-b|, max|a-b| and the products of cosine do not depend on
 *	  the order of a and b), so it does not matter from which side the
 *	  backend computes them.
 *	- minOUT <= w*, the true n-th weight: Top holds n distinct rows with
 *	  exact weights, so its n-th weight is at most the n-th largest of all.
 *	- A row r of the true top-n (by weight desc, index asc) is never made
 *	  inactive: upper[r] >= weight(r) >= w* >= minOUT, so upper[r] < minOUT
 *	  never holds.  Rows stay active until they are candidates, and every
 *	  batch takes at least one active row while any is left, so r becomes a
 *	  candidate and gets its exact weight.  A row pruned has weight <
 *	  minOUT, strictly below n rows of Top, so it cannot be in the top-n;
 *	  the strict comparison keeps rows that tie with minOUT, which may still
 *	  win by a smaller index.
 *	- Hence the true top-n lie in S and Top, chosen from S by the same
 *	  order that odp_top_n uses, is exactly brute force's top-n.  exact()
 *	  sums the same k smallest floats ascending (odp_sum_ascending) as
 *	  brute force, so the weights are bit-identical.
 *	- Everything that decides S (initial subset, Top, pruning, candidate
 *	  choice) runs here on the host from exact weights and upper bounds
 *	  that both backends compute bit-identically, so S is the same on both
 *	  paths.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#ifdef ODP_SS_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "common/host_sort.h"
#include "include/odp_distributed.h"
#include "include/odp_outliers.h"
#include "knn/spatial.h"
#include "outliers/outliers_internal.h"
#include "outliers/solvingset_internal.h"

/*
 * Candidates per batch (m): rows / ODP_SS_ROWS_PER_CANDIDATE, kept within
 * [ODP_SS_BATCH_MIN, ODP_SS_BATCH_MAX].  One rule, independent of the
 * device, so that both paths build the same solving set.  Measured on the
 * H100 for 1M rows (Poker stand-in, k = 50): m = 4096 took 1.92-2.19 s,
 * 8192 1.64 s, 16384 1.46-1.60 s, 32768 1.55 s (larger batches fill the
 * GPU in the exact step and need fewer iterations); below 262,144 rows the
 * rule keeps 4096, which the CPU path and the tests were measured with.
 */
#ifndef ODP_SS_BATCH_DEFAULT	/* -D for benchmark builds only: a fixed m */
#define ODP_SS_BATCH_DEFAULT	0
#endif
#define ODP_SS_BATCH_MIN			4096
#define ODP_SS_BATCH_MAX			16384
#define ODP_SS_ROWS_PER_CANDIDATE	64

/*
 * AUTO picks SolvingSet when rows >= ODP_SS_AUTO_FACTOR * m, i.e. when one
 * batch is at most 1/64 of the rows (262,144 rows and up by default): a
 * batch costs about 2 m N distances, so coarser batches leave SolvingSet
 * too few iterations to prune before it has spent what brute force would.
 */
#define ODP_SS_AUTO_FACTOR		64

/*
 * On the GPU, AUTO first tries brute force through the tensor-core k-NN
 * filter or the exact integer path (knn_gpu_int.cu) where they apply and
 * the input has at most ODP_SS_AUTO_FILTER_ROWS rows.  The integer path
 * also takes manhattan on 0/1 rows, which the filter does not: 1,000,000
 * x 39 of them, k = 10, took 0.50 s of compute against SolvingSet's 2.12
 * s on the H100; rows it cannot take make the run give up after one pass
 * over them on the device.  Measured on the H100 (Poker stand-in, 1M
 * x 10, k = 50) it took 0.61 s of compute against SolvingSet's 1.06 s,
 * and on Covtype 128 ms against 148 ms for the whole call.  On rows in
 * tight clusters (ADBench donors) the half-precision bound cannot
 * separate neighbours, nearly every list overflows and scans all rows,
 * and the filter took 4.7 s against SolvingSet's 0.24 s: so it gives up
 * once more than ODP_SS_AUTO_FILTER_MAX_OVERFLOW of a query chunk's lists
 * overflow (the first chunk is a 16,384-row probe, knn_gpu_tc.cu), and
 * SolvingSet runs.  Brute force grows with rows squared,
 * SolvingSet's share of the pairs usually shrinks with rows: hence the
 * row limit.
 */
#define ODP_SS_AUTO_FILTER_ROWS			INT64_C(2000000)
#define ODP_SS_AUTO_FILTER_MAX_OVERFLOW	0.01

/* See solvingset_internal.h: a test hook, 0 in production. */
int64_t		odp_ss_test_batch_size = 0;

/*
 * Returns the SolvingSet batch size m for the given input: the caller's
 * (requested > 0), else the rule above, raised to n (Top must be able to
 * fill in the first batch) and capped at rows.  The caller passes rows >= 2
 * and n >= 1.
 */
int64_t
odp_ss_batch_size(int64_t rows, int64_t n, int64_t requested)
{
	int64_t		m = rows / ODP_SS_ROWS_PER_CANDIDATE;

	if (m < ODP_SS_BATCH_MIN)
		m = ODP_SS_BATCH_MIN;
	if (m > ODP_SS_BATCH_MAX)
		m = ODP_SS_BATCH_MAX;
	if (ODP_SS_BATCH_DEFAULT > 0)
		m = ODP_SS_BATCH_DEFAULT;
	if (odp_ss_test_batch_size > 0)
		m = odp_ss_test_batch_size;
	if (requested > 0)
		m = requested;
	if (m < n)
		m = n;
	if (m > rows)
		m = rows;
	return m;
}

/* Weight table for the Top comparator (qsort has no context argument). */
typedef struct SsRanked
{
	double		weight;
	int64_t		row;
} SsRanked;

/* qsort comparator: weight descending, then row ascending. */
static int
ss_cmp_ranked(const void *a, const void *b)
{
	const SsRanked *x = (const SsRanked *) a;
	const SsRanked *y = (const SsRanked *) b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

/*
 * The SolvingSet driver.  Arguments are validated; norms as for the
 * per-path functions; n <= rows; m from odp_ss_batch_size.  Writes the
 * results as odp_compute_top_outliers documents and frees everything it
 * allocated, the backend included, on every path.
 *
 * With give_up_at > 0 it stops, sets *gave_up and returns ODP_OK without
 * results as soon as it has evaluated that many distances: the caller
 * then answers by brute force.
 */
static OdpStatus
ss_run(OdpContext *ctx, const OdpMatrix *mat, OdpMetric metric, int32_t k,
	   const float *norms, const double *norms64, int64_t n, int64_t m, int64_t give_up_at,
	   int64_t *order, double *scores, int64_t *count, int64_t *solving_set,
	   double *solving_scores, OdpTopOutliersStats *st, bool *gave_up)
{
	const int64_t rows = mat->rows;
	OdpSsBackend be;
	bool		have_backend = false;
	uint8_t    *active = NULL;
	uint8_t    *in_s = NULL;
	double	   *upper = NULL;
	double	   *weight = NULL;
	int64_t    *cand = NULL;
	int64_t    *perm = NULL;
	double	   *cw = NULL;
	SsRanked   *top = NULL;
	int64_t    *act_rows = NULL;
	double	   *act_upper = NULL;
	int64_t		ntop = 0;
	int64_t		nc;
	int64_t		s_size = 0;
	OdpStatus	status;

	memset(&be, 0, sizeof(be));
	if (ctx->device == ODP_DEVICE_GPU && !odp_matrix_is64(mat))
	{
		bool		split;

		/*
		 * several devices: the distributed SolvingSet, one node each (float64
		 * rows stay here: their backend's k-NN spreads over the devices)
		 */
		status = odp_split_solvingset(ctx, mat, metric, k, n, m, give_up_at, order,
									  scores, count, solving_set, solving_scores, st,
									  &split, gave_up);
		if (split || status != ODP_OK)
			return status;
	}
	active = malloc((size_t) rows);
	in_s = calloc((size_t) rows, 1);
	upper = malloc(sizeof(double) * (size_t) rows);
	weight = malloc(sizeof(double) * (size_t) rows);
	cand = malloc(sizeof(int64_t) * (size_t) m);
	cw = malloc(sizeof(double) * (size_t) m);
	top = malloc(sizeof(SsRanked) * (size_t) (n + m));
	perm = malloc(sizeof(int64_t) * (size_t) rows);
	if (!active || !in_s || !upper || !weight || !cand || !cw || !top || !perm)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the SolvingSet state of %lld rows",
						  (long long) rows);
		goto done;
	}
	memset(active, 1, (size_t) rows);
	for (int64_t i = 0; i < rows; i++)
		upper[i] = INFINITY;

	status = odp_ss_first_rows(ctx, mat->ids, rows, m, cand);
	if (status != ODP_OK)
		goto done;
	nc = m;

	if (odp_matrix_is64(mat))
		status = odp_wide_ss_backend(ctx, mat, metric, k, norms64, &be);
	else if (ctx->device == ODP_DEVICE_GPU)
		status = odp_gpu_ss_backend(ctx, mat, metric, k, norms, &be);
	else
		status = odp_cpu_ss_backend(ctx, mat, metric, k, norms, &be);
	if (status != ODP_OK)
		goto done;
	have_backend = true;

	act_rows = malloc(sizeof(int64_t) * (size_t) rows);
	act_upper = malloc(sizeof(double) * (size_t) rows);
	if (!act_rows || !act_upper)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the SolvingSet state of %lld rows",
						  (long long) rows);
		goto done;
	}

#include <math.h>
#ifdef ODP_SS_TRACE
	double		trace_t0 = odp_now_ms();
#endif

	while (nc > 0)
	{
		int64_t		nact = 0;

		if (odp_cancel_requested(ctx))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
			goto done;
		}
		if (give_up_at > 0 && st->distances >= give_up_at)
		{
			*gave_up = true;
			status = ODP_OK;
			goto done;
		}
		st->iterations++;

		/* S += C: the candidates leave the active rows */
		for (int64_t i = 0; i < nc; i++)
		{
			int64_t		r = cand[i];

			if (in_s[r] || !active[r])
			{
				status = odp_fail(ctx, ODP_ERR_INTERNAL,
								  "SolvingSet chose row %lld twice", (long long) r);
				goto done;
			}
			in_s[r] = 1;
			active[r] = 0;
		}
		s_size += nc;

		/*
		 * The candidates' exact weights, and every active row merges its
		 * distances to C into new upper bounds.
		 */
		if (be.exact_update != NULL)
			status = be.exact_update(be.self, cand, (int32_t) nc, active, cw,
									 upper, &st->distances);
		else
		{
			status = be.exact(be.self, cand, (int32_t) nc, cw, &st->distances);
			if (status == ODP_OK && odp_cancel_requested(ctx))
				status = odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
			if (status == ODP_OK)
				status = be.update(be.self, cand, (int32_t) nc, active, upper,
								   &st->distances);
		}
		if (status != ODP_OK)
			goto done;

#include <math.h>
#ifdef ODP_SS_TRACE
		fprintf(stderr, "ss driver: batch %d of %lld candidates, %.2f ms since the last\n",
				st->iterations, (long long) nc, odp_now_ms() - trace_t0);
		trace_t0 = odp_now_ms();
#endif

		/* Top = the n best of Top + C */
		for (int64_t i = 0; i < nc; i++)
		{
			weight[cand[i]] = cw[i];
			top[ntop + i].weight = cw[i];
			top[ntop + i].row = cand[i];
		}
		qsort(top, (size_t) (ntop + nc), sizeof(SsRanked), ss_cmp_ranked);
		ntop = ntop + nc < n ? ntop + nc : n;

		/*
		 * Prune; next C: the m active rows of largest upper, ties by
		 * smaller row, ascending.  A backend may do it where the upper
		 * bounds are.
		 */
		{
			bool		prune = ntop == n;
			double		min_out = prune ? top[n - 1].weight : 0.0;
			bool		done = false;

			if (be.select != NULL)
			{
				status = be.select(be.self, prune, min_out, m, active, cand,
								   &nc, &done);
				if (status != ODP_OK)
					goto done;
			}
			if (!done)
			{
				for (int64_t p = 0; p < rows; p++)
				{
					if (!active[p])
						continue;
					if (prune && upper[p] < min_out)
					{
						active[p] = 0;
						continue;
					}
					act_rows[nact] = p;
					act_upper[nact] = upper[p];
					nact++;
				}
				nc = odp_top_n(act_upper, act_rows, nact, m, perm);
				for (int64_t i = 0; i < nc; i++)
					cand[i] = act_rows[perm[i]];
				odp_sort_int64(cand, nc);
			}
		}
#include <math.h>
#ifdef ODP_SS_TRACE
		fprintf(stderr, "ss driver: %lld next candidates, host step %.2f ms\n",
				(long long) nc, odp_now_ms() - trace_t0);
		trace_t0 = odp_now_ms();
#endif
	}

	/* results */
	for (int64_t i = 0; i < ntop; i++)
	{
		order[i] = top[i].row;
		scores[i] = top[i].weight;
	}
	*count = ntop;
	st->solving_set_size = s_size;
	if (solving_set != NULL)
	{
		int64_t		j = 0;

		for (int64_t r = 0; r < rows; r++)
		{
			if (!in_s[r])
				continue;
			solving_set[j] = r;
			if (solving_scores != NULL)
				solving_scores[j] = weight[r];
			j++;
		}
	}
	status = ODP_OK;

done:
	if (have_backend)
		be.release(be.self);
	free(active);
	free(in_s);
	free(upper);
	free(weight);
	free(cand);
	free(cw);
	free(top);
	free(perm);
	free(act_rows);
	free(act_upper);
	return status;
}

/*
 * Brute force: every row's score on ctx->device, then the n best.  n <=
 * rows; arguments validated.  Frees what it allocates.  With filter_gave_up
 * set it runs on the GPU through the tensor-core filter only
 * (odp_gpu_outlier_scores_filtered, ODP_SS_AUTO_FILTER_MAX_OVERFLOW) and
 * may give up, returning ODP_OK with *filter_gave_up true and no results.
 * Otherwise the scores take the spatial path or not as path says, whatever
 * the call's odp_gpu.spatial: the method named decides.
 */
static OdpStatus
bf_run(OdpContext *ctx, const OdpMatrix *mat, OdpMetric metric, int32_t k,
	   const float *norms, const double *norms64, int64_t n, int64_t *order, double *scores,
	   int64_t *count, int64_t *solving_set, double *solving_scores,
	   OdpTopOutliersStats *st, bool *filter_gave_up, OdpSpatialMode path)
{
	const int64_t rows = mat->rows;
	double	   *all = malloc(sizeof(double) * (size_t) rows);
	OdpStatus	status;

	if (all == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld scores", (long long) rows);
	if (filter_gave_up != NULL)
		status = odp_gpu_outlier_scores_filtered(ctx, mat, metric, k, norms,
												 ODP_SS_AUTO_FILTER_MAX_OVERFLOW,
												 all, filter_gave_up);
	else
	{
		OdpSpatialMode mode = ctx->spatial;

		ctx->spatial = path;
		status = odp_outlier_scores_on_device(ctx, mat, metric, k, norms, norms64, all);
		ctx->spatial = mode;
	}
	if (status == ODP_OK && (filter_gave_up == NULL || !*filter_gave_up))
	{
		*count = odp_top_n(all, NULL, rows, n, order);
		for (int64_t i = 0; i < *count; i++)
			scores[i] = all[order[i]];
		if (solving_set != NULL)
		{
			for (int64_t r = 0; r < rows; r++)
			{
				solving_set[r] = r;
				if (solving_scores != NULL)
					solving_scores[r] = all[r];
			}
		}
		st->distances = filter_gave_up == NULL && ctx->spatial_used
			? ctx->spatial_distances : rows * (rows - 1);
		st->solving_set_size = rows;
	}
	free(all);
	return status;
}

/*
 * Top-n outliers by brute force or SolvingSet; see odp_outliers.h for the
 * contract.  stats may be NULL.  Checks the arguments, picks the method
 * for AUTO, computes cosine norms once and runs on ctx->device.
 */
OdpStatus
odp_compute_top_outliers(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
						 int32_t k, int64_t n, OdpOutlierMethod method,
						 int64_t batch_size, int64_t *order, double *scores, int64_t *count,
						 int64_t *solving_set, double *solving_scores,
						 OdpTopOutliersStats *stats)
{
	OdpTopOutliersStats local;
	OdpTopOutliersStats *st = stats != NULL ? stats : &local;
	float	   *norms = NULL;
	double	   *norms64 = NULL;
	int64_t		batch;
	bool		chosen;
	int64_t		wasted = 0;
	double		filter_transfer = 0.0;
	double		start = odp_now_ms();
	OdpStatus	status;

	if (ctx == NULL)
		return ODP_ERR_INVALID_ARGUMENT;
	memset(st, 0, sizeof(*st));
	if (count != NULL)
		*count = 0;
	status = odp_outlier_prepare(ctx, m, metric, k, &norms, &norms64);
	if (status != ODP_OK)
		return status;
	if (order == NULL || scores == NULL || count == NULL)
		status = odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing input or output buffer");
	else if (n < 1)
		status = odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						  "n = %lld: the number of outliers must be at least 1",
						  (long long) n);
	else if (method != ODP_METHOD_AUTO && method != ODP_METHOD_BRUTEFORCE &&
			 method != ODP_METHOD_SOLVINGSET && method != ODP_METHOD_SPATIAL)
		status = odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "unknown method %d", (int) method);
	else if (method == ODP_METHOD_SPATIAL && !odp_spatial_possible(metric, m->dims, k))
		status = odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						  "method spatial needs rows of 1 .. %d dimensions, k <= %d and a metric "
						  "of euclidean, sqeuclidean, manhattan or chebyshev (here %d dimensions, "
						  "k = %d, %s)", ODP_SPATIAL_MAX_DIMS, ODP_SPATIAL_MAX_K, (int) m->dims,
						  (int) k, odp_metric_name(metric));
	else if (batch_size < 0)
		status = odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						  "batch size %lld: SolvingSet needs at least 1 candidate per batch",
						  (long long) batch_size);
	else if (method == ODP_METHOD_SOLVINGSET && k >= ODP_MAX_K)
		status = odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						  "k = %d: SolvingSet needs k < %d (brute force allows %d)",
						  (int) k, ODP_MAX_K, ODP_MAX_K);
	if (status != ODP_OK)
	{
		free(norms);
		free(norms64);
		return status;
	}

	if (n > m->rows)
		n = m->rows;
	batch = odp_ss_batch_size(m->rows, n, batch_size);
	chosen = method == ODP_METHOD_AUTO;
	if (chosen && odp_spatial_chosen(ctx, metric, m->dims, m->rows, m->rows, k))
		method = ODP_METHOD_SPATIAL;
	if (method == ODP_METHOD_SPATIAL)
	{
		status = bf_run(ctx, m, metric, k, norms, norms64, n, order, scores, count,
						solving_set, solving_scores, st, NULL, ODP_SPATIAL_ON);
		st->method = ODP_METHOD_SPATIAL;
		if (!(chosen && status == ODP_ERR_GPU_OOM))
			goto finish;
		/* its tree does not fit the GPU's budget: auto's other choices */
		memset(st, 0, sizeof(*st));
		ctx->message[0] = '\0';
		status = ODP_OK;
	}
	if (chosen)
		method = (m->rows >= ODP_SS_AUTO_FACTOR * batch && k < ODP_MAX_K)
			? ODP_METHOD_SOLVINGSET : ODP_METHOD_BRUTEFORCE;
	st->method = method;

	if (chosen && method == ODP_METHOD_SOLVINGSET && !odp_matrix_is64(m) &&
		ctx->device == ODP_DEVICE_GPU && m->rows <= ODP_SS_AUTO_FILTER_ROWS &&
		odp_gpu_outliers_filter_eligible(metric, m->rows, m->dims, k))
	{
		bool		filter_gave_up = false;

		status = bf_run(ctx, m, metric, k, norms, norms64, n, order, scores, count,
						solving_set, solving_scores, st, &filter_gave_up, ODP_SPATIAL_OFF);
		if (status == ODP_ERR_GPU_OOM)
			filter_gave_up = true;
		if (!filter_gave_up)
		{
			if (status == ODP_OK)
				st->method = ODP_METHOD_BRUTEFORCE;
			goto finish;
		}
		/* SolvingSet's time below is measured from start and includes this */
		filter_transfer = ctx->transfer_ms;
		memset(st, 0, sizeof(*st));
		st->method = ODP_METHOD_SOLVINGSET;
		ctx->message[0] = '\0';
		status = ODP_OK;
	}

	if (method == ODP_METHOD_SOLVINGSET)
	{
		bool		gave_up = false;

		/*
		 * AUTO bounds SolvingSet's cost on data it cannot prune (all
		 * weights alike): past half of brute force's distance count it
		 * hands over to brute force, so AUTO costs at most about that
		 * much more than brute force, never several times it.
		 */
		st->batch_size = (int32_t) batch;
		status = ss_run(ctx, m, metric, k, norms, norms64, n, batch,
						chosen ? m->rows * (m->rows - 1) / 2 : 0,
						order, scores, count, solving_set, solving_scores,
						st, &gave_up);
		ctx->transfer_ms += filter_transfer;
		ctx->compute_ms = odp_now_ms() - start - ctx->transfer_ms;

		/*
		 * The GPU backend keeps the whole input and every row's list on
		 * the device; brute force works in chunks of any size.  So when
		 * AUTO's choice does not fit the GPU memory budget, brute force
		 * gives the same answer instead of an error.
		 */
		if (chosen && (gave_up || status == ODP_ERR_GPU_OOM))
		{
			wasted = st->distances;
			memset(st, 0, sizeof(*st));
			method = ODP_METHOD_BRUTEFORCE;
			ctx->message[0] = '\0';
			status = ODP_OK;
		}
	}
	if (method == ODP_METHOD_BRUTEFORCE)
	{
		double		ss_transfer = ctx->transfer_ms;
		double		ss_compute = ctx->compute_ms;

		/* brute force by name, or auto's fallback: never the spatial path */
		status = bf_run(ctx, m, metric, k, norms, norms64, n, order, scores, count,
						solving_set, solving_scores, st, NULL, ODP_SPATIAL_OFF);
		/* what an abandoned SolvingSet spent counts too */
		st->method = ODP_METHOD_BRUTEFORCE;
		st->distances += wasted;
		ctx->transfer_ms += ss_transfer;
		ctx->compute_ms += ss_compute;
	}
finish:
	if (status != ODP_OK)
		*count = 0;
	free(norms);
	free(norms64);
	return status;
}
