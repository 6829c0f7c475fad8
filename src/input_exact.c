/*-------------------------------------------------------------------------
 *
 * input_exact.c
 *	  Numeric bounds of regions, compared exactly as PostgreSQL compares
 *	  numerics.
 *
 * A numeric such as 462.7 lies between two double precision values, and
 * two numerics can lie between the same two, so no 64-bit key computed
 * from one value alone orders every numeric exactly.  Instead the reader
 * keeps each numeric bound (a copy, in an arena of the output's lifetime)
 * with a provisional key, the order key of the double nearest to it:
 * rounding never reverses an order, so distinct keys already order their
 * values, and only bounds with equal keys need a comparison of the values.
 * Once every source of a matching is read, each dimension that holds a
 * numeric bound in either source is ranked: all its bounds, numeric or
 * not, of both sources are sorted, by key and, within equal keys, by
 * numeric comparison (a double precision bound taking part as its exact
 * decimal expansion), and every key becomes the bound's dense rank.
 * Ranks keep order and equality, which is all the engine's comparisons
 * use, so both paths compare numerics exactly.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input_exact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "input_internal.h"
#include "miscadmin.h"
#include "odp_order.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

/* Bytes of each block of the arena that keeps numeric bounds. */
#define ODP_EXACT_ARENA_BLOCK	((Size) 1 << 20)

/* Room for size bytes that live as long as the reader's output. */
static void *
OdpArenaAlloc(OdpReader *r, Size size)
{
	void	   *p;

	size = MAXALIGN(size);
	if (size > r->arena_left)
	{
		Size		block = Max(ODP_EXACT_ARENA_BLOCK, size);

		r->arena = MemoryContextAlloc(r->outcxt, block);
		r->arena_left = block;
	}
	p = r->arena;
	r->arena += size;
	r->arena_left -= size;
	return p;
}

/* See input_internal.h. */
uint64
OdpExactKey(OdpReader *r, Numeric num, Numeric *kept)
{
	Datum		nd = NumericGetDatum(num);
	double		nearest;

	Assert(!numeric_is_nan(num));
	if (numeric_is_inf(num))
	{
		*kept = NULL;
		return odp_order_float64(DatumGetFloat8(DirectFunctionCall1(numeric_float8, nd)));
	}
	*kept = OdpArenaAlloc(r, VARSIZE(num));
	memcpy(*kept, num, VARSIZE(num));
	/* beyond double precision's range: the infinity, resolved by value */
	nearest = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, nd));
	return odp_order_float64(nearest);
}

/*
 * The numeric equal to the double precision value of key: its exact
 * decimal expansion (a double is m * 2^(e - 53), so 53 - e digits after
 * the point hold it), or an infinity.
 */
static Numeric
OdpNumericOfKey(uint64 key)
{
	double		d = odp_order_float64_value(key);
	int			exponent;
	char	   *text;

	if (isinf(d))
		return DatumGetNumeric(DirectFunctionCall1(float8_numeric, Float8GetDatum(d)));
	(void) frexp(d, &exponent);
	text = psprintf("%.*f", Max(0, 53 - exponent), d);
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(text),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
}

/* numeric_cmp of two numerics. */
static inline int
OdpCompareNumerics(Numeric a, Numeric b)
{
	return DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(a),
											 NumericGetDatum(b)));
}

/* See input_internal.h. */
int
OdpCompareExact(uint64 ka, Numeric na, uint64 kb, Numeric nb)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (na == NULL && nb == NULL)
		return 0;
	return OdpCompareNumerics(na != NULL ? na : OdpNumericOfKey(ka),
							  nb != NULL ? nb : OdpNumericOfKey(kb));
}

/* ---- ranking ---- */

/* One bound of a dimension being ranked: its key, value and place. */
typedef struct OdpRankEntry
{
	uint64		key;
	Numeric		num;			/* NULL: the key's double is the value */
	uint64	   *slot;			/* where its key is, and its rank goes */
} OdpRankEntry;

