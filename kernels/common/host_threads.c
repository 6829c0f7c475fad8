/*-------------------------------------------------------------------------
 *
 * host_threads.c
 *	  The engine's host threads: starting and joining them, how many a
 *	  call's host-side work uses, and a parallel loop over independent
 *	  tasks with the caller's thread polling the cancel callback between
 *	  tasks.
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
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "common/engine_internal.h"
#include "common/host_threads.h"

/* Most threads one loop starts. */
#define ODP_TASKS_MAX_THREADS	256

/*
 * Starts nthreads - 1 POSIX threads running fn(arg), every signal blocked
 * in them so that the host program's signal handlers keep running on the
 * caller's thread.  Returns how many started (fewer if the system refuses
 * some: the work then runs on fewer threads).  The caller does its own
 * share of the work, then calls odp_cpu_workers_join.
 */
int
odp_cpu_workers_start(pthread_t *threads, int nthreads, void *(*fn) (void *),
					  void *arg)
{
	sigset_t	all,
				old;
	int			started = 0;

	if (nthreads <= 1)
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int t = 0; t < nthreads - 1; t++)
	{
		if (pthread_create(&threads[t], NULL, fn, arg) != 0)
			break;
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return started;
}

/* Waits for the threads odp_cpu_workers_start started. */
void
odp_cpu_workers_join(pthread_t *threads, int started)
{
	for (int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
}

/* See host_threads.h. */
int
odp_host_threads(const OdpContext *ctx)
{
	int			n = ctx->cpu_threads > 1 ? ctx->cpu_threads : 1;

	if (ctx->device == ODP_DEVICE_GPU)
	{
		long		online = sysconf(_SC_NPROCESSORS_ONLN);
		int			gpu = online > ODP_GPU_HOST_THREADS ? ODP_GPU_HOST_THREADS :
			(online > 1 ? (int) online : 1);

		n = n > gpu ? n : gpu;
	}
	return n;
}

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

/* See host_threads.h. */
OdpStatus
odp_parallel_tasks(OdpContext *ctx, int64_t tasks, OdpTaskFn fn, void *arg)
{
	pthread_t	threads[ODP_TASKS_MAX_THREADS];
	int			nthreads = odp_host_threads(ctx);
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

/* See host_threads.h. */
void
odp_deadline_after(struct timespec *until, long ns)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_nsec += ns;
	if (until->tv_nsec >= 1000000000L)
	{
		until->tv_sec++;
		until->tv_nsec -= 1000000000L;
	}
}
