/*-------------------------------------------------------------------------
 *
 * service_client.c
 *	  A backend's side of a request to the GPU service: takes a slot,
 *	  streams the call's inputs, hands the pairs it streams back to the
 *	  call's callback, and reads its outputs.
 *
 * The backend sleeps on its latch with a short timeout, so that it sees
 * its own cancel, its death and the service's restart within 100 ms
 * whatever the service does.  On a cancel, an error (the pair callback
 * may raise one) or the service stopping, it abandons the request: the
 * service stops its engine thread at its next poll and frees its memory;
 * the backend never waits for that.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_client.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "service/service.h"
#include "service/service_shmem.h"
#include "settings.h"
#include "shared_buffers.h"
#include "storage/dsm_impl.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/timestamp.h"
#include "utils/memutils.h"

#define CLIENT_TICK_MS 100
/* How often a call waiting for the service looks again, at most. */
#define SERVICE_AWAIT_POLL_MS 100
/* How long a backend polls a ring before it sleeps (odp_ring_poll). */
#define CLIENT_POLL_US 100

/* Why an exchange with the service stopped early. */
typedef enum ClientStop
{
	CLIENT_OK = 0,
	CLIENT_CANCELLED,			/* the cancel callback or the pair callback */
	CLIENT_GONE					/* the service stopped or restarted */
} ClientStop;

static void ClientWakeService(void);

typedef struct ClientState
{
	OdpServiceSlot *slot;
	OdpContext *ctx;
	int64		pair_frames;	/* pair frames handed to the call's callback */
} ClientState;

/* See service.h. */
bool
OdpServiceAwaitReady(char **why)
{
	const TimestampTz start = GetCurrentTimestamp();
	int			state;
	bool		ready = false;

	if (OdpService == NULL)
	{
		*why = pstrdup("odp_gpu is not in shared_preload_libraries");
		return false;
	}
	for (;;)
	{
		LWLockAcquire(OdpService->lock, LW_SHARED);
		state = OdpService->state;
		if (state == ODP_SERVICE_READY)
		{
			ready = OdpService->ndevices > 0;
			if (!ready)
				*why = psprintf("the odp_gpu service has no usable GPU: %s", OdpService->why);
		}
		LWLockRelease(OdpService->lock);
		if (state == ODP_SERVICE_READY)
			break;
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), odp_service_wait_ms))
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_CANNOT_CONNECT_NOW),
					 errmsg("the odp_gpu service is %s after %d ms of waiting for it",
							OdpServiceStateName(state), odp_service_wait_ms),
					 errhint("odp_gpu.service_wait bounds the wait; odp_gpu_info() and the "
							 "server log show the service's state; odp_gpu.device = cpu "
							 "computes in this backend.")));
		}
		/* statement_timeout and a cancel end the sleep with an error */
		(void) ConditionVariableTimedSleep(&OdpService->state_changed,
										   SERVICE_AWAIT_POLL_MS, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	return ready;
}

/* See service.h. */
bool
OdpServiceBlasReady(void)
{
	return OdpService != NULL && OdpService->blas_ready;
}

/* See service.h. */
void
OdpServiceDropObject(int64 handle)
{
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	if (OdpService->ndrops < ODP_SERVICE_DROPS)
	{
		OdpService->drops[OdpService->ndrops].owner = MyProcPid;
		OdpService->drops[OdpService->ndrops].handle = handle;
		OdpService->ndrops++;
	}
	LWLockRelease(OdpService->lock);
	ClientWakeService();
}

/*
 * Whether the request can still be answered: it is queued (a restarted
 * service takes it over), or the service that started it still runs.
 */
static bool
ClientServiceAlive(const ClientState *cs)
{
	int			state = cs->slot->state;

	if (state == ODP_SLOT_SUBMITTED || state == ODP_SLOT_QUEUED)
		return true;
	return OdpService->generation == cs->slot->run_generation && OdpService->pid != 0;
}

