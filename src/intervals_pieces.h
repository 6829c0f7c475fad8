/*-------------------------------------------------------------------------
 *
 * intervals_pieces.h
 *	  Pairs of the pieces of regions (a multirange row is a piece per
 *	  range) become pairs of rows, each once, in order.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/intervals_pieces.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_INTERVALS_PIECES_H
#define ODP_INTERVALS_PIECES_H

#include "engine_glue.h"
#include "input/input.h"

typedef struct IntervalPieceMerge IntervalPieceMerge;

/*
 * A merge of the pairs of pieces of a (subscriptions) and b (updates; NULL
 * for pairs of one set) that hands sink each overlapping pair of rows
 * once, as a pair of pieces of those rows, in ascending (a id, b id)
 * order; a row's own pieces are no pair.  Lives in CurrentMemoryContext.
 */
extern IntervalPieceMerge *IntervalPieceMergeCreate(const OdpInput *a,
													const OdpInput *b,
													OdpPairSink sink, void *arg);

/* An OdpPairSink taking the pairs of pieces in ascending (a, b) order. */
extern void IntervalPieceMergeAdd(void *merge, const int64 *a, const int64 *b,
								  const double *r, int64 count);

/* Hands on the last pairs; returns how many pairs of rows there were. */
extern int64 IntervalPieceMergeFinish(IntervalPieceMerge *merge);

#endif							/* ODP_INTERVALS_PIECES_H */
