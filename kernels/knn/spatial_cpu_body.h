/*-------------------------------------------------------------------------
 *
 * spatial_cpu_body.h
 *	  The CPU spatial path (spatial_cpu.c) for one precision of the rows:
 *	  builds the tree of spatial.h and runs the queries on threads.
 *
 * Include it after spatial_body.h's instance, with
 *
 *	  #define ODP_SPC_ROWS(m)	(m)->data or (m)->data64
 *	  #define ODP_SPC_SUM		odp_sum_ascending or odp_sum_ascending64
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/spatial_cpu_body.h
 *
 *-------------------------------------------------------------------------
 */
#if !defined(ODP_SPC_ROWS) || !defined(ODP_SPC_SUM)
#error "define the ODP_SPC_ macros before including spatial_cpu_body.h"
#endif

/* A tree's host memory. */
typedef struct ODP_SP_NAME(Host)
{
	ODP_SP_NAME(Tree) t;
	ODP_SP_T   *pts;
	uint32_t   *order;
	ODP_SP_T   *lo;
	ODP_SP_T   *hi;
	uint32_t   *nmin;
} ODP_SP_NAME(Host);

static void
ODP_SP_NAME(host_free) (ODP_SP_NAME(Host) *h)
{
	free(h->pts);
	free(h->order);
	free(h->lo);
	free(h->hi);
	free(h->nmin);
}

/* Whether row i ranks before row j along dimension d: value, then index. */
static inline bool
ODP_SP_NAME(kd_less) (const ODP_SP_T *pts, const uint32_t *order, int dims, int d,
					  int64_t i, int64_t j)
{
	ODP_SP_T	x = pts[i * dims + d],
				y = pts[j * dims + d];

	return x < y || (x == y && order[i] < order[j]);
}

static inline void
ODP_SP_NAME(kd_swap) (ODP_SP_T *pts, uint32_t *order, int dims, int64_t i, int64_t j)
{
	uint32_t	o = order[i];

	order[i] = order[j];
	order[j] = o;
	for (int d = 0; d < dims; d++)
	{
		ODP_SP_T	t = pts[i * dims + d];

		pts[i * dims + d] = pts[j * dims + d];
		pts[j * dims + d] = t;
	}
}

/*
 * Puts the rows of [a, b) in order so that the one at position m is the
 * one a sort along dimension d would put there, smaller ones before it
 * and larger ones after (a selection: expected linear time).
 */
static void
ODP_SP_NAME(kd_select) (ODP_SP_T *pts, uint32_t *order, int dims, int d,
						int64_t a, int64_t b, int64_t m)
{
	while (b - a > 1)
	{
		int64_t		mid = a + (b - a) / 2;
		int64_t		i,
					store;

		/* median of three as the pivot, kept at b - 1 */
		if (ODP_SP_NAME(kd_less) (pts, order, dims, d, mid, a))
			ODP_SP_NAME(kd_swap) (pts, order, dims, mid, a);
		if (ODP_SP_NAME(kd_less) (pts, order, dims, d, b - 1, a))
			ODP_SP_NAME(kd_swap) (pts, order, dims, b - 1, a);
		if (ODP_SP_NAME(kd_less) (pts, order, dims, d, mid, b - 1))
			ODP_SP_NAME(kd_swap) (pts, order, dims, mid, b - 1);
		store = a;
		for (i = a; i < b - 1; i++)
			if (ODP_SP_NAME(kd_less) (pts, order, dims, d, i, b - 1))
				ODP_SP_NAME(kd_swap) (pts, order, dims, i, store++);
		ODP_SP_NAME(kd_swap) (pts, order, dims, store, b - 1);
		if (store == m)
			return;
		if (m < store)
			b = store;
		else
			a = store + 1;
	}
}

/*
 * Splits node rows [a, b), span rows wide in the heap's layout, at its
 * median along the dimension of its level, and its children in turn: a
 * k-d tree in the heap's shape, whose boxes never overlap.
 */
static void
ODP_SP_NAME(kd_split) (ODP_SP_T *pts, uint32_t *order, int dims, int64_t a,
					   int64_t b, int64_t span, int level)
{
	while (span > ODP_SPATIAL_LEAF && b - a > 1)
	{
		const int64_t half = span / 2;
		const int64_t mid = a + half;

		span = half;
		if (mid >= b)
		{
			level++;
			continue;
		}
		ODP_SP_NAME(kd_select) (pts, order, dims, level % dims, a, b, mid);
		ODP_SP_NAME(kd_split) (pts, order, dims, a, mid, half, level + 1);
		a = mid;
		level++;
	}
}

