/*-------------------------------------------------------------------------
 *
 * test_precision.c
 *	  Engine tests of float64 rows (OdpMatrix.data64): k-NN, outlier
 *	  scores and top-n outliers (brute force and SolvingSet) against a
 *	  naive float64 reference written here, bit for bit, on the CPU and,
 *	  where a GPU is usable, on the GPU (and GPU against CPU, solving set
 *	  included); data whose magnitudes float32 cannot tell apart (epoch
 *	  seconds with cent amounts, projected metres with centimetres,
 *	  clusters at a 10^6 offset, magnitudes near 10^18, near-parallel
 *	  vectors under cosine), the same data rounded to float32 giving other
 *	  answers, and the argument checks of float64 rows.
 *
 * The reference computes each distance with plain double loops in index
 * order (the engine's programs are built with -ffp-contract=off, so no
 * fused multiply-add), sorts by (distance, index) and sums the k smallest
 * ascending: the definitions odp_distance.h states, written afresh.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_precision.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_distributed.h"
#include "include/odp_knn.h"
#include "include/odp_outliers.h"
#include "knn/knn_cpu_bits.h"
#include "knn/knn_internal.h"
#include "outliers/solvingset_internal.h"
#include "test_util.h"

#define PREC_K		5
#define PREC_N		5
#define PREC_BATCH	40			/* SolvingSet batch: many batches, pruning */

/* Whether GPU calls spread over the device list {0, 0} (a split on one GPU). */
static bool prec_split = false;

/* A context for dev: on the GPU, split over {0, 0} while prec_split is set. */
static OdpContext
prec_ctx(OdpDevice dev)
{
	OdpContext	ctx = make_ctx(dev);

	if (dev == ODP_DEVICE_GPU && prec_split)
	{
		ctx.gpu_count = 2;
		ctx.gpu_ids[0] = ctx.gpu_ids[1] = 0;
	}
	return ctx;
}

/* The name of dev in the checks' lines. */
static const char *
prec_device(OdpDevice dev)
{
	if (dev != ODP_DEVICE_GPU)
		return "cpu";
	return prec_split ? "gpu {0,0}" : "gpu";
}

/* A data set of float64 rows. */
typedef struct PrecData
{
	const char *name;
	double	   *x;
	int64_t		rows;
	int			dims;
} PrecData;

/* A reference neighbour: distance (ranking value) and index. */
typedef struct PrecPair
{
	double		d;
	int64_t		i;
} PrecPair;

