/*-------------------------------------------------------------------------
 *
 * test_pearson.c
 *	  Engine tests of the correlations (odp_compute_pearson_pairs and
 *	  odp_compute_pearson_top) on both paths against a naive reference that
 *	  computes every pair's coefficient in long double by two passes over
 *	  its common positions: random series, random walks, constant series,
 *	  perfectly correlated and anti-correlated series, huge offsets (1e9 +
 *	  noise, which breaks one-pass formulas), Spearman with many ties,
 *	  missing values in patterns (random, whole series, level shifts that
 *	  need the exact recomputation, min_periods), two sources, every top-k
 *	  ranking, tiles and staged panels under a small GPU memory budget,
 *	  cancellation and the argument checks.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_pearson.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_pearson.h"
#include "test_util.h"

/* GPU calls that staged their series in host memory; weak for CPU builds. */
extern int64_t odp_gpu_pearson_staged_runs __attribute__((weak));

/* Largest |r| difference accepted against the reference. */
#define TOL_COMPLETE	1e-12
#define TOL_PAIRWISE	1e-12

/* Kinds of generated series. */
typedef enum SGen
{
	SGEN_NORMAL,				/* standard normal values */
	SGEN_WALK,					/* random walks: each value the last +- up to 1% */
	SGEN_OFFSET,				/* 1e9 + uniform noise in [0, 1) */
	SGEN_TIES,					/* integers 0 .. 3: ranks with many ties */
	SGEN_STRUCTURED				/* groups of scaled copies (r = 1), negated
								 * copies (r = -1), constants and noise */
} SGen;

static const char *const sgen_names[] = {
	"normal", "walk", "offset", "ties", "structured"
};

