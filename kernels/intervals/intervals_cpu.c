/*-------------------------------------------------------------------------
 *
 * intervals_cpu.c
 *	  CPU path of the region matching: the sorted structures, the windows
 *	  and the candidates of intervals_internal.h, on ctx->cpu_threads threads.
 *
 * A run first finds every driver's window (two binary searches each, in
 * parallel over blocks of drivers) and adds up their lengths, the
 * candidates.  The candidates are then split into equal ranges, one task
 * each, so that a few regions with huge windows spread over the threads
 * and the cancel callback is asked often whatever the data; each task
 * finds its first driver by a binary search over the window offsets.
 * Keys of the pairs go straight to their place when every candidate is a
 * pair, else to the task's own buffer; a parallel radix sort orders them.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_cpu.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/host_sort.h"
#include "common/host_threads.h"
#include "intervals/intervals_internal.h"
#include "intervals/intervals_math.h"

/* Drivers per task of the window pass. */
#define CPU_IV_DRIVERS		4096

/* Candidates per task of the candidate pass. */
#define CPU_IV_CANDIDATES	((int64_t) 1 << 20)

/* One side's regions in sweep order. */
typedef struct CpuIvSorted
{
	int64_t		n;
	uint64_t   *lo;				/* sweep lower bounds, ascending */
	uint64_t   *hi;				/* sweep upper bounds */
	uint32_t   *row;			/* live positions */
	uint64_t   *tlo;			/* ntest x n: the test dimensions */
	uint64_t   *thi;
} CpuIvSorted;

/* A task's pairs, when candidates must be tested. */
typedef struct CpuIvBuffer
{
	uint64_t   *keys;
	int64_t		n;
	int64_t		cap;
} CpuIvBuffer;

typedef struct CpuIv
{
	OdpContext *ctx;
	const OdpIvPrep *prep;
	int			ntest;
	int		   *test_dim;		/* ntest dimensions */
	CpuIvSorted bs;				/* the loaded B range */
	CpuIvSorted as;				/* the run's A range */

	/* the run */
	const OdpIvRun *run;
	const CpuIvSorted *dset[2];	/* driver sets: A (case 1) and B (case 2) */
	const CpuIvSorted *tset[2];	/* their targets */
	int			ndsets;
	int64_t    *wstart;			/* per driver, sets one after the other */
	int64_t    *woff;			/* exclusive prefix of window lengths, + 1 */
	int64_t		ndrivers;
	bool		tests;
	int64_t		capacity;
	atomic_llong matched;		/* pairs found by the candidate pass */
	atomic_llong reserved;		/* keys the tasks' buffers may hold */
	int64_t		reserve_max;
	atomic_int	oom;
	CpuIvBuffer *bufs;
	int64_t		ntasks;

	uint64_t   *keys;			/* the kept, sorted keys */
	uint64_t   *tmp;
	int64_t		nkeys;
	double	   *sort_ms;		/* the backend's */
	double	   *match_ms;
} CpuIv;

static void
cpu_iv_free_sorted(CpuIvSorted *s)
{
	free(s->lo);
	free(s->hi);
	free(s->row);
	free(s->tlo);
	free(s->thi);
	memset(s, 0, sizeof(*s));
}

/* Job of cpu_iv_build: live positions [l0, l1) of side s, sorted. */
typedef struct CpuIvBuild
{
	CpuIv	   *cv;
	const OdpIvSide *side;
	CpuIvSorted *out;
} CpuIvBuild;

