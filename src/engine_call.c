/*-------------------------------------------------------------------------
 *
 * engine_call.c
 *	  Runs an engine call described as data, and lists the arrays it
 *	  reads and writes (engine_call.h).  No PostgreSQL here: the GPU
 *	  service's engine threads run this file.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/engine_call.c
 *
 *-------------------------------------------------------------------------
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "engine_call.h"

/* Tile and scratch room a call gets beyond its arrays' copies. */
#define ODP_CALL_WORK_BYTES ((size_t) 256 << 20)

/* The matching's pair callback, adapted to the call's. */
typedef struct CallIntervalEmit
{
	OdpCallPairFn emit;
	void	   *arg;
} CallIntervalEmit;

static bool
CallIntervalPairs(void *arg, const int64_t *a, const int64_t *b, int64_t count)
{
	CallIntervalEmit *e = (CallIntervalEmit *) arg;

	return e->emit(e->arg, a, b, NULL, count);
}

/* See engine_call.h. */
OdpStatus
odp_call_run(OdpContext *ctx, OdpCall *call)
{
	OdpPearsonProblem pp;
	OdpIntervalProblem ip;
	OdpSkylineProblem sp;
	CallIntervalEmit ie;
	OdpStatus	status;

	pp.x = &call->m64[0];
	pp.y = call->two_inputs ? &call->m64[1] : NULL;
	pp.method = call->pearson_method;
	pp.min_periods = call->min_periods;
	ip.a = &call->r[0];
	ip.b = call->two_inputs ? &call->r[1] : NULL;
	ip.compare = call->flags;
	switch (call->op)
	{
		case ODP_CALL_KNN:
			return odp_compute_knn(ctx, &call->m[0],
								   call->self_join ? &call->m[0] : &call->m[1],
								   call->metric, call->k, call->self_join,
								   call->dist, call->index);
		case ODP_CALL_KNN_EXCLUDING:
			return odp_knn_excluding(ctx, &call->m[0], call->m[0].ids, &call->m[1],
									 call->m[1].ids, call->metric, call->k,
									 call->dist, call->index);
		case ODP_CALL_NODE_CREATE:
			call->node = NULL;
			return odp_ss_node_create(ctx, &call->m[0], call->metric, call->k,
									  call->bounds, &call->node);
		case ODP_CALL_NODE_FIRST:
			status = odp_ss_node_first(ctx, call->node, call->n, &call->rows_out);
			call->count = call->rows_out.count;
			return status;
		case ODP_CALL_NODE_EXACT:
			call->count = 0;
			return odp_ss_node_exact(ctx, call->node, &call->rows_in, call->lists,
									 &call->count);
		case ODP_CALL_NODE_NEXT:
			status = odp_ss_node_next(ctx, call->node, call->prune, call->min_out,
									  call->n, &call->rows_out);
			call->count = call->rows_out.count;
			return status;
		case ODP_CALL_NODE_FREE:
			odp_ss_node_free(call->node);
			call->node = NULL;
			return ODP_OK;
		case ODP_CALL_OUTLIER_SCORES:
			return odp_compute_outlier_scores(ctx, &call->m[0], call->metric,
											  call->k, call->scores);
		case ODP_CALL_TOP_OUTLIERS:
			call->count = 0;
			return odp_compute_top_outliers(ctx, &call->m[0], call->metric,
											call->k, call->n, call->method,
											call->batch_size, call->order,
											call->scores, &call->count,
											call->solving_set,
											call->solving_scores,
											&call->outliers);
		case ODP_CALL_PEARSON_PAIRS:
			call->count = 0;
			return odp_compute_pearson_pairs(ctx, &pp, call->min_abs_r,
											 call->emit, call->emit_arg,
											 &call->count);
		case ODP_CALL_PEARSON_TOP:
			return odp_compute_pearson_top(ctx, &pp, call->k, call->rank,
										   call->other, call->r_out);
		case ODP_CALL_SKYLINE:
			sp.points = &call->m64[0];
			sp.maximize = call->flags;
			sp.band = call->band;
			return odp_compute_skyline(ctx, &sp, call->dominated_by,
									   &call->skyline);
		case ODP_CALL_INTERVAL_PAIRS:
			ie.emit = call->emit;
			ie.arg = call->emit_arg;
			call->count = 0;
			return odp_compute_interval_pairs(ctx, &ip, CallIntervalPairs, &ie,
											  &call->count, &call->intervals);
		case ODP_CALL_INTERVAL_COUNT:
			call->count = 0;
			return odp_compute_interval_count(ctx, &ip, &call->count,
											  &call->intervals);
	}
	snprintf(ctx->message, sizeof(ctx->message), "unknown engine call %d",
			 (int) call->op);
	return ODP_ERR_INTERNAL;
}

