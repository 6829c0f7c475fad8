/*-------------------------------------------------------------------------
 *
 * distributed_wire.c
 *	  Writing and checking the payloads of the distributed calls (see
 *	  distributed_wire.h).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed_wire.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "distributed/distributed_wire.h"
#include "utils/memutils.h"

/* "ODPw" read in this machine's byte order. */
#define ODP_WIRE_MAGIC	UINT32_C(0x7750444f)

typedef struct OdpWireHeader
{
	uint32		magic;
	uint32		kind;
	int64		count;
	int32		dims;
	int32		width;
	int64		figure;
	uint32		value_bytes;	/* vectors and distances: 4 or 8 */
	uint32		unused;
} OdpWireHeader;

/*
 * Bytes of the arrays after the header, or -1 on overflow.  value is the
 * bytes of a vector value or distance (a skyband's are double).
 */
static int64
WireBodyBytes(OdpWireKind kind, int64 count, int32 dims, int32 width, int value)
{
	double		n = (double) count;

	if (count < 0 || dims < 0 || width < 0 || (value != 4 && value != 8))
		return -1;
	switch (kind)
	{
		case ODP_WIRE_ROWS:
			n *= sizeof(int64) + 2 * sizeof(double) + (double) value * (double) dims;
			break;
		case ODP_WIRE_LISTS:
			n *= (double) value * (double) width;
			break;
		case ODP_WIRE_KNN:
			n *= ((double) value + sizeof(int64)) * (double) width;
			break;
		case ODP_WIRE_SKYBAND:
			n *= sizeof(int64) + sizeof(double) * (double) dims;
			break;
	}
	/* floats come last, so padding them to 8 keeps nothing misaligned */
	return n > (double) (MaxAllocHugeSize - 64) ? -1 : (int64) n;
}

/* A new payload with its header, the body left to fill. */
static bytea *
WireAlloc(OdpWireKind kind, int64 count, int32 dims, int32 width, int64 figure,
		  int value, char **body)
{
	int64		bytes = WireBodyBytes(kind, count, dims, width, value);
	bytea	   *b;
	OdpWireHeader h;

	if (bytes < 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a distributed call's message of " INT64_FORMAT " rows is too large",
						count)));
	b = (bytea *) MemoryContextAllocHuge(CurrentMemoryContext,
										 VARHDRSZ + sizeof(h) + (Size) bytes);
	SET_VARSIZE(b, VARHDRSZ + sizeof(h) + (Size) bytes);
	memset(&h, 0, sizeof(h));
	h.magic = ODP_WIRE_MAGIC;
	h.kind = (uint32) kind;
	h.count = count;
	h.dims = dims;
	h.width = width;
	h.figure = figure;
	h.value_bytes = (uint32) value;
	memcpy(VARDATA(b), &h, sizeof(h));
	*body = VARDATA(b) + sizeof(h);
	return b;
}

bytea *
OdpWireFromRows(const OdpSsRows *rows, int64 figure)
{
	const bool	wide = rows->vectors64 != NULL;
	char	   *p;
	bytea	   *b = WireAlloc(ODP_WIRE_ROWS, rows->count, rows->dims, 0, figure,
							  wide ? 8 : 4, &p);
	Size		n = (Size) rows->count;

	memcpy(p, rows->ids, sizeof(int64) * n);
	p += sizeof(int64) * n;
	memcpy(p, rows->rank, sizeof(double) * n);
	p += sizeof(double) * n;
	memcpy(p, rows->bound, sizeof(double) * n);
	p += sizeof(double) * n;
	if (wide)
		memcpy(p, rows->vectors64, sizeof(double) * n * (Size) rows->dims);
	else if (n > 0)
		memcpy(p, rows->vectors, sizeof(float) * n * (Size) rows->dims);
	return b;
}

/* Writes n distances as double (wide) or float (exact for float32 rows'). */
static void
WirePutDistances(char *p, const double *dist, Size n, bool wide)
{
	if (wide)
	{
		memcpy(p, dist, sizeof(double) * n);
		return;
	}
	for (Size i = 0; i < n; i++)
	{
		float		f = (float) dist[i];

		memcpy(p + i * sizeof(float), &f, sizeof(float));
	}
}

bytea *
OdpWireFromLists(const double *lists, int64 count, int32 width, bool wide,
				 int64 figure)
{
	char	   *p;
	bytea	   *b = WireAlloc(ODP_WIRE_LISTS, count, 0, width, figure, wide ? 8 : 4, &p);

	WirePutDistances(p, lists, (Size) count * (Size) width, wide);
	return b;
}

bytea *
OdpWireFromKnn(const double *dist, const int64 *ids, int64 count, int32 width,
			   bool wide)
{
	char	   *p;
	bytea	   *b = WireAlloc(ODP_WIRE_KNN, count, 0, width, 0, wide ? 8 : 4, &p);
	Size		n = (Size) count * (Size) width;

	memcpy(p, ids, sizeof(int64) * n);
	WirePutDistances(p + sizeof(int64) * n, dist, n, wide);
	return b;
}

