/*-------------------------------------------------------------------------
 *
 * knn_wide_filter.c
 *	  Exact float64 k-NN on the GPU through the float32 k-NN as a filter:
 *	  a float32 copy of the rows, made on the device, finds a few more
 *	  than k candidates per query on the tensor cores, a proven bound on
 *	  float32's error says which queries' true k nearest must be among
 *	  them, those lists are measured again in float64 on the device
 *	  (knn_gpu_filter64.cu: steps 1 to 5 below), and only the queries the
 *	  bound cannot certify run the exact float64 kernel
 *	  (odp_split_knn64).  The lists are those of odp_split_knn64 and the
 *	  CPU path, bit for bit: every distance returned is odp_distance64 of
 *	  the stored rows, and the order is (distance, index).
 *
 * The bound.  Norm ||.|| is the metric's: L2 for euclidean, sqeuclidean
 * and cosine, L1 for manhattan, Linf for chebyshev; D dims, u = 2^-24,
 * v = 2^-53.
 *
 * 1. Centring (not for cosine).  mu = any vector of doubles (the
 *    midrange of each column over a sample of the rows): the metrics
 *    are translation invariant, so ||x_i - x_j|| = ||(x_i - mu) -
 *    (x_j - mu)||.  c_i = fl64(x_i - mu) has |c_id - (x_id - mu_d)| <=
 *    2v |c_id| per coordinate (round to nearest; a subnormal difference
 *    is exact), and y_i = fl32(c_i), whose difference y_id - c_id is
 *    exact in double.  So e_id = |y_id - c_id| + 2^-52 |c_id| bounds
 *    |y_id - (x_id - mu_d)|, and by monotonicity of the norms in
 *    absolute values R_i = ||e_i|| computed in double, times (1 + 2^-30)
 *    (D <= 2^14 roundings of at most v each) plus 2^-500 (underflowing
 *    squares), bounds ||y_i - (x_i - mu)||.
 *    Cosine: z_i = x_i / ||x_i|| (exact unit vector) and z~_i = x_i /
 *    n_i in double with n_i = odp_row_norm64 (the dispatcher's norms):
 *    n_i's relative error is below (D + 3) v / 2 and the division's v,
 *    so ||z~_i - z_i|| <= (D + 8) v; R_i adds (D + 8) 2v to ||y_i - z~_i||.
 * 2. The float32 k-NN (the metric's own for L1 and Linf, euclidean for
 *    L2 and cosine) returns each query's kp (wide_kp: k plus a margin
 *    for near ties) smallest float32 distances d32 by (d32, index); d32 is
 *    odp_distance of the float32 rows on both paths (odp_distance.h), so
 *    every candidate j not listed has d32(i, j) >= t_i, the kp-th.  A
 *    list of every available candidate certifies its query outright.
 * 3. d32 against the real norm of the float32 rows: each coordinate's
 *    difference, square and the D-term sum (or maximum) round with
 *    relative error at most u each, sqrt by u / 2: |d32 - ||y_i - y_j|||
 *    <= g ||y_i - y_j|| + a0 with g = (D + 4) u / (1 - (D + 4) u),
 *    taken as 2 (D + 4) u, and a0 covering underflow (flushed or
 *    gradual: D squares of at most 2^-126 each, sqrt(D) 2^-63), taken as
 *    D 2^-60.  Eligibility (below) rules overflow out.  So for an
 *    unlisted j, ||y_i - y_j|| >= (t_i - a0) / (1 + g), and by the
 *    triangle inequality
 *        delta_ij = ||x_i - x_j|| >= l_i = max(0, (t_i - a0) / (1 + g)
 *                                              - R_i - Rmax)
 *    (||z_i - z_j|| for cosine), Rmax the largest R of a candidate.
 * 4. The float64 distance of the stored rows against the real one: the
 *    same analysis in double gives d64 >= delta (1 - g64) - a64, g64 =
 *    2 (D + 4) v, a64 = 2^-500 (euclidean, manhattan, chebyshev), d64 >=
 *    delta^2 (1 - g64) - a64 (sqeuclidean).  Cosine: the real distance is
 *    1 - z_i.z_j = ||z_i - z_j||^2 / 2, and odp_dist_finish64's quotient
 *    of the rounded dot product (error gamma_D ||x_i|| ||x_j||) by the
 *    rounded norms' product, then 1 - q, differ from it by less than
 *    (2 D + 9) v; the clamp to [0, 2] only moves it toward the real one:
 *    d64 >= l^2 / 2 - (2 D + 16) 2^-52.  That is LB_i, computed with each
 *    operation pushed outward by 2^-50 of its result (wide_down,
 *    wide_up: more than the rounding of the operation itself) and shrunk
 *    by 2^-40 at the end.
 * 5. The query is certified iff LB_i > T_k, the k-th smallest refined
 *    d64 of its list (strictly: an unlisted candidate at exactly T_k with
 *    a smaller index would belong).  Then every unlisted candidate ranks
 *    after the list's k-th, and the list's k smallest by (d64, index) are
 *    the query's k nearest.
 *
 * Eligibility: a part whose rows may hold any |x| of 2^240 or more (the
 * float64 distances could overflow), or whose float32 terms could
 * overflow (D (2 M)^2 or D 2 M reaching 2^120, M the largest |c|), or
 * whose copies would take more than half the device's budget, certifies
 * no query; a call of one part then goes to odp_split_knn64 whole.  So do
 * the shapes odp_knn64_filter_shape refuses: the inner product (no norm
 * bounds it), k over 256, and calls below odp_knn64_filter_min_cands
 * candidates or odp_knn64_filter_min_queries queries (32,768 and 128:
 * smaller ones take the exact kernel alone, the filter's fixed costs not
 * paying).
 *
 * The uncertified queries are gathered into a matrix of their own and run
 * the exact kernel: for a self join with k + 1 and no self exclusion, the
 * query's own row then dropped (the first k when it is not among them):
 * the self-excluding top k, duplicates and ties included.
 *
 * Devices: the query rows split over the call's device set as
 * odp_split_knn's (odp_knn_split_plan); each part holds every candidate
 * row, and its lists are the same whichever part computes them.  Time:
 * ctx->transfer_ms, compute_ms and chunks are the parts' (the slowest
 * part's times) plus the exact kernel's.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_wide_filter.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "common/host_threads.h"
#include "devices/device_set.h"
#include "include/odp_distance.h"
#include "knn/knn_internal.h"
#include "knn/knn_merge.h"

/* The largest k filtered. */
#define WIDE_MAX_K				256
/* The float32 k-NN's fast lists (tensor-core filter, shared-memory lists). */
#define WIDE_FAST_K				64
/* Rows per task of the host's gathers; rows sampled for the centre. */
#define WIDE_TASK_ROWS			8192
#define WIDE_SAMPLE_ROWS		4096

