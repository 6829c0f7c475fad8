/*-------------------------------------------------------------------------
 *
 * service_ring.c
 *	  The service's byte rings (service_ring.h).  No PostgreSQL here.
 *
 * head and tail only grow; their difference is the bytes in the ring.
 * The writer copies, then publishes head (release); the reader loads
 * head (acquire), copies, then publishes tail (release).  Every advance
 * bumps seq, which a sleeping engine thread waits on with a futex.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_ring.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>
#include <time.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "service/service_ring.h"

void
odp_ring_init(OdpRing *ring, uint32_t size)
{
	atomic_init(&ring->head, 0);
	atomic_init(&ring->tail, 0);
	atomic_init(&ring->seq, 0);
	ring->size = size;
}

size_t
odp_ring_ready(const OdpRing *ring)
{
	return (size_t) (atomic_load_explicit(&ring->head, memory_order_acquire) -
					 atomic_load_explicit(&ring->tail, memory_order_acquire));
}

size_t
odp_ring_room(const OdpRing *ring)
{
	return ring->size - odp_ring_ready(ring);
}

size_t
odp_ring_put(OdpRing *ring, const void *src, size_t bytes)
{
	uint64_t	head = atomic_load_explicit(&ring->head, memory_order_relaxed);
	uint64_t	tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
	size_t		room = ring->size - (size_t) (head - tail);
	size_t		n = bytes < room ? bytes : room;
	size_t		at = (size_t) (head % ring->size);
	size_t		first = n < ring->size - at ? n : ring->size - at;

	if (n == 0)
		return 0;
	memcpy(ring->data + at, src, first);
	memcpy(ring->data, (const char *) src + first, n - first);
	atomic_store_explicit(&ring->head, head + n, memory_order_release);
	atomic_fetch_add(&ring->seq, 1);
	return n;
}

size_t
odp_ring_peek(const OdpRing *ring, const char **at)
{
	uint64_t	tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
	uint64_t	head = atomic_load_explicit(&ring->head, memory_order_acquire);
	size_t		ready = (size_t) (head - tail);
	size_t		from = (size_t) (tail % ring->size);

	*at = ring->data + from;
	return ready < ring->size - from ? ready : ring->size - from;
}

void
odp_ring_skip(OdpRing *ring, size_t n)
{
	uint64_t	tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);

	atomic_store_explicit(&ring->tail, tail + n, memory_order_release);
	atomic_fetch_add(&ring->seq, 1);
}

size_t
odp_ring_get(OdpRing *ring, void *dst, size_t bytes)
{
	size_t		got = 0;

	/* two runs at most: up to the ring's end, then from its start */
	for (int run = 0; run < 2 && got < bytes; run++)
	{
		const char *at;
		size_t		n = odp_ring_peek(ring, &at);

		if (n == 0)
			break;
		n = n < bytes - got ? n : bytes - got;
		memcpy((char *) dst + got, at, n);
		got += n;
		odp_ring_skip(ring, n);
	}
	return got;
}

bool
odp_ring_poll(const OdpRing *ring, bool want_room, size_t need, int spin_us)
{
	struct timespec start,
				now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;)
	{
		for (int i = 0; i < 64; i++)
		{
			if ((want_room ? odp_ring_room(ring) : odp_ring_ready(ring)) >= need)
				return true;
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000000L +
			(now.tv_nsec - start.tv_nsec) / 1000L >= spin_us)
			return false;
	}
}

void
odp_ring_sleep(OdpRing *ring, uint32_t seen, int timeout_ms)
{
#ifdef __linux__
	struct timespec ts;

	ts.tv_sec = timeout_ms / 1000;
	ts.tv_nsec = (long) (timeout_ms % 1000) * 1000000L;
	/* a shared (not private) futex: the waker is another process */
	syscall(SYS_futex, (uint32_t *) &ring->seq, FUTEX_WAIT, seen, &ts, NULL, 0);
#else
	struct timespec ts = {0, 1000000L};

	if (atomic_load(&ring->seq) == seen)
		nanosleep(&ts, NULL);
#endif
}

void
odp_ring_wake(OdpRing *ring)
{
#ifdef __linux__
	syscall(SYS_futex, (uint32_t *) &ring->seq, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
#else
	(void) ring;
#endif
}