/* Appends an array when present and not empty. */
static int
CallAdd(OdpCallArray *arrays, int n, const void *const *ptr, size_t bytes)
{
	if (*ptr == NULL || bytes == 0)
		return n;
	arrays[n].ptr = (void **) ptr;
	arrays[n].bytes = bytes;
	return n + 1;
}

/* The inputs of a call with one or two inputs, by their kind. */
static int
CallInputsOf(OdpCall *call, int which, OdpCallArray *arrays, int n)
{
	size_t		cells;

	switch (call->op)
	{
		case ODP_CALL_NODE_EXACT:
			if (which > 0)
				return n;
			cells = (size_t) call->rows_in.count;
			n = CallAdd(arrays, n, (const void *const *) &call->rows_in.ids,
						cells * sizeof(int64_t));
			n = CallAdd(arrays, n, (const void *const *) &call->rows_in.rank,
						cells * sizeof(double));
			n = CallAdd(arrays, n, (const void *const *) &call->rows_in.bound,
						cells * sizeof(double));
			n = CallAdd(arrays, n, (const void *const *) &call->rows_in.vectors,
						cells * call->rows_in.dims * sizeof(float));
			return CallAdd(arrays, n, (const void *const *) &call->rows_in.vectors64,
						   cells * call->rows_in.dims * sizeof(double));
		case ODP_CALL_NODE_FIRST:
		case ODP_CALL_NODE_NEXT:
		case ODP_CALL_NODE_FREE:
			return n;
		case ODP_CALL_KNN:
		case ODP_CALL_KNN_EXCLUDING:
		case ODP_CALL_NODE_CREATE:
		case ODP_CALL_OUTLIER_SCORES:
		case ODP_CALL_TOP_OUTLIERS:
			cells = (size_t) call->m[which].rows * call->m[which].dims;
			n = CallAdd(arrays, n, (const void *const *) &call->m[which].data,
						cells * sizeof(float));
			n = CallAdd(arrays, n, (const void *const *) &call->m[which].data64,
						cells * sizeof(double));
			return CallAdd(arrays, n, (const void *const *) &call->m[which].ids,
						   (size_t) call->m[which].rows * sizeof(int64_t));
		case ODP_CALL_PEARSON_PAIRS:
		case ODP_CALL_PEARSON_TOP:
		case ODP_CALL_SKYLINE:
			cells = (size_t) call->m64[which].rows * call->m64[which].dims;
			n = CallAdd(arrays, n, (const void *const *) &call->m64[which].data,
						cells * sizeof(double));
			return CallAdd(arrays, n, (const void *const *) &call->m64[which].missing,
						   cells);
		case ODP_CALL_INTERVAL_PAIRS:
		case ODP_CALL_INTERVAL_COUNT:
			cells = (size_t) call->r[which].rows * call->r[which].dims;
			n = CallAdd(arrays, n, (const void *const *) &call->r[which].lower,
						cells * sizeof(uint64_t));
			n = CallAdd(arrays, n, (const void *const *) &call->r[which].upper,
						cells * sizeof(uint64_t));
			return CallAdd(arrays, n, (const void *const *) &call->r[which].flags,
						   cells);
	}
	return n;
}

/* The dims of the call's first input. */
static int32_t
CallDims(const OdpCall *call)
{
	switch (call->op)
	{
		case ODP_CALL_NODE_CREATE:
		case ODP_CALL_NODE_FIRST:
		case ODP_CALL_NODE_EXACT:
		case ODP_CALL_NODE_NEXT:
		case ODP_CALL_NODE_FREE:
		case ODP_CALL_KNN:
		case ODP_CALL_KNN_EXCLUDING:
		case ODP_CALL_OUTLIER_SCORES:
		case ODP_CALL_TOP_OUTLIERS:
			return call->m[0].dims;
		case ODP_CALL_PEARSON_PAIRS:
		case ODP_CALL_PEARSON_TOP:
		case ODP_CALL_SKYLINE:
			return call->m64[0].dims;
		case ODP_CALL_INTERVAL_PAIRS:
		case ODP_CALL_INTERVAL_COUNT:
			return call->r[0].dims;
	}
	return 0;
}

