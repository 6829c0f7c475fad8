/*-------------------------------------------------------------------------
 *
 * test_integer.c
 *	  Engine tests of k-NN and outliers on integer-valued data with massive
 *	  ties, the data the GPU's exact integer k-NN path serves: all rows
 *	  equal, thousands of copies of a few rows, two distinct rows, 0/1 rows
 *	  from 1% to 99% ones, negative integers, int8's edges, int16-sized
 *	  values, a column of halves, the bounds on the sum of the squared
 *	  ranges, D from 1 to 257, k from 1 to 65, self joins, few and many
 *	  queries.
 *
 * Every case runs odp_compute_knn on the CPU against the naive reference
 * (test_util.c), bit for bit, and, where a GPU is usable, on the GPU
 * against the CPU, bit for bit (distances and indexes); self joins also
 * run odp_compute_outlier_scores and odp_compute_top_outliers (brute
 * force and auto) on both paths: the same scores and the same rows in the
 * same order.
 *
 * The integer path runs on the GPU where the metric is euclidean or
 * sqeuclidean (or manhattan, where every dimension's range is at most 1),
 * k <= 64, D <= 256, every value is an integer of magnitude
 * at most 2^24, every dimension's range (over queries and candidates
 * together) is at most 255, and the sum of the squared ranges is below
 * 2^24 (sqeuclidean) or 2^22 (euclidean); int_eligible() below writes
 * that rule out, and each case also states which metrics it expects to
 * meet it, so that the data is known to be what the case says.  Its
 * threshold, odp_gpu_knn_int_min_pairs (queries x candidates), is set to
 * 0 for the GPU runs of the small cases, so that they take the integer
 * path wherever it is eligible, and restored afterwards; its counter,
 * odp_gpu_knn_int_searches, must grow for the eligible cases and stay put
 * for the others.  Both symbols are weak: absent from a build without
 * the integer path (or without CUDA), where those checks are skipped.
 *
 * On the CPU, rows whose every value is 0 or 1 are compared as bits
 * under euclidean, squared euclidean, manhattan and chebyshev from
 * odp_cpu_knn_bits_min_queries queries on: each case's CPU run must (its
 * counter, odp_cpu_knn_bits_runs, grows) exactly when its data and query
 * count are such, and bits_edges() puts one other value (2, 0.5, -1) or
 * -0 among 0/1 rows.
 *
 * One larger case runs on the GPU only: 300,000 rows of 39 0/1 values,
 * k = 10, its k-NN lists and scores checked on a sample of rows against
 * a reference that counts differing bits, every score against its own
 * list, and the top outliers of brute force and auto against each other
 * and against the ranking of every row's score.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_integer.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_distance.h"
#include "include/odp_knn.h"
#include "include/odp_outliers.h"
#include "test_util.h"

/* CPU k-NN runs that compared 0/1 rows as bits, and from how many queries. */
extern int64_t odp_cpu_knn_bits_runs;
extern int64_t odp_cpu_knn_bits_min_queries;
/* Query chunks the GPU's integer path finished; weak for builds without it. */
extern int64_t odp_gpu_knn_int_searches __attribute__((weak));
/* Lets k-NN lists take the integer path on all eligible data. */
extern int	odp_gpu_knn_int_all_lists __attribute__((weak));
/* The fewest query x candidate pairs the integer path takes (a test hook). */
extern int64_t odp_gpu_knn_int_min_pairs __attribute__((weak));

/* The integer path's conditions. */
#define INT_MAX_K			64
#define INT_MAX_DIMS		256
#define INT_MAX_ABS			16777216.0	/* 2^24 */
#define INT_MAX_RANGE		255
#define INT_SQ_LIMIT		(INT64_C(1) << 24)	/* sum of range^2, sqeuclidean */
#define INT_EUCLID_LIMIT	(INT64_C(1) << 22)	/* sum of range^2, euclidean */

/* The top outliers asked for. */
#define INT_TOP_N			20

/* Metric masks. */
#define M_EUCLID	(1 << ODP_METRIC_EUCLIDEAN)
#define M_SQ		(1 << ODP_METRIC_SQEUCLIDEAN)
#define M_BOTH		(M_EUCLID | M_SQ)
#define M_MAN		(1 << ODP_METRIC_MANHATTAN)
#define M_CHEB		(1 << ODP_METRIC_CHEBYSHEV)
/* The metrics whose CPU path compares 0/1 rows as bits (knn_cpu_bits.c). */
#define M_BITS		(M_BOTH | M_MAN | M_CHEB)
#define M_OTHER		((1 << ODP_METRIC_MANHATTAN) | (1 << ODP_METRIC_CHEBYSHEV) | \
					 (1 << ODP_METRIC_COSINE))

/* Kinds of integer data. */
typedef enum IntKind
{
	IK_EQUAL,					/* every row the same (small integers) */
	IK_PROTOS,					/* copies of 5 prototype rows in [-20, 20] */
	IK_TWO,						/* one of two distinct rows */
	IK_BINARY,					/* 0/1, a 1 with probability density */
	IK_NEGATIVE,				/* -200 .. -1 */
	IK_INT8,					/* -128 or 127: range 255 */
	IK_INT8_WIDE,				/* -128 or 128: range 256 */
	IK_SHIFTED16,				/* 30000 .. 30255: range 255 */
	IK_INT16,					/* -32768 .. 32767 */
	IK_HALF,					/* 0 .. 19, column 0 at x.5 */
	IK_RANGE128,				/* 0 .. 128: sum of range^2 = D * 2^14 */
	IK_RANGE128_LAST127,		/* the same, the last column 0 .. 127 */
	IK_RANGE255,				/* 0 .. 255 */
	IK_RANGE126,				/* 0 .. 126: the widest range whose norms fold */
	IK_RANGE127,				/* 0 .. 127 */
	IK_GRID						/* 1 .. 13 (Poker's ranks) */
} IntKind;

