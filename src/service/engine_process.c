/*-------------------------------------------------------------------------
 *
 * engine_process.c
 *	  The main of odp_gpu_engine, the GPU service's engine process
 *	  (service_engine.h): it holds CUDA (a context per device, cuBLAS, the
 *	  page-locked staging area) and runs each request the worker sends it
 *	  on a thread of its own (service_thread.c), kept for later requests.
 *
 * The worker starts it with the socket and the two memfds at fixed
 * descriptors and nothing else; it maps those two areas and nothing of
 * the server's.  It lives as long as its worker: the kernel kills it when
 * the worker ends (PR_SET_DEATHSIG), and it exits when the socket closes.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/engine_process.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odp_cost.h"
#include "odp_resident.h"
#include "odp_pearson.h"
#include "service/service_engine.h"
#include "service/service_objects.h"

/* How long a stopping process waits for its threads to cancel. */
#define ENGINE_STOP_WAIT_MS 5000

static OdpEngineArea *area;
static size_t area_bytes;		/* its mapping's size: the slots and rings */
static char *staging;			/* this process's view of the staging area */
static int	sock = ODP_ENGINE_FD_SOCKET;
static _Atomic int running_jobs = 0;

/*
 * Threads that finished a request wait here for the next one: starting a
 * thread per request was the largest part of a small request's time in
 * the service (0.14 ms of 0.45 on a 2-core host) and ran in this
 * process's one main thread, which every request passes through.  A
 * thread counts as idle before its request is marked finished, which
 * lets the worker give the slot to another request: that request finds
 * it, so there are never more threads than slots, and an idle one is
 * never ended.
 */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_moved = PTHREAD_COND_INITIALIZER;
static OdpEngineJob *pool_head = NULL;	/* jobs no thread has taken yet */
static OdpEngineJob *pool_tail = NULL;
static int	pool_idle = 0;		/* threads waiting for a job */
static int	pool_queued = 0;	/* jobs in the queue */

/* Sends a message to the worker; a closed socket ends the process. */
static void
EngineSend(const OdpEngineMsg *msg)
{
	while (send(sock, msg, sizeof(*msg), MSG_NOSIGNAL) < 0)
	{
		if (errno == EINTR)
			continue;
		_exit(0);				/* the worker is gone */
	}
}

/* Maps a memfd whole; NULL where it cannot. */
static void *
EngineMapFd(int fd, size_t *bytes)
{
	struct stat st;
	void	   *p;

	if (fstat(fd, &st) != 0 || st.st_size <= 0)
		return NULL;
	p = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	*bytes = (size_t) st.st_size;
	return p;
}

/* Adds to what the worker logs for this start: fmt with one string. */
static void
EngineNote(const char *fmt, const char *what)
{
	size_t		len = strlen(area->notes);

	snprintf(area->notes + len, sizeof(area->notes) - len, fmt, what);
}

/* A ring of a slot at this process's address (the slot has the server's). */
static OdpRing *
EngineRing(OdpRing *server_address)
{
	return (OdpRing *) ((char *) area + ((uintptr_t) server_address - area->pg_base));
}

/*
 * Times the k-NN paths for odp_gpu.device = auto's cost model
 * (odp_cost.h): the CPU's, and the first device's where on_gpu (from the
 * page-locked staging area's speed); the CPU engine stands in for a GPU
 * in every other respect, so auto weighs it with the built-in GPU terms.
 * A process that follows one that timed them on the same device (the
 * area outlives it) keeps them: a restart after a fault waits no longer.
 */
static void
EngineTimeKnnPaths(bool on_gpu)
{
	OdpContext	ctx;
	int32_t		ordinal = on_gpu ? area->devices[0].ordinal : -1;

	if (area->knn_cost.source == (on_gpu ? ODP_COST_CALIBRATED : ODP_COST_CALIBRATED_CPU) &&
		area->knn_cost_ordinal == ordinal)
		return;
	area->knn_cost_ordinal = ordinal;
	memset(&ctx, 0, sizeof(ctx));
	ctx.device = on_gpu ? ODP_DEVICE_GPU : ODP_DEVICE_CPU;
	ctx.gpu_id = area->devices[0].ordinal;
	if (odp_knn_cost_calibrate(&ctx, &area->knn_cost,
							   area->staging_locked ? staging : NULL,
							   area->staging_locked ? area->staging_bytes : 0) != ODP_OK)
		EngineNote("the k-NN paths could not be timed, auto weighs them with built-in terms: %s; ",
				   ctx.message);
}

/*
 * Opens the devices the worker asked for (every one of the host by
 * default): a context on each, cuBLAS, the staging area page-locked.
 * With no usable GPU the process holds no device and says why.
 */
