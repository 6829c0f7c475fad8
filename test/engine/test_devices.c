/*-------------------------------------------------------------------------
 *
 * test_devices.c
 *	  Tests of device sets: the split helpers on any host, and on a GPU
 *	  host every analytic run on the device list {0, 0} (two parts on one
 *	  GPU, each with its own stream and half the budget) compared bit for
 *	  bit with one device and with the CPU path, plus faults (a budget too
 *	  small, cancel) that must free every part's memory.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_devices.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/device_set.h"
#include "devices/pair_relay.h"
#include "include/odp_intervals.h"
#include "include/odp_knn.h"
#include "include/odp_outliers.h"
#include "include/odp_pearson.h"
#include "include/odp_skyline.h"
#include "skyline/skyline_math.h"
#include "test_util.h"

extern int64_t odp_gpu_pearson_staged_runs __attribute__((weak));
extern int64_t odp_gpu_knn_tc_team __attribute__((weak));
extern int64_t odp_sky_split_window;

/*
 * The device list of the split tests: {0, 1} on a host with two GPUs or
 * more, else {0, 0} (two parts on one GPU); split_name says which.
 */
static int	split_second = 0;
static const char *split_name = "{0,0}";

static OdpContext
split_ctx(void)
{
	OdpContext	ctx = make_ctx(ODP_DEVICE_GPU);

	ctx.gpu_count = 2;
	ctx.gpu_ids[0] = 0;
	ctx.gpu_ids[1] = split_second;
	return ctx;
}

/* OdpSplitRows covers the rows in order, aligned, balanced for a triangle. */
static void
split_rows_tests(void)
{
	int64_t		first[ODP_MAX_GPUS + 1];
	bool		ok = true;

	for (int parts = 1; parts <= ODP_MAX_GPUS; parts++)
		for (int64_t rows = 0; rows < 3000; rows += 97)
			for (int tri = 0; tri < 2; tri++)
			{
				OdpSplitRows(rows, parts, tri == 1, 64, first);
				ok &= first[0] == 0 && first[parts] == rows;
				for (int p = 0; p < parts; p++)
					ok &= first[p] <= first[p + 1] &&
						(p == 0 || first[p] % 64 == 0 || first[p] < 64 ||
						 first[p] == first[p - 1] || first[p] == rows);
			}
	check(ok, "split rows: ranges cover every row in order, on 64-row boundaries");
	OdpSplitRows(100000, 2, true, 1, first);
	check(first[1] > 25000 && first[1] < 35000,
		  "split rows: a triangle of 100000 rows splits at %lld (about 29289)",
		  (long long) first[1]);
}

/* What the relay test's parts push and its receiver got. */
typedef struct RelayTest
{
	OdpPairRelay relay;
	int64_t		per_part;
	int64_t		got;
	bool		ordered;
	int64_t		last_a;
	int64_t		stop_after;		/* > 0: the receiver stops after this many */
} RelayTest;

/* A fake part: pushes per_part pairs (part * per_part + i, i) in batches. */
static OdpStatus
relay_part(void *arg, int part, OdpContext *pctx)
{
	RelayTest  *t = (RelayTest *) arg;
	int64_t		a[100],
				b[100];
	double		r[100];
	OdpStatus	status = ODP_OK;

	for (int64_t i0 = 0; i0 < t->per_part && status == ODP_OK; i0 += 100)
	{
		for (int i = 0; i < 100; i++)
		{
			a[i] = part * t->per_part + i0 + i;
			b[i] = i;
			r[i] = (double) a[i];
		}
		if (!OdpRelayPush(&t->relay, part, a, b, r, 100, 0, 0, false) ||
			odp_cancel_requested(pctx))
			status = odp_fail(pctx, ODP_ERR_CANCELLED, "stopped");
	}
	OdpRelayFinish(&t->relay, part, status);
	return status;
}

/* A fake part that fails at once on part 2, as a device out of memory would. */
static OdpStatus
relay_part_failing(void *arg, int part, OdpContext *pctx)
{
	RelayTest  *t = (RelayTest *) arg;

	if (part == 2)
	{
		OdpStatus	status = odp_fail(pctx, ODP_ERR_GPU_OOM,
									  "no memory left on this part");

		OdpRelayFinish(&t->relay, part, status);
		return status;
	}
	return relay_part(arg, part, pctx);
}

/* Cancel callback of the relay tests: stops after *left polls. */
static bool
relay_cancel_after(void *arg)
{
	int		   *left = (int *) arg;

	return --(*left) <= 0;
}

/* The relay test's receiver: checks the order. */
static bool
relay_receive(void *arg, const int64_t *a, const int64_t *b, const double *r,
			  int64_t count)
{
	RelayTest  *t = (RelayTest *) arg;

	for (int64_t i = 0; i < count; i++)
	{
		t->ordered &= a[i] == t->last_a + 1 && r[i] == (double) a[i] &&
			b[i] == a[i] % 100;
		t->last_a = a[i];
	}
	t->got += count;
	return t->stop_after == 0 || t->got < t->stop_after;
}

/*
 * The device-set runner and the pair relay without a GPU: parts on their
 * threads push pairs, the caller's thread receives them in part order;
 * a receiver that stops ends the call with ODP_ERR_CANCELLED.
 */
