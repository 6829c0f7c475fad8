/*-------------------------------------------------------------------------
 *
 * knn_batch.c
 *	  k-NN calls of a few queries that share one pass over the same
 *	  candidates with the calls that arrive while a pass runs
 *	  (odp_knn_shared, odp_knn.h): the GPU service's single queries on a
 *	  cached table, whose candidates are the same memory for every call.
 *
 * Calls are grouped by what their pass would be: the candidate matrix
 * (its address, rows, dimensions and precision), the metric and the path
 * (device, GPU).  A call joins its group's queue; where no pass runs, the
 * call runs one at once for every query queued (at most
 * ODP_KNN_SHARED_MAX_QUERIES, first come first), itself included, with
 * the largest k among them; the others wait for it.  So a call waits only
 * while a pass before it runs, never for company, and at most
 * SHARED_WAIT_MS: the call at the head of the queue that has waited that
 * long runs a pass of its own beside the running ones (a long pass over a
 * large table would otherwise hold every new call).  Each call then takes
 * its own k first entries of its queries' lists: a list under the
 * engine's total order (distance, then index) begins with the shorter
 * one.  Arguments are checked before a call joins, so a bad call fails
 * alone; a pass that fails fails every call in it, with its message.
 * The pass is cancelled only when every call in it is; a call cancelled
 * while it waits leaves the queue.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_batch.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/engine_internal.h"
#include "common/host_threads.h"
#include "include/odp_knn.h"
#include "knn/knn_internal.h"

/* How long a waiting call sleeps between looks at its cancel callback. */
#define SHARED_POLL_NS 250000L

/* The longest a call waits for the passes before it to end. */
#define SHARED_WAIT_MS 1.0

typedef struct SharedCall
{
	struct SharedCall *next;	/* in its group's queue */
	OdpContext *ctx;
	const OdpMatrix *queries;
	int32_t		k;
	double	   *dist;
	int64_t    *index;
	double		joined_ms;		/* odp_now_ms() as it joined the queue */
	double		taken_ms;		/* and as a pass took it */
	bool		taken;			/* a pass runs for it */
	bool		done;
	OdpStatus	status;
	int			batch;			/* queries of the pass */
} SharedCall;

typedef struct SharedGroup
{
	struct SharedGroup *next;
	const void *rows;			/* the candidates' values */
	int64_t		nrows;
	int32_t		dims;
	bool		is64;
	OdpMetric	metric;
	OdpDevice	device;
	int			gpu;			/* odp_device_first */
	int			running;		/* passes running */
	SharedCall *queue;			/* waiting calls, oldest first */
	int			members;		/* calls that joined and have not left */
} SharedGroup;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shared_moved = PTHREAD_COND_INITIALIZER;
static SharedGroup *shared_groups = NULL;

/*
 * Test counters: passes that served more than one call; passes a call
 * that had waited SHARED_WAIT_MS started beside running ones.
 */
int64_t		odp_knn_shared_passes = 0;
int64_t		odp_knn_shared_early = 0;

/* The group of a call (lock held), made where there is none; NULL: no memory. */
static SharedGroup *
SharedGroupOf(const OdpContext *ctx, const OdpMatrix *cands, OdpMetric metric)
{
	const void *rows = cands->data != NULL ? (const void *) cands->data : (const void *) cands->data64;
	SharedGroup *g;

	for (g = shared_groups; g != NULL; g = g->next)
		if (g->rows == rows && g->nrows == cands->rows && g->dims == cands->dims &&
			g->is64 == odp_matrix_is64(cands) && g->metric == metric &&
			g->device == ctx->device && g->gpu == odp_device_first(ctx))
			return g;
	g = calloc(1, sizeof(SharedGroup));
	if (g == NULL)
		return NULL;
	g->rows = rows;
	g->nrows = cands->rows;
	g->dims = cands->dims;
	g->is64 = odp_matrix_is64(cands);
	g->metric = metric;
	g->device = ctx->device;
	g->gpu = odp_device_first(ctx);
	g->next = shared_groups;
	shared_groups = g;
	return g;
}