static void
EngineInitDevices(void)
{
	OdpContext	ctx;
	int			count = 0,
				driver = 0,
				runtime = 0;
	int			n = 0;
	int			listed = area->nwanted;
	int			ids[ODP_MAX_GPUS];

	area->why[0] = '\0';
	area->notes[0] = '\0';
	area->driver_version = area->runtime_version = 0;
	area->staging_locked = false;
	if (area->cpu_engine)
	{
		memset(&area->devices[0], 0, sizeof(area->devices[0]));
		snprintf(area->devices[0].name, sizeof(area->devices[0].name),
				 "CPU engine (odp_gpu.service_engine = cpu)");
		area->ndevices = 1;
		area->blas_ready = true;
		EngineTimeKnnPaths(false);
		return;
	}
	memset(&ctx, 0, sizeof(ctx));
	if (odp_gpu_probe(&ctx, &count, &driver, &runtime) != ODP_OK)
	{
		snprintf(area->why, sizeof(area->why), "%s",
				 ctx.message[0] ? ctx.message : "no usable GPU");
		area->ndevices = 0;
		return;
	}
	area->driver_version = driver;
	area->runtime_version = runtime;
	if (listed < 0)
	{
		listed = count < ODP_MAX_GPUS ? count : ODP_MAX_GPUS;
		for (int i = 0; i < listed; i++)
			ids[i] = i;
	}
	else
		memcpy(ids, area->wanted, sizeof(int) * listed);
	for (int i = 0; i < listed; i++)
	{
		OdpGpuInfo	info;
		bool		seen = false;
		OdpEngineDevice *dev = &area->devices[n];

		for (int j = 0; j < n; j++)
			seen |= area->devices[j].ordinal == ids[i];
		if (seen)
			continue;
		memset(&ctx, 0, sizeof(ctx));
		if (ids[i] >= count || odp_gpu_device_info(&ctx, ids[i], &info) != ODP_OK)
		{
			char		what[ODP_MESSAGE_LEN + 32];

			snprintf(what, sizeof(what), "%d: %s", ids[i],
					 ctx.message[0] ? ctx.message : "no such device");
			EngineNote("device %s is not usable; ", what);
			continue;
		}
		memset(dev, 0, sizeof(*dev));
		dev->ordinal = ids[i];
		snprintf(dev->name, sizeof(dev->name), "%s", info.name);
		dev->cc_major = info.cc_major;
		dev->cc_minor = info.cc_minor;
		dev->multiprocessors = info.multiprocessors;
		dev->total_memory = info.total_memory;
		dev->free_memory = info.free_memory;
		n++;
	}
	area->ndevices = n;
	if (n == 0)
	{
		snprintf(area->why, sizeof(area->why),
				 "none of the devices of odp_gpu.devices is usable");
		return;
	}
	if (staging != NULL)
	{
		double		t0 = odp_now_ms();

		/*
		 * Once for the process's life: every input written there then
		 * copies at the bus's speed, and no call locks its pages again.
		 */
		memset(&ctx, 0, sizeof(ctx));
		area->staging_locked =
			odp_gpu_host_area(&ctx, staging, area->staging_bytes, true) == ODP_OK;
		area->staging_lock_ms = odp_now_ms() - t0;
		if (!area->staging_locked)
			EngineNote("inputs copy to the GPU from pageable memory: %s; ", ctx.message);
	}
	/*
	 * The rings too: an input that found no room in the staging area goes
	 * on to the devices from the ring, piece by piece, as it arrives.
	 */
	memset(&ctx, 0, sizeof(ctx));
	if (odp_gpu_host_rings(&ctx, area, area_bytes) != ODP_OK)
		EngineNote("inputs that stream copy to the GPU once they have arrived: %s; ",
				   ctx.message);
	memset(&ctx, 0, sizeof(ctx));
	ctx.gpu_id = area->devices[0].ordinal;
	area->blas_ready = odp_gpu_pearson_available(&ctx) == ODP_OK;
	if (!area->blas_ready)
		EngineNote("cuBLAS is not usable, correlations compute on the CPU: %s; ",
				   ctx.message);
	EngineTimeKnnPaths(true);
}

