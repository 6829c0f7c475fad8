/*-------------------------------------------------------------------------
 *
 * pair_relay.h
 *	  Hands the pairs of a split call's parts to the caller's receiver, on
 *	  the caller's thread, in part order.
 *
 * Pair analytics (correlation pairs, region matching) split one side's
 * rows into contiguous ranges, one per part, and each part produces its
 * pairs in ascending (a, b) order; part p's pairs all come before part
 * p + 1's, so handing the parts over one after the other keeps the order
 * one device gives.  Parts run on their own threads and must not call the
 * receiver (it may be the server's), so they push copies of their pairs
 * here and the caller's thread, pumping while the parts run, hands over
 * the current part's pairs and moves to the next part once that part has
 * finished.  A part that is not current waits once it holds
 * ODP_RELAY_MAX_BYTES of pairs, so memory stays bounded whatever the
 * result's size.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/devices/pair_relay.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_PAIR_RELAY_H
#define ODP_PAIR_RELAY_H

#include <pthread.h>

#include "devices/device_set.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* Pairs a part that is not current may hold before it waits, in bytes. */
#define ODP_RELAY_MAX_BYTES		((size_t) 256 << 20)
/* Longest a pump hands pairs over before it returns to the caller's poll. */
#define ODP_RELAY_PUMP_MS		10.0

/* The receiver: returns false to stop (as OdpPearsonPairFn; r may be NULL). */
typedef bool (*OdpRelayEmitFn) (void *arg, const int64_t *a, const int64_t *b,
								const double *r, int64_t count);

typedef struct OdpRelayBatch OdpRelayBatch;

typedef struct OdpRelayPart
{
	OdpRelayBatch *head;
	OdpRelayBatch *tail;
	size_t		bytes;			/* held in head .. tail */
	bool		finished;
} OdpRelayPart;

typedef struct OdpPairRelay
{
	pthread_mutex_t lock;
	pthread_cond_t turn;		/* current advanced, or stop */
	int			parts;
	int			current;		/* the part whose pairs go out now */
	OdpRelayPart part[ODP_MAX_GPUS];
	bool		stop;
	bool		out_of_memory;	/* a push could not copy its pairs */
	bool		with_r;
	OdpRelayEmitFn emit;
	void	   *emit_arg;
	int64_t		emitted;		/* pairs handed over */
	double		emit_ms;		/* time spent in emit */
} OdpPairRelay;

/* Starts a relay for parts parts; with_r: pairs carry a coefficient. */
extern void OdpRelayInit(OdpPairRelay *relay, int parts, bool with_r,
						 OdpRelayEmitFn emit, void *emit_arg);

/*
 * Part part's thread: queues count pairs (a[i] + a_off, b[i] + b_off,
 * r[i]), keeping only those with a < b when upper.  Waits while the part
 * is not current and holds too much.  Returns false when the relay was
 * stopped or memory ran out: the part must then stop.
 */
extern bool OdpRelayPush(OdpPairRelay *relay, int part, const int64_t *a,
						 const int64_t *b, const double *r, int64_t count,
						 int64_t a_off, int64_t b_off, bool upper);

/*
 * Part part's thread: the part has pushed all it will (on every path), with
 * its status.  A part that failed stops the relay at once, so that no later
 * part's pairs reach the receiver past the gap it leaves.
 */
extern void OdpRelayFinish(OdpPairRelay *relay, int part, OdpStatus status);

/*
 * The caller's thread: hands over what the current part holds, moving on
 * past finished parts, for at most about ODP_RELAY_PUMP_MS (the rest
 * waits for the next pump).  Returns false when the receiver asked to stop, or
 * at once when stop is set: the relay is then stopped, every waiting part
 * released and every later push refused.  Fits OdpPumpFn.
 */
extern bool OdpRelayPump(void *relay, bool stop);

/* Whether every part's pairs have been handed over. */
extern bool OdpRelayComplete(OdpPairRelay *relay);

/*
 * Runs fn on every part of set with relay (initialised) pumping the pairs
 * to the caller, hands over what the parts pushed after the last pump and
 * checks that nothing is left: the status of the whole split call.
 */
extern OdpStatus OdpRelayRun(OdpContext *ctx, const OdpDeviceSet *set, OdpPartFn fn,
							 void *arg, OdpPairRelay *relay);

/* Frees what is still queued. */
extern void OdpRelayRelease(OdpPairRelay *relay);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_PAIR_RELAY_H */
