/*-------------------------------------------------------------------------
 *
 * pearson_pairs.c
 *	  The pairs of a correlation call in memory (a growable list, sorted
 *	  by (a, b) when a path produced them out of order) and their ordered
 *	  hand-over to the caller's receiver, shared by both paths.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_pairs.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "pearson/pearson_internal.h"

/* Pairs handed to the callback at once. */
#define PEARSON_EMIT_BATCH		65536

/* See pearson_internal.h. */
bool
odp_pearson_pairs_reserve(OdpPearsonPairs *p, int64_t more)
{
	int64_t		cap = p->cap > 0 ? p->cap : 1024;
	int64_t    *a;
	int64_t    *b;
	double	   *r;

	if (p->count + more <= p->cap)
		return true;
	while (cap < p->count + more)
		cap *= 2;
	a = realloc(p->a, sizeof(int64_t) * (size_t) cap);
	if (a == NULL)
		return false;
	p->a = a;
	b = realloc(p->b, sizeof(int64_t) * (size_t) cap);
	if (b == NULL)
		return false;
	p->b = b;
	r = realloc(p->r, sizeof(double) * (size_t) cap);
	if (r == NULL)
		return false;
	p->r = r;
	p->cap = cap;
	return true;
}

/* See pearson_internal.h. */
void
odp_pearson_pairs_free(OdpPearsonPairs *p)
{
	free(p->a);
	free(p->b);
	free(p->r);
	memset(p, 0, sizeof(*p));
}

/*
 * Orders a permutation of pairs by (a, b).  qsort has no context argument
 * (qsort_r is not C11), so the pairs are in a thread-local: the parts of a
 * split call sort on threads of their own.
 */
static __thread const OdpPearsonPairs *pearson_sort_pairs;

static int
pearson_cmp_pair(const void *x, const void *y)
{
	const OdpPearsonPairs *p = pearson_sort_pairs;
	int64_t		i = *(const int64_t *) x;
	int64_t		j = *(const int64_t *) y;

	if (p->a[i] != p->a[j])
		return p->a[i] < p->a[j] ? -1 : 1;
	return (p->b[i] > p->b[j]) - (p->b[i] < p->b[j]);
}

/* See pearson_internal.h.  Pairs are unique, so the order is total. */
bool
odp_pearson_pairs_sort(OdpPearsonPairs *p)
{
	int64_t    *perm;
	OdpPearsonPairs sorted = {0};
	bool		in_order = true;

	for (int64_t i = 1; i < p->count && in_order; i++)
		in_order = p->a[i - 1] < p->a[i] ||
			(p->a[i - 1] == p->a[i] && p->b[i - 1] < p->b[i]);
	if (in_order)
		return true;
	perm = malloc(sizeof(int64_t) * (size_t) p->count);
	if (perm == NULL || !odp_pearson_pairs_reserve(&sorted, p->count))
	{
		free(perm);
		odp_pearson_pairs_free(&sorted);
		return false;
	}
	for (int64_t i = 0; i < p->count; i++)
		perm[i] = i;
	pearson_sort_pairs = p;
	qsort(perm, (size_t) p->count, sizeof(int64_t), pearson_cmp_pair);
	pearson_sort_pairs = NULL;
	for (int64_t i = 0; i < p->count; i++)
	{
		sorted.a[i] = p->a[perm[i]];
		sorted.b[i] = p->b[perm[i]];
		sorted.r[i] = p->r[perm[i]];
	}
	sorted.count = p->count;
	free(perm);
	odp_pearson_pairs_free(p);
	*p = sorted;
	return true;
}

/* See pearson_internal.h. */
OdpStatus
odp_pearson_emit(OdpContext *ctx, OdpPearsonEmitter *e, const OdpPearsonPairs *p)
{
	for (int64_t at = 0; at < p->count; at += PEARSON_EMIT_BATCH)
	{
		int64_t		n = p->count - at < PEARSON_EMIT_BATCH ? p->count - at : PEARSON_EMIT_BATCH;
		double		start = odp_now_ms();
		bool		go_on = e->fn(e->arg, p->a + at, p->b + at, p->r + at, n);

		e->ms += odp_now_ms() - start;
		if (!go_on)
			return odp_fail(ctx, ODP_ERR_CANCELLED, "the receiver of the pairs stopped the call");
		e->emitted += n;
	}
	return ODP_OK;
}