/* One case: nq queries (0: a self join of the candidates) x nc candidates. */
typedef struct IntCase
{
	const char *what;
	IntKind		kind;
	double		density;		/* IK_BINARY: the share of ones */
	int64_t		nq;
	int64_t		nc;
	int			dims;
	int			k;
	int			metrics;		/* the metrics it runs */
	int			eligible;		/* those whose data the integer path takes */
} IntCase;

/* The prototype rows of IK_EQUAL, IK_PROTOS and IK_TWO, for both matrices. */
#define INT_PROTOS		5
#define INT_MAX_TEST_DIMS 512
static float protos[INT_PROTOS][INT_MAX_TEST_DIMS];

/* A random integer in [lo, hi], as a float. */
static float
rng_int(int64_t lo, int64_t hi)
{
	return (float) (lo + (int64_t) (rng_next() % (uint64_t) (hi - lo + 1)));
}

/* Draws the prototype rows of a case. */
static void
make_protos(int dims)
{
	for (int p = 0; p < INT_PROTOS; p++)
	{
		for (int d = 0; d < dims; d++)
			protos[p][d] = rng_int(-20, 20);
		protos[p][0] = (float) (3 * p - 6);	/* the prototypes differ */
	}
}

/* Column d's lowest and highest values for the ranged kinds. */
static bool
kind_bounds(IntKind kind, int d, int dims, int64_t *lo, int64_t *hi)
{
	switch (kind)
	{
		case IK_NEGATIVE:
			*lo = -200, *hi = -1;
			return true;
		case IK_INT8:
			*lo = -128, *hi = 127;
			return true;
		case IK_INT8_WIDE:
			*lo = -128, *hi = 128;
			return true;
		case IK_SHIFTED16:
			*lo = 30000, *hi = 30255;
			return true;
		case IK_INT16:
			*lo = -32768, *hi = 32767;
			return true;
		case IK_RANGE128:
			*lo = 0, *hi = 128;
			return true;
		case IK_RANGE128_LAST127:
			*lo = 0, *hi = d == dims - 1 ? 127 : 128;
			return true;
		case IK_RANGE255:
			*lo = 0, *hi = 255;
			return true;
		case IK_RANGE126:
			*lo = 0, *hi = 126;
			return true;
		case IK_RANGE127:
			*lo = 0, *hi = 127;
			return true;
		default:
			return false;
	}
}

/*
 * rows x dims data of the case's kind; the caller frees it.  In the
 * candidates (cands), rows 0 and 1 of the ranged kinds hold every
 * column's lowest and highest value, so that the ranges are exactly the
 * kind's.
 */
static float *
int_data(const IntCase *t, int64_t rows, bool cands)
{
	const int	dims = t->dims;
	float	   *x = xmalloc(sizeof(float) * (size_t) rows * dims);

	for (int64_t i = 0; i < rows; i++)
	{
		float	   *r = x + i * dims;
		const int	p = (int) (rng_next() % (t->kind == IK_TWO ? 2 : INT_PROTOS));

		for (int d = 0; d < dims; d++)
		{
			int64_t		lo = 0,
						hi = 0;

			switch (t->kind)
			{
				case IK_EQUAL:
					r[d] = protos[0][d];
					break;
				case IK_PROTOS:
				case IK_TWO:
					r[d] = protos[p][d];
					break;
				case IK_BINARY:
					r[d] = rng_unit() < t->density ? 1.0f : 0.0f;
					break;
				case IK_INT8:
				case IK_INT8_WIDE:
					kind_bounds(t->kind, d, dims, &lo, &hi);
					r[d] = (float) (rng_next() & 1 ? hi : lo);
					break;
				case IK_HALF:
					r[d] = rng_int(0, 19) + (d == 0 ? 0.5f : 0.0f);
					break;
				case IK_GRID:
					r[d] = rng_int(1, 13);
					break;
				default:
					kind_bounds(t->kind, d, dims, &lo, &hi);
					r[d] = rng_int(lo, hi);
					break;
			}
		}
	}
	for (int d = 0; cands && rows >= 2 && d < dims; d++)
	{
		int64_t		lo,
					hi;

		if (kind_bounds(t->kind, d, dims, &lo, &hi))
		{
			x[d] = (float) lo;
			x[dims + d] = (float) hi;
		}
	}
	return x;
}

/*
 * Whether the integer path takes this call (the rule in the opening
 * comment), written from the values: integers, magnitudes, each
 * dimension's range over queries and candidates together, the sum of the
 * squared ranges.
 */
