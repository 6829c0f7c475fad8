/*-------------------------------------------------------------------------
 *
 * host_sort.h
 *	  LSD radix sorts of 64-bit keys on the host (host_sort.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/host_sort.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_HOST_SORT_H
#define ODP_HOST_SORT_H

#include "include/odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* Entries of the count scratch odp_radix_sort takes. */
#define ODP_RADIX_COUNTS	2048

/*
 * Sorts key[0 .. n) ascending by their low bits bits, stably, carrying
 * val when it is not NULL (host_sort.c); tkey and tval are scratch of n
 * entries, count of ODP_RADIX_COUNTS.  Serial.
 */
extern void odp_radix_sort(uint64_t *key, uint32_t *val, uint64_t *tkey,
						   uint32_t *tval, int64_t n, int bits,
						   int64_t *count);

/*
 * Sorts key[0 .. n) ascending by their low bits bits, stably, carrying
 * val when it is not NULL, on odp_host_threads(ctx) threads; tkey and
 * tval are scratch of n entries (tval unused without val).  Small arrays
 * sort on the caller's thread alone.  Fails only when cancelled or out of
 * host memory.
 */
extern OdpStatus odp_radix_sort_parallel(OdpContext *ctx, uint64_t *key,
										 uint32_t *val, uint64_t *tkey,
										 uint32_t *tval, int64_t n, int bits);


/* Sorts v[0 .. n) ascending (qsort; for ids and row indexes). */
extern void odp_sort_int64(int64_t *v, int64_t n);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_HOST_SORT_H */