/* Sets the service's latch. */
static void
ClientWakeService(void)
{
	int			procno = OdpService->procno;

	if (OdpService->pid != 0)
		SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

/* Gives the request up; the service frees it. */
static void
ClientAbandon(ClientState *cs)
{
	atomic_store(&cs->slot->cancel, 1);
	atomic_store(&cs->slot->abandoned, 1);
	odp_ring_wake(cs->slot->in);
	odp_ring_wake(cs->slot->out);
	ClientWakeService();
}

/*
 * Sleeps until the engine thread moves or CLIENT_TICK_MS passes; then
 * says whether to go on.
 */
static ClientStop
ClientSleep(ClientState *cs)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 CLIENT_TICK_MS, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	atomic_store(&cs->slot->backend_waiting, 0);
	if (cs->ctx->cancel != NULL && cs->ctx->cancel(cs->ctx->cancel_arg))
		return CLIENT_CANCELLED;
	if (!ClientServiceAlive(cs))
		return CLIENT_GONE;
	return CLIENT_OK;
}

/* Copies up to bytes into (put) or out of ring, without waiting. */
static size_t
ClientRingMove(OdpRing *ring, char *p, size_t bytes, bool put)
{
	return put ? odp_ring_put(ring, p, bytes) : odp_ring_get(ring, p, bytes);
}

/*
 * Streams bytes into the inbound ring (put) or out of the outbound one:
 * polls briefly, then sleeps on the latch, saying so in backend_waiting
 * (set before the last try, so that the thread's wake-up is not lost).
 */
static ClientStop
ClientMove(ClientState *cs, void *buf, size_t bytes, bool put)
{
	OdpServiceSlot *slot = cs->slot;
	OdpRing    *ring = put ? slot->in : slot->out;
	char	   *p = buf;

	while (bytes > 0)
	{
		size_t		n = ClientRingMove(ring, p, bytes, put);
		ClientStop	stop;

		if (n == 0 && odp_ring_poll(ring, put, 1, CLIENT_POLL_US))
			n = ClientRingMove(ring, p, bytes, put);
		if (n == 0)
		{
			atomic_store(&slot->backend_waiting, 1);
			n = ClientRingMove(ring, p, bytes, put);
		}
		if (n > 0)
		{
			atomic_store(&slot->backend_waiting, 0);
			odp_ring_wake(ring);
			p += n;
			bytes -= n;
			continue;
		}

		/*
		 * A finished thread reads nothing more; what it wrote before it
		 * finished is visible by now.
		 */
		if (atomic_load(&slot->finished) && (put || odp_ring_ready(ring) == 0))
			return CLIENT_GONE;
		if ((stop = ClientSleep(cs)) != CLIENT_OK)
			return stop;
	}
	return CLIENT_OK;
}

static ClientStop
ClientWrite(ClientState *cs, const void *src, size_t bytes)
{
	return ClientMove(cs, (void *) src, bytes, true);
}

static ClientStop
ClientRead(ClientState *cs, void *dst, size_t bytes)
{
	return ClientMove(cs, dst, bytes, false);
}

/* Takes a free slot, waiting for one; false when the service is not ready. */
static bool
ClientTakeSlot(ClientState *cs)
{
	bool		waiting = false;
	bool		ready = true;

	ConditionVariablePrepareToSleep(&OdpService->slot_freed);
	PG_TRY();
	{
		for (;;)
		{
			LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
			if (waiting)
				OdpService->waiting_for_slot--;
			waiting = false;
			if (OdpService->state != ODP_SERVICE_READY)
			{
				LWLockRelease(OdpService->lock);
				ready = false;
				break;
			}
			for (int i = 0; i < OdpService->nslots && cs->slot == NULL; i++)
			{
				if (OdpService->slots[i].state != ODP_SLOT_FREE)
					continue;
				cs->slot = &OdpService->slots[i];
				cs->slot->state = ODP_SLOT_FILLING;
				cs->slot->backend_pid = MyProcPid;
			}
			if (cs->slot == NULL)
			{
				OdpService->waiting_for_slot++;
				waiting = true;
			}
			LWLockRelease(OdpService->lock);
			if (cs->slot != NULL)
				break;
			ConditionVariableTimedSleep(&OdpService->slot_freed, CLIENT_TICK_MS,
										PG_WAIT_EXTENSION);
		}
	}
	PG_FINALLY();
	{
		ConditionVariableCancelSleep();
		if (waiting)
		{
			LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
			OdpService->waiting_for_slot--;
			LWLockRelease(OdpService->lock);
		}
	}
	PG_END_TRY();
	return ready;
}

