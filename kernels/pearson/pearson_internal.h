/*-------------------------------------------------------------------------
 *
 * pearson_internal.h
 *	  Declarations shared by the correlation dispatcher (pearson.c) and
 *	  its two paths (pearson_cpu.c, pearson_gpu.cu): the job one call
 *	  runs, and the buffers that carry pairs to the caller in order.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_PEARSON_INTERNAL_H
#define ODP_PEARSON_INTERNAL_H

#include "common/engine_internal.h"
#include "include/odp_pearson.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* Pairs in memory: a growable (a, b, r) list (pearson_pairs.c). */
typedef struct OdpPearsonPairs
{
	int64_t    *a;
	int64_t    *b;
	double	   *r;
	int64_t		count;
	int64_t		cap;
} OdpPearsonPairs;

/* Makes room for more pairs (count + more); false when out of memory. */
extern bool odp_pearson_pairs_reserve(OdpPearsonPairs *p, int64_t more);

/* Appends one pair; false when out of memory. */
static inline bool
odp_pearson_pairs_push(OdpPearsonPairs *p, int64_t a, int64_t b, double r)
{
	if (p->count == p->cap && !odp_pearson_pairs_reserve(p, 1))
		return false;
	p->a[p->count] = a;
	p->b[p->count] = b;
	p->r[p->count] = r;
	p->count++;
	return true;
}

/* Orders the pairs by (a, b); false when out of memory. */
extern bool odp_pearson_pairs_sort(OdpPearsonPairs *p);

/* Frees the arrays and empties the list. */
extern void odp_pearson_pairs_free(OdpPearsonPairs *p);

/* Where pairs go: the caller's callback, with what it cost. */
typedef struct OdpPearsonEmitter
{
	OdpPearsonPairFn fn;
	void	   *arg;
	int64_t		emitted;		/* pairs handed over so far */
	double		ms;				/* time spent in fn */
} OdpPearsonEmitter;

/*
 * Hands every pair of p to the callback, in batches and in p's order;
 * ODP_ERR_CANCELLED (with a message) when the callback asks to stop.
 */
extern OdpStatus odp_pearson_emit(OdpContext *ctx, OdpPearsonEmitter *e,
								  const OdpPearsonPairs *p);

/* One correlation call, arguments checked (pearson.c). */
typedef struct OdpPearsonJob
{
	const OdpPearsonProblem *p;
	bool		top;			/* top-k lists, else pairs over a threshold */

	/* pairs */
	double		min_abs_r;
	OdpPearsonEmitter *emitter;

	/* top-k lists: x->rows x k each */
	int32_t		k;
	OdpPearsonRank rank;
	int64_t    *other;
	double	   *r;

	/*
	 * GPU path only: the rows a of x this call computes, [row_begin,
	 * row_end) (row_end 0: every row), for the parts of a split call
	 * (pearson_split.c); pairs and lists are those of the whole problem with
	 * a in the range.
	 */
	int64_t		row_begin;
	int64_t		row_end;
} OdpPearsonJob;

/* The GPU path spread over ctx's devices (pearson_split.c). */
extern OdpStatus odp_split_pearson(OdpContext *ctx, const OdpPearsonJob *job);

/* The two paths; each sets ctx's timings. */
extern OdpStatus odp_cpu_pearson(OdpContext *ctx, const OdpPearsonJob *job);
extern OdpStatus odp_gpu_pearson(OdpContext *ctx, const OdpPearsonJob *job);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_PEARSON_INTERNAL_H */
