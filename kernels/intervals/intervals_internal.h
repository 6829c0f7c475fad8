/*-------------------------------------------------------------------------
 *
 * intervals_internal.h
 *	  Declarations shared by the region matching's entry points
 *	  (intervals.c), its preparation (intervals_prep.c), its one-device
 *	  driver (intervals_match.c), its two paths (intervals_cpu.c,
 *	  intervals_gpu.cu) and its split over devices (intervals_split.c).
 *
 * The algorithm, on both paths.  Bounds become positions (intervals_prep.c)
 * and regions that overlap nothing are set aside.  One dimension is the
 * sweep dimension; each side's regions are sorted by their lower bound
 * there (ties by row, the sort is stable).  A pair (a, b) overlapping in
 * the sweep dimension has either lo(b) >= lo(a), and then b's lower bound
 * lies in a's interval (case 1), or lo(a) > lo(b), and then a's lower
 * bound lies in b's interval (case 2).  So every region of A finds its
 * case-1 partners as one window of B's sorted lower bounds, from the
 * first at or above its own lower bound to the last that meets its upper
 * bound (two binary searches), every region of B its case-2 partners as a
 * window of A's, and each overlapping pair is in exactly one window.  For
 * one set the windows of case 1 alone, taken after each region's own
 * place in the sorted order, hold each pair once.  The window's regions
 * are the candidates: with one dimension every candidate is a pair, so a
 * count is the sum of the window lengths (lo(b) >= lo(a) and lo(b) <=
 * hi(b), so a's lower bound meets b's upper bound too); otherwise the
 * candidates' other dimensions are tested.  The pairs are then sorted by
 * their keys (a, b).
 *
 * Chunks.  A run matches a range of A's regions (live rows, in row order)
 * against the range of B's that the path has loaded, and holds at most
 * "capacity" pairs.  The driver splits A into ranges a run can take and B
 * into ranges a load can take; a run that finds more pairs than it can
 * hold is retried in halves.  Chunks of A come out one after the other in
 * row order, so the pairs do too; the pieces of several B ranges for one
 * chunk of A are merged by a.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_IV_INTERNAL_H
#define ODP_IV_INTERNAL_H

#include "common/engine_internal.h"
#include "include/odp_intervals.h"
#include "intervals/intervals_math.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * One side's regions, as the paths see them: its live regions (those
 * that may overlap something), nlive x dims positions, row-major.  The
 * paths know regions by their live position; pair keys hold live
 * positions too, which the driver maps back to rows (the map ascends, so
 * the order of the pairs is the same).
 */
typedef struct OdpIvSide
{
	const uint64_t *lo;
	const uint64_t *hi;
	int64_t		rows;			/* the caller's rows */
	int64_t		nlive;
	uint32_t   *live;			/* live position -> row, or NULL: the same */
	uint64_t   *own;			/* positions the driver made (lo, then hi),
								 * or NULL when lo and hi are the caller's
								 * keys */
} OdpIvSide;

/* A problem ready for the paths. */
typedef struct OdpIvPrep
{
	int32_t		dims;
	int32_t		sweep;			/* the sweep dimension */
	uint8_t    *box;			/* dims flags: compared as box && */
	bool		any_box;
	bool		self;			/* one set: b is a */
	OdpIvSide	a;
	OdpIvSide	b;
	double		pair_share;		/* estimated share of pairs that overlap */
	int			b_bits;			/* bits of a pair key holding b */
	int			key_bits;		/* bits of a pair key */
	int64_t		empty;			/* regions set aside */
} OdpIvPrep;

/* The row of live position i of side s. */
static inline uint32_t
odp_iv_live_row(const OdpIvSide *s, int64_t i)
{
	return s->live != NULL ? s->live[i] : (uint32_t) i;
}

/* One run: live A positions [a0, a1) against the loaded B range. */
typedef struct OdpIvRun
{
	int64_t		a0;
	int64_t		a1;
	OdpIvScheme scheme;
	bool		count_only;
	int64_t		capacity;		/* pairs the run may keep */
} OdpIvRun;

