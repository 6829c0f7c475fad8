/*-------------------------------------------------------------------------
 *
 * test_intervals.c
 *	  Engine tests of the region matching: both paths against a naive
 *	  all-pairs reference that compares bounds as PostgreSQL's
 *	  range_cmp_bounds and box_ov do, on random regions, touching bounds
 *	  of every inclusivity, infinite and empty intervals, identical
 *	  regions, one region containing all others, box dimensions with
 *	  near-touching coordinates, keys that span the whole 64-bit range,
 *	  d = 1 .. 4, one set and two; chunked runs; counts; argument errors;
 *	  cancellation.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_intervals.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_intervals.h"
#include "include/odp_order.h"
#include "test_util.h"

/* Chunking hooks of the driver (intervals.c). */
extern int64_t odp_iv_test_capacity;
extern int64_t odp_iv_test_rows;
extern bool odp_iv_test_search_ranks;

/* GPU test counter (intervals_gpu.cu); weak: absent without CUDA. */
extern int64_t odp_gpu_iv_loads __attribute__((weak));

/* Kinds of generated regions. */
typedef enum IGen
{
	IGEN_RANDOM,				/* small integer bounds, random flags */
	IGEN_TOUCHING,				/* bounds on a coarse grid: many meet */
	IGEN_IDENTICAL,				/* every region the same */
	IGEN_CONTAINER,				/* random, plus an all-infinite region */
	IGEN_WIDE,					/* integers over the whole int64 range,
								 * excluded bounds: ranked positions */
	IGEN_FLOAT,					/* doubles, ties and -0 */
	IGEN_BOX,					/* doubles 1e-6 apart: box && territory */
	IGEN_WIDE_TIES				/* a few integers from both ends of int64:
								 * ranked positions, heavy ties */
} IGen;

static const char *const igen_names[] = {
	"random", "touching", "identical", "container", "wide", "float", "box",
	"wide ties"
};

/* The keys IGEN_WIDE_TIES draws from, ascending. */
static const int64_t wide_ties[] = {
	INT64_MIN, INT64_MIN + 1, -7, -1, 0, 1, 7, INT64_MAX - 1, INT64_MAX
};

/* A set of regions the test owns. */
typedef struct TRegions
{
	OdpRegions	r;
	uint64_t   *lower;
	uint64_t   *upper;
	uint8_t    *flags;
} TRegions;

static void
tr_free(TRegions *t)
{
	free(t->lower);
	free(t->upper);
	free(t->flags);
	memset(t, 0, sizeof(*t));
}

/* Random flags: mostly plain, some excluded, infinite or empty bounds. */
static uint8_t
random_flags(void)
{
	uint64_t	x = rng_next() % 100;
	uint8_t		f = 0;

	if (x < 25)
		f |= ODP_BOUND_LOWER_EXCLUSIVE;
	if (x % 7 < 2)
		f |= ODP_BOUND_UPPER_EXCLUSIVE;
	if (x == 30 || x == 31)
		f |= ODP_BOUND_LOWER_INFINITE;
	if (x == 32 || x == 33)
		f |= ODP_BOUND_UPPER_INFINITE;
	if (x == 40)
		f |= ODP_BOUND_EMPTY;
	return f;
}

