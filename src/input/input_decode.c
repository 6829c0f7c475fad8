/*-------------------------------------------------------------------------
 *
 * input_decode.c
 *	  Decodes a row's values into the reader's next row: the id, scalar
 *	  feature columns, array values and pgvector values, as float32 or
 *	  float64 (the distances' precision is the reader's: input.h).
 *
 * Array values are read in place from the (possibly short-header)
 * varlena, so that the common case allocates nothing per row; what is
 * allocated (detoasted values, numeric conversions) lives in the reader's
 * row context, which the caller resets every batch.  Values are checked
 * as they are stored: float32 ones must be finite and fit; float64 ones
 * must be finite (a numeric beyond float64's range is an error naming its
 * row), except that with missing values allowed a NULL or NaN
 * value (an array element or a scalar column; never a whole vector) is
 * flagged missing instead.  Values of pgvector's types are read from
 * their stored bytes (layouts: input_pgvector.c) as real[] values are:
 * halfvec widened exactly, sparsevec densified, the same checks.  Regions
 * are decoded by input_regions.c.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/detoast.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "input/input_checks.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

/* ---- checks ---- */

/* Ensure a row's id is not null. */
static inline void
OdpEnsureIdNotNull(bool isnull, const OdpColumn *col)
{
	if (unlikely(isnull))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("id column \"%s\" contains a null value", col->name),
				 errhint("Give every row an id, or filter out rows with a null id in a query source.")));
}

/* Ensure an array element is not null (element is 0-based). */
static inline void
OdpEnsureElementNotNull(bool isnull, const OdpColumn *col, int64 id,
						int element)
{
	if (unlikely(isnull))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column \"%s\" has a null element in the row with id %lld",
						col->name, (long long) id),
				 errdetail("Element %d is null.", element + 1),
				 errhint("%s", ODP_BAD_VALUE_HINT)));
}

/* Ensure an array is one-dimensional and not empty. */
static inline void
OdpEnsureVectorShape(int ndim, int nitems, const OdpColumn *col, int64 id)
{
	if (unlikely(ndim == 0 || (ndim == 1 && nitems == 0)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("column \"%s\" has an empty array in the row with id %lld",
						col->name, (long long) id),
				 errhint("Give every vector at least one element.")));
	if (unlikely(ndim != 1))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("column \"%s\" has a %d-dimensional array in the row with id %lld",
						col->name, ndim, (long long) id),
				 errhint("Store each vector as a one-dimensional array.")));
}

/* Ensure a vector has as many elements as the first one read. */
static inline void
OdpEnsureSameLength(int nitems, int32 dims, const OdpColumn *col, int64 id)
{
	if (unlikely(nitems != dims))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("vectors have different lengths"),
				 errdetail("Column \"%s\" has %d elements in the row with id %lld, but %d in the first row read.",
						   col->name, nitems, (long long) id, (int) dims),
				 errhint("Give every vector the same number of elements.")));
}

/*
 * Ensure a value is finite.  element is the 0-based array element, or -1
 * for a scalar column.
 */
static inline void
OdpEnsureFinite(double value, const OdpColumn *col, int64 id, int element)
{
	if (unlikely(isnan(value) || isinf(value)))
	{
		const char *what = isnan(value) ? "NaN" :
			(value > 0 ? "Infinity" : "-Infinity");

		if (element >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("column \"%s\" has a non-finite value in the row with id %lld",
							col->name, (long long) id),
					 errdetail("Element %d is %s.", element + 1, what),
					 errhint("%s", ODP_BAD_VALUE_HINT)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("column \"%s\" has a non-finite value in the row with id %lld",
							col->name, (long long) id),
					 errdetail("The value is %s.", what),
					 errhint("%s", ODP_BAD_VALUE_HINT)));
	}
}

/* Ensure a finite double fits in float32 (element as for OdpEnsureFinite). */
static inline void
OdpEnsureFloat4Range(double value, const OdpColumn *col, int64 id, int element)
{
	if (unlikely(fabs(value) > FLT_MAX))
	{
		if (element >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("column \"%s\" has a value out of range for type real in the row with id %lld",
							col->name, (long long) id),
					 errdetail("Element %d is %g.", element + 1, value),
					 errhint("Scale the values into the range of type real (about 3.4e38).")));
		else
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("column \"%s\" has a value out of range for type real in the row with id %lld",
							col->name, (long long) id),
					 errdetail("The value is %g.", value),
					 errhint("Scale the values into the range of type real (about 3.4e38).")));
	}
}

