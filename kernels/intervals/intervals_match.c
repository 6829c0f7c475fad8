/*-------------------------------------------------------------------------
 *
 * intervals_match.c
 *	  Region matching on one device (odp_iv_match): the positions of the
 *	  bounds, the choice of the sweep dimension, and the chunk driver both
 *	  paths run under (see intervals_internal.h for the algorithm).
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
 * magnitudes, say) they are first replaced by their dense ranks.
 *
 * Sweep dimension.  The candidates are the pairs that overlap in the sweep
 * dimension, so it is the dimension in which fewest pairs of a sample of
 * 256 x 256 regions overlap.  The same sample estimates how many pairs
 * overlap, which the GPU uses to size its first buffer of pairs.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_match.c
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

/* See intervals_internal.h. */
int64_t		odp_iv_test_capacity = 0;
int64_t		odp_iv_test_rows = 0;

/* Regions per side the sweep dimension's sample takes. */
#define IV_SAMPLE		256

/* Rows per task when positions are encoded. */
#define IV_ENCODE_ROWS	65536

/* Pairs handed to the caller per call. */
#define IV_EMIT_PAIRS	65536

/* Flags that make a bound special. */
#define IV_EXCLUSIVE	(ODP_BOUND_LOWER_EXCLUSIVE | ODP_BOUND_UPPER_EXCLUSIVE)

/* ---- positions ---- */

/* What the bounds of one dimension need. */
typedef struct IvDimPlan
{
	bool		flagged;		/* some bound is excluded or infinite */
	bool		doubled;		/* some bound is excluded */
	uint64_t	base;			/* m: the smallest finite key */
	uint64_t   *ranks;			/* sorted distinct finite keys, when the
								 * doubled keys would not fit; else NULL */
	int64_t		nranks;
	uint64_t	top;			/* the position of an infinite upper bound */
} IvDimPlan;

/* The flags of region r in dimension d (0 without flags). */
static inline uint8_t
iv_flags(const OdpRegions *x, int64_t r, int d)
{
	return x->flags != NULL ? x->flags[r * x->dims + d] : 0;
}

/* Notes one side's bounds of dimension d in plan (min/max over finite keys). */
static void
iv_scan_dim(const OdpRegions *x, int d, IvDimPlan *plan, uint64_t *kmin,
			uint64_t *kmax, bool *any_finite)
{
	for (int64_t r = 0; r < x->rows; r++)
	{
		uint8_t		f = iv_flags(x, r, d);
		const int64_t at = r * x->dims + d;

		plan->flagged |= f != 0;
		if (f & ODP_BOUND_EMPTY)
			continue;
		plan->doubled |= (f & IV_EXCLUSIVE) != 0;
		if (!(f & ODP_BOUND_LOWER_INFINITE))
		{
			*any_finite = true;
			*kmin = x->lower[at] < *kmin ? x->lower[at] : *kmin;
			*kmax = x->lower[at] > *kmax ? x->lower[at] : *kmax;
		}
		if (!(f & ODP_BOUND_UPPER_INFINITE))
		{
			*any_finite = true;
			*kmin = x->upper[at] < *kmin ? x->upper[at] : *kmin;
			*kmax = x->upper[at] > *kmax ? x->upper[at] : *kmax;
		}
	}
}

/* Appends one side's finite keys of dimension d to keys[*n ..]. */
static void
iv_collect_keys(const OdpRegions *x, int d, uint64_t *keys, int64_t *n)
{
	for (int64_t r = 0; r < x->rows; r++)
	{
		uint8_t		f = iv_flags(x, r, d);
		const int64_t at = r * x->dims + d;

		if (f & ODP_BOUND_EMPTY)
			continue;
		if (!(f & ODP_BOUND_LOWER_INFINITE))
			keys[(*n)++] = x->lower[at];
		if (!(f & ODP_BOUND_UPPER_INFINITE))
			keys[(*n)++] = x->upper[at];
	}
}

/*
 * Replaces plan's keys by dense ranks: sorts the distinct finite keys of
 * dimension d of both sides into plan->ranks.
 */
