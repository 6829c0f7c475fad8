/*-------------------------------------------------------------------------
 *
 * outliers_split.c
 *	  Outlier scores spread over the devices of the call's device set
 *	  (device_set.h).
 *
 * Each part computes the scores of a contiguous range of the rows, with
 * every row on its device as a candidate: the query-row split of the k-NN
 * primitive (odp_knn_split_plan), whose merge is exact whatever the
 * chunking, so each score is the one a single device computes, bit for
 * bit.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/outliers_split.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "devices/device_set.h"
#include "knn/knn_internal.h"
#include "outliers/outliers_internal.h"

/*
 * One split call's arguments, shared read-only by its parts: norms for
 * float32 rows, norms64 for float64 ones (data64).
 */
typedef struct OutlierSplit
{
	const OdpMatrix *m;
	const float *norms;
	const double *norms64;
	OdpMetric	metric;
	int32_t		k;
	double	   *scores;
	int64_t		first[ODP_MAX_GPUS + 1];
} OutlierSplit;

/* Scores rows [first, first + count) (count 0: all) on ctx's device. */
static OdpStatus
OutlierSplitRows(const OutlierSplit *s, OdpContext *ctx, int64_t first,
				 int64_t count)
{
	if (odp_matrix_is64(s->m))
		return odp_gpu_outlier_scores64_rows(ctx, s->m, s->metric, s->k,
											 s->norms64, first, count,
											 s->scores);
	return odp_gpu_outlier_scores_rows(ctx, s->m, s->metric, s->k, s->norms,
									   first, count, s->scores);
}

/* Scores part p's range of rows on its device. */
static OdpStatus
OutlierSplitPart(void *arg, int part, OdpContext *pctx)
{
	const OutlierSplit *s = (const OutlierSplit *) arg;
	const int64_t first = s->first[part];
	const int64_t count = s->first[part + 1] - first;

	if (count == 0)
		return ODP_OK;
	return OutlierSplitRows(s, pctx, first, count);
}

/*
 * Runs the call s describes (everything but first set) over ctx's device
 * set, or on its first device when it does not split.
 */
static OdpStatus
OutlierSplitCall(OdpContext *ctx, OutlierSplit *s)
{
	OdpDeviceSet set;
	bool		split;
	OdpStatus	status;

	status = odp_knn_split_plan(ctx, s->m, s->m, &set, s->first, &split);
	if (status != ODP_OK)
		return status;
	if (!split)
		return OutlierSplitRows(s, ctx, 0, 0);
	return odp_knn_split_run(ctx, &set, s->m, s->m, OutlierSplitPart, s);
}

/* See outliers_internal.h. */
OdpStatus
odp_split_outlier_scores(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
						 int32_t k, const float *norms, double *scores)
{
	OutlierSplit s;

	memset(&s, 0, sizeof(s));
	s.m = m;
	s.norms = norms;
	s.metric = metric;
	s.k = k;
	s.scores = scores;
	return OutlierSplitCall(ctx, &s);
}

/* See outliers_internal.h. */
OdpStatus
odp_split_outlier_scores64(OdpContext *ctx, const OdpMatrix *m,
						   OdpMetric metric, int32_t k, const double *norms,
						   double *scores)
{
	OutlierSplit s;

	if (!odp_matrix_is64(m))
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"the float64 outlier split needs float64 rows");
	memset(&s, 0, sizeof(s));
	s.m = m;
	s.norms64 = norms;
	s.metric = metric;
	s.k = k;
	s.scores = scores;
	return OutlierSplitCall(ctx, &s);
}
