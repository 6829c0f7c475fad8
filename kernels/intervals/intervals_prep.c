/*-------------------------------------------------------------------------
 *
 * intervals_prep.c
 *	  The region matching's preparation on the host (odp_iv_prepare): the
 *	  positions of the bounds, the regions set aside as empty, and the
 *	  choice of the sweep dimension.
 *
 * Positions.  A dimension whose bounds are all included (or infinite) is
 * compared on the keys themselves, an infinite lower bound as 0 and an
 * infinite upper bound as 2^64 - 1: nothing lies beyond them.  A
 * dimension with an excluded bound doubles its keys: with m the smallest
 * finite key, a bound at key v has position 2(v - m) + 2 when included,
 * one less when it is an excluded upper bound (just below v), one more
 * when it is an excluded lower bound (just above v); an infinite lower
 * bound is 0 and an infinite upper bound lies above every other position.
 * Then L meets U exactly as PostgreSQL's range_cmp_bounds says: a lower
 * bound just above v and an upper bound just below the next key share a
 * position, and meet, as (v, next) is not empty.  When the keys of a
 * dimension span more than 2^63 - 2 (doubles of both signs and large
 * magnitudes, say) they are first replaced by their ranks.
 *
 * Sweep dimension.  The candidates are the pairs that overlap in the sweep
 * dimension, so it is the dimension in which fewest pairs of a sample of
 * 256 x 256 regions overlap.  The same sample estimates how many pairs
 * overlap, which the GPU uses to size its first buffer of pairs.
 *
 * Passes.  Every pass over the rows runs in tasks of IV_PREP_ROWS rows of
 * both sides on the host's threads (odp_host_threads: the GPU path's
 * too, as its device work starts only once the positions are there).
 * The scan finds each dimension's flags and smallest and largest finite
 * keys, and counts each task's empty regions: whether an interval is
 * empty follows from its keys and flags alone, as positions keep the
 * keys' order (iv_interval_meets).  The counts give each task the place
 * of its first live region, so that one pass writes the live regions'
 * positions where they belong.  Ranks are dense: the finite keys of a
 * dimension, numbered in the order the rows hold them, are sorted with
 * their numbers (parallel radix sort), and each key's rank goes to its
 * number, which the encoding pass counts again.  Each task writes its
 * own rows, so the result does not depend on the threads.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_prep.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "common/host_sort.h"
#include "common/host_threads.h"
#include "intervals/intervals_internal.h"
#include "intervals/intervals_math.h"

/* Regions per side the sweep dimension's sample takes. */
#define IV_SAMPLE		256

/* Rows per task of the passes over the rows. */
#define IV_PREP_ROWS	65536

/* Flags that make a bound special. */
#define IV_EXCLUSIVE	(ODP_BOUND_LOWER_EXCLUSIVE | ODP_BOUND_UPPER_EXCLUSIVE)

/* See intervals_internal.h. */
bool		odp_iv_test_search_ranks = false;

/* What the bounds of one dimension need. */
typedef struct IvDimPlan
{
	bool		flagged;		/* some bound is excluded or infinite */
	bool		doubled;		/* some bound is excluded */
	uint64_t	base;			/* m: the smallest finite key */
	uint32_t   *rank_of;		/* ranked: each finite key's dense rank, by
								 * its number (the file header); or NULL */
	uint64_t   *sorted;			/* ranked by search: the sorted finite keys,
								 * a key's rank the place of its first copy;
								 * or NULL */
	int64_t		nsorted;
	int64_t		nranks;
	uint64_t	top;			/* the position of an infinite upper bound */
} IvDimPlan;

/* One task's scan of one dimension. */
typedef struct IvDimScan
{
	bool		flagged;
	bool		doubled;
	uint64_t	kmin;
	uint64_t	kmax;
	int64_t		finite;			/* finite bounds of regions not flagged
								 * empty: the keys the task numbers */
} IvDimScan;

