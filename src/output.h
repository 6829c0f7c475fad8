/*-------------------------------------------------------------------------
 *
 * output.h
 *	  The analytics' results into the executor: one materialised
 *	  set-returning function's tuplestore, kept in memory up to
 *	  odp_gpu.output_memory.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/output.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_OUTPUT_H
#define ODP_OUTPUT_H

#include "fmgr.h"

/*
 * InitMaterializedSRF for an analytic's result: the tuplestore holds up to
 * odp_gpu.output_memory in memory (work_mem where that is larger) before it
 * spills to a temporary file.
 */
extern void OdpOutputInit(FunctionCallInfo fcinfo);

#endif							/* ODP_OUTPUT_H */