/* rows x dims regions of kind gen; flagged: with random flags. */
static TRegions
make_regions(IGen gen, int64_t rows, int dims, bool flagged)
{
	TRegions	t;
	size_t		cells = (size_t) rows * dims;

	memset(&t, 0, sizeof(t));
	t.lower = xmalloc(sizeof(uint64_t) * (cells > 0 ? cells : 1));
	t.upper = xmalloc(sizeof(uint64_t) * (cells > 0 ? cells : 1));
	if (flagged)
		t.flags = xmalloc(cells > 0 ? cells : 1);
	for (size_t c = 0; c < cells; c++)
	{
		int64_t		lo = 0,
					hi = 0;
		double		dlo = 0,
					dhi = 0;
		bool		is_float = gen == IGEN_FLOAT || gen == IGEN_BOX;

		switch (gen)
		{
			case IGEN_RANDOM:
			case IGEN_CONTAINER:
				lo = (int64_t) (rng_next() % 200) - 100;
				hi = lo + (int64_t) (rng_next() % 12);
				break;
			case IGEN_TOUCHING:
				lo = (int64_t) (rng_next() % 10) * 10;
				hi = lo + (int64_t) (rng_next() % 3) * 10;
				break;
			case IGEN_IDENTICAL:
				lo = 5;
				hi = 9;
				break;
			case IGEN_WIDE:
				lo = (int64_t) rng_next();
				hi = lo + (int64_t) (rng_next() >> 1);
				if (hi < lo)
				{
					int64_t		x = lo;

					lo = hi;
					hi = x;
				}
				if (rng_next() % 4 == 0)
					hi = lo + (int64_t) (rng_next() % 3);
				break;
			case IGEN_WIDE_TIES:
				{
					int			n = (int) (sizeof(wide_ties) / sizeof(wide_ties[0]));
					int			i = (int) (rng_next() % n);
					int			j = i + (int) (rng_next() % 3);

					lo = wide_ties[i];
					hi = wide_ties[j < n ? j : n - 1];
				}
				break;
			case IGEN_FLOAT:
				dlo = (double) (int) (rng_next() % 40) * 0.25 - 5.0;
				dhi = dlo + (double) (rng_next() % 5) * 0.25;
				if (dlo == 0.0 && rng_next() % 2)
					dlo = -0.0;
				break;
			case IGEN_BOX:
				/* coordinates on a 1e-6 grid, with jitter across EPSILON */
				dlo = (double) (int) (rng_next() % 60) * 1e-6 + 1.0;
				dhi = dlo + (double) (rng_next() % 4) * 1e-6;
				dlo += ((double) (rng_next() % 3) - 1.0) * 1e-13;
				if (dhi < dlo)
					dhi = dlo;
				break;
		}
		if (is_float)
		{
			t.lower[c] = odp_order_float64(dlo);
			t.upper[c] = odp_order_float64(dhi);
		}
		else
		{
			t.lower[c] = odp_order_int64(lo);
			t.upper[c] = odp_order_int64(hi);
		}
		if (flagged)
			t.flags[c] = random_flags();
	}
	if (gen == IGEN_CONTAINER && rows > 3)
		for (int d = 0; d < dims; d++)
			t.flags[3 * dims + d] = ODP_BOUND_LOWER_INFINITE | ODP_BOUND_UPPER_INFINITE;
	t.r.lower = t.lower;
	t.r.upper = t.upper;
	t.r.flags = t.flags;
	t.r.rows = rows;
	t.r.dims = dims;
	return t;
}

/* ---- the reference: PostgreSQL's comparisons, written out ---- */

/* range_cmp_bounds(lower L, upper U) <= 0, on keys and flags. */
static bool
ref_lower_meets_upper(uint64_t lk, uint8_t lf, uint64_t uk, uint8_t uf)
{
	if ((lf & ODP_BOUND_LOWER_INFINITE) || (uf & ODP_BOUND_UPPER_INFINITE))
		return true;
	if (lk != uk)
		return lk < uk;
	return !(lf & ODP_BOUND_LOWER_EXCLUSIVE) && !(uf & ODP_BOUND_UPPER_EXCLUSIVE);
}

/* FPle(A, B) of utils/geo_decls.h. */
static bool
ref_fple(double a, double b)
{
	return a <= b + 1.0E-06;
}

/* Whether region i of x has an empty interval. */
static bool
ref_empty(const OdpRegions *x, int64_t i, const uint8_t *box)
{
	for (int d = 0; d < x->dims; d++)
	{
		int64_t		c = i * x->dims + d;
		uint8_t		f = x->flags ? x->flags[c] : 0;

		if (box != NULL && box[d])
		{
			if (!ref_fple(odp_order_float64_value(x->lower[c]),
						  odp_order_float64_value(x->upper[c])))
				return true;
			continue;
		}
		if ((f & ODP_BOUND_EMPTY) || !ref_lower_meets_upper(x->lower[c], f, x->upper[c], f))
			return true;
	}
	return false;
}