/*
 * The rows of both sides in tasks: tasks [0, tasks[0]) cover side 0's
 * rows, the next tasks[1] side 1's (none for one set).
 */
typedef struct IvChunks
{
	const OdpRegions *x[2];
	int64_t		tasks[2];
} IvChunks;

/* The state of one preparation's passes. */
typedef struct IvPrepJob
{
	IvChunks	ch;
	int			dims;
	const uint8_t *box;
	IvDimScan  *scan;			/* tasks x dims */
	int64_t    *key_at;			/* tasks x dims: the number of the task's
								 * first finite key */
	int64_t    *live_at;		/* per task: empty regions (the scan), then
								 * the live position of its first live one */
	const IvDimPlan *plans;
	OdpIvSide  *side[2];
	uint64_t   *out[2];			/* where a side's positions go (lo, then
								 * hi), or NULL: the caller's keys serve */
	/* ranking one dimension */
	int			rank_dim;
	uint64_t   *keys;
	uint32_t   *nums;
	int64_t		nkeys;
	int64_t    *starts;			/* per part of the sorted keys */
} IvPrepJob;

/* Splits the rows of x (and y, or NULL) into tasks. */
static void
iv_chunks_init(IvChunks *ch, const OdpRegions *x, const OdpRegions *y)
{
	ch->x[0] = x;
	ch->x[1] = y;
	ch->tasks[0] = (x->rows + IV_PREP_ROWS - 1) / IV_PREP_ROWS;
	ch->tasks[1] = y != NULL ? (y->rows + IV_PREP_ROWS - 1) / IV_PREP_ROWS : 0;
}

/* The side of task t and its rows [*r0, *r1). */
static inline int
iv_chunk(const IvChunks *ch, int64_t t, int64_t *r0, int64_t *r1)
{
	int			s = t < ch->tasks[0] ? 0 : 1;
	int64_t		rows = ch->x[s]->rows;

	if (s == 1)
		t -= ch->tasks[0];
	*r0 = t * IV_PREP_ROWS;
	*r1 = *r0 + IV_PREP_ROWS < rows ? *r0 + IV_PREP_ROWS : rows;
	return s;
}

/* The flags of region r in dimension d (0 without flags). */
static inline uint8_t
iv_flags(const OdpRegions *x, int64_t r, int d)
{
	return x->flags != NULL ? x->flags[r * x->dims + d] : 0;
}

/*
 * Whether an interval's lower bound meets its upper bound, from their
 * keys and flags: what comparing their positions gives, as a position
 * keeps its key's order and a doubled one moves an excluded bound by less
 * than half the gap to the next key (a dimension with an excluded bound
 * is doubled, and only a box dimension, which has no flags, compares as
 * box &&).
 */
static inline bool
iv_interval_meets(uint64_t lo, uint64_t hi, uint8_t f, bool box)
{
	if (f & ODP_BOUND_EMPTY)
		return false;
	if (f & (ODP_BOUND_LOWER_INFINITE | ODP_BOUND_UPPER_INFINITE))
		return true;
	if (box)
		return odp_iv_meets(lo, hi, true);
	return lo < hi || (lo == hi && !(f & IV_EXCLUSIVE));
}

/* Whether region r of x overlaps nothing (x has flags). */
static inline bool
iv_region_empty(const OdpRegions *x, int64_t r, const uint8_t *box)
{
	bool		empty = false;

	for (int d = 0; d < x->dims; d++)
	{
		const int64_t at = r * x->dims + d;

		empty |= !iv_interval_meets(x->lower[at], x->upper[at], x->flags[at], box[d]);
	}
	return empty;
}

/* Counts a finite key and widens the range of its dimension's keys. */
static inline void
iv_scan_key(IvDimScan *s, uint64_t key)
{
	s->finite++;
	s->kmin = key < s->kmin ? key : s->kmin;
	s->kmax = key > s->kmax ? key : s->kmax;
}

