/*-------------------------------------------------------------------------
 *
 * service_thread.c
 *	  The GPU service's engine threads: each runs one request at a time (a
 *	  slot, service_slot.h) from its inputs to its last output byte.
 *
 They run in the engine process (service_engine.h), which has no
 * PostgreSQL in it.  They read and write the slot's rings, run the engine,
 * wake the backend with SIGUSR1 (its handler sets its latch) and, at the
 * end, tell the worker through the job's done callback.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_thread.c
 *
 *-------------------------------------------------------------------------
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odp_knn.h"
#include "odp_resident.h"
#include "service/service_engine.h"
#include "service/service_objects.h"

/* How long a thread sleeps on a ring before it looks at the cancel flag. */
#define THREAD_SLEEP_MS 50
/* How long it polls a ring before it sleeps (odp_ring_poll). */
#define THREAD_POLL_US 100

_Atomic int odp_service_stopping = 0;

static bool
ThreadCancelled(OdpServiceSlot *slot)
{
	return atomic_load(&slot->cancel) || atomic_load(&odp_service_stopping);
}

/* Shows the watchdog that the request moves. */
static void
ThreadBeat(OdpServiceSlot *slot)
{
	atomic_store(&slot->beat_ms, (int64_t) odp_now_ms());
}

/* The engine's cancel callback. */
static bool
ThreadCancelRequested(void *arg)
{
	OdpServiceSlot *slot = (OdpServiceSlot *) arg;

	/* the engine polls between bounded pieces of work: count them */
	atomic_fetch_add(&slot->progress_done, 1);
	ThreadBeat(slot);
	return ThreadCancelled(slot);
}

/* Sets the backend's latch if it sleeps on it. */
static void
ThreadWakeBackend(OdpServiceSlot *slot)
{
	if (atomic_load(&slot->backend_waiting) && !atomic_load(&slot->abandoned))
		kill(slot->backend_pid, SIGUSR1);
}

/*
 * Waits a moment for a ring to hold need bytes to read (or room for
 * them, put): polls, then sleeps until it moves; false when cancelled.
 */
static bool
ThreadWait(OdpEngineJob *job, OdpRing *ring, bool put, size_t need, uint32_t seen)
{
	if (ThreadCancelled(job->slot))
		return false;
	/* waiting for the backend is moving, for the watchdog */
	ThreadBeat(job->slot);
	if (!odp_ring_poll(ring, put, need, THREAD_POLL_US))
		odp_ring_sleep(ring, seen, THREAD_SLEEP_MS);
	return true;
}

/*
 * Moves bytes between buf and a ring: reads them from the inbound ring,
 * or (put) writes them to the outbound one, which stops once the backend
 * gave the request up.  False when cancelled first.
 */
static bool
ThreadMove(OdpEngineJob *job, void *buf, size_t bytes, bool put)
{
	OdpServiceSlot *slot = job->slot;
	OdpRing    *ring = put ? job->out : job->in;
	char	   *p = buf;

	while (bytes > 0)
	{
		uint32_t	seen = atomic_load(&ring->seq);
		size_t		n;

		if (put && atomic_load(&slot->abandoned))
			return false;
		n = put ? odp_ring_put(ring, p, bytes) : odp_ring_get(ring, p, bytes);
		if (n > 0)
		{
			p += n;
			bytes -= n;
			ThreadWakeBackend(slot);
			continue;
		}
		if (!ThreadWait(job, ring, put, 1, seen))
			return false;
	}
	return true;
}

static bool
ThreadRead(OdpEngineJob *job, void *dst, size_t bytes)
{
	return ThreadMove(job, dst, bytes, false);
}

static bool
ThreadWrite(OdpEngineJob *job, const void *src, size_t bytes)
{
	return ThreadMove(job, (void *) src, bytes, true);
}

