/*-------------------------------------------------------------------------
 *
 * input_aggregate.c
 *	  Rows given one at a time, as an aggregate receives them: the
 *	  OdpRowAccum functions of input.h.
 *
 * Aggregates receive rows one at a time instead of reading a source; an
 * OdpRowAccum feeds them through the reader's decoder and buffers with a
 * one-off plan of two columns (id, vector), so that they check values,
 * sort by id and reject duplicates exactly as the table functions do,
 * with the same messages and SQLSTATEs.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_aggregate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "input/input_checks.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

/* An OdpReader fed by an aggregate, with its one-off column plan. */
struct OdpRowAccum
{
	OdpColumn	columns[2];		/* the id, then the vector */
	OdpColumnPlan plan;
	OdpReader	reader;
};

/*
 * Creates an accumulator of (id bigint, vector) rows in cxt, which must
 * outlive it (an aggregate's context).  id_name and vector_name name the
 * values in messages; vectype is the vector's type (an array of a numeric
 * type, or one of pgvector's: anything else is refused with 42804);
 * values says how they are delivered (as OdpInputSpec.values).
 */
OdpRowAccum *
OdpRowAccumCreate(MemoryContext cxt, const char *id_name,
				  const char *vector_name, Oid vectype, OdpValueType values)
{
	OdpInputSpec spec;
	OdpRowAccum *acc;
	OdpColumn  *id;
	OdpColumn  *vec;

	acc = MemoryContextAllocZero(cxt, sizeof(OdpRowAccum));
	vec = &acc->columns[1];
	vec->name = MemoryContextStrdup(cxt, vector_name);
	vec->pos = 2;
	vec->attnum = InvalidAttrNumber;
	OdpDescribeType(vectype, vec);
	OdpEnsureVectorArgType(vec);
	id = &acc->columns[0];
	id->name = MemoryContextStrdup(cxt, id_name);
	id->pos = 1;
	id->attnum = InvalidAttrNumber;
	id->typid = INT8OID;
	id->is_numeric = true;
	id->kind = ODP_VALUE_INT8;

	acc->plan.id = *id;
	acc->plan.vector = true;
	acc->plan.nfeatures = 1;
	acc->plan.features = vec;
	acc->plan.maxpos = 2;
	memset(&spec, 0, sizeof(spec));
	spec.values = values;
	OdpReaderInit(&acc->reader, &acc->plan, cxt, NULL, "group", 0, &spec);
	return acc;
}

/*
 * Appends one row, the id and the vector of an aggregate's arguments id_arg
 * and vector_arg, checking it as OdpReadInput checks rows (null id or
 * vector, null or non-finite elements, shape, length).  Temporary memory
 * goes to CurrentMemoryContext and is freed before returning.
 */
void
OdpRowAccumAdd(OdpRowAccum *acc, FunctionCallInfo fcinfo, int id_arg,
			   int vector_arg)
{
	Datum		values[2];
	bool		isnull[2];

	isnull[0] = PG_ARGISNULL(id_arg);
	values[0] = isnull[0] ? (Datum) 0 : PG_GETARG_DATUM(id_arg);
	isnull[1] = PG_ARGISNULL(vector_arg);
	values[1] = isnull[1] ? (Datum) 0 : PG_GETARG_DATUM(vector_arg);
	OdpReaderAddRow(&acc->reader, values, isnull);
}

/* Returns the number of rows appended so far. */
int64
OdpRowAccumRows(const OdpRowAccum *acc)
{
	return acc->reader.rows;
}

/*
 * Sorts the rows by id, rejects duplicate ids, and points out at the
 * accumulated matrix (which stays owned by the accumulator; the rows are
 * not changed, only ordered, so more rows may be added afterwards).
 * source_desc names the rows in messages, e.g. "the group".  Requires at
 * least one row.
 */
void
OdpRowAccumFinish(OdpRowAccum *acc, const char *source_desc, OdpInput *out)
{
	instr_time	start;
	instr_time	duration;

	INSTR_TIME_SET_CURRENT(start);
	memset(out, 0, sizeof(*out));
	OdpReaderFinish(&acc->reader);
	out->rows = acc->reader.rows;
	out->dims = acc->reader.dims;
	out->data = acc->reader.data;
	out->data64 = acc->reader.data64;
	out->ids = acc->reader.ids;
	out->source_desc = pstrdup(source_desc);
	out->heap_scan = false;
	out->aggregate = true;
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	out->read_ms = INSTR_TIME_GET_MILLISEC(duration);
}