static void
relay_tests(void)
{
	for (int stop = 0; stop < 2; stop++)
	{
		OdpContext	ctx = make_ctx(ODP_DEVICE_GPU);
		OdpDeviceSet set;
		RelayTest	t;
		OdpStatus	st;

		memset(&set, 0, sizeof(set));
		set.count = 4;
		memset(&t, 0, sizeof(t));
		/* more than ODP_RELAY_MAX_BYTES per part: later parts must wait */
		t.per_part = (int64_t) (ODP_RELAY_MAX_BYTES / 24) + 1000;
		t.per_part -= t.per_part % 100;
		t.ordered = true;
		t.last_a = -1;
		t.stop_after = stop ? t.per_part + 500 : 0;
		OdpRelayInit(&t.relay, set.count, true, relay_receive, &t);
		st = OdpRelayRun(&ctx, &set, relay_part, &t, &t.relay);
		if (!stop)
			check(st == ODP_OK && t.ordered && t.got == 4 * t.per_part &&
				  OdpRelayComplete(&t.relay),
				  "relay: 4 parts of %lld pairs handed over in order: status \"%s\", %lld pairs, ordered %s",
				  (long long) t.per_part, odp_status_name(st), (long long) t.got,
				  t.ordered ? "yes" : "NO");
		else
			check(st == ODP_ERR_CANCELLED && t.ordered && t.got < 4 * t.per_part,
				  "relay: a receiver that stops ends the call: status \"%s\" after %lld pairs",
				  odp_status_name(st), (long long) t.got);
		OdpRelayRelease(&t.relay);
	}

	/*
	 * The order a two-core machine can give the threads: the pump has
	 * moved past part 0 when part 1 fails and part 2 has pushed all its
	 * pairs.  Part 2's pairs must not reach the receiver past the gap.
	 */
	{
		RelayTest	t;
		int64_t		a[100],
					b[100];
		double		r[100];
		bool		first_pump,
					second_pump;
		int64_t		got_first;

		memset(&t, 0, sizeof(t));
		t.ordered = true;
		t.last_a = -1;
		t.per_part = 100;
		for (int i = 0; i < 100; i++)
		{
			a[i] = i;
			b[i] = i;
			r[i] = (double) i;
		}
		OdpRelayInit(&t.relay, 3, true, relay_receive, &t);
		(void) OdpRelayPush(&t.relay, 0, a, b, r, 100, 0, 0, false);
		OdpRelayFinish(&t.relay, 0, ODP_OK);
		first_pump = OdpRelayPump(&t.relay, false);
		got_first = t.got;
		OdpRelayFinish(&t.relay, 1, ODP_ERR_GPU_OOM);
		for (int i = 0; i < 100; i++)
			a[i] = 200 + i;
		(void) OdpRelayPush(&t.relay, 2, a, b, r, 100, 0, 0, false);
		OdpRelayFinish(&t.relay, 2, ODP_OK);
		second_pump = OdpRelayPump(&t.relay, false);
		check(first_pump && got_first == 100 && !second_pump && t.got == 100 &&
			  t.ordered && !OdpRelayComplete(&t.relay),
			  "relay: a failed part stops the hand-over: %lld pairs, then %lld (100, 100), second pump refused %s, ordered %s",
			  (long long) got_first, (long long) t.got, second_pump ? "NO" : "yes",
			  t.ordered ? "yes" : "NO");
		OdpRelayRelease(&t.relay);
	}

	/*
	 * A cancel while later parts wait for their turn, and a part that
	 * fails: both end the call at once, with every part's thread joined.
	 */
	for (int fail = 0; fail < 2; fail++)
	{
		OdpContext	ctx = make_ctx(ODP_DEVICE_GPU);
		OdpDeviceSet set;
		RelayTest	t;
		OdpStatus	st;
		int			polls = 20;
		double		t0 = odp_now_ms();

		memset(&set, 0, sizeof(set));
		set.count = 4;
		memset(&t, 0, sizeof(t));
		t.per_part = 4 * (int64_t) (ODP_RELAY_MAX_BYTES / 24);
		t.per_part -= t.per_part % 100;
		t.ordered = true;
		t.last_a = -1;
		if (!fail)
		{
			ctx.cancel = relay_cancel_after;
			ctx.cancel_arg = &polls;
		}
		OdpRelayInit(&t.relay, set.count, true, relay_receive, &t);
		st = OdpDeviceSetRun(&ctx, &set, fail ? relay_part_failing : relay_part, &t,
							 OdpRelayPump, &t.relay);
		if (!fail)
			check(st == ODP_ERR_CANCELLED && t.ordered && t.got < 4 * t.per_part,
				  "relay: cancel while parts wait for their turn: status \"%s\" after %.0f ms, %lld pairs",
				  odp_status_name(st), odp_now_ms() - t0, (long long) t.got);
		else
			check(st == ODP_ERR_GPU_OOM && strstr(ctx.message, "part 3 of 4") != NULL &&
				  t.ordered && t.got < 4 * t.per_part,
				  "relay: a failing part ends the call: status \"%s\", message \"%s\", after %.0f ms",
				  odp_status_name(st), ctx.message, odp_now_ms() - t0);
		OdpRelayRelease(&t.relay);
	}
}

/* Bytes free on the split's devices (after a synchronising query). */
static size_t
free_bytes(void)
{
	OdpContext	ctx = make_ctx(ODP_DEVICE_GPU);
	OdpGpuInfo	info;
	size_t		total = 0;

	for (int d = 0; d <= split_second; d++)
	{
		if (odp_gpu_device_info(&ctx, d, &info) != ODP_OK)
			return 0;
		total += info.free_memory;
	}
	return total;
}

