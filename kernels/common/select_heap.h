/*-------------------------------------------------------------------------
 *
 * select_heap.h
 *	  The CPU path's k-selection: a bounded max-heap of (key, index)
 *	  entries, instantiated per key type like lib/sort_template.h.
 *
 * The heap keeps the k smallest entries by (key, then smaller index), the
 * same order as the GPU's merge (gpu_select.cuh), so both paths select the
 * same entries.  Include it with
 *
 *	  #define ODP_HEAP_PREFIX name	  -- defines name_offer, name_sort_ascending
 *										 (and name_sift_down)
 *	  #define ODP_HEAP_KEY type		  -- float, double
 *	  #include "common/select_heap.h"
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/select_heap.h
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>

#if !defined(ODP_HEAP_PREFIX) || !defined(ODP_HEAP_KEY)
#error "define ODP_HEAP_PREFIX and ODP_HEAP_KEY before including select_heap.h"
#endif

#define ODP_HEAP_CAT_(a, b) a##_##b
#define ODP_HEAP_CAT(a, b) ODP_HEAP_CAT_(a, b)
#define ODP_HEAP_OFFER ODP_HEAP_CAT(ODP_HEAP_PREFIX, offer)
#define ODP_HEAP_SORT ODP_HEAP_CAT(ODP_HEAP_PREFIX, sort_ascending)
#define ODP_HEAP_SIFT ODP_HEAP_CAT(ODP_HEAP_PREFIX, sift_down)

/*
 * Puts (d, j) at the root of the max-heap hd/hi of size entries keyed by
 * (key, index), whose root was taken away, and sifts it down.
 */
static inline void
ODP_HEAP_SIFT(ODP_HEAP_KEY *hd, int64_t *hi, int32_t size, ODP_HEAP_KEY d,
			  int64_t j)
{
	int32_t		i = 0;

	for (;;)
	{
		int32_t		l = 2 * i + 1,
					r = l + 1,
					w = -1;
		ODP_HEAP_KEY wd = d;
		int64_t		wj = j;

		if (l < size && (hd[l] > wd || (hd[l] == wd && hi[l] > wj)))
		{
			w = l;
			wd = hd[l];
			wj = hi[l];
		}
		if (r < size && (hd[r] > wd || (hd[r] == wd && hi[r] > wj)))
			w = r;
		if (w < 0)
			break;
		hd[i] = hd[w];
		hi[i] = hi[w];
		i = w;
	}
	hd[i] = d;
	hi[i] = j;
}

/*
 * Offers (d, j) to the max-heap hd/hi of *size (at most k) entries keyed by
 * (key, index): it enters while the heap has room or when it is smaller
 * than the root.
 */
static inline void
ODP_HEAP_OFFER(ODP_HEAP_KEY *hd, int64_t *hi, int32_t *size, int32_t k,
			   ODP_HEAP_KEY d, int64_t j)
{
	int32_t		i;

	if (*size < k)
	{
		/* sift up */
		i = (*size)++;
		while (i > 0)
		{
			int32_t		p = (i - 1) / 2;

			if (hd[p] > d || (hd[p] == d && hi[p] > j))
				break;
			hd[i] = hd[p];
			hi[i] = hi[p];
			i = p;
		}
		hd[i] = d;
		hi[i] = j;
		return;
	}
	if (d > hd[0] || (d == hd[0] && j > hi[0]))
		return;
	ODP_HEAP_SIFT(hd, hi, k, d, j);
}

/* Turns a max-heap of size entries into ascending order in place. */
static void
ODP_HEAP_SORT(ODP_HEAP_KEY *hd, int64_t *hi, int32_t size)
{
	for (int32_t end = size - 1; end > 0; end--)
	{
		ODP_HEAP_KEY d = hd[end];
		int64_t		j = hi[end];

		hd[end] = hd[0];
		hi[end] = hi[0];
		ODP_HEAP_SIFT(hd, hi, end, d, j);
	}
}

#undef ODP_HEAP_OFFER
#undef ODP_HEAP_SORT
#undef ODP_HEAP_SIFT
#undef ODP_HEAP_CAT
#undef ODP_HEAP_CAT_
#undef ODP_HEAP_PREFIX
#undef ODP_HEAP_KEY
