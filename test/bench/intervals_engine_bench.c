/*-------------------------------------------------------------------------
 *
 * intervals_engine_bench.c
 *	  Region matching workloads and engine-level timings (no PostgreSQL).
 *
 * The workload is the one of the DDM papers (Marzolla and D'Angelo's
 * convention): N extents in all, the first half subscriptions and the
 * second half updates, lower corners uniform at random in a space of side
 * L = 10^12, every side of length L * (alpha / N)^(1/d), so that about
 * 2^(d-2) * alpha * N pairs overlap.  Coordinates are integers for d = 1
 * (stored as int8range '[lo,hi]'), doubles otherwise (box for d = 2, cube
 * for d = 3 and more).
 *
 * intervals_engine_bench gen D N ALPHA SEED SUBS_FILE UPDS_FILE
 *	  Writes the two halves as COPY text files "id<TAB>region", the region
 *	  in the input syntax of int8range, box or cube, doubles printed with
 *	  17 significant digits (read back exactly).
 *
 * intervals_engine_bench run D N ALPHA SEED [--cpu|--gpu|--both] [--threads T]
 *				[--reps R] [--self] [--count] [--tstz INF]
 *	  Generates the same regions and runs odp_compute_interval_count and
 *	  odp_compute_interval_pairs (the pairs counted and checksummed by the
 *	  receiver), printing one line per path and task with the best of R
 *	  runs' compute and transfer times (--count: the count only); --both
 *	  checks that both paths give the same count and checksum.  --self matches all N extents as one set.
 *	  --tstz INF makes D = 1 regions the way tstzrange columns hold them
 *	  instead (below); ALPHA is then unused.
 *
 * The tstzrange workload.  N ranges '[lo, hi)' of timestamps (microseconds),
 * lo uniform over ten years, lengths heavy-tailed: Pareto with shape 1.1
 * from one minute, capped at ten years.  A share INF of them ends at the
 * timestamp 'infinity', half of those starting at '-infinity' (finite
 * bounds whose keys are the largest and the smallest: the bounds then span
 * more than half the keys and are replaced by their ranks), one in a
 * thousand has no upper bound ('[lo,)') and one in a thousand is empty.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/intervals_engine_bench.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "include/odp_intervals.h"
#include "include/odp_order.h"

#define IV_SPACE	1e12

/* A workload: N regions of D dimensions, as doubles (integers for D = 1). */
typedef struct Workload
{
	int			dims;
	int64_t		n;
	double		alpha;
	double	   *lo;				/* n x dims */
	double	   *hi;
} Workload;

