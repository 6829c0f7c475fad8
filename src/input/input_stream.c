/*-------------------------------------------------------------------------
 *
 * input_stream.c
 *	  Copies of a TOASTed array's values into their row of the output with
 *	  non-temporal stores, checked finite on the way.
 *
 * A TOASTed array fetched straight into its row writes the output through
 * the cache: every line of the 512 MB of a Pearson input is first read
 * from memory (the store's read for ownership) and then written back,
 * twice the traffic of the write alone, where PostgreSQL's own scan
 * detoasts each value into the same small buffer, which stays in the
 * cache.  So a value of at most ODP_STREAM_SCRATCH_MAX bytes is fetched
 * into a scratch buffer that stays in the cache, and copied into its row
 * by stores that bypass the cache (SSE2's, on x86-64), checking on the
 * way that every value is finite: one pass, no read of the output.  Other
 * machines copy with memcpy and check after.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_stream.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <math.h>

#include "input/input_internal.h"
#include "utils/memutils.h"

static char *odp_stream_scratch;
static Size odp_stream_scratch_size;

/* See input_internal.h. */
char *
OdpStreamScratch(Size bytes)
{
	Assert(bytes <= ODP_STREAM_SCRATCH_MAX);
	if (bytes > odp_stream_scratch_size)
	{
		char	   *bigger = MemoryContextAlloc(TopMemoryContext, bytes);

		if (odp_stream_scratch != NULL)
			pfree(odp_stream_scratch);
		odp_stream_scratch = bigger;
		odp_stream_scratch_size = bytes;
	}
	return odp_stream_scratch;
}

/* Copies one value of elsize bytes; returns whether it is finite. */
static inline bool
OdpCopyOne(char *dst, const char *src, Size elsize)
{
	if (elsize == sizeof(double))
	{
		double		d;

		memcpy(&d, src, sizeof(d));
		memcpy(dst, &d, sizeof(d));
		return isfinite(d);
	}
	else
	{
		float		f;

		memcpy(&f, src, sizeof(f));
		memcpy(dst, &f, sizeof(f));
		return isfinite(f);
	}
}

#ifdef __SSE2__

/*
 * acc with the lanes of x (values of elsize bytes) that are not finite
 * set: x - x is 0 for a finite value, NaN for an infinity or a NaN.
 */
static inline __m128i
OdpNotFinite(__m128i acc, __m128i x, Size elsize)
{
	if (elsize == sizeof(double))
	{
		__m128d		v = _mm_castsi128_pd(x);
		__m128d		z = _mm_sub_pd(v, v);

		return _mm_or_si128(acc, _mm_castpd_si128(_mm_cmpunord_pd(z, z)));
	}
	else
	{
		__m128		v = _mm_castsi128_ps(x);
		__m128		z = _mm_sub_ps(v, v);

		return _mm_or_si128(acc, _mm_castps_si128(_mm_cmpunord_ps(z, z)));
	}
}

/* See input_internal.h: SSE2's streaming stores, 64 bytes a step. */
static bool
OdpStreamCopy(char *dst, const char *src, Size bytes, Size elsize)
{
	Size		i = 0;
	bool		finite = true;
	__m128i		bad = _mm_setzero_si128();

	/* whole values up to dst's first 16-byte boundary */
	for (; i < bytes && ((uintptr_t) (dst + i) & 15) != 0; i += elsize)
		finite &= OdpCopyOne(dst + i, src + i, elsize);
	for (; i + 64 <= bytes; i += 64)
	{
		__m128i		a = _mm_loadu_si128((const __m128i *) (src + i));
		__m128i		b = _mm_loadu_si128((const __m128i *) (src + i + 16));
		__m128i		c = _mm_loadu_si128((const __m128i *) (src + i + 32));
		__m128i		d = _mm_loadu_si128((const __m128i *) (src + i + 48));

		bad = OdpNotFinite(OdpNotFinite(bad, a, elsize), b, elsize);
		bad = OdpNotFinite(OdpNotFinite(bad, c, elsize), d, elsize);
		_mm_stream_si128((__m128i *) (dst + i), a);
		_mm_stream_si128((__m128i *) (dst + i + 16), b);
		_mm_stream_si128((__m128i *) (dst + i + 32), c);
		_mm_stream_si128((__m128i *) (dst + i + 48), d);
	}
	for (; i < bytes; i += elsize)
		finite &= OdpCopyOne(dst + i, src + i, elsize);
	/* the streamed lines reach memory before anyone reads the row */
	_mm_sfence();
	return finite && _mm_movemask_epi8(bad) == 0;
}

#else

static bool
OdpStreamCopy(char *dst, const char *src, Size bytes, Size elsize)
{
	bool		finite = true;

	for (Size i = 0; i < bytes; i += elsize)
		finite &= OdpCopyOne(dst + i, src + i, elsize);
	return finite;
}

#endif

/* See input_internal.h. */
bool
OdpStreamValues(char *dst, const char *src, Size n, Size elsize)
{
	Assert(elsize == sizeof(double) || elsize == sizeof(float));
	Assert(((uintptr_t) dst % elsize) == 0);
	return OdpStreamCopy(dst, src, n * elsize, elsize);
}