/* Sorts by distance, then smaller index. */
static int
prec_cmp_pair(const void *a, const void *b)
{
	const PrecPair *x = (const PrecPair *) a;
	const PrecPair *y = (const PrecPair *) b;

	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* sqrt(sum of squares), in index order. */
static double
prec_norm(const double *a, int dims)
{
	double		s = 0.0;

	for (int d = 0; d < dims; d++)
		s = s + a[d] * a[d];
	return sqrt(s);
}

/*
 * The ranking value of a and b under metric, in plain double: the
 * distance, or the negated inner product.
 */
static double
prec_distance(OdpMetric metric, const double *a, const double *b, int dims)
{
	double		s = 0.0;
	double		c;

	for (int d = 0; d < dims; d++)
	{
		switch (metric)
		{
			case ODP_METRIC_EUCLIDEAN:
			case ODP_METRIC_SQEUCLIDEAN:
				s = s + (a[d] - b[d]) * (a[d] - b[d]);
				break;
			case ODP_METRIC_MANHATTAN:
				s = s + fabs(a[d] - b[d]);
				break;
			case ODP_METRIC_CHEBYSHEV:
				if (fabs(a[d] - b[d]) > s)
					s = fabs(a[d] - b[d]);
				break;
			default:
				s = s + a[d] * b[d];
				break;
		}
	}
	switch (metric)
	{
		case ODP_METRIC_EUCLIDEAN:
			return sqrt(s);
		case ODP_METRIC_COSINE:
			c = 1.0 - s / (prec_norm(a, dims) * prec_norm(b, dims));
			return c < 0.0 ? 0.0 : (c > 2.0 ? 2.0 : c);
		case ODP_METRIC_INNER_PRODUCT:
			return -s;
		default:
			return s;
	}
}

/*
 * Reference k-NN of queries q (nq rows) against cands c (nc rows): the k
 * smallest by (distance, index), query i skipping candidate i when
 * self_join; inner products reported positive.
 */
static void
prec_ref_knn(const double *q, int64_t nq, const double *c, int64_t nc, int dims,
			 OdpMetric metric, int k, bool self_join, double *dist, int64_t *index)
{
	PrecPair   *all = xmalloc(sizeof(PrecPair) * (size_t) nc);

	for (int64_t i = 0; i < nq; i++)
	{
		int64_t		n = 0;

		for (int64_t j = 0; j < nc; j++)
		{
			if (self_join && i == j)
				continue;
			all[n].d = prec_distance(metric, q + i * dims, c + j * dims, dims);
			all[n].i = j;
			n++;
		}
		qsort(all, (size_t) n, sizeof(PrecPair), prec_cmp_pair);
		for (int t = 0; t < k; t++)
		{
			dist[i * k + t] = metric == ODP_METRIC_INNER_PRODUCT ? -all[t].d : all[t].d;
			index[i * k + t] = all[t].i;
		}
	}
	free(all);
}

/* Reference scores: the k smallest distances to the other rows, summed ascending. */
static void
prec_ref_scores(const PrecData *p, OdpMetric metric, int k, double *scores)
{
	double	   *d = xmalloc(sizeof(double) * (size_t) p->rows * k);
	int64_t    *ix = xmalloc(sizeof(int64_t) * (size_t) p->rows * k);

	prec_ref_knn(p->x, p->rows, p->x, p->rows, p->dims, metric, k, true, d, ix);
	for (int64_t r = 0; r < p->rows; r++)
	{
		double		s = 0.0;

		for (int t = 0; t < k; t++)
			s = s + d[r * k + t];
		scores[r] = s;
	}
	free(d);
	free(ix);
}

/* Reference top n of scores: score descending, then smaller row. */
static void
prec_ref_top(const double *scores, int64_t rows, int n, int64_t *order)
{
	PrecPair   *all = xmalloc(sizeof(PrecPair) * (size_t) rows);

	/* ascending by (-score, row) is descending by score, ties by row */
	for (int64_t r = 0; r < rows; r++)
	{
		all[r].d = -scores[r];
		all[r].i = r;
	}
	qsort(all, (size_t) rows, sizeof(PrecPair), prec_cmp_pair);
	for (int t = 0; t < n; t++)
		order[t] = all[t].i;
	free(all);
}

/* Entries of two lists that differ in index or distance bits. */
static int64_t
prec_differences(const double *da, const int64_t *ia, const double *db,
				 const int64_t *ib, int64_t n)
{
	int64_t		bad = 0;

	for (int64_t t = 0; t < n; t++)
		if (ia[t] != ib[t] || memcmp(&da[t], &db[t], sizeof(double)) != 0)
			bad++;
	return bad;
}

/* The matrix of p's rows [first, first + rows). */
static OdpMatrix
prec_matrix(const PrecData *p, int64_t first, int64_t rows)
{
	OdpMatrix	m = {0};

	m.data64 = p->x + first * p->dims;
	m.rows = rows;
	m.dims = p->dims;
	return m;
}

/*
 * k-NN on dev against the reference: a self join of every row (when
 * self), and the first 3 rows as queries against the others (a few
 * queries: the CPU splits the candidates into ranges when there are
 * enough of them).
 */
static void
prec_knn_case(OdpDevice dev, const PrecData *p, OdpMetric metric, int k, bool self)
{
	const char *dn = prec_device(dev);
	const char *mn = odp_metric_name(metric);
	OdpMatrix	all = prec_matrix(p, 0, p->rows);
	OdpMatrix	q = prec_matrix(p, 0, 3);
	OdpMatrix	c = prec_matrix(p, 3, p->rows - 3);
	double	   *rd = xmalloc(sizeof(double) * (size_t) p->rows * k);
	int64_t    *ri = xmalloc(sizeof(int64_t) * (size_t) p->rows * k);
	double	   *d = xmalloc(sizeof(double) * (size_t) p->rows * k);
	int64_t    *ix = xmalloc(sizeof(int64_t) * (size_t) p->rows * k);
	OdpContext	ctx = prec_ctx(dev);
	OdpStatus	st;

	if (self)
	{
		prec_ref_knn(p->x, p->rows, p->x, p->rows, p->dims, metric, k, true, rd, ri);
		st = odp_compute_knn(&ctx, &all, &all, metric, k, true, d, ix);
		check(st == ODP_OK && prec_differences(d, ix, rd, ri, p->rows * k) == 0,
			  "precision knn %s %s %s self join %lld x %d k=%d: lists and distance bits of the reference (%s)",
			  dn, p->name, mn, (long long) p->rows, p->dims, k, ctx.message);
	}

	prec_ref_knn(q.data64, 3, c.data64, c.rows, p->dims, metric, k, false, rd, ri);
	ctx = prec_ctx(dev);
	st = odp_compute_knn(&ctx, &q, &c, metric, k, false, d, ix);
	check(st == ODP_OK && prec_differences(d, ix, rd, ri, 3 * k) == 0,
		  "precision knn %s %s %s 3 queries x %lld k=%d: lists and distance bits of the reference (%s)",
		  dn, p->name, mn, (long long) c.rows, k, ctx.message);
	free(rd);
	free(ri);
	free(d);
	free(ix);
}

/* What a top-n call returned. */
typedef struct PrecTop
{
	OdpStatus	status;
	int64_t		order[PREC_N];
	double		scores[PREC_N];
	int64_t		count;
	int64_t    *set;			/* the solving set, and its weights */
	double	   *set_scores;
	int64_t		set_size;
} PrecTop;

/* odp_compute_top_outliers on dev by method; the caller frees r->set*. */
static void
prec_top(OdpDevice dev, const PrecData *p, OdpMetric metric, int k,
		 OdpOutlierMethod method, PrecTop *r)
{
	OdpMatrix	m = prec_matrix(p, 0, p->rows);
	OdpContext	ctx = prec_ctx(dev);
	OdpTopOutliersStats st;

	r->set = xmalloc(sizeof(int64_t) * (size_t) p->rows);
	r->set_scores = xmalloc(sizeof(double) * (size_t) p->rows);
	odp_ss_test_batch_size = PREC_BATCH;
	r->status = odp_compute_top_outliers(&ctx, &m, metric, k, PREC_N, method, 0,
										 r->order, r->scores, &r->count, r->set,
										 r->set_scores, &st);
	odp_ss_test_batch_size = 0;
	r->set_size = st.solving_set_size;
	if (r->status != ODP_OK)
		printf("# top-n %s: %s\n", odp_status_name(r->status), ctx.message);
}

/* Whether r holds the reference's top n: rows, order and score bits. */
static bool
prec_top_is(const PrecTop *r, const int64_t *order, const double *scores)
{
	if (r->status != ODP_OK || r->count != PREC_N)
		return false;
	for (int t = 0; t < PREC_N; t++)
		if (r->order[t] != order[t] ||
			memcmp(&r->scores[t], &scores[order[t]], sizeof(double)) != 0)
			return false;
	return true;
}

/*
 * Scores, brute force and SolvingSet on dev against the reference; with
 * cpu_ss given (the CPU's SolvingSet), the solving set must be its own.
 */
static void
prec_outlier_case(OdpDevice dev, const PrecData *p, OdpMetric metric, int k,
				  const double *ref, const int64_t *ref_top, PrecTop *ss,
				  const PrecTop *cpu_ss)
{
	const char *dn = prec_device(dev);
	const char *mn = odp_metric_name(metric);
	OdpMatrix	m = prec_matrix(p, 0, p->rows);
	double	   *s = xmalloc(sizeof(double) * (size_t) p->rows);
	OdpContext	ctx = prec_ctx(dev);
	OdpStatus	st;
	PrecTop		bf;

	st = odp_compute_outlier_scores(&ctx, &m, metric, k, s);
	check(st == ODP_OK && memcmp(s, ref, sizeof(double) * (size_t) p->rows) == 0,
		  "precision scores %s %s %s k=%d: every score's bits of the reference (%s)",
		  dn, p->name, mn, k, ctx.message);
	prec_top(dev, p, metric, k, ODP_METHOD_BRUTEFORCE, &bf);
	check(prec_top_is(&bf, ref_top, ref),
		  "precision top-n %s %s %s k=%d: brute force gives the reference's rows and scores",
		  dn, p->name, mn, k);
	free(bf.set);
	free(bf.set_scores);
	prec_top(dev, p, metric, k, ODP_METHOD_AUTO, &bf);
	check(prec_top_is(&bf, ref_top, ref),
		  "precision top-n %s %s %s k=%d: auto gives the reference's rows and scores",
		  dn, p->name, mn, k);
	prec_top(dev, p, metric, k, ODP_METHOD_SOLVINGSET, ss);
	check(prec_top_is(ss, ref_top, ref),
		  "precision top-n %s %s %s k=%d: SolvingSet gives the reference's rows and scores (solving set %lld of %lld)",
		  dn, p->name, mn, k, (long long) ss->set_size, (long long) p->rows);
	if (ss->status == ODP_OK)
	{
		bool		exact = true;

		for (int64_t i = 0; i < ss->set_size; i++)
			exact = exact && memcmp(&ss->set_scores[i], &ref[ss->set[i]], sizeof(double)) == 0;
		check(exact, "precision top-n %s %s %s: every solving-set weight is the reference's",
			  dn, p->name, mn);
	}
	if (cpu_ss != NULL)
		check(ss->status == ODP_OK && cpu_ss->status == ODP_OK &&
			  ss->set_size == cpu_ss->set_size &&
			  memcmp(ss->set, cpu_ss->set, sizeof(int64_t) * (size_t) ss->set_size) == 0,
			  "precision top-n %s %s %s: the solving set is the CPU's (%lld rows)",
			  dn, p->name, mn, (long long) ss->set_size);
	free(bf.set);
	free(bf.set_scores);
	free(s);
}

/* Every check of one data set and metric, on the CPU and the GPU. */
static void
prec_case(const PrecData *p, OdpMetric metric)
{
	double	   *ref = xmalloc(sizeof(double) * (size_t) p->rows);
	int64_t		ref_top[PREC_N];
	PrecTop		cpu_ss,
				gpu_ss;

	prec_knn_case(ODP_DEVICE_CPU, p, metric, PREC_K, true);
	if (gpu_ok)
		prec_knn_case(ODP_DEVICE_GPU, p, metric, PREC_K, true);
	if (!odp_metric_is_distance(metric))
	{
		free(ref);
		return;
	}
	prec_ref_scores(p, metric, PREC_K, ref);
	prec_ref_top(ref, p->rows, PREC_N, ref_top);
	prec_outlier_case(ODP_DEVICE_CPU, p, metric, PREC_K, ref, ref_top, &cpu_ss, NULL);
	if (gpu_ok)
	{
		prec_outlier_case(ODP_DEVICE_GPU, p, metric, PREC_K, ref, ref_top, &gpu_ss, &cpu_ss);
		free(gpu_ss.set);
		free(gpu_ss.set_scores);
	}
	free(cpu_ss.set);
	free(cpu_ss.set_scores);
	free(ref);
}

/* A value in [0, 1) with 53 random bits. */
static double
prec_unit(void)
{
	return (double) (rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* Rounds to hundredths: cents, centimetres. */
static double
prec_cents(double v)
{
	return round(v * 100.0) / 100.0;
}

/*
 * Payments: epoch seconds (~1.7e9), some seconds apart, and amounts in
 * cents; the last two rows are planted outliers.
 */
static PrecData
prec_payments(int64_t rows)
{
	PrecData	p = {"epoch seconds and amounts", NULL, rows, 2};

	p.x = xmalloc(sizeof(double) * (size_t) rows * 2);
	for (int64_t r = 0; r < rows; r++)
	{
		p.x[r * 2] = 1700000000.0 + (double) (r * 37) + (double) (rng_next() % 30);
		p.x[r * 2 + 1] = prec_cents(20.0 + 80.0 * prec_unit());
	}
	p.x[(rows - 2) * 2 + 1] = 9001.25;
	p.x[(rows - 1) * 2 + 1] = 9002.50;
	return p;
}

/* Projected coordinates: easting ~5e5, northing ~4.5e6, in metres to the centimetre. */
static PrecData
prec_metres(int64_t rows)
{
	PrecData	p = {"projected metres", NULL, rows, 2};

	p.x = xmalloc(sizeof(double) * (size_t) rows * 2);
	for (int64_t r = 0; r < rows; r++)
	{
		p.x[r * 2] = prec_cents(500000.0 + 300.0 * prec_unit());
		p.x[r * 2 + 1] = prec_cents(4500000.0 + 300.0 * prec_unit());
	}
	return p;
}

/* Two columns in a few clusters at 10^6, each 0.01 wide. */
static PrecData
prec_clusters(int64_t rows)
{
	PrecData	p = {"clusters at 1e6", NULL, rows, 2};

	p.x = xmalloc(sizeof(double) * (size_t) rows * 2);
	for (int64_t r = 0; r < rows; r++)
	{
		const double centre = 1000000.0 + 0.05 * (double) (r % 4);

		p.x[r * 2] = centre + 0.01 * prec_unit();
		p.x[r * 2 + 1] = 1000000.0 + 0.01 * prec_unit();
	}
	return p;
}

/* Three columns near 10^18, some 10^5 units apart (float64 spacing: 128). */
static PrecData
prec_huge(int64_t rows)
{
	PrecData	p = {"magnitudes near 1e18", NULL, rows, 3};

	p.x = xmalloc(sizeof(double) * (size_t) rows * 3);
	for (int64_t i = 0; i < rows * 3; i++)
		p.x[i] = 1e18 + 256.0 * (double) (rng_next() % 4000);
	return p;
}

/* 0/1 values in 70 columns (more than one 64-bit word), ties everywhere. */
static PrecData
prec_binary(int64_t rows)
{
	PrecData	p = {"0/1 values", NULL, rows, 70};

	p.x = xmalloc(sizeof(double) * (size_t) rows * 70);
	for (int64_t i = 0; i < rows * 70; i++)
		p.x[i] = (double) (rng_next() >> 63);
	return p;
}

/* Near-parallel vectors: every direction within 1e-4 of (1, 1, 1, 1). */
static PrecData
prec_parallel(int64_t rows)
{
	PrecData	p = {"near-parallel vectors", NULL, rows, 4};

	p.x = xmalloc(sizeof(double) * (size_t) rows * 4);
	for (int64_t i = 0; i < rows * 4; i++)
		p.x[i] = 1000.0 * (1.0 + 1e-4 * prec_unit());
	return p;
}

/*
 * A larger self join and its scores on the GPU, against the CPU (checked
 * against the reference on the smaller sets): bit-identical lists and
 * scores.
 */
static void
prec_larger_case(const PrecData *p)
{
	const int	k = 20;
	OdpMatrix	m = prec_matrix(p, 0, p->rows);
	double	   *d[2];
	int64_t    *ix[2];
	double	   *s[2];
	OdpStatus	st[2],
				ss[2];

	for (int path = 0; path < 2; path++)
	{
		OdpContext	ctx = prec_ctx(path == 0 ? ODP_DEVICE_CPU : ODP_DEVICE_GPU);

		d[path] = xmalloc(sizeof(double) * (size_t) p->rows * k);
		ix[path] = xmalloc(sizeof(int64_t) * (size_t) p->rows * k);
		s[path] = xmalloc(sizeof(double) * (size_t) p->rows);
		st[path] = odp_compute_knn(&ctx, &m, &m, ODP_METRIC_EUCLIDEAN, k, true, d[path], ix[path]);
		ss[path] = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_MANHATTAN, k, s[path]);
	}
	check(st[0] == ODP_OK && st[1] == ODP_OK &&
		  prec_differences(d[0], ix[0], d[1], ix[1], p->rows * k) == 0,
		  "precision knn gpu %s self join %lld rows k=%d: the CPU's lists and distance bits",
		  p->name, (long long) p->rows, k);
	check(ss[0] == ODP_OK && ss[1] == ODP_OK &&
		  memcmp(s[0], s[1], sizeof(double) * (size_t) p->rows) == 0,
		  "precision scores gpu %s manhattan %lld rows k=%d: the CPU's score bits",
		  p->name, (long long) p->rows, k);
	for (int path = 0; path < 2; path++)
	{
		free(d[path]);
		free(ix[path]);
		free(s[path]);
	}
}

/* Gaussian rows (Box-Muller), at the origin. */
static PrecData
prec_gauss(int64_t rows, int dims)
{
	PrecData	p = {"gaussian rows", NULL, rows, dims};

	p.x = xmalloc(sizeof(double) * (size_t) rows * dims);
	for (int64_t i = 0; i < rows * dims; i++)
		p.x[i] = sqrt(-2.0 * log(1.0 - prec_unit())) * cos(6.283185307179586 * prec_unit());
	return p;
}

/* Rows drawn from 40 distinct ones, exact duplicates everywhere. */
static PrecData
prec_duplicates(int64_t rows)
{
	PrecData	p = {"exact duplicates", NULL, rows, 3};

	p.x = xmalloc(sizeof(double) * (size_t) rows * 3);
	for (int64_t r = 0; r < rows; r++)
	{
		const uint64_t pick = rng_next() % 40;

		for (int d = 0; d < 3; d++)
			p.x[r * 3 + d] = 1000.0 + (double) ((pick * 7919 + (uint64_t) d * 104729) % 97) / 8.0;
	}
	return p;
}

/*
 * Gaussian rows scaled by 2^70: float32 would overflow their squares, so
 * the filter refuses the call and the exact kernel answers.
 */
static PrecData
prec_beyond_float32(int64_t rows, int dims)
{
	PrecData	p = prec_gauss(rows, dims);

	p.name = "rows near 2^70";
	for (int64_t i = 0; i < rows * dims; i++)
		p.x[i] = ldexp(p.x[i], 70);
	return p;
}

/* Counters of the float64 filter at one moment. */
typedef struct PrecFilterCount
{
	int64_t		queries,
				certified,
				fallbacks;
} PrecFilterCount;

static PrecFilterCount
prec_filter_count(void)
{
	PrecFilterCount c;

	c.queries = odp_knn64_filter_queries;
	c.certified = odp_knn64_filter_certified;
	c.fallbacks = odp_knn64_filter_fallbacks;
	return c;
}

/*
 * The GPU's float64 filter (knn_wide_filter.c, its minimum size lowered)
 * against the CPU, bit for bit: a self join, 150 queries against every
 * row, and the outlier scores.  want: 'c' every query certified but a
 * few, 'f' some fell back, 'r' the filter refused the data (the exact
 * kernel ran instead), else no expectation beyond the filter running.
 */
static void
prec_filter_case(const PrecData *p, OdpMetric metric, int k, char want)
{
	const char *mn = odp_metric_name(metric);
	OdpMatrix	all = prec_matrix(p, 0, p->rows);
	OdpMatrix	q = prec_matrix(p, 0, 150);
	double	   *d[2],
			   *s[2];
	int64_t    *ix[2];
	OdpStatus	st[2],
				sq[2],
				ss[2];
	int64_t		bad[2];
	PrecFilterCount c0 = prec_filter_count(),
				c1;

	for (int path = 0; path < 2; path++)
	{
		OdpContext	ctx = prec_ctx(path == 0 ? ODP_DEVICE_CPU : ODP_DEVICE_GPU);

		d[path] = xmalloc(sizeof(double) * (size_t) p->rows * k);
		ix[path] = xmalloc(sizeof(int64_t) * (size_t) p->rows * k);
		s[path] = xmalloc(sizeof(double) * (size_t) p->rows);
		st[path] = odp_compute_knn(&ctx, &all, &all, metric, k, true, d[path], ix[path]);
		ss[path] = odp_compute_outlier_scores(&ctx, &all, metric, k, s[path]);
	}
	bad[0] = prec_differences(d[0], ix[0], d[1], ix[1], p->rows * k);
	for (int path = 0; path < 2; path++)
	{
		OdpContext	ctx = prec_ctx(path == 0 ? ODP_DEVICE_CPU : ODP_DEVICE_GPU);

		sq[path] = odp_compute_knn(&ctx, &q, &all, metric, k, false, d[path], ix[path]);
	}
	bad[1] = prec_differences(d[0], ix[0], d[1], ix[1], 150 * (int64_t) k);
	c1 = prec_filter_count();
	check(st[0] == ODP_OK && st[1] == ODP_OK && bad[0] == 0,
		  "precision filter %s %s self join %lld x %d k=%d: the CPU's lists and distance bits (%lld differ)",
		  p->name, mn, (long long) p->rows, p->dims, k, (long long) bad[0]);
	check(sq[0] == ODP_OK && sq[1] == ODP_OK && bad[1] == 0,
		  "precision filter %s %s 150 queries x %lld k=%d: the CPU's lists and distance bits (%lld differ)",
		  p->name, mn, (long long) p->rows, k, (long long) bad[1]);
	check(ss[0] == ODP_OK && ss[1] == ODP_OK &&
		  memcmp(s[0], s[1], sizeof(double) * (size_t) p->rows) == 0,
		  "precision filter %s %s scores k=%d: the CPU's score bits", p->name, mn, k);
	check(c1.queries - c0.queries == (want == 'r' ? 0 : 2 * p->rows + 150),
		  "precision filter %s %s: the filter ran on %s query (%lld of %lld)",
		  p->name, mn, want == 'r' ? "no" : "every", (long long) (c1.queries - c0.queries),
		  (long long) (2 * p->rows + 150));
	if (want == 'c')
		check(c1.fallbacks - c0.fallbacks <= (c1.queries - c0.queries) / 50,
			  "precision filter %s %s: certified all but a few (%lld fell back of %lld)",
			  p->name, mn, (long long) (c1.fallbacks - c0.fallbacks),
			  (long long) (c1.queries - c0.queries));
	if (want == 'f')
		check(c1.fallbacks > c0.fallbacks,
			  "precision filter %s %s: queries fell back to the exact kernel (%lld of %lld)",
			  p->name, mn, (long long) (c1.fallbacks - c0.fallbacks),
			  (long long) (c1.queries - c0.queries));
	for (int path = 0; path < 2; path++)
	{
		free(d[path]);
		free(ix[path]);
		free(s[path]);
	}
}

/*
 * The float64 filter of the GPU on small data (its minimum size lowered
 * for the while): Gaussian rows, epoch seconds with amounts, exact
 * duplicates and clusters at 1e6, under every filtered metric; every
 * float64 analytic (SolvingSet's batches too) against the reference;
 * lists of every candidate; a split over {0, 0}.
 */
static void
prec_filter_tests(void)
{
	const OdpMetric metrics[] = {ODP_METRIC_EUCLIDEAN, ODP_METRIC_SQEUCLIDEAN,
		ODP_METRIC_MANHATTAN, ODP_METRIC_CHEBYSHEV, ODP_METRIC_COSINE};
	const int64_t min_cands = odp_knn64_filter_min_cands,
				min_queries = odp_knn64_filter_min_queries;
	PrecData	sets[4];
	PrecData	tiny;

	odp_knn64_filter_min_cands = 1;
	odp_knn64_filter_min_queries = 1;
	sets[0] = prec_gauss(1500, 8);
	sets[1] = prec_payments(1500);
	sets[2] = prec_duplicates(1500);
	sets[3] = prec_clusters(1500);
	for (size_t mi = 0; mi < sizeof(metrics) / sizeof(metrics[0]); mi++)
	{
		prec_filter_case(&sets[0], metrics[mi], 10, 'c');
		prec_filter_case(&sets[1], metrics[mi], 10, ' ');
		prec_filter_case(&sets[2], metrics[mi], 10, 'f');
		prec_filter_case(&sets[3], metrics[mi], 10, ' ');
	}
	/* every float64 analytic against the reference, SolvingSet's k-NN filtered too */
	prec_case(&sets[1], ODP_METRIC_EUCLIDEAN);
	prec_case(&sets[0], ODP_METRIC_COSINE);
	/* lists of every other row: certified without a bound */
	tiny = prec_gauss(160, 4);
	prec_filter_case(&tiny, ODP_METRIC_EUCLIDEAN, 150, 'c');
	/* k just under the fast lists' 64 (a margin of 4), at 64 (lists past them) */
	prec_filter_case(&sets[0], ODP_METRIC_EUCLIDEAN, 60, 'c');
	prec_filter_case(&sets[0], ODP_METRIC_MANHATTAN, 64, 'c');
	free(tiny.x);
	/* magnitudes float32 cannot square: refused, the exact kernel's lists */
	tiny = prec_beyond_float32(1500, 8);
	prec_filter_case(&tiny, ODP_METRIC_EUCLIDEAN, 10, 'r');
	prec_filter_case(&tiny, ODP_METRIC_CHEBYSHEV, 10, ' ');
	prec_split = true;
	prec_filter_case(&sets[0], ODP_METRIC_EUCLIDEAN, 10, 'c');
	/* parts that refuse certify nothing: every query takes the exact kernel */
	prec_filter_case(&tiny, ODP_METRIC_EUCLIDEAN, 10, 'f');
	prec_split = false;
	odp_knn64_filter_min_cands = min_cands;
	odp_knn64_filter_min_queries = min_queries;
	for (int s = 0; s < 4; s++)
		free(sets[s].x);
	free(tiny.x);
}

/*
 * SolvingSet on dev at the edge k = rows - 1 (every other row a
 * neighbour, exact() asking for every row), batches of 2: brute force's
 * rows and scores.
 */
static void
prec_edge_case(OdpDevice dev, const PrecData *p)
{
	const int64_t rows = 9;
	OdpMatrix	m = prec_matrix(p, 0, rows);
	int64_t		order[2][3];
	double		scores[2][3];
	int64_t		count[2] = {0, 0};
	OdpStatus	st[2];

	for (int method = 0; method < 2; method++)
	{
		OdpContext	ctx = prec_ctx(dev);

		odp_ss_test_batch_size = 2;
		st[method] = odp_compute_top_outliers(&ctx, &m, ODP_METRIC_MANHATTAN, (int) rows - 1, 3,
											  method == 0 ? ODP_METHOD_BRUTEFORCE :
											  ODP_METHOD_SOLVINGSET, 0, order[method],
											  scores[method], &count[method], NULL, NULL, NULL);
		odp_ss_test_batch_size = 0;
	}
	check(st[0] == ODP_OK && st[1] == ODP_OK && count[0] == 3 && count[1] == 3 &&
		  memcmp(order[0], order[1], sizeof(order[0])) == 0 &&
		  memcmp(scores[0], scores[1], sizeof(scores[0])) == 0,
		  "precision top-n %s %lld rows k=%lld: SolvingSet in batches of 2 gives brute force's rows and scores",
		  prec_device(dev), (long long) rows, (long long) rows - 1);
}

/* Cancel callback: asks to stop from its at-th poll. */
static bool
prec_cancel(void *arg)
{
	int		   *polls = (int *) arg;

	return --*polls <= 0;
}

/*
 * A cancel callback stops float64 scores and SolvingSet on dev with
 * ODP_ERR_CANCELLED (unless the run polled too rarely to be stopped).
 */
static void
prec_cancel_case(OdpDevice dev, const PrecData *p)
{
	const char *dn = prec_device(dev);
	OdpMatrix	m = prec_matrix(p, 0, p->rows);
	double	   *s = xmalloc(sizeof(double) * (size_t) p->rows);
	int64_t		order[PREC_N];
	double		scores[PREC_N];
	int64_t		count;

	for (int method = 0; method < 2; method++)
	{
		OdpContext	ctx = prec_ctx(dev);
		int			polls = 2;
		OdpStatus	st;

		ctx.cancel = prec_cancel;
		ctx.cancel_arg = &polls;
		odp_ss_test_batch_size = PREC_BATCH;
		st = method == 0 ? odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, PREC_K, s) :
			odp_compute_top_outliers(&ctx, &m, ODP_METRIC_EUCLIDEAN, PREC_K, PREC_N,
									 ODP_METHOD_SOLVINGSET, 0, order, scores, &count,
									 NULL, NULL, NULL);
		odp_ss_test_batch_size = 0;
		check(st == ODP_ERR_CANCELLED || (st == ODP_OK && polls > 0),
			  "precision %s %s of %s: a cancel stops it (%s, %s)", dn,
			  method == 0 ? "scores" : "SolvingSet", p->name, odp_status_name(st),
			  ctx.message);
	}
	free(s);
}

/*
 * The same payments rounded to float32 (as the engine computed them before
 * float64 rows): their k-NN lists and top n are not the float64
 * reference's, while the float64 rows give the reference's (checked
 * above).
 */
static void
prec_rounded_case(const PrecData *p)
{
	const int	k = PREC_K;
	float	   *x32 = xmalloc(sizeof(float) * (size_t) p->rows * p->dims);
	OdpMatrix	m = {0};
	double	   *rd = xmalloc(sizeof(double) * (size_t) p->rows * k);
	int64_t    *ri = xmalloc(sizeof(int64_t) * (size_t) p->rows * k);
	double	   *d = xmalloc(sizeof(double) * (size_t) p->rows * k);
	int64_t    *ix = xmalloc(sizeof(int64_t) * (size_t) p->rows * k);
	double	   *ref = xmalloc(sizeof(double) * (size_t) p->rows);
	int64_t		ref_top[PREC_N];
	int64_t		order[PREC_N];
	double		scores[PREC_N];
	int64_t		count = 0;
	int64_t		wrong = 0;
	OdpContext	ctx = make_ctx(ODP_DEVICE_CPU);
	OdpStatus	st;

	for (int64_t i = 0; i < p->rows * p->dims; i++)
		x32[i] = (float) p->x[i];
	m.data = x32;
	m.rows = p->rows;
	m.dims = p->dims;
	prec_ref_knn(p->x, p->rows, p->x, p->rows, p->dims, ODP_METRIC_EUCLIDEAN, k, true, rd, ri);
	st = odp_compute_knn(&ctx, &m, &m, ODP_METRIC_EUCLIDEAN, k, true, d, ix);
	for (int64_t t = 0; t < p->rows * k; t++)
		wrong += ix[t] != ri[t];
	check(st == ODP_OK && wrong > 0,
		  "precision %s rounded to float32: %lld of %lld k-NN entries are other rows than float64's",
		  p->name, (long long) wrong, (long long) (p->rows * k));
	prec_ref_scores(p, ODP_METRIC_EUCLIDEAN, k, ref);
	prec_ref_top(ref, p->rows, PREC_N, ref_top);
	ctx = make_ctx(ODP_DEVICE_CPU);
	st = odp_compute_top_outliers(&ctx, &m, ODP_METRIC_EUCLIDEAN, k, PREC_N,
								  ODP_METHOD_BRUTEFORCE, 0, order, scores, &count,
								  NULL, NULL, NULL);
	check(st == ODP_OK && count == PREC_N &&
		  (memcmp(order, ref_top, sizeof(order)) != 0 || scores[PREC_N - 1] != ref[ref_top[PREC_N - 1]]),
		  "precision %s rounded to float32: the top %d differ from float64's (row %lld score %.17g against row %lld score %.17g)",
		  p->name, PREC_N, (long long) order[PREC_N - 1], scores[PREC_N - 1],
		  (long long) ref_top[PREC_N - 1], ref[ref_top[PREC_N - 1]]);
	free(x32);
	free(rd);
	free(ri);
	free(d);
	free(ix);
	free(ref);
}

/* Float64 rows' argument checks, on dev. */
static void
prec_argument_tests(OdpDevice dev)
{
	const char *dn = prec_device(dev);
	double		x64[12] = {1, 2, 3, 4, 5, 6, 0, 0, 0, 7, 8, 9};
	float		x32[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3};
	int64_t		ids[4] = {1, 2, 3, 4};
	OdpMatrix	m64 = {0};
	OdpMatrix	m32 = {x32, 4, 3};
	OdpMatrix	both = {x32, 4, 3, NULL, x64};
	double		d[16];
	int64_t		ix[16];
	double		scores[4];
	OdpContext	ctx = prec_ctx(dev);
	OdpSsNode  *node = NULL;
	double		dl[16];
	OdpStatus	st;

	m64.data64 = x64;
	m64.rows = 4;
	m64.dims = 3;
	st = odp_compute_knn(&ctx, &m64, &m64, ODP_METRIC_COSINE, 1, true, d, ix);
	check(st == ODP_ERR_DATA && strstr(ctx.message, "row 2 is a zero vector") != NULL,
		  "precision knn %s: a float64 zero vector under cosine refused (%s)", dn, ctx.message);
	st = odp_compute_outlier_scores(&ctx, &m64, ODP_METRIC_COSINE, 1, scores);
	check(st == ODP_ERR_DATA && strstr(ctx.message, "row 2 is a zero vector") != NULL,
		  "precision scores %s: a float64 zero vector under cosine refused (%s)", dn, ctx.message);
	st = odp_compute_knn(&ctx, &m32, &m64, ODP_METRIC_EUCLIDEAN, 1, false, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT,
		  "precision knn %s: float32 queries against float64 candidates refused (%s)",
		  dn, ctx.message);
	st = odp_compute_knn(&ctx, &both, &both, ODP_METRIC_EUCLIDEAN, 1, true, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT,
		  "precision knn %s: a matrix with both precisions refused (%s)", dn, ctx.message);
	st = odp_compute_outlier_scores(&ctx, &both, ODP_METRIC_EUCLIDEAN, 1, scores);
	check(st == ODP_ERR_INVALID_ARGUMENT,
		  "precision scores %s: a matrix with both precisions refused (%s)", dn, ctx.message);
	st = odp_compute_knn(&ctx, &m64, &m64, ODP_METRIC_EUCLIDEAN, 4, true, d, ix);
	check(st == ODP_ERR_INVALID_ARGUMENT,
		  "precision knn %s: float64 self join k = rows refused (%s)", dn, ctx.message);
	st = odp_compute_knn(&ctx, &m64, &m64, ODP_METRIC_INNER_PRODUCT, 2, false, d, ix);
	check(st == ODP_OK && d[0] == 50.0 && ix[0] == 3 && d[1] == 32.0 && ix[1] == 1,
		  "precision knn %s: float64 inner product ranked largest first, reported positive",
		  dn);

	/* the distributed steps take float64 rows (test_distributed.c) */
	m64.ids = ids;
	st = odp_ss_node_create(&ctx, &m64, ODP_METRIC_EUCLIDEAN, 1, true, &node);
	check(st == ODP_OK && node != NULL,
		  "precision %s: a distributed node of float64 rows (%s)", dn, ctx.message);
	odp_ss_node_free(node);
	st = odp_knn_excluding(&ctx, &m64, ids, &m64, ids, ODP_METRIC_EUCLIDEAN, 1, dl, ix);
	check(st == ODP_OK && ix[0] == 3 && dl[0] == sqrt(14.0),
		  "precision %s: a sharded k-NN of float64 rows (%s)", dn, ctx.message);
}

void
run_precision_tests(void)
{
	PrecData	sets[7];
	int64_t		bits_runs;
	const OdpMetric metrics[] = {ODP_METRIC_EUCLIDEAN, ODP_METRIC_SQEUCLIDEAN,
	ODP_METRIC_MANHATTAN, ODP_METRIC_CHEBYSHEV};

	sets[0] = prec_payments(500);
	sets[1] = prec_metres(400);
	sets[2] = prec_clusters(400);
	sets[3] = prec_huge(300);
	sets[4] = prec_parallel(300);
	sets[5] = prec_payments(5000);
	sets[5].name = "epoch seconds and amounts, 5000 rows";
	sets[6] = prec_binary(300);

	for (int s = 0; s < 4; s++)
		for (size_t mi = 0; mi < sizeof(metrics) / sizeof(metrics[0]); mi++)
			if (s == 0 || mi == 0 || metrics[mi] == ODP_METRIC_CHEBYSHEV)
				prec_case(&sets[s], metrics[mi]);
	prec_case(&sets[4], ODP_METRIC_COSINE);
	prec_case(&sets[4], ODP_METRIC_INNER_PRODUCT);
	prec_case(&sets[0], ODP_METRIC_COSINE);
	/* 0/1 rows compare as bits on the CPU */
	bits_runs = odp_cpu_knn_bits_runs;
	prec_case(&sets[6], ODP_METRIC_EUCLIDEAN);
	prec_case(&sets[6], ODP_METRIC_CHEBYSHEV);
	check(odp_cpu_knn_bits_runs > bits_runs,
		  "precision 0/1 values: the CPU compared float64 rows as bits");
	/* candidates split into ranges on the CPU: 3 queries against 4,997 rows */
	prec_knn_case(ODP_DEVICE_CPU, &sets[5], ODP_METRIC_EUCLIDEAN, 20, false);
	if (gpu_ok)
		prec_knn_case(ODP_DEVICE_GPU, &sets[5], ODP_METRIC_EUCLIDEAN, 20, false);
	if (gpu_ok)
	{
		/* the same on a device list, each call split in two parts */
		prec_split = true;
		prec_case(&sets[0], ODP_METRIC_EUCLIDEAN);
		prec_case(&sets[4], ODP_METRIC_COSINE);
		prec_knn_case(ODP_DEVICE_GPU, &sets[5], ODP_METRIC_EUCLIDEAN, 20, false);
		prec_split = false;
		prec_larger_case(&sets[5]);
	}
	if (gpu_ok)
		prec_filter_tests();
	prec_edge_case(ODP_DEVICE_CPU, &sets[0]);
	if (gpu_ok)
		prec_edge_case(ODP_DEVICE_GPU, &sets[0]);
	prec_cancel_case(ODP_DEVICE_CPU, &sets[5]);
	if (gpu_ok)
		prec_cancel_case(ODP_DEVICE_GPU, &sets[5]);
	prec_rounded_case(&sets[0]);
	prec_argument_tests(ODP_DEVICE_CPU);
	if (gpu_ok)
		prec_argument_tests(ODP_DEVICE_GPU);
	for (int s = 0; s < 7; s++)
		free(sets[s].x);
}