/* Task: flags, finite keys and empty regions of its rows. */
static void
iv_scan_task(void *arg, int64_t t)
{
	IvPrepJob  *job = (IvPrepJob *) arg;
	int64_t		r0,
				r1;
	const OdpRegions *x = job->ch.x[iv_chunk(&job->ch, t, &r0, &r1)];
	IvDimScan  *sc = job->scan + t * job->dims;
	int64_t		empty = 0;

	for (int d = 0; d < job->dims; d++)
	{
		memset(&sc[d], 0, sizeof(sc[d]));
		sc[d].kmin = UINT64_MAX;
	}
	for (int64_t r = r0; r < r1; r++)
	{
		for (int d = 0; d < job->dims; d++)
		{
			const int64_t at = r * x->dims + d;
			uint8_t		f = iv_flags(x, r, d);
			IvDimScan  *s = &sc[d];

			s->flagged |= f != 0;
			if (f & ODP_BOUND_EMPTY)
				continue;
			s->doubled |= (f & IV_EXCLUSIVE) != 0;
			if (!(f & ODP_BOUND_LOWER_INFINITE))
				iv_scan_key(s, x->lower[at]);
			if (!(f & ODP_BOUND_UPPER_INFINITE))
				iv_scan_key(s, x->upper[at]);
		}
		/* unflagged regions are closed and not empty (odp_intervals.h) */
		if (x->flags != NULL)
			empty += iv_region_empty(x, r, job->box);
	}
	job->live_at[t] = empty;
}

/*
 * Task: its rows' finite keys of job->rank_dim with their numbers, from
 * job->key_at on (the order iv_encode_task counts them in).
 */
static void
iv_collect_task(void *arg, int64_t t)
{
	IvPrepJob  *job = (IvPrepJob *) arg;
	int64_t		r0,
				r1;
	const OdpRegions *x = job->ch.x[iv_chunk(&job->ch, t, &r0, &r1)];
	const int	d = job->rank_dim;
	int64_t		at = job->key_at[t * job->dims + d];

	for (int64_t r = r0; r < r1; r++)
	{
		uint8_t		f = iv_flags(x, r, d);
		const int64_t c = r * x->dims + d;

		if (f & ODP_BOUND_EMPTY)
			continue;
		if (!(f & ODP_BOUND_LOWER_INFINITE))
		{
			job->keys[at] = x->lower[c];
			job->nums[at] = (uint32_t) at;
			at++;
		}
		if (!(f & ODP_BOUND_UPPER_INFINITE))
		{
			job->keys[at] = x->upper[c];
			job->nums[at] = (uint32_t) at;
			at++;
		}
	}
}

/* Sorted keys per part of the dense ranking. */
#define IV_RANK_PART	(4 * IV_PREP_ROWS)

/* Task: how many sorted keys of part t differ from the key before them. */
static void
iv_starts_task(void *arg, int64_t t)
{
	IvPrepJob  *job = (IvPrepJob *) arg;
	int64_t		i0 = t * IV_RANK_PART;
	int64_t		i1 = i0 + IV_RANK_PART < job->nkeys ? i0 + IV_RANK_PART : job->nkeys;
	int64_t		n = 0;

	for (int64_t i = i0 > 0 ? i0 : 1; i < i1; i++)
		n += job->keys[i] != job->keys[i - 1];
	job->starts[t] = n;
}

/*
 * Task: the dense ranks of part t's sorted keys (job->starts[t] the rank
 * before its first) into rank_of, by number.
 */
static void
iv_rank_task(void *arg, int64_t t)
{
	IvPrepJob  *job = (IvPrepJob *) arg;
	uint32_t   *rank_of = job->plans[job->rank_dim].rank_of;
	int64_t		i0 = t * IV_RANK_PART;
	int64_t		i1 = i0 + IV_RANK_PART < job->nkeys ? i0 + IV_RANK_PART : job->nkeys;
	int64_t		r = job->starts[t];

	for (int64_t i = i0; i < i1; i++)
	{
		r += i > 0 && job->keys[i] != job->keys[i - 1];
		rank_of[job->nums[i]] = (uint32_t) r;
	}
}