static OdpStatus
iv_rank_dim(OdpContext *ctx, const OdpRegions *a, const OdpRegions *b, int d,
			IvDimPlan *plan)
{
	int64_t		total = 2 * (a->rows + (b != NULL ? b->rows : 0));
	uint64_t   *keys = malloc(sizeof(uint64_t) * (size_t) (total > 0 ? total : 1));
	uint64_t   *tmp = malloc(sizeof(uint64_t) * (size_t) (total > 0 ? total : 1));
	int64_t    *count = malloc(sizeof(int64_t) * ODP_RADIX_COUNTS);
	int64_t		n = 0,
				u = 0;

	if (keys == NULL || tmp == NULL || count == NULL)
	{
		free(keys);
		free(tmp);
		free(count);
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for the ranks of dimension %d", d + 1);
	}
	iv_collect_keys(a, d, keys, &n);
	if (b != NULL)
		iv_collect_keys(b, d, keys, &n);
	odp_radix_sort(keys, NULL, tmp, NULL, n, 64, count);
	for (int64_t i = 0; i < n; i++)
		if (u == 0 || keys[i] != keys[u - 1])
			keys[u++] = keys[i];
	free(tmp);
	free(count);
	plan->ranks = keys;
	plan->nranks = u;
	plan->base = 0;
	return ODP_OK;
}

/* The key a doubled dimension works on: the key, or its rank. */
static inline uint64_t
iv_plain(const IvDimPlan *plan, uint64_t key)
{
	if (plan->ranks == NULL)
		return key - plan->base;
	return (uint64_t) odp_iv_search(plan->ranks, 0, plan->nranks, key, false);
}

/* Position of a lower bound (key, flags) under plan. */
static inline uint64_t
iv_lower_position(const IvDimPlan *plan, uint64_t key, uint8_t f)
{
	if (f & ODP_BOUND_LOWER_INFINITE)
		return 0;
	if (!plan->doubled)
		return key;
	return 2 * iv_plain(plan, key) + 2 + ((f & ODP_BOUND_LOWER_EXCLUSIVE) ? 1 : 0);
}

/* Position of an upper bound (key, flags) under plan. */
static inline uint64_t
iv_upper_position(const IvDimPlan *plan, uint64_t key, uint8_t f)
{
	if (f & ODP_BOUND_UPPER_INFINITE)
		return plan->top;
	if (!plan->doubled)
		return key;
	return 2 * iv_plain(plan, key) + 2 - ((f & ODP_BOUND_UPPER_EXCLUSIVE) ? 1 : 0);
}

/* One side's encoding job. */
typedef struct IvEncodeJob
{
	const OdpRegions *x;
	const IvDimPlan *plans;
	uint64_t   *lo;
	uint64_t   *hi;
} IvEncodeJob;

/* Task: positions of a range of rows. */
static void
iv_encode_rows(void *arg, int64_t task)
{
	IvEncodeJob *job = (IvEncodeJob *) arg;
	const OdpRegions *x = job->x;
	int64_t		r0 = task * IV_ENCODE_ROWS;
	int64_t		r1 = r0 + IV_ENCODE_ROWS < x->rows ? r0 + IV_ENCODE_ROWS : x->rows;

	for (int64_t r = r0; r < r1; r++)
	{
		for (int d = 0; d < x->dims; d++)
		{
			const int64_t at = r * x->dims + d;
			uint8_t		f = iv_flags(x, r, d);

			if (f & ODP_BOUND_EMPTY)
			{
				/* a lower bound above the upper one: overlaps nothing */
				job->lo[at] = 1;
				job->hi[at] = 0;
				continue;
			}
			job->lo[at] = iv_lower_position(&job->plans[d], x->lower[at], f);
			job->hi[at] = iv_upper_position(&job->plans[d], x->upper[at], f);
		}
	}
}

/* Fills side s from regions x, encoding positions when plans say so. */
static OdpStatus
iv_encode_side(OdpContext *ctx, const OdpRegions *x, const IvDimPlan *plans,
			   bool flagged, OdpIvSide *s)
{
	IvEncodeJob job;
	size_t		cells = (size_t) x->rows * (size_t) x->dims;

	memset(s, 0, sizeof(*s));
	s->rows = x->rows;
	if (!flagged)
	{
		s->lo = x->lower;
		s->hi = x->upper;
		return ODP_OK;
	}
	s->own = malloc(sizeof(uint64_t) * 2 * (cells > 0 ? cells : 1));
	if (s->own == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for the positions of %lld regions",
						(long long) x->rows);
	job.x = x;
	job.plans = plans;
	job.lo = s->own;
	job.hi = s->own + cells;
	s->lo = job.lo;
	s->hi = job.hi;
	return odp_parallel_tasks(ctx, (x->rows + IV_ENCODE_ROWS - 1) / IV_ENCODE_ROWS,
							  iv_encode_rows, &job);
}

