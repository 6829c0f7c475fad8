/*-------------------------------------------------------------------------
 *
 * test_util.c
 *	  Helpers shared by the engine unit tests: checks and their count,
 *	  reproducible random data, the naive outlier-score and k-NN
 *	  references, contexts and the GPU probe.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_util.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/odp_distance.h"
#include "test_util.h"

const char *const gen_names[] = {
	"uniform", "unit", "duplicates", "ties", "constant-columns", "identical",
	"offset", "wide", "grid"
};

static int	n_passed = 0;
static int	n_failed = 0;
bool		gpu_ok = false;
int			gpu_cc = 0;

/* The integer path's threshold (knn_gpu_int.cu); weak for CPU-only builds. */
extern int64_t odp_gpu_knn_int_min_pairs __attribute__((weak));

/* See test_util.h. */
void
gpu_integer_path(bool on)
{
	static int64_t production = -1;

	if (&odp_gpu_knn_int_min_pairs == NULL)
		return;
	if (production < 0)
		production = odp_gpu_knn_int_min_pairs;
	odp_gpu_knn_int_min_pairs = on ? production : INT64_MAX;
}
char		gpu_reason[ODP_MESSAGE_LEN];
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* Records one check and prints its line. */
void
check(bool ok, const char *fmt,...)
{
	va_list		ap;

	printf("%s - ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		n_passed++;
	else
		n_failed++;
}

/* xorshift64*: small, fast, reproducible across platforms. */
uint64_t
rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* Uniform float in [0, 1) with 24 random bits. */
float
rng_unit(void)
{
	return (float) (rng_next() >> 40) * (1.0f / 16777216.0f);
}

/* Allocates or dies: the test has no use for running out of memory. */
void *
xmalloc(size_t n)
{
	void	   *p = malloc(n ? n : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory (%zu bytes)\n", n);
		exit(2);
	}
	return p;
}

/*
 * Makes rows x dims data of the given kind; the caller frees it.  No row
 * is a zero vector, so that every metric, cosine included, accepts it.
 */
float *
make_data(Gen gen, int64_t rows, int dims)
{
	float	   *x = xmalloc(sizeof(float) * (size_t) rows * dims);
	int			protos = 20;

	for (int64_t i = 0; i < rows; i++)
	{
		float	   *r = x + i * dims;
		bool		zero = true;

		for (int d = 0; d < dims; d++)
		{
			switch (gen)
			{
				case GEN_UNIFORM:
					r[d] = 2.0f * rng_unit() - 1.0f;
					break;
				case GEN_UNIT:
					r[d] = rng_unit();
					break;
				case GEN_DUPLICATES:
				case GEN_IDENTICAL:
					break;
				case GEN_TIES:
					r[d] = (float) (rng_next() % 4);
					break;
				case GEN_CONSTANT_COLUMNS:
					r[d] = d % 3 == 1 ? 0.5f : 2.0f * rng_unit() - 1.0f;
					break;
				case GEN_OFFSET:
					r[d] = 300.0f + 2.0f * rng_unit() - 1.0f;
					break;
				case GEN_WIDE:
					r[d] = ldexpf(2.0f * rng_unit() - 1.0f, d % 2 == 0 ? 30 : -30);
					break;
				case GEN_GRID:
					r[d] = (float) (1 + rng_next() % 13);
					break;
			}
		}
		if (gen == GEN_DUPLICATES && i >= protos)
			memcpy(r, x + (int64_t) (rng_next() % protos) * dims, sizeof(float) * dims);
		else if (gen == GEN_DUPLICATES)
			for (int d = 0; d < dims; d++)
				r[d] = 2.0f * rng_unit() - 1.0f;
		if (gen == GEN_IDENTICAL)
			for (int d = 0; d < dims; d++)
				r[d] = 0.25f * (float) (d + 1);
		for (int d = 0; d < dims; d++)
			zero = zero && r[d] == 0.0f;
		if (zero)
			r[0] = 1.0f;
	}
	return x;
}

/* qsort comparator for floats (no NaN here). */
static int
cmp_float(const void *a, const void *b)
{
	float		x = *(const float *) a;
	float		y = *(const float *) b;

	return (x > y) - (x < y);
}

/*
 * Puts the k smallest of d[0 .. n) first, in ascending order: a
 * quickselect (middle pivot, Hoare's partition) and a sort of those k,
 * where a sort of all n made the references of a few thousand rows cost
 * seconds.  Equal values are equal, so the k are the sorted array's k.
 */
static void
smallest_sorted(float *d, int64_t n, int k)
{
	int64_t		lo = 0,
				hi = n - 1;

	while (k < n && lo < hi)
	{
		const float pivot = d[lo + (hi - lo) / 2];
		int64_t		i = lo,
					j = hi;

		while (i <= j)
		{
			while (d[i] < pivot)
				i++;
			while (d[j] > pivot)
				j--;
			if (i <= j)
			{
				float		t = d[i];

				d[i++] = d[j];
				d[j--] = t;
			}
		}
		/* [lo, j] <= pivot <= [i, hi]: go on in the side that holds the k-th */
		if (k - 1 <= j)
			hi = j;
		else if (k - 1 >= i)
			lo = i;
		else
			break;
	}
	qsort(d, (size_t) (k < n ? k : n), sizeof(float), cmp_float);
}

/* The naive reference: all distances, sorted per row, k smallest summed. */
void
reference_scores(const float *x, int64_t rows, int dims, OdpMetric metric,
				 int k, double *scores)
{
	float	   *norms = xmalloc(sizeof(float) * (size_t) rows);
	float	   *d = xmalloc(sizeof(float) * (size_t) rows);

	for (int64_t i = 0; i < rows; i++)
		norms[i] = odp_row_norm(x + i * dims, dims);
	for (int64_t p = 0; p < rows; p++)
	{
		int64_t		n = 0;

		for (int64_t q = 0; q < rows; q++)
			if (q != p)
				d[n++] = odp_distance(metric, x + p * dims, x + q * dims, dims,
									  norms[p], norms[q]);
		smallest_sorted(d, n, k);
		scores[p] = odp_sum_ascending(d, k);
	}
	free(norms);
	free(d);
}

/* One reference entry. */
typedef struct RefEntry
{
	float		d;
	int64_t		i;
} RefEntry;

/* The order of the reference: distance, then index. */
static int
cmp_entry(const void *a, const void *b)
{
	const RefEntry *x = (const RefEntry *) a;
	const RefEntry *y = (const RefEntry *) b;

	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* One thread's share of reference_knn: query rows first .. last - 1. */
typedef struct RefKnnSlice
{
	const OdpMatrix *q;
	const OdpMatrix *c;
	const float *cn;
	OdpMetric	metric;
	int			k;
	bool		self_join;
	int64_t		first;
	int64_t		last;
	float	   *dist;
	int64_t    *index;
} RefKnnSlice;

static void *
reference_knn_slice(void *arg)
{
	const RefKnnSlice *s = (const RefKnnSlice *) arg;
	const OdpMatrix *q = s->q;
	const OdpMatrix *c = s->c;
	const int	k = s->k;
	RefEntry   *e = xmalloc(sizeof(RefEntry) * (size_t) k);

	for (int64_t a = s->first; a < s->last; a++)
	{
		const float *qa = q->data + a * q->dims;
		const float qn = odp_row_norm(qa, q->dims);
		int			n = 0;

		for (int64_t b = 0; b < c->rows; b++)
		{
			RefEntry	x;
			int			p;

			if (s->self_join && a == b)
				continue;
			x.d = odp_distance(s->metric, qa, c->data + b * c->dims, q->dims, qn, s->cn[b]);
			x.i = b;
			if (n == k && cmp_entry(&x, &e[k - 1]) >= 0)
				continue;
			p = n < k ? n++ : k - 1;
			while (p > 0 && cmp_entry(&x, &e[p - 1]) < 0)
			{
				e[p] = e[p - 1];
				p--;
			}
			e[p] = x;
		}
		for (int r = 0; r < k; r++)
		{
			s->dist[a * k + r] = s->metric == ODP_METRIC_INNER_PRODUCT ? -e[r].d : e[r].d;
			s->index[a * k + r] = e[r].i;
		}
	}
	free(e);
	return NULL;
}

/*
 * The naive reference of odp_compute_knn: every candidate's distance
 * (odp_distance), kept by insertion into a sorted list of the k smallest
 * by (distance, index); inner products reported positive.  Query rows
 * are split over the machine's cores (plain threads, none of the
 * engine's): the filter's 33,000-row self joins took a core 15 to 25 s
 * a metric.
 */
void
reference_knn(const OdpMatrix *q, const OdpMatrix *c, OdpMetric metric,
			  int k, bool self_join, float *dist, int64_t *index)
{
	enum
	{
		REF_MAX_THREADS = 32
	};
	float	   *cn = xmalloc(sizeof(float) * (size_t) c->rows);
	long		cores = sysconf(_SC_NPROCESSORS_ONLN);
	int			nt = cores < 1 ? 1 : (cores > REF_MAX_THREADS ? REF_MAX_THREADS : (int) cores);
	RefKnnSlice slices[REF_MAX_THREADS];
	pthread_t	threads[REF_MAX_THREADS];
	bool		started[REF_MAX_THREADS];

	for (int64_t b = 0; b < c->rows; b++)
		cn[b] = odp_row_norm(c->data + b * c->dims, c->dims);
	if ((int64_t) nt > q->rows)
		nt = q->rows < 1 ? 1 : (int) q->rows;
	for (int t = 0; t < nt; t++)
	{
		RefKnnSlice *s = &slices[t];

		s->q = q;
		s->c = c;
		s->cn = cn;
		s->metric = metric;
		s->k = k;
		s->self_join = self_join;
		s->first = q->rows * t / nt;
		s->last = q->rows * (t + 1) / nt;
		s->dist = dist;
		s->index = index;
		/* slice 0 runs here; a slice whose thread cannot start, too */
		started[t] = t > 0 && pthread_create(&threads[t], NULL, reference_knn_slice, s) == 0;
	}
	for (int t = 0; t < nt; t++)
		if (!started[t])
			reference_knn_slice(&slices[t]);
	for (int t = 1; t < nt; t++)
		if (started[t])
			pthread_join(threads[t], NULL);
	free(cn);
}

/* A context for device dev with sane defaults. */
OdpContext
make_ctx(OdpDevice dev)
{
	OdpContext	ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.device = dev;
	ctx.cpu_threads = 4;
	/* the other suites test the brute force and SolvingSet; test_spatial.c the tree */
	ctx.spatial = ODP_SPATIAL_OFF;
	return ctx;
}

/* Probes the GPU and reports what was found. */
void
probe_gpu(void)
{
	OdpContext	ctx = make_ctx(ODP_DEVICE_GPU);
	int			count = 0;
	int			driver = 0;
	int			runtime = 0;
	OdpStatus	st;

	if (!odp_gpu_compiled())
	{
		snprintf(gpu_reason, sizeof(gpu_reason), "built without CUDA");
		return;
	}
	st = odp_gpu_probe(&ctx, &count, &driver, &runtime);
	if (st != ODP_OK)
	{
		check(st == ODP_ERR_NO_GPU && ctx.message[0] != '\0',
			  "gpu probe without a usable GPU: status \"%s\", message \"%s\"",
			  odp_status_name(st), ctx.message);
		snprintf(gpu_reason, sizeof(gpu_reason), "%s", ctx.message);
		return;
	}
	gpu_ok = true;
	check(count >= 1 && runtime > 0,
		  "gpu probe: %d device(s), driver %d, runtime %d, built with %d",
		  count, driver, runtime, odp_gpu_build_version());
	for (int i = 0; i < count; i++)
	{
		OdpGpuInfo	info;

		st = odp_gpu_device_info(&ctx, i, &info);
		if (st == ODP_OK && i == 0)
			gpu_cc = info.cc_major * 10 + info.cc_minor;
		check(st == ODP_OK, "gpu %d: %s, cc %d.%d, %d SMs, %.1f of %.1f GiB free",
			  i, st == ODP_OK ? info.name : ctx.message, info.cc_major,
			  info.cc_minor, info.multiprocessors,
			  info.free_memory / 1073741824.0, info.total_memory / 1073741824.0);
	}
}

/* Prints "N passed, N failed"; returns the exit status (1 when a check failed). */
int
test_summary(void)
{
	printf("%d passed, %d failed\n", n_passed, n_failed);
	return n_failed == 0 ? 0 : 1;
}
