/*-------------------------------------------------------------------------
 *
 * solvingset_split.c
 *	  SolvingSet spread over the devices of the call's device set: seed
 *	  001's GPU-DistributedSolvingSet inside one process.
 *
 * The rows are split into one contiguous range per part; each part is a
 * node of the distributed SolvingSet (odp_distributed.h) whose shard lives on its
 * device in the GPU backend (rows and partial neighbour lists resident),
 * and the caller's thread is the supervisor.  Every round (first
 * proposals, exact lists and bounds of a batch, pruning and proposals)
 * runs on all parts at once through OdpDeviceSetRun.  The nodes and the
 * supervisor make exactly the choices of one run over all rows (ids are
 * the rows' ids, or their indexes), so the top n, their scores, the
 * solving set and the iterations are those of one device, bit for bit.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_split.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "devices/device_set.h"
#include "include/odp_distributed.h"
#include "include/odp_outliers.h"
#include "outliers/solvingset_internal.h"

/* Fewest rows a part's shard holds for the call to split. */
#define SS_SPLIT_MIN_ROWS	4096

typedef enum SsSplitRound
{
	SS_ROUND_CREATE,
	SS_ROUND_FIRST,
	SS_ROUND_EXACT,
	SS_ROUND_NEXT
} SsSplitRound;

/* One split call: the parts' nodes and the round being run. */
typedef struct SsSplit
{
	OdpContext *ctx;			/* the caller's */
	const OdpDeviceSet *set;
	OdpMetric	metric;
	int32_t		k;
	OdpMatrix	shard[ODP_MAX_GPUS];
	OdpSsNode  *node[ODP_MAX_GPUS];
	int64_t		distances[ODP_MAX_GPUS];
	int64_t		give_up_at;		/* 0: never */
	int64_t		done_distances;
	bool		gave_up;

	/* the round's arguments */
	SsSplitRound round;
	int64_t		m;
	OdpSsRows  *props;
	const OdpSsRows *cands;
	double	  **lists;
	bool		prune;
	double		min_out;
} SsSplit;

/* Part p's step of the current round, on its device (pctx). */
static OdpStatus
SsSplitPart(void *arg, int part, OdpContext *pctx)
{
	SsSplit    *s = (SsSplit *) arg;

	switch (s->round)
	{
		case SS_ROUND_CREATE:
			return odp_ss_node_create(pctx, &s->shard[part], s->metric, s->k, true,
									  &s->node[part]);
		case SS_ROUND_FIRST:
			return odp_ss_node_first(pctx, s->node[part], s->m, &s->props[part]);
		case SS_ROUND_EXACT:
			return odp_ss_node_exact(pctx, s->node[part], s->cands, s->lists[part],
									 &s->distances[part]);
		case SS_ROUND_NEXT:
			return odp_ss_node_next(pctx, s->node[part], s->prune, s->min_out, s->m,
									&s->props[part]);
	}
	return ODP_OK;
}

/* Runs the current round on every part, keeping the call's timings. */
static OdpStatus
SsSplitRun(SsSplit *s)
{
	double		transfer = s->ctx->transfer_ms;
	double		compute = s->ctx->compute_ms;
	int64_t		chunks = s->ctx->chunks;
	OdpStatus	status = OdpDeviceSetRun(s->ctx, s->set, SsSplitPart, s, NULL, NULL);

	s->ctx->transfer_ms += transfer;
	s->ctx->compute_ms += compute;
	s->ctx->chunks += chunks;
	return status;
}

static OdpStatus
SsSplitFirst(void *arg, int64_t m, OdpSsRows *props)
{
	SsSplit    *s = (SsSplit *) arg;

	s->round = SS_ROUND_FIRST;
	s->m = m;
	s->props = props;
	return SsSplitRun(s);
}

static OdpStatus
SsSplitExact(void *arg, const OdpSsRows *cands, double **lists)
{
	SsSplit    *s = (SsSplit *) arg;
	OdpStatus	status;

	/* AUTO's bound on a SolvingSet that cannot prune, as on one device */
	if (s->give_up_at > 0 && s->done_distances >= s->give_up_at)
	{
		s->gave_up = true;
		return odp_fail(s->ctx, ODP_ERR_CANCELLED, "gave up for brute force");
	}
	s->round = SS_ROUND_EXACT;
	s->cands = cands;
	s->lists = lists;
	status = SsSplitRun(s);
	s->done_distances = 0;
	for (int p = 0; p < s->set->count; p++)
		s->done_distances += s->distances[p];
	return status;
}

static OdpStatus
SsSplitNext(void *arg, bool prune, double min_out, int64_t m, OdpSsRows *props)
{
	SsSplit    *s = (SsSplit *) arg;

	s->round = SS_ROUND_NEXT;
	s->prune = prune;
	s->min_out = min_out;
	s->m = m;
	s->props = props;
	return SsSplitRun(s);
}