#define ST_SORT OdpSortRankKeys
#define ST_ELEMENT_TYPE OdpRankEntry
#define ST_COMPARE(a, b) ((a)->key < (b)->key ? -1 : ((a)->key > (b)->key ? 1 : 0))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT OdpSortRankValues
#define ST_ELEMENT_TYPE OdpRankEntry
#define ST_COMPARE(a, b) OdpCompareNumerics((a)->num, (b)->num)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* Whether dimension d of in has a numeric bound. */
static bool
OdpDimHasNumeric(const OdpInput *in, int d)
{
	Size		stride;

	if (in == NULL || in->exact_bounds == NULL)
		return false;
	stride = (Size) in->dims * 2;
	for (int64 i = 0; i < in->rows; i++)
	{
		Numeric    *row = in->exact_bounds + (Size) i * stride + (Size) d * 2;

		if (row[0] != NULL || row[1] != NULL)
			return true;
	}
	return false;
}

/* Appends the bounds of dimension d of in to entries. */
static int64
OdpRankCollect(OdpInput *in, int d, OdpRankEntry *entries, int64 n)
{
	const Size	stride = (Size) in->dims * 2;

	for (int64 i = 0; i < in->rows; i++)
	{
		Size		at = (Size) i * in->dims + d;
		Numeric    *num = in->exact_bounds != NULL ?
			in->exact_bounds + (Size) i * stride + (Size) d * 2 : NULL;

		entries[n++] = (OdpRankEntry) {in->lower[at], num ? num[0] : NULL, &in->lower[at]};
		entries[n++] = (OdpRankEntry) {in->upper[at], num ? num[1] : NULL, &in->upper[at]};
	}
	return n;
}

/*
 * Orders the run entries[0 .. n) of equal keys with a numeric among them
 * by value: the others take the value of their key (one conversion for
 * the run).
 */
static void
OdpRankSortRun(OdpRankEntry *entries, int64 n)
{
	Numeric		of_key = NULL;

	for (int64 i = 0; i < n; i++)
		if (entries[i].num == NULL)
		{
			if (of_key == NULL)
				of_key = OdpNumericOfKey(entries[i].key);
			entries[i].num = of_key;
		}
	OdpSortRankValues(entries, n);
}

/* Replaces the keys of dimension d of a and b (or NULL) by dense ranks. */
static void
OdpRankDim(OdpInput *a, OdpInput *b, int d)
{
	int64		total = 2 * (a->rows + (b != NULL ? b->rows : 0));
	OdpRankEntry *entries;
	int64		n = 0;
	uint64		rank = 0;

	entries = MemoryContextAllocHuge(CurrentMemoryContext,
									 sizeof(OdpRankEntry) * (Size) Max(total, 1));
	n = OdpRankCollect(a, d, entries, n);
	if (b != NULL)
		n = OdpRankCollect(b, d, entries, n);
	OdpSortRankKeys(entries, n);

	for (int64 start = 0; start < n;)
	{
		int64		end = start + 1;
		bool		numeric = entries[start].num != NULL;

		while (end < n && entries[end].key == entries[start].key)
			numeric |= entries[end++].num != NULL;
		if (numeric && end - start > 1)
		{
			OdpRankSortRun(entries + start, end - start);
			for (int64 i = start; i < end; i++)
			{
				if (i > start && OdpCompareNumerics(entries[i - 1].num, entries[i].num) != 0)
					rank++;
				*entries[i].slot = rank;
			}
		}
		else
			for (int64 i = start; i < end; i++)
				*entries[i].slot = rank;
		rank++;
		start = end;
		if ((start & (ODP_INPUT_BATCH_ROWS - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(entries);
}

/* See input.h. */
void
OdpRankExactBounds(OdpInput *a, OdpInput *b)
{
	MemoryContext cxt,
				old;

	if (b != NULL && (b->lower == a->lower || b->rows == 0))
		b = NULL;
	if (a->rows == 0 && b != NULL)
	{
		a = b;
		b = NULL;
	}
	if (a->exact_bounds == NULL && (b == NULL || b->exact_bounds == NULL))
		return;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu exact bounds",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	for (int d = 0; d < a->dims; d++)
	{
		if (OdpDimHasNumeric(a, d) || OdpDimHasNumeric(b, d))
			OdpRankDim(a, b, d);
		MemoryContextReset(cxt);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	a->exact_bounds = NULL;
	if (b != NULL)
		b->exact_bounds = NULL;
}