/*
 * Whether the engine process can map a dynamic shared memory segment of
 * this backend by its name: a POSIX segment of its own (dsm_impl_posix),
 * not a piece of the main shared memory's region (min_dynamic_shared_memory,
 * whose handles are odd, as dsm.c makes them), which it never maps.  The
 * others stream through the rings.
 */
static bool
ClientSegmentMappable(uint32 handle)
{
	return dynamic_shared_memory_type == DSM_IMPL_POSIX && (handle & 1) == 0;
}

/* Fills the slot and hands it to the service. */
static void
ClientSubmit(ClientState *cs, OdpCall *call, const char *function, bool alone)
{
	OdpServiceSlot *slot = cs->slot;

	slot->call = *call;
	slot->settings = *cs->ctx;
	slot->settings.cancel = NULL;
	slot->settings.cancel_arg = NULL;
	slot->database = MyDatabaseId;
	slot->userid = GetSessionUserId();
	strlcpy(slot->function, function, sizeof(slot->function));
	slot->submitted_ms = odp_now_ms();
	slot->fault = odp_service_fault_test;
	slot->alone = alone;
	slot->lost[0] = '\0';
	{
		OdpCallArray arrays[ODP_CALL_MAX_ARRAYS];
		int			n = odp_call_inputs(call, arrays);

		for (int i = 0; i < ODP_CALL_MAX_ARRAYS; i++)
		{
			OdpSharedLocation loc = {0};

			/* a node state keeps its rows: they stream to the service's own */
			if (i >= n || call->op == ODP_CALL_NODE_CREATE ||
				!OdpSharedBufferFind(*arrays[i].ptr, arrays[i].bytes, &loc) ||
				(!loc.staged && !ClientSegmentMappable(loc.handle)))
				memset(&loc, 0, sizeof(loc));
			slot->staged[i] = loc.staged;
			slot->shared_handle[i] = loc.handle;
			slot->shared_offset[i] = loc.offset;
			slot->mapped[i] = NULL;
			/* the entry stays pinned until the call's arrays go */
			slot->cache_slot[i] = loc.cached ? loc.entry.slot : -1;
			slot->cache_generation[i] = loc.cached ? loc.entry.generation : 0;
			slot->cache_offset[i] = loc.cached ? loc.array_offset : 0;
			slot->cache_bytes[i] = loc.cached ? loc.array_bytes : 0;
		}
	}
	slot->ndevices = 0;
	slot->reserved = 0;
	atomic_store(&slot->cancel, 0);
	atomic_store(&slot->abandoned, 0);
	atomic_store(&slot->backend_done, 0);
	atomic_store(&slot->finished, 0);
	atomic_store(&slot->backend_waiting, 0);
	atomic_store(&slot->progress_done, 0);
	atomic_store(&slot->beat_ms, (int64_t) odp_now_ms());
	odp_ring_init(slot->in, slot->in->size);
	odp_ring_init(slot->out, slot->out->size);

	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	slot->ticket = OdpService->next_ticket++;
	slot->state = ODP_SLOT_SUBMITTED;
	LWLockRelease(OdpService->lock);
	ClientWakeService();
}