int64_t		odp_knn64_filter_queries = 0;
int64_t		odp_knn64_filter_certified = 0;
int64_t		odp_knn64_filter_fallbacks = 0;
int64_t		odp_knn64_filter_min_cands = 32768;
int64_t		odp_knn64_filter_min_queries = 128;
double		odp_knn64_filter_ms[4] = {0.0, 0.0, 0.0, 0.0};

/*
 * Candidates each float32 list holds: k plus a margin, so that near ties
 * at the k-th rarely leave a query uncertified, kept within the float32
 * k-NN's fast lists where k leaves room (a list past them costs more than
 * the margin saves); at most every available candidate.
 */
static int32_t
wide_kp(int32_t k, int64_t avail)
{
	int64_t		kp = (int64_t) k + 8 + k / 4;

	if (k < WIDE_FAST_K && kp > WIDE_FAST_K)
		kp = WIDE_FAST_K;
	return (int32_t) (kp < avail ? kp : avail);
}

/* See knn_internal.h. */
bool
odp_knn64_filter_shape(OdpMetric metric, int64_t nq, int64_t nc, int32_t k,
					   bool self_join)
{
	const int64_t avail = nc - (self_join ? 1 : 0);

	return metric != ODP_METRIC_INNER_PRODUCT && k >= 1 && k <= WIDE_MAX_K &&
		k <= avail && nc >= odp_knn64_filter_min_cands &&
		nq >= odp_knn64_filter_min_queries;
}