/*
 * Reads an input of bytes from the inbound ring into dst and, where pc
 * is given, onto the call's devices as it arrives: each piece, half a
 * ring or the input's rest (a copy call costs microseconds), goes to the
 * devices from where it lies in the page-locked ring while this thread
 * copies it to dst, and leaves the ring once both are done.  Once a
 * device copy fails the rest is read as ThreadRead reads it (the call
 * then copies dst).  False when cancelled first.
 */
static bool
ThreadReadPieces(OdpEngineJob *job, OdpPieceCopies *pc, char *dst, size_t bytes)
{
	OdpRing    *ring = job->in;
	size_t		done = 0;

	while (done < bytes)
	{
		uint32_t	seen = atomic_load(&ring->seq);
		size_t		piece = bytes - done < ring->size / 2 ? bytes - done : ring->size / 2;
		const char *at;
		size_t		n;
		bool		copied;

		if (odp_ring_ready(ring) < piece)
		{
			if (!ThreadWait(job, ring, false, piece, seen))
				return false;
			continue;
		}
		/* the run up to the ring's end, where the piece wraps */
		n = odp_ring_peek(ring, &at);
		n = n < piece ? n : piece;
		copied = odp_piece_copies_add(pc, done, at, n);
		memcpy(dst + done, at, n);
		if (copied)
			(void) odp_piece_copies_wait(pc);
		odp_ring_skip(ring, n);
		ThreadWakeBackend(job->slot);
		done += n;
		if (!copied)
			return ThreadRead(job, dst + done, bytes - done);
	}
	return true;
}

/*
 * Inputs smaller than this stream to the host only: their copy over the
 * bus takes microseconds, less than setting up copies on the devices.
 */
#define THREAD_PIECES_MIN_BYTES ((size_t) 1 << 20)

/*
 * Starts device copies (pieces[i]) of the inputs that stream to a call on
 * GPUs, where the rings are page-locked and the call's reservation holds
 * them beside what the call wishes for; what they take leaves the
 * engine's budget.  A node state's rows (NODE_*) outlive the call and
 * copy from the host, as before.
 */
static void
ThreadPiecesBegin(OdpEngineJob *job, OdpContext *ctx, OdpCall *call,
				  OdpCallArray *inputs, int nin, OdpPieceCopies **pieces)
{
	OdpServiceSlot *slot = job->slot;
	size_t		wish;
	size_t		taken = 0;

	if (ctx->device != ODP_DEVICE_GPU || slot->ndevices == 0 || odp_call_is_node_step(call->op))
		return;
	wish = odp_call_memory_wish(call);
	for (int i = 0; i < nin; i++)
	{
		size_t		bytes = inputs[i].bytes;

		if (slot->staged[i] || slot->shared_handle[i] != 0 || bytes < THREAD_PIECES_MIN_BYTES ||
			ctx->gpu_memory_limit < wish || ctx->gpu_memory_limit - wish < taken + bytes)
			continue;
		pieces[i] = odp_piece_copies_begin(slot->devices, slot->ndevices, bytes,
										   job->in->data, job->in->size);
		if (pieces[i] != NULL)
			taken += bytes;
	}
	ctx->gpu_memory_limit -= taken;
}

/* The engine's pair callback: one pair frame. */
static bool
ThreadEmit(void *arg, const int64_t *a, const int64_t *b, const double *r,
		   int64_t count)
{
	OdpEngineJob *job = (OdpEngineJob *) arg;
	OdpFrame	frame;

	frame.kind = ODP_FRAME_PAIRS;
	frame.with_r = r != NULL;
	frame.count = count;
	return ThreadWrite(job, &frame, sizeof(frame)) &&
		ThreadWrite(job, a, (size_t) count * sizeof(int64_t)) &&
		ThreadWrite(job, b, (size_t) count * sizeof(int64_t)) &&
		(r == NULL || ThreadWrite(job, r, (size_t) count * sizeof(double)));
}