/* Reads one pair frame and hands its pairs to the call's callback. */
static ClientStop
ClientPairs(ClientState *cs, OdpCall *call, const OdpFrame *frame,
			MemoryContext cxt)
{
	Size		n = (Size) frame->count;
	int64	   *a = MemoryContextAllocHuge(cxt, Max(n, 1) * sizeof(int64));
	int64	   *b = MemoryContextAllocHuge(cxt, Max(n, 1) * sizeof(int64));
	double	   *r = frame->with_r ? MemoryContextAllocHuge(cxt, Max(n, 1) * sizeof(double)) : NULL;
	ClientStop	stop;

	if ((stop = ClientRead(cs, a, n * sizeof(int64))) != CLIENT_OK ||
		(stop = ClientRead(cs, b, n * sizeof(int64))) != CLIENT_OK ||
		(r != NULL && (stop = ClientRead(cs, r, n * sizeof(double))) != CLIENT_OK))
		return stop;
	if (!call->emit(call->emit_arg, a, b, r, frame->count))
		return CLIENT_CANCELLED;
	MemoryContextReset(cxt);
	return CLIENT_OK;
}

/*
 * Streams the inputs, then takes frames until the end and the outputs;
 * says in info how the inputs went and how long the streams took.
 */
static ClientStop
ClientExchange(ClientState *cs, OdpCall *call, OdpServiceResult *result,
			   OdpServiceRunInfo *info)
{
	OdpCallArray arrays[ODP_CALL_MAX_ARRAYS];
	int			n = odp_call_inputs(call, arrays);
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu service pairs",
											  ALLOCSET_DEFAULT_SIZES);
	ClientStop	stop = CLIENT_OK;
	double		t0 = odp_now_ms();

	/* what the service maps in place does not stream */
	for (int i = 0; stop == CLIENT_OK && i < n; i++)
	{
		if (cs->slot->staged[i] || cs->slot->shared_handle[i] != 0)
		{
			info->staged_bytes += (int64) arrays[i].bytes;
			continue;
		}
		info->streamed_bytes += (int64) arrays[i].bytes;
		stop = ClientWrite(cs, *arrays[i].ptr, arrays[i].bytes);
	}
	info->stream_ms = odp_now_ms() - t0;
	while (stop == CLIENT_OK)
	{
		OdpFrame	frame;

		if ((stop = ClientRead(cs, &frame, sizeof(frame))) != CLIENT_OK)
			break;
		if (frame.kind == ODP_FRAME_PAIRS)
		{
			cs->pair_frames++;
			stop = ClientPairs(cs, call, &frame, cxt);
			continue;
		}
		if ((stop = ClientRead(cs, result, sizeof(*result))) != CLIENT_OK)
			break;
		info->reply_ms = Max(odp_now_ms() - result->end_ms, 0.0);
		if (result->status == ODP_OK)
		{
			t0 = odp_now_ms();
			call->count = result->count;
			call->outliers = result->outliers;
			n = odp_call_outputs(call, true, arrays);
			for (int i = 0; stop == CLIENT_OK && i < n; i++)
				stop = ClientRead(cs, *arrays[i].ptr, arrays[i].bytes);
			info->stream_ms += odp_now_ms() - t0;
		}
		break;
	}
	MemoryContextDelete(cxt);
	return stop;
}

/*
 * Whether a call a GPU fault failed may run again: on a driver that
 * poisons the whole engine process (an illegal address on one device
 * fails every device's calls until the process restarts) the fault may
 * be another call's.  Not once it has handed pairs to its callback,
 * which keeps them, nor a shard's state, which lives in the engine.
 */
static bool
ClientRetryable(const ClientState *cs, const OdpCall *call,
				const OdpServiceResult *result)
{
	return result->status == ODP_ERR_GPU && result->fault && cs->pair_frames == 0 &&
		!odp_call_is_node_step(call->op);
}

/*
 * One run of the call through the service; CLIENT_OK with its result,
 * or why it stopped early (the slot abandoned).
 */
