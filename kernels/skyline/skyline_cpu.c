/*-------------------------------------------------------------------------
 *
 * skyline_cpu.c
 *	  CPU path of the skyline: the block loop of skyline_internal.h over the
 *	  host presort, rows of a block shared among threads.
 *
 * The window holds the band members found so far, their rank rows copied
 * one after the other in key order, so a row scans its strongest pruners
 * first, from memory read in sequence.  A row stops at its band-th
 * dominator.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_cpu.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/host_threads.h"
#include "skyline/skyline_internal.h"
#include "skyline/skyline_math.h"

/* Rows of a block one task takes. */
#define SKY_CPU_TASK_ROWS	64

typedef struct CpuSkyJob
{
	const OdpSkyPrep *prep;
	int32_t		band;
	int64_t		q0;				/* the block: positions q0 .. q1-1 */
	int64_t		q1;
	const uint32_t *wranks;		/* the window: wn rank rows */
	const uint64_t *wmasks;
	int64_t		wn;
	int32_t    *c1;				/* per position: count after step 1 */
	int32_t    *count;			/* per position: final count */
	atomic_llong pair_tests;
	atomic_llong full_tests;
} CpuSkyJob;

/* Step 1: rows of a task against the window. */
static void
cpu_sky_window(void *arg, int64_t task)
{
	CpuSkyJob  *job = (CpuSkyJob *) arg;
	const int	dims = job->prep->dims;
	int64_t		q0 = job->q0 + task * SKY_CPU_TASK_ROWS;
	int64_t		q1 = q0 + SKY_CPU_TASK_ROWS < job->q1 ? q0 + SKY_CPU_TASK_ROWS : job->q1;
	int64_t		pairs = 0,
				full = 0;

	for (int64_t q = q0; q < q1; q++)
	{
		const uint32_t *qr = job->prep->ranks + (size_t) q * dims;
		const uint64_t qm = job->prep->masks[q];
		int32_t		c = 0;
		int64_t		j;

		for (j = 0; j < job->wn && c < job->band; j++)
		{
			if (!odp_sky_mask_allows(job->wmasks[j], qm))
				continue;
			full++;
			c += odp_sky_dominates(job->wranks + (size_t) j * dims, qr, dims);
		}
		pairs += j;
		job->c1[q] = c;
	}
	atomic_fetch_add(&job->pair_tests, pairs);
	atomic_fetch_add(&job->full_tests, full);
}

/* Step 2: rows of a task against the earlier rows of the block still in. */
static void
cpu_sky_block(void *arg, int64_t task)
{
	CpuSkyJob  *job = (CpuSkyJob *) arg;
	const int	dims = job->prep->dims;
	const uint32_t *ranks = job->prep->ranks;
	const uint64_t *masks = job->prep->masks;
	int64_t		q0 = job->q0 + task * SKY_CPU_TASK_ROWS;
	int64_t		q1 = q0 + SKY_CPU_TASK_ROWS < job->q1 ? q0 + SKY_CPU_TASK_ROWS : job->q1;
	int64_t		pairs = 0,
				full = 0;

	for (int64_t q = q0; q < q1; q++)
	{
		const uint32_t *qr = ranks + (size_t) q * dims;
		const uint64_t qm = masks[q];
		int32_t		c = job->c1[q];
		int64_t		p;

		for (p = job->q0; p < q && c < job->band; p++)
		{
			if (job->c1[p] >= job->band || !odp_sky_mask_allows(masks[p], qm))
				continue;
			full++;
			c += odp_sky_dominates(ranks + (size_t) p * dims, qr, dims);
		}
		pairs += p - job->q0;
		job->count[q] = c;
	}
	atomic_fetch_add(&job->pair_tests, pairs);
	atomic_fetch_add(&job->full_tests, full);
}

/* See skyline_internal.h. */
OdpStatus
odp_cpu_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
				int32_t *dominated_by, OdpSkylineStats *stats)
{
	OdpSkyPrep	prep;
	CpuSkyJob	job;
	uint32_t   *wranks = NULL;
	uint64_t   *wmasks = NULL;
	int32_t    *c1 = NULL;
	int32_t    *count = NULL;
	double		start = odp_now_ms();
	OdpStatus	status;

	if ((status = odp_sky_prepare(ctx, p, &prep)) != ODP_OK)
		return status;
	stats->presort_ms = odp_now_ms() - start;
	wranks = malloc(sizeof(uint32_t) * (size_t) prep.rows * prep.dims);
	wmasks = malloc(sizeof(uint64_t) * (size_t) prep.rows);
	c1 = malloc(sizeof(int32_t) * (size_t) prep.rows);
	count = malloc(sizeof(int32_t) * (size_t) prep.rows);
	if (!wranks || !wmasks || !c1 || !count)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the skyline's window of %lld rows",
						  (long long) prep.rows);
		goto cleanup;
	}

	memset(&job, 0, sizeof(job));
	job.prep = &prep;
	job.band = p->band;
	job.wranks = wranks;
	job.wmasks = wmasks;
	job.c1 = c1;
	job.count = count;
	atomic_init(&job.pair_tests, 0);
	atomic_init(&job.full_tests, 0);
	for (int64_t q0 = 0; q0 < prep.rows; q0 += ODP_SKY_CPU_BLOCK)
	{
		int64_t		q1 = q0 + ODP_SKY_CPU_BLOCK < prep.rows ? q0 + ODP_SKY_CPU_BLOCK : prep.rows;
		int64_t		tasks = (q1 - q0 + SKY_CPU_TASK_ROWS - 1) / SKY_CPU_TASK_ROWS;

		job.q0 = q0;
		job.q1 = q1;
		if ((status = odp_parallel_tasks(ctx, tasks, cpu_sky_window, &job)) != ODP_OK ||
			(status = odp_parallel_tasks(ctx, tasks, cpu_sky_block, &job)) != ODP_OK)
			goto cleanup;
		for (int64_t q = q0; q < q1; q++)
		{
			if (count[q] >= p->band)
				continue;
			memcpy(wranks + (size_t) job.wn * prep.dims,
				   prep.ranks + (size_t) q * prep.dims, sizeof(uint32_t) * prep.dims);
			wmasks[job.wn++] = prep.masks[q];
		}
		stats->blocks++;
	}
	stats->loop_ms = odp_now_ms() - start - stats->presort_ms;
	for (int64_t q = 0; q < prep.rows; q++)
		dominated_by[prep.order[q]] = count[q] < p->band ? count[q] : p->band;
	stats->pair_tests = atomic_load(&job.pair_tests);
	stats->full_tests = atomic_load(&job.full_tests);
	ctx->compute_ms = odp_now_ms() - start;

cleanup:
	free(wranks);
	free(wmasks);
	free(c1);
	free(count);
	odp_sky_prep_free(&prep);
	return status;
}
