/*-------------------------------------------------------------------------
 *
 * input_exact.c
 *	  Numeric bounds of regions, compared exactly as PostgreSQL compares
 *	  numerics.
 *
 * A numeric such as 462.7 lies between two double precision values, and
 * two numerics can lie between the same two, so no 64-bit key computed
 * from one value alone orders every numeric exactly.  The reader gives
 * each numeric bound a provisional key, the order key of the double
 * nearest to it, and keeps the numeric (a copy, in an arena of the
 * output's lifetime).  Rounding never reverses an order, so distinct keys
 * already order their values; and two distinct numerics of at most 15
 * significant digits (DBL_DIG) in double precision's normal range never
 * round to the same double.  So where a dimension of both sources holds
 * only such numerics, the provisional keys are exact and nothing more is
 * done: the common case of decimals (prices, measurements) costs a
 * conversion per bound.  Otherwise (a longer numeric, one beyond double
 * precision's range, or numerics mixed with other bounds in the
 * dimension) the dimension is ranked once both sources are read: all its
 * bounds of both sources are sorted by key and, within equal keys, by
 * numeric comparison (a double precision bound taking part as its exact
 * decimal expansion), and every key becomes the bound's dense rank.
 * Ranks keep order and equality, which is all the engine's comparisons
 * use, so both paths compare numerics exactly.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_exact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "input/input_internal.h"
#include "miscadmin.h"
#include "odp_engine.h"
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

/*
 * Whether the decimal text of a finite numeric has at most DBL_DIG
 * significant digits.
 */
static bool
OdpShortDecimal(const char *text)
{
	int			digits = 0;
	int			zeros = 0;		/* zeros since the last other digit */
	bool		leading = true;

	for (const char *c = text; *c != '\0'; c++)
	{
		if (*c < '0' || *c > '9')
			continue;
		if (*c == '0')
		{
			if (!leading)
				zeros++;
			continue;
		}
		leading = false;
		digits += zeros + 1;
		zeros = 0;
		if (digits > DBL_DIG)
			return false;
	}
	return true;
}

/*
 * numeric's stored form (numeric.c; pg_upgrade keeps it): after the
 * varlena header a 16-bit header whose top bits say short, long (positive
 * or negative) or special; a short header holds the sign and weight, a
 * long one is followed by the weight; then the base-10000 digits, with no
 * leading or trailing zero digit.
 */
#define ODP_NUMERIC_FORM_MASK		0xC000
#define ODP_NUMERIC_NEG				0x4000
#define ODP_NUMERIC_SHORT			0x8000
#define ODP_NUMERIC_SPECIAL			0xC000
#define ODP_NUMERIC_SHORT_NEG		0x2000
#define ODP_NUMERIC_SHORT_WEIGHT_NEG 0x0040
#define ODP_NUMERIC_SHORT_WEIGHT	0x003F
#define ODP_NUMERIC_NBASE			10000

/* Powers of ten a double holds exactly. */
static const double odp_exact_pow10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

/*
 * The double nearest to a finite numeric num of at most 15 significant
 * digits, S * 10^e with |e| <= 22, from its digits: S and 10^|e| are
 * exact doubles, so one multiplication or division rounds correctly
 * (Clinger's fast path); false for any other numeric.
 */
static bool
OdpNumericFastDouble(Numeric num, double *out)
{
	const char *body = VARDATA(num);
	Size		len = VARSIZE(num) - VARHDRSZ;
	uint16		header;
	uint16		digit;
	int			weight;
	bool		negative;
	Size		at;
	int			ndigits;
	uint64		s = 0;
	int			e;

	if (len < sizeof(uint16))
		return false;
	memcpy(&header, body, sizeof(header));
	if ((header & ODP_NUMERIC_FORM_MASK) == ODP_NUMERIC_SPECIAL)
		return false;
	if ((header & ODP_NUMERIC_FORM_MASK) == ODP_NUMERIC_SHORT)
	{
		negative = (header & ODP_NUMERIC_SHORT_NEG) != 0;
		weight = (header & ODP_NUMERIC_SHORT_WEIGHT_NEG) ? (int) (header | ~ODP_NUMERIC_SHORT_WEIGHT) :
			(int) (header & ODP_NUMERIC_SHORT_WEIGHT);
		at = sizeof(uint16);
	}
	else
	{
		int16		w;

		if (len < 2 * sizeof(uint16))
			return false;
		negative = (header & ODP_NUMERIC_FORM_MASK) == ODP_NUMERIC_NEG;
		memcpy(&w, body + sizeof(uint16), sizeof(w));
		weight = w;
		at = 2 * sizeof(uint16);
	}
	ndigits = (int) ((len - at) / sizeof(uint16));
	if (ndigits == 0)
	{
		*out = 0.0;
		return true;
	}
	if (ndigits > 4)
		return false;
	for (int i = 0; i < ndigits; i++)
	{
		memcpy(&digit, body + at + i * sizeof(uint16), sizeof(digit));
		if (digit >= ODP_NUMERIC_NBASE)
			return false;
		s = s * ODP_NUMERIC_NBASE + digit;
	}
	e = 4 * (weight - ndigits + 1);
	while (s % 10 == 0)
	{
		s /= 10;
		e++;
	}
	if (s >= UINT64CONST(1000000000000000) || e > 22 || e < -22)
		return false;
	*out = e >= 0 ? (double) s * odp_exact_pow10[e] : (double) s / odp_exact_pow10[-e];
	if (negative)
		*out = -*out;
	return true;
}