/* See engine_call.h. */
int
odp_call_inputs(OdpCall *call, OdpCallArray *arrays)
{
	int			n = CallInputsOf(call, 0, arrays, 0);

	if (call->two_inputs && !(call->op == ODP_CALL_KNN && call->self_join))
		n = CallInputsOf(call, 1, arrays, n);
	if (call->op == ODP_CALL_SKYLINE || call->op == ODP_CALL_INTERVAL_PAIRS ||
		call->op == ODP_CALL_INTERVAL_COUNT)
		n = CallAdd(arrays, n, (const void *const *) &call->flags,
					(size_t) CallDims(call));
	return n;
}

/* See engine_call.h. */
int
odp_call_outputs(OdpCall *call, bool after_run, OdpCallArray *arrays)
{
	int			n = 0;
	int64_t		rows = call->m[0].rows;
	int64_t		top;

	switch (call->op)
	{
		case ODP_CALL_KNN:
		case ODP_CALL_KNN_EXCLUDING:
			n = CallAdd(arrays, n, (const void *const *) &call->dist,
						(size_t) rows * call->k * sizeof(double));
			return CallAdd(arrays, n, (const void *const *) &call->index,
						   (size_t) rows * call->k * sizeof(int64_t));
		case ODP_CALL_OUTLIER_SCORES:
			return CallAdd(arrays, n, (const void *const *) &call->scores,
						   (size_t) rows * sizeof(double));
		case ODP_CALL_TOP_OUTLIERS:
			top = after_run ? call->count : (call->n < rows ? call->n : rows);
			n = CallAdd(arrays, n, (const void *const *) &call->order,
						(size_t) top * sizeof(int64_t));
			n = CallAdd(arrays, n, (const void *const *) &call->scores,
						(size_t) top * sizeof(double));
			top = after_run ? call->outliers.solving_set_size : rows;
			n = CallAdd(arrays, n, (const void *const *) &call->solving_set,
						(size_t) top * sizeof(int64_t));
			return CallAdd(arrays, n, (const void *const *) &call->solving_scores,
						   (size_t) top * sizeof(double));
		case ODP_CALL_PEARSON_TOP:
			rows = call->m64[0].rows;
			n = CallAdd(arrays, n, (const void *const *) &call->other,
						(size_t) rows * call->k * sizeof(int64_t));
			return CallAdd(arrays, n, (const void *const *) &call->r_out,
						   (size_t) rows * call->k * sizeof(double));
		case ODP_CALL_SKYLINE:
			return CallAdd(arrays, n, (const void *const *) &call->dominated_by,
						   (size_t) call->m64[0].rows * sizeof(int32_t));
		case ODP_CALL_NODE_FIRST:
		case ODP_CALL_NODE_NEXT:
			top = after_run ? call->count : call->rows_out.capacity;
			n = CallAdd(arrays, n, (const void *const *) &call->rows_out.ids,
						(size_t) top * sizeof(int64_t));
			n = CallAdd(arrays, n, (const void *const *) &call->rows_out.rank,
						(size_t) top * sizeof(double));
			n = CallAdd(arrays, n, (const void *const *) &call->rows_out.bound,
						(size_t) top * sizeof(double));
			n = CallAdd(arrays, n, (const void *const *) &call->rows_out.vectors,
						(size_t) top * call->rows_out.dims * sizeof(float));
			return CallAdd(arrays, n, (const void *const *) &call->rows_out.vectors64,
						   (size_t) top * call->rows_out.dims * sizeof(double));
		case ODP_CALL_NODE_EXACT:
			return CallAdd(arrays, n, (const void *const *) &call->lists,
						   (size_t) call->rows_in.count * call->k * sizeof(double));
		case ODP_CALL_NODE_CREATE:
		case ODP_CALL_NODE_FREE:
		case ODP_CALL_PEARSON_PAIRS:
		case ODP_CALL_INTERVAL_PAIRS:
		case ODP_CALL_INTERVAL_COUNT:
			return 0;
	}
	return 0;
}

