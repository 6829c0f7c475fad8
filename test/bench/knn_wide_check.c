/*-------------------------------------------------------------------------
 *
 * knn_wide_check.c
 *	  GPU check of the float64 k-NN primitive (knn_gpu_wide.cu) and the
 *	  float64 outlier scores against a plain float64 reference, bit for
 *	  bit: every distance by odp_distance64, the k smallest by (distance,
 *	  index), scores by odp_sum_ascending64.
 *
 * Covers each storage variant of the kernel (k = 1, 64, 65, 128, 129,
 * 4096), dimension counts that take one, two and three staged chunks,
 * every metric, ties (integer grids), the magnitudes (epoch
 * seconds, 10^6 offsets, 10^18), a query set small enough for the
 * driver's candidate-range copies, a memory limit that forces query
 * chunks and streamed candidate chunks, a range of query rows
 * (first/count), a split over two parts of one device, and a cancel.
 * Needs a GPU; prints one line per case and exits non-zero on a
 * mismatch.  Built by hand on an engine built with CUDA (make):
 *
 *	cc -std=c11 -O2 -Ikernels -ffp-contract=off -pthread \
 *	  -o test/bench/knn_wide_check test/bench/knn_wide_check.c \
 *	  $(find kernels -name '*.o' ! -name '*_disabled.o' ! -name '*_trace.o') \
 *	  -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -ldl -lrt -lm
 *	test/bench/knn_wide_check
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/knn_wide_check.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "include/odp_distance.h"
#include "knn/knn_internal.h"
#include "outliers/outliers_internal.h"

/* Kinds of data, each from the issue or a corner of the kernel. */
typedef enum
{
	DATA_UNIT,					/* uniform in [-1, 1) */
	DATA_GRID,					/* integers 0 .. 3: many equal distances */
	DATA_EPOCH,					/* epoch seconds and amounts with cents */
	DATA_CLUSTER,				/* 10^6 +- 0.01 */
	DATA_HUGE					/* magnitudes near 10^18 */
} DataKind;

static const char *const data_names[] = {"unit", "grid", "epoch", "cluster", "huge"};
static const char *const metric_names[] = {"euclidean", "sqeuclidean", "manhattan",
"chebyshev", "cosine", "inner_product"};

static int	failures = 0;

/* n x dims values of kind, from seed. */
static double *
make_rows(DataKind kind, int64_t n, int dims, uint64_t seed)
{
	double	   *v = malloc(sizeof(double) * (size_t) n * dims);
	uint64_t	s = seed * 2654435761u + 1;

	for (int64_t i = 0; i < n * dims; i++)
	{
		const double u = bench_unit(&s);
		const int	d = (int) (i % dims);

		switch (kind)
		{
			case DATA_UNIT:
				v[i] = 2.0 * u - 1.0;
				break;
			case DATA_GRID:
				v[i] = floor(4.0 * u);
				break;
			case DATA_EPOCH:
				v[i] = d == 0 ? 1.7e9 + floor(86400.0 * 30 * u) :
					floor(1e6 * u) / 100.0;
				break;
			case DATA_CLUSTER:
				v[i] = 1e6 + 0.02 * u - 0.01;
				break;
			case DATA_HUGE:
				v[i] = 1e18 + floor(1e6 * u) * 1024.0;
				break;
		}
	}
	return v;
}

/* One (distance, index) pair of the reference. */
typedef struct RefPair
{
	double		d;
	int64_t		i;
} RefPair;

static int
ref_cmp(const void *a, const void *b)
{
	const RefPair *x = a;
	const RefPair *y = b;

	if (x->d < y->d || (x->d == y->d && x->i < y->i))
		return -1;
	return (x->d == y->d && x->i == y->i) ? 0 : 1;
}

/* Reference lists of queries [first, first + count) into dist/index. */
static void
ref_knn(const OdpMatrix *q, const OdpMatrix *c, const double *qn,
		const double *cn, OdpMetric metric, int k, bool self_join,
		int64_t first, int64_t count, double *dist, int64_t *index)
{
	RefPair    *all = malloc(sizeof(RefPair) * (size_t) c->rows);

	for (int64_t a = first; a < first + count; a++)
	{
		int64_t		n = 0;

		for (int64_t b = 0; b < c->rows; b++)
		{
			if (self_join && a == b)
				continue;
			all[n].d = odp_distance64(metric, q->data64 + a * q->dims,
									  c->data64 + b * c->dims, q->dims,
									  qn ? qn[a] : 1.0, cn ? cn[b] : 1.0);
			all[n].i = b;
			n++;
		}
		qsort(all, (size_t) n, sizeof(RefPair), ref_cmp);
		for (int j = 0; j < k; j++)
		{
			dist[a * k + j] = all[j].d;
			index[a * k + j] = all[j].i;
		}
	}
	free(all);
}