/*
 * Replaces plan's keys of dimension d by ranks (the file header): the
 * dense rank of every finite key by its number, or, where the keys are
 * too many to number in 32 bits, the sorted keys to search.  A rank found
 * by search is the place of the key's first copy, not its place among the
 * distinct keys: such ranks keep the keys' order and equality, and a gap
 * between two neighbours' ranks changes no comparison of the doubled
 * positions (a lower bound just above one key still meets an upper bound
 * just below the next).
 */
static OdpStatus
iv_rank_dim(OdpContext *ctx, IvPrepJob *job, int d, IvDimPlan *plan)
{
	const int64_t tasks = job->ch.tasks[0] + job->ch.tasks[1];
	bool		search = odp_iv_test_search_ranks;
	int64_t		n = 0,
				parts;
	uint64_t   *tmp;
	uint32_t   *tnums = NULL;
	OdpStatus	status;

	for (int64_t t = 0; t < tasks; t++)
		n += job->scan[t * job->dims + d].finite;
	if (n > (int64_t) UINT32_MAX)
		search = true;
	parts = (n + IV_RANK_PART - 1) / IV_RANK_PART;
	job->rank_dim = d;
	job->nkeys = n;
	job->keys = malloc(sizeof(uint64_t) * (size_t) (n > 0 ? n : 1));
	tmp = malloc(sizeof(uint64_t) * (size_t) (n > 0 ? n : 1));
	job->nums = malloc(sizeof(uint32_t) * (size_t) (n > 0 ? n : 1));
	if (!search)
	{
		tnums = malloc(sizeof(uint32_t) * (size_t) (n > 0 ? n : 1));
		plan->rank_of = malloc(sizeof(uint32_t) * (size_t) (n > 0 ? n : 1));
		job->starts = malloc(sizeof(int64_t) * (size_t) (parts > 0 ? parts : 1));
	}
	if (job->keys == NULL || tmp == NULL || job->nums == NULL ||
		(!search && (tnums == NULL || plan->rank_of == NULL || job->starts == NULL)))
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the ranks of dimension %d", d + 1);
		goto done;
	}
	if ((status = odp_parallel_tasks(ctx, tasks, iv_collect_task, job)) != ODP_OK)
		goto done;
	if ((status = odp_radix_sort_parallel(ctx, job->keys, search ? NULL : job->nums,
										  tmp, tnums, n, 64)) != ODP_OK)
		goto done;
	if (search)
	{
		plan->sorted = job->keys;
		plan->nsorted = n;
		plan->nranks = n;
		job->keys = NULL;
		goto done;
	}
	if ((status = odp_parallel_tasks(ctx, parts, iv_starts_task, job)) != ODP_OK)
		goto done;
	plan->nranks = n > 0 ? 1 : 0;
	for (int64_t q = 0; q < parts; q++)
	{
		int64_t		c = job->starts[q];

		job->starts[q] = plan->nranks - 1;
		plan->nranks += c;
	}
	status = odp_parallel_tasks(ctx, parts, iv_rank_task, job);

done:
	free(job->keys);
	free(job->nums);
	free(job->starts);
	free(tmp);
	free(tnums);
	job->keys = NULL;
	job->nums = NULL;
	job->starts = NULL;
	if (status != ODP_OK)
	{
		free(plan->rank_of);
		free(plan->sorted);
		plan->rank_of = NULL;
		plan->sorted = NULL;
	}
	plan->base = 0;
	return status;
}

/*
 * The key a doubled dimension works on: the key, or its rank (*num is the
 * key's number, which this advances).
 */
static inline uint64_t
iv_plain(const IvDimPlan *plan, uint64_t key, int64_t *num)
{
	int64_t		k = (*num)++;

	if (plan->rank_of != NULL)
		return plan->rank_of[k];
	if (plan->sorted != NULL)
		return (uint64_t) odp_iv_search(plan->sorted, 0, plan->nsorted, key, false);
	return key - plan->base;
}