/* A standard normal value (Box-Muller). */
static double
rng_normal(void)
{
	double		u = ((double) (rng_next() >> 11) + 0.5) / 9007199254740992.0;
	double		v = (double) (rng_next() >> 11) / 9007199254740992.0;

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* rows x dims series of the given kind; the caller frees it. */
static double *
make_series(SGen gen, int64_t rows, int dims)
{
	double	   *x = xmalloc(sizeof(double) * (size_t) rows * dims);

	for (int64_t s = 0; s < rows; s++)
	{
		double	   *v = x + s * dims;
		double		level = 100.0;

		for (int i = 0; i < dims; i++)
		{
			switch (gen)
			{
				case SGEN_NORMAL:
					v[i] = rng_normal();
					break;
				case SGEN_WALK:
					level *= 1.0 + 0.02 * ((double) rng_unit() - 0.5);
					v[i] = level;
					break;
				case SGEN_OFFSET:
					v[i] = 1e9 + (double) rng_unit();
					break;
				case SGEN_TIES:
					v[i] = (double) (rng_next() % 4);
					break;
				case SGEN_STRUCTURED:
					switch (s % 6)
					{
						case 0:
						case 5:
							v[i] = rng_normal();
							break;
						case 1:	/* a scaled, shifted copy of the row before */
							v[i] = 3.0 * v[i - dims] + 7.0;
							break;
						case 2:	/* a negated copy of row s - 2 */
							v[i] = -0.5 * v[i - 2 * dims] + 1.0;
							break;
						case 3:	/* constant */
							v[i] = 42.0;
							break;
						case 4:	/* an exact copy of row s - 4 */
							v[i] = v[i - 4 * dims];
							break;
					}
					break;
			}
		}
	}
	return x;
}

/* Missing flags: each value absent with probability p; the caller frees them. */
static uint8_t *
make_missing(int64_t rows, int dims, double p)
{
	uint8_t    *m = xmalloc((size_t) rows * dims);

	for (size_t i = 0; i < (size_t) rows * dims; i++)
		m[i] = (double) rng_unit() < p ? 1 : 0;
	return m;
}

/* The average ranks of one series, naively (count less and equal). */
static void
ref_rank(const double *v, int dims, double *out)
{
	for (int i = 0; i < dims; i++)
	{
		int			less = 0;
		int			equal = 0;

		for (int j = 0; j < dims; j++)
		{
			less += v[j] < v[i];
			equal += v[j] == v[i];
		}
		out[i] = less + (equal + 1) / 2.0;
	}
}

/* A copy of m with every series replaced by its ranks; the caller frees it. */
static double *
ref_ranked(const OdpMatrix64 *m)
{
	double	   *out = xmalloc(sizeof(double) * (size_t) m->rows * m->dims);

	for (int64_t s = 0; s < m->rows; s++)
		ref_rank(m->data + s * m->dims, m->dims, out + s * m->dims);
	return out;
}

/*
 * The reference coefficient of row a of x and row b of y over their
 * common positions, in long double; false when it has none.
 */
static bool
ref_pair(const OdpMatrix64 *x, int64_t a, const OdpMatrix64 *y, int64_t b,
		 int min_periods, double *r)
{
	const int	dims = x->dims;
	const double *xa = x->data + a * dims;
	const double *yb = y->data + b * dims;
	long double n = 0,
				sx = 0,
				sy = 0,
				sxx = 0,
				syy = 0,
				sxy = 0;
	double		fx = 0,
				fy = 0;
	bool		xv = false,
				yv = false;

	for (int i = 0; i < dims; i++)
	{
		if ((x->missing && x->missing[a * dims + i]) ||
			(y->missing && y->missing[b * dims + i]))
			continue;
		if (n == 0)
		{
			fx = xa[i];
			fy = yb[i];
		}
		xv |= xa[i] != fx;
		yv |= yb[i] != fy;
		n += 1;
		sx += xa[i];
		sy += yb[i];
	}
	if (n < (min_periods > 2 ? min_periods : 2) || !xv || !yv)
		return false;
	sx /= n;
	sy /= n;
	for (int i = 0; i < dims; i++)
	{
		long double dx,
					dy;

		if ((x->missing && x->missing[a * dims + i]) ||
			(y->missing && y->missing[b * dims + i]))
			continue;
		dx = xa[i] - sx;
		dy = yb[i] - sy;
		sxx += dx * dx;
		syy += dy * dy;
		sxy += dx * dy;
	}
	*r = (double) (sxy / sqrtl(sxx * syy));
	return true;
}

/* Every reference coefficient (x->rows x y->rows), NaN where none. */
static double *
ref_matrix(const OdpMatrix64 *x, const OdpMatrix64 *y, OdpPearsonMethod method,
		   int min_periods)
{
	OdpMatrix64 rx = *x;
	OdpMatrix64 ry = *y;
	double	   *xr = NULL;
	double	   *yr = NULL;
	double	   *out = xmalloc(sizeof(double) * (size_t) x->rows * y->rows);

	if (method == ODP_PEARSON_METHOD_SPEARMAN)
	{
		rx.data = xr = ref_ranked(x);
		ry.data = yr = ref_ranked(y);
	}
	for (int64_t a = 0; a < x->rows; a++)
		for (int64_t b = 0; b < y->rows; b++)
		{
			double		r;

			out[a * y->rows + b] = ref_pair(&rx, a, &ry, b, min_periods, &r) ? r : NAN;
		}
	free(xr);
	free(yr);
	return out;
}

/* Pairs collected from the engine. */
typedef struct Collected
{
	int64_t    *a;
	int64_t    *b;
	double	   *r;
	int64_t		n;
	int64_t		cap;
	bool		ordered;		/* every batch continued the (a, b) order */
	int64_t		calls;
	int64_t		stop_after;		/* > 0: refuse the call after this many */
} Collected;

/* The engine's pair callback: appends, checking the order. */
static bool
collect(void *arg, const int64_t *a, const int64_t *b, const double *r,
		int64_t count)
{
	Collected  *c = (Collected *) arg;

	if (c->stop_after > 0 && c->calls >= c->stop_after)
		return false;
	c->calls++;
	if (c->n + count > c->cap)
	{
		c->cap = (c->n + count) * 2;
		c->a = realloc(c->a, sizeof(int64_t) * c->cap);
		c->b = realloc(c->b, sizeof(int64_t) * c->cap);
		c->r = realloc(c->r, sizeof(double) * c->cap);
	}
	for (int64_t i = 0; i < count; i++)
	{
		if (c->n > 0 && !(c->a[c->n - 1] < a[i] ||
						  (c->a[c->n - 1] == a[i] && c->b[c->n - 1] < b[i])))
			c->ordered = false;
		c->a[c->n] = a[i];
		c->b[c->n] = b[i];
		c->r[c->n] = r[i];
		c->n++;
	}
	return true;
}

static void
collected_free(Collected *c)
{
	free(c->a);
	free(c->b);
	free(c->r);
}

/* What one comparison found. */
typedef struct PairCheck
{
	int64_t		missing;		/* reference pairs clearly over t not returned */
	int64_t		extra;			/* returned pairs clearly under t or invalid */
	double		max_err;
	bool		ordered;
	bool		self_ok;		/* a < b for a self correlation */
} PairCheck;

/*
 * Compares returned pairs with the reference matrix ref (x_rows x y_rows)
 * for threshold t; pairs within tol of t may go either way.
 */
static PairCheck
check_pairs(const Collected *c, const double *ref, int64_t xr, int64_t yr,
			bool self, double t, double tol)
{
	PairCheck	pc = {0, 0, 0.0, c->ordered, true};
	uint8_t    *seen = calloc((size_t) xr * yr, 1);

	for (int64_t i = 0; i < c->n; i++)
	{
		const double rr = ref[c->a[i] * yr + c->b[i]];

		if (self && c->a[i] >= c->b[i])
			pc.self_ok = false;
		if (isnan(rr) || fabs(rr) < t - tol)
		{
			pc.extra++;
			continue;
		}
		seen[c->a[i] * yr + c->b[i]] = 1;
		if (fabs(c->r[i] - rr) > pc.max_err)
			pc.max_err = fabs(c->r[i] - rr);
	}
	for (int64_t a = 0; a < xr; a++)
		for (int64_t b = self ? a + 1 : 0; b < yr; b++)
		{
			const double rr = ref[a * yr + b];

			if (!isnan(rr) && fabs(rr) >= t + tol && !seen[a * yr + b])
				pc.missing++;
		}
	free(seen);
	return pc;
}

/*
 * Checks top-k lists against the reference: each entry a valid partner
 * with the reference coefficient, the list ordered by its own keys (ties
 * by smaller partner), as long as min(k, partners), and no partner left
 * out that clearly beats the list's last entry.  Returns the number of
 * series that fail; *max_err the largest coefficient error.
 */
static int64_t
check_top(const int64_t *other, const double *r, int k, OdpPearsonRank rank,
		  const double *ref, int64_t xr, int64_t yr, bool self, double tol,
		  double *max_err)
{
	int64_t		bad = 0;

	*max_err = 0.0;
	for (int64_t a = 0; a < xr; a++)
	{
		const int64_t *o = other + a * k;
		const double *rv = r + a * k;
		int64_t		valid = 0;
		int			len = 0;
		bool		ok = true;

		for (int64_t b = 0; b < yr; b++)
			valid += !(self && b == a) && !isnan(ref[a * yr + b]);
		while (len < k && o[len] >= 0)
			len++;
		for (int q = len; q < k; q++)
			ok &= o[q] == -1;
		ok &= len == (valid < k ? valid : k);
		for (int q = 0; q < len && ok; q++)
		{
			const double rr = o[q] < yr ? ref[a * yr + o[q]] : NAN;
			double		kq;

			ok &= o[q] >= 0 && o[q] < yr && !(self && o[q] == a) && !isnan(rr);
			if (!ok)
				break;
			if (fabs(rv[q] - rr) > *max_err)
				*max_err = fabs(rv[q] - rr);
			ok &= fabs(rv[q] - rr) <= tol;
			for (int p = 0; p < q; p++)
				ok &= o[p] != o[q];
			kq = rank == ODP_PEARSON_RANK_ABS ? -fabs(rv[q]) :
				(rank == ODP_PEARSON_RANK_POSITIVE ? -rv[q] : rv[q]);
			if (q > 0)
			{
				double		kp = rank == ODP_PEARSON_RANK_ABS ? -fabs(rv[q - 1]) :
					(rank == ODP_PEARSON_RANK_POSITIVE ? -rv[q - 1] : rv[q - 1]);

				ok &= kp < kq || (kp == kq && o[q - 1] < o[q]);
			}
		}
		if (ok && len == k)
		{
			const double last = rank == ODP_PEARSON_RANK_ABS ? -fabs(rv[k - 1]) :
				(rank == ODP_PEARSON_RANK_POSITIVE ? -rv[k - 1] : rv[k - 1]);

			for (int64_t b = 0; b < yr && ok; b++)
			{
				const double rr = ref[a * yr + b];
				bool		listed = false;
				double		kb;

				if ((self && b == a) || isnan(rr))
					continue;
				for (int q = 0; q < len; q++)
					listed |= o[q] == b;
				kb = rank == ODP_PEARSON_RANK_ABS ? -fabs(rr) :
					(rank == ODP_PEARSON_RANK_POSITIVE ? -rr : rr);
				ok &= listed || kb >= last - tol;
			}
		}
		bad += !ok;
	}
	return bad;
}

/* Names a path for messages. */
static const char *
path_name(OdpDevice dev)
{
	return dev == ODP_DEVICE_GPU ? "gpu" : "cpu";
}

/* One correlation problem, run on a path with both entry points. */
typedef struct Case
{
	const char *name;
	OdpMatrix64 x;
	OdpMatrix64 y;				/* rows == 0: a self correlation */
	OdpPearsonMethod method;
	int			min_periods;
	double		tol;
	size_t		gpu_limit;		/* bytes, 0 = default */
} Case;

/*
 * Runs pairs at thresholds 0 and 0.3 and top-k for k in {1, 5, 40} in every
 * ranking on dev, checking each against the reference; leaves the pairs at
 * threshold 0 in *all when not NULL (for GPU-vs-CPU comparisons).
 */
static void
run_pearson_case(const Case *cs, OdpDevice dev, const double *ref, Collected *all)
{
	const bool	self = cs->y.rows == 0;
	const OdpMatrix64 *y = self ? &cs->x : &cs->y;
	OdpPearsonProblem p = {&cs->x, self ? NULL : &cs->y, cs->method, cs->min_periods};
	const double thresholds[] = {0.0, 0.3};

	for (size_t t = 0; t < sizeof(thresholds) / sizeof(thresholds[0]); t++)
	{
		Collected	c = {0};
		OdpContext	ctx = make_ctx(dev);
		int64_t		npairs = -1;
		OdpStatus	st;
		PairCheck	pc;

		c.ordered = true;
		ctx.gpu_memory_limit = cs->gpu_limit;
		st = odp_compute_pearson_pairs(&ctx, &p, thresholds[t], collect, &c, &npairs);
		pc = check_pairs(&c, ref, cs->x.rows, y->rows, self, thresholds[t], cs->tol);
		check(st == ODP_OK && npairs == c.n && pc.missing == 0 && pc.extra == 0 &&
			  pc.max_err <= cs->tol && pc.ordered && pc.self_ok,
			  "%s pearson pairs %s |r| >= %.1f: %s %s; %lld pairs (%lld reported), %lld missing, "
			  "%lld extra, max error %.2e, %s, %lld chunks",
			  path_name(dev), cs->name, thresholds[t], odp_status_name(st), ctx.message,
			  (long long) c.n, (long long) npairs, (long long) pc.missing,
			  (long long) pc.extra, pc.max_err, pc.ordered ? "ordered" : "NOT ORDERED",
			  (long long) ctx.chunks);
		if (t == 0 && all != NULL)
			*all = c;
		else
			collected_free(&c);
	}

	for (int ki = 0; ki < 3; ki++)
		for (int rk = 0; rk < 3; rk++)
		{
			/* k = 40 merges more than one 32-entry buffer on the GPU */
			const int	k = ki == 0 ? 1 : (ki == 1 ? 5 : 40);
			const OdpPearsonRank rank = (OdpPearsonRank) rk;
			int64_t    *other = xmalloc(sizeof(int64_t) * (size_t) cs->x.rows * k);
			double	   *r = xmalloc(sizeof(double) * (size_t) cs->x.rows * k);
			OdpContext	ctx = make_ctx(dev);
			OdpStatus	st;
			double		err = 0.0;
			int64_t		bad = -1;

			ctx.gpu_memory_limit = cs->gpu_limit;
			st = odp_compute_pearson_top(&ctx, &p, k, rank, other, r);
			if (st == ODP_OK)
				bad = check_top(other, r, k, rank, ref, cs->x.rows, y->rows, self,
								cs->tol, &err);
			check(st == ODP_OK && bad == 0,
				  "%s pearson top %s k=%d rank=%s: %s %s; %lld series wrong, max error %.2e",
				  path_name(dev), cs->name, k,
				  rank == ODP_PEARSON_RANK_ABS ? "abs" :
				  (rank == ODP_PEARSON_RANK_POSITIVE ? "positive" : "negative"),
				  odp_status_name(st), ctx.message, (long long) bad, err);
			free(other);
			free(r);
		}
}

/* Runs a case on the CPU and, where one is usable, the GPU, and compares them. */
static void
run_case_both(const Case *cs)
{
	const bool	self = cs->y.rows == 0;
	double	   *ref = ref_matrix(&cs->x, self ? &cs->x : &cs->y, cs->method,
								 cs->min_periods);
	Collected	cpu = {0};
	Collected	gpu = {0};

	run_pearson_case(cs, ODP_DEVICE_CPU, ref, &cpu);
	if (gpu_ok)
	{
		double		diff = 0.0;
		bool		same = cpu.n == gpu.n;

		run_pearson_case(cs, ODP_DEVICE_GPU, ref, &gpu);
		same = cpu.n == gpu.n;
		for (int64_t i = 0; same && i < cpu.n; i++)
		{
			same = cpu.a[i] == gpu.a[i] && cpu.b[i] == gpu.b[i];
			if (fabs(cpu.r[i] - gpu.r[i]) > diff)
				diff = fabs(cpu.r[i] - gpu.r[i]);
		}
		check(same && diff <= 1e-12,
			  "gpu vs cpu pearson %s: %lld pairs, same pairs %s, max |r| difference %.2e",
			  cs->name, (long long) cpu.n, same ? "yes" : "NO", diff);
	}
	collected_free(&cpu);
	collected_free(&gpu);
	free(ref);
}

/*
 * Builds and runs a self-correlation case of generated series, under a
 * GPU memory budget of gpu_limit bytes (0: the default); with
 * expect_staged the GPU must stage the series in host memory.
 */
static void
self_case(const char *name, SGen gen, int64_t rows, int dims,
		  OdpPearsonMethod method, double missing, int min_periods,
		  size_t gpu_limit, bool expect_staged)
{
	const int64_t staged_before = gpu_counter(&odp_gpu_pearson_staged_runs);
	Case		cs;
	char		label[160];
	double	   *x = make_series(gen, rows, dims);
	uint8_t    *m = missing > 0 ? make_missing(rows, dims, missing) : NULL;

	memset(&cs, 0, sizeof(cs));
	snprintf(label, sizeof(label), "%s (%s, %lld x %d%s%s)", name, sgen_names[gen],
			 (long long) rows, dims, method == ODP_PEARSON_METHOD_SPEARMAN ? ", spearman" : "",
			 m ? ", missing" : "");
	cs.name = label;
	cs.x.data = x;
	cs.x.missing = m;
	cs.x.rows = rows;
	cs.x.dims = dims;
	cs.method = method;
	cs.min_periods = min_periods;
	cs.tol = m ? TOL_PAIRWISE : TOL_COMPLETE;
	cs.gpu_limit = gpu_limit;
	run_case_both(&cs);
	if (gpu_ok && expect_staged)
		check(gpu_counter(&odp_gpu_pearson_staged_runs) > staged_before,
			  "gpu pearson %s staged its series in host memory (%lld calls)", label,
			  (long long) (gpu_counter(&odp_gpu_pearson_staged_runs) - staged_before));
	free(x);
	free(m);
}

/*
 * Series with level shifts and missing values: the pair's common positions
 * sit on one level of a series that jumps by 1e6, so the pairwise sums
 * cancel and the exact recomputation must decide; some pairs are constant
 * over their common positions (no coefficient) and some have fewer than
 * min_periods of them.
 */
static void
level_shift_case(void)
{
	const int64_t rows = 60;
	const int	dims = 80;
	double	   *x = xmalloc(sizeof(double) * rows * dims);
	uint8_t    *m = xmalloc((size_t) rows * dims);
	Case		cs;

	for (int64_t s = 0; s < rows; s++)
		for (int i = 0; i < dims; i++)
		{
			const size_t e = (size_t) s * dims + i;

			/* first half low, second half 1e6 higher, plus noise */
			x[e] = (i < dims / 2 ? 0.0 : 1e6) + rng_normal();
			switch (s % 5)
			{
				case 0:			/* present only in the second half */
					m[e] = i < dims / 2;
					break;
				case 1:			/* present in the first half and a few after */
					m[e] = i >= dims / 2 + 3;
					break;
				case 2:			/* constant where present */
					x[e] = 5.0;
					m[e] = (rng_next() % 3) == 0;
					break;
				case 3:			/* almost all missing: short overlaps */
					m[e] = (rng_next() % 10) != 0;
					break;
				default:
					m[e] = (rng_next() % 5) == 0;
					break;
			}
		}
	memset(&cs, 0, sizeof(cs));
	cs.name = "level shifts (60 x 80, missing)";
	cs.x.data = x;
	cs.x.missing = m;
	cs.x.rows = rows;
	cs.x.dims = dims;
	cs.method = ODP_PEARSON_METHOD_PEARSON;
	cs.min_periods = 3;
	cs.tol = TOL_PAIRWISE;
	run_case_both(&cs);
	cs.name = "level shifts, min_periods 30";
	cs.min_periods = 30;
	run_case_both(&cs);
	free(x);
	free(m);
}

/* One set against another: random walks against their own sums (indices). */
static void
two_source_case(bool missing)
{
	const int64_t nx = 150;
	const int64_t ny = 23;
	const int	dims = 64;
	double	   *x = make_series(SGEN_WALK, nx, dims);
	double	   *y = xmalloc(sizeof(double) * ny * dims);
	uint8_t    *mx = missing ? make_missing(nx, dims, 0.1) : NULL;
	Case		cs;

	for (int64_t s = 0; s < ny; s++)
		for (int i = 0; i < dims; i++)
		{
			double		v = 0.0;

			for (int64_t t = s; t < nx; t += ny)
				v += x[t * dims + i];
			y[s * dims + i] = v;
		}
	memset(&cs, 0, sizeof(cs));
	cs.name = missing ? "two sources, missing in one" : "two sources (walks vs their sums)";
	cs.x.data = x;
	cs.x.missing = mx;
	cs.x.rows = nx;
	cs.x.dims = dims;
	cs.y.data = y;
	cs.y.rows = ny;
	cs.y.dims = dims;
	cs.method = ODP_PEARSON_METHOD_PEARSON;
	cs.min_periods = 2;
	cs.tol = missing ? TOL_PAIRWISE : TOL_COMPLETE;
	run_case_both(&cs);
	if (!missing)
	{
		cs.name = "two sources, spearman";
		cs.method = ODP_PEARSON_METHOD_SPEARMAN;
		run_case_both(&cs);
	}
	free(x);
	free(y);
	free(mx);
}

/* Counts emit calls and refuses after stop_after; polls cancel after n. */
typedef struct PearsonCancel
{
	int			polls;
	int			at;
} PearsonCancel;

static bool
pearson_cancel_cb(void *arg)
{
	PearsonCancel *c = (PearsonCancel *) arg;

	return ++c->polls >= c->at;
}

/* Cancellation, a refusing receiver, and a call after both. */
static void
pearson_cancel_tests(OdpDevice dev)
{
	const int64_t rows = 1500;
	const int	dims = 200;
	double	   *x = make_series(SGEN_NORMAL, rows, dims);
	OdpMatrix64 m = {x, NULL, rows, dims};
	OdpPearsonProblem p = {&m, NULL, ODP_PEARSON_METHOD_PEARSON, 2};
	PearsonCancel	cc = {0, 2};
	Collected	c = {0};
	OdpContext	ctx = make_ctx(dev);
	int64_t		npairs = 0;
	int64_t    *other = xmalloc(sizeof(int64_t) * rows * 3);
	double	   *r = xmalloc(sizeof(double) * rows * 3);
	OdpStatus	st;

	ctx.cancel = pearson_cancel_cb;
	ctx.cancel_arg = &cc;
	/* a small budget: many tiles, so there is a second poll */
	ctx.gpu_memory_limit = (size_t) 48 << 20;
	st = odp_compute_pearson_pairs(&ctx, &p, 0.0, collect, &c, &npairs);
	check(st == ODP_ERR_CANCELLED || (st == ODP_OK && cc.polls < 2),
		  "%s pearson pairs cancel at poll 2: %s %s (%d polls)", path_name(dev),
		  odp_status_name(st), ctx.message, cc.polls);
	collected_free(&c);

	memset(&c, 0, sizeof(c));
	c.stop_after = 1;
	ctx = make_ctx(dev);
	st = odp_compute_pearson_pairs(&ctx, &p, 0.0, collect, &c, &npairs);
	check(st == ODP_ERR_CANCELLED && c.calls == 1 && npairs == c.n,
		  "%s pearson pairs: a receiver that refuses stops the call: %s %s (%lld pairs taken)",
		  path_name(dev), odp_status_name(st), ctx.message, (long long) c.n);
	collected_free(&c);

	cc.polls = 0;
	ctx = make_ctx(dev);
	ctx.cancel = pearson_cancel_cb;
	ctx.cancel_arg = &cc;
	st = odp_compute_pearson_top(&ctx, &p, 3, ODP_PEARSON_RANK_ABS, other, r);
	check(st == ODP_ERR_CANCELLED || (st == ODP_OK && cc.polls < 2),
		  "%s pearson top cancel at poll 2: %s %s", path_name(dev), odp_status_name(st),
		  ctx.message);
	ctx = make_ctx(dev);
	st = odp_compute_pearson_top(&ctx, &p, 3, ODP_PEARSON_RANK_ABS, other, r);
	check(st == ODP_OK, "%s pearson top after a cancel: %s %s", path_name(dev),
		  odp_status_name(st), ctx.message);
	free(other);
	free(r);
	free(x);
}

/* Argument errors, each ODP_ERR_INVALID_ARGUMENT. */
static void
pearson_argument_tests(OdpDevice dev)
{
	double		x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13};
	uint8_t		miss[12] = {0};
	OdpMatrix64 m = {x, NULL, 4, 3};
	OdpMatrix64 m2 = {x, NULL, 3, 4};
	OdpMatrix64 one = {x, NULL, 12, 1};
	OdpMatrix64 mm = {x, miss, 4, 3};
	int64_t		other[8];
	double		r[8];
	int64_t		npairs;
	Collected	c = {0};
	struct
	{
		const char *what;
		OdpPearsonProblem p;
		double		t;
		int			k;
		int			rank;
	}			cases[] = {
		{"series of one value", {&one, NULL, ODP_PEARSON_METHOD_PEARSON, 2}, 0.0, 1, 0},
		{"different lengths", {&m, &m2, ODP_PEARSON_METHOD_PEARSON, 2}, 0.0, 1, 0},
		{"spearman with missing flags", {&mm, NULL, ODP_PEARSON_METHOD_SPEARMAN, 2}, 0.0, 1, 0},
		{"min_periods 0", {&m, NULL, ODP_PEARSON_METHOD_PEARSON, 0}, 0.0, 1, 0},
		{"unknown method", {&m, NULL, (OdpPearsonMethod) 7, 2}, 0.0, 1, 0},
		{"min_abs_r 1.5", {&m, NULL, ODP_PEARSON_METHOD_PEARSON, 2}, 1.5, 1, 0},
		{"min_abs_r NaN", {&m, NULL, ODP_PEARSON_METHOD_PEARSON, 2}, NAN, 1, 0},
		{"k = 0", {&m, NULL, ODP_PEARSON_METHOD_PEARSON, 2}, 0.0, 0, 0},
		{"unknown ranking", {&m, NULL, ODP_PEARSON_METHOD_PEARSON, 2}, 0.0, 1, 9},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		OdpContext	ctx = make_ctx(dev);
		OdpStatus	st;

		if (i < 7)
			st = odp_compute_pearson_pairs(&ctx, &cases[i].p, cases[i].t, collect, &c, &npairs);
		else
			st = odp_compute_pearson_top(&ctx, &cases[i].p, cases[i].k,
										 (OdpPearsonRank) cases[i].rank, other, r);
		check(st == ODP_ERR_INVALID_ARGUMENT && ctx.message[0] != '\0',
			  "%s pearson rejects %s: %s \"%s\"", path_name(dev), cases[i].what,
			  odp_status_name(st), ctx.message);
	}
	collected_free(&c);
}