/* Task: the hi and test arrays of a block of sorted positions. */
static void
cpu_iv_gather(void *arg, int64_t task)
{
	CpuIvBuild *b = (CpuIvBuild *) arg;
	const OdpIvPrep *prep = b->cv->prep;
	const int	dims = prep->dims;
	CpuIvSorted *s = b->out;
	int64_t		i0 = task * CPU_IV_DRIVERS;
	int64_t		i1 = i0 + CPU_IV_DRIVERS < s->n ? i0 + CPU_IV_DRIVERS : s->n;

	for (int64_t i = i0; i < i1; i++)
	{
		const int64_t base = (int64_t) s->row[i] * dims;	/* a live position */

		s->hi[i] = b->side->hi[base + prep->sweep];
		if (prep->box[prep->sweep])
			s->hi[i] = odp_iv_box_upper(s->hi[i]);
		for (int k = 0; k < b->cv->ntest; k++)
		{
			const int	d = b->cv->test_dim[k];

			s->tlo[k * s->n + i] = b->side->lo[base + d];
			s->thi[k * s->n + i] = prep->box[d] ? odp_iv_box_upper(b->side->hi[base + d])
				: b->side->hi[base + d];
		}
	}
}

/* Builds *out from live positions [l0, l1) of side: sort, then gather. */
static OdpStatus
cpu_iv_build(CpuIv *cv, const OdpIvSide *side, int64_t l0, int64_t l1,
			 CpuIvSorted *out)
{
	const OdpIvPrep *prep = cv->prep;
	const int64_t n = l1 - l0;
	const size_t cells = (size_t) (n > 0 ? n : 1) * (size_t) (cv->ntest > 0 ? cv->ntest : 1);
	uint64_t   *tkey = malloc(sizeof(uint64_t) * (size_t) (n > 0 ? n : 1));
	uint32_t   *tval = malloc(sizeof(uint32_t) * (size_t) (n > 0 ? n : 1));
	int64_t    *count = malloc(sizeof(int64_t) * ODP_RADIX_COUNTS);
	CpuIvBuild	b;
	OdpStatus	status;

	cpu_iv_free_sorted(out);
	out->n = n;
	out->lo = malloc(sizeof(uint64_t) * (size_t) (n > 0 ? n : 1));
	out->hi = malloc(sizeof(uint64_t) * (size_t) (n > 0 ? n : 1));
	out->row = malloc(sizeof(uint32_t) * (size_t) (n > 0 ? n : 1));
	out->tlo = malloc(sizeof(uint64_t) * cells);
	out->thi = malloc(sizeof(uint64_t) * cells);
	if (!tkey || !tval || !count || !out->lo || !out->hi || !out->row ||
		!out->tlo || !out->thi)
	{
		free(tkey);
		free(tval);
		free(count);
		cpu_iv_free_sorted(out);
		return odp_fail(cv->ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld sorted regions", (long long) n);
	}
	for (int64_t i = 0; i < n; i++)
	{
		out->row[i] = (uint32_t) (l0 + i);
		out->lo[i] = side->lo[(l0 + i) * prep->dims + prep->sweep];
	}
	/* stable: equal lower bounds stay in row order */
	odp_radix_sort(out->lo, out->row, tkey, tval, n, 64, count);
	free(tkey);
	free(tval);
	free(count);
	b.cv = cv;
	b.side = side;
	b.out = out;
	status = odp_parallel_tasks(cv->ctx, (n + CPU_IV_DRIVERS - 1) / CPU_IV_DRIVERS,
								cpu_iv_gather, &b);
	return status;
}

/* Set and index within it of global driver g. */
static inline int
cpu_iv_set_of(const CpuIv *cv, int64_t g, int64_t *i)
{
	if (cv->ndsets == 2 && g >= cv->dset[0]->n)
	{
		*i = g - cv->dset[0]->n;
		return 1;
	}
	*i = g;
	return 0;
}

/* Task: the windows of a block of global drivers. */
static void
cpu_iv_windows(void *arg, int64_t task)
{
	CpuIv	   *cv = (CpuIv *) arg;
	int64_t		g0 = task * CPU_IV_DRIVERS;
	int64_t		g1 = g0 + CPU_IV_DRIVERS < cv->ndrivers ? g0 + CPU_IV_DRIVERS : cv->ndrivers;

	for (int64_t g = g0; g < g1; g++)
	{
		int64_t		i,
					s,
					e;
		int			set = cpu_iv_set_of(cv, g, &i);
		const CpuIvSorted *d = cv->dset[set];
		const CpuIvSorted *t = cv->tset[set];

		odp_iv_window(cv->run->scheme, set, i, d->lo[i], d->hi[i], t->lo, t->n, &s, &e);
		cv->wstart[g] = s;
		cv->woff[g + 1] = e - s;
	}
}

/*
 * Appends key to a task's buffer.  Growing it reserves the growth from
 * the run's allowance, 2 x capacity + 1024 per task: while the run's
 * pairs stay within capacity no buffer is ever refused, and when they do
 * not (the run will be retried smaller) the buffers stop growing.
 */
static void
cpu_iv_append(CpuIv *cv, CpuIvBuffer *buf, uint64_t key)
{
	if (buf->n == buf->cap)
	{
		int64_t		grow = buf->cap > 0 ? buf->cap : 1024;
		uint64_t   *k;

		if (atomic_fetch_add(&cv->reserved, grow) + grow > cv->reserve_max)
			return;
		k = realloc(buf->keys, sizeof(uint64_t) * (size_t) (buf->cap + grow));
		if (k == NULL)
		{
			atomic_store(&cv->oom, 1);
			return;
		}
		buf->keys = k;
		buf->cap += grow;
	}
	buf->keys[buf->n++] = key;
}

/* Task: candidates [c0, c1) of the run. */
static void
cpu_iv_candidates(void *arg, int64_t task)
{
	CpuIv	   *cv = (CpuIv *) arg;
	const int64_t total = cv->woff[cv->ndrivers];
	int64_t		c0 = task * CPU_IV_CANDIDATES;
	int64_t		c1 = c0 + CPU_IV_CANDIDATES < total ? c0 + CPU_IV_CANDIDATES : total;
	/* the last driver whose window starts at or before c0 */
	int64_t		g = odp_iv_search((const uint64_t *) cv->woff, 0,
								  cv->ndrivers + 1, (uint64_t) c0, true) - 1;
	CpuIvBuffer *buf = cv->bufs != NULL ? &cv->bufs[task] : NULL;
	int64_t		matched = 0;
	bool		keep = !cv->run->count_only;

	for (int64_t c = c0; c < c1; g++)
	{
		int64_t		i;
		int			set = cpu_iv_set_of(cv, g, &i);
		const CpuIvSorted *d = cv->dset[set];
		const CpuIvSorted *t = cv->tset[set];
		int64_t		from = cv->wstart[g] + (c - cv->woff[g]);
		int64_t		to = cv->wstart[g] + ((c1 < cv->woff[g + 1] ? c1 : cv->woff[g + 1]) - cv->woff[g]);

		for (int64_t ti = from; ti < to; ti++)
		{
			uint64_t	key;

			if (cv->tests && !odp_iv_test(d->tlo, d->thi, d->n, i, t->tlo, t->thi, t->n, ti,
										  cv->ntest))
				continue;
			if (!odp_iv_pair_key(cv->run->scheme, set, d->row[i], t->row[ti],
								 cv->prep->b_bits, &key))
				continue;
			matched++;
			if (!keep)
				continue;
			if (buf == NULL)
				cv->keys[c + (ti - from)] = key;
			else
				cpu_iv_append(cv, buf, key);
		}
		c += to - from;
	}
	atomic_fetch_add(&cv->matched, matched);
}

/* Frees the run's per-task buffers. */
static void
cpu_iv_free_buffers(CpuIv *cv)
{
	if (cv->bufs != NULL)
		for (int64_t t = 0; t < cv->ntasks; t++)
			free(cv->bufs[t].keys);
	free(cv->bufs);
	cv->bufs = NULL;
	cv->ntasks = 0;
}

/* Backend load: the sorted structure of live B positions [b0, b1). */
static OdpStatus
cpu_iv_load(void *self, int64_t b0, int64_t b1)
{
	CpuIv	   *cv = (CpuIv *) self;
	double		t0 = odp_now_ms();
	OdpStatus	status = cpu_iv_build(cv, &cv->prep->b, b0, b1, &cv->bs);

	*cv->match_ms += odp_now_ms() - t0;
	return status;
}

static OdpStatus cpu_iv_run_timed(CpuIv *cv, const OdpIvRun *run, int64_t *found,
								  int64_t *candidates);

/* Backend run: see intervals_internal.h. */
static OdpStatus
cpu_iv_run(void *self, const OdpIvRun *run, int64_t *found, int64_t *candidates)
{
	CpuIv	   *cv = (CpuIv *) self;
	double		t0 = odp_now_ms();
	OdpStatus	status = cpu_iv_run_timed(cv, run, found, candidates);

	*cv->match_ms += odp_now_ms() - t0;
	return status;
}

/* The run itself. */
static OdpStatus
cpu_iv_run_timed(CpuIv *cv, const OdpIvRun *run, int64_t *found, int64_t *candidates)
{
	OdpStatus	status = ODP_OK;
	int64_t		total;

	*found = *candidates = 0;
	cv->run = run;
	cv->nkeys = 0;
	free(cv->keys);
	free(cv->tmp);
	cv->keys = cv->tmp = NULL;
	if (run->scheme == ODP_IV_SELF)
	{
		cv->ndsets = 1;
		cv->dset[0] = cv->tset[0] = &cv->bs;
	}
	else
	{
		if ((status = cpu_iv_build(cv, &cv->prep->a, run->a0, run->a1, &cv->as)) != ODP_OK)
			return status;
		cv->ndsets = 2;
		cv->dset[0] = &cv->as;
		cv->tset[0] = &cv->bs;
		cv->dset[1] = &cv->bs;
		cv->tset[1] = &cv->as;
	}
	cv->ndrivers = cv->dset[0]->n + (cv->ndsets == 2 ? cv->dset[1]->n : 0);
	cv->tests = odp_iv_needs_tests(cv->prep, run->scheme);
	cv->capacity = run->capacity;
	cv->wstart = malloc(sizeof(int64_t) * (size_t) (cv->ndrivers > 0 ? cv->ndrivers : 1));
	cv->woff = malloc(sizeof(int64_t) * (size_t) (cv->ndrivers + 1));
	if (cv->wstart == NULL || cv->woff == NULL)
	{
		status = odp_fail(cv->ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the windows of %lld regions",
						  (long long) cv->ndrivers);
		goto done;
	}
	cv->woff[0] = 0;
	if ((status = odp_parallel_tasks(cv->ctx, (cv->ndrivers + CPU_IV_DRIVERS - 1) / CPU_IV_DRIVERS,
									 cpu_iv_windows, cv)) != ODP_OK)
		goto done;
	for (int64_t g = 0; g < cv->ndrivers; g++)
		cv->woff[g + 1] += cv->woff[g];
	total = cv->woff[cv->ndrivers];
	*candidates = total;

	if (!cv->tests && (run->count_only || total > run->capacity))
	{
		/* every candidate is a pair: nothing to look at */
		*found = total;
		goto done;
	}
	cv->ntasks = (total + CPU_IV_CANDIDATES - 1) / CPU_IV_CANDIDATES;
	atomic_init(&cv->matched, 0);
	atomic_init(&cv->reserved, 0);
	atomic_init(&cv->oom, 0);
	cv->reserve_max = 2 * run->capacity + 1024 * cv->ntasks;
	if (!cv->tests)
	{
		cv->keys = malloc(sizeof(uint64_t) * (size_t) (total > 0 ? total : 1));
		if (cv->keys == NULL)
		{
			status = odp_fail(cv->ctx, ODP_ERR_HOST_OOM,
							  "out of host memory for %lld pairs", (long long) total);
			goto done;
		}
	}
	else if (!run->count_only)
	{
		cv->bufs = calloc((size_t) (cv->ntasks > 0 ? cv->ntasks : 1), sizeof(CpuIvBuffer));
		if (cv->bufs == NULL)
		{
			status = odp_fail(cv->ctx, ODP_ERR_HOST_OOM, "out of host memory");
			goto done;
		}
	}
	if ((status = odp_parallel_tasks(cv->ctx, cv->ntasks, cpu_iv_candidates, cv)) != ODP_OK)
		goto done;
	if (atomic_load(&cv->oom))
	{
		status = odp_fail(cv->ctx, ODP_ERR_HOST_OOM, "out of host memory for the pairs");
		goto done;
	}
	*found = atomic_load(&cv->matched);
	if (run->count_only || *found > run->capacity)
		goto done;
	cv->nkeys = *found;
	if (cv->bufs != NULL)
	{
		int64_t		at = 0;

		cv->keys = malloc(sizeof(uint64_t) * (size_t) (cv->nkeys > 0 ? cv->nkeys : 1));
		if (cv->keys == NULL)
		{
			status = odp_fail(cv->ctx, ODP_ERR_HOST_OOM,
							  "out of host memory for %lld pairs", (long long) cv->nkeys);
			goto done;
		}
		for (int64_t t = 0; t < cv->ntasks; t++)
		{
			memcpy(cv->keys + at, cv->bufs[t].keys, sizeof(uint64_t) * (size_t) cv->bufs[t].n);
			at += cv->bufs[t].n;
		}
		cpu_iv_free_buffers(cv);
	}
	cv->tmp = malloc(sizeof(uint64_t) * (size_t) (cv->nkeys > 0 ? cv->nkeys : 1));
	if (cv->tmp == NULL)
	{
		status = odp_fail(cv->ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for %lld pairs", (long long) cv->nkeys);
		goto done;
	}
	{
		double		t0 = odp_now_ms();

		status = odp_radix_sort_parallel(cv->ctx, cv->keys, NULL, cv->tmp, NULL,
										 cv->nkeys, cv->prep->key_bits);
		*cv->sort_ms += odp_now_ms() - t0;
	}
	free(cv->tmp);
	cv->tmp = NULL;

done:
	cpu_iv_free_buffers(cv);
	free(cv->wstart);
	free(cv->woff);
	cv->wstart = cv->woff = NULL;
	if (status != ODP_OK)
		cv->nkeys = 0;
	return status;
}

/* Backend keys: a pointer into the sorted keys. */
static OdpStatus
cpu_iv_keys(void *self, int64_t offset, int64_t n, const uint64_t **keys)
{
	CpuIv	   *cv = (CpuIv *) self;

	if (offset < 0 || offset + n > cv->nkeys)
		return odp_fail(cv->ctx, ODP_ERR_INTERNAL, "pair keys out of range");
	*keys = cv->keys + offset;
	return ODP_OK;
}

/* Backend release. */
static void
cpu_iv_release(void *self)
{
	CpuIv	   *cv = (CpuIv *) self;

	cpu_iv_free_sorted(&cv->as);
	cpu_iv_free_sorted(&cv->bs);
	free(cv->keys);
	free(cv->tmp);
	free(cv->test_dim);
	free(cv);
}

/* See intervals_internal.h. */
OdpStatus
odp_cpu_iv_backend(OdpContext *ctx, const OdpIvPrep *prep, OdpIvBackend *backend)
{
	CpuIv	   *cv = calloc(1, sizeof(CpuIv));

	memset(backend, 0, sizeof(*backend));
	if (cv == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	cv->ctx = ctx;
	cv->prep = prep;
	cv->test_dim = malloc(sizeof(int) * (size_t) prep->dims);
	if (cv->test_dim == NULL)
	{
		cpu_iv_release(cv);
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	}
	for (int d = 0; d < prep->dims; d++)
	{
		if (!odp_iv_is_test_dim(prep, d))
			continue;
		cv->test_dim[cv->ntest++] = d;
	}
	cv->sort_ms = &backend->sort_ms;
	cv->match_ms = &backend->match_ms;
	backend->self = cv;
	backend->a_rows_max = prep->a.nlive;
	backend->b_rows_max = prep->b.nlive;
	backend->capacity = ODP_IV_CPU_CAPACITY;
	backend->block = ODP_IV_KEY_BLOCK;
	backend->load = cpu_iv_load;
	backend->run = cpu_iv_run;
	backend->keys = cpu_iv_keys;
	backend->release = cpu_iv_release;
	return ODP_OK;
}
