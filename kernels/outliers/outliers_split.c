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

/* One split call's arguments, shared read-only by its parts. */
typedef struct OutlierSplit
{
	const OdpMatrix *m;
	const float *norms;
	OdpMetric	metric;
	int32_t		k;
	double	   *scores;
	int64_t		first[ODP_MAX_GPUS + 1];
} OutlierSplit;

/* Scores part p's range of rows on its device. */
static OdpStatus
OutlierSplitPart(void *arg, int part, OdpContext *pctx)
{
	const OutlierSplit *s = (const OutlierSplit *) arg;
	const int64_t first = s->first[part];
	const int64_t count = s->first[part + 1] - first;

	if (count == 0)
		return ODP_OK;
	return odp_gpu_outlier_scores_rows(pctx, s->m, s->metric, s->k, s->norms,
									   first, count, s->scores);
}

/* See outliers_internal.h. */
OdpStatus
odp_split_outlier_scores(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
						 int32_t k, const float *norms, double *scores)
{
	OdpDeviceSet set;
	OutlierSplit s;
	bool		split;
	OdpStatus	status;

	memset(&s, 0, sizeof(s));
	if ((status = odp_knn_split_plan(ctx, m->rows, &set, s.first, &split)) != ODP_OK)
		return status;
	if (!split)
		return odp_gpu_outlier_scores(ctx, m, metric, k, norms, scores);
	s.m = m;
	s.norms = norms;
	s.metric = metric;
	s.k = k;
	s.scores = scores;
	return OdpDeviceSetRun(ctx, &set, OutlierSplitPart, &s, NULL, NULL);
}
