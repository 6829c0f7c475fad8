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
 *	  src/input/input_checks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_INPUT_CHECKS_H
#define ODP_INPUT_CHECKS_H

#include "input/input_internal.h"
#include "utils/builtins.h"

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

/*
 * Ensure a value whose type is called vector, halfvec or sparsevec is
 * pgvector's (input_pgvector.c): another type of that name would be read
 * as garbage.  what ("column", "argument") and col->name word the error.
 */
static inline void
OdpEnsurePgvectorOwn(const OdpColumn *col, const char *what)
{
	if (unlikely(col->format == ODP_FORMAT_LOOKALIKE))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s \"%s\" has type %s, which is not pgvector's",
						what, col->name, format_type_be(col->typid)),
				 errdetail("A type called vector, halfvec or sparsevec is read as a vector only where it is pgvector's: a base type whose input function is vector_in, halfvec_in or sparsevec_in of $libdir/vector."),
				 strcmp(what, "column") == 0 ?
				 errhint("Cast the column to real[] in a query source, or name other feature columns.") :
				 errhint("Pass an array of numbers, or a value of pgvector's vector, halfvec or sparsevec.")));
}

/*
 * Ensure an argument given as a vector (col describes its type, col->name
 * names it) has a type the reader takes as one.
 */
static inline void
OdpEnsureVectorArgType(const OdpColumn *col)
{
	OdpEnsurePgvectorOwn(col, "argument");
	if (!col->is_array || !col->is_numeric)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s has type %s, which is not a vector", col->name,
						format_type_be(col->typid)),
				 errhint("Pass an array of numbers (real[], float8[], integer[], numeric[], ...), or a value of pgvector's vector, halfvec or sparsevec.")));
}

#endif							/* ODP_INPUT_CHECKS_H */
