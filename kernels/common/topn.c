/*-------------------------------------------------------------------------
 *
 * topn.c
 *	  Selection of the n best-scored rows, shared by every analytic that
 *	  ranks rows.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/topn.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "include/odp_engine.h"

/* Is row a ranked before row b?  Higher score first, then smaller id. */
static inline bool
topn_better(const double *scores, const int64_t *ids, int64_t a, int64_t b)
{
	if (scores[a] != scores[b])
		return scores[a] > scores[b];
	return ids ? ids[a] < ids[b] : a < b;
}

/* Restores the heap property below position i (root = worst kept row). */
static void
topn_sift_down(const double *scores, const int64_t *ids, int64_t *heap,
			   int64_t size, int64_t i)
{
	for (;;)
	{
		int64_t		l = 2 * i + 1,
					r = l + 1,
					worst = i,
					t;

		if (l < size && topn_better(scores, ids, heap[worst], heap[l]))
			worst = l;
		if (r < size && topn_better(scores, ids, heap[worst], heap[r]))
			worst = r;
		if (worst == i)
			return;
		t = heap[i];
		heap[i] = heap[worst];
		heap[worst] = t;
		i = worst;
	}
}

/* Rows at or above which a large n is selected by radix (topn_radix). */
#define TOPN_RADIX_MIN_N	1024

/* A double as an unsigned key of the same order (no NaN). */
static inline uint64_t
topn_key(double v)
{
	uint64_t	u;

	if (v == 0.0)
		v = 0.0;				/* -0.0 == +0.0 for topn_better: one key */
	memcpy(&u, &v, sizeof(u));
	return (u & UINT64_C(0x8000000000000000)) ? ~u : u | UINT64_C(0x8000000000000000);
}

/* qsort context of topn_cmp: qsort_r is not C11. */
static __thread const double *topn_cmp_scores;
static __thread const int64_t *topn_cmp_ids;

/* Orders positions best first, as topn_better does. */
static int
topn_cmp(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *) a;
	const int64_t y = *(const int64_t *) b;

	if (topn_better(topn_cmp_scores, topn_cmp_ids, x, y))
		return -1;
	return topn_better(topn_cmp_scores, topn_cmp_ids, y, x) ? 1 : 0;
}

/*
 * Selection for a large n (SolvingSet's next batch: thousands out of a
 * million), in time linear in rows where the heap below costs rows log n
 * with cache misses: a most-significant-digit radix select on the scores'
 * order-preserving keys, 16 bits per pass, narrows down to the rows that
 * share the n-th best key; the rows above it all belong, and the ties at
 * it are taken by smaller id; then the n are sorted best first.  The same
 * rows in the same order as the heap.  Returns -1 when out of memory (the
 * caller then uses the heap).
 */
static int64_t
topn_radix(const double *scores, const int64_t *ids, int64_t rows, int64_t n,
		   int64_t *order)
{
	int64_t    *rest = malloc(sizeof(int64_t) * (size_t) rows);
	uint32_t   *hist = malloc(sizeof(uint32_t) * 65536);
	int64_t		nrest = rows;
	int64_t		taken = 0;

	if (rest == NULL || hist == NULL)
	{
		free(rest);
		free(hist);
		return -1;
	}
	for (int64_t r = 0; r < rows; r++)
		rest[r] = r;
	for (int shift = 48; shift >= 0 && taken < n; shift -= 16)
	{
		int64_t		need = n - taken;
		int64_t		above = 0;
		int64_t		kept = 0;
		int			bucket = 65535;

		memset(hist, 0, sizeof(uint32_t) * 65536);
		for (int64_t i = 0; i < nrest; i++)
			hist[(topn_key(scores[rest[i]]) >> shift) & 0xffff]++;
		/* the bucket holding the need-th best: all above it are in */
		while (above + hist[bucket] < need)
			above += hist[bucket--];
		for (int64_t i = 0; i < nrest; i++)
		{
			const int64_t r = rest[i];
			const int	d = (int) ((topn_key(scores[r]) >> shift) & 0xffff);

			if (d > bucket)
				order[taken++] = r;
			else if (d == bucket)
				rest[kept++] = r;
		}
		nrest = kept;
		if (nrest <= 4096)
			break;				/* few enough to sort */
	}
	/* rest now shares one key (or holds exactly the rows still needed) */
	if (taken < n)
	{
		topn_cmp_scores = scores;
		topn_cmp_ids = ids;
		qsort(rest, (size_t) nrest, sizeof(int64_t), topn_cmp);
		memcpy(order + taken, rest, sizeof(int64_t) * (size_t) (n - taken));
	}
	topn_cmp_scores = scores;
	topn_cmp_ids = ids;
	qsort(order, (size_t) n, sizeof(int64_t), topn_cmp);
	free(rest);
	free(hist);
	return n;
}

/*
 * Keeps a heap of the best n rows seen, whose root is the worst of them,
 * then sorts it in place best first (or, for a large n, topn_radix).  The
 * caller's order array holds min(n, rows) entries.
 */
int64_t
odp_top_n(const double *scores, const int64_t *ids, int64_t rows, int64_t n,
		  int64_t *order)
{
	int64_t		size = 0;

	if (n <= 0 || rows <= 0)
		return 0;
	if (n > rows)
		n = rows;
	if (n >= TOPN_RADIX_MIN_N)
	{
		int64_t		got = topn_radix(scores, ids, rows, n, order);

		if (got >= 0)
			return got;
	}

	for (int64_t row = 0; row < rows; row++)
	{
		if (size < n)
		{
			/* sift up the new row towards the root while it is worse */
			int64_t		i = size++;

			order[i] = row;
			while (i > 0)
			{
				int64_t		parent = (i - 1) / 2,
							t;

				if (!topn_better(scores, ids, order[parent], order[i]))
					break;
				t = order[i];
				order[i] = order[parent];
				order[parent] = t;
				i = parent;
			}
		}
		else if (topn_better(scores, ids, row, order[0]))
		{
			order[0] = row;
			topn_sift_down(scores, ids, order, size, 0);
		}
	}

	/* heap sort: repeatedly move the worst to the end */
	for (int64_t end = size - 1; end > 0; end--)
	{
		int64_t		t = order[0];

		order[0] = order[end];
		order[end] = t;
		topn_sift_down(scores, ids, order, end, 0);
	}
	return size;
}
