/*-------------------------------------------------------------------------
 *
 * distributed_wire.h
 *	  The binary payloads (bytea) that travel between the calling server
 *	  and the nodes of a distributed call: rows with a rank each, neighbour
 *	  lists, k-NN lists and skyband rows.
 *
 * A payload is a header (a magic number that also tells a node of another
 * byte order apart, the kind, the counts and one 64-bit figure) followed
 * by the arrays in native order.  Every reader checks the magic, the kind
 * and that the length is exactly what the counts imply, and reports a
 * bad payload as a protocol violation naming where it came from.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed_wire.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DISTRIBUTED_WIRE_H
#define ODP_DISTRIBUTED_WIRE_H

#include "odp_distributed.h"

/* The node functions' protocol version (odp_node_protocol()). */
#define ODP_NODE_PROTOCOL 1

typedef enum OdpWireKind
{
	ODP_WIRE_ROWS = 1,			/* ids, ranks, bounds, float32 vectors */
	ODP_WIRE_LISTS,				/* count x width float32 distances */
	ODP_WIRE_KNN,				/* count x width distances, then ids */
	ODP_WIRE_SKYBAND			/* ids, float64 vectors */
} OdpWireKind;

/* A payload read in place: pointers into the buffer it came in. */
typedef struct OdpWire
{
	int64		count;
	int32		dims;			/* ROWS, SKYBAND */
	int32		width;			/* LISTS, KNN: entries per row */
	int64		figure;			/* e.g. distances evaluated */
	const int64 *ids;			/* ROWS, SKYBAND, KNN (count x width) */
	const double *rank;			/* ROWS */
	const float *bound;			/* ROWS */
	const float *floats;		/* ROWS vectors, LISTS, KNN distances */
	const double *doubles;		/* SKYBAND vectors */
} OdpWire;

extern bytea *OdpWireFromRows(const OdpSsRows *rows, int64 figure);
extern bytea *OdpWireFromLists(const float *lists, int64 count, int32 width,
							   int64 figure);
extern bytea *OdpWireFromKnn(const float *dist, const int64 *ids, int64 count,
							 int32 width);
extern bytea *OdpWireFromSkyband(const int64 *ids, const double *vectors,
								 int64 count, int32 dims);

/*
 * Reads a payload of the given kind from buf (len bytes; read from an
 * aligned copy when buf is not aligned to 8), or raises a protocol violation naming from.
 */
extern void OdpWireRead(const char *buf, Size len, OdpWireKind kind,
						const char *from, OdpWire *out);

/* Buffers for capacity rows of dims values, in the current context. */
extern void OdpSsRowsAlloc(OdpSsRows *rows, int64 capacity, int32 dims);

/* Copies a ROWS payload into rows (capacity and dims checked). */
extern void OdpWireToRows(const OdpWire *w, OdpSsRows *rows, const char *from);

#endif							/* ODP_DISTRIBUTED_WIRE_H */
