/*-------------------------------------------------------------------------
 *
 * service_slot.h
 *	  One request to the GPU service as it sits in shared memory, and the
 *	  frames its results come back in.  Plain C, no PostgreSQL: the
 *	  service's engine threads read and write it too.
 *
 * A backend takes a free slot, writes the call (engine_call.h, its
 * pointers meaningful only as "present or not") and its settings into it,
 * submits it and streams the call's input arrays through the slot's
 * inbound ring.  The service queues it, reserves GPU memory for it and
 * starts an engine thread, which reads the inputs, runs the call and
 * streams back through the outbound ring: pair frames while it runs, then
 * an end frame with the status and statistics, then the output arrays.
 * Who does what to the state is said at OdpSlotState.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_slot.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_SLOT_H
#define ODP_SERVICE_SLOT_H

#include "engine_call.h"
#include "service/service_ring.h"

typedef enum OdpSlotState
{
	ODP_SLOT_FREE = 0,			/* a backend may take it (under the lock) */
	ODP_SLOT_FILLING,			/* a backend writes the call */
	ODP_SLOT_SUBMITTED,			/* the service has not seen it yet */
	ODP_SLOT_QUEUED,			/* waiting for GPU memory */
	ODP_SLOT_RUNNING,			/* an engine thread has it */
	ODP_SLOT_DONE				/* the thread ended; the backend may still be
								 * reading what it sent */
} OdpSlotState;

#define ODP_SLOT_FUNCTION_LEN 64

typedef struct OdpServiceSlot
{
	/* written by the backend while FILLING */
	OdpCall		call;
	OdpContext	settings;		/* device list, memory cap, CPU threads */
	int			backend_pid;
	uint32_t	database;
	uint32_t	userid;			/* the session's user, as pg_stat_activity
								 * keeps it: the activity view shows the
								 * request's details to roles with its
								 * privileges and pg_read_all_stats only */
	char		function[ODP_SLOT_FUNCTION_LEN];
	double		submitted_ms;	/* odp_now_ms() */
	int			fault;			/* OdpServiceFault: odp_gpu.service_fault_test */
	bool		alone;			/* a second run after a GPU fault failed the
								 * first: admitted only while nothing else
								 * runs, and nothing with it */

	/*
	 * Input arrays (odp_call_inputs' order) that lie in shared memory:
	 * in the staging area (staged, at shared_offset), or in one of the
	 * backend's dynamic shared memory segments (shared_handle, at
	 * shared_offset in it).  The others stream through the inbound ring.
	 * The worker holds them (mapped[] non-NULL: the worker's addresses)
	 * while the request runs; the engine process maps them itself and
	 * reads them in place.
	 */
	bool		staged[ODP_CALL_MAX_ARRAYS];
	uint32_t	shared_handle[ODP_CALL_MAX_ARRAYS];
	uint64_t	shared_offset[ODP_CALL_MAX_ARRAYS];
	void	   *mapped[ODP_CALL_MAX_ARRAYS];

	/*
	 * Staged inputs that lie in arrays of table cache entries: the entry
	 * (cache_generation 0: none) and the whole array's extent in the
	 * staging area (the call may read a part of it), written by the
	 * backend.  The worker, as it admits the request, names the engine's
	 * copy of the array the call uses (resident_tag, 0: none) on the
	 * device it runs on, or asks the engine to make it first
	 * (resident_make); the engine says whether it did (resident_made).
	 */
	int32_t		cache_slot[ODP_CALL_MAX_ARRAYS];
	uint64_t	cache_generation[ODP_CALL_MAX_ARRAYS];
	uint64_t	cache_offset[ODP_CALL_MAX_ARRAYS];
	uint64_t	cache_bytes[ODP_CALL_MAX_ARRAYS];
	uint64_t	resident_tag[ODP_CALL_MAX_ARRAYS];
	bool		resident_make[ODP_CALL_MAX_ARRAYS];
	_Atomic int resident_made[ODP_CALL_MAX_ARRAYS];

	/* the service's main thread, under the lock */
	int			state;			/* OdpSlotState */
	uint64_t	ticket;			/* order of submission: first come first
								 * served */
	int			ndevices;		/* devices it runs on (reserved on each);
								 * kept once DONE, for the activity view */
	int			devices[ODP_MAX_GPUS];
	size_t		reserved;		/* bytes reserved on each */
	double		started_ms;
	uint64_t	run_generation; /* the service's generation that runs it */
	OdpContext	run;			/* the context the thread runs with */

	/* anyone: atomics */
	_Atomic int cancel;			/* stop (the backend's cancel, its death,
								 * the service stopping) */
	_Atomic int abandoned;		/* the backend is gone: send nothing */
	_Atomic int backend_done;	/* the backend has read everything */
	_Atomic int finished;		/* the engine thread has ended */
	_Atomic int backend_waiting;	/* the backend sleeps on its latch */
	_Atomic int gpu_fault;		/* the call failed with a CUDA error: its
								 * devices' contexts may be poisoned */
	_Atomic int64_t progress_done;	/* engine steps so far (its cancel
									 * polls); the engine tells no total */
	_Atomic int64_t beat_ms;	/* odp_now_ms() when its thread last showed
								 * it moves (the watchdog's clock) */

	/*
	 * Set by the worker before it marks the request finished when the
	 * engine process ended under it: what the backend reports.
	 */
	char		lost[ODP_MESSAGE_LEN];

	OdpRing    *in;				/* backend -> service: input arrays */
	OdpRing    *out;			/* service -> backend: frames */
} OdpServiceSlot;