/* A self correlation with one series, and with two: no pair, one pair. */
static void
pearson_small_tests(OdpDevice dev)
{
	double		x[6] = {1, 2, 4, 2, 4, 8};
	OdpMatrix64 m1 = {x, NULL, 1, 3};
	OdpMatrix64 m2 = {x, NULL, 2, 3};
	OdpPearsonProblem p1 = {&m1, NULL, ODP_PEARSON_METHOD_PEARSON, 2};
	OdpPearsonProblem p2 = {&m2, NULL, ODP_PEARSON_METHOD_PEARSON, 2};
	Collected	c = {0};
	OdpContext	ctx = make_ctx(dev);
	int64_t		npairs = -1;
	int64_t		other[4];
	double		r[4];
	OdpStatus	st;

	c.ordered = true;
	st = odp_compute_pearson_pairs(&ctx, &p1, 0.0, collect, &c, &npairs);
	check(st == ODP_OK && npairs == 0, "%s pearson of one series: no pairs (%s)",
		  path_name(dev), odp_status_name(st));
	ctx = make_ctx(dev);
	st = odp_compute_pearson_pairs(&ctx, &p2, 0.0, collect, &c, &npairs);
	check(st == ODP_OK && npairs == 1 && c.a[0] == 0 && c.b[0] == 1 && fabs(c.r[0] - 1.0) <= 4e-16,
		  "%s pearson of x and 2x: one pair, r = 1 (%s, r = %.17g)", path_name(dev),
		  odp_status_name(st), c.n ? c.r[0] : NAN);
	ctx = make_ctx(dev);
	st = odp_compute_pearson_top(&ctx, &p2, 2, ODP_PEARSON_RANK_ABS, other, r);
	check(st == ODP_OK && other[0] == 1 && other[1] == -1 && fabs(r[0] - 1.0) <= 4e-16,
		  "%s pearson top of two series, k = 2: one partner, then -1 (%s)",
		  path_name(dev), odp_status_name(st));
	collected_free(&c);
}