/*
 * Returns a numeric value as the nearest double, raising 22003 for a
 * finite one beyond float64's range (element as for OdpEnsureFinite).
 * NaN and the infinities pass through, for the caller's checks.
 */
static double
OdpNumericValue(Datum value, const OdpColumn *col, int64 id, int element)
{
	double		d = OdpNumericToDouble(value);

	if (unlikely(isinf(d)) && !numeric_is_inf(DatumGetNumeric(value)))
	{
		if (element >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("column \"%s\" has a value out of range for type double precision in the row with id %lld",
							col->name, (long long) id),
					 errdetail("Element %d is beyond about 1.8e308.", element + 1),
					 errhint("Scale the values into the range of type double precision.")));
		else
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("column \"%s\" has a value out of range for type double precision in the row with id %lld",
							col->name, (long long) id),
					 errdetail("The value is beyond about 1.8e308."),
					 errhint("Scale the values into the range of type double precision.")));
	}
	return d;
}

/* ---- float32 values ---- */

/* Returns a scalar feature value as float, checked finite and in range. */
static inline float
OdpScalarValue(const OdpColumn *col, Datum value, int64 id)
{
	double		d;

	switch (col->kind)
	{
		case ODP_VALUE_INT2:
			return (float) DatumGetInt16(value);
		case ODP_VALUE_INT4:
			return (float) DatumGetInt32(value);
		case ODP_VALUE_INT8:
			return (float) DatumGetInt64(value);
		case ODP_VALUE_FLOAT4:
			{
				float		f = DatumGetFloat4(value);

				OdpEnsureFinite(f, col, id, -1);
				return f;
			}
		case ODP_VALUE_FLOAT8:
			d = DatumGetFloat8(value);
			break;
		case ODP_VALUE_NUMERIC:
			d = OdpNumericValue(value, col, id, -1);
			break;
		default:
			elog(ERROR, "feature column of unexpected kind %d", (int) col->kind);
			return 0;			/* keep compiler quiet */
	}
	OdpEnsureFinite(d, col, id, -1);
	OdpEnsureFloat4Range(d, col, id, -1);
	return (float) d;
}

/*
 * Whether all n floats are finite (no NaN, no infinity).  A float is
 * finite exactly when its exponent bits are not all ones, that is when
 * its magnitude's bits plus the exponent's lowest bit stay below the sign
 * bit; OR-ing those sums tests a whole row at the end, with no comparison
 * per element, so the loop runs on vectors (it is a full pass over every
 * input row: scalar, it cost a quarter of reading TOASTed float8[] rows).
 */
#define ODP_F32_MAGNITUDE	0x7fffffffU
#define ODP_F32_EXP_LOW		0x00800000U
#define ODP_F32_SIGN		0x80000000U

static inline bool
OdpAllFinite(const float *v, int n)
{
	uint32		bad = 0;
	int			i = 0;

#if defined(__GNUC__)
	typedef uint32 OdpU32x4 __attribute__((vector_size(16)));
	const OdpU32x4 mag = {ODP_F32_MAGNITUDE, ODP_F32_MAGNITUDE, ODP_F32_MAGNITUDE, ODP_F32_MAGNITUDE};
	const OdpU32x4 low = {ODP_F32_EXP_LOW, ODP_F32_EXP_LOW, ODP_F32_EXP_LOW, ODP_F32_EXP_LOW};
	OdpU32x4	acc0 = {0, 0, 0, 0};
	OdpU32x4	acc1 = {0, 0, 0, 0};

	for (; i + 8 <= n; i += 8)
	{
		OdpU32x4	a;
		OdpU32x4	b;

		memcpy(&a, v + i, sizeof(a));
		memcpy(&b, v + i + 4, sizeof(b));
		acc0 |= (a & mag) + low;
		acc1 |= (b & mag) + low;
	}
	acc0 |= acc1;
	bad = acc0[0] | acc0[1] | acc0[2] | acc0[3];
#endif
	for (; i < n; i++)
	{
		uint32		bits;

		memcpy(&bits, &v[i], sizeof(bits));
		bad |= (bits & ODP_F32_MAGNITUDE) + ODP_F32_EXP_LOW;
	}
	return (bad & ODP_F32_SIGN) == 0;
}

