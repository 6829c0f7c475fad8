/*-------------------------------------------------------------------------
 *
 * args.h
 *	  Checks of SQL arguments shared by every analytic.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/args.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ARGS_H
#define ODP_ARGS_H

#include "fmgr.h"
#include "odp_outliers.h"
#include "utils/array.h"

extern void OdpArgNotNull(FunctionCallInfo fcinfo, int argno, const char *name);

/*
 * The ODP_BOUND_* exclusivity flags of a bounds argument ('[]', '[)',
 * '(]' or '()', as the range constructors take it) for regions read from
 * pairs of lower and upper columns; 22023 for anything else.
 */
extern uint8 OdpArgBounds(FunctionCallInfo fcinfo, int argno);
extern text *OdpArgSource(FunctionCallInfo fcinfo, int argno);
extern text *OdpArgOptText(FunctionCallInfo fcinfo, int argno);
extern ArrayType *OdpArgOptArray(FunctionCallInfo fcinfo, int argno);
extern OdpMetric OdpArgMetric(FunctionCallInfo fcinfo, int argno,
							  bool allow_inner_product);
extern double *OdpArgQueryVector(FunctionCallInfo fcinfo, int argno, int32 *dims);
extern float *OdpQueryToFloat32(const double *values, int32 n);
extern OdpOutlierMethod OdpArgMethod(FunctionCallInfo fcinfo, int argno);
extern int32 OdpArgK(FunctionCallInfo fcinfo, int argno);
extern int32 OdpArgPositive(FunctionCallInfo fcinfo, int argno, const char *name);
extern void OdpCheckKAgainstRows(int32 k, int64 rows, const char *source_desc);

extern void OdpCheckKForMethod(int32 k, OdpOutlierMethod method);

#endif							/* ODP_ARGS_H */