/* Norms of every row for cosine, else NULL. */
static double *
make_norms(const OdpMatrix *m, OdpMetric metric)
{
	double	   *n;

	if (metric != ODP_METRIC_COSINE)
		return NULL;
	n = malloc(sizeof(double) * (size_t) m->rows);
	for (int64_t i = 0; i < m->rows; i++)
		n[i] = odp_row_norm64(m->data64 + i * m->dims, m->dims);
	return n;
}

/* Cancel callback: stops at the (*arg)-th poll. */
static bool
cancel_after(void *arg)
{
	int		   *left = arg;

	return --*left < 0;
}

/* Prints a case's outcome and counts a failure. */
static void
report(bool ok, const char *what, const OdpContext *ctx)
{
	printf("%s %s (%.1f ms compute, %.1f ms transfer, %lld chunks)%s%s\n",
		   ok ? "ok  " : "FAIL", what, ctx->compute_ms, ctx->transfer_ms,
		   (long long) ctx->chunks, ok ? "" : ": ", ok ? "" : ctx->message);
	if (!ok)
		failures++;
}

/*
 * One k-NN case: nq queries (the candidates themselves for a self join)
 * against nc candidates; limit is the GPU memory limit (0: none), parts
 * the number of device-set parts on device 0 (split form when above 1),
 * [first, first + count) the query rows (count 0: all).
 */
static void
knn_case(DataKind kind, int64_t nq, int64_t nc, int dims, OdpMetric metric,
		 int k, bool self_join, size_t limit, int parts, int64_t first,
		 int64_t count)
{
	double	   *cv = make_rows(kind, nc, dims, (uint64_t) (nc * 31 + dims));
	double	   *qv = self_join ? cv : make_rows(kind, nq, dims, (uint64_t) (nq * 17 + k));
	OdpMatrix	c = {NULL, nc, dims, NULL, cv};
	OdpMatrix	q = {NULL, self_join ? nc : nq, dims, NULL, qv};
	double	   *cn = make_norms(&c, metric);
	double	   *qn = self_join ? cn : make_norms(&q, metric);
	const int64_t rows = q.rows;
	const int64_t n = count > 0 ? count : rows;
	double	   *gd = malloc(sizeof(double) * (size_t) rows * k);
	int64_t    *gi = malloc(sizeof(int64_t) * (size_t) rows * k);
	double	   *rd = malloc(sizeof(double) * (size_t) rows * k);
	int64_t    *ri = malloc(sizeof(int64_t) * (size_t) rows * k);
	OdpContext	ctx;
	OdpStatus	st;
	char		what[256];
	bool		ok;

	memset(&ctx, 0, sizeof(ctx));
	ctx.device = ODP_DEVICE_GPU;
	ctx.gpu_memory_limit = limit;
	for (int64_t i = 0; i < rows * k; i++)
	{
		gd[i] = rd[i] = -12345.0;
		gi[i] = ri[i] = -7;
	}
	if (parts > 1)
	{
		ctx.gpu_count = parts;
		st = odp_split_knn64(&ctx, &q, &c, qn, cn, metric, k, self_join, gd, gi);
	}
	else
		st = odp_gpu_knn64_rows(&ctx, &q, &c, qn, cn, metric, k, self_join,
								first, count, gd, gi);
	ref_knn(&q, &c, qn, cn, metric, k, self_join, count > 0 ? first : 0, n, rd, ri);
	ok = st == ODP_OK &&
		memcmp(gd, rd, sizeof(double) * (size_t) rows * k) == 0 &&
		memcmp(gi, ri, sizeof(int64_t) * (size_t) rows * k) == 0;
	snprintf(what, sizeof(what),
			 "knn %s %s %lld x %lld x %d k=%d%s limit=%zu parts=%d rows=[%lld,+%lld)",
			 data_names[kind], metric_names[metric], (long long) rows,
			 (long long) nc, dims, k, self_join ? " self" : "", limit, parts,
			 (long long) first, (long long) count);
	if (st == ODP_OK && !ok)
	{
		for (int64_t i = 0; i < rows * k; i++)
			if (memcmp(&gd[i], &rd[i], sizeof(double)) != 0 || gi[i] != ri[i])
			{
				snprintf(ctx.message, sizeof(ctx.message),
						 "query %lld entry %lld: GPU (%.17g, %lld), reference (%.17g, %lld)",
						 (long long) (i / k), (long long) (i % k), gd[i],
						 (long long) gi[i], rd[i], (long long) ri[i]);
				break;
			}
	}
	report(ok, what, &ctx);
	free(gd);
	free(gi);
	free(rd);
	free(ri);
	if (!self_join)
	{
		free(qv);
		free(qn);
	}
	free(cv);
	free(cn);
}

