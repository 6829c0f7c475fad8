/*-------------------------------------------------------------------------
 *
 * test_skyline.c
 *	  Engine tests of the skyline and k-skyband: both paths against a naive
 *	  O(N^2) count of dominators computed on the float64 values, on
 *	  independent, correlated and anti-correlated data and adversarial
 *	  cases; argument errors; cancellation.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_skyline.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_skyline.h"
#include "test_util.h"

/* GPU test counters (skyline_gpu.cu); weak: absent without CUDA. */
extern int64_t odp_gpu_sky_staged_runs __attribute__((weak));
extern int64_t odp_gpu_sky_streamed_rows __attribute__((weak));

/* Kinds of skyline data. */
typedef enum KGen
{
	KGEN_INDEPENDENT,			/* uniform in [0, 1) */
	KGEN_CORRELATED,			/* near the diagonal */
	KGEN_ANTI,					/* near the plane sum = D/2 */
	KGEN_EQUAL,					/* every row the same */
	KGEN_DUPLICATES,			/* 25 distinct rows, many copies each */
	KGEN_ONE_BEST,				/* uniform, plus row 17 below every other */
	KGEN_SMALL_INTS,			/* integers 0 .. 4: ties on every axis */
	KGEN_CLOSE					/* 1e9 + small integers times 1e-6: equal
								 * in float32, distinct in float64 */
} KGen;

static const char *const kgen_names[] = {
	"independent", "correlated", "anti-correlated", "all-equal", "duplicates",
	"one-dominating", "small-ints", "close-values"
};

static double
unit(void)
{
	return (double) (rng_next() >> 11) / 9007199254740992.0;
}

/* rows x dims values of kind gen; the caller frees them. */
static double *
make_points(KGen gen, int64_t rows, int dims)
{
	double	   *x = xmalloc(sizeof(double) * rows * dims);

	for (int64_t i = 0; i < rows; i++)
	{
		double	   *v = x + i * dims;
		double		c = unit();

		if (gen == KGEN_ANTI)
			c = unit() + unit();	/* with the two below: a peak at 0.5 */
		for (int d = 0; d < dims; d++)
		{
			switch (gen)
			{
				case KGEN_INDEPENDENT:
				case KGEN_ONE_BEST:
					v[d] = unit();
					break;
				case KGEN_CORRELATED:
					v[d] = c + 0.05 * (unit() - 0.5);
					break;
				case KGEN_ANTI:
					v[d] = 0.5 + 0.05 * (c + unit() + unit() - 1.5);
					break;
				case KGEN_EQUAL:
					v[d] = 3.25;
					break;
				case KGEN_DUPLICATES:
					v[d] = (double) ((i % 25) * 7 + d * 3) / 11.0;
					break;
				case KGEN_SMALL_INTS:
					v[d] = (double) (rng_next() % 5);
					break;
				case KGEN_CLOSE:
					v[d] = 1e9 + (double) (rng_next() % 64) * 1e-6;
					break;
			}
		}
		if (gen == KGEN_ANTI)
		{
			/* moves along the plane: what one feature gains another loses */
			for (int d = 0; d < dims; d++)
			{
				double		h = (unit() - 0.5) * 0.8;

				v[d] += h;
				v[(d + 1) % dims] -= h;
			}
		}
	}
	if (gen == KGEN_ONE_BEST && rows > 17)
		for (int d = 0; d < dims; d++)
			x[17 * dims + d] = -1.0;
	return x;
}

/* The naive reference: each row's dominators counted, capped at band. */
static void
reference(const double *x, int64_t rows, int dims, const uint8_t *maximize,
		  int band, int32_t *out)
{
	for (int64_t q = 0; q < rows; q++)
	{
		int32_t		c = 0;

		for (int64_t p = 0; p < rows && c < band; p++)
		{
			bool		le = true,
						lt = false;

			for (int d = 0; d < dims && le; d++)
			{
				double		a = x[p * dims + d],
							b = x[q * dims + d];

				if (maximize != NULL && maximize[d])
				{
					a = -a;
					b = -b;
				}
				le = a <= b;
				lt |= a < b;
			}
			c += le && lt;
		}
		out[q] = c;
	}
}

