/*-------------------------------------------------------------------------
 *
 * solvingset_first.c
 *	  SolvingSet's first candidates: the rows of smallest pseudo-random
 *	  key of their id, shared by the single-matrix driver (solvingset.c)
 *	  and the distributed form (solvingset_distributed.c), so that a split
 *	  of the rows over nodes draws the same first batch.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_first.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>

#include "common/engine_internal.h"
#include "common/host_sort.h"
#include "include/odp_distributed.h"
#include "outliers/solvingset_internal.h"

/* Seed of the first candidates' keys (fixed: runs are reproducible). */
#define ODP_SS_SEED				UINT64_C(0x5eed5017d5e7c0de)

/*
 * Candidates the first batch's key threshold aims for beyond m, so that
 * one pass over the rows usually finds the m smallest keys.
 */
#define ODP_SS_FIRST_SLACK		64

/* splitmix64: advances *state and returns the next pseudo-random value. */
static uint64_t
ss_splitmix64(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* See odp_distributed.h: splitmix64's output for the id (seeded). */
uint64_t
odp_ss_first_key(int64_t id)
{
	uint64_t	state = (uint64_t) id ^ ODP_SS_SEED;

	return ss_splitmix64(&state);
}

/* A row with its first-candidate key. */
typedef struct SsKeyed
{
	uint64_t	key;
	int64_t		row;
} SsKeyed;

/* qsort comparator: key ascending, then row (= id order) ascending. */
static int
ss_cmp_keyed(const void *a, const void *b)
{
	const SsKeyed *x = (const SsKeyed *) a;
	const SsKeyed *y = (const SsKeyed *) b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

/*
 * See solvingset_internal.h.  One pass keeps the rows whose key lies below a
 * threshold that about 2m + 64 of rows uniform keys would pass, and sorts
 * those; if fewer than m pass, the threshold doubles and the pass repeats.
 */
OdpStatus
odp_ss_first_rows(OdpContext *ctx, const int64_t *ids, int64_t rows,
				  int64_t m, int64_t *out)
{
	double		share = (2.0 * (double) m + ODP_SS_FIRST_SLACK) / (double) rows;
	uint64_t	limit = share >= 1.0 ? UINT64_MAX : (uint64_t) ldexp(share, 64);
	SsKeyed    *kept = NULL;
	int64_t		nkept;

	if (m > rows)
		m = rows;
	for (;;)
	{
		int64_t		cap = 0;

		nkept = 0;
		for (int64_t r = 0; r < rows; r++)
		{
			uint64_t	key = odp_ss_first_key(ids != NULL ? ids[r] : r);

			if (key > limit)
				continue;
			if (nkept == cap)
			{
				SsKeyed    *grown;

				cap = cap > 0 ? 2 * cap : 2 * m + ODP_SS_FIRST_SLACK;
				grown = realloc(kept, sizeof(SsKeyed) * (size_t) cap);
				if (grown == NULL)
				{
					free(kept);
					return odp_fail(ctx, ODP_ERR_HOST_OOM,
									"out of host memory for %lld first candidates",
									(long long) cap);
				}
				kept = grown;
			}
			kept[nkept].key = key;
			kept[nkept].row = r;
			nkept++;
		}
		if (nkept >= m || limit == UINT64_MAX)
			break;
		limit = limit > UINT64_MAX / 2 ? UINT64_MAX : 2 * limit;
	}
	if (nkept > 0)
		qsort(kept, (size_t) nkept, sizeof(SsKeyed), ss_cmp_keyed);
	for (int64_t i = 0; i < m; i++)
		out[i] = kept[i].row;
	free(kept);
	odp_sort_int64(out, m);
	return ODP_OK;
}
