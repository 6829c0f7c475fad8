/*-------------------------------------------------------------------------
 *
 * service_shmem.h
 *	  The GPU service's shared state: its state, its devices' budgets and
 *	  the request slots with their rings, in the main shared memory (not
 *	  dynamic shared memory: it is sized once, at server start, and does
 *	  not depend on the size of /dev/shm).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_shmem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_SHMEM_H
#define ODP_SERVICE_SHMEM_H

#include "odp_cost.h"
#include "service/service_slot.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"

typedef enum OdpServiceState
{
	ODP_SERVICE_DOWN = 0,		/* not started, or restarting */
	ODP_SERVICE_STARTING,		/* initialising CUDA */
	ODP_SERVICE_READY,			/* taking requests */
	ODP_SERVICE_STOPPING		/* cancelling its requests, then exiting */
} OdpServiceState;

#define ODP_SERVICE_NAME_LEN 128
#define ODP_SERVICE_WHY_LEN 256
#define ODP_SERVICE_DROPS 64
/* Copies of table cache arrays the engine may hold (service_resident.h). */
#define ODP_SERVICE_RESIDENT 256

typedef struct OdpServiceDevice
{
	int			ordinal;		/* CUDA ordinal (0 for the CPU engine) */
	char		name[ODP_SERVICE_NAME_LEN];
	int			cc_major;		/* compute capability (0: the CPU engine) */
	int			cc_minor;
	int			multiprocessors;
	size_t		total_memory;
	size_t		budget;			/* bytes requests may reserve together */
	size_t		reserved;		/* bytes reserved by running requests */
	size_t		resident;		/* bytes of table cache copies held here */
	int			running;
	int			queued;
	bool		needs_check;	/* a request failed with a CUDA error: admit
								 * nothing until its context is checked */
	bool		checking;		/* the engine process checks it now */
} OdpServiceDevice;

/*
 * A copy the engine holds (or makes) of an array of a table cache entry
 * (service_resident.h).
 */
typedef struct OdpServiceResident
{
	uint64_t	tag;			/* the engine's name for it; 0: a free entry */
	int32_t		cache_slot;		/* the table cache entry it copies */
	uint64_t	cache_generation;
	uint64_t	offset;			/* the array's extent in the staging area */
	uint64_t	bytes;
	int32_t		device;			/* index into devices[] */
	int32_t		uses;			/* arrays of running requests that use it */
	bool		ready;			/* made: else a running request makes it */
	double		last_used_ms;	/* odp_now_ms() */
} OdpServiceResident;

typedef struct OdpServiceShared
{
	LWLock	   *lock;			/* state, devices, slots' state fields */
	ConditionVariable slot_freed;	/* a backend waits here for a slot */
	ConditionVariable state_changed;	/* a backend waits here for READY */
	int			state;			/* OdpServiceState */
	int			pid;
	int			procno;			/* the worker's PGPROC, for its latch */
	uint64_t	generation;		/* bumped at each start */
	bool		cpu_engine;		/* odp_gpu.service_engine = cpu */
	bool		blas_ready;
	OdpKnnCostModel knn_cost;	/* the engine process's, at READY */
	int			driver_version; /* CUDA's, as odp_gpu_probe gives them */
	int			runtime_version;
	char		why[ODP_SERVICE_WHY_LEN];	/* why no device is usable */
	int64_t		started_at;		/* TimestampTz */
	int			ndevices;
	OdpServiceDevice devices[ODP_MAX_GPUS];
	uint64_t	next_ticket;
	int64_t		waiting_for_slot;	/* backends waiting for a free slot */

	/*
	 * Node states backends no longer need, for the service to free: a
	 * backend drops one here without a round trip, also while it handles
	 * an error.  When it is full, a state waits for its session's end.
	 */
	int			ndrops;
	struct
	{
		int			owner;
		int64_t		handle;
	}			drops[ODP_SERVICE_DROPS];
	/* the engine process (service_engine.h), the worker's child */
	int			engine_pid;		/* 0 while there is none */
	int64_t		engine_started_at;	/* TimestampTz */
	int64_t		engine_restarts;	/* starts after the worker's first */
	bool		engine_ready;	/* it runs requests */
	char		engine_last_exit[ODP_SERVICE_WHY_LEN];	/* how the last one ended */

	uint64_t	next_resident_tag;
	OdpServiceResident resident[ODP_SERVICE_RESIDENT];

	int			nslots;
	OdpServiceSlot *slots;		/* in the engine area (every server process
								 * maps it at the same address) */
} OdpServiceShared;

/* NULL unless the library was preloaded. */
extern OdpServiceShared *OdpService;
/* The engine area (service_engine.h); NULL unless preloaded. */
extern struct OdpEngineArea *OdpEngine;
extern int	odp_engine_area_fd;

/* Settings of the service (PGC_POSTMASTER / PGC_SIGHUP). */
extern int	odp_service_slots;
extern int	odp_service_ring_kb;
extern int	odp_service_engine;	/* OdpServiceEngine */
extern int	odp_service_fault_test; /* OdpServiceFault */
extern int	odp_engine_timeout_s;
extern bool odp_service_inputs_in_place;

typedef enum OdpServiceEngine
{
	ODP_SERVICE_ENGINE_GPU,
	ODP_SERVICE_ENGINE_CPU
} OdpServiceEngine;

extern const char *OdpServiceStateName(int state);
extern const char *OdpSlotStateName(int state);

#endif							/* ODP_SERVICE_SHMEM_H */