static bool
int_eligible(const OdpMatrix *q, const OdpMatrix *c, OdpMetric metric, int k)
{
	const OdpMatrix *both[2] = {q, c};
	int64_t		sum = 0;

	if (metric != ODP_METRIC_EUCLIDEAN && metric != ODP_METRIC_SQEUCLIDEAN &&
		metric != ODP_METRIC_MANHATTAN)
		return false;
	if (k > INT_MAX_K || c->dims > INT_MAX_DIMS)
		return false;
	for (int d = 0; d < c->dims; d++)
	{
		double		lo = INFINITY;
		double		hi = -INFINITY;

		for (int m = 0; m < 2; m++)
			for (int64_t i = 0; i < both[m]->rows; i++)
			{
				const double v = both[m]->data[i * both[m]->dims + d];

				if (v != floor(v) || fabs(v) > INT_MAX_ABS)
					return false;
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		if (hi - lo > (metric == ODP_METRIC_MANHATTAN ? 1 : INT_MAX_RANGE))
			return false;
		sum += (int64_t) ((hi - lo) * (hi - lo));
	}
	return sum < (metric == ODP_METRIC_SQEUCLIDEAN ? INT_SQ_LIMIT : INT_EUCLID_LIMIT);
}

/* Whether the integer path's counter and threshold are there to check. */
static bool
int_hooks(void)
{
	return &odp_gpu_knn_int_searches != NULL && &odp_gpu_knn_int_min_pairs != NULL;
}

/*
 * Sets the integer path's threshold to 0, so that it takes calls of any
 * size; returns the value restore_int_path puts back.
 */
static int64_t
force_int_path(void)
{
	int64_t		saved = 0;

	if (&odp_gpu_knn_int_all_lists != NULL)
		odp_gpu_knn_int_all_lists = 1;
	if (&odp_gpu_knn_int_min_pairs != NULL)
	{
		saved = odp_gpu_knn_int_min_pairs;
		odp_gpu_knn_int_min_pairs = 0;
	}
	return saved;
}

static void
restore_int_path(int64_t saved)
{
	if (&odp_gpu_knn_int_all_lists != NULL)
		odp_gpu_knn_int_all_lists = 0;
	if (&odp_gpu_knn_int_min_pairs != NULL)
		odp_gpu_knn_int_min_pairs = saved;
}

/*
 * Runs odp_compute_knn on dev; ODP_OK or the status (its message printed).
 * The float32 rows' distances come back widened; dist gets them narrowed
 * back, exactly.
 */
static OdpStatus
int_knn_run(OdpDevice dev, const OdpMatrix *q, const OdpMatrix *c, OdpMetric metric,
			int k, bool self_join, float *dist, int64_t *index)
{
	OdpContext	ctx = make_ctx(dev);
	double	   *wide = xmalloc(sizeof(double) * (size_t) q->rows * (size_t) k);
	OdpStatus	st = odp_compute_knn(&ctx, q, c, metric, k, self_join, wide, index);

	for (int64_t i = 0; st == ODP_OK && i < q->rows * k; i++)
		dist[i] = (float) wide[i];
	free(wide);
	if (st != ODP_OK)
		printf("# knn %s: %s: %s\n", dev == ODP_DEVICE_GPU ? "gpu" : "cpu",
			   odp_status_name(st), ctx.message);
	return st;
}

/* Entries of two k-NN results that differ in distance bits or index. */
static int64_t
knn_differences(const float *da, const int64_t *ia, const float *db,
				const int64_t *ib, int64_t n)
{
	int64_t		bad = 0;

	for (int64_t t = 0; t < n; t++)
		if (ia[t] != ib[t] || memcmp(&da[t], &db[t], sizeof(float)) != 0)
			bad++;
	return bad;
}

/* Everything odp_compute_outlier_scores and odp_compute_top_outliers return. */
typedef struct IntOutliers
{
	OdpStatus	status;
	double	   *scores;			/* every row's */
	int64_t		bf_order[INT_TOP_N];	/* brute force's top n */
	double		bf_scores[INT_TOP_N];
	int64_t		bf_count;
	int64_t		auto_order[INT_TOP_N];	/* auto's top n */
	double		auto_scores[INT_TOP_N];
	int64_t		auto_count;
	OdpOutlierMethod auto_method;	/* the method auto ran */
	int64_t		scores_searches;	/* integer searches of each call */
	int64_t		bf_searches;
} IntOutliers;

/* The scores and top n (both methods) of m on dev. */
static void
int_outliers_run(OdpDevice dev, const OdpMatrix *m, OdpMetric metric, int k,
				 IntOutliers *r)
{
	OdpContext	ctx = make_ctx(dev);
	int64_t		before;

	before = gpu_counter(&odp_gpu_knn_int_searches);
	r->status = odp_compute_outlier_scores(&ctx, m, metric, k, r->scores);
	r->scores_searches = gpu_counter(&odp_gpu_knn_int_searches) - before;
	if (r->status == ODP_OK)
	{
		ctx = make_ctx(dev);
		before = gpu_counter(&odp_gpu_knn_int_searches);
		r->status = odp_compute_top_outliers(&ctx, m, metric, k, INT_TOP_N,
											 ODP_METHOD_BRUTEFORCE, 0, r->bf_order,
											 r->bf_scores, &r->bf_count, NULL, NULL, NULL);
		r->bf_searches = gpu_counter(&odp_gpu_knn_int_searches) - before;
	}
	if (r->status == ODP_OK)
	{
		OdpTopOutliersStats st;

		ctx = make_ctx(dev);
		r->status = odp_compute_top_outliers(&ctx, m, metric, k, INT_TOP_N,
											 ODP_METHOD_AUTO, 0, r->auto_order,
											 r->auto_scores, &r->auto_count, NULL, NULL, &st);
		r->auto_method = st.method;
	}
	if (r->status != ODP_OK)
		printf("# outliers %s: %s: %s\n", dev == ODP_DEVICE_GPU ? "gpu" : "cpu",
			   odp_status_name(r->status), ctx.message);
}

/* Whether two top-n lists are the same rows, order and score bits. */
static bool
same_top(const int64_t *oa, const double *sa, int64_t na,
		 const int64_t *ob, const double *sb, int64_t nb)
{
	return na == nb && memcmp(oa, ob, sizeof(int64_t) * (size_t) na) == 0 &&
		memcmp(sa, sb, sizeof(double) * (size_t) na) == 0;
}

/* Rows whose scores differ in their bits. */
static int64_t
score_differences(const double *a, const double *b, int64_t rows)
{
	int64_t		bad = 0;

	for (int64_t i = 0; i < rows; i++)
		if (memcmp(&a[i], &b[i], sizeof(double)) != 0)
			bad++;
	return bad;
}

/*
 * The outlier part of a self-join case, for one metric: the reference
 * scores come from the reference k-NN lists (rd, ascending: the sum of
 * the k smallest distances); the CPU must give them, bit for bit, and
 * rank them as odp_top_n does; the GPU must give the CPU's.
 */
static void
int_outliers_case(const IntCase *t, const OdpMatrix *m, OdpMetric metric,
				  bool eligible, const float *rd, const char *name)
{
	const int64_t rows = m->rows;
	const int	k = t->k;
	double	   *ref = xmalloc(sizeof(double) * (size_t) rows);
	int64_t		ref_order[INT_TOP_N];
	double		ref_top[INT_TOP_N];
	int64_t		ref_count;
	IntOutliers cpu = {0};
	IntOutliers gpu = {0};

	for (int64_t i = 0; i < rows; i++)
		ref[i] = odp_sum_ascending(rd + i * k, k);
	ref_count = odp_top_n(ref, NULL, rows, INT_TOP_N, ref_order);
	for (int64_t i = 0; i < ref_count; i++)
		ref_top[i] = ref[ref_order[i]];

	cpu.scores = xmalloc(sizeof(double) * (size_t) rows);
	int_outliers_run(ODP_DEVICE_CPU, m, metric, k, &cpu);
	if (cpu.status == ODP_OK)
	{
		const int64_t bad = score_differences(cpu.scores, ref, rows);

		check(bad == 0, "outlier scores cpu %s: %lld of %lld differ from the reference",
			  name, (long long) bad, (long long) rows);
		check(same_top(cpu.bf_order, cpu.bf_scores, cpu.bf_count, ref_order, ref_top, ref_count) &&
			  same_top(cpu.auto_order, cpu.auto_scores, cpu.auto_count, ref_order, ref_top, ref_count),
			  "top outliers cpu %s: brute force and auto give the reference's %lld rows and scores",
			  name, (long long) ref_count);
	}
	else
		check(false, "outliers cpu %s: %s", name, odp_status_name(cpu.status));

	if (gpu_ok && cpu.status == ODP_OK)
	{
		const int64_t saved = force_int_path();

		gpu.scores = xmalloc(sizeof(double) * (size_t) rows);
		int_outliers_run(ODP_DEVICE_GPU, m, metric, k, &gpu);
		restore_int_path(saved);
		if (gpu.status == ODP_OK)
		{
			const int64_t bad = score_differences(gpu.scores, cpu.scores, rows);

			check(bad == 0, "outlier scores gpu %s: %lld of %lld differ from the cpu's",
				  name, (long long) bad, (long long) rows);
			check(same_top(gpu.bf_order, gpu.bf_scores, gpu.bf_count,
						   cpu.bf_order, cpu.bf_scores, cpu.bf_count),
				  "top outliers gpu %s, brute force: the cpu's rows, order and scores", name);
			check(same_top(gpu.auto_order, gpu.auto_scores, gpu.auto_count,
						   cpu.auto_order, cpu.auto_scores, cpu.auto_count),
				  "top outliers gpu %s, auto: the cpu's rows, order and scores", name);
			if (int_hooks())
				check(eligible ? gpu.scores_searches > 0 && gpu.bf_searches > 0
					  : gpu.scores_searches == 0 && gpu.bf_searches == 0,
					  "outliers gpu %s: %s (integer searches: scores %lld, brute force %lld)",
					  name, eligible ? "the integer path ran" : "the integer path did not run",
					  (long long) gpu.scores_searches, (long long) gpu.bf_searches);
		}
		else
			check(false, "outliers gpu %s: %s", name, odp_status_name(gpu.status));
		free(gpu.scores);
	}
	free(cpu.scores);
	free(ref);
}

/* Whether every value of the n floats is 0 or 1. */
static bool
all_binary(const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (x[i] != 0.0f && x[i] != 1.0f)
			return false;
	return true;
}

/*
 * The edges of the CPU's bits: 0/1 rows with one other value (2, 0.5, -1)
 * among the candidates or the queries take the float path; -0 counts as
 * 0.  Each against the reference.
 */
static void
bits_edges(void)
{
	const int64_t rows = 900;
	const int	dims = 70;
	const int	k = 7;			/* 40 queries, k each: the arrays below */
	static const struct
	{
		bool		in_queries;	/* the odd value among the queries, else the candidates */
		float		value;
		bool		bits;		/* expected: compared as bits */
		const char *what;
	}			edges[] = {
		{false, 2.0f, false, "a 2 among the candidates"},
		{false, 0.5f, false, "a 0.5 among the candidates"},
		{true, -1.0f, false, "a -1 among the queries"},
		{false, -0.0f, true, "-0 among the candidates"},
		{true, -0.0f, true, "-0 among the queries"},
	};

	for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
		for (int m = 0; m < ODP_METRIC_COUNT; m++)
		{
			const OdpMetric metric = (OdpMetric) m;
			float	   *cx;
			float	   *qx;
			OdpMatrix	c = {0};
			OdpMatrix	q = {0};
			float		rd[40 * 7];
			int64_t		ri[40 * 7];
			float		cd[40 * 7];
			int64_t		ci[40 * 7];
			int64_t		before = odp_cpu_knn_bits_runs;
			OdpStatus	st;
			int64_t		bad;

			if (!((M_BITS >> m) & 1))
				continue;
			cx = xmalloc(sizeof(float) * (size_t) rows * dims);
			qx = xmalloc(sizeof(float) * (size_t) 40 * dims);
			c.data = cx;
			c.rows = rows;
			c.dims = dims;
			q.data = qx;
			q.rows = 40;
			q.dims = dims;
			for (int64_t i = 0; i < rows * dims; i++)
				cx[i] = (float) (rng_next() % 3 == 0);
			for (int64_t i = 0; i < 40 * dims; i++)
				qx[i] = (float) (rng_next() % 3 == 0);
			/* the odd value, at a zero, in a few rows */
			for (int r = 3; r < 40; r += 11)
			{
				float	   *row = (edges[e].in_queries ? qx : cx) + (int64_t) r * dims;

				for (int d = 0; d < dims; d++)
					if (row[d] == 0.0f)
					{
						row[d] = edges[e].value;
						break;
					}
			}
			reference_knn(&q, &c, metric, k, false, rd, ri);
			st = int_knn_run(ODP_DEVICE_CPU, &q, &c, metric, k, false, cd, ci);
			bad = st == ODP_OK ? knn_differences(cd, ci, rd, ri, 40 * k) : -1;
			check(bad == 0 && edges[e].bits == (odp_cpu_knn_bits_runs > before),
				  "knn cpu, 0/1 rows with %s, %s: %lld entries differ from the reference, %s",
				  edges[e].what, odp_metric_name(metric), (long long) bad,
				  odp_cpu_knn_bits_runs > before ? "compared as bits" : "the float path");
			free(cx);
			free(qx);
		}
}

/* One case, every metric of its mask. */
static void
int_case(const IntCase *t)
{
	const bool	self_join = t->nq == 0;
	float	   *cx;
	float	   *qx;
	OdpMatrix	c = {0};
	OdpMatrix	q = {0};
	float	   *rd;
	int64_t    *ri;
	float	   *cd;
	int64_t    *ci;
	float	   *gd;
	int64_t    *gi;
	size_t		n;

	make_protos(t->dims);
	cx = int_data(t, t->nc, true);
	qx = self_join ? cx : int_data(t, t->nq, false);
	c.data = cx;
	c.rows = t->nc;
	c.dims = t->dims;
	q.data = qx;
	q.rows = self_join ? t->nc : t->nq;
	q.dims = t->dims;
	n = (size_t) q.rows * t->k;
	rd = xmalloc(sizeof(float) * n);
	ri = xmalloc(sizeof(int64_t) * n);
	cd = xmalloc(sizeof(float) * n);
	ci = xmalloc(sizeof(int64_t) * n);
	gd = xmalloc(sizeof(float) * n);
	gi = xmalloc(sizeof(int64_t) * n);

	for (int m = 0; m < ODP_METRIC_COUNT; m++)
	{
		const OdpMetric metric = (OdpMetric) m;
		const bool	want = (t->eligible >> m) & 1;
		bool		eligible;
		char		name[200];
		OdpStatus	st;
		int64_t		bad;

		if (!((t->metrics >> m) & 1))
			continue;
		snprintf(name, sizeof(name), "%s %s %lld x %lld x %d k=%d%s",
				 t->what, odp_metric_name(metric), (long long) q.rows,
				 (long long) c.rows, t->dims, t->k, self_join ? " self" : "");
		eligible = int_eligible(&q, &c, metric, t->k);
		check(eligible == want, "integer %s: the data %s the integer path's conditions",
			  name, eligible ? "meets" : "fails");

		/* the entries that differ; -1 where the call failed */
		reference_knn(&q, &c, metric, t->k, self_join, rd, ri);
		{
			const int64_t bits_before = odp_cpu_knn_bits_runs;
			const bool	bits_want = ((M_BITS >> m) & 1) && q.rows >= odp_cpu_knn_bits_min_queries &&
				all_binary(cx, (size_t) c.rows * c.dims) &&
				all_binary(qx, (size_t) q.rows * q.dims);

			st = int_knn_run(ODP_DEVICE_CPU, &q, &c, metric, t->k, self_join, cd, ci);
			check(bits_want == (odp_cpu_knn_bits_runs > bits_before),
				  "integer knn cpu %s: %s", name,
				  bits_want ? "0/1 rows compared as bits" : "no rows compared as bits");
		}
		bad = st == ODP_OK ? knn_differences(cd, ci, rd, ri, (int64_t) n) : -1;
		check(bad == 0, "integer knn cpu %s: %lld entries differ from the reference",
			  name, (long long) bad);
		if (gpu_ok && st == ODP_OK)
		{
			const int64_t before = gpu_counter(&odp_gpu_knn_int_searches);
			const int64_t saved = force_int_path();
			int64_t		searches;

			st = int_knn_run(ODP_DEVICE_GPU, &q, &c, metric, t->k, self_join, gd, gi);
			restore_int_path(saved);
			searches = gpu_counter(&odp_gpu_knn_int_searches) - before;
			bad = st == ODP_OK ? knn_differences(gd, gi, cd, ci, (int64_t) n) : -1;
			check(bad == 0, "integer knn gpu %s: %lld entries differ from the cpu's",
				  name, (long long) bad);
			if (int_hooks())
			{
				check(want ? searches > 0 : searches == 0,
					  "integer knn gpu %s: %s (%lld integer searches)", name,
					  want ? "the integer path ran" : "the integer path did not run",
					  (long long) searches);
				/* the other paths, at the default threshold, agree too */
				st = int_knn_run(ODP_DEVICE_GPU, &q, &c, metric, t->k, self_join, gd, gi);
				bad = st == ODP_OK ? knn_differences(gd, gi, cd, ci, (int64_t) n) : -1;
				check(bad == 0, "integer knn gpu %s, default threshold: %lld entries differ "
					  "from the cpu's", name, (long long) bad);
			}
		}
		if (self_join)
			int_outliers_case(t, &c, metric, want, rd, name);
	}
	if (!self_join)
		free(qx);
	free(cx);
	free(rd);
	free(ri);
	free(cd);
	free(ci);
	free(gd);
	free(gi);
}

/*
 * The larger GPU case: BIG_ROWS rows of BIG_DIMS 0/1 values, a 1 with
 * probability 0.1 (0.9 in every 9973rd row, the planted outliers).  A
 * row's bits in one word: the squared distance of two rows is the count
 * of their differing bits, so the reference of one row against all is a
 * pass of popcounts.  From 262,144 rows on, auto's top outliers take the
 * GPU's filter-only brute force where the filter or the integer path
 * applies, SolvingSet where neither does: here the integer path, under
 * each metric (manhattan too: every column spans 1).
 */
#define BIG_ROWS		300000
#define BIG_DIMS		39
#define BIG_K			10
#define BIG_QUERIES		1000	/* rows 0 .. BIG_QUERIES - 1 as other queries */
#define BIG_SAMPLE		1000	/* rows whose lists and scores are checked */

/* A squared distance h as odp_distance gives it (exact in float32). */
static float
big_dist(OdpMetric metric, int h)
{
	return metric == ODP_METRIC_EUCLIDEAN ? sqrtf((float) h) : (float) h;
}

/*
 * The k nearest rows to row a (not a itself when self_join), by
 * (distance, index), and their distances: the rows at the smallest
 * distances, in index order within one distance.
 */
static void
big_reference(const uint64_t *bits, int64_t rows, int64_t a, bool self_join,
			  OdpMetric metric, int k, float *dist, int64_t *index)
{
	int64_t		hist[BIG_DIMS + 1] = {0};
	int64_t		taken[BIG_DIMS + 1] = {0};
	int64_t		first[BIG_DIMS + 1];
	int64_t		need = k;
	int			last = 0;

	for (int64_t b = 0; b < rows; b++)
		if (!self_join || b != a)
			hist[__builtin_popcountll(bits[a] ^ bits[b])]++;
	/* the distances the k nearest reach, and where each one's rows start */
	for (int h = 0; h <= BIG_DIMS; h++)
	{
		first[h] = k - need;
		if (need > 0)
			last = h;
		need -= hist[h] < need ? hist[h] : need;
	}
	for (int64_t b = 0; b < rows; b++)
	{
		int			h;

		if (self_join && b == a)
			continue;
		h = __builtin_popcountll(bits[a] ^ bits[b]);
		if (h > last)
			continue;
		if (first[h] + taken[h] < (h < last ? first[h + 1] : k))
		{
			dist[first[h] + taken[h]] = big_dist(metric, h);
			index[first[h] + taken[h]] = b;
			taken[h]++;
		}
	}
}

/* The larger case for one metric. */
static void
big_metric(const float *x, const uint64_t *bits, OdpMetric metric)
{
	const char *mn = odp_metric_name(metric);
	OdpMatrix	all = {x, BIG_ROWS, BIG_DIMS, NULL};
	OdpMatrix	some = {x, BIG_QUERIES, BIG_DIMS, NULL};
	float	   *sd = xmalloc(sizeof(float) * BIG_ROWS * BIG_K);
	int64_t    *si = xmalloc(sizeof(int64_t) * BIG_ROWS * BIG_K);
	float	   *qd = xmalloc(sizeof(float) * BIG_QUERIES * BIG_K);
	int64_t    *qi = xmalloc(sizeof(int64_t) * BIG_QUERIES * BIG_K);
	float		rd[BIG_K];
	int64_t		ri[BIG_K];
	IntOutliers gpu = {0};
	int64_t		before = gpu_counter(&odp_gpu_knn_int_searches);
	int64_t		bad;
	int64_t		order[INT_TOP_N];
	int64_t		count;
	OdpStatus	st;

	gpu.scores = xmalloc(sizeof(double) * BIG_ROWS);
	st = int_knn_run(ODP_DEVICE_GPU, &all, &all, metric, BIG_K, true, sd, si);
	if (st == ODP_OK)
		st = int_knn_run(ODP_DEVICE_GPU, &some, &all, metric, BIG_K, false, qd, qi);
	if (st == ODP_OK)
	{
		int_outliers_run(ODP_DEVICE_GPU, &all, metric, BIG_K, &gpu);
		st = gpu.status;
	}
	check(st == ODP_OK, "integer gpu 0/1 %s %d x %d k=%d: k-NN (self join and %d queries), "
		  "scores, top %d by brute force and auto ran", mn, BIG_ROWS, BIG_DIMS, BIG_K,
		  BIG_QUERIES, INT_TOP_N);
	if (st != ODP_OK)
		goto done;
	if (&odp_gpu_knn_int_searches != NULL)
		check(odp_gpu_knn_int_searches > before,
			  "integer gpu 0/1 %s: the integer path ran (%lld integer searches)",
			  mn, (long long) (odp_gpu_knn_int_searches - before));

	/* a sample of rows (and the top ones) against the reference */
	bad = 0;
	for (int64_t s = 0; s < BIG_SAMPLE + INT_TOP_N; s++)
	{
		const int64_t a = s < BIG_SAMPLE ? (s * 7919 + 13) % BIG_ROWS
			: gpu.bf_order[s - BIG_SAMPLE];
		double		score;

		big_reference(bits, BIG_ROWS, a, true, metric, BIG_K, rd, ri);
		score = odp_sum_ascending(rd, BIG_K);
		if (knn_differences(sd + a * BIG_K, si + a * BIG_K, rd, ri, BIG_K) != 0 ||
			memcmp(&score, &gpu.scores[a], sizeof(double)) != 0)
			bad++;
	}
	check(bad == 0, "integer gpu 0/1 %s self join: %lld of %d sampled rows' lists or scores "
		  "differ from the reference", mn, (long long) bad, BIG_SAMPLE + INT_TOP_N);
	bad = 0;
	for (int64_t a = 0; a < BIG_QUERIES; a++)
	{
		big_reference(bits, BIG_ROWS, a, false, metric, BIG_K, rd, ri);
		bad += knn_differences(qd + a * BIG_K, qi + a * BIG_K, rd, ri, BIG_K) != 0;
	}
	check(bad == 0, "integer gpu 0/1 %s, %d queries: %lld lists differ from the reference",
		  mn, BIG_QUERIES, (long long) bad);

	/* every score is the sum of its own list; the top n rank them */
	bad = 0;
	for (int64_t a = 0; a < BIG_ROWS; a++)
	{
		const double s = odp_sum_ascending(sd + a * BIG_K, BIG_K);

		bad += memcmp(&s, &gpu.scores[a], sizeof(double)) != 0;
	}
	check(bad == 0, "integer gpu 0/1 %s: %lld of %d scores differ from the sums of their k-NN lists",
		  mn, (long long) bad, BIG_ROWS);
	count = odp_top_n(gpu.scores, NULL, BIG_ROWS, INT_TOP_N, order);
	bad = count != gpu.bf_count || memcmp(order, gpu.bf_order, sizeof(int64_t) * (size_t) count) != 0;
	for (int64_t i = 0; i < gpu.bf_count && !bad; i++)
		bad = memcmp(&gpu.bf_scores[i], &gpu.scores[gpu.bf_order[i]], sizeof(double)) != 0;
	check(!bad, "integer gpu 0/1 %s: brute force's top %d are the ranking of every row's score",
		  mn, INT_TOP_N);
	check(same_top(gpu.auto_order, gpu.auto_scores, gpu.auto_count,
				   gpu.bf_order, gpu.bf_scores, gpu.bf_count),
		  "integer gpu 0/1 %s: auto's top %d are brute force's (rows, order, scores)", mn, INT_TOP_N);
	check(gpu.auto_method == ODP_METHOD_BRUTEFORCE,
		  "integer gpu 0/1 %s: auto ran brute force on the integer path (ran %s)", mn,
		  gpu.auto_method == ODP_METHOD_BRUTEFORCE ? "brute force" : "SolvingSet");
done:
	free(sd);
	free(si);
	free(qd);
	free(qi);
	free(gpu.scores);
}

/* The larger case, on the GPU only (the CPU would take minutes). */
static void
big_case(void)
{
	float	   *x = xmalloc(sizeof(float) * (size_t) BIG_ROWS * BIG_DIMS);
	uint64_t   *bits = xmalloc(sizeof(uint64_t) * BIG_ROWS);

	for (int64_t i = 0; i < BIG_ROWS; i++)
	{
		const float density = i % 9973 == 5 ? 0.9f : 0.1f;

		bits[i] = 0;
		for (int d = 0; d < BIG_DIMS; d++)
		{
			const bool	one = rng_unit() < density;

			x[i * BIG_DIMS + d] = one ? 1.0f : 0.0f;
			bits[i] |= (uint64_t) one << d;
		}
	}
	big_metric(x, bits, ODP_METRIC_EUCLIDEAN);
	big_metric(x, bits, ODP_METRIC_SQEUCLIDEAN);
	big_metric(x, bits, ODP_METRIC_MANHATTAN);
	free(x);
	free(bits);
}

/*
 * Manhattan on integers that span more than 1 from 262,144 rows on: auto
 * tries the filter-only brute force, which neither the filter nor the
 * integer path takes, so it gives up and SolvingSet runs; its top rows
 * must be brute force's (GPU only: brute force on the CPU would take
 * minutes).
 */
static void
big_manhattan_gives_up(void)
{
	const int64_t rows = 280000;
	const int	dims = 4;
	float	   *x = xmalloc(sizeof(float) * (size_t) rows * dims);
	OdpMatrix	m = {x, rows, dims, NULL};
	IntOutliers gpu = {0};

	for (int64_t i = 0; i < rows * dims; i++)
		x[i] = rng_int(1, 13);
	gpu.scores = xmalloc(sizeof(double) * (size_t) rows);
	int_outliers_run(ODP_DEVICE_GPU, &m, ODP_METRIC_MANHATTAN, BIG_K, &gpu);
	check(gpu.status == ODP_OK, "integer gpu manhattan 1 .. 13, %lld x %d k=%d: scores, "
		  "brute force and auto ran", (long long) rows, dims, BIG_K);
	if (gpu.status == ODP_OK)
	{
		check(gpu.auto_method == ODP_METHOD_SOLVINGSET,
			  "integer gpu manhattan 1 .. 13: auto gave the filter-only run up and ran SolvingSet");
		check(same_top(gpu.auto_order, gpu.auto_scores, gpu.auto_count,
					   gpu.bf_order, gpu.bf_scores, gpu.bf_count),
			  "integer gpu manhattan 1 .. 13: auto's top %d are brute force's (rows, order, scores)",
			  INT_TOP_N);
	}
	free(gpu.scores);
	free(x);
}

/* Every integer test. */
void
run_integer_tests(void)
{
	/*
	 * 2^24, the sqeuclidean bound, is out of reach: 256 dimensions of
	 * range 255 sum to 16,646,400; the largest case has them (eligible).
	 */
	static const IntCase cases[] = {
		{"all rows equal", IK_EQUAL, 0, 0, 1000, 10, 10, M_BOTH, M_BOTH},
		{"all rows equal", IK_EQUAL, 0, 7, 3001, 3, 64, M_BOTH, M_BOTH},
		{"5 rows, 400 copies each", IK_PROTOS, 0, 0, 2001, 16, 50, M_BOTH, M_BOTH},
		{"5 rows, copies", IK_PROTOS, 0, 130, 4099, 17, 64, M_BOTH, M_BOTH},
		{"two distinct rows", IK_TWO, 0, 0, 1201, 39, 64, M_BOTH, M_BOTH},
		{"0/1 at 0.01", IK_BINARY, 0.01, 0, 1001, 39, 10, M_BOTH, M_BOTH},
		{"0/1 at 0.1", IK_BINARY, 0.1, 0, 1001, 39, 10, M_BOTH, M_BOTH},
		{"0/1 at 0.5", IK_BINARY, 0.5, 0, 1001, 39, 10, M_BOTH, M_BOTH},
		{"0/1 at 0.9", IK_BINARY, 0.9, 0, 1001, 39, 10, M_BOTH, M_BOTH},
		{"0/1 at 0.99", IK_BINARY, 0.99, 0, 1001, 39, 10, M_BOTH, M_BOTH},
		{"0/1 at 0.5, few queries", IK_BINARY, 0.5, 7, 4099, 39, 64, M_BOTH, M_BOTH},
		{"0/1 at 0.5, many queries", IK_BINARY, 0.5, 3001, 1001, 17, 10, M_BOTH, M_BOTH},
		{"0/1 at 0.1, whole blocks", IK_BINARY, 0.1, 128, 2048, 16, 10, M_BOTH, M_BOTH},
		{"0/1 at 0.5, other metrics", IK_BINARY, 0.5, 0, 1001, 39, 10, M_OTHER & ~(1 << ODP_METRIC_COSINE), M_MAN},
		{"0/1 at 0.3, manhattan, few queries", IK_BINARY, 0.3, 7, 4099, 39, 64, M_MAN, M_MAN},
		{"0/1 at 0.05, manhattan, D = 256", IK_BINARY, 0.05, 0, 1300, 256, 50, M_MAN | M_BOTH, M_MAN | M_BOTH},
		{"0/1 at 0.5, D = 1", IK_BINARY, 0.5, 0, 700, 1, 10, M_BITS, M_MAN | M_BOTH},
		{"0/1 at 0.5, D = 64", IK_BINARY, 0.5, 130, 1001, 64, 10, M_BITS, M_MAN | M_BOTH},
		{"0/1 at 0.3, D = 65", IK_BINARY, 0.3, 0, 1001, 65, 10, M_BITS, M_MAN | M_BOTH},
		{"0/1 at 0.2, D = 130", IK_BINARY, 0.2, 130, 1001, 130, 20, M_BITS, M_MAN | M_BOTH},
		{"range 126, D = 4: norms fold", IK_RANGE126, 0, 130, 2001, 4, 10, M_BOTH | M_MAN, M_BOTH},
		{"range 126, D = 5: norms too large to fold", IK_RANGE126, 0, 0, 1001, 5, 10, M_BOTH, M_BOTH},
		{"range 127: values too large to fold", IK_RANGE127, 0, 0, 1001, 3, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 254: the last that folds", IK_GRID, 0, 130, 1001, 254, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 255", IK_GRID, 0, 0, 1001, 255, 10, M_BOTH, M_BOTH},
		{"negative integers", IK_NEGATIVE, 0, 0, 1000, 10, 10, M_BOTH, M_BOTH},
		{"int8 edges, D = 64", IK_INT8, 0, 0, 700, 64, 10, M_BOTH, M_BOTH},
		{"int8 edges, D = 65", IK_INT8, 0, 100, 900, 65, 10, M_BOTH, M_SQ},
		{"range 256", IK_INT8_WIDE, 0, 100, 900, 16, 10, M_BOTH, 0},
		{"30000 .. 30255", IK_SHIFTED16, 0, 7, 3001, 16, 50, M_BOTH, M_BOTH},
		{"30000 .. 30255", IK_SHIFTED16, 0, 0, 1000, 3, 10, M_BOTH, M_BOTH},
		{"int16", IK_INT16, 0, 130, 1001, 3, 10, M_BOTH, 0},
		{"a column of halves", IK_HALF, 0, 0, 1000, 10, 10, M_BOTH, 0},
		{"sum of range^2 2^22 - 255", IK_RANGE128_LAST127, 0, 50, 700, 256, 10, M_BOTH, M_BOTH},
		{"sum of range^2 2^22", IK_RANGE128, 0, 50, 700, 256, 10, M_BOTH, M_SQ},
		{"range 255, D = 256", IK_RANGE255, 0, 50, 700, 256, 10, M_BOTH, M_SQ},
		{"D = 257", IK_GRID, 0, 50, 700, 257, 10, M_BOTH, 0},
		{"grid 1 .. 13, D = 1", IK_GRID, 0, 0, 1001, 1, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 3", IK_GRID, 0, 130, 2001, 3, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 10", IK_GRID, 0, 130, 2001, 10, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 16", IK_GRID, 0, 130, 2001, 16, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 17", IK_GRID, 0, 0, 1001, 17, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 39", IK_GRID, 0, 130, 2001, 39, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 64", IK_GRID, 0, 0, 700, 64, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, D = 200", IK_GRID, 0, 130, 2001, 200, 10, M_BOTH, M_BOTH},
		{"grid 1 .. 13, k = 1", IK_GRID, 0, 0, 1201, 10, 1, M_BOTH, M_BOTH},
		{"grid 1 .. 13, k = 50", IK_GRID, 0, 0, 1201, 10, 50, M_BOTH, M_BOTH},
		{"grid 1 .. 13, k = 64", IK_GRID, 0, 0, 1201, 10, 64, M_BOTH, M_BOTH},
		{"grid 1 .. 13, k = 65", IK_GRID, 0, 0, 1201, 10, 65, M_BOTH, 0},
		{"grid 1 .. 13, other metrics", IK_GRID, 0, 0, 1000, 10, 10, M_OTHER, 0},
	};

	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++)
		int_case(&cases[t]);
	bits_edges();
	if (gpu_ok)
	{
		big_case();
		big_manhattan_gives_up();
	}
	else
		printf("integer GPU tests skipped: %s\n", gpu_reason);
}