/* Whether region r of side s overlaps nothing (some interval is empty). */
static inline bool
iv_region_empty(const OdpIvPrep *prep, const OdpIvSide *s, int64_t r)
{
	const uint64_t *lo = s->lo + r * prep->dims;
	const uint64_t *hi = s->hi + r * prep->dims;
	bool		empty = false;

	if (!prep->any_box)
	{
		for (int d = 0; d < prep->dims; d++)
			empty |= lo[d] > hi[d];
		return empty;
	}
	for (int d = 0; d < prep->dims; d++)
		empty |= !odp_iv_meets(lo[d], hi[d], prep->box[d]);
	return empty;
}

/* Counts side s's empty regions (an early exit for the common none). */
static int64_t
iv_count_empty(const OdpIvPrep *prep, const OdpIvSide *s)
{
	int64_t		empty = 0;

	if (prep->dims == 1 && !prep->any_box)
	{
		/* one exact dimension: a loop the compiler vectorises */
		for (int64_t r = 0; r < s->rows; r++)
			empty += s->lo[r] > s->hi[r];
		return empty;
	}
	for (int64_t r = 0; r < s->rows; r++)
		empty += iv_region_empty(prep, s, r);
	return empty;
}

/*
 * Sets aside side s's empty regions, when it has some: lists the others
 * (live) and packs their positions, so that live position i is row i of
 * s->lo and s->hi.
 */
