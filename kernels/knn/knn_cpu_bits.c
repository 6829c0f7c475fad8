/*-------------------------------------------------------------------------
 *
 * knn_cpu_bits.c
 *	  The CPU path's exact distances between rows of 0/1 values, as bits.
 *
 * 0/1 attributes (flags, one-hot codes, the CelebA table) make the float
 * path add 0 or 1 per dimension: under euclidean, squared euclidean and
 * manhattan a pair's float32 sum is the number n of positions where the
 * rows differ, exactly, in any order (n < 2^24), and under chebyshev its
 * maximum is whether n > 0.  So the canonical distance (odp_distance.h)
 * of such a pair depends on n alone: it is taken once per n from
 * odp_distance itself, and a pair costs an XOR and a population count
 * per 64 dimensions instead of three float operations per dimension.
 * Ties are no concern here: knn_cpu.c's heaps already keep the smaller
 * index among equal distances at no cost.  knn_cpu.c compares its query
 * and candidate blocks this way, and SolvingSet's update pass
 * (solvingset_cpu.c) its rows against each batch.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_cpu_bits.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "include/odp_distance.h"
#include "knn/knn_cpu_bits.h"

int64_t		odp_cpu_knn_bits_runs = 0;
int64_t		odp_cpu_knn_bits_min_queries = 16;

/* One block's distances; inlined into each instruction set's copy. */
static inline __attribute__((always_inline)) void
bits_block_body(const uint64_t *q, const uint64_t *cands, int words, int n,
				const float *distance, float *out)
{
	if (words == 1)
	{
		const uint64_t q0 = q[0];

		for (int c = 0; c < n; c++)
			out[c] = distance[__builtin_popcountll(q0 ^ cands[c])];
		return;
	}
	for (int c = 0; c < n; c++)
	{
		const uint64_t *row = cands + (size_t) c * words;
		int			count = 0;

		for (int w = 0; w < words; w++)
			count += __builtin_popcountll(q[w] ^ row[w]);
		out[c] = distance[count];
	}
}

static void
bits_block(const uint64_t *q, const uint64_t *cands, int words, int n,
		   const float *distance, float *out)
{
	bits_block_body(q, cands, words, n, distance, out);
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * The same with the POPCNT instruction, which x86-64's baseline lacks (a
 * population count is otherwise a dozen instructions).
 */
__attribute__((target("popcnt"))) static void
bits_block_popcnt(const uint64_t *q, const uint64_t *cands, int words, int n,
				  const float *distance, float *out)
{
	bits_block_body(q, cands, words, n, distance, out);
}
#endif

/* See knn_cpu_bits.h. */
bool
odp_knn_bits_pack_row(const float *row, int dims, uint64_t *out)
{
	bool		other = false;

	/* no branch per value: on 0/1 data it would be mispredicted half the time */
	for (int w = 0; w * 64 < dims; w++)
	{
		const int	end = dims - w * 64 < 64 ? dims - w * 64 : 64;
		const float *v = row + w * 64;
		uint64_t	word = 0;

		for (int d = 0; d < end; d++)
		{
			word |= (uint64_t) (v[d] == 1.0f) << d;
			other |= (v[d] != 0.0f) & (v[d] != 1.0f);
		}
		out[w] = word;
	}
	return !other;
}

/*
 * m's rows packed, words per row, in one pass; NULL where a value is
 * neither 0 nor 1, or without the memory.
 */
static uint64_t *
bits_pack(const OdpMatrix *m, int words)
{
	uint64_t   *out = malloc(sizeof(uint64_t) * (size_t) (m->rows > 0 ? m->rows : 1) * words);

	if (out == NULL)
		return NULL;
	for (int64_t r = 0; r < m->rows; r++)
		if (!odp_knn_bits_pack_row(m->data + r * m->dims, m->dims, out + r * words))
		{
			free(out);
			return NULL;
		}
	return out;
}

/* See knn_cpu_bits.h. */
void
odp_knn_bits_prepare(OdpMetric metric, const OdpMatrix *queries,
					 const OdpMatrix *cands, OdpKnnBits *bits)
{
	const int	dims = cands->dims;
	float	   *zeros,
			   *ones;
	const bool	same = queries->data == cands->data && queries->rows == cands->rows;

	memset(bits, 0, sizeof(*bits));
	if (metric != ODP_METRIC_EUCLIDEAN && metric != ODP_METRIC_SQEUCLIDEAN &&
		metric != ODP_METRIC_MANHATTAN && metric != ODP_METRIC_CHEBYSHEV)
		return;
	if (dims <= 0 || queries->dims != dims)
		return;
	bits->words = (dims + 63) / 64;
	bits->cands = bits_pack(cands, bits->words);
	bits->queries = same || bits->cands == NULL ? bits->cands : bits_pack(queries, bits->words);
	bits->distance = malloc(sizeof(float) * (size_t) (dims + 1));
	zeros = calloc((size_t) dims, sizeof(float));
	ones = calloc((size_t) dims, sizeof(float));
	if (bits->cands == NULL || bits->queries == NULL || bits->distance == NULL ||
		zeros == NULL || ones == NULL)
	{
		free(zeros);
		free(ones);
		odp_knn_bits_free(bits);
		return;
	}
	/* n differing positions: the canonical distance of 0 ... 0 and n ones */
	for (int n = 0; n <= dims; n++)
	{
		bits->distance[n] = odp_distance(metric, zeros, ones, dims, 0.0f, 0.0f);
		if (n < dims)
			ones[n] = 1.0f;
	}
	free(zeros);
	free(ones);
	bits->block = bits_block;
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();		/* cheap, and safe however the library was loaded */
	if (__builtin_cpu_supports("popcnt"))
		bits->block = bits_block_popcnt;
#endif
	odp_cpu_knn_bits_runs++;
}

/* See knn_cpu_bits.h. */
void
odp_knn_bits_free(OdpKnnBits *bits)
{
	if (bits->queries != bits->cands)
		free(bits->queries);
	free(bits->cands);
	free(bits->distance);
	memset(bits, 0, sizeof(*bits));
}
