/*-------------------------------------------------------------------------
 *
 * service_ring.h
 *	  A byte ring in shared memory between one backend and one engine
 *	  thread of the GPU service: one writer, one reader, C11 atomics.
 *
 * Plain C, no PostgreSQL: the engine threads use it.  The engine thread
 * sleeps on the ring's futex word; the backend sleeps on its latch, which
 * the engine thread sets by sending it SIGUSR1 (a backend's SIGUSR1
 * handler sets its latch) when the backend said it is waiting.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_ring.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_RING_H
#define ODP_SERVICE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct OdpRing
{
	_Atomic uint64_t head;		/* bytes written, ever */
	_Atomic uint64_t tail;		/* bytes read, ever */
	_Atomic uint32_t seq;		/* bumped on every advance: futex word */
	uint32_t	size;			/* capacity in bytes */
	char		data[];
} OdpRing;

extern void odp_ring_init(OdpRing *ring, uint32_t size);

/* Copies up to bytes in or out without waiting; returns how many. */
extern size_t odp_ring_put(OdpRing *ring, const void *src, size_t bytes);
extern size_t odp_ring_get(OdpRing *ring, void *dst, size_t bytes);

/*
 * The bytes ready to read that lie in one run from the read position
 * (*at: in the ring's own memory), without taking them; odp_ring_skip
 * then takes n of them (at most what it said).  A reader that copies
 * from the ring's memory in place (service_thread.c: a DMA to the GPU)
 * takes the bytes only once it is done with them.
 */
extern size_t odp_ring_peek(const OdpRing *ring, const char **at);
extern void odp_ring_skip(OdpRing *ring, size_t n);

/* Bytes ready to read, and room to write. */
extern size_t odp_ring_ready(const OdpRing *ring);
extern size_t odp_ring_room(const OdpRing *ring);

/*
 * Polls for up to about spin_us microseconds until the ring has need
 * bytes to read (want_room false) or room for them (true); returns
 * whether it has.
 * A side that waits for the other side's next piece polls first: the
 * other side usually moves within microseconds, far sooner than a
 * sleeper wakes, which makes a stream through the ring several times
 * faster.
 */
extern bool odp_ring_poll(const OdpRing *ring, bool want_room, size_t need, int spin_us);

/*
 * Sleeps until the ring's futex word differs from seen or timeout_ms
 * passed (a spurious return is allowed), and wakes every sleeper.
 */
extern void odp_ring_sleep(OdpRing *ring, uint32_t seen, int timeout_ms);
extern void odp_ring_wake(OdpRing *ring);

#endif							/* ODP_SERVICE_RING_H */
