/*-------------------------------------------------------------------------
 *
 * pair_relay.c
 *	  Ordered hand-over of a split call's pairs (see pair_relay.h).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/devices/pair_relay.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "devices/pair_relay.h"

/* One pushed batch; the arrays follow the header in one allocation. */
struct OdpRelayBatch
{
	OdpRelayBatch *next;
	int64_t		count;
	int64_t    *a;
	int64_t    *b;
	double	   *r;				/* or NULL */
};

/* Bytes one pushed pair takes (a, b and, where the relay carries it, r). */
static size_t
RelayPairBytes(const OdpPairRelay *relay)
{
	return 2 * sizeof(int64_t) + (relay->with_r ? sizeof(double) : 0);
}

/* With the lock held: stops the relay and wakes every part waiting for its turn. */
static void
RelayStopLocked(OdpPairRelay *relay)
{
	relay->stop = true;
	pthread_cond_broadcast(&relay->turn);
}

/* See pair_relay.h. */
void
OdpRelayInit(OdpPairRelay *relay, int parts, bool with_r, OdpRelayEmitFn emit,
			 void *emit_arg)
{
	memset(relay, 0, sizeof(*relay));
	pthread_mutex_init(&relay->lock, NULL);
	pthread_cond_init(&relay->turn, NULL);
	relay->parts = parts;
	relay->with_r = with_r;
	relay->emit = emit;
	relay->emit_arg = emit_arg;
}

/* See pair_relay.h. */
bool
OdpRelayPush(OdpPairRelay *relay, int part, const int64_t *a, const int64_t *b,
			 const double *r, int64_t count, int64_t a_off, int64_t b_off,
			 bool upper)
{
	const size_t per = RelayPairBytes(relay);
	OdpRelayBatch *batch;
	OdpRelayPart *rp = &relay->part[part];
	int64_t		kept = 0;
	bool		ok;

	if (count <= 0)
	{
		pthread_mutex_lock(&relay->lock);
		ok = !relay->stop;
		pthread_mutex_unlock(&relay->lock);
		return ok;
	}
	batch = malloc(sizeof(OdpRelayBatch) + per * (size_t) count);
	if (batch == NULL)
	{
		pthread_mutex_lock(&relay->lock);
		relay->out_of_memory = true;
		RelayStopLocked(relay);
		pthread_mutex_unlock(&relay->lock);
		return false;
	}
	batch->next = NULL;
	batch->a = (int64_t *) (batch + 1);
	batch->b = batch->a + count;
	batch->r = relay->with_r ? (double *) (batch->b + count) : NULL;
	for (int64_t i = 0; i < count; i++)
	{
		const int64_t ga = a[i] + a_off;
		const int64_t gb = b[i] + b_off;

		if (upper && ga >= gb)
			continue;
		batch->a[kept] = ga;
		batch->b[kept] = gb;
		if (batch->r != NULL)
			batch->r[kept] = r[i];
		kept++;
	}
	batch->count = kept;

	pthread_mutex_lock(&relay->lock);
	/* bounded memory: a later part waits for its turn */
	while (!relay->stop && relay->current != part &&
		   rp->bytes >= ODP_RELAY_MAX_BYTES)
		pthread_cond_wait(&relay->turn, &relay->lock);
	ok = !relay->stop;
	if (ok && kept > 0)
	{
		if (rp->tail != NULL)
			rp->tail->next = batch;
		else
			rp->head = batch;
		rp->tail = batch;
		rp->bytes += per * (size_t) kept;
		batch = NULL;
	}
	pthread_mutex_unlock(&relay->lock);
	free(batch);
	return ok;
}

/* See pair_relay.h. */
void
OdpRelayFinish(OdpPairRelay *relay, int part, OdpStatus status)
{
	pthread_mutex_lock(&relay->lock);
	relay->part[part].finished = true;
	if (status != ODP_OK)
		RelayStopLocked(relay);
	pthread_mutex_unlock(&relay->lock);
}

/*
 * Puts the batches of list, not handed over yet, back at the head of the
 * current part's queue (the part may have pushed more meanwhile).
 */
