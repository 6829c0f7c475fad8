/*-------------------------------------------------------------------------
 *
 * knn_merge.h
 *	  The one merge of neighbour lists that cover disjoint candidate ranges
 *	  (each sorted by distance, then index), shared by the CPU path's
 *	  per-thread ranges and the GPU's query copies (k-NN and SolvingSet).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_merge.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_KNN_MERGE_H
#define ODP_KNN_MERGE_H

#include <stdint.h>

#include "include/odp_distance.h"

/*
 * Lists l = 0 .. nlists-1 hold len[l] entries, entry p of list l at
 * dist/index[l * stride + p].  Returns the list whose next entry (at
 * pos[l]) is smallest by (distance, index), or -1 once every list is used
 * up; the caller reads that entry and advances pos.  Defined for float
 * distances (odp_merge_next) and float64 ones (odp_merge_next64).
 */
#define ODP_MERGE_NEXT_DEFINE(name, T) \
ODP_HD int \
name(const T *dist, const int64_t *index, int64_t stride, int nlists, \
	 const int *pos, const int *len) \
{ \
	int			best = -1; \
	T			bd = 0; \
	int64_t		bi = 0; \
\
	for (int l = 0; l < nlists; l++) \
	{ \
		if (pos[l] < len[l]) \
		{ \
			const T		d = dist[l * stride + pos[l]]; \
			const int64_t i = index[l * stride + pos[l]]; \
\
			if (best < 0 || d < bd || (d == bd && i < bi)) \
			{ \
				best = l; \
				bd = d; \
				bi = i; \
			} \
		} \
	} \
	return best; \
}

ODP_MERGE_NEXT_DEFINE(odp_merge_next, float)
ODP_MERGE_NEXT_DEFINE(odp_merge_next64, double)

#endif							/* ODP_KNN_MERGE_H */
