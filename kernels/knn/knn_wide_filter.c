/*-------------------------------------------------------------------------
 *
 * knn_wide_filter.c
 *	  Exact float64 k-NN on the GPU through the float32 k-NN as a filter:
 *	  a float32 copy of the rows finds a few more than k candidates per
 *	  query on the tensor cores, a proven bound on float32's error says
 *	  which queries' true k nearest must be among them, those lists are
 *	  measured again in float64 (knn_gpu_refine64.cu), and only the
 *	  queries the bound cannot certify run the exact float64 kernel
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
 *    L2 and cosine) returns each query's kp = min(k + 8 + k / 4,
 *    available) smallest float32 distances d32 by (d32, index); d32 is
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
 * Eligibility: the whole call goes to odp_split_knn64 when any |x| may
 * be 2^240 or more (the float64 distances could overflow), or when the
 * float32 terms could (D (2 M)^2 or D 2 M reaching 2^120, M the largest
 * |c|), or when the refinement would not fit the device's budget; and so
 * do the shapes odp_knn64_filter_shape refuses: the inner product (no
 * norm bounds it), k over 256, more than 2^27 list entries, and calls
 * below odp_knn64_filter_min_cands candidates or
 * odp_knn64_filter_min_queries queries (32,768 and 128: smaller ones
 * take the exact kernel alone, the filter's fixed costs not paying).
 *
 * The uncertified queries are gathered into a matrix of their own and run
 * the exact kernel: for a self join with k + 1 and no self exclusion, the
 * query's own row then dropped (the first k when it is not among them):
 * the self-excluding top k, duplicates and ties included.
 *
 * Time: ctx->transfer_ms, compute_ms and chunks sum the sub-calls'
 * (each resets them); the host's preparation, gathers and bounds count
 * as compute.  The float32 k-NN runs over the call's device set, the
 * refinement on its first device.
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
#include "include/odp_distance.h"
#include "knn/knn_internal.h"
#include "knn/knn_merge.h"

/* The largest k filtered, and the most list entries (queries x kp). */
#define WIDE_MAX_K				256
#define WIDE_MAX_ENTRIES		((int64_t) 1 << 27)
/* Rows per task of the host preparation; rows sampled for the centre. */
#define WIDE_TASK_ROWS			8192
#define WIDE_SAMPLE_ROWS		4096

int64_t		odp_knn64_filter_queries = 0;
int64_t		odp_knn64_filter_certified = 0;
int64_t		odp_knn64_filter_fallbacks = 0;
int64_t		odp_knn64_filter_min_cands = 32768;
int64_t		odp_knn64_filter_min_queries = 128;
double		odp_knn64_filter_ms[4] = {0.0, 0.0, 0.0, 0.0};

/* x, less than the exact value of the operation that rounded to it. */
static double
wide_down(double x)
{
	return x - fabs(x) * 0x1p-50 - 0x1p-1000;
}

/* x, more than the exact value of the operation that rounded to it. */
static double
wide_up(double x)
{
	return x + fabs(x) * 0x1p-50 + 0x1p-1000;
}

/*
 * The rows of a call seen as one sequence for the host preparation:
 * queries, then the candidates (a self join: the candidates alone).
 */
typedef struct WidePrep
{
	const double *x[2];			/* queries, candidates (x[0] NULL: self) */
	const double *norms[2];		/* cosine */
	float	   *y[2];			/* float32 copies */
	double	   *r[2];			/* R per row */
	int64_t		rows[2];
	int32_t		dims;
	OdpMetric	metric;
	int64_t		tasks[2];		/* tasks of each side */
	double	   *mu;				/* dims, NULL for cosine */
	double	   *slot;			/* per task: max |x|, max |y|, max R */
} WidePrep;

/* The side and first row of task t. */
static int
prep_task(const WidePrep *p, int64_t t, int64_t *first)
{
	const int	side = t < p->tasks[0] ? 0 : 1;

	*first = (side == 0 ? t : t - p->tasks[0]) * WIDE_TASK_ROWS;
	return side;
}

/*
 * The centre: each column's midrange over a sample of the rows (every
 * stride-th row of each side, about WIDE_SAMPLE_ROWS in all).  Any centre
 * is exact (R is measured per row); a good one only makes R small.
 */
