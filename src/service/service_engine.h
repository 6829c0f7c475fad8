/*-------------------------------------------------------------------------
 *
 * service_engine.h
 *	  The GPU service's engine process ("odp_gpu engine"): a program of
 *	  its own, started and watched by the service's background worker,
 *	  that holds CUDA and runs the requests.  What the two share: the
 *	  engine area (the slots and their rings, in a memfd the postmaster
 *	  made) and the messages on their socket.
 *
 * Plain C, no PostgreSQL: the engine process includes it.
 *
 * Why a process of its own: a signal that kills a process PostgreSQL
 * started (a driver fault, a bug in host code) makes the postmaster end
 * every session and reinitialise the server.  The engine process is the
 * worker's child, not the postmaster's, and maps nothing of the server's
 * main shared memory: when it dies, the worker fails the requests it was
 * running and starts another, and no other session notices.
 *
 * The worker runs the queue, the budgets and the admission as before,
 * under the service's lock in the main shared memory; the engine process
 * never takes that lock.  It reads a slot only after the worker sent it
 * RUN, and from then on touches only the slot's call, its rings and its
 * atomics, as the engine threads did inside the worker.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_engine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_ENGINE_H
#define ODP_SERVICE_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "odp_cost.h"
#include "service/service_slot.h"

/* The program's file name in the server's package library directory. */
#define ODP_ENGINE_PROGRAM "odp_gpu_engine"
/* Its process title (and thread name: at most 15 bytes). */
#define ODP_ENGINE_TITLE "odp_gpu engine"

/* The descriptors the engine process starts with. */
#define ODP_ENGINE_FD_SOCKET	3	/* its end of the worker's socket pair */
#define ODP_ENGINE_FD_AREA		4	/* the engine area's memfd */
#define ODP_ENGINE_FD_STAGING	5	/* the staging area's memfd, if any */

#define ODP_ENGINE_NAME_LEN 128
#define ODP_ENGINE_WHY_LEN 256

/* One device as the engine process found it at its start. */
typedef struct OdpEngineDevice
{
	int			ordinal;
	char		name[ODP_ENGINE_NAME_LEN];
	int			cc_major;
	int			cc_minor;
	int			multiprocessors;
	uint64_t	total_memory;
	uint64_t	free_memory;	/* once its context existed */
} OdpEngineDevice;

/*
 * The head of the engine area; the slots follow it, then two rings per
 * slot.  Pointers in the slots (in, out) are the server's addresses: the
 * engine process maps the area elsewhere and moves them by the
 * difference from pg_base (and staging offsets from its own mapping).
 */
typedef struct OdpEngineArea
{
	uint32_t	layout;			/* ODP_ENGINE_LAYOUT of the library */
	uint64_t	pg_base;		/* the area's address in the server */
	uint64_t	bytes;			/* the whole area */
	uint64_t	staging_bytes;	/* 0: no staging area */
	int32_t		nslots;

	/* the worker, before each start: what to hold */
	bool		cpu_engine;		/* odp_gpu.service_engine = cpu */
	int32_t		nwanted;		/* -1: every device of the host */
	int32_t		wanted[ODP_MAX_GPUS];

	/* the engine process, before READY: what it holds */
	int32_t		ndevices;
	OdpEngineDevice devices[ODP_MAX_GPUS];
	int32_t		driver_version;
	int32_t		runtime_version;
	bool		blas_ready;
	OdpKnnCostModel knn_cost;	/* the k-NN paths timed at a start */
	int32_t		knn_cost_ordinal;	/* on this device (-1: the CPU engine) */
	bool		staging_locked;
	double		staging_lock_ms;
	char		why[ODP_ENGINE_WHY_LEN];	/* why no device is usable */
	char		notes[ODP_MESSAGE_LEN];	/* what the start logged */

	/* the engine process's main loop, every ODP_ENGINE_BEAT_MS */
	_Atomic int64_t beat_ms;

	OdpServiceSlot slots[];
} OdpEngineArea;

/*
 * The layout both sides must share: a program left from another build
 * (installed, but the server not restarted) refuses to run on it.
 */
#define ODP_ENGINE_LAYOUT \
	((uint32_t) (sizeof(OdpEngineArea) * 131u + sizeof(OdpServiceSlot) * 31u + \
				 sizeof(OdpEngineMsg) * 7u + sizeof(OdpCall) + \
				 sizeof(OdpServiceResult) * 3u))

/* The program's exit code when its layout is not the library's. */
#define ODP_ENGINE_EXIT_LAYOUT 3

/* How often the engine process's main loop shows it is alive. */
#define ODP_ENGINE_BEAT_MS 100

typedef enum OdpEngineMsgKind
{
	ODP_ENGINE_READY = 1,		/* engine: devices found (in the area) */
	ODP_ENGINE_RUN,				/* worker: run slot (admitted, mapped) */
	ODP_ENGINE_DONE,			/* engine: slot's thread ended */
	ODP_ENGINE_DROP,			/* worker: free owner's node state handle */
	ODP_ENGINE_RECOVER,			/* worker: check device ordinal */
	ODP_ENGINE_RECOVERED,		/* engine: status, rebuilt, message */
	ODP_ENGINE_STOP,			/* worker: cancel everything and exit */
	ODP_ENGINE_EVICT			/* worker: free the table cache copy handle */
} OdpEngineMsgKind;

/* One message on the socket (SOCK_SEQPACKET: whole or nothing). */
typedef struct OdpEngineMsg
{
	int32_t		kind;			/* OdpEngineMsgKind */
	int32_t		slot;
	int32_t		ordinal;
	int32_t		status;			/* OdpStatus */
	int32_t		rebuilt;
	int32_t		owner;
	int64_t		handle;
	char		message[ODP_MESSAGE_LEN];
} OdpEngineMsg;

/*
 * One request the engine process runs, on a thread of its pool
 * (service_thread.c; one thread a request at a time): the slot with its
 * rings and in-place inputs at this process's addresses.
 */
typedef struct OdpEngineJob
{
	OdpServiceSlot *slot;
	int			index;			/* the slot's index */
	OdpRing    *in;
	OdpRing    *out;
	void	   *inputs[ODP_CALL_MAX_ARRAYS];	/* in place, else NULL */
	char	   *staging;		/* this process's view of the staging area */
	void	   *maps[ODP_CALL_MAX_ARRAYS];	/* segments mapped for it */
	size_t		map_bytes[ODP_CALL_MAX_ARRAYS];
	void		(*idle) (struct OdpEngineJob *job); /* called before the slot
													 * is marked finished */
	void		(*done) (struct OdpEngineJob *job); /* called last */
	struct OdpEngineJob *next;	/* in the queue for an idle thread */
} OdpEngineJob;

/*
 * The thread's body: runs the job's call on the context the worker set
 * (slot->run: devices, budget, path), streams its inputs and outputs,
 * calls job->idle, marks the slot finished, wakes the backend, then calls
 * job->done.
 */
extern void *odp_service_thread_main(void *job);

/* Whether the engine process is stopping: every thread cancels. */
extern _Atomic int odp_service_stopping;

#endif							/* ODP_SERVICE_ENGINE_H */
