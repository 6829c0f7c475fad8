/*-------------------------------------------------------------------------
 *
 * service.h
 *	  The GPU service: with shared_preload_libraries = 'odp_gpu' one
 *	  background worker holds the GPUs (one CUDA context per device,
 *	  cuBLAS loaded once) and runs every session's GPU computations, so a
 *	  backend never initialises CUDA.  Without preloading, each backend
 *	  computes on the GPU itself, as before the service existed.
 *
 * service_shmem.c holds the shared state and the settings that size it,
 * service_worker.c the worker (queue, admission, engine threads),
 * service_thread.c the engine threads, service_client.c a backend's side
 * of a request, service_views.c odp_gpu_activity and the service's part
 * of odp_gpu_info().
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_H
#define ODP_SERVICE_H

#include "datatype/timestamp.h"
#include "engine_call.h"

/* What a request through the service reports besides the call's results. */
typedef struct OdpServiceRunInfo
{
	double		queued_ms;		/* waiting for a slot and for GPU memory */
	int			device;			/* the first device it ran on */
	int64		staged_bytes;	/* inputs the service read in place */
	int64		streamed_bytes; /* inputs that streamed through the ring */
	int64		streamed_to_gpu_bytes;	/* of those, went on to the GPU as they
										 * came (the ring is page-locked) */
	double		stream_ms;		/* streaming inputs in and outputs back */
	bool		retried;		/* a GPU fault failed its first run */
	double		dispatch_ms;	/* admitted until its engine thread began */
	double		reply_ms;		/* the end frame written until read here */
} OdpServiceRunInfo;

/* One device the service holds, as odp_gpu_info() shows it. */
typedef struct OdpServiceDeviceInfo
{
	int			ordinal;		/* CUDA ordinal (0 for the CPU engine) */
	char		name[128];
	int			cc_major;		/* 0: the CPU engine */
	int			cc_minor;
	int			multiprocessors;
	int64		total_memory;	/* 0: the CPU engine */
	int64		budget;			/* bytes requests may reserve together */
	int64		reserved;		/* bytes reserved by running requests */
	int			running;
	int			queued;			/* waiting for memory on this device */
} OdpServiceDeviceInfo;

/* The service's state for odp_gpu_info(), copied at one moment. */
typedef struct OdpServiceInfo
{
	const char *state;			/* OdpServiceStateName */
	bool		ready;
	int			pid;			/* 0 while down */
	TimestampTz started_at;
	bool		cpu_engine;		/* odp_gpu.service_engine = cpu */
	char		why[256];		/* why it has no usable device, or "" */
	int			driver_version; /* 0: unknown (the CPU engine) */
	int			runtime_version;
	int64		waiting_for_slot;	/* backends waiting for a free slot */
	int			engine_pid;		/* the engine process; 0: none now */
	TimestampTz engine_started_at;
	int64		engine_restarts;	/* its starts after the worker's first */
	char		engine_last_exit[256];	/* how the last one ended, or "" */
	int			ndevices;
	OdpServiceDeviceInfo devices[ODP_MAX_GPUS];
} OdpServiceInfo;

/*
 * Copies the service's state into *info (service_views.c); false when
 * the library was not preloaded.  Never touches CUDA.
 */
extern bool OdpServiceGetInfo(OdpServiceInfo *info);

/* Defines the service's settings (_PG_init, preloaded or not). */
extern void OdpServiceDefineSettings(void);

/* Called from _PG_init while preloading: shared memory and the worker. */
extern void OdpServiceRegister(void);

/*
 * Whether the library was preloaded, so that the service, not this
 * backend, owns the GPUs (whatever the service's state).
 */
extern bool OdpServiceConfigured(void);

/*
 * Whether the service can take GPU work: waits while it starts or restarts,
 * up to odp_gpu.service_wait (an error past it; a cancel or
 * statement_timeout ends the wait with theirs).  false, with *why
 * (palloc'd) saying why, only where the service is up and found no usable
 * GPU.
 */
extern bool OdpServiceAwaitReady(char **why);

/* Whether the service loaded cuBLAS (the correlations' GPU path). */
extern bool OdpServiceBlasReady(void);

/*
 * Runs the call in the service on ctx's devices with ctx's settings,
 * streaming its inputs there and its outputs (pairs to call->emit) back.
 * Returns the engine's status with ctx->message and ctx's timings filled
 * as a local run would; ODP_ERR_CANCELLED when ctx's cancel callback or
 * call->emit asked to stop (the request is then abandoned: the service
 * stops it and frees its memory); ODP_ERR_GPU when the service stopped
 * while it ran.  function names the SQL function for the activity view.
 */
extern OdpStatus OdpServiceRun(OdpContext *ctx, OdpCall *call,
							   const char *function, OdpServiceRunInfo *info);

/*
 * Hands a node state the service keeps for this backend back to it, to
 * be freed; raises no error (it may run while an error is handled).
 */
extern void OdpServiceDropObject(int64 handle);

/* The worker's entry point (bgw_function_name). */
extern PGDLLEXPORT void OdpServiceMain(Datum arg);

#endif							/* ODP_SERVICE_H */