static OdpStatus
iv_find_live(OdpContext *ctx, OdpIvPrep *prep, OdpIvSide *s, bool flagged)
{
	const int	dims = prep->dims;
	int64_t		empty = 0;
	uint64_t   *packed;
	size_t		cells;

	/* unflagged regions are closed and not empty (odp_intervals.h) */
	s->nlive = s->rows;
	if (!flagged)
		return ODP_OK;
	empty = iv_count_empty(prep, s);

	s->nlive = s->rows - empty;
	prep->empty += empty;
	if (empty == 0)
		return ODP_OK;
	cells = (size_t) s->nlive * (size_t) dims;
	s->live = malloc(sizeof(uint32_t) * (size_t) (s->nlive > 0 ? s->nlive : 1));
	packed = malloc(sizeof(uint64_t) * 2 * (cells > 0 ? cells : 1));
	if (s->live == NULL || packed == NULL)
	{
		free(packed);
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld regions", (long long) s->nlive);
	}
	for (int64_t r = 0, n = 0; r < s->rows; r++)
	{
		if (iv_region_empty(prep, s, r))
			continue;
		s->live[n] = (uint32_t) r;
		memcpy(packed + n * dims, s->lo + r * dims, sizeof(uint64_t) * dims);
		memcpy(packed + cells + n * dims, s->hi + r * dims, sizeof(uint64_t) * dims);
		n++;
	}
	free(s->own);
	s->own = packed;
	s->lo = packed;
	s->hi = packed + cells;
	return ODP_OK;
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

/* Frees what iv_prepare allocated. */
static void
iv_prep_free(OdpIvPrep *prep)
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

/* Turns a checked problem into positions, live lists and a sweep dimension. */
static OdpStatus
iv_prepare(OdpContext *ctx, const OdpIntervalProblem *p, OdpIvPrep *prep)
{
	const int	dims = p->a->dims;
	IvDimPlan  *plans = calloc((size_t) dims, sizeof(IvDimPlan));
	bool		flagged = false;
	OdpStatus	status = ODP_OK;

	memset(prep, 0, sizeof(*prep));
	prep->dims = dims;
	prep->self = p->b == NULL;
	prep->box = calloc((size_t) dims, 1);
	if (plans == NULL || prep->box == NULL)
	{
		free(plans);
		free(prep->box);
		prep->box = NULL;
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	}
	for (int d = 0; d < dims; d++)
	{
		uint64_t	kmin = UINT64_MAX,
					kmax = 0;
		bool		any_finite = false;
		IvDimPlan  *plan = &plans[d];

		prep->box[d] = p->compare != NULL && p->compare[d] == ODP_INTERVAL_BOX;
		prep->any_box |= prep->box[d];
		/* without flags every bound is included and finite: nothing to plan */
		if (p->a->flags != NULL || (p->b != NULL && p->b->flags != NULL))
		{
			iv_scan_dim(p->a, d, plan, &kmin, &kmax, &any_finite);
			if (p->b != NULL)
				iv_scan_dim(p->b, d, plan, &kmin, &kmax, &any_finite);
		}
		if (prep->box[d] && plan->flagged)
		{
			status = odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
							  "dimension %d is compared as box && but has excluded or infinite bounds",
							  d + 1);
			goto done;
		}
		flagged |= plan->flagged;
		if (!any_finite)
			kmin = kmax = 0;
		plan->base = kmin;
		plan->top = UINT64_MAX;
		if (plan->doubled)
		{
			if (kmax - kmin > ((uint64_t) 1 << 63) - 2)
			{
				if ((status = iv_rank_dim(ctx, p->a, p->b, d, plan)) != ODP_OK)
					goto done;
				kmax = plan->nranks > 0 ? (uint64_t) plan->nranks - 1 : 0;
				kmin = 0;
			}
			plan->top = 2 * (kmax - kmin) + 3;
		}
	}

	if ((status = iv_encode_side(ctx, p->a, plans, flagged, &prep->a)) != ODP_OK)
		goto done;
	if (prep->self)
		prep->b = prep->a;
	else if ((status = iv_encode_side(ctx, p->b, plans, flagged, &prep->b)) != ODP_OK)
		goto done;
	if ((status = iv_find_live(ctx, prep, &prep->a, p->a->flags != NULL)) != ODP_OK)
		goto done;
	if (prep->self)
		prep->b = prep->a;
	else if ((status = iv_find_live(ctx, prep, &prep->b, p->b->flags != NULL)) != ODP_OK)
		goto done;
	iv_sample(prep);
	prep->b_bits = odp_iv_row_bits(prep->b.nlive);
	prep->key_bits = prep->b_bits + odp_iv_row_bits(prep->a.nlive);

done:
	for (int d = 0; d < dims; d++)
		free(plans[d].ranks);
	free(plans);
	if (status != ODP_OK)
		iv_prep_free(prep);
	return status;
}

/* ---- the chunk driver ---- */

/* The state of one matching call. */
typedef struct IvDriver
{
	OdpContext *ctx;
	OdpIvPrep  *prep;
	OdpIvBackend *be;
	bool		count_only;
	int64_t		b_rows;			/* live B rows per load */
	int64_t		loaded0;		/* the loaded B range, or -1 */
	int64_t		loaded1;
	OdpIntervalPairFn emit;
	void	   *emit_arg;
	int64_t		total;			/* pairs counted or emitted */
	int64_t		candidates;
	int32_t		runs;
	int64_t    *ea;				/* IV_EMIT_PAIRS each: rows handed over */
	int64_t    *eb;
	int64_t		en;
	double		emit_ms;		/* spent in the caller's receiver */
} IvDriver;

/* Hands the buffered pairs to the caller; false when it stopped us. */
static OdpStatus
iv_flush(IvDriver *dr)
{
	bool		go_on;

	if (dr->en == 0)
		return ODP_OK;
	go_on = dr->emit(dr->emit_arg, dr->ea, dr->eb, dr->en);
	if (!go_on)
		return odp_fail(dr->ctx, ODP_ERR_CANCELLED,
						"the receiver of the pairs asked to stop");
	dr->total += dr->en;
	dr->en = 0;
	if (odp_cancel_requested(dr->ctx))
		return odp_fail(dr->ctx, ODP_ERR_CANCELLED, "the matching was cancelled");
	return ODP_OK;
}

/*
 * Buffers the pairs of n sorted keys, as rows, flushing as the buffer
 * fills.  Its time, the receiver's included, is output, not compute.
 */
