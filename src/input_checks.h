/*-------------------------------------------------------------------------
 *
 * input_checks.h
 *	  The checks that several input_*.c files run, one tiny static inline
 *	  function per invariant.
 *
 * Each says in one line what it ensures and raises one ereport with the
 * most precise SQLSTATE.  Inline, because the reader runs them once per
 * value.  A check that one file alone runs stays static in that file,
 * next to its caller.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input_checks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_INPUT_CHECKS_H
#define ODP_INPUT_CHECKS_H

#include "input_internal.h"

/* The hint of a value the reader cannot take (null, non-finite, NaN). */
#define ODP_BAD_VALUE_HINT \
	"Filter out or replace such rows, for example in a query source."

/* Ensure the number of dimensions is within the limit max. */
static inline void
OdpEnsureDimsLimit(int64 dims, int32 max)
{
	if (dims > max)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("input has %lld dimensions, more than the maximum of %d",
						(long long) dims, (int) max),
				 errhint("Use fewer features.")));
}

/* Ensure a feature value is not null. */
static inline void
OdpEnsureValueNotNull(bool isnull, const OdpColumn *col, int64 id)
{
	if (unlikely(isnull))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column \"%s\" is null in the row with id %lld",
						col->name, (long long) id),
				 errhint("%s", ODP_BAD_VALUE_HINT)));
}

#endif							/* ODP_INPUT_CHECKS_H */
