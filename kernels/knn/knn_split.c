/*-------------------------------------------------------------------------
 *
 * knn_split.c
 *	  k nearest neighbours spread over the devices of the call's device
 *	  set (device_set.h), and the query-row split it shares with the
 *	  outlier scores (outliers_split.c).
 *
 * Each part takes a contiguous range of the query rows and has every
 * candidate row on its device.  A query's list depends only on the query
 * and the candidates, not on which queries share its chunk or device (the
 * k-NN primitive's merge is exact whatever the chunking), so the parts
 * write disjoint ranges of the very outputs one device writes and the
 * results are the same, bit for bit.  Ranges are whole blocks of
 * ODP_KNN_SPLIT_ALIGN queries, and a query set too small to give every
 * part one runs on the first device alone.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_split.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "devices/device_set.h"
#include "knn/knn_internal.h"

/* Queries per block of a part's range (and the fewest a part takes). */
#define ODP_KNN_SPLIT_ALIGN		64

/* One split call's arguments, shared read-only by its parts. */
typedef struct KnnSplit
{
	const OdpMatrix *queries;
	const OdpMatrix *cands;
	const float *qnorms;
	const float *cnorms;
	OdpMetric	metric;
	int32_t		k;
	bool		self_join;
	float	   *dist;
	int64_t    *index;
	int64_t		first[ODP_MAX_GPUS + 1];
} KnnSplit;

/* Runs part p's range of queries on its device. */
static OdpStatus
KnnSplitPart(void *arg, int part, OdpContext *pctx)
{
	const KnnSplit *s = (const KnnSplit *) arg;
	const int64_t first = s->first[part];
	const int64_t count = s->first[part + 1] - first;

	if (count == 0)
		return ODP_OK;
	return odp_gpu_knn_rows(pctx, s->queries, s->cands, s->qnorms, s->cnorms,
							s->metric, s->k, s->self_join, first, count,
							s->dist, s->index);
}

/* See knn_internal.h. */
OdpStatus
odp_knn_split_plan(OdpContext *ctx, int64_t queries, OdpDeviceSet *set,
				   int64_t *first, bool *split)
{
	OdpStatus	status;

	*split = false;
	if ((status = OdpDeviceSetResolve(ctx, set)) != ODP_OK)
		return status;
	*split = set->count > 1 &&
		queries >= (int64_t) set->count * ODP_KNN_SPLIT_ALIGN;
	if (*split)
		OdpSplitRows(queries, set->count, false, ODP_KNN_SPLIT_ALIGN, first);
	return ODP_OK;
}

/* See knn_internal.h. */
OdpStatus
odp_split_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
			  const float *qnorms, const float *cnorms, OdpMetric metric,
			  int32_t k, bool self_join, float *dist, int64_t *index)
{
	OdpDeviceSet set;
	KnnSplit	s;
	bool		split;
	OdpStatus	status;

	memset(&s, 0, sizeof(s));
	status = odp_knn_split_plan(ctx, queries->rows, &set, s.first, &split);
	if (status != ODP_OK)
		return status;
	if (!split)
		return odp_gpu_knn(ctx, queries, cands, qnorms, cnorms, metric, k,
						   self_join, dist, index);
	s.queries = queries;
	s.cands = cands;
	s.qnorms = qnorms;
	s.cnorms = cnorms;
	s.metric = metric;
	s.k = k;
	s.self_join = self_join;
	s.dist = dist;
	s.index = index;
	return OdpDeviceSetRun(ctx, &set, KnnSplitPart, &s, NULL, NULL);
}