/* Position of a finite lower bound (key, flags) under plan. */
static inline uint64_t
iv_lower_position(const IvDimPlan *plan, uint64_t key, uint8_t f, int64_t *num)
{
	if (!plan->doubled)
		return key;
	return 2 * iv_plain(plan, key, num) + 2 + ((f & ODP_BOUND_LOWER_EXCLUSIVE) ? 1 : 0);
}

/* Position of a finite upper bound (key, flags) under plan. */
static inline uint64_t
iv_upper_position(const IvDimPlan *plan, uint64_t key, uint8_t f, int64_t *num)
{
	if (!plan->doubled)
		return key;
	return 2 * iv_plain(plan, key, num) + 2 - ((f & ODP_BOUND_UPPER_EXCLUSIVE) ? 1 : 0);
}

/*
 * Task: the positions of its rows' live regions, from the live position
 * job->live_at[t] on, and their rows, when the side has empty ones.
 */
static void
iv_encode_task(void *arg, int64_t t)
{
	IvPrepJob  *job = (IvPrepJob *) arg;
	int64_t		r0,
				r1;
	const int	s = iv_chunk(&job->ch, t, &r0, &r1);
	const OdpRegions *x = job->ch.x[s];
	OdpIvSide  *side = job->side[s];
	const int	dims = job->dims;
	const size_t cells = (size_t) side->nlive * dims;
	int64_t		n = job->live_at[t];
	int64_t		num[ODP_MAX_INTERVAL_DIMS];

	if (job->out[s] == NULL)
		return;
	memcpy(num, job->key_at + t * dims, sizeof(int64_t) * dims);
	for (int64_t r = r0; r < r1; r++)
	{
		const bool	live = side->live == NULL || !iv_region_empty(x, r, job->box);
		uint64_t   *lo = job->out[s] + n * dims;
		uint64_t   *hi = job->out[s] + cells + n * dims;

		for (int d = 0; d < dims; d++)
		{
			const int64_t at = r * dims + d;
			const IvDimPlan *plan = &job->plans[d];
			uint8_t		f = iv_flags(x, r, d);
			uint64_t	l = 0,
						h = plan->top;

			/* an empty region's keys are numbered all the same */
			if (f & ODP_BOUND_EMPTY)
			{
				/* a lower bound above the upper one: overlaps nothing */
				l = 1;
				h = 0;
			}
			else
			{
				if (!(f & ODP_BOUND_LOWER_INFINITE))
					l = iv_lower_position(plan, x->lower[at], f, &num[d]);
				if (!(f & ODP_BOUND_UPPER_INFINITE))
					h = iv_upper_position(plan, x->upper[at], f, &num[d]);
			}
			if (live)
			{
				lo[d] = l;
				hi[d] = h;
			}
		}
		if (!live)
			continue;
		if (side->live != NULL)
			side->live[n] = (uint32_t) r;
		n++;
	}
}

/*
 * Fills the sides from the regions and the scan's counts: the positions
 * of their live regions when plans say so (flagged) or a side has empty
 * regions, else the caller's keys.
 */
