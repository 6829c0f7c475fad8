/*-------------------------------------------------------------------------
 *
 * test_spatial.c
 *	  Engine tests of the spatial path (kernels/knn/spatial.h): k-NN lists
 *	  (self joins and joins), outlier scores and top outliers, on the CPU
 *	  and the GPU, in float32 and float64, bit for bit against a naive
 *	  reference written here (every distance by odp_distance, the k
 *	  smallest by distance, ties by index), so that both paths also match
 *	  each other.  The data: uniform rows of 1, 2 and 3 dimensions, rows on
 *	  leaf boundaries (integer lattices: ties everywhere), all rows equal,
 *	  many copies of one point among others, two far clusters, values near
 *	  +-1e30 and subnormal ones, k larger than a leaf and k = rows - 1; the
 *	  four metrics; auto's choice, and what it refuses.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_spatial.c
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

/* Kinds of low-dimensional data. */
typedef enum SpGen
{
	SP_UNIFORM,					/* uniform in [0, 100) */
	SP_LATTICE,					/* integers 0 .. 15: rows on every boundary */
	SP_EQUAL,					/* every row the same */
	SP_COPIES,					/* most rows one point, the rest uniform */
	SP_CLUSTERS,				/* two tight clusters 10^6 apart */
	SP_HUGE,					/* values near +-1e30 */
	SP_TINY						/* subnormal values */
} SpGen;

static const char *const sp_names[] = {
	"uniform", "lattice", "equal", "copies", "clusters", "huge", "tiny"
};

static const char *const metric_names[] = {
	"euclidean", "sqeuclidean", "manhattan", "chebyshev"
};

/* rows x dims values of kind gen, in float64 (float32 rounds them). */
static double *
sp_data(SpGen gen, int64_t rows, int dims)
{
	double	   *x = xmalloc(sizeof(double) * (size_t) rows * dims);

	for (int64_t r = 0; r < rows; r++)
		for (int d = 0; d < dims; d++)
		{
			double		u = rng_unit();
			double	   *v = &x[r * dims + d];

			switch (gen)
			{
				case SP_UNIFORM:
					*v = 100.0 * u;
					break;
				case SP_LATTICE:
					*v = floor(16.0 * u);
					break;
				case SP_EQUAL:
					*v = 3.25;
					break;
				case SP_COPIES:
					*v = r % 10 != 0 ? 7.5 : 100.0 * u;
					break;
				case SP_CLUSTERS:
					*v = (r % 2 ? 1e6 : 0.0) + u;
					break;
				case SP_HUGE:
					*v = (u < 0.5 ? -1e30 : 1e30) * (1.0 + u);
					break;
				case SP_TINY:
					*v = 1e-40 * floor(64.0 * u);
					break;
			}
		}
	return x;
}

static float *
to32(const double *x, int64_t n)
{
	float	   *f = xmalloc(sizeof(float) * (size_t) n);

	for (int64_t i = 0; i < n; i++)
		f[i] = (float) x[i];
	return f;
}

/* Whether (d, i) ranks before (e, j). */
static bool
ref_before(double d, int64_t i, double e, int64_t j)
{
	return d < e || (d == e && i < j);
}

/*
 * The naive reference: for each query every candidate's distance in the
 * rows' precision, the k smallest by (distance, index), widened.
 */
static void
sp_reference(const OdpMatrix *q, const OdpMatrix *c, OdpMetric metric, int k,
			 bool self_join, double *dist, int64_t *index)
{
	for (int64_t a = 0; a < q->rows; a++)
	{
		double	   *bd = dist + a * k;
		int64_t    *bi = index + a * k;
		int			cnt = 0;

		for (int64_t b = 0; b < c->rows; b++)
		{
			double		d;
			int			pos;

			if (self_join && a == b)
				continue;
			if (q->data64 != NULL)
				d = odp_distance64(metric, q->data64 + a * q->dims, c->data64 + b * c->dims,
								   q->dims, 0.0, 0.0);
			else
				d = (double) odp_distance(metric, q->data + a * q->dims, c->data + b * c->dims,
										  q->dims, 0.0f, 0.0f);
			if (cnt < k)
				pos = cnt++;
			else if (ref_before(d, b, bd[k - 1], bi[k - 1]))
				pos = k - 1;
			else
				continue;
			while (pos > 0 && ref_before(d, b, bd[pos - 1], bi[pos - 1]))
			{
				bd[pos] = bd[pos - 1];
				bi[pos] = bi[pos - 1];
				pos--;
			}
			bd[pos] = d;
			bi[pos] = b;
		}
	}
}