static void
prep_centre(WidePrep *p)
{
	for (int32_t d = 0; d < p->dims; d++)
	{
		double		mn = INFINITY,
					mx = -INFINITY;

		for (int s = 0; s < 2; s++)
		{
			const int64_t stride = p->rows[s] / WIDE_SAMPLE_ROWS + 1;

			for (int64_t i = 0; i < p->rows[s]; i += stride)
			{
				const double v = p->x[s][i * p->dims + d];

				mn = v < mn ? v : mn;
				mx = v > mx ? v : mx;
			}
		}
		p->mu[d] = 0.5 * mn + 0.5 * mx;
	}
}

/*
 * One row's float32 copy y and the norm of its error bound e (step 1 of
 * the file's comment; mu NULL: cosine, the row divided by its norm n);
 * sets *big to the largest |c|.  Locals and restrict pointers only, so
 * that the stores to y need not reload anything.
 */
static double
prep_row(const double *restrict row, const double *restrict mu, double n,
		 int32_t dims, OdpMetric metric, float *restrict y, double *big)
{
	double		acc[2] = {0.0, 0.0},
				top[2] = {0.0, 0.0};

	for (int32_t d = 0; d < dims; d++)
	{
		const double c = mu ? row[d] - mu[d] : row[d] / n;
		const double ac = fabs(c);
		/* beyond float32's range: the call is refused after this pass */
		const float f = ac < 0x1p100 ? (float) c : 0.0f;
		const double e = fabs((double) f - c) + (mu ? ac * 0x1p-52 : 0.0);

		y[d] = f;
		top[d & 1] = ac > top[d & 1] ? ac : top[d & 1];
		if (metric == ODP_METRIC_CHEBYSHEV)
			acc[d & 1] = e > acc[d & 1] ? e : acc[d & 1];
		else if (metric == ODP_METRIC_MANHATTAN)
			acc[d & 1] += e;
		else
			acc[d & 1] += e * e;
	}
	*big = top[0] > top[1] ? top[0] : top[1];
	if (metric == ODP_METRIC_CHEBYSHEV)
		return acc[0] > acc[1] ? acc[0] : acc[1];
	if (metric == ODP_METRIC_MANHATTAN)
		return acc[0] + acc[1];
	return sqrt(acc[0] + acc[1]);
}

/*
 * Task of the preparation: the float32 copies of its rows, each row's R
 * (step 1 of the file's comment), the largest |x|, |c| and R.  |x| is
 * bounded through |c|: |x| <= |c| (1 + 2^-52) + |mu|, or the row's norm
 * (times 1 + 2^-40) for cosine.
 */
static void
prep_convert(void *arg, int64_t t)
{
	const WidePrep *p = (const WidePrep *) arg;
	int64_t		first;
	const int	side = prep_task(p, t, &first);
	const int64_t last = first + WIDE_TASK_ROWS < p->rows[side] ?
		first + WIDE_TASK_ROWS : p->rows[side];
	const bool	cosine = p->metric == ODP_METRIC_COSINE;
	const double zerr = ((double) p->dims + 8.0) * 0x1p-52;
	const double *mu = cosine ? NULL : p->mu;
	const int32_t dims = p->dims;
	const OdpMetric metric = p->metric;
	const double *x = p->x[side];
	const double *norms = p->norms[side];
	float	   *y = p->y[side];
	double	   *rr = p->r[side];
	double		bigx = 0.0,
				bigy = 0.0,
				bigr = 0.0,
				mumax = 0.0;

	for (int32_t d = 0; mu && d < dims; d++)
		mumax = fabs(mu[d]) > mumax ? fabs(mu[d]) : mumax;
	for (int64_t i = first; i < last; i++)
	{
		double		big,
					r;

		r = prep_row(x + i * dims, mu, cosine ? norms[i] : 1.0, dims, metric,
					 y + i * dims, &big);
		r = r * (1.0 + 0x1p-30) + 0x1p-500 + (cosine ? zerr : 0.0);
		rr[i] = r;
		bigr = r > bigr ? r : bigr;
		bigy = big > bigy ? big : bigy;
		if (cosine)
			bigx = norms[i] > bigx ? norms[i] : bigx;
	}
	if (!cosine)
		bigx = bigy * (1.0 + 0x1p-40) + mumax;
	p->slot[(size_t) t * 3] = bigx * (1.0 + 0x1p-40);
	p->slot[(size_t) t * 3 + 1] = bigy;
	p->slot[(size_t) t * 3 + 2] = bigr;
}