typedef enum OdpFrameKind
{
	ODP_FRAME_PAIRS = 1,		/* count pairs: a[count], b[count], then
								 * r[count] when the call has coefficients */
	ODP_FRAME_END				/* an OdpServiceResult, then the outputs */
} OdpFrameKind;

typedef struct OdpFrame
{
	int32_t		kind;
	int32_t		with_r;
	int64_t		count;
} OdpFrame;

typedef struct OdpServiceResult
{
	int32_t		status;			/* OdpStatus */
	int32_t		gpu_parts;
	int32_t		fault;			/* a GPU fault failed it: on a driver that
								 * poisons the whole engine process, perhaps
								 * another call's */
	char		message[ODP_MESSAGE_LEN];
	double		transfer_ms;
	double		compute_ms;
	double		queued_ms;		/* submitted until started */
	double		run_ms;			/* started until the end frame */
	int64_t		chunks;
	int64_t		count;
	int32_t		device;			/* the first device it ran on */
	int32_t		spatial_used;	/* OdpContext's outputs of the spatial path */
	int64_t		spatial_distances;
	int32_t		batch_queries;	/* OdpContext's: k-NN queries of its pass */
	double		batch_wait_ms;	/* OdpContext's: its wait for earlier passes */
	double		thread_ms;		/* odp_now_ms() as its engine thread began */
	double		end_ms;			/* and as the thread wrote the end frame */
	int64_t		streamed_to_gpu;	/* bytes of the streamed inputs that went on
									 * to the GPU as they arrived */
	OdpTopOutliersStats outliers;
	OdpSkylineStats skyline;
	OdpIntervalStats intervals;
} OdpServiceResult;

/* What odp_gpu.service_fault_test makes the engine do to a request. */
typedef enum OdpServiceFault
{
	ODP_FAULT_NONE = 0,
	ODP_FAULT_POISON,			/* poison the device's context first */
	ODP_FAULT_HANG,				/* never move again (the watchdog's test) */
	ODP_FAULT_VICTIM			/* fail as another call's GPU fault fails it,
								 * unless run alone (the retry's test) */
} OdpServiceFault;

#endif							/* ODP_SERVICE_SLOT_H */