/* See engine_call.h. */
int64_t
odp_call_rows(const OdpCall *call)
{
	switch (call->op)
	{
		case ODP_CALL_KNN:
		case ODP_CALL_KNN_EXCLUDING:
			return call->self_join || !call->two_inputs ? call->m[0].rows :
				call->m[0].rows + call->m[1].rows;
		case ODP_CALL_NODE_CREATE:
			return call->m[0].rows;
		case ODP_CALL_NODE_EXACT:
			return call->rows_in.count;
		case ODP_CALL_NODE_FIRST:
		case ODP_CALL_NODE_NEXT:
		case ODP_CALL_NODE_FREE:
			return 0;
		case ODP_CALL_OUTLIER_SCORES:
		case ODP_CALL_TOP_OUTLIERS:
			return call->m[0].rows;
		case ODP_CALL_PEARSON_PAIRS:
		case ODP_CALL_PEARSON_TOP:
		case ODP_CALL_SKYLINE:
			return call->m64[0].rows + (call->two_inputs ? call->m64[1].rows : 0);
		case ODP_CALL_INTERVAL_PAIRS:
		case ODP_CALL_INTERVAL_COUNT:
			return call->r[0].rows + (call->two_inputs ? call->r[1].rows : 0);
	}
	return 0;
}

/* See engine_call.h. */
double
odp_call_one_device_ms(const OdpCall *call)
{
	const OdpMatrix *q = &call->m[0];
	const OdpMatrix *c = call->two_inputs && !call->self_join ? &call->m[1] : &call->m[0];
	const OdpMatrix64 *x = &call->m64[0];

	switch (call->op)
	{
		case ODP_CALL_KNN:
		case ODP_CALL_OUTLIER_SCORES:
		case ODP_CALL_TOP_OUTLIERS:
			return odp_one_device_ms(ODP_WORK_DISTANCES, q->rows, c->rows, c->dims);
		case ODP_CALL_PEARSON_PAIRS:
		case ODP_CALL_PEARSON_TOP:
			return odp_one_device_ms(ODP_WORK_CORRELATIONS, x->rows,
									 call->two_inputs ? call->m64[1].rows : 0, x->dims);
		case ODP_CALL_SKYLINE:
			return odp_one_device_ms(ODP_WORK_SKYLINE, x->rows, 0, 0);
		case ODP_CALL_INTERVAL_PAIRS:
		case ODP_CALL_INTERVAL_COUNT:
			return odp_one_device_ms(ODP_WORK_REGIONS, call->r[0].rows,
									 call->two_inputs ? call->r[1].rows : 0, 0);
		case ODP_CALL_KNN_EXCLUDING:
		case ODP_CALL_NODE_CREATE:
		case ODP_CALL_NODE_FIRST:
		case ODP_CALL_NODE_EXACT:
		case ODP_CALL_NODE_NEXT:
		case ODP_CALL_NODE_FREE:
			return 0.0;
	}
	return 0.0;
}

/* See engine_call.h. */
size_t
odp_call_memory_wish(OdpCall *call)
{
	OdpCallArray arrays[ODP_CALL_MAX_ARRAYS];
	size_t		bytes = ODP_CALL_WORK_BYTES;
	int			n;

	n = odp_call_inputs(call, arrays);
	for (int i = 0; i < n; i++)
		bytes += 2 * arrays[i].bytes;
	n = odp_call_outputs(call, false, arrays);
	for (int i = 0; i < n; i++)
		bytes += arrays[i].bytes;
	return bytes;
}

/* See engine_call.h. */
bool
odp_call_is_node_step(OdpCallOp op)
{
	return op == ODP_CALL_NODE_CREATE || op == ODP_CALL_NODE_FIRST ||
		op == ODP_CALL_NODE_EXACT || op == ODP_CALL_NODE_NEXT || op == ODP_CALL_NODE_FREE;
}

/* See engine_call.h. */
const char *
odp_call_op_name(OdpCallOp op)
{
	switch (op)
	{
		case ODP_CALL_KNN:
			return "knn";
		case ODP_CALL_OUTLIER_SCORES:
			return "outlier scores";
		case ODP_CALL_TOP_OUTLIERS:
			return "top outliers";
		case ODP_CALL_PEARSON_PAIRS:
			return "pearson pairs";
		case ODP_CALL_PEARSON_TOP:
			return "pearson top";
		case ODP_CALL_SKYLINE:
			return "skyline";
		case ODP_CALL_INTERVAL_PAIRS:
			return "interval pairs";
		case ODP_CALL_INTERVAL_COUNT:
			return "interval count";
		case ODP_CALL_KNN_EXCLUDING:
			return "knn over a shard";
		case ODP_CALL_NODE_CREATE:
			return "solvingset node open";
		case ODP_CALL_NODE_FIRST:
			return "solvingset node first";
		case ODP_CALL_NODE_EXACT:
			return "solvingset node exact";
		case ODP_CALL_NODE_NEXT:
			return "solvingset node next";
		case ODP_CALL_NODE_FREE:
			return "solvingset node close";
	}
	return "unknown";
}