/* Runs k-NN on dev with the spatial path forced; returns mismatching lists. */
static int64_t
sp_knn_case_limit(OdpDevice dev, const OdpMatrix *q, const OdpMatrix *c, OdpMetric metric,
				  int k, bool self_join, const double *rd, const int64_t *ri, bool *used,
				  size_t gpu_limit)
{
	OdpContext	ctx = make_ctx(dev);
	double	   *d = xmalloc(sizeof(double) * (size_t) q->rows * k);
	int64_t    *ix = xmalloc(sizeof(int64_t) * (size_t) q->rows * k);
	int64_t		bad = 0;
	OdpStatus	st;

	ctx.spatial = ODP_SPATIAL_ON;
	ctx.gpu_memory_limit = gpu_limit;
	st = odp_compute_knn(&ctx, q, c, metric, k, self_join, d, ix);
	*used = ctx.spatial_used != 0;
	if (st != ODP_OK)
	{
		printf("# %s: %s\n", odp_status_name(st), ctx.message);
		bad = q->rows;
	}
	else
		for (int64_t a = 0; a < q->rows; a++)
			if (memcmp(d + a * k, rd + a * k, sizeof(double) * k) != 0 ||
				memcmp(ix + a * k, ri + a * k, sizeof(int64_t) * k) != 0)
				bad++;
	free(d);
	free(ix);
	return bad;
}

static int64_t
sp_knn_case(OdpDevice dev, const OdpMatrix *q, const OdpMatrix *c, OdpMetric metric,
			int k, bool self_join, const double *rd, const int64_t *ri, bool *used)
{
	return sp_knn_case_limit(dev, q, c, metric, k, self_join, rd, ri, used, 0);
}

/*
 * Lists brought back a chunk of queries at a time: a GPU budget too small
 * to hold every list at once.
 */
static void
sp_chunked_lists(void)
{
	const int64_t rows = 3000;
	const int	k = 20;
	double	   *x64 = sp_data(SP_UNIFORM, rows, 2);
	float	   *x32 = to32(x64, rows * 2);
	double	   *rd = xmalloc(sizeof(double) * (size_t) rows * k);
	int64_t    *ri = xmalloc(sizeof(int64_t) * (size_t) rows * k);
	OdpMatrix	m = {0};
	bool		used = false;
	int64_t		bad;

	if (!gpu_ok)
	{
		free(x64);
		free(x32);
		free(rd);
		free(ri);
		return;
	}
	m.data = x32;
	m.rows = rows;
	m.dims = 2;
	sp_reference(&m, &m, ODP_METRIC_EUCLIDEAN, k, true, rd, ri);
	bad = sp_knn_case_limit(ODP_DEVICE_GPU, &m, &m, ODP_METRIC_EUCLIDEAN, k, true, rd, ri,
							&used, (size_t) 2 << 20);
	check(bad == 0 && used, "spatial gpu self k-NN in chunks under a 2 MB budget: %lld lists differ",
		  (long long) bad);
	free(x64);
	free(x32);
	free(rd);
	free(ri);
}

/* The same for the outlier scores (the reference lists summed). */
static int64_t
sp_scores_case(OdpDevice dev, const OdpMatrix *m, OdpMetric metric, int k,
			   const double *rd, bool *used)
{
	OdpContext	ctx = make_ctx(dev);
	double	   *s = xmalloc(sizeof(double) * (size_t) m->rows);
	float	   *row32 = xmalloc(sizeof(float) * (size_t) k);
	int64_t		bad = 0;
	OdpStatus	st;

	ctx.spatial = ODP_SPATIAL_ON;
	st = odp_compute_outlier_scores(&ctx, m, metric, k, s);
	*used = ctx.spatial_used != 0;
	if (st != ODP_OK)
	{
		printf("# %s: %s\n", odp_status_name(st), ctx.message);
		bad = m->rows;
	}
	else
		for (int64_t a = 0; a < m->rows; a++)
		{
			double		want;

			if (m->data64 != NULL)
				want = odp_sum_ascending64(rd + a * k, k);
			else
			{
				for (int j = 0; j < k; j++)
					row32[j] = (float) rd[a * k + j];
				want = odp_sum_ascending(row32, k);
			}
			if (memcmp(&s[a], &want, sizeof(double)) != 0)
				bad++;
		}
	free(s);
	free(row32);
	return bad;
}