static OdpStatus
iv_encode(OdpContext *ctx, IvPrepJob *job, OdpIvPrep *prep, bool flagged)
{
	const int64_t tasks = job->ch.tasks[0] + job->ch.tasks[1];
	int64_t		empty[2] = {0, 0};
	bool		any = false;

	/* each task's empty regions become the live position of its first live one */
	for (int64_t t = 0; t < tasks; t++)
	{
		int64_t		r0,
					r1;
		int			s = iv_chunk(&job->ch, t, &r0, &r1);
		int64_t		e = job->live_at[t];

		job->live_at[t] = r0 - empty[s];
		empty[s] += e;
	}
	for (int s = 0; s < 2 && job->ch.x[s] != NULL; s++)
	{
		const OdpRegions *x = job->ch.x[s];
		OdpIvSide  *side = job->side[s];
		size_t		cells;

		memset(side, 0, sizeof(*side));
		side->rows = x->rows;
		side->nlive = x->rows - empty[s];
		prep->empty += empty[s];
		if (!flagged && empty[s] == 0)
		{
			side->lo = x->lower;
			side->hi = x->upper;
			continue;
		}
		cells = (size_t) side->nlive * (size_t) job->dims;
		side->own = malloc(sizeof(uint64_t) * 2 * (cells > 0 ? cells : 1));
		if (empty[s] > 0)
			side->live = malloc(sizeof(uint32_t) * (size_t) (side->nlive > 0 ? side->nlive : 1));
		if (side->own == NULL || (empty[s] > 0 && side->live == NULL))
			return odp_fail(ctx, ODP_ERR_HOST_OOM,
							"out of host memory for the positions of %lld regions",
							(long long) side->nlive);
		side->lo = side->own;
		side->hi = side->own + cells;
		job->out[s] = side->own;
		any = true;
	}
	if (!any)
		return ODP_OK;
	return odp_parallel_tasks(ctx, tasks, iv_encode_task, job);
}

/*
 * Picks the sweep dimension from a sample (see the file header), and
 * estimates the share of all pairs that overlap, for the paths' first
 * guess at the room their pairs need.
 */
static void
iv_sample(OdpIvPrep *prep)
{
	const OdpIvSide *a = &prep->a;
	const OdpIvSide *b = &prep->b;
	int64_t		na = a->nlive < IV_SAMPLE ? a->nlive : IV_SAMPLE;
	int64_t		nb = b->nlive < IV_SAMPLE ? b->nlive : IV_SAMPLE;
	int64_t		hits[ODP_MAX_INTERVAL_DIMS] = {0};
	int64_t		all = 0,
				tried = 0;
	int64_t		best = -1;

	prep->sweep = 0;
	prep->pair_share = 0.0;
	if (na == 0 || nb == 0)
		return;
	for (int64_t i = 0; i < na; i++)
	{
		const int64_t pa = (i * a->nlive / na) * prep->dims;

		for (int64_t j = 0; j < nb; j++)
		{
			const int64_t pb = (j * b->nlive / nb) * prep->dims;
			bool		every = true;

			if (prep->self && pa == pb)
				continue;
			for (int d = 0; d < prep->dims; d++)
			{
				bool		o = odp_iv_overlap(a->lo[pa + d], a->hi[pa + d],
											   b->lo[pb + d], b->hi[pb + d], prep->box[d]);

				hits[d] += o;
				every &= o;
			}
			all += every;
			tried++;
		}
	}
	for (int d = 0; d < prep->dims; d++)
	{
		if (best < 0 || hits[d] < best)
		{
			best = hits[d];
			prep->sweep = d;
		}
	}
	prep->pair_share = tried > 0 ? (double) all / (double) tried : 0.0;
}

/* See intervals_internal.h. */
void
odp_iv_prep_free(OdpIvPrep *prep)
{
	free(prep->box);
	free(prep->a.own);
	free(prep->a.live);
	if (!prep->self)
	{
		free(prep->b.own);
		free(prep->b.live);
	}
	memset(prep, 0, sizeof(*prep));
}

/*
 * Plans dimension d from the tasks' scans (the flags and the range of
 * keys), ranking its keys when the doubled keys would not fit.
 */
