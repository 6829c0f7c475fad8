/*-------------------------------------------------------------------------
 *
 * host_sort.c
 *	  LSD radix sorts of 64-bit keys on the host: a serial one that can
 *	  carry 32-bit values, and a parallel one for large key arrays.
 *
 * Both use 11-bit digits over the low "bits" bits of the keys and skip a
 * digit that every key shares, so sorting keys that vary in few bits
 * costs few passes.  Both are stable.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/host_sort.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "common/host_sort.h"
#include "common/host_threads.h"

#define RADIX_BITS		11
#define RADIX_SIZE		(1 << RADIX_BITS)

/* Most slices of the parallel sort (one per thread). */
#define RADIX_MAX_SLICES	256

/* See host_sort.h. */
void
odp_radix_sort(uint64_t *key, uint32_t *val, uint64_t *tkey, uint32_t *tval,
			   int64_t n, int bits, int64_t *count)
{
	uint64_t   *k0 = key,
			   *k1 = tkey;
	uint32_t   *v0 = val,
			   *v1 = tval;

	for (int shift = 0; shift < bits; shift += RADIX_BITS)
	{
		int64_t		sum = 0;
		bool		trivial = false;

		memset(count, 0, sizeof(int64_t) * RADIX_SIZE);
		for (int64_t i = 0; i < n; i++)
			count[(k0[i] >> shift) & (RADIX_SIZE - 1)]++;
		for (int b = 0; b < RADIX_SIZE; b++)
		{
			int64_t		c = count[b];

			trivial |= c == n;
			count[b] = sum;
			sum += c;
		}
		if (trivial)
			continue;
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		at = count[(k0[i] >> shift) & (RADIX_SIZE - 1)]++;

			k1[at] = k0[i];
			if (v0 != NULL)
				v1[at] = v0[i];
		}
		{
			uint64_t   *tk = k0;
			uint32_t   *tv = v0;

			k0 = k1;
			k1 = tk;
			v0 = v1;
			v1 = tv;
		}
	}
	if (k0 != key)
	{
		memcpy(key, k0, sizeof(uint64_t) * (size_t) n);
		if (val != NULL)
			memcpy(val, v0, sizeof(uint32_t) * (size_t) n);
	}
}

/* One pass of the parallel sort: slices count, then scatter, one digit. */
typedef struct RadixPass
{
	const uint64_t *from;
	uint64_t   *to;
	const uint32_t *vfrom;		/* values carried, or NULL */
	uint32_t   *vto;
	int64_t		n;
	int			slices;
	int			shift;
	int64_t    *count;			/* slices x RADIX_SIZE */
} RadixPass;

static void
radix_slice_bounds(const RadixPass *p, int64_t s, int64_t *i0, int64_t *i1)
{
	*i0 = p->n * s / p->slices;
	*i1 = p->n * (s + 1) / p->slices;
}

/* Task: slice s's digit histogram. */
static void
radix_count_slice(void *arg, int64_t s)
{
	RadixPass  *p = (RadixPass *) arg;
	int64_t    *c = p->count + s * RADIX_SIZE;
	int64_t		i0,
				i1;

	radix_slice_bounds(p, s, &i0, &i1);
	memset(c, 0, sizeof(int64_t) * RADIX_SIZE);
	for (int64_t i = i0; i < i1; i++)
		c[(p->from[i] >> p->shift) & (RADIX_SIZE - 1)]++;
}

/* Task: slice s's keys to their places (count holds its offsets). */
static void
radix_scatter_slice(void *arg, int64_t s)
{
	RadixPass  *p = (RadixPass *) arg;
	int64_t    *c = p->count + s * RADIX_SIZE;
	int64_t		i0,
				i1;

	radix_slice_bounds(p, s, &i0, &i1);
	if (p->vfrom == NULL)
	{
		for (int64_t i = i0; i < i1; i++)
			p->to[c[(p->from[i] >> p->shift) & (RADIX_SIZE - 1)]++] = p->from[i];
		return;
	}
	for (int64_t i = i0; i < i1; i++)
	{
		int64_t		at = c[(p->from[i] >> p->shift) & (RADIX_SIZE - 1)]++;

		p->to[at] = p->from[i];
		p->vto[at] = p->vfrom[i];
	}
}

/* See host_sort.h. */
OdpStatus
odp_radix_sort_parallel(OdpContext *ctx, uint64_t *key, uint32_t *val,
						uint64_t *tkey, uint32_t *tval, int64_t n, int bits)
{
	RadixPass	p;
	int			threads = odp_host_threads(ctx);
	OdpStatus	status = ODP_OK;

	if (threads > RADIX_MAX_SLICES)
		threads = RADIX_MAX_SLICES;
	/* small arrays: one slice, no threads */
	if (n < ((int64_t) 1 << 16) * threads)
		threads = 1;
	memset(&p, 0, sizeof(p));
	p.from = key;
	p.to = tkey;
	p.vfrom = val;
	p.vto = tval;
	p.n = n;
	p.slices = threads;
	p.count = malloc(sizeof(int64_t) * RADIX_SIZE * (size_t) threads);
	if (p.count == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for a sort");

	for (p.shift = 0; p.shift < bits; p.shift += RADIX_BITS)
	{
		int64_t		sum = 0;
		bool		trivial = false;

		if ((status = odp_parallel_tasks(ctx, threads, radix_count_slice, &p)) != ODP_OK)
			break;
		/* offsets: digit-major, then slice order, which keeps it stable */
		for (int b = 0; b < RADIX_SIZE; b++)
		{
			int64_t		digit = 0;

			for (int s = 0; s < threads; s++)
			{
				int64_t		c = p.count[s * RADIX_SIZE + b];

				p.count[s * RADIX_SIZE + b] = sum + digit;
				digit += c;
			}
			trivial |= digit == n;
			sum += digit;
		}
		if (trivial)
			continue;
		if ((status = odp_parallel_tasks(ctx, threads, radix_scatter_slice, &p)) != ODP_OK)
			break;
		{
			uint64_t   *t = (uint64_t *) p.from;
			uint32_t   *tv = (uint32_t *) p.vfrom;

			p.from = p.to;
			p.to = t;
			p.vfrom = p.vto;
			p.vto = tv;
		}
	}
	if (status == ODP_OK && p.from != key)
	{
		memcpy(key, p.from, sizeof(uint64_t) * (size_t) n);
		if (val != NULL)
			memcpy(val, p.vfrom, sizeof(uint32_t) * (size_t) n);
	}
	free(p.count);
	return status;
}

/* See odp_engine.h. */
bool
odp_sort_keys(uint64_t *key, uint32_t *val, int64_t n)
{
	uint64_t   *tkey = malloc(sizeof(uint64_t) * (size_t) (n > 0 ? n : 1));
	uint32_t   *tval = malloc(sizeof(uint32_t) * (size_t) (n > 0 ? n : 1));
	int64_t	   *count = malloc(sizeof(int64_t) * RADIX_SIZE);
	bool		ok = tkey != NULL && tval != NULL && count != NULL;

	if (ok)
		odp_radix_sort(key, val, tkey, tval, n, 64, count);
	free(tkey);
	free(tval);
	free(count);
	return ok;
}

/* qsort comparator: ascending int64. */
static int
odp_cmp_int64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* See host_sort.h. */
void
odp_sort_int64(int64_t *v, int64_t n)
{
	if (n > 1)
		qsort(v, (size_t) n, sizeof(int64_t), odp_cmp_int64);
}