/* See test_util.h. */
void
run_pearson_tests(void)
{
	/* a budget that keeps the series off the GPU: staged panels */
	const size_t staged = (size_t) 40 << 20;

	self_case("random", SGEN_NORMAL, 200, 50, ODP_PEARSON_METHOD_PEARSON, 0, 2, 0, false);
	self_case("random, N = 2", SGEN_NORMAL, 40, 2, ODP_PEARSON_METHOD_PEARSON, 0, 2, 0, false);
	self_case("random walks", SGEN_WALK, 120, 300, ODP_PEARSON_METHOD_PEARSON, 0, 2, 0, false);
	self_case("huge offsets", SGEN_OFFSET, 80, 500, ODP_PEARSON_METHOD_PEARSON, 0, 2, 0, false);
	self_case("r = 1, -1, constants", SGEN_STRUCTURED, 120, 40, ODP_PEARSON_METHOD_PEARSON, 0, 2, 0, false);
	self_case("spearman ties", SGEN_TIES, 100, 60, ODP_PEARSON_METHOD_SPEARMAN, 0, 2, 0, false);
	self_case("spearman", SGEN_NORMAL, 90, 33, ODP_PEARSON_METHOD_SPEARMAN, 0, 2, 0, false);
	self_case("spearman, structured", SGEN_STRUCTURED, 60, 25, ODP_PEARSON_METHOD_SPEARMAN, 0, 2, 0, false);
	self_case("pairwise", SGEN_NORMAL, 150, 40, ODP_PEARSON_METHOD_PEARSON, 0.2, 2, 0, false);
	self_case("pairwise, offsets", SGEN_OFFSET, 60, 100, ODP_PEARSON_METHOD_PEARSON, 0.3, 2, 0, false);
	self_case("pairwise, structured", SGEN_STRUCTURED, 90, 30, ODP_PEARSON_METHOD_PEARSON, 0.1, 5, 0, false);
	self_case("pairwise, sparse", SGEN_WALK, 80, 30, ODP_PEARSON_METHOD_PEARSON, 0.8, 2, 0, false);
	level_shift_case();
	two_source_case(false);
	two_source_case(true);
	if (gpu_ok)
	{
		/*
		 * staged panels on the GPU: series that do not fit beside the
		 * cuBLAS workspace in the budget (the CPU as is)
		 */
		self_case("staged", SGEN_NORMAL, 700, 1500, ODP_PEARSON_METHOD_PEARSON, 0, 2, staged, true);
		self_case("staged, pairwise", SGEN_NORMAL, 400, 1200, ODP_PEARSON_METHOD_PEARSON, 0.1, 2, staged, true);
		self_case("staged, spearman", SGEN_TIES, 500, 1500, ODP_PEARSON_METHOD_SPEARMAN, 0, 2, staged, true);
		/* several row blocks of resident series */
		self_case("many tiles", SGEN_WALK, 2500, 700, ODP_PEARSON_METHOD_PEARSON, 0, 2,
				  (size_t) 64 << 20, false);
	}
	pearson_small_tests(ODP_DEVICE_CPU);
	pearson_argument_tests(ODP_DEVICE_CPU);
	pearson_cancel_tests(ODP_DEVICE_CPU);
	if (gpu_ok)
	{
		pearson_small_tests(ODP_DEVICE_GPU);
		pearson_argument_tests(ODP_DEVICE_GPU);
		pearson_cancel_tests(ODP_DEVICE_GPU);
	}
}