/* Top outliers by method spatial against the brute force's, on dev. */
static bool
sp_top_case(OdpDevice dev, const OdpMatrix *m, OdpMetric metric, int k, int64_t n)
{
	int64_t    *o1 = xmalloc(sizeof(int64_t) * (size_t) n);
	int64_t    *o2 = xmalloc(sizeof(int64_t) * (size_t) n);
	double	   *s1 = xmalloc(sizeof(double) * (size_t) n);
	double	   *s2 = xmalloc(sizeof(double) * (size_t) n);
	int64_t		c1 = 0,
				c2 = 0;
	OdpTopOutliersStats st1,
				st2;
	OdpContext	ctx = make_ctx(dev);
	OdpStatus	a,
				b;
	bool		ok;

	a = odp_compute_top_outliers(&ctx, m, metric, k, n, ODP_METHOD_SPATIAL, 0, o1, s1, &c1,
								 NULL, NULL, &st1);
	ctx = make_ctx(ODP_DEVICE_CPU);
	b = odp_compute_top_outliers(&ctx, m, metric, k, n, ODP_METHOD_BRUTEFORCE, 0, o2, s2, &c2,
								 NULL, NULL, &st2);
	ok = a == ODP_OK && b == ODP_OK && c1 == c2 && st1.method == ODP_METHOD_SPATIAL &&
		st2.method == ODP_METHOD_BRUTEFORCE && st1.distances > 0 &&
		memcmp(o1, o2, sizeof(int64_t) * (size_t) c1) == 0 &&
		memcmp(s1, s2, sizeof(double) * (size_t) c1) == 0;
	free(o1);
	free(o2);
	free(s1);
	free(s2);
	return ok;
}

/*
 * One data set: self-join lists, scores and (float32) top outliers for
 * each metric, a join of fresh queries, on both paths and precisions.
 */
static void
sp_run(SpGen gen, int64_t rows, int dims, int k, bool all_metrics)
{
	double	   *x64 = sp_data(gen, rows, dims);
	float	   *x32 = to32(x64, rows * dims);
	const int64_t nq = 700;
	double	   *q64 = sp_data(gen == SP_EQUAL ? SP_UNIFORM : gen, nq, dims);
	float	   *q32 = to32(q64, nq * dims);
	double	   *rd = xmalloc(sizeof(double) * (size_t) rows * k);
	int64_t    *ri = xmalloc(sizeof(int64_t) * (size_t) rows * k);

	for (int prec = 0; prec < 2; prec++)
		for (int mi = 0; mi < (all_metrics ? 4 : 1); mi++)
		{
			const OdpMetric metric = (OdpMetric) mi;
			OdpMatrix	m = {0},
						q = {0};
			const char *pname = prec ? "float64" : "float32";

			m.rows = rows;
			m.dims = dims;
			q.rows = nq;
			q.dims = dims;
			if (prec)
			{
				m.data64 = x64;
				q.data64 = q64;
			}
			else
			{
				m.data = x32;
				q.data = q32;
			}
			sp_reference(&m, &m, metric, k, true, rd, ri);
			for (int dv = 0; dv < 2; dv++)
			{
				const OdpDevice dev = dv ? ODP_DEVICE_GPU : ODP_DEVICE_CPU;
				const char *dname = dv ? "gpu" : "cpu";
				bool		used = false;
				int64_t		bad;

				if (dv && !gpu_ok)
					continue;
				bad = sp_knn_case(dev, &m, &m, metric, k, true, rd, ri, &used);
				check(bad == 0 && used, "spatial %s self k-NN %s %lldx%d k=%d %s %s: %lld lists differ from the reference",
					  dname, sp_names[gen], (long long) rows, dims, k, metric_names[mi], pname,
					  (long long) bad);
				bad = sp_scores_case(dev, &m, metric, k, rd, &used);
				check(bad == 0 && used, "spatial %s scores %s %lldx%d k=%d %s %s: %lld scores differ",
					  dname, sp_names[gen], (long long) rows, dims, k, metric_names[mi], pname,
					  (long long) bad);
				if (!prec && mi == 0)
					check(sp_top_case(dev, &m, metric, k, 10),
						  "spatial %s top-10 outliers %s %lldx%d k=%d: the brute force's rows and scores",
						  dname, sp_names[gen], (long long) rows, dims, k);
			}
			if (mi == 0)
			{
				double	   *jd = xmalloc(sizeof(double) * (size_t) nq * k);
				int64_t    *ji = xmalloc(sizeof(int64_t) * (size_t) nq * k);

				sp_reference(&q, &m, metric, k, false, jd, ji);
				for (int dv = 0; dv < 2; dv++)
				{
					bool		used = false;
					int64_t		bad;

					if (dv && !gpu_ok)
						continue;
					bad = sp_knn_case(dv ? ODP_DEVICE_GPU : ODP_DEVICE_CPU, &q, &m, metric, k,
									  false, jd, ji, &used);
					check(bad == 0 && used, "spatial %s join %s %lld queries x %lld rows x %d k=%d %s: %lld lists differ",
						  dv ? "gpu" : "cpu", sp_names[gen], (long long) nq, (long long) rows,
						  dims, k, pname, (long long) bad);
				}
				free(jd);
				free(ji);
			}
		}
	free(x64);
	free(x32);
	free(q64);
	free(q32);
	free(rd);
	free(ri);
}