/*
 * The centre: each column's midrange over a sample of the rows (every
 * stride-th row of the queries and the candidates, about WIDE_SAMPLE_ROWS
 * of each).  Any centre is exact (R is measured per row); a good one only
 * makes R small.
 */
static void
wide_centre(const OdpMatrix *queries, const OdpMatrix *cands, double *mu)
{
	const OdpMatrix *side[2] = {queries, cands};

	for (int32_t d = 0; d < cands->dims; d++)
	{
		double		mn = INFINITY,
					mx = -INFINITY;

		for (int s = 0; s < 2; s++)
		{
			const int64_t stride = side[s]->rows / WIDE_SAMPLE_ROWS + 1;

			for (int64_t i = 0; i < side[s]->rows; i += stride)
			{
				const double v = side[s]->data64[i * cands->dims + d];

				mn = v < mn ? v : mn;
				mx = v > mx ? v : mx;
			}
		}
		mu[d] = 0.5 * mn + 0.5 * mx;
	}
}

/* Time the sub-calls reported, summed (each resets ctx's outputs). */
typedef struct WideTime
{
	double		transfer_ms;
	double		compute_ms;
	int64_t		chunks;
} WideTime;

/* Adds ctx's outputs to *t and clears them for the next sub-call. */
static void
wide_take_time(OdpContext *ctx, WideTime *t)
{
	t->transfer_ms += ctx->transfer_ms;
	t->compute_ms += ctx->compute_ms;
	t->chunks += ctx->chunks;
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
}

/* One split filtered call: the filter's arguments and the parts' ranges. */
typedef struct WideSplit
{
	const OdpFilter64 *f;
	int64_t		first[ODP_MAX_GPUS + 1];
	double		stage_ms[3];	/* part 0's */
} WideSplit;

/* Part p's query rows on its device; a refused part certifies none. */
static OdpStatus
wide_part(void *arg, int part, OdpContext *pctx)
{
	WideSplit  *w = (WideSplit *) arg;
	const int64_t first = w->first[part];
	const int64_t count = w->first[part + 1] - first;
	double		stage_ms[3];
	bool		refused = false;
	OdpStatus	status;

	if (count == 0)
		return ODP_OK;
	status = odp_gpu_knn64_filter_rows(pctx, w->f, first, count, stage_ms, &refused);
	if (status == ODP_OK && refused)
		memset(w->f->certified + first, 0, (size_t) count);
	if (part == 0)
		memcpy(w->stage_ms, stage_ms, sizeof(stage_ms));
	return status;
}

/* Rows which[0 .. n) of a matrix (and their norms) copied into rows of their own. */
typedef struct WideGather
{
	const double *src;
	const double *src_norms;
	const int64_t *which;
	int64_t		n;
	int32_t		dims;
	double	   *dst;
	double	   *dst_norms;
} WideGather;

/* Task of wide_gather: a block of WIDE_TASK_ROWS rows. */
static void
wide_gather_task(void *arg, int64_t t)
{
	const WideGather *g = (const WideGather *) arg;
	const int64_t last = (t + 1) * WIDE_TASK_ROWS < g->n ? (t + 1) * WIDE_TASK_ROWS : g->n;

	for (int64_t i = t * WIDE_TASK_ROWS; i < last; i++)
	{
		memcpy(g->dst + (size_t) i * g->dims, g->src + (size_t) g->which[i] * g->dims,
			   sizeof(double) * (size_t) g->dims);
		if (g->dst_norms)
			g->dst_norms[i] = g->src_norms[g->which[i]];
	}
}

/*
 * Copies rows which[0 .. n) of src (dims doubles each; and src_norms
 * where not NULL) into *rows (and *norms), allocated here.
 */