/* Outlier scores and k-NN lists: {0, 0} against one device and the CPU. */
static void
knn_split_tests(void)
{
	const int64_t nq = 2000,
				nc = 6000;
	const int	dims = 24,
				k = 16;
	float	   *x = make_data(GEN_UNIFORM, nc, dims);
	float	   *q = make_data(GEN_TIES, nq, dims);
	OdpMatrix	mx = {x, nc, dims};
	OdpMatrix	mq = {q, nq, dims};

	for (int metric = 0; metric < ODP_METRIC_COUNT; metric += 2)
	{
		double	   *s[3];
		double	   *d[3];
		int64_t    *ix[3];
		OdpStatus	st[3],
					kt[3];

		for (int path = 0; path < 3; path++)
		{
			OdpContext	ctx = path == 0 ? make_ctx(ODP_DEVICE_CPU) :
				path == 1 ? make_ctx(ODP_DEVICE_GPU) : split_ctx();

			s[path] = xmalloc(sizeof(double) * nc);
			d[path] = xmalloc(sizeof(double) * nq * k);
			ix[path] = xmalloc(sizeof(int64_t) * nq * k);
			st[path] = odp_compute_outlier_scores(&ctx, &mx, (OdpMetric) metric, k, s[path]);
			kt[path] = odp_compute_knn(&ctx, &mq, &mx, (OdpMetric) metric, k, false,
									   d[path], ix[path]);
		}
		check(st[0] == ODP_OK && st[1] == ODP_OK && st[2] == ODP_OK &&
			  memcmp(s[2], s[1], sizeof(double) * nc) == 0 &&
			  memcmp(s[2], s[0], sizeof(double) * nc) == 0,
			  "devices %s outlier scores %s %lld x %d k=%d: identical to one GPU and the CPU", split_name,
			  odp_metric_name((OdpMetric) metric), (long long) nc, dims, k);
		check(kt[0] == ODP_OK && kt[1] == ODP_OK && kt[2] == ODP_OK &&
			  memcmp(d[2], d[1], sizeof(double) * nq * k) == 0 &&
			  memcmp(ix[2], ix[1], sizeof(int64_t) * nq * k) == 0 &&
			  memcmp(d[2], d[0], sizeof(double) * nq * k) == 0 &&
			  memcmp(ix[2], ix[0], sizeof(int64_t) * nq * k) == 0,
			  "devices %s k-NN %s %lld x %lld k=%d: identical to one GPU and the CPU", split_name,
			  odp_metric_name((OdpMetric) metric), (long long) nq, (long long) nc, k);
		for (int path = 0; path < 3; path++)
		{
			free(s[path]);
			free(d[path]);
			free(ix[path]);
		}
	}

	/* a self join */
	{
		double	   *d[2];
		int64_t    *ix[2];
		OdpStatus	kt[2];

		for (int path = 0; path < 2; path++)
		{
			OdpContext	ctx = path == 0 ? make_ctx(ODP_DEVICE_GPU) : split_ctx();

			d[path] = xmalloc(sizeof(double) * nc * k);
			ix[path] = xmalloc(sizeof(int64_t) * nc * k);
			kt[path] = odp_compute_knn(&ctx, &mx, &mx, ODP_METRIC_EUCLIDEAN, k, true,
									   d[path], ix[path]);
		}
		check(kt[0] == ODP_OK && kt[1] == ODP_OK &&
			  memcmp(d[0], d[1], sizeof(double) * nc * k) == 0 &&
			  memcmp(ix[0], ix[1], sizeof(int64_t) * nc * k) == 0,
			  "devices %s k-NN self join %lld rows k=%d: identical to one GPU", split_name,
			  (long long) nc, k);
		for (int path = 0; path < 2; path++)
		{
			free(d[path]);
			free(ix[path]);
		}
	}
	free(x);
	free(q);

	/*
	 * Self joins the symmetric filter serves split by their pairs (a
	 * team): 100,000 x 32, k = 10 (both parts also choose among kernel
	 * configurations of one function with different shared memory sizes
	 * at the same time: its limit is per function and device); cosine;
	 * rows with thousands of copies, whose lists overflow and are scanned
	 * whole on a part; and a budget too small for every row's lists,
	 * where each part computes its own rows alone
	 */
	{
		static const struct
		{
			Gen			gen;
			int64_t		n;
			int			dims;
			OdpMetric	metric;
			size_t		limit;
			bool		team;
			const char *what;
		}			cases[] = {
			{GEN_UNIT, 100000, 32, ODP_METRIC_EUCLIDEAN, 0, true, "100,000 x 32 euclidean"},
			{GEN_UNIFORM, 60000, 12, ODP_METRIC_COSINE, 0, true, "60,000 x 12 cosine"},
			{GEN_DUPLICATES, 60000, 8, ODP_METRIC_EUCLIDEAN, 0, true, "60,000 x 8, copies of 20 rows"},
			{GEN_UNIT, 100000, 32, ODP_METRIC_EUCLIDEAN, (size_t) 1 << 30, false,
			"100,000 x 32 under 1 GB a part"},
		};

		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		{
			const int64_t n = cases[c].n;
			float	   *y = make_data(cases[c].gen, n, cases[c].dims);
			OdpMatrix	my = {y, n, cases[c].dims};
			double	   *d[2];
			int64_t    *ix[2];
			OdpStatus	kt[2];
			int64_t		teamed = 0;

			for (int path = 0; path < 2; path++)
			{
				OdpContext	ctx = path == 0 ? make_ctx(ODP_DEVICE_GPU) : split_ctx();
				const int64_t before = gpu_counter(&odp_gpu_knn_tc_team);

				/* a part's budget: the limit, halved for two parts on one GPU */
				if (path == 1 && cases[c].limit > 0)
					ctx.gpu_memory_limit = split_second == 0 ? 2 * cases[c].limit : cases[c].limit;
				d[path] = xmalloc(sizeof(double) * n * 10);
				ix[path] = xmalloc(sizeof(int64_t) * n * 10);
				kt[path] = odp_compute_knn(&ctx, &my, &my, cases[c].metric, 10, true,
										   d[path], ix[path]);
				if (kt[path] != ODP_OK)
					printf("# %s: %s\n", path == 0 ? "one GPU" : split_name, ctx.message);
				if (path == 1)
					teamed = gpu_counter(&odp_gpu_knn_tc_team) - before;
			}
			check(kt[0] == ODP_OK && kt[1] == ODP_OK &&
				  memcmp(d[0], d[1], sizeof(double) * n * 10) == 0 &&
				  memcmp(ix[0], ix[1], sizeof(int64_t) * n * 10) == 0 &&
				  (&odp_gpu_knn_tc_team == NULL || (teamed == 2) == cases[c].team),
				  "devices %s k-NN self join %s k=10: identical to one GPU, %s (status %s, %s; %lld parts shared the pairs)",
				  split_name, cases[c].what, cases[c].team ? "the pairs shared" : "each part its own rows",
				  odp_status_name(kt[0]), odp_status_name(kt[1]), (long long) teamed);
			for (int path = 0; path < 2; path++)
			{
				free(d[path]);
				free(ix[path]);
			}
			free(y);
		}
	}
}