/*
 * Copies n contiguous elements of the given kind from src (possibly
 * unaligned) to dst as floats, checking each value; float4 elements may
 * already be in place (src == dst).
 */
static void
OdpCopyElements(const OdpColumn *col, const char *src, int n, float *dst,
				int64 id)
{
	switch (col->kind)
	{
		case ODP_VALUE_FLOAT4:
			if (src != (const char *) dst)
				memcpy(dst, src, sizeof(float) * n);
			if (unlikely(!OdpAllFinite(dst, n)))
			{
				for (int i = 0; i < n; i++)
					OdpEnsureFinite(dst[i], col, id, i);
			}
			break;
		case ODP_VALUE_FLOAT8:
			for (int i = 0; i < n; i++)
			{
				double		d;

				memcpy(&d, src + sizeof(double) * i, sizeof(double));
				OdpEnsureFinite(d, col, id, i);
				OdpEnsureFloat4Range(d, col, id, i);
				dst[i] = (float) d;
			}
			break;
		case ODP_VALUE_INT2:
			for (int i = 0; i < n; i++)
			{
				int16		v;

				memcpy(&v, src + sizeof(int16) * i, sizeof(int16));
				dst[i] = (float) v;
			}
			break;
		case ODP_VALUE_INT4:
			for (int i = 0; i < n; i++)
			{
				int32		v;

				memcpy(&v, src + sizeof(int32) * i, sizeof(int32));
				dst[i] = (float) v;
			}
			break;
		case ODP_VALUE_INT8:
			for (int i = 0; i < n; i++)
			{
				int64		v;

				memcpy(&v, src + sizeof(int64) * i, sizeof(int64));
				dst[i] = (float) v;
			}
			break;
		default:
			elog(ERROR, "array column of unexpected kind %d", (int) col->kind);
	}
}

/* Returns the size in bytes of one element of a fixed-width kind. */
static inline Size
OdpElementSize(OdpValueKind kind)
{
	switch (kind)
	{
		case ODP_VALUE_INT2:
			return sizeof(int16);
		case ODP_VALUE_INT4:
		case ODP_VALUE_FLOAT4:
			return sizeof(int32);
		case ODP_VALUE_INT8:
		case ODP_VALUE_FLOAT8:
			return sizeof(int64);
		default:
			return 0;
	}
}

/* ---- float64 values, with missing ones ---- */

/*
 * Stores value d of a row's element i (col and element name it in errors,
 * element -1 for a scalar column) into the float64 row dst (and its
 * missing flags miss, when the reader has them): NaN is a missing value
 * where the reader accepts them; infinities are always errors.
 */
static inline void
OdpStore64(OdpReader *r, double *dst, uint8 *miss, int i, double d,
		   const OdpColumn *col, int64 id, int element)
{
	if (unlikely(isnan(d)) && r->missing_ok)
	{
		dst[i] = 0.0;
		miss[i] = 1;
		r->any_missing = true;
		return;
	}
	OdpEnsureFinite(d, col, id, element);
	dst[i] = d;
	if (miss != NULL)
		miss[i] = 0;
}

/* Marks element i of a row missing, or raises the null-element error. */
static inline void
OdpStoreNull64(OdpReader *r, double *dst, uint8 *miss, int i,
			   const OdpColumn *col, int64 id, int element)
{
	if (!r->missing_ok)
	{
		if (element >= 0)
			OdpEnsureElementNotNull(true, col, id, element);
		OdpEnsureValueNotNull(true, col, id);
	}
	dst[i] = 0.0;
	miss[i] = 1;
	r->any_missing = true;
}

/* Whether all n doubles are finite: as OdpAllFinite, on 64-bit lanes. */
#define ODP_F64_MAGNITUDE	UINT64CONST(0x7fffffffffffffff)
#define ODP_F64_EXP_LOW		UINT64CONST(0x0010000000000000)
#define ODP_F64_SIGN		UINT64CONST(0x8000000000000000)