/* One outlier-score case over n rows; parts and limit as knn_case's. */
static void
scores_case(DataKind kind, int64_t n, int dims, OdpMetric metric, int k,
			size_t limit, int parts)
{
	double	   *v = make_rows(kind, n, dims, (uint64_t) (n + 5 * dims));
	OdpMatrix	m = {NULL, n, dims, NULL, v};
	double	   *norms = make_norms(&m, metric);
	double	   *gs = malloc(sizeof(double) * (size_t) n);
	double	   *rs = malloc(sizeof(double) * (size_t) n);
	double	   *rd = malloc(sizeof(double) * (size_t) n * k);
	int64_t    *ri = malloc(sizeof(int64_t) * (size_t) n * k);
	OdpContext	ctx;
	OdpStatus	st;
	char		what[256];
	bool		ok;

	memset(&ctx, 0, sizeof(ctx));
	ctx.device = ODP_DEVICE_GPU;
	ctx.gpu_memory_limit = limit;
	if (parts > 1)
	{
		ctx.gpu_count = parts;
		st = odp_split_outlier_scores64(&ctx, &m, metric, k, norms, gs);
	}
	else
		st = odp_gpu_outlier_scores64_rows(&ctx, &m, metric, k, norms, 0, 0, gs);
	ref_knn(&m, &m, norms, norms, metric, k, true, 0, n, rd, ri);
	for (int64_t i = 0; i < n; i++)
		rs[i] = odp_sum_ascending64(rd + i * k, k);
	ok = st == ODP_OK && memcmp(gs, rs, sizeof(double) * (size_t) n) == 0;
	snprintf(what, sizeof(what), "scores %s %s %lld x %d k=%d limit=%zu parts=%d",
			 data_names[kind], metric_names[metric], (long long) n, dims, k,
			 limit, parts);
	report(ok, what, &ctx);
	free(v);
	free(norms);
	free(gs);
	free(rs);
	free(rd);
	free(ri);
}

/* A cancel at the third poll ends the call with ODP_ERR_CANCELLED. */
static void
cancel_case(void)
{
	double	   *v = make_rows(DATA_UNIT, 20000, 8, 3);
	OdpMatrix	m = {NULL, 20000, 8, NULL, v};
	double	   *d = malloc(sizeof(double) * 20000 * 10);
	int64_t    *ix = malloc(sizeof(int64_t) * 20000 * 10);
	OdpContext	ctx;
	int			left = 2;
	OdpStatus	st;

	memset(&ctx, 0, sizeof(ctx));
	ctx.device = ODP_DEVICE_GPU;
	ctx.gpu_memory_limit = (size_t) 2 << 20;	/* many chunks, many polls */
	ctx.cancel = cancel_after;
	ctx.cancel_arg = &left;
	st = odp_gpu_knn64_rows(&ctx, &m, &m, NULL, NULL, ODP_METRIC_EUCLIDEAN, 10,
							true, 0, 0, d, ix);
	report(st == ODP_ERR_CANCELLED, "cancel at the third poll", &ctx);
	free(v);
	free(d);
	free(ix);
}