/*
 * One level of the build on threads: node j of the level (span rows wide)
 * is split at its middle (whole: its subtree is built entirely).
 */
typedef struct ODP_SP_NAME(SplitJob)
{
	ODP_SP_T   *pts;
	uint32_t   *order;
	int			dims;
	int64_t		rows;
	int64_t		span;
	int			level;
	bool		whole;
} ODP_SP_NAME(SplitJob);

static void
ODP_SP_NAME(split_task) (void *arg, int64_t j)
{
	const ODP_SP_NAME(SplitJob) *job = (const ODP_SP_NAME(SplitJob) *) arg;
	const int64_t a = j * job->span;
	const int64_t b = a + job->span < job->rows ? a + job->span : job->rows;
	const int64_t mid = a + job->span / 2;

	if (job->whole)
		ODP_SP_NAME(kd_split) (job->pts, job->order, job->dims, a, b, job->span, job->level);
	else if (mid < b)
		ODP_SP_NAME(kd_select) (job->pts, job->order, job->dims, job->level % job->dims, a, b, mid);
}

/* Builds the tree over rows x dims values at v into h. */
static OdpStatus
ODP_SP_NAME(host_build) (OdpContext *ctx, const ODP_SP_T *v, int64_t rows,
						 int dims, ODP_SP_NAME(Host) *h)
{
	const int64_t first_leaf = odp_spatial_first_leaf(rows);
	const int64_t nodes = 2 * (first_leaf + 1) - 1;

	memset(h, 0, sizeof(*h));
	h->order = malloc(sizeof(uint32_t) * (size_t) rows);
	h->pts = malloc(sizeof(ODP_SP_T) * (size_t) rows * dims);
	h->lo = malloc(sizeof(ODP_SP_T) * (size_t) nodes * dims);
	h->hi = malloc(sizeof(ODP_SP_T) * (size_t) nodes * dims);
	h->nmin = malloc(sizeof(uint32_t) * (size_t) nodes);
	if (h->order == NULL || h->pts == NULL || h->lo == NULL ||
		h->hi == NULL || h->nmin == NULL)
	{
		ODP_SP_NAME(host_free) (h);
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for the spatial tree of %lld rows",
						(long long) rows);
	}
	memcpy(h->pts, v, sizeof(ODP_SP_T) * (size_t) rows * dims);
	for (int64_t r = 0; r < rows; r++)
		h->order[r] = (uint32_t) r;
	{
		/*
		 * The levels above ODP_SPATIAL_CPU_SUBTREES nodes one at a time, each
		 * level's nodes on threads; then the subtrees, one task each.
		 */
		const int64_t top = (first_leaf + 1) * ODP_SPATIAL_LEAF;
		ODP_SP_NAME(SplitJob) job = {h->pts, h->order, dims, rows, top, 0, false};
		OdpStatus	status = ODP_OK;

		for (; status == ODP_OK && job.span > ODP_SPATIAL_LEAF &&
			 top / job.span < ODP_SPATIAL_CPU_SUBTREES; job.span /= 2, job.level++)
			status = odp_parallel_tasks(ctx, (rows + job.span - 1) / job.span,
										ODP_SP_NAME(split_task), &job);
		job.whole = true;
		if (status == ODP_OK && job.span > ODP_SPATIAL_LEAF)
			status = odp_parallel_tasks(ctx, (rows + job.span - 1) / job.span,
										ODP_SP_NAME(split_task), &job);
		if (status != ODP_OK)
		{
			ODP_SP_NAME(host_free) (h);
			return status;
		}
	}
	for (int64_t j = 0; j <= first_leaf; j++)
		ODP_SP_NAME(leaf_box) (h->pts, h->order, rows, dims, first_leaf, j,
							   h->lo, h->hi, h->nmin);
	for (int64_t node = first_leaf - 1; node >= 0; node--)
		ODP_SP_NAME(merge_box) (dims, node, h->lo, h->hi, h->nmin);

	h->t.n = rows;
	h->t.dims = dims;
	h->t.first_leaf = first_leaf;
	h->t.pts = h->pts;
	h->t.order = h->order;
	h->t.lo = h->lo;
	h->t.hi = h->hi;
	h->t.nmin = h->nmin;
	return ODP_OK;
}