static OdpStatus
wide_gather(OdpContext *ctx, const double *src, const double *src_norms,
			int32_t dims, const int64_t *which, int64_t n, double **rows,
			double **norms)
{
	WideGather	g;

	*rows = (double *) malloc(sizeof(double) * (size_t) (n > 0 ? n : 1) * dims);
	*norms = src_norms ? (double *) malloc(sizeof(double) * (size_t) (n > 0 ? n : 1)) : NULL;
	if (*rows == NULL || (src_norms && *norms == NULL))
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of memory for a gathered copy of rows");
	g.src = src;
	g.src_norms = src_norms;
	g.which = which;
	g.n = n;
	g.dims = dims;
	g.dst = *rows;
	g.dst_norms = *norms;
	return odp_parallel_tasks(ctx, (n + WIDE_TASK_ROWS - 1) / WIDE_TASK_ROWS,
							  wide_gather_task, &g);
}

/*
 * Runs the exact float64 kernel for the queries not certified and writes
 * their lists, or their sums (step 5 of the file's comment).
 */
static OdpStatus
wide_fallback(OdpContext *ctx, const OdpFilter64 *f, int64_t *fallbacks)
{
	const int64_t nq = f->queries->rows;
	const int32_t dims = f->cands->dims;
	const int32_t kk = f->k + (f->self_join ? 1 : 0);
	int64_t		nf = 0;
	int64_t    *which = NULL;
	double	   *rows = NULL,
			   *norms = NULL,
			   *fd = NULL;
	int64_t    *fi = NULL;
	OdpMatrix	sub = {0};
	OdpStatus	status = ODP_OK;

	for (int64_t q = 0; q < nq; q++)
		nf += f->certified[q] ? 0 : 1;
	*fallbacks = nf;
	if (nf == 0)
		return ODP_OK;
	which = (int64_t *) malloc(sizeof(int64_t) * (size_t) nf);
	fd = (double *) malloc(sizeof(double) * (size_t) nf * kk);
	fi = (int64_t *) malloc(sizeof(int64_t) * (size_t) nf * kk);
	if (which == NULL || fd == NULL || fi == NULL)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of memory for the exact queries");
		goto done;
	}
	nf = 0;
	for (int64_t q = 0; q < nq; q++)
		if (!f->certified[q])
			which[nf++] = q;
	status = wide_gather(ctx, f->queries->data64, f->qnorms, dims, which, nf,
						 &rows, &norms);
	if (status != ODP_OK)
		goto done;
	sub.data64 = rows;
	sub.rows = nf;
	sub.dims = dims;
	status = odp_split_knn64(ctx, &sub, f->cands, norms, f->cnorms, f->metric,
							 kk, false, fd, fi);
	if (status != ODP_OK)
		goto done;
	for (int64_t i = 0; i < nf; i++)
	{
		const int64_t q = which[i];

		/* in place: the k kept entries never overtake the ones read */
		double	   *d = f->sums ? fd + (size_t) i * kk : f->dist + (size_t) q * f->k;
		int64_t    *x = f->sums ? fi + (size_t) i * kk : f->index + (size_t) q * f->k;

		odp_list_without_row(fd + (size_t) i * kk, fi + (size_t) i * kk, kk,
							 f->self_join ? q : -1, f->k, d, x);
		if (f->sums)
			f->sums[q] = odp_sum_ascending64(d, f->k);
	}
done:
	free(which);
	free(rows);
	free(norms);
	free(fd);
	free(fi);
	return status;
}

/*
 * odp_knn64_filtered, writing the lists or (sums not NULL) their sums.  A
 * call the filter does not take (its shape or its data) runs
 * odp_split_knn64 for lists; for sums it sets *unfiltered and writes no
 * score, the caller having the exact scores' own path.
 */
