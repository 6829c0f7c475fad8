/*-------------------------------------------------------------------------
 *
 * bench_rng.h
 *	  Reproducible random numbers of the engine benchmarks: a 64-bit
 *	  xorshift whose state each program seeds as it likes.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/bench_rng.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_BENCH_RNG_H
#define ODP_BENCH_RNG_H

#include <stdint.h>

/* Advances the state and returns it. */
static inline uint64_t
bench_next(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* A uniform double in [0, 1). */
static inline double
bench_unit(uint64_t *state)
{
	return (bench_next(state) >> 11) / 9007199254740992.0;
}

#endif							/* ODP_BENCH_RNG_H */