/* Unlinks and frees a group no call is in (lock held). */
static void
SharedGroupDrop(SharedGroup *g)
{
	SharedGroup **link = &shared_groups;

	if (g->members > 0)
		return;
	while (*link != g)
		link = &(*link)->next;
	*link = g->next;
	free(g);
}

/* The pass's cancel callback: every call in it wants to stop. */
typedef struct SharedPass
{
	SharedCall *calls[ODP_KNN_SHARED_MAX_QUERIES];
	int			ncalls;
} SharedPass;

static bool
SharedPassCancelled(void *arg)
{
	const SharedPass *p = (const SharedPass *) arg;

	for (int i = 0; i < p->ncalls; i++)
		if (!odp_cancel_requested(p->calls[i]->ctx))
			return false;
	return true;
}

/* Runs one pass for the calls of p over cands, and hands each its lists. */
static void
SharedRun(SharedPass *p, const OdpMatrix *cands, OdpMetric metric)
{
	OdpContext	ctx = *p->calls[0]->ctx;
	OdpMatrix	q;
	const bool	is64 = odp_matrix_is64(cands);
	const size_t elem = is64 ? sizeof(double) : sizeof(float);
	int64_t		rows = 0;
	int32_t		k = 0;
	char	   *values;
	double	   *dist = NULL;
	int64_t    *index = NULL;
	OdpStatus	status;

	for (int i = 0; i < p->ncalls; i++)
	{
		rows += p->calls[i]->queries->rows;
		if (p->calls[i]->k > k)
			k = p->calls[i]->k;
	}
	values = malloc(elem * (size_t) rows * cands->dims);
	dist = malloc(sizeof(double) * (size_t) rows * k);
	index = malloc(sizeof(int64_t) * (size_t) rows * k);
	if (values == NULL || dist == NULL || index == NULL)
		status = odp_fail(&ctx, ODP_ERR_HOST_OOM, "out of host memory for %lld k-NN queries",
						  (long long) rows);
	else
	{
		size_t		at = 0;

		for (int i = 0; i < p->ncalls; i++)
		{
			const OdpMatrix *m = p->calls[i]->queries;
			const size_t bytes = elem * (size_t) m->rows * m->dims;

			memcpy(values + at, is64 ? (const void *) m->data64 : (const void *) m->data, bytes);
			at += bytes;
		}
		memset(&q, 0, sizeof(q));
		q.rows = rows;
		q.dims = cands->dims;
		if (is64)
			q.data64 = (const double *) values;
		else
			q.data = (const float *) values;
		ctx.cancel = SharedPassCancelled;
		ctx.cancel_arg = p;
		status = odp_compute_knn(&ctx, &q, cands, metric, k, false, dist, index);
	}
	{
		int64_t		row = 0;

		for (int i = 0; i < p->ncalls; i++)
		{
			SharedCall *c = p->calls[i];

			c->status = status;
			c->batch = (int) rows;
			c->ctx->transfer_ms = ctx.transfer_ms;
			c->ctx->compute_ms = ctx.compute_ms;
			c->ctx->chunks = ctx.chunks;
			c->ctx->spatial_used = ctx.spatial_used;
			c->ctx->spatial_distances = ctx.spatial_distances;
			if (status != ODP_OK)
				memcpy(c->ctx->message, ctx.message, sizeof(ctx.message));
			else
				for (int64_t r = 0; r < c->queries->rows; r++, row++)
				{
					memcpy(c->dist + r * c->k, dist + row * k, sizeof(double) * (size_t) c->k);
					memcpy(c->index + r * c->k, index + row * k, sizeof(int64_t) * (size_t) c->k);
				}
		}
	}
	free(values);
	free(dist);
	free(index);
}

/*
 * Whether the call may join a pass: a few queries, outputs, and arguments
 * odp_compute_knn accepts (its own checks, on a scratch context: a call
 * that fails them runs alone and fails there).
 */