/* A path's side of the matching. */
typedef struct OdpIvBackend
{
	void	   *self;
	int64_t		a_rows_max;		/* live A rows one run takes at most */
	int64_t		b_rows_max;		/* live B rows one load takes at most */
	int64_t		capacity;		/* pairs one run may keep */
	int64_t		block;			/* keys one call of keys returns at most */
	double		sort_ms;		/* time the path spent ordering pairs */
	double		match_ms;		/* in load and run, transfers excluded */

	/* Builds the sorted B structure of live B positions [b0, b1). */
	OdpStatus	(*load) (void *self, int64_t b0, int64_t b1);

	/*
	 * Runs one run against the loaded range: *found receives its pairs
	 * (for count_only, the count; otherwise, when found <= capacity, the
	 * pairs are kept sorted for keys), *candidates its candidates.
	 */
	OdpStatus	(*run) (void *self, const OdpIvRun *run, int64_t *found,
						int64_t *candidates);

	/*
	 * Points *keys at the kept pairs' keys [offset, offset + n) on the
	 * host, n <= block; valid until the next call.
	 */
	OdpStatus	(*keys) (void *self, int64_t offset, int64_t n,
						 const uint64_t **keys);

	/* Frees everything; called once, on every path. */
	void		(*release) (void *self);
} OdpIvBackend;

/*
 * Test hooks: when > 0, caps on a run's capacity and on the rows of a
 * run and of a load, on both paths, to exercise the chunking.
 */
extern int64_t odp_iv_test_capacity;
extern int64_t odp_iv_test_rows;

/*
 * Test hook: when true, a dimension that needs ranks takes them from
 * binary searches in its sorted keys (intervals_prep.c), as one with more
 * keys than 32 bits can number does.
 */
extern bool odp_iv_test_search_ranks;

/* Pairs the CPU path keeps per run by default. */
#define ODP_IV_CPU_CAPACITY		((int64_t) 1 << 25)

/* Keys the paths hand back per call of keys. */
#define ODP_IV_KEY_BLOCK		((int64_t) 1 << 20)

/* The test dimensions of a candidate: every dimension but the sweep. */
static inline bool
odp_iv_is_test_dim(const OdpIvPrep *prep, int d)
{
	return d != prep->sweep;
}

/* Whether the candidates need tests (else every candidate is a pair). */
static inline bool
odp_iv_needs_tests(const OdpIvPrep *prep, OdpIvScheme scheme)
{
	return prep->dims > 1 || scheme == ODP_IV_SELF_CROSS;
}

/*
 * Turns a checked problem into positions, live lists and a sweep
 * dimension on the host's threads (intervals_prep.c); on failure nothing
 * is left allocated, else odp_iv_prep_free frees it.
 */
extern OdpStatus odp_iv_prepare(OdpContext *ctx, const OdpIntervalProblem *p,
								OdpIvPrep *prep);
extern void odp_iv_prep_free(OdpIvPrep *prep);

/* Backend constructors; on failure nothing is left allocated. */
extern OdpStatus odp_cpu_iv_backend(OdpContext *ctx, const OdpIvPrep *prep,
									OdpIvBackend *backend);
extern OdpStatus odp_gpu_iv_backend(OdpContext *ctx, const OdpIvPrep *prep,
									OdpIvBackend *backend);

/*
 * Matches a checked problem on ctx's one device, ctx->device
 * (intervals_match.c): the pairs to emit in ascending (a, b) order unless
 * count_only (emit then unused), their number in *pairs, ctx's timings and
 * stats (may be NULL) as the entry points describe them.  ctx's outputs
 * start at zero: the entry points' checks reset them, and so does the
 * device set for each part of a split call.
 */
extern OdpStatus odp_iv_match(OdpContext *ctx, const OdpIntervalProblem *p,
							  bool count_only, OdpIntervalPairFn emit,
							  void *emit_arg, int64_t *pairs,
							  OdpIntervalStats *stats);

/*
 * The GPU path spread over ctx's devices (intervals_split.c): splits the
 * first side's rows over the device set's parts, each running odp_iv_match,
 * or runs odp_iv_match on the one device where the call does not split.
 */
extern OdpStatus odp_split_intervals(OdpContext *ctx,
									 const OdpIntervalProblem *p,
									 bool count_only, OdpIntervalPairFn emit,
									 void *emit_arg, int64_t *pairs,
									 OdpIntervalStats *stats);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_IV_INTERNAL_H */