/* See input_internal.h. */
bool
OdpExactKey(OdpReader *r, Datum value, uint64 *key, Numeric *kept)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(value);
	struct varlena *packed = pg_detoast_datum_packed(raw);
	Size		len = VARSIZE_ANY_EXHDR(packed);
	Numeric		num;
	double		nearest;

	/* without its value kept (a parallel read), a copy for the row */
	num = r->keep_exact ? OdpArenaAlloc(r, VARHDRSZ + len) : palloc(VARHDRSZ + len);

	/* the kept copy has a 4-byte header, as numeric's functions want */
	SET_VARSIZE(num, VARHDRSZ + len);
	memcpy(VARDATA(num), VARDATA_ANY(packed), len);
	if (packed != raw)
		pfree(packed);
	if (numeric_is_nan(num))
		return false;
	*kept = num;
	if (numeric_is_inf(num))
	{
		*kept = NULL;
		*key = odp_order_float64(DatumGetFloat8(DirectFunctionCall1(numeric_float8,
																	 NumericGetDatum(num))));
		return true;
	}
	if (!OdpNumericFastDouble(num, &nearest))
	{
		char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out,
															   NumericGetDatum(num)));

		/* strtod rounds to nearest; beyond the range it gives the infinity */
		nearest = strtod(text, NULL);
		if (!OdpShortDecimal(text) || isinf(nearest) ||
			(nearest != 0.0 && fabs(nearest) < DBL_MIN))
			r->exact_long = true;
		pfree(text);
	}
	*key = odp_order_float64(nearest);
	if (!r->keep_exact)
	{
		*kept = NULL;
		pfree(num);
	}
	return true;
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

#define ST_SORT OdpSortRankValues
#define ST_ELEMENT_TYPE OdpRankEntry
#define ST_COMPARE(a, b) OdpCompareNumerics((a)->num, (b)->num)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * The ODP_EXACT_* flags of dimension d of in (NULL: none); a source
 * without numeric bounds has bounds of another type only.
 */
static uint8
OdpDimFlags(const OdpInput *in, int d)
{
	if (in == NULL || in->rows == 0)
		return 0;
	return in->exact_dims != NULL ? in->exact_dims[d] : ODP_EXACT_OTHER;
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

/*
 * Orders entries[0 .. n) by key: a radix sort of the keys carrying their
 * places, then the entries moved to theirs.
 */
static void
OdpSortRankKeys(OdpRankEntry *entries, int64 n)
{
	uint64	   *keys;
	uint32	   *order;
	OdpRankEntry *sorted;

	if (n > (int64) PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many numeric bounds to rank: %lld", (long long) n)));
	keys = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint64) * (Size) Max(n, 1));
	order = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint32) * (Size) Max(n, 1));
	for (int64 i = 0; i < n; i++)
	{
		keys[i] = entries[i].key;
		order[i] = (uint32) i;
	}
	if (!odp_sort_keys(keys, order, n))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory ranking numeric bounds")));
	CHECK_FOR_INTERRUPTS();
	sorted = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(OdpRankEntry) * (Size) Max(n, 1));
	for (int64 i = 0; i < n; i++)
		sorted[i] = entries[order[i]];
	memcpy(entries, sorted, sizeof(OdpRankEntry) * (Size) n);
	pfree(sorted);
	pfree(order);
	pfree(keys);
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

/* Whether dimension d of a and b (or NULL) must be ranked. */
static bool
OdpDimNeedsRank(const OdpInput *a, const OdpInput *b, int d)
{
	uint8		flags = OdpDimFlags(a, d) | OdpDimFlags(b, d);
	bool		long_numeric = (a != NULL && a->rows > 0 && a->exact_long) ||
		(b != NULL && b->rows > 0 && b->exact_long);

	/* keys of short decimals alone are exact already */
	return (flags & ODP_EXACT_NUMERIC) && ((flags & ODP_EXACT_OTHER) || long_numeric);
}

/* See input_internal.h. */
bool
OdpExactNeedsValues(const uint8 *dims, bool exact_long)
{
	for (int d = 0; d < ODP_MAX_INTERVAL_DIMS; d++)
		if ((dims[d] & ODP_EXACT_NUMERIC) && ((dims[d] & ODP_EXACT_OTHER) || exact_long))
			return true;
	return false;
}

/* See input.h. */
bool
OdpExactValuesMissing(const OdpInput *in, const OdpInput *other)
{
	if (in == NULL || in->rows == 0 || in->exact_dims == NULL || in->exact_kept)
		return false;
	if (other != NULL && other->lower == in->lower)
		other = NULL;
	for (int d = 0; d < in->dims; d++)
		if ((in->exact_dims[d] & ODP_EXACT_NUMERIC) && OdpDimNeedsRank(in, other, d))
			return true;
	return false;
}

/* See input.h. */
bool
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
	if (a->exact_dims == NULL && (b == NULL || b->exact_dims == NULL))
		return true;
	if (OdpExactValuesMissing(a, b) || OdpExactValuesMissing(b, a))
		return false;
	/* keys are rewritten in place: a cached table's are shared */
	OdpInputOwnArrays(a);
	if (b != NULL)
		OdpInputOwnArrays(b);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu exact bounds",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	for (int d = 0; d < a->dims; d++)
	{
		if (OdpDimNeedsRank(a, b, d))
			OdpRankDim(a, b, d);
		MemoryContextReset(cxt);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	a->exact_bounds = NULL;
	a->exact_dims = NULL;
	if (b != NULL)
	{
		b->exact_bounds = NULL;
		b->exact_dims = NULL;
	}
	return true;
}
