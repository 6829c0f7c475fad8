/*-------------------------------------------------------------------------
 *
 * skyline_presort.c
 *	  The host presort of the skyline, which the CPU path and the GPU
 *	  path's staged plan start from.
 *
 * The presort (skyline_math.h) turns values into dense ranks per feature,
 * orders the rows by a strictly dominance-monotone key and computes each
 * row's pruning mask.  Sorting is a radix sort of the values' order-
 * preserving 64-bit images (host_sort.c), one feature per task, features
 * in parallel; the rows' keys are sorted by the parallel radix sort.
 * Every pass runs on odp_host_threads(ctx) threads, so the GPU path's
 * staged plan, which presorts here, uses the host's CPUs too.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_presort.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/host_sort.h"
#include "common/host_threads.h"
#include "skyline/skyline_internal.h"
#include "skyline/skyline_math.h"

/* State of one presort. */
typedef struct SkyPrepJob
{
	const OdpSkylineProblem *p;
	int64_t		rows;
	int32_t		dims;
	int			bits;			/* mask bits per masked feature */
	uint32_t   *rank_cols;		/* dims x rows, column-major */
	uint32_t   *max_rank;		/* per feature */
	uint32_t   *thresholds;		/* mask dims x bits */
	uint64_t   *keys;			/* per row */
	uint64_t   *masks;			/* per row */
	atomic_int	oom;
	atomic_llong bad_row;		/* smallest row with a value not finite */
} SkyPrepJob;

/* Task: the dense ranks, largest rank and mask thresholds of feature d. */
static void
sky_prep_feature(void *arg, int64_t d)
{
	SkyPrepJob *job = (SkyPrepJob *) arg;
	const int64_t n = job->rows;
	const double *x = job->p->points->data;
	const bool	max = job->p->maximize != NULL && job->p->maximize[d];
	uint64_t   *key = malloc(sizeof(uint64_t) * 2 * (size_t) n);
	uint32_t   *row = malloc(sizeof(uint32_t) * 2 * (size_t) n);
	int64_t    *count = malloc(sizeof(int64_t) * ODP_RADIX_COUNTS);
	uint32_t   *rank = job->rank_cols + (size_t) d * n;
	uint32_t	r = 0;

	if (key == NULL || row == NULL || count == NULL)
	{
		atomic_store(&job->oom, 1);
		goto done;
	}
	for (int64_t i = 0; i < n; i++)
	{
		double		v = x[i * job->dims + d];

		if (!isfinite(v))
		{
			long long	seen = atomic_load(&job->bad_row);

			while (i < seen && !atomic_compare_exchange_weak(&job->bad_row, &seen, i))
				;
			goto done;
		}
		key[i] = odp_order_float64(odp_sky_value(v, max));
		row[i] = (uint32_t) i;
	}
	odp_radix_sort(key, row, key + n, row + n, n, 64, count);
	for (int64_t i = 0; i < n; i++)
	{
		r += i > 0 && key[i] != key[i - 1];
		rank[row[i]] = r;
	}
	job->max_rank[d] = r;
	if (d < odp_sky_mask_dims(job->dims))
	{
		for (int b = 0; b < job->bits; b++)
			job->thresholds[d * job->bits + b] =
				rank[row[odp_sky_threshold_pos(n, b, job->bits)]];
	}
done:
	free(key);
	free(row);
	free(count);
}

/* Rows per task of the key and mask computation. */
#define SKY_PREP_ROWS	65536

/* Task: keys and masks of a range of rows. */
static void
sky_prep_keys(void *arg, int64_t task)
{
	SkyPrepJob *job = (SkyPrepJob *) arg;
	const int64_t n = job->rows;
	const int	mdims = odp_sky_mask_dims(job->dims);
	int64_t		r0 = task * SKY_PREP_ROWS;
	int64_t		r1 = r0 + SKY_PREP_ROWS < n ? r0 + SKY_PREP_ROWS : n;

	for (int64_t r = r0; r < r1; r++)
	{
		uint64_t	key = 0,
					mask = 0;

		for (int d = 0; d < job->dims; d++)
		{
			uint32_t	rank = job->rank_cols[(size_t) d * n + r];

			key += (uint64_t) rank * odp_sky_weight(job->max_rank[d]);
			if (d < mdims)
				mask |= odp_sky_mask_bits(rank, job->thresholds + d * job->bits,
										  job->bits, d);
		}
		job->keys[r] = key;
		job->masks[r] = mask;
	}
}

/* Task: the rank rows and masks of a range of positions, in key order. */
typedef struct SkyGatherJob
{
	const SkyPrepJob *prep_job;
	OdpSkyPrep *prep;
	const uint32_t *order32;
} SkyGatherJob;