/* One search job: queries in blocks of ODP_SPATIAL_CPU_BLOCK. */
typedef struct ODP_SP_NAME(Job)
{
	const ODP_SP_NAME(Tree) *t;
	const ODP_SP_T *queries;	/* NULL: a self join, in tree order */
	int64_t		nq;
	OdpMetric	metric;
	int			k;
	const OdpSpatialOut *out;
	int64_t    *evals;			/* per task */
} ODP_SP_NAME(Job);

static void
ODP_SP_NAME(task) (void *arg, int64_t task)
{
	ODP_SP_NAME(Job) *job = (ODP_SP_NAME(Job) *) arg;
	const ODP_SP_NAME(Tree) *t = job->t;
	const int	k = job->k;
	const int64_t q0 = task * ODP_SPATIAL_CPU_BLOCK;
	const int64_t q1 = q0 + ODP_SPATIAL_CPU_BLOCK < job->nq ? q0 + ODP_SPATIAL_CPU_BLOCK : job->nq;
	ODP_SP_T	bd[ODP_SPATIAL_MAX_K];
	uint32_t	bi[ODP_SPATIAL_MAX_K];
	int64_t		evals = 0;

	for (int64_t p = q0; p < q1; p++)
	{
		/* a self join walks the rows in tree order, near rows together */
		const int64_t q = job->queries == NULL ? (int64_t) t->order[p] : p;

		if (job->queries == NULL)
			evals += ODP_SP_NAME(search_own) (t, job->metric, p, k, bd, bi);
		else
			evals += ODP_SP_NAME(search) (t, job->metric, job->queries + p * t->dims,
										  -1, k, bd, bi);
		if (job->out->scores != NULL)
			job->out->scores[q] = ODP_SPC_SUM(bd, k);
		else
			for (int j = 0; j < k; j++)
			{
				job->out->dist[q * k + j] = (double) bd[j];
				job->out->index[q * k + j] = (int64_t) bi[j];
			}
	}
	job->evals[task] = evals;
}

/* The CPU spatial path over rows of this precision; see spatial.h. */
static OdpStatus
ODP_SP_NAME(cpu_run) (OdpContext *ctx, const OdpMatrix *queries,
					  const OdpMatrix *cands, OdpMetric metric, int32_t k,
					  bool self_join, const OdpSpatialOut *out)
{
	ODP_SP_NAME(Host) h;
	ODP_SP_NAME(Job) job;
	int64_t		tasks;
	double		start = odp_now_ms();
	OdpStatus	status;

	status = ODP_SP_NAME(host_build) (ctx, ODP_SPC_ROWS(cands), cands->rows,
									  cands->dims, &h);
	if (status != ODP_OK)
		return status;
	if (odp_spatial_probe_wanted(ctx->spatial, queries->rows, cands->rows))
	{
		ODP_SP_T	bd[ODP_SPATIAL_MAX_K];
		uint32_t	bi[ODP_SPATIAL_MAX_K];
		int64_t		evals = 0;

		for (int i = 0; i < ODP_SPATIAL_PROBE_QUERIES &&
			 !odp_spatial_probe_declines(evals, cands->rows); i++)
		{
			const int64_t p = odp_spatial_probe_query(i, queries->rows);

			evals += self_join
				? ODP_SP_NAME(search_own) (&h.t, metric, p, k, bd, bi)
				: ODP_SP_NAME(search) (&h.t, metric, ODP_SPC_ROWS(queries) + p * cands->dims,
									   -1, k, bd, bi);
		}
		if (odp_spatial_probe_declines(evals, cands->rows))
		{
			ODP_SP_NAME(host_free) (&h);
			ctx->spatial_used = 0;
			return ODP_OK;
		}
	}
	tasks = (queries->rows + ODP_SPATIAL_CPU_BLOCK - 1) / ODP_SPATIAL_CPU_BLOCK;
	job.t = &h.t;
	job.queries = self_join ? NULL : ODP_SPC_ROWS(queries);
	job.nq = queries->rows;
	job.metric = metric;
	job.k = k;
	job.out = out;
	job.evals = calloc((size_t) tasks, sizeof(int64_t));
	if (job.evals == NULL)
		status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	else
		status = odp_parallel_tasks(ctx, tasks, ODP_SP_NAME(task), &job);
	if (status == ODP_OK)
		for (int64_t i = 0; i < tasks; i++)
			ctx->spatial_distances += job.evals[i];
	free(job.evals);
	ODP_SP_NAME(host_free) (&h);
	ctx->compute_ms = odp_now_ms() - start;
	return status;
}

#undef ODP_SPC_ROWS
#undef ODP_SPC_SUM