static void
RelayPutBack(OdpPairRelay *relay, OdpRelayBatch *list)
{
	const size_t per = RelayPairBytes(relay);
	OdpRelayPart *rp;
	OdpRelayBatch *last = list;
	size_t		bytes = per * (size_t) list->count;

	while (last->next != NULL)
	{
		last = last->next;
		bytes += per * (size_t) last->count;
	}
	pthread_mutex_lock(&relay->lock);
	rp = &relay->part[relay->current];
	last->next = rp->head;
	rp->head = list;
	if (rp->tail == NULL)
		rp->tail = last;
	rp->bytes += bytes;
	pthread_mutex_unlock(&relay->lock);
}

/* See pair_relay.h. */
bool
OdpRelayPump(void *arg, bool stop)
{
	OdpPairRelay *relay = (OdpPairRelay *) arg;
	const double start = odp_now_ms();

	if (stop)
	{
		pthread_mutex_lock(&relay->lock);
		RelayStopLocked(relay);
		pthread_mutex_unlock(&relay->lock);
		return false;
	}

	for (;;)
	{
		OdpRelayBatch *list;
		bool		finished;
		bool		ok = true;

		pthread_mutex_lock(&relay->lock);
		if (relay->stop || relay->current >= relay->parts)
		{
			ok = !relay->stop;
			pthread_mutex_unlock(&relay->lock);
			return ok;
		}
		list = relay->part[relay->current].head;
		finished = relay->part[relay->current].finished;
		relay->part[relay->current].head = relay->part[relay->current].tail = NULL;
		relay->part[relay->current].bytes = 0;
		pthread_mutex_unlock(&relay->lock);

		/* the receiver runs outside the lock: parts keep pushing */
		while (list != NULL)
		{
			OdpRelayBatch *next = list->next;

			/*
			 * Back to the caller's poll of the cancel callback every
			 * ODP_RELAY_PUMP_MS: a part's pairs can take seconds to hand over.
			 */
			if (ok && odp_now_ms() - start >= ODP_RELAY_PUMP_MS)
			{
				RelayPutBack(relay, list);
				return true;
			}

			if (ok)
			{
				double		t0 = odp_now_ms();

				ok = relay->emit(relay->emit_arg, list->a, list->b, list->r,
								 list->count);
				relay->emit_ms += odp_now_ms() - t0;
				if (ok)
					relay->emitted += list->count;
			}
			free(list);
			list = next;
		}

		pthread_mutex_lock(&relay->lock);
		if (!ok)
			relay->stop = true;
		else if (finished && relay->part[relay->current].head == NULL)
			relay->current++;
		else
			finished = false;
		pthread_cond_broadcast(&relay->turn);
		pthread_mutex_unlock(&relay->lock);
		if (!ok)
			return false;
		if (!finished)
			return true;
	}
}

/* See pair_relay.h. */
bool
OdpRelayComplete(OdpPairRelay *relay)
{
	bool		complete;

	pthread_mutex_lock(&relay->lock);
	complete = relay->current >= relay->parts;
	pthread_mutex_unlock(&relay->lock);
	return complete;
}

/* See pair_relay.h. */
void
OdpRelayRelease(OdpPairRelay *relay)
{
	for (int p = 0; p < relay->parts; p++)
	{
		OdpRelayBatch *list = relay->part[p].head;

		while (list != NULL)
		{
			OdpRelayBatch *next = list->next;

			free(list);
			list = next;
		}
		relay->part[p].head = relay->part[p].tail = NULL;
	}
	pthread_mutex_destroy(&relay->lock);
	pthread_cond_destroy(&relay->turn);
}

/* See pair_relay.h. */
OdpStatus
OdpRelayRun(OdpContext *ctx, const OdpDeviceSet *set, OdpPartFn fn, void *arg,
			OdpPairRelay *relay)
{
	OdpStatus	status = OdpDeviceSetRun(ctx, set, fn, arg, OdpRelayPump, relay);

	/* what the parts pushed after the last pump, polling the cancel callback */
	while (status == ODP_OK && !OdpRelayComplete(relay))
	{
		if (odp_cancel_requested(ctx))
		{
			(void) OdpRelayPump(relay, true);
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "the computation was cancelled");
		}
		else if (!OdpRelayPump(relay, false))
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "the receiver stopped the call");
	}
	if (relay->out_of_memory)
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the pairs of a split call");
	else if (status == ODP_OK && !OdpRelayComplete(relay))
		status = odp_fail(ctx, ODP_ERR_INTERNAL,
						  "a split call ended with pairs not handed over");
	return status;
}
