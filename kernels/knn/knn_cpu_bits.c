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
 * Float64 rows of 0/1 values do the same with float64 distances (their
 * sums of 0 and 1 are exact as well).
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

/*
 * One block's distances, out of a table of T (float, double) by count;
 * inlined into each precision's and instruction set's copy.
 */
#define BITS_BLOCK_BODY(T) \
static inline __attribute__((always_inline)) void \
bits_block_body_##T(const uint64_t *q, const uint64_t *cands, int words, int n, \
					const T *distance, T *out) \
{ \
	if (words == 1) \
	{ \
		const uint64_t q0 = q[0]; \
\
		for (int c = 0; c < n; c++) \
			out[c] = distance[__builtin_popcountll(q0 ^ cands[c])]; \
		return; \
	} \
	for (int c = 0; c < n; c++) \
	{ \
		const uint64_t *row = cands + (size_t) c * words; \
		int			count = 0; \
\
		for (int w = 0; w < words; w++) \
			count += __builtin_popcountll(q[w] ^ row[w]); \
		out[c] = distance[count]; \
	} \
}
BITS_BLOCK_BODY(float)
BITS_BLOCK_BODY(double)

static void
bits_block(const uint64_t *q, const uint64_t *cands, int words, int n,
		   const float *distance, float *out)
{
	bits_block_body_float(q, cands, words, n, distance, out);
}

static void
bits_block64(const uint64_t *q, const uint64_t *cands, int words, int n,
			 const double *distance, double *out)
{
	bits_block_body_double(q, cands, words, n, distance, out);
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
	bits_block_body_float(q, cands, words, n, distance, out);
}

__attribute__((target("popcnt"))) static void
bits_block64_popcnt(const uint64_t *q, const uint64_t *cands, int words, int n,
					const double *distance, double *out)
{
	bits_block_body_double(q, cands, words, n, distance, out);
}
#endif

/* Packs one row of T values; see odp_knn_bits_pack_row. */
#define BITS_PACK_ROW(name, T) \
bool \
name(const T *row, int dims, uint64_t *out) \
{ \
	bool		other = false; \
\
	/* no branch per value: on 0/1 data it would be mispredicted half the time */ \
	for (int w = 0; w * 64 < dims; w++) \
	{ \
		const int	end = dims - w * 64 < 64 ? dims - w * 64 : 64; \
		const T    *v = row + w * 64; \
		uint64_t	word = 0; \
\
		for (int d = 0; d < end; d++) \
		{ \
			word |= (uint64_t) (v[d] == 1) << d; \
			other |= (v[d] != 0) & (v[d] != 1); \
		} \
		out[w] = word; \
	} \
	return !other; \
}

/* See knn_cpu_bits.h. */
BITS_PACK_ROW(odp_knn_bits_pack_row, float)
BITS_PACK_ROW(odp_knn_bits_pack_row64, double)

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
		if (odp_matrix_is64(m) ?
			!odp_knn_bits_pack_row64(m->data64 + r * m->dims, m->dims, out + r * words) :
			!odp_knn_bits_pack_row(m->data + r * m->dims, m->dims, out + r * words))
		{
			free(out);
			return NULL;
		}
	return out;
}

/*
 * The canonical distance of n differing positions, for n = 0 .. dims, into
 * bits' table of the rows' precision: that of 0 ... 0 and n ones, as
 * odp_distance or odp_distance64 gives it.  False without the memory.
 */
static bool
bits_distances(OdpMetric metric, int dims, bool wide, OdpKnnBits *bits)
{
	const size_t size = wide ? sizeof(double) : sizeof(float);
	void	   *zeros = calloc((size_t) dims, size);
	void	   *ones = calloc((size_t) dims, size);
	bool		ok = zeros != NULL && ones != NULL;

	if (ok && wide)
		ok = (bits->distance64 = malloc(sizeof(double) * (size_t) (dims + 1))) != NULL;
	else if (ok)
		ok = (bits->distance = malloc(sizeof(float) * (size_t) (dims + 1))) != NULL;
	for (int n = 0; ok && n <= dims; n++)
	{
		if (wide)
			bits->distance64[n] = odp_distance64(metric, zeros, ones, dims, 0.0, 0.0);
		else
			bits->distance[n] = odp_distance(metric, zeros, ones, dims, 0.0f, 0.0f);
		if (n < dims && wide)
			((double *) ones)[n] = 1.0;
		else if (n < dims)
			((float *) ones)[n] = 1.0f;
	}
	free(zeros);
	free(ones);
	return ok;
}

/* See knn_cpu_bits.h. */
void
odp_knn_bits_prepare(OdpMetric metric, const OdpMatrix *queries,
					 const OdpMatrix *cands, OdpKnnBits *bits)
{
	const int	dims = cands->dims;
	const bool	wide = odp_matrix_is64(cands);
	const bool	same = queries->data == cands->data && queries->data64 == cands->data64 &&
		queries->rows == cands->rows;

	memset(bits, 0, sizeof(*bits));
	if (metric != ODP_METRIC_EUCLIDEAN && metric != ODP_METRIC_SQEUCLIDEAN &&
		metric != ODP_METRIC_MANHATTAN && metric != ODP_METRIC_CHEBYSHEV)
		return;
	if (dims <= 0 || queries->dims != dims || odp_matrix_is64(queries) != wide)
		return;
	bits->words = (dims + 63) / 64;
	bits->cands = bits_pack(cands, bits->words);
	bits->queries = same || bits->cands == NULL ? bits->cands : bits_pack(queries, bits->words);
	if (bits->cands == NULL || bits->queries == NULL ||
		!bits_distances(metric, dims, wide, bits))
	{
		odp_knn_bits_free(bits);
		return;
	}
	bits->block = wide ? NULL : bits_block;
	bits->block64 = wide ? bits_block64 : NULL;
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();		/* cheap, and safe however the library was loaded */
	if (__builtin_cpu_supports("popcnt"))
	{
		bits->block = wide ? NULL : bits_block_popcnt;
		bits->block64 = wide ? bits_block64_popcnt : NULL;
	}
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
	free(bits->distance64);
	memset(bits, 0, sizeof(*bits));
}