static const char *
sky_path(OdpDevice dev)
{
	return dev == ODP_DEVICE_GPU ? "gpu" : "cpu";
}

/* Runs one problem on one path (memory_limit 0: default) and compares. */
static void
sky_check(const char *name, const double *x, int64_t rows, int dims,
		  const uint8_t *maximize, int band, const int32_t *ref, OdpDevice dev,
		  size_t memory_limit)
{
	OdpMatrix64 m = {x, NULL, rows, dims};
	OdpSkylineProblem p = {&m, maximize, band};
	OdpContext	ctx = make_ctx(dev);
	OdpSkylineStats stats;
	int32_t    *got = xmalloc(sizeof(int32_t) * rows);
	int64_t		bad = 0,
				first = -1,
				members = 0;
	OdpStatus	st;

	ctx.gpu_memory_limit = memory_limit;
	st = odp_compute_skyline(&ctx, &p, got, &stats);
	for (int64_t i = 0; st == ODP_OK && i < rows; i++)
	{
		members += ref[i] < band;
		if (got[i] != ref[i])
		{
			if (first < 0)
				first = i;
			bad++;
		}
	}
	check(st == ODP_OK && bad == 0 && stats.members == members,
		  "%s skyline %s N=%lld D=%d band=%d%s: %s %s, %lld in band, %lld rows differ"
		  " (first %lld: %d vs %d), %lld pair tests",
		  sky_path(dev), name, (long long) rows, dims, band,
		  memory_limit ? " (small GPU budget)" : "", odp_status_name(st), ctx.message,
		  (long long) stats.members, (long long) bad, (long long) first,
		  first >= 0 ? got[first] : 0, first >= 0 ? ref[first] : 0,
		  (long long) stats.pair_tests);
	free(got);
}

/* One case on every path. */
static void
sky_case(KGen gen, int64_t rows, int dims, int band, bool mixed)
{
	double	   *x = make_points(gen, rows, dims);
	uint8_t    *maximize = NULL;
	int32_t    *ref = xmalloc(sizeof(int32_t) * rows);
	char		name[96];

	if (mixed)
	{
		maximize = xmalloc(dims);
		for (int d = 0; d < dims; d++)
			maximize[d] = d % 2;
	}
	snprintf(name, sizeof(name), "%s%s", kgen_names[gen], mixed ? " min/max" : "");
	reference(x, rows, dims, maximize, band, ref);
	sky_check(name, x, rows, dims, maximize, band, ref, ODP_DEVICE_CPU, 0);
	if (gpu_ok)
	{
		sky_check(name, x, rows, dims, maximize, band, ref, ODP_DEVICE_GPU, 0);
		/* a budget far below the presort's: the staged plan */
		sky_check(name, x, rows, dims, maximize, band, ref, ODP_DEVICE_GPU,
				  (size_t) rows * dims * 2 + ((size_t) 256 << 10));
	}
	free(x);
	free(maximize);
	free(ref);
}