/* See solvingset_internal.h. */
OdpStatus
odp_split_solvingset(OdpContext *ctx, const OdpMatrix *mat, OdpMetric metric,
					 int32_t k, int64_t n, int64_t m, int64_t give_up_at,
					 int64_t *order, double *scores, int64_t *count,
					 int64_t *solving_set, double *solving_scores,
					 OdpTopOutliersStats *st, bool *split, bool *gave_up)
{
	OdpDeviceSet set;
	SsSplit    *s = NULL;
	OdpSsSupervisor *sup = NULL;
	OdpSsNodes	nodes;
	OdpSsRows	props[ODP_MAX_GPUS];
	OdpSsRows	cands;
	double	   *lists[ODP_MAX_GPUS];
	int64_t    *ids = NULL;
	int64_t		first[ODP_MAX_GPUS + 1];
	int64_t    *top_ids = NULL;
	double		sup_ms = 0.0;
	OdpStatus	status;

	*split = false;
	*gave_up = false;
	if ((status = OdpDeviceSetResolve(ctx, &set)) != ODP_OK)
		return status;
	/* at most brute force's work: the pairs of rows */
	if (mat->rows < (int64_t) set.count * SS_SPLIT_MIN_ROWS ||
		!OdpDeviceSetWorth(ctx, &set, odp_one_device_ms(ODP_WORK_DISTANCES, mat->rows,
													 mat->rows, mat->dims)))
		return ODP_OK;
	*split = true;
	memset(props, 0, sizeof(props));
	memset(lists, 0, sizeof(lists));
	memset(&cands, 0, sizeof(cands));
	s = calloc(1, sizeof(SsSplit));
	ids = mat->ids ? NULL : malloc(sizeof(int64_t) * (size_t) mat->rows);
	top_ids = malloc(sizeof(int64_t) * (size_t) n);
	cands.ids = malloc(sizeof(int64_t) * (size_t) m);
	cands.rank = malloc(sizeof(double) * (size_t) m);
	cands.bound = malloc(sizeof(double) * (size_t) m);
	cands.vectors = malloc(sizeof(float) * (size_t) m * (size_t) mat->dims);
	for (int p = 0; p < set.count; p++)
	{
		props[p].ids = malloc(sizeof(int64_t) * (size_t) m);
		props[p].rank = malloc(sizeof(double) * (size_t) m);
		props[p].bound = malloc(sizeof(double) * (size_t) m);
		props[p].vectors = malloc(sizeof(float) * (size_t) m * (size_t) mat->dims);
		lists[p] = malloc(sizeof(double) * (size_t) m * (size_t) k);
	}
	status = ODP_OK;
	if (s == NULL || (mat->ids == NULL && ids == NULL) || !top_ids || !cands.ids ||
		!cands.rank || !cands.bound || !cands.vectors)
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for a SolvingSet over %d devices", set.count);
	for (int p = 0; p < set.count && status == ODP_OK; p++)
		if (!props[p].ids || !props[p].rank || !props[p].bound || !props[p].vectors ||
			!lists[p])
			status = odp_fail(ctx, ODP_ERR_HOST_OOM,
							  "out of host memory for a SolvingSet over %d devices", set.count);
	if (status != ODP_OK)
		goto done;

	for (int64_t r = 0; ids != NULL && r < mat->rows; r++)
		ids[r] = r;
	s->ctx = ctx;
	s->set = &set;
	s->metric = metric;
	s->k = k;
	s->give_up_at = give_up_at;
	OdpSplitRows(mat->rows, set.count, false, 1, first);
	for (int p = 0; p < set.count; p++)
	{
		s->shard[p].data = mat->data + first[p] * mat->dims;
		s->shard[p].rows = first[p + 1] - first[p];
		s->shard[p].dims = mat->dims;
		s->shard[p].ids = (mat->ids ? mat->ids : ids) + first[p];
		props[p].capacity = m;
		props[p].dims = mat->dims;
	}
	cands.capacity = m;
	cands.dims = mat->dims;

	s->round = SS_ROUND_CREATE;
	status = SsSplitRun(s);
	if (status == ODP_OK)
		status = odp_ss_sup_create(ctx, mat->rows, k, n, m, true, &sup);
	if (status != ODP_OK)
		goto done;
	nodes.count = set.count;
	nodes.arg = s;
	nodes.first = SsSplitFirst;
	nodes.exact = SsSplitExact;
	nodes.next = SsSplitNext;
	status = odp_ss_distributed(ctx, sup, &nodes, props, &cands, lists, &sup_ms);
	st->distances = s->done_distances;
	if (s->gave_up)
	{
		*gave_up = true;
		ctx->message[0] = '\0';
		status = ODP_OK;
		goto done;
	}
	if (status != ODP_OK)
		goto done;

	*count = odp_ss_sup_top(sup, top_ids, scores);
	for (int64_t i = 0; i < *count; i++)
		order[i] = odp_row_of_id(mat, top_ids[i]);
	st->iterations = odp_ss_sup_iterations(sup);
	st->solving_set_size = odp_ss_sup_set_size(sup);
	if (solving_set != NULL)
	{
		odp_ss_sup_set(sup, solving_set, solving_scores);
		for (int64_t i = 0; i < st->solving_set_size; i++)
			solving_set[i] = odp_row_of_id(mat, solving_set[i]);
	}

done:
	odp_ss_sup_free(sup);
	for (int p = 0; p < set.count; p++)
	{
		if (s != NULL)
			odp_ss_node_free(s->node[p]);
		free(props[p].ids);
		free(props[p].rank);
		free(props[p].bound);
		free(props[p].vectors);
		free(lists[p]);
	}
	free(cands.ids);
	free(cands.rank);
	free(cands.bound);
	free(cands.vectors);
	free(top_ids);
	free(ids);
	free(s);
	return status;
}