static OdpStatus
iv_emit_keys(IvDriver *dr, const uint64_t *keys, int64_t n)
{
	const int	bb = dr->prep->b_bits;
	const uint64_t bmask = ((uint64_t) 1 << bb) - 1;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	for (int64_t i = 0; i < n; i++)
	{
		dr->ea[dr->en] = odp_iv_live_row(&dr->prep->a, (int64_t) (keys[i] >> bb));
		dr->eb[dr->en] = odp_iv_live_row(&dr->prep->b, (int64_t) (keys[i] & bmask));
		if (++dr->en == IV_EMIT_PAIRS && (status = iv_flush(dr)) != ODP_OK)
			break;
	}
	dr->emit_ms += odp_now_ms() - t0;
	return status;
}

/* Loads live B positions [b0, b1) unless they are loaded already. */
static OdpStatus
iv_load(IvDriver *dr, int64_t b0, int64_t b1)
{
	OdpStatus	status;

	if (dr->loaded0 == b0 && dr->loaded1 == b1)
		return ODP_OK;
	dr->loaded0 = dr->loaded1 = -1;
	if ((status = dr->be->load(dr->be->self, b0, b1)) != ODP_OK)
		return status;
	dr->loaded0 = b0;
	dr->loaded1 = b1;
	return ODP_OK;
}

/* A piece of one chunk of A's pairs: the sorted keys of one B range. */
typedef struct IvPiece
{
	uint64_t   *keys;
	int64_t		n;
	int64_t		at;				/* merge position */
} IvPiece;

