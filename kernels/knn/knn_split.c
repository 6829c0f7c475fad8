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
 * A float32 self join that one device runs through the symmetric filter
 * (one test per pair of rows, for both rows) splits by its pairs instead:
 * the parts form a team (knn_internal.h), each owning a range of rows as
 * above but testing a share of every row's pairs; the lists are the same
 * bit for bit, since a row's list is the k smallest by (distance, index)
 * over the same candidates, whichever part tested them.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_split.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "devices/device_set.h"
#include "knn/knn_internal.h"

/* Queries per block of a part's range (and the fewest a part takes). */
#define ODP_KNN_SPLIT_ALIGN		64

/*
 * One split call's arguments, shared read-only by its parts: float32
 * rows take qnorms, cnorms and dist, float64 rows (data64) qnorms64,
 * cnorms64 and dist64.
 */
typedef struct KnnSplit
{
	const OdpMatrix *queries;
	const OdpMatrix *cands;
	const float *qnorms;
	const float *cnorms;
	float	   *dist;
	const double *qnorms64;
	const double *cnorms64;
	double	   *dist64;
	OdpMetric	metric;
	int32_t		k;
	bool		self_join;
	int64_t    *index;
	int64_t		first[ODP_MAX_GPUS + 1];
	OdpKnnTeam *team;			/* a self join split by its pairs, or NULL */
} KnnSplit;

/* Query rows [first, first + count) (count 0: all) on ctx's device. */
static OdpStatus
KnnSplitRows(const KnnSplit *s, OdpContext *ctx, int64_t first, int64_t count)
{
	if (odp_matrix_is64(s->queries))
		return odp_gpu_knn64_rows(ctx, s->queries, s->cands, s->qnorms64,
								  s->cnorms64, s->metric, s->k, s->self_join,
								  first, count, s->dist64, s->index);
	return odp_gpu_knn_rows(ctx, s->queries, s->cands, s->qnorms, s->cnorms,
							s->metric, s->k, s->self_join, first, count,
							s->dist, s->index);
}

/* Runs part p's range of queries on its device. */
static OdpStatus
KnnSplitPart(void *arg, int part, OdpContext *pctx)
{
	const KnnSplit *s = (const KnnSplit *) arg;
	const int64_t first = s->first[part];
	const int64_t count = s->first[part + 1] - first;

	if (s->team != NULL)
		return odp_gpu_knn_team_rows(pctx, s->queries, s->qnorms, s->metric, s->k,
									 s->team, part, s->dist, s->index);
	if (count == 0)
		return ODP_OK;
	return KnnSplitRows(s, pctx, first, count);
}

/* Rows whose integer values a self join's sample of rows shows: at most this many. */
#define KNN_TEAM_SAMPLE_ROWS	4096

/*
 * Whether s, split over parts devices, shares out its pairs (a team):
 * a float32 self join the filter's symmetric pass serves, whose rows are
 * not integers (those take the exact integer path, which a team does
 * not: the first rows show it).
 */
static bool
KnnSplitTeamed(const KnnSplit *s)
{
	const OdpMatrix *m = s->queries;
	const int64_t n = (m->rows < KNN_TEAM_SAMPLE_ROWS ? m->rows : KNN_TEAM_SAMPLE_ROWS) * m->dims;

	if (!s->self_join || s->dist == NULL || odp_matrix_is64(m) || m->data != s->cands->data ||
		!odp_gpu_knn_team_fits(m->rows, m->dims, s->metric, s->k))
		return false;
	if (s->metric == ODP_METRIC_COSINE)
		return true;			/* the integer path has no cosine */
	for (int64_t i = 0; i < n; i++)
		if (m->data[i] != rintf(m->data[i]))
			return true;
	return false;
}