/* Allocates the arrays listed, pointing the call at them; false on OOM. */
static bool
ThreadAllocate(OdpCallArray *arrays, int n, void **owned, int *nowned)
{
	for (int i = 0; i < n; i++)
	{
		void	   *p = malloc(arrays[i].bytes);

		if (p == NULL)
			return false;
		owned[(*nowned)++] = p;
		*arrays[i].ptr = p;
	}
	return true;
}

/*
 * Runs the call; a node step on the session's node state, found by its
 * handle; a node open keeps the state and the rows it reads (the first
 * ninputs of owned, then no longer the thread's) and returns its handle
 * in call->count.
 */
static OdpStatus
ThreadRunCall(OdpServiceSlot *slot, OdpContext *ctx, OdpCall *call,
			  void **owned, int *nowned, int ninputs)
{
	OdpStatus	status;
	int			device = -1;

	switch (call->op)
	{
		case ODP_CALL_NODE_FREE:
			odp_service_object_drop(slot->backend_pid, call->handle);
			return ODP_OK;
		case ODP_CALL_NODE_FIRST:
		case ODP_CALL_NODE_EXACT:
		case ODP_CALL_NODE_NEXT:
			call->node = odp_service_object_use(slot->backend_pid, call->handle, &device);
			if (call->node == NULL)
			{
				snprintf(ctx->message, sizeof(ctx->message),
						 "the odp_gpu service holds no SolvingSet state %lld of this session",
						 (long long) call->handle);
				return ODP_ERR_INVALID_ARGUMENT;
			}
			status = odp_call_run(ctx, call);
			odp_service_object_done(call->handle);
			return status;
		case ODP_CALL_NODE_CREATE:
			status = odp_call_run(ctx, call);
			if (status != ODP_OK)
				return status;
			call->count = odp_service_object_add(slot->backend_pid,
												 slot->ndevices > 0 ? slot->devices[0] : -1,
												 call->node, owned, ninputs);
			if (call->count == 0)
			{
				odp_ss_node_free(call->node);
				snprintf(ctx->message, sizeof(ctx->message),
						 "the odp_gpu service could not keep a SolvingSet state");
				return ODP_ERR_HOST_OOM;
			}
			/* the rows now belong to the state */
			for (int i = ninputs; i < *nowned; i++)
				owned[i - ninputs] = owned[i];
			*nowned -= ninputs;
			return ODP_OK;
		case ODP_CALL_KNN:
			/* a few queries share a pass with the calls on the same rows */
			if (!call->self_join)
				return odp_knn_shared(ctx, &call->m[0], &call->m[1], call->metric,
									  call->k, call->dist, call->index);
			return odp_call_run(ctx, call);
		default:
			return odp_call_run(ctx, call);
	}
}

/*
 * Points the call at its inputs: those mapped in place, and the others in
 * buffers of their own (listed in owned), to be streamed.
 */
static bool
ThreadAllocateInputs(OdpEngineJob *job, OdpCallArray *arrays, int n,
					 void **owned, int *nowned)
{
	for (int i = 0; i < n; i++)
	{
		if (job->inputs[i] != NULL)
		{
			*arrays[i].ptr = job->inputs[i];
			continue;
		}
		if (!ThreadAllocate(&arrays[i], 1, owned, nowned))
			return false;
	}
	return true;
}

/*
 * Makes the copies of table cache arrays the worker asked for, and lists
 * those the call uses in ctx (views, at most one per input): a GPU path
 * copies from them on the device; the CPU engine reads its own copies in
 * place of the staging area's.  A copy that cannot be made is no error:
 * the call reads the staging area, and the worker hears it was not made.
 * Returns the time the copies took to make (the call's transfer: the
 * analytics start their own count at zero).
 */
