/*-------------------------------------------------------------------------
 *
 * device_set.c
 *	  The set of GPUs one call spreads its work over (see device_set.h).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/devices/device_set.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/host_threads.h"
#include "devices/device_set.h"
#include "gpu/gpu_runtime.h"

/* Share of a device's free memory a call may use, as OdpGpuBegin allows. */
#define DEVSET_FREE_SHARE	0.90

/* How long the caller's thread waits between polls, in nanoseconds. */
#define DEVSET_POLL_NS		1000000L

/* What the threads of one OdpDeviceSetRun share. */
typedef struct DevSetRun
{
	OdpPartFn	fn;
	void	   *arg;
	atomic_int	stop;			/* read by every part's cancel callback */
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	int			done;			/* parts finished, under lock */
} DevSetRun;

/* One part's thread and its context. */
typedef struct DevSetPart
{
	DevSetRun  *run;
	int			index;
	OdpContext	ctx;
	OdpStatus	status;
	bool		stopped;		/* it ended because the run was stopped */
} DevSetPart;

/* See device_set.h. */
OdpStatus
OdpDeviceSetResolve(OdpContext *ctx, OdpDeviceSet *set)
{
	OdpStatus	status;
	int			host = 0;

	memset(set, 0, sizeof(*set));
	if (ctx->gpu_count == 0)
	{
		set->count = 1;
		set->ids[0] = ctx->gpu_id;
		set->budget[0] = ctx->gpu_memory_limit;
		return ODP_OK;
	}
	if ((status = odp_gpu_probe(ctx, &host, NULL, NULL)) != ODP_OK)
		return status;
	if (ctx->gpu_count == ODP_GPUS_ALL)
	{
		set->count = host < ODP_MAX_GPUS ? host : ODP_MAX_GPUS;
		for (int p = 0; p < set->count; p++)
			set->ids[p] = p;
	}
	else
	{
		if (ctx->gpu_count < 1 || ctx->gpu_count > ODP_MAX_GPUS)
			return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
							"a device list has 1 .. %d entries, not %d",
							ODP_MAX_GPUS, ctx->gpu_count);
		set->count = ctx->gpu_count;
		for (int p = 0; p < set->count; p++)
		{
			set->ids[p] = ctx->gpu_ids[p];
			if (set->ids[p] < 0 || set->ids[p] >= host)
				return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
								"device %d does not exist: this host has %d CUDA device%s (ordinals 0 to %d)",
								set->ids[p], host, host == 1 ? "" : "s", host - 1);
		}
	}

	/* a device named c times splits its budget in c equal shares */
	for (int p = 0; p < set->count; p++)
	{
		int			named = 0;
		OdpGpuInfo	info;
		size_t		share;

		for (int q = 0; q < set->count; q++)
			named += set->ids[q] == set->ids[p];
		set->budget[p] = ctx->gpu_memory_limit;
		if (named == 1)
			continue;
		if ((status = odp_gpu_device_info(ctx, set->ids[p], &info)) != ODP_OK)
			return status;
		share = (size_t) ((double) info.free_memory * DEVSET_FREE_SHARE);
		if (ctx->gpu_memory_limit != 0 && ctx->gpu_memory_limit < share)
			share = ctx->gpu_memory_limit;
		set->budget[p] = share / (size_t) named;
		/* 0 would mean "no cap" to OdpGpuBegin */
		if (set->budget[p] == 0)
			set->budget[p] = 1;
	}
	return ODP_OK;
}

/* The parts' cancel callback: whether the caller's thread stopped the run. */
static bool
DevSetStopped(void *arg)
{
	return atomic_load(&((DevSetRun *) arg)->stop) != 0;
}

/* Body of a part's thread: runs the part, then counts it done. */
static void *
DevSetThread(void *arg)
{
	DevSetPart *part = (DevSetPart *) arg;
	DevSetRun  *run = part->run;

	/* the parts share their inputs: none of them page-locks them */
	odp_gpu_pin_thread_disable();
	part->status = run->fn(run->arg, part->index, &part->ctx);
	/*
	 * A part returns CANCELLED only when stopped (its cancel callback is
	 * the run's flag, its receiver the pump's relay); any other failure is
	 * its own.
	 */
	part->stopped = part->status == ODP_ERR_CANCELLED;
	/* a failing part stops the others at their next poll */
	if (part->status != ODP_OK)
		atomic_store(&run->stop, 1);
	pthread_mutex_lock(&run->lock);
	run->done++;
	pthread_cond_signal(&run->done_cond);
	pthread_mutex_unlock(&run->lock);
	return NULL;
}