static inline bool
OdpAllFinite64(const double *v, int n)
{
	uint64		bad = 0;
	int			i = 0;

#if defined(__GNUC__)
	typedef uint64 OdpU64x2 __attribute__((vector_size(16)));
	const OdpU64x2 mag = {ODP_F64_MAGNITUDE, ODP_F64_MAGNITUDE};
	const OdpU64x2 low = {ODP_F64_EXP_LOW, ODP_F64_EXP_LOW};
	OdpU64x2	acc0 = {0, 0};
	OdpU64x2	acc1 = {0, 0};

	for (; i + 4 <= n; i += 4)
	{
		OdpU64x2	a;
		OdpU64x2	b;

		memcpy(&a, v + i, sizeof(a));
		memcpy(&b, v + i + 2, sizeof(b));
		acc0 |= (a & mag) + low;
		acc1 |= (b & mag) + low;
	}
	acc0 |= acc1;
	bad = acc0[0] | acc0[1];
#endif
	for (; i < n; i++)
	{
		uint64		bits;

		memcpy(&bits, &v[i], sizeof(bits));
		bad |= (bits & ODP_F64_MAGNITUDE) + ODP_F64_EXP_LOW;
	}
	return (bad & ODP_F64_SIGN) == 0;
}

/*
 * Copies the n elements of a fixed-width array body at src (possibly
 * unaligned; with a null bitmap, or NULL, where only the non-null
 * elements are stored, one after the other) into the float64 row dst and
 * its flags miss, checking each value.  float8 arrays without nulls, the
 * common case, are copied whole (or are already in place: src == dst) and
 * checked in one pass.
 */
static void
OdpCopyElements64(OdpReader *r, const OdpColumn *col, const char *src, int n,
				  const bits8 *bitmap, double *dst, uint8 *miss, int64 id)
{
	Size		elsize = OdpElementSize(col->kind);

	if (col->kind == ODP_VALUE_FLOAT8 && bitmap == NULL)
	{
		if (src != (const char *) dst)
			memcpy(dst, src, sizeof(double) * n);
		if (miss != NULL)
			memset(miss, 0, n);
		if (likely(OdpAllFinite64(dst, n)))
			return;
	}
	for (int i = 0; i < n; i++)
	{
		double		d;

		if (bitmap != NULL && (bitmap[i / 8] & (1 << (i % 8))) == 0)
		{
			OdpStoreNull64(r, dst, miss, i, col, id, i);
			continue;
		}
		switch (col->kind)
		{
			case ODP_VALUE_INT2:
				{
					int16		v;

					memcpy(&v, src, sizeof(v));
					d = (double) v;
					break;
				}
			case ODP_VALUE_INT4:
				{
					int32		v;

					memcpy(&v, src, sizeof(v));
					d = (double) v;
					break;
				}
			case ODP_VALUE_INT8:
				{
					int64		v;

					memcpy(&v, src, sizeof(v));
					d = (double) v;
					break;
				}
			case ODP_VALUE_FLOAT4:
				{
					float		v;

					memcpy(&v, src, sizeof(v));
					d = (double) v;
					break;
				}
			case ODP_VALUE_FLOAT8:
				memcpy(&d, src, sizeof(d));
				break;
			default:
				elog(ERROR, "array column of unexpected kind %d", (int) col->kind);
				return;
		}
		src += elsize;
		OdpStore64(r, dst, miss, i, d, col, id, i);
	}
}

/* ---- rows ---- */

/* The next row's values (data or data64). */
static inline char *
OdpRowStart(OdpReader *r)
{
	Size		at = (Size) r->slot * (Size) r->dims;

	return r->f64 ? (char *) (r->data64 + at) : (char *) (r->data + at);
}

/* Returns the bytes of one value of the reader's rows. */
static inline Size
OdpOutBytes(const OdpReader *r)
{
	return r->f64 ? sizeof(double) : sizeof(float);
}

/*
 * Returns where the next row's r->dims stored elements of elsize bytes
 * (no wider than the row's values) may lie so that converting them to the
 * row's type, first to last, overwrites only elements already converted:
 * at the end of the row (its start when the widths are equal).
 */
static inline char *
OdpRowTail(OdpReader *r, Size elsize)
{
	return OdpRowStart(r) + (OdpOutBytes(r) - elsize) * (Size) r->dims;
}

/*
 * Stores the next row's r->dims elements at src into the row, checked
 * as col's values: col's kind (float4 for the pgvector types) says what
 * they are; src may be unaligned, or lie in the row itself at OdpRowTail.
 */