static double
ThreadResident(OdpEngineJob *job, OdpContext *ctx, OdpCallArray *arrays, int n,
			   OdpResidentArray *views)
{
	OdpServiceSlot *slot = job->slot;
	int			ordinal = ctx->device == ODP_DEVICE_GPU && slot->ndevices > 0 ?
		slot->devices[0] : ODP_RESIDENT_HOST;
	double		made_ms = 0.0;

	ctx->resident = views;
	ctx->nresident = 0;
	for (int i = 0; i < n; i++)
	{
		uint64_t	tag = slot->resident_tag[i];
		OdpResidentArray *v = &views[ctx->nresident];

		if (tag == 0 || job->staging == NULL || !slot->staged[i])
			continue;
		if (slot->resident_make[i])
		{
			OdpContext	scratch = *ctx;

			scratch.transfer_ms = 0.0;
			if (odp_resident_make(&scratch, tag, ordinal,
								  job->staging + slot->cache_offset[i],
								  slot->cache_bytes[i]) == ODP_OK)
				atomic_store(&slot->resident_made[i], 1);
			made_ms += scratch.transfer_ms;
		}
		if (!odp_resident_find(tag, v))
			continue;
		ctx->nresident++;
		if (v->ordinal == ODP_RESIDENT_HOST)
		{
			const char *in = (const char *) *arrays[i].ptr;

			if (in >= v->host && in + arrays[i].bytes <= v->host + v->bytes)
				*arrays[i].ptr = (void *) (v->copy + (in - v->host));
		}
	}
	return made_ms;
}

