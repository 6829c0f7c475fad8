/*-------------------------------------------------------------------------
 *
 * intervals_pieces.c
 *	  Pairs of the pieces of regions become pairs of rows.
 *
 * A row whose region has multiranges is read as several pieces, one per
 * combination of their ranges, all with the row's id (input_regions.c);
 * two rows overlap when some piece of one overlaps some piece of the
 * other, which is && of multiranges.  The engine finds the pairs of
 * pieces, handed over in ascending (a piece, b piece) order, and a row's
 * pieces are neighbours in that order.  So the pairs of one a row arrive
 * together: their b rows are collected, ordered by id where the pieces
 * did not come in that order already, and handed on once each.  Memory
 * stays within the pairs of one a row.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/intervals_pieces.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "intervals_pieces.h"
#include "miscadmin.h"

/* Pairs handed on at a time. */
#define PIECE_BATCH		4096

/* A b row overlapping the current a row: its id and one of its pieces. */
typedef struct PieceMatch
{
	int64		id;
	int64		piece;
} PieceMatch;

#define ST_SORT SortPieceMatches
#define ST_ELEMENT_TYPE PieceMatch
#define ST_COMPARE(x, y) ((x)->id < (y)->id ? -1 : ((x)->id > (y)->id ? 1 : 0))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

struct IntervalPieceMerge
{
	const int64 *ids_a;
	const int64 *ids_b;
	bool		self;
	OdpPairSink sink;
	void	   *arg;
	int64		current;		/* a piece of the current a row, or -1 */
	PieceMatch *matches;		/* its b rows so far */
	int64		nmatches;
	int64		capacity;
	bool		ordered;		/* matches ascending by id */
	int64		out_a[PIECE_BATCH];
	int64		out_b[PIECE_BATCH];
	int			nout;
	int64		pairs;
};

/* See intervals_pieces.h. */
IntervalPieceMerge *
IntervalPieceMergeCreate(const OdpInput *a, const OdpInput *b, OdpPairSink sink,
						 void *arg)
{
	IntervalPieceMerge *m = palloc0(sizeof(IntervalPieceMerge));

	m->ids_a = a->ids;
	m->ids_b = b != NULL ? b->ids : a->ids;
	m->self = b == NULL;
	m->sink = sink;
	m->arg = arg;
	m->current = -1;
	m->capacity = 1024;
	m->matches = palloc(sizeof(PieceMatch) * m->capacity);
	m->ordered = true;
	return m;
}

/* Hands the batch of pairs of rows on. */
static void
PieceMergeEmit(IntervalPieceMerge *m)
{
	if (m->nout > 0 && m->sink != NULL)
		m->sink(m->arg, m->out_a, m->out_b, NULL, m->nout);
	m->nout = 0;
}

/* Hands on the current a row's pairs, each b row once, by id. */
static void
PieceMergeFlushRow(IntervalPieceMerge *m)
{
	if (m->nmatches == 0)
		return;
	if (!m->ordered)
		SortPieceMatches(m->matches, m->nmatches);
	for (int64 i = 0; i < m->nmatches; i++)
	{
		if (i > 0 && m->matches[i].id == m->matches[i - 1].id)
			continue;
		m->out_a[m->nout] = m->current;
		m->out_b[m->nout++] = m->matches[i].piece;
		m->pairs++;
		if (m->nout == PIECE_BATCH)
			PieceMergeEmit(m);
	}
	m->nmatches = 0;
	m->ordered = true;
}

/* See intervals_pieces.h. */
void
IntervalPieceMergeAdd(void *merge, const int64 *a, const int64 *b,
					  const double *r, int64 count)
{
	IntervalPieceMerge *m = (IntervalPieceMerge *) merge;

	(void) r;
	for (int64 i = 0; i < count; i++)
	{
		int64		ida = m->ids_a[a[i]];
		int64		idb = m->ids_b[b[i]];
		PieceMatch *last;

		if (m->self && ida == idb)
			continue;
		if (m->current < 0 || m->ids_a[m->current] != ida)
		{
			PieceMergeFlushRow(m);
			m->current = a[i];
		}
		last = m->nmatches > 0 ? &m->matches[m->nmatches - 1] : NULL;
		if (last != NULL && last->id == idb)
			continue;
		if (m->nmatches == m->capacity)
		{
			m->capacity *= 2;
			m->matches = repalloc_huge(m->matches, sizeof(PieceMatch) * m->capacity);
			last = &m->matches[m->nmatches - 1];
		}
		if (last != NULL && last->id > idb)
			m->ordered = false;
		m->matches[m->nmatches++] = (PieceMatch) {idb, b[i]};
	}
}

/* See intervals_pieces.h. */
int64
IntervalPieceMergeFinish(IntervalPieceMerge *m)
{
	PieceMergeFlushRow(m);
	PieceMergeEmit(m);
	return m->pairs;
}