/*
 * copies rows of one point, then others uniform rows, in float32: a
 * copy's list is the first k other copies at distance 0 (the others
 * never land on the point); the others' lists are naive.
 */
static void
sp_copies_big(int64_t copies, int64_t others, int k)
{
	const int64_t rows = copies + others;
	float	   *x = xmalloc(sizeof(float) * (size_t) rows * 2);
	double	   *rd = xmalloc(sizeof(double) * (size_t) rows * k);
	int64_t    *ri = xmalloc(sizeof(int64_t) * (size_t) rows * k);
	OdpMatrix	m = {0},
				q = {0};

	for (int64_t r = 0; r < rows; r++)
	{
		x[r * 2] = r < copies ? 7.5f : 8.0f + 90.0f * rng_unit();
		x[r * 2 + 1] = r < copies ? 7.5f : 100.0f * rng_unit();
	}
	m.data = x;
	m.rows = rows;
	m.dims = 2;
	for (int64_t a = 0; a < copies; a++)
		for (int j = 0, b = 0; j < k; b++)
			if (b != a)
			{
				rd[a * k + j] = 0.0;
				ri[a * k + j++] = b;
			}
	q = m;
	q.data = x + copies * 2;
	q.rows = others;
	sp_reference(&q, &m, ODP_METRIC_EUCLIDEAN, k, false, rd + copies * k, ri + copies * k);
	/* a join's reference does not skip the query itself: shift it out */
	for (int64_t a = copies; a < rows; a++)
	{
		int64_t    *bi = ri + a * k;
		double	   *bd = rd + a * k;

		if (bi[0] == a)
		{
			OdpMatrix	one = m;

			one.data = x + a * 2;
			one.rows = 1;
			memmove(bd, bd + 1, sizeof(double) * (k - 1));
			memmove(bi, bi + 1, sizeof(int64_t) * (k - 1));
			/* the (k+1)-th nearest: the naive list of k + 1, its last */
			{
				double	   *d2 = xmalloc(sizeof(double) * (k + 1));
				int64_t    *i2 = xmalloc(sizeof(int64_t) * (k + 1));

				sp_reference(&one, &m, ODP_METRIC_EUCLIDEAN, k + 1, false, d2, i2);
				bd[k - 1] = d2[k];
				bi[k - 1] = i2[k];
				free(d2);
				free(i2);
			}
		}
	}
	for (int dv = 0; dv < 2; dv++)
	{
		bool		used = false;
		int64_t		bad;

		if (dv && !gpu_ok)
			continue;
		bad = sp_knn_case(dv ? ODP_DEVICE_GPU : ODP_DEVICE_CPU, &m, &m, ODP_METRIC_EUCLIDEAN, k,
						  true, rd, ri, &used);
		check(bad == 0 && used, "spatial %s self k-NN of %lld copies of one point among %lld rows: %lld lists differ",
			  dv ? "gpu" : "cpu", (long long) copies, (long long) others, (long long) bad);
		bad = sp_scores_case(dv ? ODP_DEVICE_GPU : ODP_DEVICE_CPU, &m, ODP_METRIC_EUCLIDEAN, k,
							 rd, &used);
		check(bad == 0 && used, "spatial %s scores of %lld copies of one point: %lld differ",
			  dv ? "gpu" : "cpu", (long long) copies, (long long) bad);
	}
	free(x);
	free(rd);
	free(ri);
}