/* Hand-made cases whose answer is known without the reference. */
static void
sky_known_cases(OdpDevice dev)
{
	/* D = 2, ties on the first axis: (1,5) (1,3) (2,1) (3,1) (1,3) */
	double		x[] = {1, 5, 1, 3, 2, 1, 3, 1, 1, 3};
	int32_t		want1[] = {1, 0, 0, 1, 0};
	int32_t		want3[] = {2, 0, 0, 1, 0};
	uint8_t		max_second[] = {0, 1};
	int32_t		want_max[] = {0, 1, 3, 4, 1};
	/* -0 equals 0: neither row dominates the other */
	double		z[] = {-0.0, 1, 0.0, 1};
	int32_t		want_z[] = {0, 0};
	/* D = 1: only the smallest values */
	double		one[] = {4, 2, 9, 2, 3};
	int32_t		want_one[] = {1, 0, 1, 0, 1};
	int32_t		want_one_max[] = {1, 2, 0, 2, 2};
	uint8_t		max1[] = {1};

	sky_check("ties on one axis", x, 5, 2, NULL, 1, want1, dev, 0);
	sky_check("ties on one axis", x, 5, 2, NULL, 3, want3, dev, 0);
	sky_check("ties on one axis, max second", x, 5, 2, max_second, 4, want_max, dev, 0);
	sky_check("minus zero", z, 2, 2, NULL, 1, want_z, dev, 0);
	sky_check("D=1", one, 5, 1, NULL, 1, want_one, dev, 0);
	sky_check("D=1 max", one, 5, 1, max1, 2, want_one_max, dev, 0);
	{
		double		single[] = {7, 7, 7};
		int32_t		want_single[] = {0};

		sky_check("one row", single, 1, 3, NULL, 1, want_single, dev, 0);
	}
}

/* Argument and data errors. */
static void
sky_argument_tests(OdpDevice dev)
{
	double		x[6] = {1, 2, 3, 4, 5, 6};
	uint8_t		miss[6] = {0, 0, 1, 0, 0, 0};
	int32_t		out[3];
	OdpMatrix64 m = {x, NULL, 3, 2};
	OdpMatrix64 none = {x, NULL, 0, 2};
	OdpMatrix64 nodims = {x, NULL, 3, 0};
	OdpMatrix64 missing = {x, miss, 3, 2};
	OdpSkylineProblem p = {&m, NULL, 1};
	OdpContext	ctx = make_ctx(dev);
	OdpStatus	st;

	p.band = 0;
	st = odp_compute_skyline(&ctx, &p, out, NULL);
	check(st == ODP_ERR_INVALID_ARGUMENT, "%s skyline band 0: %s (%s)", sky_path(dev),
		  odp_status_name(st), ctx.message);
	p.band = 1;
	p.points = &none;
	st = odp_compute_skyline(&ctx, &p, out, NULL);
	check(st == ODP_ERR_INVALID_ARGUMENT, "%s skyline no rows: %s (%s)", sky_path(dev),
		  odp_status_name(st), ctx.message);
	p.points = &nodims;
	st = odp_compute_skyline(&ctx, &p, out, NULL);
	check(st == ODP_ERR_INVALID_ARGUMENT, "%s skyline no features: %s (%s)", sky_path(dev),
		  odp_status_name(st), ctx.message);
	p.points = &missing;
	st = odp_compute_skyline(&ctx, &p, out, NULL);
	check(st == ODP_ERR_INVALID_ARGUMENT, "%s skyline missing values: %s (%s)",
		  sky_path(dev), odp_status_name(st), ctx.message);
	p.points = &m;
	x[3] = NAN;
	st = odp_compute_skyline(&ctx, &p, out, NULL);
	check(st == ODP_ERR_DATA, "%s skyline NaN: %s (%s)", sky_path(dev),
		  odp_status_name(st), ctx.message);
	x[3] = -INFINITY;
	st = odp_compute_skyline(&ctx, &p, out, NULL);
	check(st == ODP_ERR_DATA, "%s skyline infinity: %s (%s)", sky_path(dev),
		  odp_status_name(st), ctx.message);
	st = odp_compute_skyline(&ctx, &p, NULL, NULL);
	check(st == ODP_ERR_INVALID_ARGUMENT, "%s skyline no output: %s (%s)", sky_path(dev),
		  odp_status_name(st), ctx.message);
}

typedef struct SkyCancel
{
	int			polls;
	int			at;
} SkyCancel;

static bool
sky_cancel_cb(void *arg)
{
	SkyCancel  *c = (SkyCancel *) arg;

	return ++c->polls >= c->at;
}