/* Waits on run's condition until every started part is done or about a poll's time has passed. */
static void
DevSetWait(DevSetRun *run, int started)
{
	struct timespec until;

	odp_deadline_after(&until, DEVSET_POLL_NS);
	pthread_mutex_lock(&run->lock);
	while (run->done < started)
	{
		if (pthread_cond_timedwait(&run->done_cond, &run->lock, &until) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&run->lock);
}

/* See device_set.h. */
OdpStatus
OdpDeviceSetRun(OdpContext *ctx, const OdpDeviceSet *set, OdpPartFn fn,
				void *arg, OdpPumpFn pump, void *pump_arg)
{
	DevSetRun	run;
	DevSetPart	parts[ODP_MAX_GPUS];
	pthread_t	threads[ODP_MAX_GPUS];
	sigset_t	all,
				old;
	int			started = 0;
	bool		cancelled = false;
	bool		pump_stopped = false;
	bool		receiver_stopped = false;
	OdpStatus	status = ODP_OK;

	if (set->count < 1 || set->count > ODP_MAX_GPUS)
		return odp_fail(ctx, ODP_ERR_INTERNAL, "a device set of %d parts", set->count);
	run.fn = fn;
	run.arg = arg;
	atomic_init(&run.stop, 0);
	run.done = 0;
	pthread_mutex_init(&run.lock, NULL);
	pthread_cond_init(&run.done_cond, NULL);
	for (int p = 0; p < set->count; p++)
	{
		DevSetPart *part = &parts[p];

		part->run = &run;
		part->index = p;
		part->ctx = *ctx;
		part->ctx.device = ODP_DEVICE_GPU;
		part->ctx.gpu_count = 0;
		part->ctx.gpu_id = set->ids[p];
		part->ctx.gpu_memory_limit = set->budget[p];
		part->ctx.cancel = DevSetStopped;
		part->ctx.cancel_arg = &run;
		part->ctx.message[0] = '\0';
		part->ctx.transfer_ms = part->ctx.compute_ms = 0.0;
		part->ctx.chunks = 0;
		part->status = ODP_OK;
		part->stopped = false;
	}

	/* the threads inherit a mask that keeps signals on the caller's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; started < set->count; started++)
		if (pthread_create(&threads[started], NULL, DevSetThread, &parts[started]) != 0)
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (started < set->count)
	{
		atomic_store(&run.stop, 1);
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "could not start a thread for part %d of %d (GPU %d)",
						  started + 1, set->count, set->ids[started]);
	}

	/* poll for cancel (and pump) until every part is done */
	for (;;)
	{
		int			done;

		pthread_mutex_lock(&run.lock);
		done = run.done;
		pthread_mutex_unlock(&run.lock);
		if (done >= started)
			break;
		if (!cancelled && odp_cancel_requested(ctx))
		{
			cancelled = true;
			atomic_store(&run.stop, 1);
		}
		if (pump != NULL && !pump_stopped)
		{
			if (atomic_load(&run.stop) != 0)
			{
				/* release parts waiting on the pump, so that they see the stop */
				(void) pump(pump_arg, true);
				pump_stopped = true;
			}
			else if (!pump(pump_arg, false))
			{
				pump_stopped = receiver_stopped = true;
				atomic_store(&run.stop, 1);
			}
		}
		DevSetWait(&run, started);
	}
	for (int p = 0; p < started; p++)
		pthread_join(threads[p], NULL);
	pthread_mutex_destroy(&run.lock);
	pthread_cond_destroy(&run.done_cond);

	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	ctx->gpu_parts = set->count;
	for (int p = 0; p < started; p++)
	{
		ctx->transfer_ms = fmax(ctx->transfer_ms, parts[p].ctx.transfer_ms);
		ctx->compute_ms = fmax(ctx->compute_ms, parts[p].ctx.compute_ms);
		ctx->chunks += parts[p].ctx.chunks;
	}
	if (status != ODP_OK)
		return status;
	for (int p = 0; p < started; p++)
	{
		if (parts[p].status == ODP_OK || parts[p].stopped)
			continue;
		return odp_fail(ctx, parts[p].status, "GPU %d (part %d of %d): %s",
						set->ids[p], p + 1, set->count, parts[p].ctx.message);
	}
	if (receiver_stopped && !cancelled)
		return odp_fail(ctx, ODP_ERR_CANCELLED, "the receiver stopped the call");
	for (int p = 0; p < started; p++)
		if (parts[p].status != ODP_OK)
			return odp_fail(ctx, ODP_ERR_CANCELLED,
							"the computation was cancelled");
	if (cancelled)
		return odp_fail(ctx, ODP_ERR_CANCELLED, "the computation was cancelled");
	return ODP_OK;
}

/*
 * Rates of one H200 (2026-11-29, devices_bench.sh at full size): distances
 * 4.0e13 pair-dimensions a second (top outliers of 10^6 x 10 by brute
 * force, 247 ms; the k-NN self join of 10^6 x 32 reached 8.2e13 through
 * its symmetric filter), correlations 2.3e13 (16,384 x 4,096 float8,
 * 23.5 ms), region count 2e9 rows (10^7, 4.9 ms), skylines 10^8 rows (the
 * least: kddcup's 494,021 x 6 took 7.4 ms, 10^7 x 8 anti-correlated
 * rows 12 s).
 */
static const double one_device_rate[] = {
	[ODP_WORK_DISTANCES] = 4.0e13,
	[ODP_WORK_CORRELATIONS] = 2.3e13,
	[ODP_WORK_SKYLINE] = 1.0e8,
	[ODP_WORK_REGIONS] = 2.0e9
};

/* See odp_engine.h. */
double
odp_one_device_ms(OdpWorkKind kind, int64_t rows, int64_t other_rows, int32_t dims)
{
	const double a = (double) rows;
	const double b = (double) other_rows;
	double		units = 0.0;

	switch (kind)
	{
		case ODP_WORK_DISTANCES:
			units = a * b * dims;
			break;
		case ODP_WORK_CORRELATIONS:
			units = (other_rows > 0 ? a * b : a * (a - 1.0) / 2.0) * dims;
			break;
		case ODP_WORK_SKYLINE:
			units = a;
			break;
		case ODP_WORK_REGIONS:
			units = a + b;
			break;
	}
	return units / one_device_rate[kind] * 1000.0;
}

/* See device_set.h. */
void
OdpSharedInputsPin(OdpContext *ctx, OdpSharedInputs *in, const void *ptr, size_t bytes)
{
	const double before = ctx->transfer_ms;
	void	   *pinned;

	if (in->count == (int) (sizeof(in->pinned) / sizeof(in->pinned[0])))
		return;
	pinned = odp_gpu_pin_shared(ctx, ptr, bytes);
	in->ms += ctx->transfer_ms - before;
	if (pinned != NULL)
		in->pinned[in->count++] = pinned;
}

/* See device_set.h. */
void
OdpSharedInputsRelease(OdpContext *ctx, OdpSharedInputs *in)
{
	ctx->transfer_ms += in->ms;
	for (int i = 0; i < in->count; i++)
		odp_gpu_unpin_shared(ctx, in->pinned[i]);
	memset(in, 0, sizeof(*in));
}

/* See device_set.h. */
bool
OdpDeviceSetWorth(const OdpContext *ctx, const OdpDeviceSet *set,
				  double one_device_ms)
{
	return set->count > 1 && one_device_ms >= ctx->split_min_ms;
}

/* See device_set.h. */
void
OdpSplitRows(int64_t rows, int parts, bool triangle, int64_t align,
			 int64_t *first)
{
	first[0] = 0;
	for (int p = 1; p < parts; p++)
	{
		double		f = (double) p / parts;
		int64_t		at;

		/*
		 * Row a of a triangle has rows - 1 - a partners, so the first x
		 * rows hold 1 - (1 - x / rows)^2 of the pairs.
		 */
		if (triangle)
			f = 1.0 - sqrt(1.0 - f);
		at = (int64_t) (f * (double) rows);
		if (align > 1 && at > align)
			at -= at % align;
		if (at < first[p - 1])
			at = first[p - 1];
		if (at > rows)
			at = rows;
		first[p] = at;
	}
	first[parts] = rows;
}

/* How long a part spins at a meeting before it sleeps. */
#define MEETING_SPIN_MS		0.2

struct OdpMeeting
{
	int			parts;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int			arrived;		/* under lock */
	atomic_llong held;			/* meetings held */
};

/* See device_set.h. */
OdpMeeting *
odp_meeting_make(int parts)
{
	OdpMeeting *m = calloc(1, sizeof(OdpMeeting));

	if (m == NULL)
		return NULL;
	m->parts = parts;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	atomic_init(&m->held, 0);
	return m;
}

/* See device_set.h. */
void
odp_meeting_free(OdpMeeting *m)
{
	if (m == NULL)
		return;
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m);
}

/*
 * See device_set.h.  Parts usually arrive within microseconds of each
 * other, so a part spins a while before it sleeps.
 */
bool
odp_meeting_attend(OdpContext *pctx, OdpMeeting *m)
{
	long long	held;
	double		until;

	pthread_mutex_lock(&m->lock);
	held = atomic_load(&m->held);
	if (++m->arrived == m->parts)
	{
		m->arrived = 0;
		atomic_store(&m->held, held + 1);
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		return true;
	}
	pthread_mutex_unlock(&m->lock);
	until = odp_now_ms() + MEETING_SPIN_MS;
	while (atomic_load(&m->held) == held && odp_now_ms() < until)
		;
	pthread_mutex_lock(&m->lock);
	while (atomic_load(&m->held) == held)
	{
		struct timespec wake;

		if (odp_cancel_requested(pctx))
		{
			pthread_mutex_unlock(&m->lock);
			return false;
		}
		odp_deadline_after(&wake, 1000000L);
		(void) pthread_cond_timedwait(&m->cond, &m->lock, &wake);
	}
	pthread_mutex_unlock(&m->lock);
	return true;
}