/* Collected correlation pairs. */
typedef struct PearsonGot
{
	int64_t    *a;
	int64_t    *b;
	double	   *r;
	int64_t		n;
	int64_t		cap;
} PearsonGot;

static bool
pearson_collect(void *arg, const int64_t *a, const int64_t *b, const double *r,
				int64_t count)
{
	PearsonGot    *g = (PearsonGot *) arg;

	if (g->n + count > g->cap)
	{
		g->cap = (g->n + count) * 2;
		g->a = realloc(g->a, sizeof(int64_t) * g->cap);
		g->b = realloc(g->b, sizeof(int64_t) * g->cap);
		g->r = realloc(g->r, sizeof(double) * g->cap);
		if (g->a == NULL || g->b == NULL || g->r == NULL)
			abort();
	}
	memcpy(g->a + g->n, a, sizeof(int64_t) * count);
	memcpy(g->b + g->n, b, sizeof(int64_t) * count);
	memcpy(g->r + g->n, r, sizeof(double) * count);
	g->n += count;
	return true;
}

/* Frees what pearson_collect gathered. */
static void
pearson_got_free(PearsonGot *g)
{
	free(g->a);
	free(g->b);
	free(g->r);
}

/* Whether two pair lists are the same pairs in the same order; *diff: max |r| difference. */
static bool
pearson_same(const PearsonGot *x, const PearsonGot *y, double *diff)
{
	*diff = 0.0;
	if (x->n != y->n)
		return false;
	for (int64_t i = 0; i < x->n; i++)
	{
		if (x->a[i] != y->a[i] || x->b[i] != y->b[i])
			return false;
		if (fabs(x->r[i] - y->r[i]) > *diff)
			*diff = fabs(x->r[i] - y->r[i]);
	}
	return true;
}

/*
 * Correlations: pairs and top-k lists on {0, 0} identical to one GPU;
 * against the CPU within the 1e-12 the paths promise each other.
 */