bytea *
OdpWireFromSkyband(const int64 *ids, const double *vectors, int64 count,
				   int32 dims)
{
	char	   *p;
	bytea	   *b = WireAlloc(ODP_WIRE_SKYBAND, count, dims, 0, 0, 8, &p);
	Size		n = (Size) count;

	memcpy(p, ids, sizeof(int64) * n);
	memcpy(p + sizeof(int64) * n, vectors, sizeof(double) * n * (Size) dims);
	return b;
}

static void
WireBad(const char *from, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROTOCOL_VIOLATION),
			 errmsg("malformed message from %s: %s", from, why),
			 errhint("Install the same odp_gpu version on every node.")));
}

void
OdpWireRead(const char *buf, Size len, OdpWireKind kind, const char *from,
			OdpWire *out)
{
	OdpWireHeader h;
	int64		bytes;
	const char *p;
	Size		n;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		WireBad(from, "too short");
	memcpy(&h, buf, sizeof(h));
	if (h.magic != ODP_WIRE_MAGIC)
		WireBad(from, "unknown format or byte order");
	if (h.kind != (uint32) kind)
		WireBad(from, "unexpected kind");
	bytes = WireBodyBytes(kind, h.count, h.dims, h.width, (int) h.value_bytes);
	if (bytes < 0 || len != sizeof(h) + (Size) bytes)
		WireBad(from, "length does not match its counts");
	/* a bytea's data sits 4 bytes into it: read a copy that is aligned */
	if (((uintptr_t) buf) % sizeof(int64) != 0)
	{
		char	   *copy = MemoryContextAllocHuge(CurrentMemoryContext, len);

		memcpy(copy, buf, len);
		buf = copy;
	}
	out->count = h.count;
	out->dims = h.dims;
	out->width = h.width;
	out->figure = h.figure;
	out->wide = h.value_bytes == 8;
	p = buf + sizeof(h);
	n = (Size) h.count;
	switch (kind)
	{
		case ODP_WIRE_ROWS:
			out->ids = (const int64 *) p;
			out->rank = (const double *) (p + sizeof(int64) * n);
			out->bound = out->rank + n;
			p = (const char *) (out->bound + n);
			break;
		case ODP_WIRE_LISTS:
			break;
		case ODP_WIRE_KNN:
			out->ids = (const int64 *) p;
			p += sizeof(int64) * n * (Size) h.width;
			break;
		case ODP_WIRE_SKYBAND:
			out->ids = (const int64 *) p;
			out->doubles = (const double *) (p + sizeof(int64) * n);
			return;
	}
	/* the vectors or distances, in the payload's precision */
	if (out->wide)
		out->doubles = (const double *) p;
	else
		out->floats = (const float *) p;
}

void
OdpWireCheckPrecision(const OdpWire *w, bool wide, const char *from)
{
	if (w->wide != wide)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("%s sent %s values, where this call computes in %s",
						from, w->wide ? "float64" : "float32",
						wide ? "float64" : "float32"),
				 errhint("Install the same odp_gpu version on every node.")));
}

void
OdpWireDistances(const OdpWire *w, double *dst)
{
	Size		n = (Size) w->count * (Size) w->width;

	if (w->wide)
		memcpy(dst, w->doubles, sizeof(double) * n);
	else
		for (Size i = 0; i < n; i++)
			dst[i] = w->floats[i];
}

void
OdpWireRowsView(const OdpWire *w, OdpSsRows *rows)
{
	memset(rows, 0, sizeof(*rows));
	rows->count = w->count;
	rows->capacity = w->count;
	rows->dims = w->dims;
	rows->ids = (int64 *) w->ids;
	rows->rank = (double *) w->rank;
	rows->bound = (double *) w->bound;
	rows->vectors = (float *) w->floats;
	rows->vectors64 = (double *) w->doubles;
}

void
OdpWireToRows(const OdpWire *w, OdpSsRows *rows, const char *from)
{
	Size		n = (Size) w->count;

	if (w->count > rows->capacity)
		WireBad(from, "more rows than asked for");
	if (w->count > 0 && w->dims != rows->dims)
		WireBad(from, "rows of another dimension");
	OdpWireCheckPrecision(w, rows->vectors64 != NULL, from);
	for (int64 i = 1; i < w->count; i++)
		if (w->ids[i] <= w->ids[i - 1])
			WireBad(from, "ids not ascending");
	memcpy(rows->ids, w->ids, sizeof(int64) * n);
	memcpy(rows->rank, w->rank, sizeof(double) * n);
	memcpy(rows->bound, w->bound, sizeof(double) * n);
	if (w->wide)
		memcpy(rows->vectors64, w->doubles, sizeof(double) * n * (Size) rows->dims);
	else if (n > 0)
		memcpy(rows->vectors, w->floats, sizeof(float) * n * (Size) rows->dims);
	rows->count = w->count;
}

void
OdpSsRowsAlloc(OdpSsRows *rows, int64 capacity, int32 dims, bool wide)
{
	Size		n = (Size) Max(capacity, 1);
	Size		cells = n * (Size) Max(dims, 1);

	rows->count = 0;
	rows->capacity = capacity;
	rows->dims = dims;
	rows->ids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
	rows->rank = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * n);
	rows->bound = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * n);
	rows->vectors = wide ? NULL :
		MemoryContextAllocHuge(CurrentMemoryContext, sizeof(float) * cells);
	rows->vectors64 = wide ?
		MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * cells) : NULL;
}