static void
OdpStoreElements(OdpReader *r, const OdpColumn *col, const char *src, int64 id)
{
	Size		at = (Size) r->slot * (Size) r->dims;

	if (r->f64)
		OdpCopyElements64(r, col, src, r->dims, NULL, r->data64 + at,
						  r->missing ? r->missing + at : NULL, id);
	else
		OdpCopyElements(col, src, r->dims, r->data + at, id);
}

/*
 * Returns whether header, the first bytes of a value's body fetched from
 * TOAST, describes n elements as col's format stores them: for an array,
 * one dimension, no nulls and the column's element type, else false (the
 * general path then reads it); a pgvector value whose header does not
 * match its length is corrupt.
 */
static bool
OdpInPlaceHeaderValid(const OdpColumn *col, const char *header, Size n)
{
	int32		fields[5];		/* ndim, dataoffset, elemtype, dim, lbound */

	if (col->format != ODP_FORMAT_ARRAY)
	{
		if ((Size) OdpPgvectorHeaderDim(col->format, header) != n)
			OdpCorruptPgvector(col->format, col->name);
		return true;
	}
	memcpy(fields, header, sizeof(fields));
	return fields[0] == 1 && fields[1] == 0 &&
		fields[2] == (col->kind == ODP_VALUE_FLOAT8 ? FLOAT8OID : FLOAT4OID) &&
		(Size) fields[3] == n;
}

/*
 * Reads a vector stored out of line (TOASTed) and uncompressed, whose
 * stored elements are no wider than the reader's values: a one-
 * dimensional real[] without nulls, or a vector or halfvec, into float32
 * or float64 rows; a float8[] into float64 rows.  Its elements are
 * fetched from the TOAST table straight into the end of the row
 * (OdpRowTail), with no detoasted copy in between, then converted and
 * checked in place.  Returns false, having read nothing, for any other
 * value, which the general path reads.
 */
