/*-------------------------------------------------------------------------
 *
 * input_pgvector.c
 *	  The types of the pgvector extension (vector, halfvec, sparsevec) as
 *	  feature columns: found in the catalog at call time, and read from
 *	  their stored bytes.
 *
 * odp_gpu does not link against pgvector, which may be absent, installed
 * after odp_gpu, or installed in any schema of any database (relocatable):
 * a type is pgvector's when it is a base type called vector, halfvec or
 * sparsevec, of variable length, whose input function is the C function
 * vector_in, halfvec_in or sparsevec_in of the library $libdir/vector, as
 * pgvector's install script creates them.  Its oid differs from database
 * to database, so it is looked up on every call (two syscache lookups);
 * parallel workers, which resolve the columns again, find the same types.
 * A type called so that is not pgvector's (a composite, a domain over
 * something else, another extension's) would be read as garbage: it is
 * refused where it is used, never guessed at.
 *
 * The stored layouts (pgvector 0.8's vector.h, halfvec.h, sparsevec.h),
 * after the varlena header; every size is checked against the value's
 * length, and a value that does not add up is reported as corrupt:
 *
 *	  vector     int16 dim, int16 unused, float4 x[dim]
 *	  halfvec    int16 dim, int16 unused, IEEE binary16 x[dim]
 *	  sparsevec  int32 dim, int32 nnz, int32 unused, int32 indices[nnz]
 *	             (0-based, ascending), float4 values[nnz]
 *
 * Values may be unaligned (short varlena headers, pointers into TOAST
 * chunks), so they are read with memcpy.  Half-precision values become
 * float32 exactly (every binary16 value is a float32 value), in C, with
 * no compiler extension.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_pgvector.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "input/input_internal.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/* The library pgvector's functions live in (its module_pathname). */
#define ODP_PGVECTOR_LIBRARY	"$libdir/vector"

/* Bytes of a dense value's body before its elements: dim, unused. */
#define ODP_DENSE_HEADER	(2 * sizeof(int16))

/* Bytes of a sparse value's body before its indices: dim, nnz, unused. */
#define ODP_SPARSE_HEADER	(3 * sizeof(int32))

/* The type names, indexed by OdpVectorFormat. */
static const char *const odp_format_names[] = {
	[ODP_FORMAT_VECTOR] = "vector",
	[ODP_FORMAT_HALFVEC] = "halfvec",
	[ODP_FORMAT_SPARSEVEC] = "sparsevec",
};

/* ---- finding the types ---- */

/* Returns the format a type called name would have, or ODP_FORMAT_ARRAY. */
static OdpVectorFormat
OdpFormatNamed(const char *name)
{
	for (int f = ODP_FORMAT_VECTOR; f <= ODP_FORMAT_SPARSEVEC; f++)
		if (strcmp(name, odp_format_names[f]) == 0)
			return (OdpVectorFormat) f;
	return ODP_FORMAT_ARRAY;
}

/*
 * Returns whether procid is a C function whose symbol is symbol, in
 * pgvector's library.
 */
static bool
OdpIsPgvectorFunction(Oid procid, const char *symbol)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(procid));
	bool		found = false;

	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
	{
		bool		srcnull;
		bool		binnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &srcnull);
		Datum		bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &binnull);

		found = !srcnull && !binnull &&
			strcmp(TextDatumGetCString(src), symbol) == 0 &&
			strcmp(TextDatumGetCString(bin), ODP_PGVECTOR_LIBRARY) == 0;
	}
	ReleaseSysCache(tup);
	return found;
}

/*
 * Returns the format of type typid itself (domains not followed): one of
 * pgvector's, ODP_FORMAT_LOOKALIKE for a type with one of their names
 * that is not pgvector's, else ODP_FORMAT_ARRAY.
 */
static OdpVectorFormat
OdpTypeFormat(Oid typid)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	OdpVectorFormat format;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for type %u", typid);
	{
		Form_pg_type t = (Form_pg_type) GETSTRUCT(tup);
		char		input[NAMEDATALEN + 3];

		format = OdpFormatNamed(NameStr(t->typname));
		snprintf(input, sizeof(input), "%s_in", NameStr(t->typname));
		if (format != ODP_FORMAT_ARRAY &&
			(t->typtype != TYPTYPE_BASE || t->typlen != -1 ||
			 !OdpIsPgvectorFunction(t->typinput, input)))
			format = ODP_FORMAT_LOOKALIKE;
	}
	ReleaseSysCache(tup);
	return format;
}

/*
 * Returns how a value of type typid (a domain's: of its base type) is
 * stored as a vector: one of pgvector's formats, ODP_FORMAT_LOOKALIKE
 * where the type or its base type has one of their names without being
 * pgvector's, else ODP_FORMAT_ARRAY (an array, or no vector at all).
 */
OdpVectorFormat
OdpVectorFormatOf(Oid typid)
{
	Oid			base = getBaseType(typid);
	OdpVectorFormat format = OdpTypeFormat(base);

	if (format == ODP_FORMAT_ARRAY && base != typid &&
		OdpTypeFormat(typid) != ODP_FORMAT_ARRAY)
		format = ODP_FORMAT_LOOKALIKE;
	return format;
}

/* ---- the layouts ---- */

/* Returns the bytes of a pgvector body before its elements (or indices). */
Size
OdpPgvectorHeaderBytes(OdpVectorFormat format)
{
	return format == ODP_FORMAT_SPARSEVEC ? ODP_SPARSE_HEADER : ODP_DENSE_HEADER;
}