/* Copies the kept keys of the last run into a new piece. */
static OdpStatus
iv_take_piece(IvDriver *dr, int64_t n, IvPiece *piece)
{
	OdpStatus	status;

	piece->n = n;
	piece->at = 0;
	piece->keys = malloc(sizeof(uint64_t) * (size_t) (n > 0 ? n : 1));
	if (piece->keys == NULL)
		return odp_fail(dr->ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld pairs", (long long) n);
	for (int64_t off = 0; off < n; off += dr->be->block)
	{
		const uint64_t *k;
		int64_t		m = n - off < dr->be->block ? n - off : dr->be->block;

		if ((status = dr->be->keys(dr->be->self, off, m, &k)) != ODP_OK)
			return status;
		memcpy(piece->keys + off, k, sizeof(uint64_t) * (size_t) m);
	}
	return ODP_OK;
}

/*
 * Emits pieces (sorted keys of consecutive B ranges) merged by a: for
 * each a, its pairs of piece 0, then of piece 1, and so on, which is
 * (a, b) order as the ranges ascend.
 */
static OdpStatus
iv_emit_merged(IvDriver *dr, IvPiece *pieces, int npieces)
{
	const int	bb = dr->prep->b_bits;
	OdpStatus	status;

	for (;;)
	{
		uint64_t	a = UINT64_MAX;

		for (int j = 0; j < npieces; j++)
			if (pieces[j].at < pieces[j].n && (pieces[j].keys[pieces[j].at] >> bb) < a)
				a = pieces[j].keys[pieces[j].at] >> bb;
		if (a == UINT64_MAX)
			return ODP_OK;
		for (int j = 0; j < npieces; j++)
		{
			int64_t		e = pieces[j].at;

			while (e < pieces[j].n && (pieces[j].keys[e] >> bb) == a)
				e++;
			if ((status = iv_emit_keys(dr, pieces[j].keys + pieces[j].at,
									   e - pieces[j].at)) != ODP_OK)
				return status;
			pieces[j].at = e;
		}
	}
}

/* Frees the pieces' keys and the array. */
static void
iv_free_pieces(IvPiece *pieces, int npieces)
{
	if (pieces == NULL)
		return;
	for (int q = 0; q < npieces; q++)
		free(pieces[q].keys);
	free(pieces);
}

/*
 * Counts or emits the pairs of live A positions [a0, a1) against live B
 * positions [b0, b1), loaded b_step at a time, with scheme.  A run that
 * overflows is retried on halves of the A range, or, for one region of
 * A, with loads of half the size.
 */
static OdpStatus
iv_process(IvDriver *dr, int64_t a0, int64_t a1, int64_t b0, int64_t b1,
		   int64_t b_step, OdpIvScheme scheme)
{
	int64_t		nloads = (b1 - b0 + b_step - 1) / b_step;
	IvPiece    *pieces = NULL;
	int			npieces = 0;
	OdpStatus	status = ODP_OK;

	if (!dr->count_only && nloads > 1)
	{
		pieces = calloc((size_t) nloads, sizeof(IvPiece));
		if (pieces == NULL)
			return odp_fail(dr->ctx, ODP_ERR_HOST_OOM, "out of host memory");
	}
	for (int64_t j = 0; j < nloads; j++)
	{
		int64_t		l0 = b0 + j * b_step;
		int64_t		l1 = l0 + b_step < b1 ? l0 + b_step : b1;
		OdpIvRun	run;
		int64_t		found = 0,
					cands = 0;

		/* one set in ranges: a B range wholly before the A range pairs nothing */
		if (scheme == ODP_IV_SELF_CROSS && l1 - 1 <= a0)
			continue;
		if ((status = iv_load(dr, l0, l1)) != ODP_OK)
			break;
		run.a0 = a0;
		run.a1 = a1;
		run.scheme = scheme;
		run.count_only = dr->count_only;
		run.capacity = dr->be->capacity;
		if ((status = dr->be->run(dr->be->self, &run, &found, &cands)) != ODP_OK)
			break;
		dr->runs++;
		dr->ctx->chunks++;
		if (odp_cancel_requested(dr->ctx))
		{
			status = odp_fail(dr->ctx, ODP_ERR_CANCELLED, "the matching was cancelled");
			break;
		}
		if (!dr->count_only && found > run.capacity)
		{
			/* too many pairs for one run: start this range again, smaller */
			OdpIvScheme sub = scheme == ODP_IV_SELF ? ODP_IV_SELF_CROSS : scheme;

			iv_free_pieces(pieces, npieces);
			if (a1 - a0 > 1)
			{
				int64_t		mid = a0 + (a1 - a0) / 2;

				if ((status = iv_process(dr, a0, mid, b0, b1, b_step, sub)) != ODP_OK)
					return status;
				return iv_process(dr, mid, a1, b0, b1, b_step, sub);
			}
			if (l1 - l0 < 2)
				return odp_fail(dr->ctx, ODP_ERR_INTERNAL,
								"one pair overflows a run of capacity %lld",
								(long long) run.capacity);
			return iv_process(dr, a0, a1, b0, b1, (l1 - l0 + 1) / 2, sub);
		}
		dr->candidates += cands;
		if (dr->count_only)
			dr->total += found;
		else if (pieces != NULL)
		{
			if ((status = iv_take_piece(dr, found, &pieces[npieces++])) != ODP_OK)
				break;
		}
		else
		{
			/* one load: stream the kept keys out */
			for (int64_t off = 0; off < found && status == ODP_OK; off += dr->be->block)
			{
				const uint64_t *k;
				int64_t		m = found - off < dr->be->block ? found - off : dr->be->block;

				if ((status = dr->be->keys(dr->be->self, off, m, &k)) == ODP_OK)
					status = iv_emit_keys(dr, k, m);
			}
			if (status != ODP_OK)
				break;
		}
	}
	if (status == ODP_OK && pieces != NULL)
		status = iv_emit_merged(dr, pieces, npieces);
	iv_free_pieces(pieces, npieces);
	return status;
}

/* Runs the whole matching under backend be. */
static OdpStatus
iv_drive(IvDriver *dr)
{
	const OdpIvPrep *prep = dr->prep;
	OdpIvBackend *be = dr->be;
	int64_t		na = prep->a.nlive;
	int64_t		nb = prep->b.nlive;
	int64_t		a_rows = be->a_rows_max;
	OdpStatus	status;
	OdpIvScheme scheme;

	if (odp_iv_test_rows > 0)
	{
		a_rows = a_rows < odp_iv_test_rows ? a_rows : odp_iv_test_rows;
		be->b_rows_max = be->b_rows_max < odp_iv_test_rows ? be->b_rows_max : odp_iv_test_rows;
	}
	if (odp_iv_test_capacity > 0 && be->capacity > odp_iv_test_capacity)
		be->capacity = odp_iv_test_capacity;
	dr->b_rows = be->b_rows_max > 0 ? be->b_rows_max : 1;
	if (!dr->count_only && prep->pair_share > 0.0)
	{
		/*
		 * Ranges of A whose pairs the sample expects to fill half a run, so
		 * that few runs find more than they can hold and are done again.
		 */
		double		per_row = prep->pair_share * (double) nb;
		double		fit = (double) be->capacity / (2.0 * per_row);

		if (fit < (double) a_rows)
			a_rows = (int64_t) fit;
	}
	if (a_rows < 1)
		a_rows = 1;
	if (prep->self)
		scheme = (na <= a_rows && nb <= dr->b_rows) ? ODP_IV_SELF : ODP_IV_SELF_CROSS;
	else
		scheme = ODP_IV_CROSS;
	for (int64_t a0 = 0; a0 < na; a0 += a_rows)
	{
		int64_t		a1 = a0 + a_rows < na ? a0 + a_rows : na;

		if ((status = iv_process(dr, a0, a1, 0, nb, dr->b_rows, scheme)) != ODP_OK)
			return status;
	}
	if (!dr->count_only)
	{
		double		t0 = odp_now_ms();

		status = iv_flush(dr);
		dr->emit_ms += odp_now_ms() - t0;
		return status;
	}
	return ODP_OK;
}

/* See intervals_internal.h. */
OdpStatus
odp_iv_match(OdpContext *ctx, const OdpIntervalProblem *p, bool count_only,
			 OdpIntervalPairFn emit, void *emit_arg, int64_t *pairs,
			 OdpIntervalStats *stats)
{
	OdpIvPrep	prep;
	OdpIvBackend be;
	IvDriver	dr;
	OdpIntervalStats local;
	OdpStatus	status;
	double		t0 = odp_now_ms();
	double		t_setup;
	double		transfer0;

	memset(&local, 0, sizeof(local));
	memset(&be, 0, sizeof(be));
	memset(&dr, 0, sizeof(dr));
	*pairs = 0;
	if ((status = iv_prepare(ctx, p, &prep)) != ODP_OK)
		return status;
	local.prep_ms = odp_now_ms() - t0;
	local.sweep_dim = prep.sweep;
	local.empty = prep.empty;
	if (prep.a.nlive == 0 || prep.b.nlive == 0 || (prep.self && prep.a.nlive < 2))
		goto done;

	t_setup = odp_now_ms();
	transfer0 = ctx->transfer_ms;
	if (ctx->device == ODP_DEVICE_GPU)
		status = odp_gpu_iv_backend(ctx, &prep, &be);
	else
		status = odp_cpu_iv_backend(ctx, &prep, &be);
	local.setup_ms = odp_now_ms() - t_setup - (ctx->transfer_ms - transfer0);
	if (status != ODP_OK)
		goto done;
	dr.ctx = ctx;
	dr.prep = &prep;
	dr.be = &be;
	dr.count_only = count_only;
	dr.loaded0 = dr.loaded1 = -1;
	dr.emit = emit;
	dr.emit_arg = emit_arg;
	if (!count_only)
	{
		dr.ea = malloc(sizeof(int64_t) * IV_EMIT_PAIRS);
		dr.eb = malloc(sizeof(int64_t) * IV_EMIT_PAIRS);
		if (dr.ea == NULL || dr.eb == NULL)
			status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	}
	if (status == ODP_OK)
		status = iv_drive(&dr);
	t_setup = odp_now_ms();
	transfer0 = ctx->transfer_ms;
	be.release(be.self);
	local.setup_ms += odp_now_ms() - t_setup - (ctx->transfer_ms - transfer0);
	free(dr.ea);
	free(dr.eb);
	local.pairs = dr.total;
	local.candidates = dr.candidates;
	local.runs = dr.runs;
	local.sort_ms = be.sort_ms;
	local.match_ms = be.match_ms;

done:
	iv_prep_free(&prep);
	/* the receiver's time is the caller's output, not the engine's */
	ctx->compute_ms = odp_now_ms() - t0 - ctx->transfer_ms - dr.emit_ms;
	if (status == ODP_OK)
		*pairs = local.pairs;
	if (stats != NULL)
		*stats = local;
	return status;
}
