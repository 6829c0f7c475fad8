/*-------------------------------------------------------------------------
 *
 * distributed_wire.h
 *	  The binary payloads (bytea) that travel between the calling server
 *	  and the nodes of a distributed call: rows with a rank each, neighbour
 *	  lists, k-NN lists and skyband rows.
 *
 * A payload is a header (a magic number that also tells a node of another
 * byte order apart, the kind, the counts, one 64-bit figure and the bytes
 * of a value, 4 or 8) followed by the arrays in native order.  Vectors
 * and distances travel in the rows' precision: float32 rows as float,
 * float64 rows as double (their distances too: a float32 distance is a
 * double's value narrowed exactly, so the narrowing loses nothing).  Every reader checks the magic, the kind
 * and that the length is exactly what the counts imply, and reports a
 * bad payload as a protocol violation naming where it came from.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed_wire.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DISTRIBUTED_WIRE_H
#define ODP_DISTRIBUTED_WIRE_H

#include "odp_distributed.h"

/*
 * The node functions' protocol version (odp_node_protocol()); 2: float64
 * rows, and the header's value bytes.
 */
#define ODP_NODE_PROTOCOL 2

typedef enum OdpWireKind
{
	ODP_WIRE_ROWS = 1,			/* ids, ranks, bounds (double), vectors */
	ODP_WIRE_LISTS,				/* count x width distances */
	ODP_WIRE_KNN,				/* count x width ids, then distances */
	ODP_WIRE_SKYBAND			/* ids, float64 vectors */
} OdpWireKind;

/* A payload read in place: pointers into the buffer it came in. */
typedef struct OdpWire
{
	int64		count;
	int32		dims;			/* ROWS, SKYBAND */
	int32		width;			/* LISTS, KNN: entries per row */
	int64		figure;			/* e.g. distances evaluated */
	bool		wide;			/* values are double (float64 rows) */
	const int64 *ids;			/* ROWS, SKYBAND, KNN (count x width) */
	const double *rank;			/* ROWS */
	const double *bound;		/* ROWS */
	const float *floats;		/* ROWS vectors, LISTS, KNN distances: not wide */
	const double *doubles;		/* the same when wide; SKYBAND vectors */
} OdpWire;

/*
 * Writers: rows in their precision (vectors64 set: float64), lists and
 * k-NN distances as double when wide, else narrowed to float (exact for
 * float32 rows' distances).
 */
extern bytea *OdpWireFromRows(const OdpSsRows *rows, int64 figure);
extern bytea *OdpWireFromLists(const double *lists, int64 count, int32 width,
							   bool wide, int64 figure);
extern bytea *OdpWireFromKnn(const double *dist, const int64 *ids, int64 count,
							 int32 width, bool wide);
extern bytea *OdpWireFromSkyband(const int64 *ids, const double *vectors,
								 int64 count, int32 dims);

/*
 * Reads a payload of the given kind from buf (len bytes; read from an
 * aligned copy when buf is not aligned to 8), or raises a protocol violation naming from.
 */
extern void OdpWireRead(const char *buf, Size len, OdpWireKind kind,
						const char *from, OdpWire *out);

/*
 * Checks that a payload's values are in the precision expected (wide:
 * float64), or raises a protocol violation naming from: the nodes and the
 * calling server compute in one precision.
 */
extern void OdpWireCheckPrecision(const OdpWire *w, bool wide, const char *from);

/* A LISTS or KNN payload's count x width distances, as double, into dst. */
extern void OdpWireDistances(const OdpWire *w, double *dst);

/*
 * Buffers for capacity rows of dims values, float64 ones when wide, in
 * the current context.
 */
extern void OdpSsRowsAlloc(OdpSsRows *rows, int64 capacity, int32 dims, bool wide);

/*
 * Copies a ROWS payload into rows (capacity, dims and precision
 * checked).
 */
extern void OdpWireToRows(const OdpWire *w, OdpSsRows *rows, const char *from);

/*
 * A ROWS payload's rows in place (their vectors in its precision), for a
 * step that only reads them.
 */
extern void OdpWireRowsView(const OdpWire *w, OdpSsRows *rows);

#endif							/* ODP_DISTRIBUTED_WIRE_H */
