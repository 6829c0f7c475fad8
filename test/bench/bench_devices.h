/*-------------------------------------------------------------------------
 *
 * bench_devices.h
 *	  The engine benchmarks' --devices option: a list of CUDA ordinals
 *	  ("0,1") their GPU runs split over, every split taken
 *	  (OdpContext.split_min_ms left 0).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/bench_devices.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_BENCH_DEVICES_H
#define ODP_BENCH_DEVICES_H

#include <stdlib.h>
#include <string.h>

#include "include/odp_engine.h"

/* A device list; count 0: one device, as a zeroed context has. */
typedef struct BenchDevices
{
	int			count;
	int			ids[ODP_MAX_GPUS];
} BenchDevices;

/* Reads a list such as "0,1" into *d. */
static inline void
bench_devices_parse(BenchDevices *d, const char *list)
{
	char	   *s = (char *) list;

	memset(d, 0, sizeof(*d));
	while (*s != '\0' && d->count < ODP_MAX_GPUS)
	{
		d->ids[d->count++] = (int) strtol(s, &s, 10);
		if (*s == ',')
			s++;
	}
}

/* Gives ctx the list. */
static inline void
bench_devices_apply(const BenchDevices *d, OdpContext *ctx)
{
	ctx->gpu_count = d->count;
	memcpy(ctx->gpu_ids, d->ids, sizeof(d->ids));
}

#endif							/* ODP_BENCH_DEVICES_H */