/* Whether a backend's process is gone. */
static bool
EnginePidDead(int pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

/* A job's end: its segments unmapped, the worker told. */
static void
EngineJobDone(OdpEngineJob *job)
{
	OdpEngineMsg msg;

	for (int i = 0; i < ODP_CALL_MAX_ARRAYS; i++)
		if (job->maps[i] != NULL)
			munmap(job->maps[i], job->map_bytes[i]);
	memset(&msg, 0, sizeof(msg));
	msg.kind = ODP_ENGINE_DONE;
	msg.slot = job->index;
	free(job);
	atomic_fetch_sub(&running_jobs, 1);
	EngineSend(&msg);
}

/*
 * Maps a backend's dynamic shared memory segment by its name (POSIX
 * segments: the worker sends others through the rings) into job->maps[a],
 * unless an earlier array of the job mapped it already; its address, or
 * NULL.
 */
static char *
EngineMapSegment(OdpEngineJob *job, int a)
{
	const OdpServiceSlot *slot = job->slot;
	char		name[64];
	int			fd;
	size_t		bytes = 0;

	for (int b = 0; b < a; b++)
		if (job->maps[b] != NULL && slot->shared_handle[b] == slot->shared_handle[a])
			return job->maps[b];
	/* PostgreSQL's name for the segment (dsm_impl_posix) */
	snprintf(name, sizeof(name), "/PostgreSQL.%u", (unsigned) slot->shared_handle[a]);
	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0)
		return NULL;
	job->maps[a] = EngineMapFd(fd, &bytes);
	close(fd);
	job->map_bytes[a] = bytes;
	return job->maps[a];
}

/* A pool thread's job->idle: it takes the next job once done with this. */
static void
EnginePoolIdle(OdpEngineJob *job)
{
	(void) job;
	pthread_mutex_lock(&pool_lock);
	pool_idle++;
	pthread_mutex_unlock(&pool_lock);
}

/* A thread's body: its first job, then whatever jobs come while idle. */
static void *
EnginePoolThread(void *arg)
{
	OdpEngineJob *job = (OdpEngineJob *) arg;

	for (;;)
	{
		/* counted idle by EnginePoolIdle, before its end */
		(void) odp_service_thread_main(job);
		pthread_mutex_lock(&pool_lock);
		while (pool_head == NULL)
			pthread_cond_wait(&pool_moved, &pool_lock);
		pool_idle--;
		job = pool_head;
		pool_head = job->next;
		if (pool_head == NULL)
			pool_tail = NULL;
		pool_queued--;
		pthread_mutex_unlock(&pool_lock);
		job->next = NULL;
	}
	return NULL;
}

/* Hands job to an idle thread; false when every thread is busy. */
static bool
EnginePoolTake(OdpEngineJob *job)
{
	bool		taken = false;

	pthread_mutex_lock(&pool_lock);
	if (pool_idle > pool_queued)
	{
		job->next = NULL;
		if (pool_tail != NULL)
			pool_tail->next = job;
		else
			pool_head = job;
		pool_tail = job;
		pool_queued++;
		pthread_cond_signal(&pool_moved);
		taken = true;
	}
	pthread_mutex_unlock(&pool_lock);
	return taken;
}

/*
 * Starts slot i's request on an idle engine thread, or on a new one with
 * every signal blocked in it; a request that cannot start ends at once
 * with an error.
 */
static void
EngineRun(int i)
{
	OdpServiceSlot *slot = &area->slots[i];
	OdpEngineJob *job = calloc(1, sizeof(OdpEngineJob));
	OdpCallArray arrays[ODP_CALL_MAX_ARRAYS];
	int			n = odp_call_inputs(&slot->call, arrays);
	pthread_t	thread;
	pthread_attr_t attr;
	sigset_t	all,
				old;
	int			rc;

	if (job == NULL)
	{
		snprintf(slot->run.message, sizeof(slot->run.message),
				 "the odp_gpu engine process is out of memory");
		atomic_store(&slot->finished, 1);
		return;
	}
	job->slot = slot;
	job->index = i;
	job->in = EngineRing(slot->in);
	job->out = EngineRing(slot->out);
	job->done = EngineJobDone;
	job->idle = EnginePoolIdle;
	job->staging = staging;
	for (int a = 0; a < n && slot->run.message[0] == '\0'; a++)
	{
		char	   *base = NULL;

		if (slot->staged[a])
			base = staging;
		else if (slot->shared_handle[a] != 0)
			base = EngineMapSegment(job, a);
		else
			continue;
		if (base == NULL)
			snprintf(slot->run.message, sizeof(slot->run.message),
					 "the odp_gpu engine process could not map the call's inputs: %s",
					 strerror(errno));
		else
			job->inputs[a] = base + slot->shared_offset[a];
	}
	atomic_fetch_add(&running_jobs, 1);
	if (EnginePoolTake(job))
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, EnginePoolThread, job);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
	{
		snprintf(slot->run.message, sizeof(slot->run.message),
				 "the odp_gpu engine process could not start a thread: %s", strerror(rc));
		atomic_store(&slot->cancel, 1);
		atomic_store(&slot->abandoned, 1);
		atomic_store(&slot->finished, 1);
		EngineJobDone(job);
	}
}

/* Cancels every request and waits (bounded) for their threads. */
static void
EngineStop(void)
{
	double		t0 = odp_now_ms();

	atomic_store(&odp_service_stopping, 1);
	for (int i = 0; i < area->nslots; i++)
	{
		odp_ring_wake(EngineRing(area->slots[i].in));
		odp_ring_wake(EngineRing(area->slots[i].out));
	}
	while (atomic_load(&running_jobs) > 0 && odp_now_ms() - t0 < ENGINE_STOP_WAIT_MS)
		usleep(1000);
	_exit(0);
}

