/*-------------------------------------------------------------------------
 *
 * host_threads.c
 *	  A parallel loop over independent tasks on the CPU path's threads,
 *	  with the caller's thread polling the cancel callback between tasks.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/host_threads.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>

#include "common/engine_internal.h"

/* Most threads one loop starts. */
#define ODP_TASKS_MAX_THREADS	256

typedef struct OdpTaskLoop
{
	OdpTaskFn	fn;
	void	   *arg;
	int64_t		tasks;
	atomic_llong next;
	atomic_int	stop;
} OdpTaskLoop;

/*
 * Takes tasks until none is left or the loop stops; with ctx (the
 * caller's thread only) asks the cancel callback before each task.
 */
static void
odp_task_loop_run(OdpTaskLoop *loop, OdpContext *ctx, bool *cancelled)
{
	for (;;)
	{
		int64_t		t;

		if (atomic_load(&loop->stop))
			return;
		if (ctx != NULL && odp_cancel_requested(ctx))
		{
			atomic_store(&loop->stop, 1);
			*cancelled = true;
			return;
		}
		t = atomic_fetch_add(&loop->next, 1);
		if (t >= loop->tasks)
			return;
		loop->fn(loop->arg, t);
	}
}

static void *
odp_task_loop_thread(void *arg)
{
	bool		unused = false;

	odp_task_loop_run((OdpTaskLoop *) arg, NULL, &unused);
	return NULL;
}

/* See engine_internal.h. */
OdpStatus
odp_parallel_tasks(OdpContext *ctx, int64_t tasks, OdpTaskFn fn, void *arg)
{
	pthread_t	threads[ODP_TASKS_MAX_THREADS];
	int			nthreads = ctx->cpu_threads > 1 ? ctx->cpu_threads : 1;
	OdpTaskLoop loop;
	bool		cancelled = false;
	int			started;

	if (nthreads > ODP_TASKS_MAX_THREADS)
		nthreads = ODP_TASKS_MAX_THREADS;
	if (nthreads > tasks)
		nthreads = tasks > 0 ? (int) tasks : 1;
	loop.fn = fn;
	loop.arg = arg;
	loop.tasks = tasks;
	atomic_init(&loop.next, 0);
	atomic_init(&loop.stop, 0);
	started = odp_cpu_workers_start(threads, nthreads, odp_task_loop_thread, &loop);
	odp_task_loop_run(&loop, ctx, &cancelled);
	odp_cpu_workers_join(threads, started);
	if (cancelled)
		return odp_fail(ctx, ODP_ERR_CANCELLED, "the computation was cancelled");
	return ODP_OK;
}