static void
sky_prep_gather(void *arg, int64_t task)
{
	SkyGatherJob *g = (SkyGatherJob *) arg;
	const SkyPrepJob *job = g->prep_job;
	const int64_t n = job->rows;
	int64_t		p0 = task * SKY_PREP_ROWS;
	int64_t		p1 = p0 + SKY_PREP_ROWS < n ? p0 + SKY_PREP_ROWS : n;

	for (int64_t pos = p0; pos < p1; pos++)
	{
		uint32_t	r = g->order32[pos];

		for (int d = 0; d < job->dims; d++)
			g->prep->ranks[(size_t) pos * job->dims + d] = job->rank_cols[(size_t) d * n + r];
		g->prep->masks[pos] = job->masks[r];
		g->prep->order[pos] = r;
	}
}

/* See skyline_internal.h. */
OdpStatus
odp_sky_not_finite(OdpContext *ctx, int64_t row)
{
	return odp_fail(ctx, ODP_ERR_DATA, "row %lld has a value that is not finite",
					(long long) row);
}

/* See skyline_internal.h. */
void
odp_sky_prep_free(OdpSkyPrep *prep)
{
	free(prep->ranks);
	free(prep->masks);
	free(prep->order);
	memset(prep, 0, sizeof(*prep));
}

/* See skyline_internal.h. */
OdpStatus
odp_sky_prepare(OdpContext *ctx, const OdpSkylineProblem *p, OdpSkyPrep *prep)
{
	const int64_t n = p->points->rows;
	const int32_t dims = p->points->dims;
	const size_t cells = (size_t) n * (size_t) dims;
	SkyPrepJob	job;
	SkyGatherJob gather;
	uint64_t   *key2 = NULL;
	uint32_t   *order32 = NULL;
	int64_t		tasks = (n + SKY_PREP_ROWS - 1) / SKY_PREP_ROWS;
	OdpStatus	status;

	memset(prep, 0, sizeof(*prep));
	memset(&job, 0, sizeof(job));
	job.p = p;
	job.rows = n;
	job.dims = dims;
	job.bits = odp_sky_bits_per_dim(dims);
	atomic_init(&job.oom, 0);
	atomic_init(&job.bad_row, n);
	job.rank_cols = malloc(sizeof(uint32_t) * cells);
	job.max_rank = malloc(sizeof(uint32_t) * (size_t) dims);
	job.thresholds = malloc(sizeof(uint32_t) * ODP_SKY_MASK_BITS);
	job.keys = malloc(sizeof(uint64_t) * (size_t) n);
	job.masks = malloc(sizeof(uint64_t) * (size_t) n);
	key2 = malloc(sizeof(uint64_t) * (size_t) n);
	order32 = malloc(sizeof(uint32_t) * 2 * (size_t) n);
	prep->ranks = malloc(sizeof(uint32_t) * cells);
	prep->masks = malloc(sizeof(uint64_t) * (size_t) n);
	prep->order = malloc(sizeof(int64_t) * (size_t) n);
	if (!job.rank_cols || !job.max_rank || !job.thresholds || !job.keys ||
		!job.masks || !key2 || !order32 || !prep->ranks ||
		!prep->masks || !prep->order)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the skyline's presort of %lld x %d values",
						  (long long) n, (int) dims);
		goto cleanup;
	}

	if ((status = odp_parallel_tasks(ctx, dims, sky_prep_feature, &job)) != ODP_OK)
		goto cleanup;
	if (atomic_load(&job.bad_row) < n)
	{
		status = odp_sky_not_finite(ctx, atomic_load(&job.bad_row));
		goto cleanup;
	}
	if (atomic_load(&job.oom))
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory while ranking the skyline's features");
		goto cleanup;
	}
	if ((status = odp_parallel_tasks(ctx, tasks, sky_prep_keys, &job)) != ODP_OK)
		goto cleanup;

	/*
	 * key order, ties by input row (the sort is stable), on every thread:
	 * the keys stay below dims x 2^32 (skyline_math.h), which sorts in
	 * fewer passes than all 64 bits
	 */
	memcpy(key2, job.keys, sizeof(uint64_t) * (size_t) n);
	for (int64_t i = 0; i < n; i++)
		order32[i] = (uint32_t) i;
	{
		uint64_t   *tkey = job.keys;	/* free to reuse as scratch */
		uint64_t	top = 0;
		int			bits = 1;

		for (int d = 0; d < dims; d++)
			top += (uint64_t) job.max_rank[d] * odp_sky_weight(job.max_rank[d]);
		while (bits < 64 && (top >> bits) != 0)
			bits++;
		if ((status = odp_radix_sort_parallel(ctx, key2, order32, tkey, order32 + n,
											  n, bits)) != ODP_OK)
			goto cleanup;
	}
	gather.prep_job = &job;
	gather.prep = prep;
	gather.order32 = order32;
	if ((status = odp_parallel_tasks(ctx, tasks, sky_prep_gather, &gather)) != ODP_OK)
		goto cleanup;
	prep->rows = n;
	prep->dims = dims;

cleanup:
	free(job.rank_cols);
	free(job.max_rank);
	free(job.thresholds);
	free(job.keys);
	free(job.masks);
	free(key2);
	free(order32);
	if (status != ODP_OK)
		odp_sky_prep_free(prep);
	return status;
}