/* See knn_internal.h. */
bool
odp_knn64_filter_shape(OdpMetric metric, int64_t nq, int64_t nc, int32_t k,
					   bool self_join)
{
	const int64_t avail = nc - (self_join ? 1 : 0);
	const int64_t kp = (int64_t) k + 8 + k / 4 < avail ? (int64_t) k + 8 + k / 4 : avail;

	return metric != ODP_METRIC_INNER_PRODUCT && k >= 1 && k <= WIDE_MAX_K &&
		k <= avail && nc >= odp_knn64_filter_min_cands &&
		nq >= odp_knn64_filter_min_queries && nq * kp <= WIDE_MAX_ENTRIES;
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

/* One filtered call's state (everything owned is freed by wide_free). */
typedef struct Wide
{
	OdpContext *ctx;
	const OdpMatrix *queries;
	const OdpMatrix *cands;
	const double *qnorms;
	const double *cnorms;
	OdpMetric	metric;
	int32_t		k;
	int32_t		kp;
	bool		self;
	double	   *dist;
	int64_t    *index;
	WidePrep	prep;
	float	   *d32;			/* nq x kp float32 distances */
	int64_t    *list;			/* nq x kp candidate indexes */
	double	   *lower;			/* nq: LB */
	unsigned char *certified;
	WideTime	time;
} Wide;

static void
wide_free(Wide *w)
{
	for (int s = 0; s < 2; s++)
	{
		free(w->prep.y[s]);
		free(w->prep.r[s]);
	}
	free(w->prep.mu);
	free(w->prep.slot);
	free(w->d32);
	free(w->list);
	free(w->lower);
	free(w->certified);
}

/*
 * Centres (or normalises) the rows into float32 copies with their R
 * (steps 1 of the file's comment); sets *eligible false where the data
 * does not allow the filter.
 */
static OdpStatus
wide_prepare(Wide *w, double *rmax, bool *eligible)
{
	WidePrep   *p = &w->prep;
	const int32_t dims = w->cands->dims;
	const int	sides = w->self ? 1 : 2;
	int64_t		tasks;
	double		bigx = 0.0,
				bigy = 0.0;
	OdpStatus	status;

	*eligible = false;
	*rmax = 0.0;
	p->dims = dims;
	p->metric = w->metric;
	/* side 1 is always the candidates; side 0 the queries unless a self join */
	p->x[1] = w->cands->data64;
	p->norms[1] = w->cnorms;
	p->rows[1] = w->cands->rows;
	if (!w->self)
	{
		p->x[0] = w->queries->data64;
		p->norms[0] = w->qnorms;
		p->rows[0] = w->queries->rows;
	}
	for (int s = 2 - sides; s < 2; s++)
	{
		p->tasks[s] = (p->rows[s] + WIDE_TASK_ROWS - 1) / WIDE_TASK_ROWS;
		p->y[s] = (float *) malloc(sizeof(float) * (size_t) p->rows[s] * dims);
		p->r[s] = (double *) malloc(sizeof(double) * (size_t) p->rows[s]);
		if (p->y[s] == NULL || p->r[s] == NULL)
			return odp_fail(w->ctx, ODP_ERR_HOST_OOM,
							"out of memory for the float32 copy of the rows");
	}
	tasks = p->tasks[0] + p->tasks[1];
	p->slot = (double *) malloc(sizeof(double) * 3 * (size_t) tasks);
	p->mu = (double *) malloc(sizeof(double) * (size_t) dims);
	if (p->slot == NULL || p->mu == NULL)
		return odp_fail(w->ctx, ODP_ERR_HOST_OOM, "out of memory for the column ranges");
	if (w->metric != ODP_METRIC_COSINE)
		prep_centre(p);
	if ((status = odp_parallel_tasks(w->ctx, tasks, prep_convert, p)) != ODP_OK)
		return status;
	for (int64_t t = 0; t < tasks; t++)
	{
		const double *s = p->slot + (size_t) t * 3;

		bigx = fmax(bigx, s[0]);
		bigy = fmax(bigy, s[1]);
		/* the candidates' tasks come last */
		if (t >= p->tasks[0])
			*rmax = fmax(*rmax, s[2]);
	}
	if (!(bigx < 0x1p240))
		return ODP_OK;
	/* the float32 terms and sums stay far below float32's overflow */
	if (w->metric == ODP_METRIC_MANHATTAN || w->metric == ODP_METRIC_CHEBYSHEV)
		*eligible = (double) dims * 2.0 * bigy < 0x1p120;
	else
		*eligible = (double) dims * 4.0 * bigy * bigy < 0x1p120;
	return ODP_OK;
}

/*
 * LB of one query (steps 3 and 4 of the file's comment) from t, the
 * kp-th float32 distance of its list, and r, its R plus Rmax.
 */
static double
wide_lower(OdpMetric metric, int32_t dims, double t, double r)
{
	const double D = (double) dims;
	const double g = wide_up(2.0 * (D + 4.0) * 0x1p-24);
	const double a0 = wide_up(D * 0x1p-60);
	const double g64 = wide_up(2.0 * (D + 4.0) * 0x1p-53);
	const double a64 = 0x1p-500;
	double		l,
				lb;

	l = wide_down(t - a0);
	if (!(l > 0.0))
		return -INFINITY;
	l = wide_down(wide_down(l / wide_up(1.0 + g)) - wide_up(r));
	if (!(l > 0.0))
		return -INFINITY;
	switch (metric)
	{
		case ODP_METRIC_SQEUCLIDEAN:
			lb = wide_down(wide_down(wide_down(l * l) * wide_down(1.0 - g64)) - a64);
			break;
		case ODP_METRIC_COSINE:
			lb = wide_down(wide_down(wide_down(l * l) * 0.5) - wide_up((2.0 * D + 16.0) * 0x1p-52));
			break;
		default:
			lb = wide_down(wide_down(l * wide_down(1.0 - g64)) - a64);
			break;
	}
	return lb - fabs(lb) * 0x1p-40;
}

/*
 * Runs the float32 k-NN on the copies, then each query's LB (a list of
 * every available candidate: +inf).
 */
static OdpStatus
wide_filter(Wide *w, double rmax)
{
	const int64_t nq = w->queries->rows;
	const int32_t dims = w->cands->dims;
	const int64_t avail = w->cands->rows - (w->self ? 1 : 0);
	OdpMatrix	q32 = {0},
				c32 = {0};
	const OdpMetric m32 = w->metric == ODP_METRIC_MANHATTAN ||
		w->metric == ODP_METRIC_CHEBYSHEV ? w->metric : ODP_METRIC_EUCLIDEAN;
	OdpStatus	status;

	w->d32 = (float *) malloc(sizeof(float) * (size_t) nq * w->kp);
	w->list = (int64_t *) malloc(sizeof(int64_t) * (size_t) nq * w->kp);
	w->lower = (double *) malloc(sizeof(double) * (size_t) nq);
	w->certified = (unsigned char *) malloc((size_t) nq);
	if (w->d32 == NULL || w->list == NULL || w->lower == NULL || w->certified == NULL)
		return odp_fail(w->ctx, ODP_ERR_HOST_OOM, "out of memory for the filter's lists");
	c32.data = w->prep.y[1];
	c32.rows = w->cands->rows;
	c32.dims = dims;
	q32 = c32;
	if (!w->self)
	{
		q32.data = w->prep.y[0];
		q32.rows = nq;
	}
	status = odp_split_knn(w->ctx, &q32, &c32, NULL, NULL, m32, w->kp, w->self,
						   w->d32, w->list);
	wide_take_time(w->ctx, &w->time);
	if (status != ODP_OK)
		return status;
	for (int64_t q = 0; q < nq; q++)
	{
		const double rq = w->self ? w->prep.r[1][q] : w->prep.r[0][q];

		if (w->kp >= avail)
			w->lower[q] = INFINITY;
		else
			w->lower[q] = wide_lower(w->metric, dims,
									 (double) w->d32[(size_t) q * w->kp + w->kp - 1],
									 wide_up(rq + rmax));
	}
	return ODP_OK;
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
 * Refines every list in float64 on the GPU (a batch: the candidates some
 * list names, gathered in index order so that local and global indexes
 * rank alike); sets *too_big where the device cannot hold it.
 */
static OdpStatus
wide_refine(Wide *w, bool *too_big)
{
	const int64_t nq = w->queries->rows;
	const int64_t nc = w->cands->rows;
	const int32_t dims = w->cands->dims;
	const size_t entries = (size_t) nq * w->kp;
	OdpRefine64 r;
	int64_t    *remap = NULL,
			   *used = NULL;
	double	   *rows = NULL,
			   *norms = NULL;
	int64_t		nu = 0;
	OdpStatus	status;

	memset(&r, 0, sizeof(r));
	r.queries = w->queries->data64;
	r.cands = w->cands->data64;
	r.qnorms = w->qnorms;
	r.cnorms = w->cnorms;
	r.nq = nq;
	r.nc = nc;
	if (!w->self)
	{
		remap = (int64_t *) calloc((size_t) nc, sizeof(int64_t));
		if (remap == NULL)
			return odp_fail(w->ctx, ODP_ERR_HOST_OOM, "out of memory for the filter's lists");
		for (size_t e = 0; e < entries; e++)
			remap[w->list[e]] = 1;
		for (int64_t j = 0; j < nc; j++)
			nu += remap[j];
		used = (int64_t *) malloc(sizeof(int64_t) * (size_t) (nu > 0 ? nu : 1));
		if (used == NULL)
		{
			status = odp_fail(w->ctx, ODP_ERR_HOST_OOM,
							  "out of memory for the filter's candidates");
			goto done;
		}
		nu = 0;
		for (int64_t j = 0; j < nc; j++)
			if (remap[j])
			{
				used[nu] = j;
				remap[j] = nu++;
			}
		status = wide_gather(w->ctx, w->cands->data64, w->cnorms, dims, used, nu,
							 &rows, &norms);
		if (status != ODP_OK)
			goto done;
		for (size_t e = 0; e < entries; e++)
			w->list[e] = remap[w->list[e]];
		r.cands = rows;
		r.cnorms = norms;
		r.nc = nu;
	}
	r.dims = dims;
	r.metric = w->metric;
	r.kp = w->kp;
	r.k = w->k;
	r.list = w->list;
	r.lower = w->lower;
	r.dist = w->dist;
	r.index = w->index;
	r.certified = w->certified;
	status = odp_gpu_refine64(w->ctx, &r, too_big);
	wide_take_time(w->ctx, &w->time);
	if (status == ODP_OK && !*too_big && used != NULL)
		for (size_t e = 0; e < (size_t) nq * w->k; e++)
			w->index[e] = used[w->index[e]];
done:
	free(remap);
	free(used);
	free(rows);
	free(norms);
	return status;
}

/*
 * Runs the exact float64 kernel for the queries not certified and writes
 * their lists (step 5 of the file's comment).
 */
static OdpStatus
wide_fallback(Wide *w, int64_t *fallbacks)
{
	const int64_t nq = w->queries->rows;
	const int32_t dims = w->cands->dims;
	const int32_t kk = w->k + (w->self ? 1 : 0);
	int64_t		nf = 0;
	int64_t    *which = NULL;
	double	   *rows = NULL,
			   *norms = NULL,
			   *fd = NULL;
	int64_t    *fi = NULL;
	OdpMatrix	sub = {0};
	OdpStatus	status = ODP_OK;

	for (int64_t q = 0; q < nq; q++)
		nf += w->certified[q] ? 0 : 1;
	*fallbacks = nf;
	if (nf == 0)
		return ODP_OK;
	which = (int64_t *) malloc(sizeof(int64_t) * (size_t) nf);
	fd = (double *) malloc(sizeof(double) * (size_t) nf * kk);
	fi = (int64_t *) malloc(sizeof(int64_t) * (size_t) nf * kk);
	if (which == NULL || fd == NULL || fi == NULL)
	{
		status = odp_fail(w->ctx, ODP_ERR_HOST_OOM, "out of memory for the exact queries");
		goto done;
	}
	nf = 0;
	for (int64_t q = 0; q < nq; q++)
		if (!w->certified[q])
			which[nf++] = q;
	status = wide_gather(w->ctx, w->queries->data64, w->qnorms, dims, which, nf,
						 &rows, &norms);
	if (status != ODP_OK)
		goto done;
	sub.data64 = rows;
	sub.rows = nf;
	sub.dims = dims;
	status = odp_split_knn64(w->ctx, &sub, w->cands, norms, w->cnorms, w->metric,
							 kk, false, fd, fi);
	wide_take_time(w->ctx, &w->time);
	if (status != ODP_OK)
		goto done;
	for (int64_t f = 0; f < nf; f++)
	{
		const int64_t q = which[f];

		odp_list_without_row(fd + (size_t) f * kk, fi + (size_t) f * kk, kk,
							 w->self ? q : -1, w->k, w->dist + (size_t) q * w->k,
							 w->index + (size_t) q * w->k);
	}
done:
	free(which);
	free(rows);
	free(norms);
	free(fd);
	free(fi);
	return status;
}

/* See knn_internal.h. */
OdpStatus
odp_knn64_filtered(OdpContext *ctx, const OdpMatrix *queries,
				   const OdpMatrix *cands, const double *qnorms,
				   const double *cnorms, OdpMetric metric, int32_t k,
				   bool self_join, double *dist, int64_t *index)
{
	Wide		w;
	double		rmax = 0.0;
	double		start = odp_now_ms(),
				stage,
				host_ms;
	bool		eligible = false,
				too_big = false;
	int64_t		fallbacks = 0;
	OdpStatus	status;

	if (!odp_matrix_is64(queries) || !odp_matrix_is64(cands) ||
		(metric == ODP_METRIC_COSINE && (qnorms == NULL || cnorms == NULL)) ||
		!odp_knn64_filter_shape(metric, queries->rows, cands->rows, k, self_join))
		return odp_split_knn64(ctx, queries, cands, qnorms, cnorms, metric, k,
							   self_join, dist, index);
	memset(&w, 0, sizeof(w));
	w.ctx = ctx;
	w.queries = queries;
	w.cands = cands;
	w.qnorms = qnorms;
	w.cnorms = cnorms;
	w.metric = metric;
	w.k = k;
	w.self = self_join;
	w.dist = dist;
	w.index = index;
	{
		const int64_t avail = cands->rows - (self_join ? 1 : 0);
		const int64_t kp = (int64_t) k + 8 + k / 4;

		w.kp = (int32_t) (kp < avail ? kp : avail);
	}
	wide_take_time(ctx, &w.time);

	status = wide_prepare(&w, &rmax, &eligible);
	odp_knn64_filter_ms[0] += odp_now_ms() - start;
	stage = odp_now_ms();
	if (status == ODP_OK && eligible)
		status = wide_filter(&w, rmax);
	odp_knn64_filter_ms[1] += odp_now_ms() - stage;
	stage = odp_now_ms();
	if (status == ODP_OK && eligible)
		status = wide_refine(&w, &too_big);
	odp_knn64_filter_ms[2] += odp_now_ms() - stage;
	stage = odp_now_ms();
	if (status == ODP_OK && eligible && !too_big)
		status = wide_fallback(&w, &fallbacks);
	odp_knn64_filter_ms[3] += odp_now_ms() - stage;
	host_ms = odp_now_ms() - start - w.time.transfer_ms - w.time.compute_ms;
	host_ms = host_ms > 0.0 ? host_ms : 0.0;
	wide_free(&w);
	if (status == ODP_OK && (!eligible || too_big))
	{
		status = odp_split_knn64(ctx, queries, cands, qnorms, cnorms, metric, k,
								 self_join, dist, index);
		wide_take_time(ctx, &w.time);
	}
	else if (status == ODP_OK)
	{
		odp_knn64_filter_queries += queries->rows;
		odp_knn64_filter_certified += queries->rows - fallbacks;
		odp_knn64_filter_fallbacks += fallbacks;
	}
	ctx->transfer_ms = w.time.transfer_ms;
	ctx->compute_ms = w.time.compute_ms + host_ms;
	ctx->chunks = w.time.chunks;
	return status;
}
