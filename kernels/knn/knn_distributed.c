/*-------------------------------------------------------------------------
 *
 * knn_distributed.c
 *	  k nearest neighbours over shards (odp_distributed.h): a search that leaves
 *	  out the query's own row by id, and the merge of the shards' lists.
 *
 * A shard ranks its rows by (distance, index); its rows are sorted by id,
 * so that is (distance, id), and merging the shards' lists by (distance,
 * id) gives exactly the ranking of one search over all the rows.  The
 * distances are float64 for both precisions (a float32 one widens
 * exactly), so one merge serves both.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_distributed.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "include/odp_distributed.h"
#include "include/odp_knn.h"

/* Whether (da, ia) ranks before (db, ib) under metric. */
static inline bool
knn_before(OdpMetric metric, double da, int64_t ia, double db, int64_t ib)
{
	if (da != db)
		return metric == ODP_METRIC_INNER_PRODUCT ? da > db : da < db;
	return ia < ib;
}

/* See odp_distributed.h. */
OdpStatus
odp_knn_excluding(OdpContext *ctx, const OdpMatrix *queries, const int64_t *qids,
				  const OdpMatrix *cands, const int64_t *cids, OdpMetric metric,
				  int32_t k, double *dist, int64_t *out_ids)
{
	const double pad = metric == ODP_METRIC_INNER_PRODUCT ? -INFINITY : INFINITY;
	int64_t		want = (int64_t) k + (qids != NULL ? 1 : 0);
	int32_t		kk;
	double	   *d = NULL;
	int64_t    *idx = NULL;
	OdpStatus	status = ODP_OK;

	if (k < 1 || k >= ODP_MAX_K || (cids == NULL && cands->rows > 0))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"k = %d: a sharded search needs 1 .. %d and the rows' ids",
						(int) k, ODP_MAX_K - 1);
	for (int64_t i = 0; i < queries->rows * k; i++)
	{
		dist[i] = pad;
		out_ids[i] = -1;
	}
	if (cands->rows == 0 || queries->rows == 0)
		return ODP_OK;
	kk = (int32_t) (want < cands->rows ? want : cands->rows);
	d = malloc(sizeof(double) * (size_t) queries->rows * (size_t) kk);
	idx = malloc(sizeof(int64_t) * (size_t) queries->rows * (size_t) kk);
	if (d == NULL || idx == NULL)
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for %lld neighbour lists",
						  (long long) queries->rows);
	if (status == ODP_OK)
		status = odp_compute_knn(ctx, queries, cands, metric, kk, false, d, idx);
	if (status == ODP_OK)
	{
		for (int64_t q = 0; q < queries->rows; q++)
		{
			int32_t		kept = 0;

			for (int32_t j = 0; j < kk && kept < k; j++)
			{
				int64_t		id = cids[idx[q * kk + j]];

				if (qids != NULL && id == qids[q])
					continue;
				dist[q * k + kept] = d[q * kk + j];
				out_ids[q * k + kept] = id;
				kept++;
			}
		}
	}
	free(d);
	free(idx);
	return status;
}

/* See odp_distributed.h. */
void
odp_knn_merge(OdpMetric metric, int32_t k, int64_t queries,
			  const double *const *dist, const int64_t *const *ids, int nlists,
			  double *out_dist, int64_t *out_ids)
{
	const double pad = metric == ODP_METRIC_INNER_PRODUCT ? -INFINITY : INFINITY;
	int32_t		pos[64];

	for (int64_t q = 0; q < queries; q++)
	{
		const int64_t base = q * k;

		memset(pos, 0, sizeof(int32_t) * (size_t) nlists);
		for (int32_t j = 0; j < k; j++)
		{
			int			best = -1;

			for (int l = 0; l < nlists; l++)
			{
				int32_t		p = pos[l];

				if (p >= k || ids[l][base + p] < 0)
					continue;
				if (best < 0 ||
					knn_before(metric, dist[l][base + p], ids[l][base + p],
							   dist[best][base + pos[best]],
							   ids[best][base + pos[best]]))
					best = l;
			}
			if (best < 0)
			{
				out_dist[base + j] = pad;
				out_ids[base + j] = -1;
				continue;
			}
			out_dist[base + j] = dist[best][base + pos[best]];
			out_ids[base + j] = ids[best][base + pos[best]];
			pos[best]++;
		}
	}
}
