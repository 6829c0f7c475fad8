/*-------------------------------------------------------------------------
 *
 * distributed_wire.c
 *	  Writing and checking the payloads of the distributed calls (see
 *	  distributed_wire.h).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed_wire.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "distributed_wire.h"
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
} OdpWireHeader;

/* Bytes of the arrays after the header, or -1 on overflow. */
static int64
WireBodyBytes(OdpWireKind kind, int64 count, int32 dims, int32 width)
{
	double		n = (double) count;

	if (count < 0 || dims < 0 || width < 0)
		return -1;
	switch (kind)
	{
		case ODP_WIRE_ROWS:
			n *= sizeof(int64) + sizeof(double) + sizeof(float) * (1.0 + (double) dims);
			break;
		case ODP_WIRE_LISTS:
			n *= sizeof(float) * (double) width;
			break;
		case ODP_WIRE_KNN:
			n *= (sizeof(float) + sizeof(int64)) * (double) width;
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
		  char **body)
{
	int64		bytes = WireBodyBytes(kind, count, dims, width);
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
	memcpy(VARDATA(b), &h, sizeof(h));
	*body = VARDATA(b) + sizeof(h);
	return b;
}

bytea *
OdpWireFromRows(const OdpSsRows *rows, int64 figure)
{
	char	   *p;
	bytea	   *b = WireAlloc(ODP_WIRE_ROWS, rows->count, rows->dims, 0, figure, &p);
	Size		n = (Size) rows->count;

	memcpy(p, rows->ids, sizeof(int64) * n);
	p += sizeof(int64) * n;
	memcpy(p, rows->rank, sizeof(double) * n);
	p += sizeof(double) * n;
	memcpy(p, rows->bound, sizeof(float) * n);
	p += sizeof(float) * n;
	memcpy(p, rows->vectors, sizeof(float) * n * (Size) rows->dims);
	return b;
}

bytea *
OdpWireFromLists(const float *lists, int64 count, int32 width, int64 figure)
{
	char	   *p;
	bytea	   *b = WireAlloc(ODP_WIRE_LISTS, count, 0, width, figure, &p);

	memcpy(p, lists, sizeof(float) * (Size) count * (Size) width);
	return b;
}

bytea *
OdpWireFromKnn(const float *dist, const int64 *ids, int64 count, int32 width)
{
	char	   *p;
	bytea	   *b = WireAlloc(ODP_WIRE_KNN, count, 0, width, 0, &p);
	Size		n = (Size) count * (Size) width;

	memcpy(p, ids, sizeof(int64) * n);
	memcpy(p + sizeof(int64) * n, dist, sizeof(float) * n);
	return b;
}

bytea *
OdpWireFromSkyband(const int64 *ids, const double *vectors, int64 count,
				   int32 dims)
{
	char	   *p;
	bytea	   *b = WireAlloc(ODP_WIRE_SKYBAND, count, dims, 0, 0, &p);
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
	bytes = WireBodyBytes(kind, h.count, h.dims, h.width);
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
	p = buf + sizeof(h);
	n = (Size) h.count;
	switch (kind)
	{
		case ODP_WIRE_ROWS:
			out->ids = (const int64 *) p;
			out->rank = (const double *) (p + sizeof(int64) * n);
			out->bound = (const float *) (p + (sizeof(int64) + sizeof(double)) * n);
			out->floats = out->bound + n;
			break;
		case ODP_WIRE_LISTS:
			out->floats = (const float *) p;
			break;
		case ODP_WIRE_KNN:
			out->ids = (const int64 *) p;
			out->floats = (const float *) (p + sizeof(int64) * n * (Size) h.width);
			break;
		case ODP_WIRE_SKYBAND:
			out->ids = (const int64 *) p;
			out->doubles = (const double *) (p + sizeof(int64) * n);
			break;
	}
}

void
OdpWireToRows(const OdpWire *w, OdpSsRows *rows, const char *from)
{
	Size		n = (Size) w->count;

	if (w->count > rows->capacity)
		WireBad(from, "more rows than asked for");
	if (w->count > 0 && w->dims != rows->dims)
		WireBad(from, "rows of another dimension");
	for (int64 i = 1; i < w->count; i++)
		if (w->ids[i] <= w->ids[i - 1])
			WireBad(from, "ids not ascending");
	memcpy(rows->ids, w->ids, sizeof(int64) * n);
	memcpy(rows->rank, w->rank, sizeof(double) * n);
	memcpy(rows->bound, w->bound, sizeof(float) * n);
	memcpy(rows->vectors, w->floats, sizeof(float) * n * (Size) rows->dims);
	rows->count = w->count;
}

void
OdpSsRowsAlloc(OdpSsRows *rows, int64 capacity, int32 dims)
{
	Size		n = (Size) Max(capacity, 1);

	rows->count = 0;
	rows->capacity = capacity;
	rows->dims = dims;
	rows->ids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
	rows->rank = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * n);
	rows->bound = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(float) * n);
	rows->vectors = MemoryContextAllocHuge(CurrentMemoryContext,
										   sizeof(float) * n * (Size) Max(dims, 1));
}
