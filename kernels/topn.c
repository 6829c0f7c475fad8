/*-------------------------------------------------------------------------
 *
 * topn.c
 *	  Selection of the n best-scored rows, shared by every analytic that
 *	  ranks rows.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/topn.c
 *
 *-------------------------------------------------------------------------
 */
#include "odp_engine.h"

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

/*
 * Keeps a heap of the best n rows seen, whose root is the worst of them,
 * then sorts it in place best first.  The caller's order array holds
 * min(n, rows) entries.
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