static OdpStatus
iv_plan_dim(OdpContext *ctx, IvPrepJob *job, const OdpIvPrep *prep, int d,
			bool scanned, IvDimPlan *plan)
{
	const int64_t tasks = job->ch.tasks[0] + job->ch.tasks[1];
	uint64_t	kmin = UINT64_MAX,
				kmax = 0;
	bool		any_finite = false;

	for (int64_t t = 0; t < tasks && scanned; t++)
	{
		const IvDimScan *s = &job->scan[t * job->dims + d];

		plan->flagged |= s->flagged;
		plan->doubled |= s->doubled;
		if (s->finite == 0)
			continue;
		any_finite = true;
		kmin = s->kmin < kmin ? s->kmin : kmin;
		kmax = s->kmax > kmax ? s->kmax : kmax;
	}
	if (prep->box[d] && plan->flagged)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"dimension %d is compared as box && but has excluded or infinite bounds",
						d + 1);
	if (!any_finite)
		kmin = kmax = 0;
	plan->base = kmin;
	plan->top = UINT64_MAX;
	if (plan->doubled)
	{
		if (kmax - kmin > ((uint64_t) 1 << 63) - 2)
		{
			OdpStatus	status;

			if ((status = iv_rank_dim(ctx, job, d, plan)) != ODP_OK)
				return status;
			kmax = plan->nranks > 0 ? (uint64_t) plan->nranks - 1 : 0;
			kmin = 0;
		}
		plan->top = 2 * (kmax - kmin) + 3;
	}
	return ODP_OK;
}

/* See intervals_internal.h. */
OdpStatus
odp_iv_prepare(OdpContext *ctx, const OdpIntervalProblem *p, OdpIvPrep *prep)
{
	const int	dims = p->a->dims;
	const bool	any_flags = p->a->flags != NULL || (p->b != NULL && p->b->flags != NULL);
	IvDimPlan  *plans = calloc((size_t) dims, sizeof(IvDimPlan));
	IvPrepJob	job;
	int64_t		tasks;
	bool		flagged = false;
	OdpStatus	status = ODP_OK;

	memset(prep, 0, sizeof(*prep));
	memset(&job, 0, sizeof(job));
	prep->dims = dims;
	prep->self = p->b == NULL;
	prep->box = calloc((size_t) dims, 1);
	iv_chunks_init(&job.ch, p->a, p->b);
	tasks = job.ch.tasks[0] + job.ch.tasks[1];
	job.dims = dims;
	job.box = prep->box;
	job.plans = plans;
	job.side[0] = &prep->a;
	job.side[1] = &prep->b;
	job.live_at = calloc((size_t) (tasks > 0 ? tasks : 1), sizeof(int64_t));
	job.key_at = calloc((size_t) (tasks > 0 ? tasks : 1) * dims, sizeof(int64_t));
	job.scan = calloc((size_t) (tasks > 0 ? tasks : 1) * dims, sizeof(IvDimScan));
	if (plans == NULL || prep->box == NULL || job.live_at == NULL ||
		job.key_at == NULL || job.scan == NULL)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
		goto done;
	}
	for (int d = 0; d < dims; d++)
	{
		prep->box[d] = p->compare != NULL && p->compare[d] == ODP_INTERVAL_BOX;
		prep->any_box |= prep->box[d];
	}
	/* without flags every bound is included and finite: nothing to plan */
	if (any_flags && (status = odp_parallel_tasks(ctx, tasks, iv_scan_task, &job)) != ODP_OK)
		goto done;
	for (int d = 0; d < dims; d++)
	{
		int64_t		at = 0;

		for (int64_t t = 0; t < tasks; t++)
		{
			job.key_at[t * dims + d] = at;
			at += job.scan[t * dims + d].finite;
		}
	}
	for (int d = 0; d < dims; d++)
	{
		if ((status = iv_plan_dim(ctx, &job, prep, d, any_flags, &plans[d])) != ODP_OK)
			goto done;
		flagged |= plans[d].flagged;
	}
	if ((status = iv_encode(ctx, &job, prep, flagged)) != ODP_OK)
		goto done;
	if (prep->self)
		prep->b = prep->a;
	iv_sample(prep);
	prep->b_bits = odp_iv_row_bits(prep->b.nlive);
	prep->key_bits = prep->b_bits + odp_iv_row_bits(prep->a.nlive);

done:
	for (int d = 0; d < dims && plans != NULL; d++)
	{
		free(plans[d].rank_of);
		free(plans[d].sorted);
	}
	free(plans);
	free(job.scan);
	free(job.live_at);
	free(job.key_at);
	if (status != ODP_OK)
		odp_iv_prep_free(prep);
	return status;
}