static void
pearson_split_tests(void)
{
	const int64_t rows = 1500,
				other_rows = 700;
	const int	dims = 64,
				k = 5;
	double	   *xs = xmalloc(sizeof(double) * rows * dims);
	double	   *ys = xmalloc(sizeof(double) * other_rows * dims);
	OdpMatrix64 mx = {xs, NULL, rows, dims};
	OdpMatrix64 my = {ys, NULL, other_rows, dims};

	/* series around a few shared trends, so that some pairs correlate */
	for (int64_t i = 0; i < rows * dims; i++)
		xs[i] = sin((double) (i % dims) * (1 + (i / dims) % 5)) + rng_unit();
	for (int64_t i = 0; i < other_rows * dims; i++)
		ys[i] = sin((double) (i % dims) * (1 + (i / dims) % 4)) + rng_unit();

	for (int cross = 0; cross < 2; cross++)
	{
		OdpPearsonProblem p = {&mx, cross ? &my : NULL, ODP_PEARSON_METHOD_PEARSON, 1};
		const int64_t partners = cross ? other_rows : rows;
		PearsonGot		got[3];
		int64_t    *other[3];
		double	   *r[3];
		OdpStatus	st[3],
					tt[3];
		int64_t		npairs = 0;
		double		diff_gpu,
					diff_cpu;
		bool		same_gpu,
					same_cpu,
					lists_gpu = true,
					lists_cpu = true;

		memset(got, 0, sizeof(got));
		for (int path = 0; path < 3; path++)
		{
			OdpContext	ctx = path == 0 ? make_ctx(ODP_DEVICE_CPU) :
				path == 1 ? make_ctx(ODP_DEVICE_GPU) : split_ctx();

			st[path] = odp_compute_pearson_pairs(&ctx, &p, 0.3, pearson_collect, &got[path], &npairs);
			other[path] = xmalloc(sizeof(int64_t) * rows * k);
			r[path] = xmalloc(sizeof(double) * rows * k);
			tt[path] = odp_compute_pearson_top(&ctx, &p, k, ODP_PEARSON_RANK_ABS, other[path], r[path]);
		}
		same_gpu = pearson_same(&got[2], &got[1], &diff_gpu);
		same_cpu = pearson_same(&got[2], &got[0], &diff_cpu);
		check(st[0] == ODP_OK && st[1] == ODP_OK && st[2] == ODP_OK && got[2].n > 0 &&
			  same_gpu && diff_gpu == 0.0 && same_cpu && diff_cpu <= 1e-12,
			  "devices %s correlation pairs %s %lld x %lld: %lld pairs, same as one GPU %s (max |r| diff %.1e), as the CPU %s (%.1e)", split_name,
			  cross ? "two sources" : "self", (long long) rows, (long long) partners,
			  (long long) got[2].n, same_gpu ? "yes" : "NO", diff_gpu,
			  same_cpu ? "yes" : "NO", diff_cpu);
		for (int64_t i = 0; i < rows * k; i++)
		{
			lists_gpu &= other[2][i] == other[1][i] && r[2][i] == r[1][i];
			lists_cpu &= other[2][i] == other[0][i] && fabs(r[2][i] - r[0][i]) <= 1e-12;
		}
		check(tt[0] == ODP_OK && tt[1] == ODP_OK && tt[2] == ODP_OK && lists_gpu && lists_cpu,
			  "devices %s correlation top-%d %s: lists identical to one GPU %s, to the CPU within 1e-12 %s", split_name,
			  k, cross ? "two sources" : "self", lists_gpu ? "yes" : "NO",
			  lists_cpu ? "yes" : "NO");
		for (int path = 0; path < 3; path++)
		{
			pearson_got_free(&got[path]);
			free(other[path]);
			free(r[path]);
		}
	}
	free(xs);
	free(ys);
}

/*
 * Correlation pairs on {0, 0} from staged panels: each part's pairs come
 * block of partners after block and are put in order on the part's own
 * thread, both parts at once; the same pairs as one GPU with the same
 * budget per part, and as the CPU, the coefficients within the 1e-12 the
 * paths promise each other.
 */
static void
pearson_split_staged_test(void)
{
	const int64_t rows = 700;
	const int	dims = 1500;
	const size_t part_budget = (size_t) 40 << 20;
	const int64_t staged_before = gpu_counter(&odp_gpu_pearson_staged_runs);
	double	   *xs = xmalloc(sizeof(double) * rows * dims);
	OdpMatrix64 mx = {xs, NULL, rows, dims};
	OdpPearsonProblem p = {&mx, NULL, ODP_PEARSON_METHOD_PEARSON, 1};
	PearsonGot	got[3];
	OdpStatus	st[3];
	int64_t		npairs = 0;
	double		diff_gpu,
				diff_cpu;
	bool		same_gpu,
				same_cpu;

	for (int64_t i = 0; i < rows * dims; i++)
		xs[i] = sin((double) (i % dims) * (1 + (i / dims) % 7) / 50.0) + rng_unit();
	memset(got, 0, sizeof(got));
	for (int path = 0; path < 3; path++)
	{
		OdpContext	ctx = path == 0 ? make_ctx(ODP_DEVICE_CPU) :
			path == 1 ? make_ctx(ODP_DEVICE_GPU) : split_ctx();

		/* a device named twice splits its budget between its parts */
		ctx.gpu_memory_limit = path == 2 && split_second == 0 ? 2 * part_budget : part_budget;
		st[path] = odp_compute_pearson_pairs(&ctx, &p, 0.3, pearson_collect, &got[path], &npairs);
	}
	same_gpu = pearson_same(&got[2], &got[1], &diff_gpu);
	same_cpu = pearson_same(&got[2], &got[0], &diff_cpu);
	check(st[0] == ODP_OK && st[1] == ODP_OK && st[2] == ODP_OK && got[2].n > 0 &&
		  gpu_counter(&odp_gpu_pearson_staged_runs) >= staged_before + 3 &&
		  same_gpu && diff_gpu <= 1e-12 && same_cpu && diff_cpu <= 1e-12,
		  "devices %s correlation pairs from staged panels, %lld x %d: %lld pairs, %lld staged runs, same as one GPU %s (max |r| diff %.1e), as the CPU %s (%.1e)", split_name,
		  (long long) rows, dims, (long long) got[2].n,
		  (long long) (gpu_counter(&odp_gpu_pearson_staged_runs) - staged_before),
		  same_gpu ? "yes" : "NO", diff_gpu, same_cpu ? "yes" : "NO", diff_cpu);
	for (int path = 0; path < 3; path++)
		pearson_got_free(&got[path]);
	free(xs);
}

/*
 * Skyline and k-skyband: {0, 0} identical to one GPU and the CPU, with
 * every block split between the parts (window 0) and with the blocks
 * split only from a window of 16,384 rows on.
 */