static void *
xmalloc(size_t n)
{
	void	   *p = malloc(n > 0 ? n : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

/* Makes the workload (see the file header). */
static void
make_workload(Workload *w, int dims, int64_t n, double alpha, uint64_t seed)
{
	double		side = IV_SPACE * pow(alpha / (double) n, 1.0 / dims);
	uint64_t	rng = seed * 0x9e3779b97f4a7c15ULL + 1;

	w->dims = dims;
	w->n = n;
	w->alpha = alpha;
	w->lo = xmalloc(sizeof(double) * n * dims);
	w->hi = xmalloc(sizeof(double) * n * dims);
	if (dims == 1)
		side = floor(side);
	for (int64_t i = 0; i < n * dims; i++)
	{
		double		x = bench_unit(&rng) * IV_SPACE;

		if (dims == 1)
			x = floor(x);
		w->lo[i] = x;
		w->hi[i] = x + side;
	}
}

/* One half as engine regions (keys of integers for d = 1, of doubles else). */
static void
half_regions(const Workload *w, int64_t first, int64_t count, OdpRegions *r,
			 uint64_t **lk, uint64_t **hk)
{
	*lk = xmalloc(sizeof(uint64_t) * count * w->dims);
	*hk = xmalloc(sizeof(uint64_t) * count * w->dims);
	for (int64_t i = 0; i < count * w->dims; i++)
	{
		double		lo = w->lo[first * w->dims + i],
					hi = w->hi[first * w->dims + i];

		(*lk)[i] = w->dims == 1 ? odp_order_int64((int64_t) lo) : odp_order_float64(lo);
		(*hk)[i] = w->dims == 1 ? odp_order_int64((int64_t) hi) : odp_order_float64(hi);
	}
	r->lower = *lk;
	r->upper = *hk;
	r->flags = NULL;
	r->rows = count;
	r->dims = w->dims;
}

/* Microseconds of a minute and of ten years. */
#define TSTZ_MINUTE		60000000.0
#define TSTZ_DECADE		(3652.5 * 86400e6)

/*
 * n tstzrange-like regions in r (see the file header); keys and flags are
 * allocated here.
 */
static void
tstz_regions(int64_t n, uint64_t seed, double inf_share, OdpRegions *r,
			 uint64_t **lk, uint64_t **hk, uint8_t **fl)
{
	uint64_t	rng = seed * 0x9e3779b97f4a7c15ULL + 7;
	const int64_t epoch = (int64_t) 631152000000000LL;	/* 2020-01-01 */

	*lk = xmalloc(sizeof(uint64_t) * n);
	*hk = xmalloc(sizeof(uint64_t) * n);
	*fl = xmalloc(n);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		lo = epoch + (int64_t) (bench_unit(&rng) * TSTZ_DECADE);
		double		u = 1.0 - bench_unit(&rng);
		double		len = TSTZ_MINUTE * pow(u, -1.0 / 1.1);
		double		kind = bench_unit(&rng);
		int64_t		hi;

		if (len > TSTZ_DECADE)
			len = TSTZ_DECADE;
		hi = lo + (int64_t) len;
		(*fl)[i] = ODP_BOUND_UPPER_EXCLUSIVE;
		if (kind < inf_share / 2)
			lo = INT64_MIN;		/* '-infinity' */
		if (kind < inf_share)
			hi = INT64_MAX;		/* 'infinity' */
		else if (kind < inf_share + 0.001)
			(*fl)[i] = ODP_BOUND_UPPER_INFINITE;
		else if (kind < inf_share + 0.002)
			(*fl)[i] = ODP_BOUND_EMPTY;
		(*lk)[i] = odp_order_int64(lo);
		(*hk)[i] = odp_order_int64(hi);
	}
	r->lower = *lk;
	r->upper = *hk;
	r->flags = *fl;
	r->rows = n;
	r->dims = 1;
}

/* Writes rows [first, first + count) as COPY text. */
static int
write_half(const Workload *w, int64_t first, int64_t count, const char *path)
{
	FILE	   *f = fopen(path, "w");

	if (f == NULL)
	{
		perror(path);
		return 1;
	}
	for (int64_t i = 0; i < count; i++)
	{
		const double *lo = w->lo + (first + i) * w->dims;
		const double *hi = w->hi + (first + i) * w->dims;

		fprintf(f, "%lld\t", (long long) (i + 1));
		if (w->dims == 1)
			fprintf(f, "[%lld,%lld]\n", (long long) lo[0], (long long) hi[0]);
		else if (w->dims == 2)
			fprintf(f, "(%.17g,%.17g),(%.17g,%.17g)\n", hi[0], hi[1], lo[0], lo[1]);
		else
		{
			fputc('(', f);
			for (int d = 0; d < w->dims; d++)
				fprintf(f, "%s%.17g", d ? "," : "", lo[d]);
			fputs("),(", f);
			for (int d = 0; d < w->dims; d++)
				fprintf(f, "%s%.17g", d ? "," : "", hi[d]);
			fputs(")\n", f);
		}
	}
	return fclose(f) == 0 ? 0 : 1;
}

/* The receiver: counts the pairs and folds them into a checksum. */
typedef struct Tally
{
	int64_t		pairs;
	uint64_t	sum;
	bool		ordered;
	int64_t		last_a;
	int64_t		last_b;
} Tally;

static bool
tally(void *arg, const int64_t *a, const int64_t *b, int64_t count)
{
	Tally	   *t = (Tally *) arg;

	for (int64_t i = 0; i < count; i++)
	{
		if (a[i] < t->last_a || (a[i] == t->last_a && b[i] <= t->last_b))
			t->ordered = false;
		t->last_a = a[i];
		t->last_b = b[i];
		t->sum = t->sum * 1000003u + (uint64_t) a[i] * 7919u + (uint64_t) b[i];
	}
	t->pairs += count;
	return true;
}

/* Runs count and pairs on one path; prints a line per task. */
static int
run_path(OdpDevice dev, int threads, int reps, const OdpIntervalProblem *p,
		 const Workload *w, bool self, bool count_only, Tally *out)
{
	const char *path = dev == ODP_DEVICE_GPU ? "gpu" : "cpu";

	for (int task = 0; task < (count_only ? 1 : 2); task++)
	{
		double		best_c = 1e300,
					best_t = 1e300,
					best_w = 1e300,
					best_s = 1e300,
					best_p = 1e300,
					best_u = 1e300,
					best_m = 1e300;
		OdpIntervalStats st;
		int64_t		n = 0;
		Tally		t = {0, 0, true, -1, -1};

		for (int r = 0; r < reps; r++)
		{
			OdpContext	ctx;
			OdpStatus	s;
			double		t0;

			memset(&ctx, 0, sizeof(ctx));
			ctx.device = dev;
			ctx.cpu_threads = threads;
			memset(&t, 0, sizeof(t));
			t.ordered = true;
			t.last_a = -1;
			t0 = odp_now_ms();
			if (task == 0)
				s = odp_compute_interval_count(&ctx, p, &n, &st);
			else
				s = odp_compute_interval_pairs(&ctx, p, tally, &t, &n, &st);
			if (s != ODP_OK)
			{
				fprintf(stderr, "%s %s: %s: %s\n", path, task ? "pairs" : "count",
						odp_status_name(s), ctx.message);
				return 1;
			}
			if (ctx.compute_ms < best_c)
			{
				best_c = ctx.compute_ms;
				best_t = ctx.transfer_ms;
				best_s = st.sort_ms;
				best_p = st.prep_ms;
				best_u = st.setup_ms;
				best_m = st.match_ms;
			}
			if (odp_now_ms() - t0 < best_w)
				best_w = odp_now_ms() - t0;
		}
		printf("path=%s task=%s d=%d n=%lld alpha=%g%s pairs=%lld candidates=%lld sweep=%d runs=%d "
			   "compute_ms=%.3f prep_ms=%.3f setup_ms=%.3f match_ms=%.3f sort_ms=%.3f transfer_ms=%.3f wall_ms=%.3f pairs_per_s=%.3g%s\n",
			   path, task ? "pairs" : "count", w->dims, (long long) w->n, w->alpha,
			   self ? " self" : "", (long long) n, (long long) st.candidates,
			   (int) st.sweep_dim, (int) st.runs, best_c, best_p, best_u, best_m, best_s, best_t, best_w,
			   best_c > 0 ? (double) n / (best_c / 1e3) : 0.0,
			   task == 1 && !t.ordered ? " UNORDERED" : "");
		if (task == 1)
			*out = t;
	}
	fflush(stdout);
	return 0;
}

int
main(int argc, char **argv)
{
	Workload	w;
	int			dims;
	int64_t		n;
	double		alpha;
	uint64_t	seed;

	if (argc < 6)
	{
		fprintf(stderr, "usage: intervals_engine_bench gen D N ALPHA SEED SUBS UPDS | run D N ALPHA SEED [options]\n");
		return 2;
	}
	dims = atoi(argv[2]);
	n = atoll(argv[3]);
	alpha = atof(argv[4]);
	seed = strtoull(argv[5], NULL, 10);
	if (dims < 1 || dims > 8 || n < 2 || alpha <= 0)
	{
		fprintf(stderr, "bad workload\n");
		return 2;
	}
	make_workload(&w, dims, n, alpha, seed);
	if (strcmp(argv[1], "gen") == 0 && argc >= 8)
		return write_half(&w, 0, n / 2, argv[6]) || write_half(&w, n / 2, n - n / 2, argv[7]);
	if (strcmp(argv[1], "run") == 0)
	{
		bool		cpu = false,
					gpu = true,
					self = false,
					count_only = false;
		int			threads = 1,
					reps = 3;
		double		inf_share = -1.0;
		OdpRegions	a,
					b;
		uint64_t   *k[4];
		uint8_t    *fl[2];
		uint8_t		box[8] = {0};
		OdpIntervalProblem p;
		Tally		tc,
					tg;
		int			rc = 0;

		for (int i = 6; i < argc; i++)
		{
			if (strcmp(argv[i], "--cpu") == 0)
				cpu = true, gpu = false;
			else if (strcmp(argv[i], "--gpu") == 0)
				cpu = false, gpu = true;
			else if (strcmp(argv[i], "--both") == 0)
				cpu = gpu = true;
			else if (strcmp(argv[i], "--self") == 0)
				self = true;
			else if (strcmp(argv[i], "--count") == 0)
				count_only = true;
			else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
				threads = atoi(argv[++i]);
			else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
				reps = atoi(argv[++i]);
			else if (strcmp(argv[i], "--tstz") == 0 && i + 1 < argc)
				inf_share = atof(argv[++i]);
		}
		if (dims == 2)
			box[0] = box[1] = ODP_INTERVAL_BOX;
		if (inf_share >= 0.0)
		{
			if (dims != 1)
			{
				fprintf(stderr, "--tstz takes D = 1\n");
				return 2;
			}
			if (self)
				tstz_regions(n, seed, inf_share, &a, &k[0], &k[1], &fl[0]);
			else
			{
				tstz_regions(n / 2, seed, inf_share, &a, &k[0], &k[1], &fl[0]);
				tstz_regions(n - n / 2, seed + 1, inf_share, &b, &k[2], &k[3], &fl[1]);
			}
		}
		else if (self)
			half_regions(&w, 0, n, &a, &k[0], &k[1]);
		else
		{
			half_regions(&w, 0, n / 2, &a, &k[0], &k[1]);
			half_regions(&w, n / 2, n - n / 2, &b, &k[2], &k[3]);
		}
		p.a = &a;
		p.b = self ? NULL : &b;
		p.compare = box;
		if (gpu)
			rc |= run_path(ODP_DEVICE_GPU, threads, reps, &p, &w, self, count_only, &tg);
		if (cpu)
			rc |= run_path(ODP_DEVICE_CPU, threads, reps, &p, &w, self, count_only, &tc);
		if (cpu && gpu && rc == 0)
		{
			bool		same = tc.pairs == tg.pairs && tc.sum == tg.sum;

			printf("compare: %s (cpu %lld pairs, gpu %lld pairs)\n", same ? "same pairs" : "DIFFERENT",
				   (long long) tc.pairs, (long long) tg.pairs);
			rc |= !same;
		}
		return rc;
	}
	fprintf(stderr, "unknown command %s\n", argv[1]);
	return 2;
}