/* Runs s over set as a team (KnnSplitTeamed); s->first is set. */
static OdpStatus
KnnSplitTeamRun(OdpContext *ctx, const OdpDeviceSet *set, KnnSplit *s)
{
	OdpStatus	status;

	s->team = odp_knn_team_make(set->count, s->first, s->queries->rows);
	if (s->team == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for a split self join");
	status = odp_knn_split_run(ctx, set, s->queries, s->cands, KnnSplitPart, s);
	odp_knn_team_free(s->team);
	s->team = NULL;
	return status;
}

/* See knn_internal.h. */
OdpStatus
odp_knn_split_plan(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
				   OdpDeviceSet *set, int64_t *first, bool *split)
{
	OdpStatus	status;

	*split = false;
	if ((status = OdpDeviceSetResolve(ctx, set)) != ODP_OK)
		return status;
	*split = queries->rows >= (int64_t) set->count * ODP_KNN_SPLIT_ALIGN &&
		OdpDeviceSetWorth(ctx, set, odp_one_device_ms(ODP_WORK_DISTANCES, queries->rows,
													  cands->rows, cands->dims));
	if (*split)
		OdpSplitRows(queries->rows, set->count, false, ODP_KNN_SPLIT_ALIGN, first);
	return ODP_OK;
}

/* Page-locks m's rows for every part. */
static void
KnnSplitPin(OdpContext *ctx, OdpSharedInputs *in, const OdpMatrix *m)
{
	const bool	wide = odp_matrix_is64(m);
	const void *data = wide ? (const void *) m->data64 : (const void *) m->data;

	OdpSharedInputsPin(ctx, in, data, (wide ? sizeof(double) : sizeof(float)) *
					   (size_t) m->rows * (size_t) m->dims);
}

/* See knn_internal.h. */
OdpStatus
odp_knn_split_run(OdpContext *ctx, const OdpDeviceSet *set, const OdpMatrix *queries,
				  const OdpMatrix *cands, OdpPartFn fn, void *arg)
{
	OdpSharedInputs in = {0};
	OdpStatus	status;

	KnnSplitPin(ctx, &in, queries);
	/* a self join's rows, maybe in a second matrix, are locked once */
	if (cands->data != queries->data || cands->data64 != queries->data64)
		KnnSplitPin(ctx, &in, cands);
	status = OdpDeviceSetRun(ctx, set, fn, arg, NULL, NULL);
	OdpSharedInputsRelease(ctx, &in);
	return status;
}

/*
 * Runs the call s describes (everything but first set) over ctx's device
 * set, or on its first device when it does not split.
 */
static OdpStatus
KnnSplitCall(OdpContext *ctx, KnnSplit *s)
{
	OdpDeviceSet set;
	bool		split;
	OdpStatus	status;

	status = odp_knn_split_plan(ctx, s->queries, s->cands, &set, s->first, &split);
	if (status != ODP_OK)
		return status;
	if (!split)
		return KnnSplitRows(s, ctx, 0, 0);
	if (KnnSplitTeamed(s))
		return KnnSplitTeamRun(ctx, &set, s);
	return odp_knn_split_run(ctx, &set, s->queries, s->cands, KnnSplitPart, s);
}

/* See knn_internal.h. */
OdpStatus
odp_split_knn(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
			  const float *qnorms, const float *cnorms, OdpMetric metric,
			  int32_t k, bool self_join, float *dist, int64_t *index)
{
	KnnSplit	s;

	memset(&s, 0, sizeof(s));
	s.queries = queries;
	s.cands = cands;
	s.qnorms = qnorms;
	s.cnorms = cnorms;
	s.dist = dist;
	s.metric = metric;
	s.k = k;
	s.self_join = self_join;
	s.index = index;
	return KnnSplitCall(ctx, &s);
}

/* See knn_internal.h. */
OdpStatus
odp_split_knn64(OdpContext *ctx, const OdpMatrix *queries,
				const OdpMatrix *cands, const double *qnorms,
				const double *cnorms, OdpMetric metric, int32_t k,
				bool self_join, double *dist, int64_t *index)
{
	KnnSplit	s;

	if (!odp_matrix_is64(queries) || !odp_matrix_is64(cands))
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"the float64 k-NN split needs float64 rows on both sides");
	memset(&s, 0, sizeof(s));
	s.queries = queries;
	s.cands = cands;
	s.qnorms64 = qnorms;
	s.cnorms64 = cnorms;
	s.dist64 = dist;
	s.metric = metric;
	s.k = k;
	s.self_join = self_join;
	s.index = index;
	return KnnSplitCall(ctx, &s);
}