static void
skyline_split_tests(void)
{
	const int64_t rows = 40000;
	const int	dims = 4;
	const int64_t saved_window = odp_sky_split_window;
	double	   *v = xmalloc(sizeof(double) * rows * dims);
	OdpMatrix64 m = {v, NULL, rows, dims};

	for (int band = 1; band <= 4; band += 3)
	{
		OdpSkylineProblem p = {&m, NULL, band};

		/*
		 * band 1: independent values on a coarse grid (ties; a small
		 * skyline); band 4: anti-correlated, points about the plane sum = 1
		 * (most rows are members)
		 */
		for (int64_t i = 0; i < rows; i++)
		{
			double		s = 0.0;

			for (int d = 0; d < dims; d++)
			{
				v[i * dims + d] = band == 1 ? floor(rng_unit() * 200.0) : rng_unit();
				s += v[i * dims + d];
			}
			if (band != 1)
				for (int d = 0; d < dims; d++)
					v[i * dims + d] = v[i * dims + d] / s * (0.9 + 0.2 * rng_unit());
		}
		for (int64_t window = 0; window <= 16384; window += 16384)
		{
			int32_t    *out[3] = {NULL, NULL, NULL};
			OdpStatus	st[3];
			OdpSkylineStats stats;
			int64_t		members = 0;

			for (int path = 0; path < 3; path++)
			{
				OdpContext	ctx = path == 0 ? make_ctx(ODP_DEVICE_CPU) :
					path == 1 ? make_ctx(ODP_DEVICE_GPU) : split_ctx();

				out[path] = xmalloc(sizeof(int32_t) * rows);
				odp_sky_split_window = path == 2 ? window : saved_window;
				st[path] = odp_compute_skyline(&ctx, &p, out[path], &stats);
				if (path == 2)
					members = stats.members;
			}
			odp_sky_split_window = saved_window;
			check(st[0] == ODP_OK && st[1] == ODP_OK && st[2] == ODP_OK && members > 0 &&
				  memcmp(out[2], out[1], sizeof(int32_t) * rows) == 0 &&
				  memcmp(out[2], out[0], sizeof(int32_t) * rows) == 0,
				  "devices %s skyline band %d, %lld x %d, blocks split from a window of %lld: "
				  "%lld members, identical to one GPU and the CPU", split_name,
				  band, (long long) rows, dims, (long long) window, (long long) members);
			for (int path = 0; path < 3; path++)
				free(out[path]);
		}
	}
	free(v);
}

/* Collected region pairs. */
static bool
iv_collect(void *arg, const int64_t *a, const int64_t *b, int64_t count)
{
	PearsonGot    *g = (PearsonGot *) arg;
	double	   *r = xmalloc(sizeof(double) * (count > 0 ? count : 1));

	for (int64_t i = 0; i < count; i++)
		r[i] = 0.0;
	pearson_collect(g, a, b, r, count);
	free(r);
	return true;
}

/* Region matching: pairs and counts on {0, 0} identical to one GPU and the CPU. */
static void
interval_split_tests(void)
{
	const int64_t na = 20000,
				nb = 9000;
	const int	dims = 2;
	uint64_t   *lo = xmalloc(sizeof(uint64_t) * (na + nb) * dims);
	uint64_t   *hi = xmalloc(sizeof(uint64_t) * (na + nb) * dims);
	OdpRegions	ra = {lo, hi, NULL, na, dims};
	OdpRegions	rb = {lo + na * dims, hi + na * dims, NULL, nb, dims};

	for (int64_t i = 0; i < (na + nb) * dims; i++)
	{
		uint64_t	l = rng_next() % 1000000;

		lo[i] = l;
		hi[i] = l + rng_next() % 3000;
	}
	for (int self = 0; self < 2; self++)
	{
		OdpIntervalProblem p = {&ra, self ? NULL : &rb, NULL};
		PearsonGot		got[3];
		int64_t		n[3],
					c[3];
		OdpStatus	st[3],
					ct[3];
		double		diff;
		bool		same_gpu,
					same_cpu;

		memset(got, 0, sizeof(got));
		for (int path = 0; path < 3; path++)
		{
			OdpContext	ctx = path == 0 ? make_ctx(ODP_DEVICE_CPU) :
				path == 1 ? make_ctx(ODP_DEVICE_GPU) : split_ctx();

			st[path] = odp_compute_interval_pairs(&ctx, &p, iv_collect, &got[path], &n[path], NULL);
			ct[path] = odp_compute_interval_count(&ctx, &p, &c[path], NULL);
		}
		same_gpu = pearson_same(&got[2], &got[1], &diff);
		same_cpu = pearson_same(&got[2], &got[0], &diff);
		check(st[0] == ODP_OK && st[1] == ODP_OK && st[2] == ODP_OK && got[2].n > 0 &&
			  n[2] == got[2].n && same_gpu && same_cpu,
			  "devices %s region matching %s: %lld pairs, same pairs in the same order as one GPU %s, as the CPU %s", split_name,
			  self ? "one set" : "two sets", (long long) got[2].n,
			  same_gpu ? "yes" : "NO", same_cpu ? "yes" : "NO");
		check(ct[0] == ODP_OK && ct[1] == ODP_OK && ct[2] == ODP_OK &&
			  c[2] == c[1] && c[2] == c[0] && c[2] == got[0].n,
			  "devices %s region count %s: %lld (one GPU %lld, CPU %lld)", split_name,
			  self ? "one set" : "two sets", (long long) c[2], (long long) c[1],
			  (long long) c[0]);
		for (int path = 0; path < 3; path++)
			pearson_got_free(&got[path]);
	}
	free(lo);
	free(hi);
}