/* Whether region i of x and region j of y overlap. */
static bool
ref_overlap(const OdpRegions *x, int64_t i, const OdpRegions *y, int64_t j,
			const uint8_t *box)
{
	if (ref_empty(x, i, box) || ref_empty(y, j, box))
		return false;
	for (int d = 0; d < x->dims; d++)
	{
		int64_t		ci = i * x->dims + d,
					cj = j * y->dims + d;
		uint8_t		fi = x->flags ? x->flags[ci] : 0;
		uint8_t		fj = y->flags ? y->flags[cj] : 0;

		if (box != NULL && box[d])
		{
			if (!ref_fple(odp_order_float64_value(x->lower[ci]), odp_order_float64_value(y->upper[cj])) ||
				!ref_fple(odp_order_float64_value(y->lower[cj]), odp_order_float64_value(x->upper[ci])))
				return false;
			continue;
		}
		if (!ref_lower_meets_upper(x->lower[ci], fi, y->upper[cj], fj) ||
			!ref_lower_meets_upper(y->lower[cj], fj, x->upper[ci], fi))
			return false;
	}
	return true;
}

/* Pairs as two growing arrays. */
typedef struct PairList
{
	int64_t    *a;
	int64_t    *b;
	int64_t		n;
	int64_t		cap;
	int64_t		calls;
	int64_t		stop_after;		/* > 0: the receiver refuses this call */
} PairList;