static bool
OdpReadVectorInPlace(OdpReader *r, const OdpColumn *col, struct varlena *raw,
					 int64 id)
{
	struct varatt_external toast;
	char		buf[VARHDRSZ + ARR_OVERHEAD_NONULLS(1)];
	char		saved[ARR_OVERHEAD_NONULLS(1)];
	Size		header;
	Size		elsize;
	Size		extsize;
	Size		n;
	Relation	toastrel;
	char	   *base;
	char	   *elems;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return false;
	if (col->format == ODP_FORMAT_ARRAY)
	{
		if (col->kind != ODP_VALUE_FLOAT4 && col->kind != ODP_VALUE_FLOAT8)
			return false;
		header = ARR_OVERHEAD_NONULLS(1) - VARHDRSZ;
		elsize = OdpElementSize(col->kind);
	}
	else if (col->format == ODP_FORMAT_VECTOR || col->format == ODP_FORMAT_HALFVEC)
	{
		header = OdpPgvectorHeaderBytes(col->format);
		elsize = OdpPgvectorElementBytes(col->format);
	}
	else
		return false;
	VARATT_EXTERNAL_GET_POINTER(toast, raw);
	extsize = VARATT_EXTERNAL_GET_EXTSIZE(toast);
	if (elsize > OdpOutBytes(r) || VARATT_EXTERNAL_IS_COMPRESSED(toast) ||
		extsize < header + elsize || (extsize - header) % elsize != 0)
		return false;
	n = (extsize - header) / elsize;

	toastrel = table_open(toast.va_toastrelid, AccessShareLock);
	base = r->f64 ? (char *) r->data64 : (char *) r->data;
	if (r->dims >= 0 && (Size) r->dims == n && elsize == OdpOutBytes(r) &&
		col->format == ODP_FORMAT_ARRAY && VARHDRSZ + extsize <= ODP_STREAM_SCRATCH_MAX)
	{
		/*
		 * Through a scratch buffer that stays in the cache, then into the
		 * row by stores that bypass it (input_stream.c), checked finite on
		 * the way; a value that is not is read again by the general path,
		 * which reports it (or marks it missing).
		 */
		char	   *scratch = OdpStreamScratch(VARHDRSZ + extsize);

		table_relation_fetch_toast_slice(toastrel, toast.va_valueid, (int32) extsize,
										 0, (int32) extsize, (struct varlena *) scratch);
		table_close(toastrel, AccessShareLock);
		if (!OdpInPlaceHeaderValid(col, scratch + VARHDRSZ, n))
			return false;
		OdpEnsureVectorShape(1, (int) n, col, id);
		if (!OdpStreamValues(OdpRowStart(r), scratch + VARHDRSZ + header, n, elsize))
			OdpStoreElements(r, col, scratch + VARHDRSZ + header, id);
		else if (r->missing != NULL)
			memset(r->missing + (Size) r->slot * (Size) r->dims, 0, n);
		return true;
	}
	if (r->dims >= 0 && (Size) r->dims == n &&
		OdpRowTail(r, elsize) - header >= base)
	{
		/*
		 * One fetch of the whole value, its header landing just before
		 * the elements: in the row's own room, or on the end of the rows
		 * before (complete, kept aside and put back).  The slice is
		 * written at VARDATA(result) only.
		 */
		char	   *row = OdpRowStart(r);
		char	   *hdr;
		Size		covered;

		elems = OdpRowTail(r, elsize);
		hdr = elems - header;
		covered = hdr < row ? (Size) (row - hdr) : 0;
		memcpy(saved, hdr, covered);
		table_relation_fetch_toast_slice(toastrel, toast.va_valueid, (int32) extsize,
										 0, (int32) extsize,
										 (struct varlena *) (hdr - VARHDRSZ));
		memcpy(buf + VARHDRSZ, hdr, header);
		memcpy(hdr, saved, covered);
	}
	else
	{
		/* the first row, or a length that differs: its header first */
		table_relation_fetch_toast_slice(toastrel, toast.va_valueid, (int32) extsize,
										 0, (int32) header, (struct varlena *) buf);
		elems = NULL;
	}
	if (!OdpInPlaceHeaderValid(col, buf + VARHDRSZ, n))
	{
		table_close(toastrel, AccessShareLock);
		return false;
	}
	OdpEnsureVectorShape(1, (int) n, col, id);
	if (r->dims < 0)
		OdpReaderSetDims(r, (int32) n);
	OdpEnsureSameLength((int) n, r->dims, col, id);
	if (elems == NULL)
	{
		elems = OdpRowTail(r, elsize);
		table_relation_fetch_toast_slice(toastrel, toast.va_valueid, (int32) extsize,
										 (int32) header, (int32) (extsize - header),
										 (struct varlena *) (elems - VARHDRSZ));
	}
	table_close(toastrel, AccessShareLock);

	if (col->format == ODP_FORMAT_HALFVEC)
	{
		float	   *floats = (float *) OdpRowTail(r, sizeof(float));

		OdpHalvesToFloats(elems, r->dims, floats);
		elems = (char *) floats;
	}
	OdpStoreElements(r, col, elems, id);
	return true;
}

/*
 * Reads a value of one of pgvector's types into the next row: in place
 * where it is TOASTed uncompressed (OdpReadVectorInPlace), else from the
 * (detoasted) value.  halfvec and sparsevec values become float4 values
 * in the row's room first (sparsevec densified); every value is then
 * stored and checked as a real[]'s would be.
 */
static void
OdpReadPgvector(OdpReader *r, const OdpColumn *col, Datum value, int64 id)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(value);
	struct varlena *v;
	OdpPgvectorParts parts;

	if (OdpReadVectorInPlace(r, col, raw, id))
		return;
	v = pg_detoast_datum_packed(raw);
	OdpPgvectorSplit(col->format, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v),
					 col->name, &parts);
	if (r->dims < 0)
		OdpReaderSetDims(r, parts.dim);
	OdpEnsureSameLength(parts.dim, r->dims, col, id);
	if (col->format == ODP_FORMAT_VECTOR)
		OdpStoreElements(r, col, parts.values, id);
	else
	{
		float	   *floats = (float *) OdpRowTail(r, sizeof(float));

		OdpPgvectorToFloats(col->format, &parts, col->name, floats);
		OdpStoreElements(r, col, (const char *) floats, id);
	}

	/* toasted or compressed values were copied; free them now */
	if (v != raw)
		pfree(v);
}

/*
 * Reads an array value into the next row of data (or data64).  Fixed-width
 * element types are read in place from the packed (possibly short-header)
 * varlena, whose body has the ArrayType layout shifted by VARHDRSZ;
 * numeric arrays are deconstructed.  A null element is an error unless
 * the reader takes missing values (float64 only).
 */