/* Cancel callback: stops at the given poll. */
static bool
cancel_at(void *arg)
{
	int		   *left = (int *) arg;

	return --(*left) <= 0;
}

/*
 * Faults: a device list naming a missing device; a budget too small for
 * either part; cancel while both parts run.  Each ends with the usual
 * error and leaves device 0's free memory as it was.
 */
static void
fault_tests(void)
{
	const int64_t rows = 60000;
	const int	dims = 64;
	float	   *x = make_data(GEN_UNIFORM, rows, dims);
	OdpMatrix	m = {x, rows, dims};
	double	   *scores = xmalloc(sizeof(double) * rows);
	OdpContext	ctx;
	OdpStatus	st;
	size_t		before,
				after;
	int			polls;

	ctx = split_ctx();
	ctx.gpu_ids[1] = 63;
	st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 10, scores);
	check(st == ODP_ERR_INVALID_ARGUMENT && strstr(ctx.message, "device 63") != NULL,
		  "devices {0,63}: status \"%s\", message \"%s\"", odp_status_name(st), ctx.message);

	before = free_bytes();
	ctx = split_ctx();
	/* 32 kB a part: {0, 0} halves the 64 kB it is given */
	ctx.gpu_memory_limit = split_second == 0 ? 64 << 10 : 32 << 10;
	st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 10, scores);
	after = free_bytes();
	check(st == ODP_ERR_GPU_OOM && strstr(ctx.message, "part 1 of 2") != NULL &&
		  after == before,
		  "devices %s with a budget of 32 kB a part: status \"%s\", message \"%s\", free memory %zu -> %zu",
		  split_name, odp_status_name(st), ctx.message, before, after);

	before = free_bytes();
	ctx = split_ctx();
	polls = 3;
	ctx.cancel = cancel_at;
	ctx.cancel_arg = &polls;
	{
		double		t0 = odp_now_ms();

		st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_MANHATTAN, 50, scores);
		after = free_bytes();
		check(st == ODP_ERR_CANCELLED && after == before && odp_now_ms() - t0 < 1000.0,
			  "devices %s cancelled: status \"%s\" after %.0f ms, free memory %zu -> %zu",
			  split_name, odp_status_name(st), odp_now_ms() - t0, before, after);
	}

	ctx = split_ctx();
	st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 10, scores);
	check(st == ODP_OK, "devices %s: a call after the faults succeeds: %s %s", split_name,
		  odp_status_name(st), ctx.message);
	free(x);
	free(scores);
}

/*
 * A context poisoned by an illegal address fails the calls on it until
 * odp_gpu_device_recover rebuilds it; then a call works and gives the CPU
 * path's scores.  Runs last: it resets device 0.
 */
static void
recover_tests(void)
{
	const int64_t rows = 5000;
	const int	dims = 8;
	float	   *x = make_data(GEN_UNIFORM, rows, dims);
	OdpMatrix	m = {x, rows, dims};
	double	   *cpu = xmalloc(sizeof(double) * rows);
	double	   *gpu = xmalloc(sizeof(double) * rows);
	OdpContext	ctx;
	OdpStatus	st;
	bool		rebuilt = true;

	ctx = make_ctx(ODP_DEVICE_GPU);
	st = odp_gpu_device_recover(&ctx, 0, &rebuilt);
	check(st == ODP_OK && !rebuilt, "a healthy device needs no rebuild: %s %s",
		  odp_status_name(st), ctx.message);
	ctx = make_ctx(ODP_DEVICE_CPU);
	st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, cpu);
	check(st == ODP_OK, "CPU scores: %s", ctx.message);

	ctx = make_ctx(ODP_DEVICE_GPU);
	st = odp_gpu_device_poison(&ctx, 0);
	check(st == ODP_OK, "poisoning device 0: %s", ctx.message);
	ctx = make_ctx(ODP_DEVICE_GPU);
	st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, gpu);
	check(st == ODP_ERR_GPU, "a call on a poisoned context fails with a GPU error: \"%s\" %s",
		  odp_status_name(st), ctx.message);

	ctx = make_ctx(ODP_DEVICE_GPU);
	st = odp_gpu_device_recover(&ctx, 0, &rebuilt);
	check((st == ODP_OK && rebuilt) ||
		  (st == ODP_ERR_GPU && strstr(ctx.message, "poisoned") != NULL),
		  "the poisoned context is rebuilt or reported as needing a new process: %s rebuilt=%d %s",
		  odp_status_name(st), (int) rebuilt, ctx.message);
	if (st == ODP_OK)
	{
		ctx = make_ctx(ODP_DEVICE_GPU);
		st = odp_compute_outlier_scores(&ctx, &m, ODP_METRIC_EUCLIDEAN, 5, gpu);
		check(st == ODP_OK && memcmp(cpu, gpu, sizeof(double) * rows) == 0,
			  "after the rebuild a call works and matches the CPU: %s %s",
			  odp_status_name(st), ctx.message);
	}
	free(x);
	free(cpu);
	free(gpu);
}

/* See test_util.h. */
/* One SolvingSet run's results. */
typedef struct SsSplitResult
{
	OdpStatus	status;
	int64_t		count;
	int64_t    *order;
	double	   *scores;
	int64_t    *set;
	double	   *set_scores;
	OdpTopOutliersStats stats;
	int			parts;
} SsSplitResult;