/* Auto's choice, and the calls the spatial path refuses. */
static void
sp_auto_checks(void)
{
	const int64_t rows = 5000;
	double	   *x64 = sp_data(SP_UNIFORM, rows, 4);
	float	   *x32 = to32(x64, rows * 4);
	double	   *s = xmalloc(sizeof(double) * rows);
	int64_t		o[10];
	double		os[10];
	int64_t		count = 0;
	OdpMatrix	m = {0};
	OdpContext	ctx;
	OdpStatus	st;
	OdpTopOutliersStats stats;

	m.data = x32;
	m.rows = rows;
	m.dims = 2;					/* the first two columns of the 4 */
	{
		float	   *two = xmalloc(sizeof(float) * rows * 2);

		for (int64_t r = 0; r < rows; r++)
		{
			two[r * 2] = x32[r * 4];
			two[r * 2 + 1] = x32[r * 4 + 1];
		}
		m.data = two;
		ctx = make_ctx(ODP_DEVICE_CPU);
		ctx.spatial = ODP_SPATIAL_AUTO;
		st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, s);
		check(st == ODP_OK && ctx.spatial_used, "auto takes the spatial path for %lld x 2 rows",
			  (long long) rows);
		ctx = make_ctx(ODP_DEVICE_CPU);
		ctx.spatial = ODP_SPATIAL_AUTO;
		st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_COSINE, 5, s);
		check(st == ODP_OK && !ctx.spatial_used, "auto keeps cosine on the brute force");
		ctx = make_ctx(ODP_DEVICE_CPU);
		ctx.spatial = ODP_SPATIAL_AUTO;
		st = odp_compute_top_outliers(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, 10, ODP_METHOD_AUTO, 0,
									  o, os, &count, NULL, NULL, &stats);
		check(st == ODP_OK && stats.method == ODP_METHOD_SPATIAL && count == 10,
			  "auto top outliers of %lld x 2 rows run method spatial", (long long) rows);
		for (int dv = 0; dv < 2; dv++)
		{
			if (dv && !gpu_ok)
				continue;
			ctx = make_ctx(dv ? ODP_DEVICE_GPU : ODP_DEVICE_CPU);
			ctx.spatial = ODP_SPATIAL_AUTO;
			m.rows = 200;
			st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, s);
			check(st == ODP_OK && !ctx.spatial_used, "auto keeps 200 rows on the brute force on the %s",
				  dv ? "GPU" : "CPU");
			ctx = make_ctx(dv ? ODP_DEVICE_GPU : ODP_DEVICE_CPU);
			ctx.spatial = ODP_SPATIAL_AUTO;
			m.rows = 300;
			st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, s);
			check(st == ODP_OK && ctx.spatial_used, "auto takes the spatial path for 300 rows on the %s",
				  dv ? "GPU" : "CPU");
		}
		m.rows = rows;
		free(two);
	}
	m.data = x32;
	m.dims = 4;
	ctx = make_ctx(ODP_DEVICE_CPU);
	ctx.spatial = ODP_SPATIAL_ON;
	st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, s);
	check(st == ODP_OK && !ctx.spatial_used, "4 dimensions stay on the brute force even with spatial on");
	ctx = make_ctx(ODP_DEVICE_CPU);
	st = odp_compute_top_outliers(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, 10, ODP_METHOD_SPATIAL, 0,
								  o, os, &count, NULL, NULL, &stats);
	check(st == ODP_ERR_INVALID_ARGUMENT && strstr(ctx.message, "spatial") != NULL,
		  "method spatial on 4 dimensions is refused: %s", ctx.message);
	m.dims = 2;
	ctx = make_ctx(ODP_DEVICE_CPU);
	st = odp_compute_top_outliers(&ctx, &m, ODP_METRIC_EUCLIDEAN, 129, 10, ODP_METHOD_SPATIAL, 0,
								  o, os, &count, NULL, NULL, &stats);
	check(st == ODP_ERR_INVALID_ARGUMENT, "method spatial with k = 129 is refused");
	free(x64);
	free(x32);
	free(s);
}

/*
 * Auto's probe (spatial.h): queries at the centre of a ring of rows, every
 * box of which is about as near as their k-th neighbour, decline the path
 * under auto, whose lists are then the brute force's; queries just inside
 * the ring keep it; on forces it, with the same lists.
 */