static void
OdpReadVector(OdpReader *r, const OdpColumn *col, Datum value, int64 id)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(value);
	struct varlena *v;
	const char *body;
	Size		bodylen;
	int32		ndim;
	int32		dataoffset;
	int32		nitems = 0;
	Size		elsize = OdpElementSize(col->kind);
	Size		at;
	float	   *dst = NULL;
	double	   *dst64 = NULL;
	uint8	   *miss = NULL;

	if (OdpReadVectorInPlace(r, col, raw, id))
		return;
	v = pg_detoast_datum_packed(raw);
	body = VARDATA_ANY(v);
	bodylen = VARSIZE_ANY_EXHDR(v);

	/* body: ndim, dataoffset, elemtype, dims[ndim], lbound[ndim], ... */
	if (bodylen < 3 * sizeof(int32))
		elog(ERROR, "corrupt array in column \"%s\"", col->name);
	memcpy(&ndim, body, sizeof(int32));
	memcpy(&dataoffset, body + sizeof(int32), sizeof(int32));
	if (ndim > 0)
	{
		if (bodylen < (3 + 2 * (Size) ndim) * sizeof(int32))
			elog(ERROR, "corrupt array in column \"%s\"", col->name);
		memcpy(&nitems, body + 3 * sizeof(int32), sizeof(int32));
	}
	OdpEnsureVectorShape(ndim, nitems, col, id);

	if (r->dims < 0)
		OdpReaderSetDims(r, nitems);
	OdpEnsureSameLength(nitems, r->dims, col, id);
	at = (Size) r->slot * (Size) r->dims;
	if (r->f64)
	{
		dst64 = r->data64 + at;
		miss = r->missing ? r->missing + at : NULL;
	}
	else
		dst = r->data + at;

	if (elsize == 0)
	{
		/* numeric elements: the general, allocating path */
		ArrayType  *array = DatumGetArrayTypeP(PointerGetDatum(v));
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(array, NUMERICOID, -1, false, TYPALIGN_INT,
						  &elems, &nulls, &n);
		Assert(n == nitems);
		for (int i = 0; i < n; i++)
		{
			double		d;

			if (r->f64)
			{
				if (nulls[i])
					OdpStoreNull64(r, dst64, miss, i, col, id, i);
				else
					OdpStore64(r, dst64, miss, i,
							   OdpNumericValue(elems[i], col, id, i), col, id, i);
				continue;
			}
			OdpEnsureElementNotNull(nulls[i], col, id, i);
			d = OdpNumericValue(elems[i], col, id, i);
			OdpEnsureFinite(d, col, id, i);
			OdpEnsureFloat4Range(d, col, id, i);
			dst[i] = (float) d;
		}
	}
	else
	{
		const bits8 *bitmap = NULL;
		Size		offset;
		Size		stored = (Size) nitems;

		if (dataoffset != 0)
		{
			/* a null bitmap follows lbound: a clear bit is a null element */
			bitmap = (const bits8 *) body + (3 + 2 * (Size) ndim) * sizeof(int32);
			if (bodylen < (3 + 2 * (Size) ndim) * sizeof(int32) +
				((Size) nitems + 7) / 8)
				elog(ERROR, "corrupt array in column \"%s\"", col->name);
			for (int i = 0; i < nitems; i++)
			{
				bool		isnull = (bitmap[i / 8] & (1 << (i % 8))) == 0;

				if (!r->missing_ok)
					OdpEnsureElementNotNull(isnull, col, id, i);
				stored -= isnull ? 1 : 0;
			}
			offset = (Size) dataoffset - VARHDRSZ;
		}
		else
			offset = ARR_OVERHEAD_NONULLS(ndim) - VARHDRSZ;
		/* only the non-null elements are stored */
		if (offset + elsize * stored > bodylen)
			elog(ERROR, "corrupt array in column \"%s\"", col->name);
		if (r->f64)
			OdpCopyElements64(r, col, body + offset, nitems, bitmap, dst64, miss, id);
		else
			OdpCopyElements(col, body + offset, nitems, dst, id);
	}

	/* toasted or compressed values were copied; free them now */
	if (v != raw)
		pfree(v);
}