static ClientStop
ClientRunOnce(ClientState *cs, OdpCall *call, const char *function, bool alone,
			  OdpServiceResult *result, OdpServiceRunInfo *info)
{
	ClientStop	stop;

	cs->slot = NULL;
	cs->pair_frames = 0;
	memset(result, 0, sizeof(*result));
	if (!ClientTakeSlot(cs))
		return CLIENT_GONE;
	PG_TRY();
	{
		ClientSubmit(cs, call, function, alone);
		stop = ClientExchange(cs, call, result, info);
	}
	PG_CATCH();
	{
		ClientAbandon(cs);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (stop != CLIENT_OK)
		ClientAbandon(cs);
	return stop;
}

/* See service.h. */
OdpStatus
OdpServiceRun(OdpContext *ctx, OdpCall *call, const char *function,
			  OdpServiceRunInfo *info)
{
	ClientState cs;
	OdpServiceResult result;
	ClientStop	stop;
	double		start = odp_now_ms();

	memset(&cs, 0, sizeof(cs));
	cs.ctx = ctx;
	for (;;)
	{
		stop = ClientRunOnce(&cs, call, function, info->retried, &result, info);
		if (stop == CLIENT_GONE && cs.slot == NULL)
		{
			snprintf(ctx->message, sizeof(ctx->message),
					 "the odp_gpu service stopped before this call could start; "
					 "it restarts by itself (odp_gpu_info() shows its state)");
			return ODP_ERR_GPU;
		}
		if (stop != CLIENT_OK || info->retried || !ClientRetryable(&cs, call, &result))
			break;
		/* done with the failed run's slot; the second run waits to go alone */
		atomic_store(&cs.slot->backend_done, 1);
		ClientWakeService();
		ereport(LOG,
				(errmsg("odp_gpu: a GPU fault failed this %s call in the GPU service; running it again, alone", function),
				 errdetail_internal("%s", result.message)));
		info->retried = true;
		info->staged_bytes = info->streamed_bytes = 0;
	}

	if (stop != CLIENT_OK)
	{
		if (stop == CLIENT_CANCELLED)
			return ODP_ERR_CANCELLED;
		/* set before the worker marked it finished */
		if (cs.slot->lost[0] != '\0')
			strlcpy(ctx->message, cs.slot->lost, sizeof(ctx->message));
		else
			snprintf(ctx->message, sizeof(ctx->message),
					 "the odp_gpu service stopped while running this call; "
					 "it restarts by itself (odp_gpu_info() shows its state)");
		return ODP_ERR_GPU;
	}
	info->queued_ms = result.queued_ms + (cs.slot->submitted_ms - start);
	info->dispatch_ms = Max(result.thread_ms - cs.slot->started_ms, 0.0);
	ctx->batch_wait_ms = result.batch_wait_ms;
	info->device = result.device;
	atomic_store(&cs.slot->backend_done, 1);
	ClientWakeService();

	memcpy(ctx->message, result.message, sizeof(ctx->message));
	if (info->retried && result.status == ODP_ERR_GPU)
	{
		size_t		len = strlen(ctx->message);

		snprintf(ctx->message + len, sizeof(ctx->message) - len,
				 " (its second run, alone after a first one a GPU fault failed)");
	}
	ctx->transfer_ms = result.transfer_ms;
	info->streamed_to_gpu_bytes = result.streamed_to_gpu;
	ctx->compute_ms = result.compute_ms;
	ctx->chunks = result.chunks;
	ctx->spatial_used = result.spatial_used;
	ctx->spatial_distances = result.spatial_distances;
	ctx->batch_queries = result.batch_queries;
	if (result.gpu_parts > 1)
		ctx->gpu_parts = result.gpu_parts;
	call->count = result.count;
	call->outliers = result.outliers;
	call->skyline = result.skyline;
	call->intervals = result.intervals;
	return (OdpStatus) result.status;
}