static OdpStatus
wide_run(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
		 const double *qnorms, const double *cnorms, OdpMetric metric,
		 int32_t k, bool self_join, double *dist, int64_t *index, double *sums,
		 bool *unfiltered)
{
	OdpFilter64 f;
	WideSplit	w;
	WideTime	time;
	OdpDeviceSet set;
	double		stage = odp_now_ms();
	bool		split = false,
				refused = false;
	int64_t		fallbacks = 0;
	OdpStatus	status;

	if (!odp_matrix_is64(queries) || !odp_matrix_is64(cands) ||
		(metric == ODP_METRIC_COSINE && (qnorms == NULL || cnorms == NULL)) ||
		!odp_knn64_filter_shape(metric, queries->rows, cands->rows, k, self_join))
	{
		if (sums != NULL)
		{
			*unfiltered = true;
			return ODP_OK;
		}
		return odp_split_knn64(ctx, queries, cands, qnorms, cnorms, metric, k,
							   self_join, dist, index);
	}
	memset(&f, 0, sizeof(f));
	memset(&w, 0, sizeof(w));
	memset(&time, 0, sizeof(time));
	f.queries = queries;
	f.cands = cands;
	f.qnorms = qnorms;
	f.cnorms = cnorms;
	f.metric = metric;
	f.k = k;
	f.kp = wide_kp(k, cands->rows - (self_join ? 1 : 0));
	f.self_join = self_join;
	f.dist = dist;
	f.index = index;
	f.sums = sums;
	f.certified = (unsigned char *) malloc((size_t) queries->rows);
	f.mu = (double *) malloc(sizeof(double) * (size_t) cands->dims);
	if (f.certified == NULL || f.mu == NULL)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of memory for the filter's certificates");
		goto done;
	}
	if (metric != ODP_METRIC_COSINE)
		wide_centre(queries, cands, (double *) f.mu);
	w.f = &f;
	wide_take_time(ctx, &time);

	status = odp_knn_split_plan(ctx, queries, cands, &set, w.first, &split);
	if (status == ODP_OK && split)
		status = odp_knn_split_run(ctx, &set, queries, cands, wide_part, &w);
	else if (status == ODP_OK)
		status = odp_gpu_knn64_filter_rows(ctx, &f, 0, queries->rows, w.stage_ms,
										   &refused);
	wide_take_time(ctx, &time);
	for (int s = 0; s < 3; s++)
		odp_knn64_filter_ms[s] += w.stage_ms[s];
	if (status != ODP_OK)
		goto done;

	stage = odp_now_ms();
	if (refused && sums != NULL)
		*unfiltered = true;
	else if (refused)
		status = odp_split_knn64(ctx, queries, cands, qnorms, cnorms, metric, k,
								 self_join, dist, index);
	else
	{
		status = wide_fallback(ctx, &f, &fallbacks);
		odp_knn64_filter_queries += queries->rows;
		odp_knn64_filter_certified += queries->rows - fallbacks;
		odp_knn64_filter_fallbacks += fallbacks;
	}
	wide_take_time(ctx, &time);
	odp_knn64_filter_ms[3] += odp_now_ms() - stage;
done:
	free(f.certified);
	free((double *) f.mu);
	ctx->transfer_ms = time.transfer_ms;
	ctx->compute_ms = time.compute_ms;
	ctx->chunks = time.chunks;
	return status;
}

/* See knn_internal.h. */
OdpStatus
odp_knn64_filtered(OdpContext *ctx, const OdpMatrix *queries,
				   const OdpMatrix *cands, const double *qnorms,
				   const double *cnorms, OdpMetric metric, int32_t k,
				   bool self_join, double *dist, int64_t *index)
{
	return wide_run(ctx, queries, cands, qnorms, cnorms, metric, k, self_join,
					dist, index, NULL, NULL);
}

/* See knn_internal.h. */
OdpStatus
odp_knn64_filtered_scores(OdpContext *ctx, const OdpMatrix *m,
						  const double *norms, OdpMetric metric, int32_t k,
						  double *scores, bool *unfiltered)
{
	*unfiltered = false;
	return wide_run(ctx, m, m, norms, norms, metric, k, true, NULL, NULL, scores,
					unfiltered);
}