/*
 * Appends one row.  values and isnull are indexed by column position - 1
 * and must cover plan->maxpos.  Call in the reader's row context.
 */
void
OdpReaderAddRow(OdpReader *r, const Datum *values, const bool *isnull)
{
	const OdpColumnPlan *plan = r->plan;
	int			idx = plan->id.pos - 1;
	int64		id;

	OdpEnsureIdNotNull(isnull[idx], &plan->id);
	id = OdpIdValue(&plan->id, values[idx]);

	r->slot = OdpReaderSlot(r, id);

	if (plan->regions)
	{
		/* stores the row's pieces and their ids */
		OdpRegionsAddRow(r, values, isnull, id);
		return;
	}
	if (plan->vector)
	{
		const OdpColumn *col = &plan->features[0];

		idx = col->pos - 1;
		OdpEnsureValueNotNull(isnull[idx], col, id);
		if (col->format != ODP_FORMAT_ARRAY)
			OdpReadPgvector(r, col, values[idx], id);
		else
			OdpReadVector(r, col, values[idx], id);
	}
	else if (r->f64)
	{
		const Size	at = (Size) r->slot * (Size) r->dims;
		double	   *dst = r->data64 + at;
		uint8	   *miss = r->missing ? r->missing + at : NULL;

		for (int i = 0; i < plan->nfeatures; i++)
		{
			const OdpColumn *col = &plan->features[i];

			idx = col->pos - 1;
			if (isnull[idx])
				OdpStoreNull64(r, dst, miss, i, col, id, -1);
			else if (col->kind == ODP_VALUE_NUMERIC)
				OdpStore64(r, dst, miss, i, OdpNumericValue(values[idx], col, id, -1),
						   col, id, -1);
			else
				OdpStore64(r, dst, miss, i, OdpDoubleValue(col->kind, values[idx]),
						   col, id, -1);
		}
	}
	else
	{
		float	   *dst = r->data + (Size) r->slot * (Size) r->dims;

		for (int i = 0; i < plan->nfeatures; i++)
		{
			const OdpColumn *col = &plan->features[i];

			idx = col->pos - 1;
			OdpEnsureValueNotNull(isnull[idx], col, id);
			dst[i] = OdpScalarValue(col, values[idx], id);
		}
	}

	OdpReaderPushId(r, id, false);
}

/*
 * Appends the row in slot (deforming only the columns read), in the
 * reader's row context; every ODP_INPUT_RESET_ROWS rows drops their
 * garbage, and every batch lets the user cancel.  The one loop body of
 * every way of reading rows.
 */
void
OdpReaderAddSlot(OdpReader *r, TupleTableSlot *slot)
{
	MemoryContext oldcxt;

	/*
	 * A row of an id and a range, read from the tuple's bytes: deforming it
	 * and the general decoding took as long as PostgreSQL's whole scan.
	 */
	if (r->direct == ODP_DIRECT_UNKNOWN || r->direct == ODP_DIRECT_RANGE)
	{
		const char *data = OdpDirectData(r, slot);

		if (data != NULL && r->direct == ODP_DIRECT_RANGE &&
			OdpRegionsAddTuple(r, data, OdpDirectId(r, data)))
		{
			if ((++r->added & (ODP_INPUT_BATCH_ROWS - 1)) == 0)
				CHECK_FOR_INTERRUPTS();
			return;
		}
	}
	slot_getsomeattrs(slot, r->plan->maxpos);
	oldcxt = MemoryContextSwitchTo(r->rowcxt);
	OdpReaderAddRow(r, slot->tts_values, slot->tts_isnull);
	MemoryContextSwitchTo(oldcxt);
	if ((++r->added & (ODP_INPUT_RESET_ROWS - 1)) == 0)
	{
		MemoryContextReset(r->rowcxt);
		if ((r->added & (ODP_INPUT_BATCH_ROWS - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/* See input_internal.h. */
int64
OdpSlotId(OdpReader *r, TupleTableSlot *slot)
{
	const OdpColumn *col = &r->plan->id;
	const char *data = OdpDirectData(r, slot);

	if (data != NULL)
		return OdpDirectId(r, data);
	slot_getsomeattrs(slot, col->pos);
	OdpEnsureIdNotNull(slot->tts_isnull[col->pos - 1], col);
	return OdpIdValue(col, slot->tts_values[col->pos - 1]);
}