static bool
SharedArgumentsFit(const OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
				   OdpMetric metric, int32_t k, const double *dist, const int64_t *index)
{
	OdpContext	scratch = *ctx;

	return dist != NULL && index != NULL && queries != NULL &&
		queries->rows <= ODP_KNN_SHARED_MAX_QUERIES &&
		odp_knn_check(&scratch, queries, cands, metric, k, false) == ODP_OK;
}

/* See odp_knn.h. */
OdpStatus
odp_knn_shared(OdpContext *ctx, const OdpMatrix *queries, const OdpMatrix *cands,
			   OdpMetric metric, int32_t k, double *dist, int64_t *index)
{
	SharedCall	me;
	SharedGroup *g;

	ctx->batch_queries = 0;
	ctx->batch_wait_ms = 0.0;
	if (!SharedArgumentsFit(ctx, queries, cands, metric, k, dist, index))
		return odp_compute_knn(ctx, queries, cands, metric, k, false, dist, index);
	ctx->message[0] = '\0';
	memset(&me, 0, sizeof(me));
	me.ctx = ctx;
	me.queries = queries;
	me.k = k;
	me.dist = dist;
	me.index = index;
	me.joined_ms = odp_now_ms();

	pthread_mutex_lock(&shared_lock);
	g = SharedGroupOf(ctx, cands, metric);
	if (g == NULL)
	{
		pthread_mutex_unlock(&shared_lock);
		return odp_compute_knn(ctx, queries, cands, metric, k, false, dist, index);
	}
	{
		SharedCall **tail = &g->queue;

		while (*tail != NULL)
			tail = &(*tail)->next;
		*tail = &me;
		g->members++;
	}
	while (!me.done)
	{
		if (!me.taken &&
			(g->running == 0 ||
			 (g->queue == &me && odp_now_ms() - me.joined_ms >= SHARED_WAIT_MS)))
		{
			SharedPass	pass;
			int64_t		rows = 0;

			/*
			 * no pass runs, or this call has waited long enough: it runs
			 * one for the queue's first calls
			 */
			pass.ncalls = 0;
			while (g->queue != NULL && pass.ncalls < ODP_KNN_SHARED_MAX_QUERIES &&
				   rows + g->queue->queries->rows <= ODP_KNN_SHARED_MAX_QUERIES)
			{
				SharedCall *c = g->queue;

				g->queue = c->next;
				c->next = NULL;
				c->taken = true;
				c->taken_ms = odp_now_ms();
				rows += c->queries->rows;
				pass.calls[pass.ncalls++] = c;
			}
			/* (where they did not include this call, it runs the next pass too) */
			if (g->running > 0)
				odp_knn_shared_early++;
			g->running++;
			pthread_mutex_unlock(&shared_lock);
			SharedRun(&pass, cands, metric);
			pthread_mutex_lock(&shared_lock);
			if (pass.ncalls > 1)
				odp_knn_shared_passes++;
			for (int i = 0; i < pass.ncalls; i++)
				pass.calls[i]->done = true;
			g->running--;
			pthread_cond_broadcast(&shared_moved);
			continue;
		}
		if (!me.taken && odp_cancel_requested(ctx))
		{
			/* still queued: leave without a pass */
			SharedCall **link = &g->queue;

			while (*link != &me)
				link = &(*link)->next;
			*link = me.next;
			me.done = true;
			me.status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
			break;
		}
		{
			struct timespec until;

			odp_deadline_after(&until, SHARED_POLL_NS);
			(void) pthread_cond_timedwait(&shared_moved, &shared_lock, &until);
		}
	}
	/* each call leaves its group itself: the last one frees it */
	g->members--;
	SharedGroupDrop(g);
	pthread_mutex_unlock(&shared_lock);
	ctx->batch_queries = me.batch;
	if (me.taken)
		ctx->batch_wait_ms = me.taken_ms - me.joined_ms;
	return me.status;
}