/* Returns the bytes of one stored element of a dense pgvector format. */
Size
OdpPgvectorElementBytes(OdpVectorFormat format)
{
	Assert(format == ODP_FORMAT_VECTOR || format == ODP_FORMAT_HALFVEC);
	return format == ODP_FORMAT_HALFVEC ? sizeof(uint16) : sizeof(float);
}

/*
 * Returns the dimensions a pgvector body's header (its first
 * OdpPgvectorHeaderBytes bytes, possibly unaligned) gives.
 */
int32
OdpPgvectorHeaderDim(OdpVectorFormat format, const char *header)
{
	if (format == ODP_FORMAT_SPARSEVEC)
	{
		int32		dim;

		memcpy(&dim, header, sizeof(dim));
		return dim;
	}
	else
	{
		int16		dim;

		memcpy(&dim, header, sizeof(dim));
		return dim;
	}
}

/*
 * Reports a value of the given format whose sizes do not add up (a state
 * pgvector never stores), naming column; does not return.
 */
void
OdpCorruptPgvector(OdpVectorFormat format, const char *column)
{
	elog(ERROR, "corrupt %s value in column \"%s\"", odp_format_names[format],
		 column);
}

/*
 * Splits the body of a pgvector value (bodylen bytes after the varlena
 * header) of the given format into *parts, checking every size against
 * bodylen; an inconsistent value is reported as corrupt, naming column.
 */
void
OdpPgvectorSplit(OdpVectorFormat format, const char *body, Size bodylen,
				 const char *column, OdpPgvectorParts *parts)
{
	Size		header = OdpPgvectorHeaderBytes(format);

	memset(parts, 0, sizeof(*parts));
	if (bodylen < header)
		OdpCorruptPgvector(format, column);
	parts->dim = OdpPgvectorHeaderDim(format, body);
	if (parts->dim < 1)
		OdpCorruptPgvector(format, column);
	if (format == ODP_FORMAT_SPARSEVEC)
	{
		memcpy(&parts->nnz, body + sizeof(int32), sizeof(int32));
		if (parts->nnz < 0 || parts->nnz > parts->dim ||
			bodylen != header + (Size) parts->nnz * (sizeof(int32) + sizeof(float)))
			OdpCorruptPgvector(format, column);
		parts->indices = body + header;
		parts->values = parts->indices + (Size) parts->nnz * sizeof(int32);
	}
	else
	{
		parts->nnz = parts->dim;
		if (bodylen != header + (Size) parts->dim * OdpPgvectorElementBytes(format))
			OdpCorruptPgvector(format, column);
		parts->values = body + header;
	}
}

/* Returns the binary16 value h as a float, exactly. */
static inline float
OdpHalfToFloat(uint16 h)
{
	uint32		sign = (uint32) (h & 0x8000) << 16;
	uint32		exponent = (h >> 10) & 0x1f;
	uint32		mantissa = h & 0x3ff;
	uint32		bits;
	float		f;

	if (exponent == 0x1f)
		bits = sign | 0x7f800000 | (mantissa << 13);	/* infinity, NaN */
	else if (exponent != 0)
		bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
	else if (mantissa == 0)
		bits = sign;
	else
	{
		/* subnormal: mantissa * 2^-24, a normal float32, exact */
		f = (float) mantissa * 5.9604644775390625e-8f;
		return sign != 0 ? -f : f;
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/*
 * Converts n binary16 values at src (possibly unaligned) into floats at
 * dst, first to last.  src may also lie 2 * n bytes past dst (the halves
 * at the end of the floats' room): each float then overwrites only halves
 * already converted.
 */
void
OdpHalvesToFloats(const char *src, int32 n, float *dst)
{
	for (int32 i = 0; i < n; i++)
	{
		uint16		h;

		memcpy(&h, src + sizeof(uint16) * i, sizeof(h));
		dst[i] = OdpHalfToFloat(h);
	}
}

/*
 * Writes the dense form of a sparsevec (parts, from OdpPgvectorSplit) into
 * dst, parts->dim floats that must not overlap the value: zeros, and each
 * stored value at its index.  Indices out of order or out of range are
 * reported as corrupt, naming column.
 */
static void
OdpSparseToFloats(const OdpPgvectorParts *parts, const char *column, float *dst)
{
	int32		previous = -1;

	memset(dst, 0, sizeof(float) * (Size) parts->dim);
	for (int32 i = 0; i < parts->nnz; i++)
	{
		int32		index;

		memcpy(&index, parts->indices + sizeof(int32) * i, sizeof(index));
		if (index <= previous || index >= parts->dim)
			OdpCorruptPgvector(ODP_FORMAT_SPARSEVEC, column);
		memcpy(&dst[index], parts->values + sizeof(float) * i, sizeof(float));
		previous = index;
	}
}

/*
 * Writes the parts->dim values of a pgvector value of the given format
 * (parts from OdpPgvectorSplit) into dst as floats, exactly: vector copied,
 * halfvec widened, sparsevec densified.  dst must not overlap the value.
 */
void
OdpPgvectorToFloats(OdpVectorFormat format, const OdpPgvectorParts *parts,
					const char *column, float *dst)
{
	if (format == ODP_FORMAT_VECTOR)
		memcpy(dst, parts->values, sizeof(float) * (Size) parts->dim);
	else if (format == ODP_FORMAT_HALFVEC)
		OdpHalvesToFloats(parts->values, parts->dim, dst);
	else
		OdpSparseToFloats(parts, column, dst);
}