int
main(void)
{
	OdpContext	ctx;
	int			devices = 0;

	memset(&ctx, 0, sizeof(ctx));
	if (odp_gpu_probe(&ctx, &devices, NULL, NULL) != ODP_OK)
	{
		printf("no GPU: %s\n", ctx.message);
		return 2;
	}

	/* each metric, small shapes, the data */
	for (int m = 0; m <= ODP_METRIC_INNER_PRODUCT; m++)
	{
		knn_case(DATA_UNIT, 0, 3000, 5, (OdpMetric) m, 7, true, 0, 1, 0, 0);
		knn_case(DATA_GRID, 0, 2000, 3, (OdpMetric) m, 10, true, 0, 1, 0, 0);
		knn_case(DATA_UNIT, 700, 2500, 19, (OdpMetric) m, 5, false, 0, 1, 0, 0);
	}
	knn_case(DATA_EPOCH, 0, 2502, 2, ODP_METRIC_EUCLIDEAN, 5, true, 0, 1, 0, 0);
	knn_case(DATA_CLUSTER, 0, 2253, 2, ODP_METRIC_EUCLIDEAN, 5, true, 0, 1, 0, 0);
	knn_case(DATA_HUGE, 0, 1500, 3, ODP_METRIC_MANHATTAN, 5, true, 0, 1, 0, 0);
	knn_case(DATA_CLUSTER, 0, 1500, 4, ODP_METRIC_COSINE, 5, true, 0, 1, 0, 0);
	knn_case(DATA_EPOCH, 0, 1500, 2, ODP_METRIC_CHEBYSHEV, 5, true, 0, 1, 0, 0);

	/* each storage variant, and one to three staged chunks of dimensions */
	knn_case(DATA_GRID, 0, 3000, 1, ODP_METRIC_EUCLIDEAN, 1, true, 0, 1, 0, 0);
	knn_case(DATA_GRID, 0, 3000, 2, ODP_METRIC_EUCLIDEAN, 64, true, 0, 1, 0, 0);
	knn_case(DATA_UNIT, 0, 3000, 17, ODP_METRIC_MANHATTAN, 65, true, 0, 1, 0, 0);
	knn_case(DATA_GRID, 0, 3000, 16, ODP_METRIC_CHEBYSHEV, 128, true, 0, 1, 0, 0);
	knn_case(DATA_UNIT, 0, 3000, 40, ODP_METRIC_SQEUCLIDEAN, 129, true, 0, 1, 0, 0);
	knn_case(DATA_GRID, 0, 2000, 3, ODP_METRIC_EUCLIDEAN, 300, true, 0, 1, 0, 0);
	knn_case(DATA_UNIT, 0, 4200, 3, ODP_METRIC_EUCLIDEAN, 4096, true, 0, 1, 0, 0);
	knn_case(DATA_UNIT, 50, 5000, 33, ODP_METRIC_COSINE, 4096, false, 0, 1, 0, 0);

	/* few queries: candidate-range copies merged on the device */
	knn_case(DATA_UNIT, 7, 60000, 3, ODP_METRIC_EUCLIDEAN, 10, false, 0, 1, 0, 0);
	knn_case(DATA_GRID, 1, 60000, 2, ODP_METRIC_MANHATTAN, 100, false, 0, 1, 0, 0);
	knn_case(DATA_UNIT, 3, 40000, 5, ODP_METRIC_INNER_PRODUCT, 200, false, 0, 1, 0, 0);

	/* a memory limit: query chunks, then streamed candidate chunks */
	knn_case(DATA_UNIT, 0, 12000, 8, ODP_METRIC_EUCLIDEAN, 20, true, (size_t) 1 << 20, 1, 0, 0);
	knn_case(DATA_UNIT, 5000, 12000, 8, ODP_METRIC_EUCLIDEAN, 20, false, (size_t) 1 << 20, 1, 0, 0);
	knn_case(DATA_GRID, 0, 8000, 4, ODP_METRIC_CHEBYSHEV, 200, true, (size_t) 3 << 20, 1, 0, 0);

	/* a range of query rows, and a split over two parts of one device */
	knn_case(DATA_UNIT, 0, 3000, 6, ODP_METRIC_EUCLIDEAN, 9, true, 0, 1, 1000, 777);
	knn_case(DATA_UNIT, 0, 5000, 6, ODP_METRIC_EUCLIDEAN, 9, true, 0, 2, 0, 0);
	knn_case(DATA_UNIT, 3000, 4000, 6, ODP_METRIC_COSINE, 9, false, 0, 2, 0, 0);

	/* outlier scores */
	scores_case(DATA_EPOCH, 2502, 2, ODP_METRIC_EUCLIDEAN, 5, 0, 1);
	scores_case(DATA_CLUSTER, 3000, 2, ODP_METRIC_EUCLIDEAN, 10, 0, 1);
	scores_case(DATA_GRID, 3000, 3, ODP_METRIC_MANHATTAN, 150, 0, 1);
	scores_case(DATA_UNIT, 6000, 7, ODP_METRIC_COSINE, 20, (size_t) 1 << 20, 1);
	scores_case(DATA_UNIT, 5000, 7, ODP_METRIC_CHEBYSHEV, 20, 0, 2);

	cancel_case();

	printf("%d failed\n", failures);
	return failures == 0 ? 0 : 1;
}