static void
sp_probe_checks(void)
{
	const int64_t rows = 20000;
	const int64_t nq = 4096;	/* spatial.h's ODP_SPATIAL_PROBE_MIN_QUERIES */
	const int	k = 10;
	double	   *c64 = xmalloc(sizeof(double) * rows * 2);
	double	   *q64 = xmalloc(sizeof(double) * nq * 2);
	double	   *rd = xmalloc(sizeof(double) * nq * k);
	int64_t    *ri = xmalloc(sizeof(int64_t) * nq * k);
	double	   *d = xmalloc(sizeof(double) * nq * k);
	int64_t    *ix = xmalloc(sizeof(int64_t) * nq * k);
	OdpMatrix	c = {0},
				q = {0};

	for (int64_t r = 0; r < rows; r++)
	{
		const double a = 6.283185307179586 * (double) r / (double) rows;

		c64[r * 2] = cos(a);
		c64[r * 2 + 1] = sin(a);
	}
	c.data = to32(c64, rows * 2);
	c.rows = rows;
	c.dims = 2;
	for (int inside = 0; inside < 2; inside++)
	{
		for (int64_t i = 0; i < nq; i++)
		{
			q64[i * 2] = inside ? 0.99 * c64[(i * 5) % rows * 2] : 0.0;
			q64[i * 2 + 1] = inside ? 0.99 * c64[(i * 5) % rows * 2 + 1] : 0.0;
		}
		q.data = to32(q64, nq * 2);
		q.rows = nq;
		q.dims = 2;
		sp_reference(&q, &c, ODP_METRIC_EUCLIDEAN, k, false, rd, ri);
		for (int dv = 0; dv < 2; dv++)
			for (int on = 0; on < 2; on++)
			{
				OdpContext	ctx;
				OdpStatus	st;
				int64_t		bad = 0;
				bool		want = on || inside;

				if (dv && !gpu_ok)
					continue;
				ctx = make_ctx(dv ? ODP_DEVICE_GPU : ODP_DEVICE_CPU);
				ctx.spatial = on ? ODP_SPATIAL_ON : ODP_SPATIAL_AUTO;
				st = odp_compute_knn(&ctx, &q, &c, ODP_METRIC_EUCLIDEAN, k, false, d, ix);
				for (int64_t a = 0; st == ODP_OK && a < nq; a++)
					if (memcmp(d + a * k, rd + a * k, sizeof(double) * k) != 0 ||
						memcmp(ix + a * k, ri + a * k, sizeof(int64_t) * k) != 0)
						bad++;
				check(st == ODP_OK && bad == 0 && (ctx.spatial_used != 0) == want,
					  "spatial %s, %s: %lld queries %s a ring of %lld rows take the %s (%lld lists differ)",
					  dv ? "gpu" : "cpu", on ? "on" : "auto", (long long) nq,
					  inside ? "just inside" : "at the centre of", (long long) rows,
					  ctx.spatial_used ? "spatial path" : "brute force", (long long) bad);
			}
		free((void *) q.data);
	}
	free((void *) c.data);
	free(c64);
	free(q64);
	free(rd);
	free(ri);
	free(d);
	free(ix);
}

void
run_spatial_tests(void)
{
	sp_run(SP_UNIFORM, 3000, 1, 5, true);
	sp_run(SP_UNIFORM, 3000, 2, 10, true);
	sp_run(SP_UNIFORM, 3000, 3, 7, true);
	sp_run(SP_LATTICE, 2500, 2, 9, true);
	sp_run(SP_LATTICE, 2000, 3, 33, false);
	sp_run(SP_EQUAL, 1000, 2, 12, false);
	sp_run(SP_COPIES, 4000, 2, 5, false);
	sp_run(SP_CLUSTERS, 3000, 3, 10, false);
	sp_run(SP_HUGE, 1500, 2, 6, true);
	sp_run(SP_TINY, 1500, 3, 6, true);
	sp_run(SP_UNIFORM, 500, 2, 100, false);		/* k past a leaf's rows */
	sp_run(SP_UNIFORM, 129, 3, 128, false);		/* k = rows - 1 */
	sp_copies_big(100000, 1000, 5);
	sp_chunked_lists();
	sp_auto_checks();
	sp_probe_checks();
}