/* A cancel at the second poll stops the call; the next call works. */
static void
sky_cancel_test(OdpDevice dev)
{
	const int64_t rows = 60000;
	const int	dims = 6;
	double	   *x = make_points(KGEN_ANTI, rows, dims);
	int32_t    *out = xmalloc(sizeof(int32_t) * rows);
	OdpMatrix64 m = {x, NULL, rows, dims};
	OdpSkylineProblem p = {&m, NULL, 1};
	SkyCancel	cc = {0, 2};
	OdpContext	ctx = make_ctx(dev);
	OdpStatus	st;

	ctx.cancel = sky_cancel_cb;
	ctx.cancel_arg = &cc;
	st = odp_compute_skyline(&ctx, &p, out, NULL);
	check(st == ODP_ERR_CANCELLED, "%s skyline cancel at poll 2: %s %s (%d polls)",
		  sky_path(dev), odp_status_name(st), ctx.message, cc.polls);
	ctx = make_ctx(dev);
	st = odp_compute_skyline(&ctx, &p, out, NULL);
	check(st == ODP_OK, "%s skyline after a cancel: %s %s", sky_path(dev),
		  odp_status_name(st), ctx.message);
	free(x);
	free(out);
}

/* See test_util.h. */
void
run_skyline_tests(void)
{
	static const struct
	{
		KGen		gen;
		int64_t		rows;
		int			dims;
		int			band;
		bool		mixed;
	}			cases[] = {
		{KGEN_INDEPENDENT, 3000, 4, 1, false},
		{KGEN_INDEPENDENT, 3000, 4, 3, false},
		{KGEN_CORRELATED, 3000, 5, 1, false},
		{KGEN_CORRELATED, 3000, 5, 4, true},
		{KGEN_ANTI, 9000, 3, 1, false},		/* several blocks, large skyline */
		{KGEN_ANTI, 20000, 8, 1, false},	/* the GPU's blocks too */
		{KGEN_ANTI, 4000, 6, 2, true},
		{KGEN_EQUAL, 1000, 3, 1, false},
		{KGEN_EQUAL, 1000, 3, 5, false},
		{KGEN_DUPLICATES, 2000, 4, 1, false},
		{KGEN_DUPLICATES, 2000, 4, 50, false},
		{KGEN_ONE_BEST, 2500, 6, 1, false},
		{KGEN_ONE_BEST, 2500, 6, 2, false},
		{KGEN_INDEPENDENT, 5000, 1, 1, false},	/* D = 1 */
		{KGEN_INDEPENDENT, 5000, 1, 3, true},
		{KGEN_SMALL_INTS, 3000, 2, 1, false},	/* D = 2, ties on each axis */
		{KGEN_SMALL_INTS, 3000, 2, 7, true},
		{KGEN_SMALL_INTS, 6000, 5, 2, false},
		{KGEN_CLOSE, 2000, 3, 1, false},
		{KGEN_INDEPENDENT, 1500, 20, 1, true},	/* three mask bits a feature */
		{KGEN_INDEPENDENT, 1200, 100, 1, false},	/* past the mask's 64 features */
		{KGEN_CORRELATED, 800, 1700, 2, true},	/* past the seed's 1536 */
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		sky_case(cases[c].gen, cases[c].rows, cases[c].dims, cases[c].band,
				 cases[c].mixed);
	if (gpu_ok)
		check(gpu_counter(&odp_gpu_sky_staged_runs) > 0 &&
			  gpu_counter(&odp_gpu_sky_streamed_rows) > 0,
			  "gpu skyline: small budgets ran the staged plan (%lld runs) and streamed "
			  "the window (%lld rows)", (long long) gpu_counter(&odp_gpu_sky_staged_runs),
			  (long long) gpu_counter(&odp_gpu_sky_streamed_rows));
	sky_known_cases(ODP_DEVICE_CPU);
	sky_argument_tests(ODP_DEVICE_CPU);
	sky_cancel_test(ODP_DEVICE_CPU);
	if (gpu_ok)
	{
		sky_known_cases(ODP_DEVICE_GPU);
		sky_argument_tests(ODP_DEVICE_GPU);
		sky_cancel_test(ODP_DEVICE_GPU);
	}
}