/* Handles one message of the worker. */
static void
EngineHandle(const OdpEngineMsg *msg)
{
	OdpEngineMsg reply;
	OdpContext	ctx;
	bool		rebuilt = false;

	switch ((OdpEngineMsgKind) msg->kind)
	{
		case ODP_ENGINE_RUN:
			if (msg->slot >= 0 && msg->slot < area->nslots)
				EngineRun(msg->slot);
			break;
		case ODP_ENGINE_DROP:
			odp_service_object_drop(msg->owner, msg->handle);
			break;
		case ODP_ENGINE_RECOVER:
			memset(&ctx, 0, sizeof(ctx));
			memset(&reply, 0, sizeof(reply));
			reply.kind = ODP_ENGINE_RECOVERED;
			reply.ordinal = msg->ordinal;
			reply.status = odp_gpu_device_recover(&ctx, msg->ordinal, &rebuilt);
			/* a new context, or none: the old one's memory is gone */
			if (rebuilt || reply.status != ODP_OK)
				odp_resident_forget_device(msg->ordinal);
			reply.rebuilt = rebuilt;
			memcpy(reply.message, ctx.message, sizeof(reply.message));
			EngineSend(&reply);
			break;
		case ODP_ENGINE_STOP:
			EngineStop();
			break;
		case ODP_ENGINE_EVICT:
			odp_resident_drop((uint64_t) msg->handle);
			break;
		default:
			break;
	}
}

int
main(int argc, char **argv)
{
	size_t		bytes = 0;
	OdpEngineMsg msg;
	double		last_reap = 0.0;

	(void) argc;
	prctl(PR_SET_NAME, ODP_ENGINE_TITLE);
	/* started by anything but its worker: nothing to serve */
	area = EngineMapFd(ODP_ENGINE_FD_AREA, &bytes);
	area_bytes = bytes;
	if (area == NULL || bytes < sizeof(OdpEngineArea) || argv[0] == NULL)
	{
		fprintf(stderr, "%s: run by the odp_gpu service only\n", ODP_ENGINE_PROGRAM);
		return 2;
	}
	if (area->layout != ODP_ENGINE_LAYOUT)
	{
		fprintf(stderr, "%s: built for another version of odp_gpu than the server runs "
				"(layout %u, the server's %u): install one build and restart the server\n",
				ODP_ENGINE_PROGRAM, (unsigned) ODP_ENGINE_LAYOUT, (unsigned) area->layout);
		return ODP_ENGINE_EXIT_LAYOUT;
	}
	if (area->staging_bytes > 0)
		staging = EngineMapFd(ODP_ENGINE_FD_STAGING, &bytes);
	close(ODP_ENGINE_FD_AREA);
	close(ODP_ENGINE_FD_STAGING);

	/*
	 * Every request's inputs and the engine's host buffers are allocated
	 * and freed by a fresh thread.  By default glibc gives each thread an
	 * arena of its own and maps every large block anew, so each call paid
	 * its page faults again: a 54 MB correlation took twice as long as in
	 * a backend (measured on the H100 host).  One arena, no mapping per
	 * block and freed memory kept up to 1 GB keep the buffers warm.
	 */
	(void) mallopt(M_ARENA_MAX, 1);
	(void) mallopt(M_MMAP_MAX, 0);
	(void) mallopt(M_TRIM_THRESHOLD, 1 << 30);
	signal(SIGPIPE, SIG_IGN);
	/* the worker may be gone already: then its death signal came before */
	if (getppid() == 1)
		return 0;

	atomic_store(&area->beat_ms, (int64_t) odp_now_ms());
	EngineInitDevices();
	memset(&msg, 0, sizeof(msg));
	msg.kind = ODP_ENGINE_READY;
	EngineSend(&msg);

	for (;;)
	{
		struct pollfd pfd = {.fd = sock,.events = POLLIN};
		int			rc = poll(&pfd, 1, ODP_ENGINE_BEAT_MS);
		double		now = odp_now_ms();

		atomic_store(&area->beat_ms, (int64_t) now);
		if (now - last_reap >= 1000.0)
		{
			/* node states of sessions that ended */
			last_reap = now;
			(void) odp_service_objects_reap(EnginePidDead);
		}
		if (rc < 0 && errno != EINTR)
			_exit(1);
		if (rc <= 0)
			continue;
		rc = (int) recv(sock, &msg, sizeof(msg), 0);
		if (rc == 0 || (rc < 0 && errno != EINTR && errno != EAGAIN))
			_exit(0);			/* the worker closed its end: it is gone */
		if (rc == (int) sizeof(msg))
			EngineHandle(&msg);
	}
}