static void
pl_add(PairList *pl, int64_t a, int64_t b)
{
	if (pl->n == pl->cap)
	{
		pl->cap = pl->cap ? 2 * pl->cap : 1024;
		pl->a = realloc(pl->a, sizeof(int64_t) * pl->cap);
		pl->b = realloc(pl->b, sizeof(int64_t) * pl->cap);
		if (pl->a == NULL || pl->b == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
	}
	pl->a[pl->n] = a;
	pl->b[pl->n] = b;
	pl->n++;
}

static void
pl_free(PairList *pl)
{
	free(pl->a);
	free(pl->b);
	memset(pl, 0, sizeof(*pl));
}

/* The engine's receiver: collects pairs; may refuse a call. */
static bool
collect(void *arg, const int64_t *a, const int64_t *b, int64_t count)
{
	PairList   *pl = (PairList *) arg;

	if (pl->stop_after > 0 && ++pl->calls >= pl->stop_after)
		return false;
	for (int64_t i = 0; i < count; i++)
		pl_add(pl, a[i], b[i]);
	return true;
}

/* Every overlapping pair, in (a, b) order (one set: a < b). */
static void
reference(const OdpRegions *x, const OdpRegions *y, const uint8_t *box,
		  PairList *out)
{
	const OdpRegions *t = y != NULL ? y : x;

	for (int64_t i = 0; i < x->rows; i++)
		for (int64_t j = y != NULL ? 0 : i + 1; j < t->rows; j++)
			if (ref_overlap(x, i, t, j, box))
				pl_add(out, i, j);
}

/* Whether two pair lists are the same sequence; first difference in *at. */
static bool
same_pairs(const PairList *p, const PairList *q, int64_t *at)
{
	int64_t		n = p->n < q->n ? p->n : q->n;

	for (int64_t i = 0; i < n; i++)
		if (p->a[i] != q->a[i] || p->b[i] != q->b[i])
		{
			*at = i;
			return false;
		}
	*at = n;
	return p->n == q->n;
}

/* Runs pairs and count on dev and compares both with the reference. */
static void
run_one(const char *label, OdpDevice dev, const OdpRegions *x,
		const OdpRegions *y, const uint8_t *box, const PairList *ref,
		size_t gpu_limit)
{
	OdpContext	ctx = make_ctx(dev);
	OdpIntervalProblem p;
	OdpIntervalStats st;
	PairList	got;
	int64_t		npairs = -1,
				ncount = -1,
				at = 0;
	OdpStatus	s1,
				s2;
	const char *path = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";

	memset(&got, 0, sizeof(got));
	p.a = x;
	p.b = y;
	p.compare = box;
	ctx.gpu_memory_limit = gpu_limit;
	s1 = odp_compute_interval_pairs(&ctx, &p, collect, &got, &npairs, &st);
	check(s1 == ODP_OK && npairs == got.n && same_pairs(&got, ref, &at),
		  "%s %s: %lld pairs as the reference (%lld), sweep %d, candidates %lld, runs %d%s%s",
		  path, label, (long long) got.n, (long long) ref->n, (int) st.sweep_dim,
		  (long long) st.candidates, (int) st.runs,
		  s1 == ODP_OK ? "" : ": ", s1 == ODP_OK ? "" : ctx.message);
	if (s1 == ODP_OK && !same_pairs(&got, ref, &at))
		printf("   first difference at %lld: got (%lld, %lld), reference (%lld, %lld)\n",
			   (long long) at,
			   (long long) (at < got.n ? got.a[at] : -1), (long long) (at < got.n ? got.b[at] : -1),
			   (long long) (at < ref->n ? ref->a[at] : -1), (long long) (at < ref->n ? ref->b[at] : -1));
	ctx = make_ctx(dev);
	ctx.gpu_memory_limit = gpu_limit;
	s2 = odp_compute_interval_count(&ctx, &p, &ncount, NULL);
	check(s2 == ODP_OK && ncount == ref->n, "%s %s: count %lld (reference %lld)%s%s",
		  path, label, (long long) ncount, (long long) ref->n,
		  s2 == ODP_OK ? "" : ": ", s2 == ODP_OK ? "" : ctx.message);
	pl_free(&got);
}

/* One case: generate, reference, then every path (and chunked runs). */
static void
run_case(IGen gen, int64_t na, int64_t nb, int dims, bool flagged, bool self)
{
	TRegions	x = make_regions(gen, na, dims, flagged);
	TRegions	y;
	uint8_t		box[8] = {0};
	const uint8_t *boxp = NULL;
	PairList	ref;
	char		label[200];

	memset(&y, 0, sizeof(y));
	memset(&ref, 0, sizeof(ref));
	if (!self)
		y = make_regions(gen, nb, dims, flagged);
	if (gen == IGEN_BOX)
	{
		for (int d = 0; d < dims && d < 8; d++)
			box[d] = ODP_INTERVAL_BOX;
		boxp = box;
	}
	reference(&x.r, self ? NULL : &y.r, boxp, &ref);
	snprintf(label, sizeof(label), "%s d=%d %s %lldx%lld%s", igen_names[gen], dims,
			 self ? "one set" : "two sets", (long long) na, (long long) (self ? na : nb),
			 flagged ? " flagged" : "");
	run_one(label, ODP_DEVICE_CPU, &x.r, self ? NULL : &y.r, boxp, &ref, 0);
	if (gpu_ok)
		run_one(label, ODP_DEVICE_GPU, &x.r, self ? NULL : &y.r, boxp, &ref, 0);

	/* chunked: small runs and loads, few pairs per run */
	{
		char		chunked[260];

		snprintf(chunked, sizeof(chunked), "%s, chunked", label);
		odp_iv_test_rows = na / 3 + 1;
		odp_iv_test_capacity = ref.n / 4 + 1;
		run_one(chunked, ODP_DEVICE_CPU, &x.r, self ? NULL : &y.r, boxp, &ref, 0);
		if (gpu_ok)
			run_one(chunked, ODP_DEVICE_GPU, &x.r, self ? NULL : &y.r, boxp, &ref, 0);
		odp_iv_test_rows = 0;
		odp_iv_test_capacity = 0;
	}
	/* the GPU's own plan under a small budget: ranges of both sides */
	if (gpu_ok && na >= 3000)
	{
		char		staged[260];
		int64_t		loads = gpu_counter(&odp_gpu_iv_loads);

		snprintf(staged, sizeof(staged), "%s, 256 kB of GPU memory", label);
		run_one(staged, ODP_DEVICE_GPU, &x.r, self ? NULL : &y.r, boxp, &ref, (size_t) 1 << 18);
		check(gpu_counter(&odp_gpu_iv_loads) - loads > 2,
			  "gpu %s: %lld loads of updates under 256 kB", label,
			  (long long) (gpu_counter(&odp_gpu_iv_loads) - loads));
	}
	pl_free(&ref);
	tr_free(&x);
	tr_free(&y);
}

/* Hand-made cases of PostgreSQL's && on ranges, with known answers. */
static void
hand_cases(OdpDevice dev)
{
	/* [1,2) vs [2,3): no; [1,2] vs [2,3]: yes; (1,2] vs [0,1]: no;
	 * (,5) vs [4,4]: yes; [3,3) empty vs everything: no; (2,3) vs (2,3): yes */
	static const struct
	{
		int64_t		alo,
					ahi;
		uint8_t		af;
		int64_t		blo,
					bhi;
		uint8_t		bf;
		bool		overlap;
	}			cases[] = {
		{1, 2, ODP_BOUND_UPPER_EXCLUSIVE, 2, 3, ODP_BOUND_UPPER_EXCLUSIVE, false},
		{1, 2, 0, 2, 3, 0, true},
		{1, 2, ODP_BOUND_LOWER_EXCLUSIVE, 0, 1, 0, false},
		{0, 5, ODP_BOUND_LOWER_INFINITE | ODP_BOUND_UPPER_EXCLUSIVE, 4, 4, 0, true},
		{3, 3, ODP_BOUND_EMPTY, -100, 100, 0, false},
		{2, 3, ODP_BOUND_LOWER_EXCLUSIVE | ODP_BOUND_UPPER_EXCLUSIVE,
		 2, 3, ODP_BOUND_LOWER_EXCLUSIVE | ODP_BOUND_UPPER_EXCLUSIVE, true},
		{2, 3, ODP_BOUND_LOWER_EXCLUSIVE | ODP_BOUND_UPPER_EXCLUSIVE, 3, 4, 0, false},
		{2, 3, ODP_BOUND_LOWER_EXCLUSIVE, 3, 4, 0, true},
		{INT64_MAX, 0, ODP_BOUND_LOWER_EXCLUSIVE | ODP_BOUND_UPPER_INFINITE,
		 INT64_MAX, 0, ODP_BOUND_LOWER_EXCLUSIVE | ODP_BOUND_UPPER_INFINITE, true},
		{INT64_MIN, INT64_MIN, 0, 0, INT64_MIN, ODP_BOUND_LOWER_INFINITE, true},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		uint64_t	al = odp_order_int64(cases[c].alo),
					ah = odp_order_int64(cases[c].ahi);
		uint64_t	bl = odp_order_int64(cases[c].blo),
					bh = odp_order_int64(cases[c].bhi);
		OdpRegions	a = {&al, &ah, &cases[c].af, 1, 1};
		OdpRegions	b = {&bl, &bh, &cases[c].bf, 1, 1};
		OdpIntervalProblem p = {&a, &b, NULL};
		OdpContext	ctx = make_ctx(dev);
		int64_t		n = -1;
		OdpStatus	st = odp_compute_interval_count(&ctx, &p, &n, NULL);

		check(st == ODP_OK && n == (cases[c].overlap ? 1 : 0),
			  "%s hand case %d: overlap %s (expected %s)",
			  dev == ODP_DEVICE_GPU ? "gpu" : "cpu", (int) c,
			  n == 1 ? "yes" : "no", cases[c].overlap ? "yes" : "no");
	}
}

/* Bad arguments get INVALID_ARGUMENT with a message. */
static void
argument_tests(OdpDevice dev)
{
	uint64_t	k[2] = {1, 2};
	uint8_t		flag = ODP_BOUND_LOWER_EXCLUSIVE;
	uint8_t		cmp = ODP_INTERVAL_BOX;
	uint8_t		badcmp = 7;
	OdpRegions	a1 = {k, k + 1, NULL, 1, 1};
	OdpRegions	a2 = {k, k, NULL, 1, 2};
	OdpRegions	af = {k, k + 1, &flag, 1, 1};
	OdpRegions	a0 = {k, k, NULL, 1, 0};
	OdpRegions	an = {k, k, NULL, -1, 1};
	const char *path = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";
	struct
	{
		const char *what;
		OdpIntervalProblem p;
	}			cases[] = {
		{"dimensions differ", {&a1, &a2, NULL}},
		{"zero dimensions", {&a0, NULL, NULL}},
		{"negative rows", {&an, NULL, NULL}},
		{"box with flags", {&af, NULL, &cmp}},
		{"unknown comparison", {&a1, NULL, &badcmp}},
		{"missing regions", {NULL, NULL, NULL}},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		OdpContext	ctx = make_ctx(dev);
		int64_t		n = 0;
		OdpStatus	st = odp_compute_interval_count(&ctx, &cases[c].p, &n, NULL);

		check(st == ODP_ERR_INVALID_ARGUMENT && ctx.message[0] != '\0',
			  "%s arguments, %s: %s \"%s\"", path, cases[c].what,
			  odp_status_name(st), ctx.message);
	}
	{
		OdpContext	ctx = make_ctx(dev);
		OdpIntervalProblem p = {&a1, NULL, NULL};
		int64_t		n = 0;
		OdpStatus	st = odp_compute_interval_pairs(&ctx, &p, NULL, NULL, &n, NULL);

		check(st == ODP_ERR_INVALID_ARGUMENT, "%s arguments, no receiver: %s", path,
			  odp_status_name(st));
	}
	{
		OdpContext	ctx = make_ctx(dev);
		OdpRegions	e = {NULL, NULL, NULL, 0, 3};
		OdpIntervalProblem p = {&e, &e, NULL};
		int64_t		n = -1;
		OdpStatus	st = odp_compute_interval_count(&ctx, &p, &n, NULL);

		check(st == ODP_OK && n == 0, "%s no regions: %s, %lld pairs", path,
			  odp_status_name(st), (long long) n);
	}
}

/* Stops after a number of polls. */
typedef struct Canceller
{
	int			polls;
	int			stop_at;
} Canceller;

static bool
cancel_after(void *arg)
{
	Canceller  *c = (Canceller *) arg;

	return ++c->polls >= c->stop_at;
}

/* A cancel, and a receiver that refuses, end the call cleanly. */
static void
cancel_tests(OdpDevice dev)
{
	TRegions	x = make_regions(IGEN_TOUCHING, 3000, 2, false);
	OdpIntervalProblem p = {&x.r, NULL, NULL};
	const char *path = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";

	for (int stop_at = 1; stop_at <= 3; stop_at++)
	{
		OdpContext	ctx = make_ctx(dev);
		Canceller	c = {0, stop_at};
		PairList	pl;
		int64_t		n = 0;
		OdpStatus	st;

		memset(&pl, 0, sizeof(pl));
		ctx.cancel = cancel_after;
		ctx.cancel_arg = &c;
		st = odp_compute_interval_pairs(&ctx, &p, collect, &pl, &n, NULL);
		check(st == ODP_ERR_CANCELLED, "%s cancel at poll %d: %s %s (%d polls)",
			  path, stop_at, odp_status_name(st), ctx.message, c.polls);
		pl_free(&pl);
	}
	{
		OdpContext	ctx = make_ctx(dev);
		PairList	pl;
		int64_t		n = 0;
		OdpStatus	st;

		memset(&pl, 0, sizeof(pl));
		pl.stop_after = 2;
		st = odp_compute_interval_pairs(&ctx, &p, collect, &pl, &n, NULL);
		check(st == ODP_ERR_CANCELLED && pl.n == 65536,
			  "%s a receiver that refuses stops the call: %s after %lld pairs",
			  path, odp_status_name(st), (long long) pl.n);
		pl_free(&pl);
	}
	{
		OdpContext	ctx = make_ctx(dev);
		int64_t		n = 0;
		OdpStatus	st = odp_compute_interval_count(&ctx, &p, &n, NULL);

		check(st == ODP_OK && n > 0, "%s after a cancel: %s, %lld pairs", path,
			  odp_status_name(st), (long long) n);
	}
	tr_free(&x);
}

/*
 * The preparation's passes split both sides into tasks of 65536 rows
 * (intervals_prep.c): sides of several tasks, ranked and heavily tied
 * bounds, empty regions in every task, on one thread and on many, with
 * ranks by number and by search, give the reference's pairs; one set,
 * too large for the reference, gives the same count every way.  In two
 * dimensions the one set is the first 80,000 rows (two tasks still): all
 * 140,000 touching boxes are 3.6e8 pairs, 10 s a way on the CPU.
 */
static void
prep_tests(OdpDevice dev)
{
	static const struct
	{
		IGen		gen;
		int			dims;
	}			cases[] = {
		{IGEN_RANDOM, 1}, {IGEN_TOUCHING, 2}, {IGEN_WIDE, 1},
		{IGEN_WIDE_TIES, 1}, {IGEN_WIDE_TIES, 2},
	};
	const char *path = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		TRegions	x = make_regions(cases[c].gen, 140000, cases[c].dims, true);
		TRegions	y = make_regions(cases[c].gen, 150, cases[c].dims, true);
		PairList	ref;
		int64_t		first = -1;

		memset(&ref, 0, sizeof(ref));
		reference(&x.r, &y.r, NULL, &ref);
		for (int way = 0; way < 4; way++)
		{
			const int	threads = way == 0 ? 1 : (way == 1 ? 3 : 8);
			OdpContext	ctx = make_ctx(dev);
			OdpIntervalProblem p = {&x.r, &y.r, NULL};
			OdpRegions	one = x.r;
			OdpIntervalProblem q = {&one, NULL, NULL};
			PairList	got;
			int64_t		n = -1,
						count = -1,
						at = 0;
			OdpStatus	st;

			memset(&got, 0, sizeof(got));
			if (cases[c].dims > 1)
				one.rows = 80000;
			ctx.cpu_threads = threads;
			odp_iv_test_search_ranks = way == 3;
			st = odp_compute_interval_pairs(&ctx, &p, collect, &got, &n, NULL);
			check(st == ODP_OK && same_pairs(&got, &ref, &at),
				  "%s prep %s d=%d, %d threads%s: %lld pairs as the reference (%lld)%s%s",
				  path, igen_names[cases[c].gen], cases[c].dims, threads,
				  way == 3 ? ", ranks by search" : "", (long long) got.n,
				  (long long) ref.n, st == ODP_OK ? "" : ": ", st == ODP_OK ? "" : ctx.message);
			ctx = make_ctx(dev);
			ctx.cpu_threads = threads;
			st = odp_compute_interval_count(&ctx, &q, &count, NULL);
			if (first < 0)
				first = count;
			check(st == ODP_OK && count == first,
				  "%s prep %s d=%d one set, %d threads%s: count %lld (first way %lld)",
				  path, igen_names[cases[c].gen], cases[c].dims, threads,
				  way == 3 ? ", ranks by search" : "", (long long) count, (long long) first);
			odp_iv_test_search_ranks = false;
			pl_free(&got);
		}
		pl_free(&ref);
		tr_free(&x);
		tr_free(&y);
	}
}

