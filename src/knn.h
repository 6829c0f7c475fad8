/*-------------------------------------------------------------------------
 *
 * knn.h
 *	  The k-NN steps of knn.c that odp_outlier_predict (outliers.c) shares:
 *	  reading a source and its queries, and computing the neighbours.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/knn.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_KNN_PG_H
#define ODP_KNN_PG_H

#include "engine_glue.h"
#include "fmgr.h"
#include "input/input.h"

/* The neighbours a call computed, in the work context. */
typedef struct OdpKnnResult
{
	int32		k;				/* per query, after clamping to the rows */
	double	   *dist;			/* queries x k, in the rows' precision
								 * (float32 ones widened) */
	int64	   *index;			/* source row indexes */
	OdpRunInfo	info;
} OdpKnnResult;

/* The specs of the rows searched and of the queries, from the arguments. */
extern void OdpKnnArgSpecs(FunctionCallInfo fcinfo, int src, int opt, int qsrc,
						   int qopt, OdpInputSpec *spec, OdpInputSpec *qspec);
/*
 * Reads the queries, checked against the source's rows; rows of either
 * in float32 are widened to float64 where the other's are float64.
 */
extern void OdpKnnReadQueries(const OdpInputSpec *qspec, OdpInput *source,
							  OdpMetric metric, OdpInput *queries);
extern void OdpKnnCheckQueries(OdpInput *queries, OdpInput *source,
							   OdpMetric metric);
/* The k nearest rows of source for every query (k clamped to the rows). */
extern void OdpKnnCompute(const OdpInput *queries, const OdpInput *source,
						  OdpMetric metric, int32 k, bool self_join,
						  OdpKnnResult *res);

#endif							/* ODP_KNN_PG_H */
