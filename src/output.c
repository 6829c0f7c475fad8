/*-------------------------------------------------------------------------
 *
 * output.c
 *	  The analytics' results into the executor (see output.h).
 *
 * InitMaterializedSRF sizes the tuplestore by work_mem (4 MB by default),
 * so a result of a few hundred thousand rows went to a temporary file and
 * was read back from it: the GPU's milliseconds then waited on the disk.
 * A tuplestore takes memory only as rows arrive, so allowing it
 * odp_gpu.output_memory costs a small result nothing, and a result larger
 * than that still spills as before.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/output.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "output.h"
#include "settings.h"
#include "utils/tuplestore.h"

/* See output.h. */
void
OdpOutputInit(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	bool		random_access;

	InitMaterializedSRF(fcinfo, 0);
	if (odp_output_memory_kb <= work_mem)
		return;
	random_access = (rsinfo->allowedModes & SFRM_Materialize_Random) != 0;
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	tuplestore_end(rsinfo->setResult);
	rsinfo->setResult = tuplestore_begin_heap(random_access, false, odp_output_memory_kb);
	MemoryContextSwitchTo(old);
}
