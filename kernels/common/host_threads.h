/*-------------------------------------------------------------------------
 *
 * host_threads.h
 *	  The CPU path's worker threads: start and join them, or run a
 *	  parallel loop of tasks on them (host_threads.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/host_threads.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_HOST_THREADS_H
#define ODP_HOST_THREADS_H

#include <pthread.h>

#include "include/odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Starts nthreads - 1 POSIX threads running fn(arg), every signal blocked
 * in them so that the host program's signal handlers keep running on the
 * caller's thread.  Returns how many started (fewer if the system refuses
 * some: the work then runs on fewer threads).  The caller does its own
 * share of the work, then calls odp_cpu_workers_join.
 */
extern int	odp_cpu_workers_start(pthread_t *threads, int nthreads,
								  void *(*fn) (void *), void *arg);
/* Waits for the threads odp_cpu_workers_start started. */
extern void odp_cpu_workers_join(pthread_t *threads, int started);

/* Most threads host-side work of the GPU path uses (host_threads.c). */
#define ODP_GPU_HOST_THREADS	16

/*
 * The threads host-side work of a call runs on: ctx->cpu_threads on the
 * CPU path; on the GPU path, whose setting does not limit the host, the
 * online CPUs up to ODP_GPU_HOST_THREADS (at least ctx->cpu_threads), so
 * that preparing the device's input stays a small share of the call.
 */
extern int	odp_host_threads(const OdpContext *ctx);

/*
 * Runs fn(arg, task) for task = 0 .. tasks-1 on odp_host_threads(ctx)
 * threads (host_threads.c); the caller's thread polls the cancel callback
 * between its tasks.  Returns ODP_ERR_CANCELLED when asked to stop, else
 * ODP_OK; fn reports its own failures through arg.
 */
typedef void (*OdpTaskFn) (void *arg, int64_t task);
extern OdpStatus odp_parallel_tasks(OdpContext *ctx, int64_t tasks,
									OdpTaskFn fn, void *arg);

/*
 * The CLOCK_REALTIME time ns nanoseconds (under a second) from now: the
 * deadline of a pthread_cond_timedwait that wakes up to poll.
 */
struct timespec;
extern void odp_deadline_after(struct timespec *until, long ns);


#ifdef __cplusplus
}
#endif

#endif							/* ODP_HOST_THREADS_H */
