/*-------------------------------------------------------------------------
 *
 * corr_internal.h
 *	  Declarations shared by the correlation dispatcher (pearson.c) and
 *	  its two paths (cpu_pearson.c, gpu_pearson.cu): the job one call
 *	  runs, and the buffers that carry pairs to the caller in order.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/corr_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_CORR_INTERNAL_H
#define ODP_CORR_INTERNAL_H

#include "engine_internal.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* Pairs in memory: a growable (a, b, r) list. */
typedef struct OdpCorrPairs
{
	int64_t    *a;
	int64_t    *b;
	double	   *r;
	int64_t		count;
	int64_t		cap;
} OdpCorrPairs;

/* Makes room for more pairs (count + more); false when out of memory. */
extern bool odp_corr_pairs_reserve(OdpCorrPairs *p, int64_t more);

/* Appends one pair; false when out of memory. */
static inline bool
odp_corr_pairs_push(OdpCorrPairs *p, int64_t a, int64_t b, double r)
{
	if (p->count == p->cap && !odp_corr_pairs_reserve(p, 1))
		return false;
	p->a[p->count] = a;
	p->b[p->count] = b;
	p->r[p->count] = r;
	p->count++;
	return true;
}

/* Orders the pairs by (a, b); false when out of memory. */
extern bool odp_corr_pairs_sort(OdpCorrPairs *p);

/* Frees the arrays and empties the list. */
extern void odp_corr_pairs_free(OdpCorrPairs *p);

/* Where pairs go: the caller's callback, with what it cost. */
typedef struct OdpCorrEmitter
{
	OdpCorrPairFn fn;
	void	   *arg;
	int64_t		emitted;		/* pairs handed over so far */
	double		ms;				/* time spent in fn */
} OdpCorrEmitter;

/*
 * Hands every pair of p to the callback, in batches and in p's order;
 * ODP_ERR_CANCELLED (with a message) when the callback asks to stop.
 */
extern OdpStatus odp_corr_emit(OdpContext *ctx, OdpCorrEmitter *e,
							   const OdpCorrPairs *p);

/* One correlation call, arguments checked (pearson.c). */
typedef struct OdpCorrJob
{
	const OdpCorrProblem *p;
	bool		top;			/* top-k lists, else pairs over a threshold */

	/* pairs */
	double		min_abs_r;
	OdpCorrEmitter *emitter;

	/* top-k lists: x->rows x k each */
	int32_t		k;
	OdpCorrRank rank;
	int64_t    *other;
	double	   *r;

	/*
	 * GPU path only: the rows a of x this call computes, [row_begin,
	 * row_end) (row_end 0: every row), for the parts of a split call
	 * (split_corr.c); pairs and lists are those of the whole problem with
	 * a in the range.
	 */
	int64_t		row_begin;
	int64_t		row_end;
} OdpCorrJob;

/* The GPU path spread over ctx's devices (split_corr.c). */
extern OdpStatus odp_gpus_corr(OdpContext *ctx, const OdpCorrJob *job);

/* The two paths; each sets ctx's timings. */
extern OdpStatus odp_cpu_corr(OdpContext *ctx, const OdpCorrJob *job);
extern OdpStatus odp_gpu_corr(OdpContext *ctx, const OdpCorrJob *job);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_CORR_INTERNAL_H */