/* See test_util.h. */
void
run_interval_tests(void)
{
	static const struct
	{
		IGen		gen;
		int64_t		na;
		int64_t		nb;
		int			dims;
		bool		flagged;
	}			cases[] = {
		{IGEN_RANDOM, 700, 500, 1, false},
		{IGEN_RANDOM, 700, 500, 1, true},
		{IGEN_RANDOM, 600, 800, 2, true},
		{IGEN_RANDOM, 500, 500, 3, true},
		{IGEN_RANDOM, 400, 300, 4, true},
		{IGEN_TOUCHING, 400, 300, 1, true},
		{IGEN_TOUCHING, 400, 300, 2, true},
		{IGEN_IDENTICAL, 120, 90, 2, false},
		{IGEN_IDENTICAL, 120, 90, 1, true},
		{IGEN_CONTAINER, 500, 400, 2, true},
		{IGEN_WIDE, 600, 600, 1, true},
		{IGEN_WIDE, 500, 400, 2, true},
		{IGEN_FLOAT, 600, 500, 1, true},
		{IGEN_FLOAT, 500, 500, 3, true},
		{IGEN_BOX, 700, 600, 2, false},
		{IGEN_RANDOM, 1, 1, 1, true},
		{IGEN_RANDOM, 5000, 4000, 1, false},
		{IGEN_RANDOM, 3000, 3000, 2, true},
		{IGEN_WIDE_TIES, 600, 500, 1, true},
		{IGEN_WIDE_TIES, 400, 400, 2, true},
	};

	if (!gpu_ok)
		printf("GPU tests skipped: %s\n", gpu_reason);
	for (int self = 0; self < 2; self++)
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			run_case(cases[c].gen, cases[c].na, cases[c].nb, cases[c].dims,
					 cases[c].flagged, self == 1);
	hand_cases(ODP_DEVICE_CPU);
	argument_tests(ODP_DEVICE_CPU);
	cancel_tests(ODP_DEVICE_CPU);
	prep_tests(ODP_DEVICE_CPU);
	if (gpu_ok)
	{
		prep_tests(ODP_DEVICE_GPU);
		hand_cases(ODP_DEVICE_GPU);
		argument_tests(ODP_DEVICE_GPU);
		cancel_tests(ODP_DEVICE_GPU);
	}
}