void *
odp_service_thread_main(void *arg)
{
	OdpEngineJob *job = (OdpEngineJob *) arg;
	OdpServiceSlot *slot = job->slot;
	OdpCall		call = slot->call;
	OdpContext	ctx = slot->run;
	OdpCallArray inputs[ODP_CALL_MAX_ARRAYS];
	OdpCallArray outputs[ODP_CALL_MAX_ARRAYS];
	OdpResidentArray resident[ODP_CALL_MAX_ARRAYS * (1 + ODP_MAX_GPUS)];
	OdpPieceCopies *pieces[ODP_CALL_MAX_ARRAYS] = {0};
	void	   *owned[2 * ODP_CALL_MAX_ARRAYS];
	int			nowned = 0;
	int			nin = odp_call_inputs(&call, inputs);
	int			nout = odp_call_outputs(&call, false, outputs);
	OdpServiceResult result;
	OdpFrame	end;
	OdpStatus	status = ODP_OK;
	bool		ok = true;

	memset(&result, 0, sizeof(result));
	result.thread_ms = odp_now_ms();
	ThreadBeat(slot);
	ctx.cancel = ThreadCancelRequested;
	ctx.cancel_arg = slot;
	if (ctx.message[0] != '\0')
		status = ODP_ERR_INVALID_ARGUMENT;	/* the service refused it */
	else if (!ThreadAllocateInputs(job, inputs, nin, owned, &nowned) ||
		!ThreadAllocate(outputs, nout, owned, &nowned))
	{
		status = ODP_ERR_HOST_OOM;
		snprintf(ctx.message, sizeof(ctx.message),
				 "the odp_gpu service could not allocate the call's host buffers");
	}
	if (status == ODP_OK)
		ThreadPiecesBegin(job, &ctx, &call, inputs, nin, pieces);
	/* the inputs are read whole even after a failure: the backend sends them */
	for (int i = 0; ok && i < nin; i++)
	{
		if (slot->staged[i] || slot->shared_handle[i] != 0)
			continue;			/* mapped in place, not streamed */
		if (status == ODP_OK && pieces[i] != NULL)
			ok = ThreadReadPieces(job, pieces[i], *inputs[i].ptr, inputs[i].bytes);
		else if (status == ODP_OK)
			ok = ThreadRead(job, *inputs[i].ptr, inputs[i].bytes);
		else
		{
			char		sink[65536];
			size_t		left = inputs[i].bytes;

			while (ok && left > 0)
			{
				size_t		n = left < sizeof(sink) ? left : sizeof(sink);

				ok = ThreadRead(job, sink, n);
				left -= n;
			}
		}
	}
	if (ok && status == ODP_OK && slot->fault == ODP_FAULT_POISON &&
		ctx.device == ODP_DEVICE_GPU && slot->ndevices > 0)
		(void) odp_gpu_device_poison(&ctx, slot->devices[0]);
	/* the watchdog's test: a call that never moves again */
	while (slot->fault == ODP_FAULT_HANG)
		pause();
	if (ok && status == ODP_OK && slot->fault == ODP_FAULT_VICTIM && !slot->alone)
	{
		status = ODP_ERR_GPU;
		result.fault = 1;
		snprintf(ctx.message, sizeof(ctx.message),
				 "odp_gpu.service_fault_test = victim: failed as another call's GPU fault fails it");
	}
	else if (ok && status == ODP_OK)
	{
		double		made_ms;

		if (call.op == ODP_CALL_PEARSON_PAIRS || call.op == ODP_CALL_INTERVAL_PAIRS)
		{
			call.emit = ThreadEmit;
			call.emit_arg = job;
		}
		made_ms = ThreadResident(job, &ctx, inputs, nin, resident);
		for (int i = 0; i < nin; i++)
		{
			int			views;

			if (pieces[i] == NULL)
				continue;
			views = odp_piece_copies_views(pieces[i], *inputs[i].ptr, resident + ctx.nresident);
			ctx.nresident += views;
			if (views > 0)
				result.streamed_to_gpu += (int64_t) inputs[i].bytes;
		}
		status = ThreadRunCall(slot, &ctx, &call, owned, &nowned, nin);
		ctx.transfer_ms += made_ms;
	}
	if (status == ODP_ERR_CANCELLED && atomic_load(&odp_service_stopping))
	{
		/* stopped by the service, not by its backend: say so */
		status = ODP_ERR_GPU;
		snprintf(ctx.message, sizeof(ctx.message),
				 "the odp_gpu service stopped while running this call; "
				 "it restarts by itself (odp_gpu_info() shows its state)");
	}
	else if (status == ODP_ERR_GPU && ctx.device == ODP_DEVICE_GPU)
	{
		size_t		len = strlen(ctx.message);

		atomic_store(&slot->gpu_fault, 1);
		result.fault = 1;
		snprintf(ctx.message + len, sizeof(ctx.message) - len,
				 "; the odp_gpu service checks the device and rebuilds its context "
				 "if the fault poisoned it, then runs the queued calls");
	}
	if (ok)
	{
		result.status = status;
		memcpy(result.message, ctx.message, sizeof(result.message));
		result.transfer_ms = ctx.transfer_ms;
		result.compute_ms = ctx.compute_ms;
		result.chunks = ctx.chunks;
		result.gpu_parts = ctx.gpu_parts;
		result.spatial_used = ctx.spatial_used;
		result.spatial_distances = ctx.spatial_distances;
		result.batch_queries = ctx.batch_queries;
		result.batch_wait_ms = ctx.batch_wait_ms;
		result.count = call.count;
		result.outliers = call.outliers;
		result.skyline = call.skyline;
		result.intervals = call.intervals;
		result.device = slot->ndevices > 0 ? slot->devices[0] : -1;
		result.queued_ms = slot->started_ms - slot->submitted_ms;
		result.run_ms = odp_now_ms() - slot->started_ms;
		result.end_ms = odp_now_ms();
		end.kind = ODP_FRAME_END;
		end.with_r = 0;
		end.count = 0;
		ok = ThreadWrite(job, &end, sizeof(end)) &&
			ThreadWrite(job, &result, sizeof(result));
		if (status == ODP_OK)
		{
			nout = odp_call_outputs(&call, true, outputs);
			for (int i = 0; ok && i < nout; i++)
				ok = ThreadWrite(job, *outputs[i].ptr, outputs[i].bytes);
		}
	}
	for (int i = 0; i < nin; i++)
		odp_piece_copies_end(pieces[i]);
	for (int i = 0; i < nowned; i++)
		free(owned[i]);
	job->idle(job);
	atomic_store(&slot->finished, 1);
	ThreadWakeBackend(slot);
	job->done(job);
	return NULL;
}
