/*-------------------------------------------------------------------------
 *
 * knn_merge.h
 *	  The one merge of neighbour lists that cover disjoint candidate ranges
 *	  (each sorted by distance, then index), shared by the CPU path's
 *	  per-thread ranges and the GPU's query copies (k-NN and SolvingSet);
 *	  and the one way to turn a row's k + 1 nearest into its k nearest
 *	  other rows.
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

/*
 * A row's k nearest other rows from its kk nearest rows (dist/index,
 * ascending by (distance, index), the row itself possibly among them):
 * the first k entries whose index is not self, into out_dist and, where
 * not NULL, out_index.  With kk = k + 1 this is the self-excluding top k,
 * duplicates and ties included, for primitives that cannot exclude a row
 * themselves.  Returns how many it wrote.
 */
static inline int32_t
odp_list_without_row(const double *dist, const int64_t *index, int32_t kk,
					 int64_t self, int32_t k, double *out_dist,
					 int64_t *out_index)
{
	int32_t		n = 0;

	for (int32_t j = 0; j < kk && n < k; j++)
	{
		if (index[j] == self)
			continue;
		out_dist[n] = dist[j];
		if (out_index != NULL)
			out_index[n] = index[j];
		n++;
	}
	return n;
}

#endif							/* ODP_KNN_MERGE_H */