static void
ss_split_run(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric, int k,
			 int64_t n, int64_t batch, SsSplitResult *r)
{
	r->order = xmalloc(sizeof(int64_t) * (size_t) n);
	r->scores = xmalloc(sizeof(double) * (size_t) n);
	r->set = xmalloc(sizeof(int64_t) * (size_t) m->rows);
	r->set_scores = xmalloc(sizeof(double) * (size_t) m->rows);
	r->status = odp_compute_top_outliers(ctx, m, metric, k, n, ODP_METHOD_SOLVINGSET,
										 batch, r->order, r->scores, &r->count,
										 r->set, r->set_scores, &r->stats);
	r->parts = ctx->gpu_parts;
}

static bool
ss_split_same(const SsSplitResult *a, const SsSplitResult *b)
{
	bool		same = a->status == ODP_OK && b->status == ODP_OK &&
		a->count == b->count && a->stats.solving_set_size == b->stats.solving_set_size &&
		a->stats.iterations == b->stats.iterations;

	for (int64_t i = 0; same && i < a->count; i++)
		same = a->order[i] == b->order[i] && a->scores[i] == b->scores[i];
	for (int64_t i = 0; same && i < a->stats.solving_set_size; i++)
		same = a->set[i] == b->set[i] && a->set_scores[i] == b->set_scores[i];
	return same;
}

static void
ss_split_free(SsSplitResult *r)
{
	free(r->order);
	free(r->scores);
	free(r->set);
	free(r->set_scores);
}

/*
 * SolvingSet on {0, 0}: the distributed form with one node per part gives
 * the top n, the scores, the solving set and the iterations of one GPU
 * and of the CPU, with and without ids.
 */
static void
solvingset_split_tests(void)
{
	static const struct
	{
		Gen			gen;
		int64_t		rows;
		int			dims;
		int			k;
		int64_t		n;
		int64_t		batch;
		OdpMetric	metric;
		bool		ids;
	}			cases[] = {
		{GEN_UNIFORM, 20000, 8, 20, 10, 256, ODP_METRIC_EUCLIDEAN, false},
		{GEN_GRID, 12000, 10, 50, 10, 0, ODP_METRIC_EUCLIDEAN, true},
		{GEN_UNIFORM, 10000, 6, 10, 15, 512, ODP_METRIC_COSINE, false},
		{GEN_TIES, 9000, 3, 8, 12, 300, ODP_METRIC_MANHATTAN, true},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		float	   *x = make_data(cases[c].gen, cases[c].rows, cases[c].dims);
		int64_t    *ids = xmalloc(sizeof(int64_t) * (size_t) cases[c].rows);
		OdpMatrix	m = {0};
		OdpContext	one = make_ctx(ODP_DEVICE_GPU);
		OdpContext	two = split_ctx();
		OdpContext	cpu = make_ctx(ODP_DEVICE_CPU);
		SsSplitResult r1,
					r2,
					rc;

		for (int64_t i = 0; i < cases[c].rows; i++)
			ids[i] = 3 * i + 1;
		m.data = x;
		m.rows = cases[c].rows;
		m.dims = cases[c].dims;
		m.ids = cases[c].ids ? ids : NULL;
		ss_split_run(&one, &m, cases[c].metric, cases[c].k, cases[c].n, cases[c].batch, &r1);
		ss_split_run(&two, &m, cases[c].metric, cases[c].k, cases[c].n, cases[c].batch, &r2);
		ss_split_run(&cpu, &m, cases[c].metric, cases[c].k, cases[c].n, cases[c].batch, &rc);
		check(r2.status == ODP_OK && r2.parts == 2 && ss_split_same(&r1, &r2) &&
			  ss_split_same(&rc, &r2),
			  "solvingset split %s %lld x %d k=%d %s%s: %s in %d parts equals one GPU and the CPU "
			  "(%d iterations, solving set %lld) %s",
			  gen_names[cases[c].gen], (long long) cases[c].rows, cases[c].dims, cases[c].k,
			  odp_metric_name(cases[c].metric), cases[c].ids ? ", ids" : "", split_name, r2.parts,
			  (int) r2.stats.iterations, (long long) r2.stats.solving_set_size, two.message);
		ss_split_free(&r1);
		ss_split_free(&r2);
		ss_split_free(&rc);
		free(x);
		free(ids);
	}
}

void
run_device_tests(void)
{
	split_rows_tests();
	relay_tests();
	if (!gpu_ok)
	{
		OdpContext	ctx = split_ctx();
		OdpDeviceSet set;
		OdpStatus	st = OdpDeviceSetResolve(&ctx, &set);

		check(st == ODP_ERR_NO_GPU && ctx.message[0] != '\0',
			  "device list without a usable GPU: status \"%s\", message \"%s\"",
			  odp_status_name(st), ctx.message);
		printf("GPU device-set tests skipped: %s\n", gpu_reason);
		return;
	}
	{
		OdpContext	ctx = make_ctx(ODP_DEVICE_GPU);
		OdpDeviceSet set;

		ctx.gpu_count = ODP_GPUS_ALL;
		if (OdpDeviceSetResolve(&ctx, &set) == ODP_OK && set.count > 1)
		{
			split_second = 1;
			split_name = "{0,1}";
		}
	}
	knn_split_tests();
	pearson_split_tests();
	pearson_split_staged_test();
	skyline_split_tests();
	interval_split_tests();
	solvingset_split_tests();
	fault_tests();
	recover_tests();
}
