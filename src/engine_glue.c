/*-------------------------------------------------------------------------
 *
 * engine_glue.c
 *	  Runs engine calls for the SQL functions: picks the path from
 *	  odp_gpu.device, answers the engine's cancel polls, and turns engine
 *	  statuses into ereport with a fitting SQLSTATE.
 *
 * The engine never calls back into PostgreSQL except through the cancel
 * callback, which only reads interrupt flags.  When it reports that it
 * stopped, it has already freed its host and device memory, so this file
 * can let CHECK_FOR_INTERRUPTS() throw.
 *
 * Map of this file.  From top to bottom:
 *	- the cancel callback, the context from the settings, the statuses as
 *	  errors (GlueReportFailure);
 *	- the path: OdpGpuUsable, OdpChooseGpu;
 *	- the distance analytics' checks in the rows' precision (float32 or
 *	  float64): OdpCheckCosineRows, OdpEnsureFiniteDistances,
 *	  GlueEnsureFiniteScores;
 *	- one call's plumbing: GlueMatrix, GlueBegin, GlueEnd, GlueRun (here
 *	  or in the GPU service), OdpEngineCallBegin/End;
 *	- k-NN: OdpComputeKnn; a shard's SolvingSet state (OdpShardState*)
 *	  and OdpComputeKnnExcluding;
 *	- the correlations, the interval matching, the outliers
 *	  (OdpComputeOutlierScores, OdpComputeTopOutliers), the skyline;
 *	- the timing NOTICE: OdpReportTiming.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/engine_glue.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "engine_call.h"
#include "engine_glue.h"
#include "miscadmin.h"
#include "odp_distance.h"
#include "service/service.h"
#include "settings.h"
#include "storage/procsignal.h"

/*
 * State of one engine call's cancel callback.  An error raised while the
 * callback absorbs a barrier cannot be thrown through the engine; it is
 * kept here and re-thrown once the engine has cleaned up.
 */
typedef OdpGlueCancel GlueCancelState;

/*
 * Keeps the error being handled in state, to re-throw once the engine has
 * cleaned up; call in a PG_CATCH block, old being the context to return to.
 */
static void
GlueKeepError(GlueCancelState *state, MemoryContext old)
{
	MemoryContextSwitchTo(state->error_context);
	state->pending_error = CopyErrorData();
	FlushErrorState();
	MemoryContextSwitchTo(old);
}

/*
 * Engine cancel callback: stop for a cancel, a timeout or termination.
 *
 * It also absorbs ProcSignalBarriers (PostgreSQL 15 emits them for DROP
 * DATABASE, among others, and waits until every backend has), which a
 * backend otherwise does only in CHECK_FOR_INTERRUPTS: without this a long
 * run would block such commands in other sessions until it ends.  The
 * engine holds no PostgreSQL resources, so absorbing here is safe.
 */
static bool
GlueCancelRequested(void *arg)
{
	GlueCancelState *state = (GlueCancelState *) arg;

	if (ProcSignalBarrierPending && state->pending_error == NULL)
	{
		MemoryContext old = CurrentMemoryContext;

		PG_TRY();
		{
			ProcessProcSignalBarrier();
		}
		PG_CATCH();
		{
			GlueKeepError(state, old);
		}
		PG_END_TRY();
	}
	return QueryCancelPending || ProcDiePending || state->pending_error != NULL;
}

StaticAssertDecl(ODP_DEVICES_MAX == ODP_MAX_GPUS,
				 "odp_gpu.devices holds as many entries as the engine takes");

/* Fills an engine context from the current settings. */
static void
GlueInitContext(OdpContext *ctx, bool on_gpu, GlueCancelState *cancel)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->device = on_gpu ? ODP_DEVICE_GPU : ODP_DEVICE_CPU;
	ctx->gpu_count = OdpDeviceList(ctx->gpu_ids);
	if (ctx->gpu_count < 0)
		ctx->gpu_count = ODP_GPUS_ALL;
	else if (ctx->gpu_count == 1)
	{
		/* one device: exactly the one-device path of before */
		ctx->gpu_id = ctx->gpu_ids[0];
		ctx->gpu_count = 0;
	}
	ctx->gpu_memory_limit = (size_t) odp_gpu_memory_limit_mb * 1024 * 1024;
	ctx->cpu_threads = OdpCpuThreads();
	ctx->spatial = (OdpSpatialMode) odp_spatial;
	ctx->split_min_ms = odp_split_min_ms;
	cancel->error_context = CurrentMemoryContext;
	cancel->pending_error = NULL;
	ctx->cancel = GlueCancelRequested;
	ctx->cancel_arg = cancel;
}

/*
 * Reports a failed engine call; never returns.  A cancelled call lets the
 * pending interrupt throw its own error (cancel, timeout, termination).
 */
static void
GlueReportFailure(OdpStatus status, const OdpContext *ctx,
				  const GlueCancelState *cancel)
{
	switch (status)
	{
		case ODP_OK:
			break;
		case ODP_ERR_CANCELLED:
			if (cancel->pending_error != NULL)
				ReThrowError(cancel->pending_error);
			CHECK_FOR_INTERRUPTS();
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
		case ODP_ERR_INVALID_ARGUMENT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid argument: %s", ctx->message)));
			break;
		case ODP_ERR_DATA:
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("invalid data: %s", ctx->message)));
			break;
		case ODP_ERR_LIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("input exceeds an odp_gpu limit: %s", ctx->message)));
			break;
		case ODP_ERR_HOST_OOM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("%s", ctx->message)));
			break;
		case ODP_ERR_GPU_OOM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of GPU memory"),
					 errdetail("%s", ctx->message),
					 errhint("Free GPU memory held by other programs, lower odp_gpu.gpu_memory_limit "
							 "so the input is processed in smaller chunks, or set odp_gpu.device = cpu.")));
			break;
		case ODP_ERR_NO_GPU:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("no usable GPU"),
					 errdetail("%s", ctx->message),
					 errhint("Set odp_gpu.device to auto or cpu to compute on the CPU.")));
			break;
		case ODP_ERR_GPU:
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("GPU failure: %s", ctx->message),
					 errhint("Set odp_gpu.device = cpu to compute on the CPU; "
							 "odp_gpu_info() shows the state of the GPU.")));
			break;
		case ODP_ERR_INTERNAL:
			elog(ERROR, "odp_gpu engine invariant failed: %s", ctx->message);
			break;
	}
}

/*
 * Time the GPU probe took since the last engine call (the first probe in
 * a backend starts CUDA's driver), for that call's setup phase.
 */
static double glue_probe_ms = 0;

/*
 * Returns whether a GPU is usable for odp_gpu.device_id; otherwise sets
 * *why (palloc'd) to the reason.  With the GPU service, whether it is
 * ready; without, the first call in a backend initialises CUDA.
 */
bool
OdpGpuUsable(char **why)
{
	OdpContext	ctx;
	OdpStatus	status;
	int			count = 0,
				driver = 0,
				runtime = 0;
	double		t0 = odp_now_ms();

	/* the service holds the GPUs: ask it, never initialise CUDA here */
	if (OdpServiceConfigured())
		return OdpServiceAwaitReady(why);
	memset(&ctx, 0, sizeof(ctx));
	status = odp_gpu_probe(&ctx, &count, &driver, &runtime);
	glue_probe_ms += odp_now_ms() - t0;
	if (status != ODP_OK)
	{
		*why = pstrdup(ctx.message[0] ? ctx.message : odp_status_name(status));
		return false;
	}
	if (odp_device_id >= count)
	{
		*why = psprintf("odp_gpu.device_id is %d but the host has %d GPU%s",
						odp_device_id, count, count == 1 ? "" : "s");
		return false;
	}
	/* a device list naming a missing device counts as an out-of-range id */
	if (odp_device_id < 0)
	{
		int			ids[ODP_DEVICES_MAX];
		int			listed = OdpDeviceList(ids);

		for (int j = 0; j < listed; j++)
		{
			if (ids[j] < count)
				continue;
			*why = psprintf("odp_gpu.devices names device %d but the host has %d GPU%s",
							ids[j], count, count == 1 ? "" : "s");
			return false;
		}
	}
	return true;
}

/*
 * Decides whether queries query rows against an input of rows rows run on
 * the GPU, per odp_gpu.device; errors out when the GPU is demanded but
 * unusable.  auto wants at least odp_gpu.gpu_min_rows rows and
 * ODP_GPU_MIN_QUERIES queries: with fewer, copying the rows to the GPU
 * takes longer than the CPU takes to compute.
 */
bool
OdpChooseGpu(int64 queries, int64 rows)
{
	char	   *why = NULL;

	switch ((OdpDeviceSetting) odp_device_setting)
	{
		case ODP_SETTING_CPU:
			return false;
		case ODP_SETTING_GPU:
			if (!OdpGpuUsable(&why))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("odp_gpu.device is gpu but no GPU is usable"),
						 errdetail("The GPU probe reports: %s.", why),
						 errhint("Set odp_gpu.device to auto or cpu to compute on the CPU.")));
			return true;
		case ODP_SETTING_AUTO:
			return rows >= odp_gpu_min_rows && queries >= ODP_GPU_MIN_QUERIES &&
				OdpGpuUsable(&why);
	}
	return false;
}

/* The words of the overflow messages for in's precision. */
static const char *
GluePrecisionWords(bool float64)
{
	return float64 ? "double" : "single";
}

/* The detail of the overflow messages: the largest value of the precision. */
static int
GlueErrdetailPrecision(bool float64)
{
	return float64 ?
		errdetail("odp_gpu computes distances in float64, whose largest value is about 1.8e308.") :
		errdetail("odp_gpu computes distances in float32, whose largest value is about 3.4e38.");
}

/*
 * Ensures every row has a cosine distance when the metric is cosine: its
 * norm (computed as the engine computes it, in the rows' precision) is
 * neither zero nor infinite.
 */
void
OdpCheckCosineRows(const OdpInput *in, OdpMetric metric)
{
	bool		wide = in->data64 != NULL;

	if (metric != ODP_METRIC_COSINE)
		return;
	for (int64 i = 0; i < in->rows; i++)
	{
		double		norm = wide ?
			odp_row_norm64(in->data64 + i * in->dims, in->dims) :
			(double) odp_row_norm(in->data + i * in->dims, in->dims);

		if (norm == 0.0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("row with id " INT64_FORMAT " is a zero vector", in->ids[i]),
					 errdetail("Cosine distance is undefined for zero vectors."),
					 errhint("Exclude zero vectors from the source or use another metric.")));
		if (isinf(norm))
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("the norm of the row with id " INT64_FORMAT " overflows %s precision",
							in->ids[i], GluePrecisionWords(wide)),
					 GlueErrdetailPrecision(wide),
					 errhint("Scale the features down, for example by dividing them by their standard deviation.")));
	}
}

/* See engine_glue.h. */
void
OdpEnsureFiniteDistances(const double *dist, int64 count, int32 k,
						 const int64 *qids, bool float64)
{
	for (int64 i = 0; i < count; i++)
	{
		if (!isfinite(dist[i]))
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 qids ?
					 errmsg("distances from the query with id " INT64_FORMAT " overflow %s precision",
							qids[i / k], GluePrecisionWords(float64)) :
					 errmsg("distances from the query overflow %s precision",
							GluePrecisionWords(float64)),
					 GlueErrdetailPrecision(float64),
					 errhint("Scale the features down, for example by dividing them by their standard deviation.")));
	}
}

/*
 * Ensures no score overflowed: features near 1e19 and beyond make float32
 * squared distances infinite (near 1e154 float64 ones), and an infinite
 * score ranks nothing.  scores has count entries, for the rows with the
 * given indexes (rows NULL: rows 0 .. count-1).
 */
static void
GlueEnsureFiniteScores(const OdpInput *in, const double *scores,
					   const int64 *rows, int64 count)
{
	bool		wide = in->data64 != NULL;

	for (int64 i = 0; i < count; i++)
	{
		if (!isfinite(scores[i]))
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("distances from the row with id " INT64_FORMAT " overflow %s precision",
							in->ids[rows ? rows[i] : i], GluePrecisionWords(wide)),
					 GlueErrdetailPrecision(wide),
					 errhint("Scale the features down, for example by dividing them by their standard deviation.")));
	}
}

/* The name of in's precision, for the timing report. */
static const char *
GluePrecisionName(const OdpInput *in)
{
	return in->data64 != NULL ? "float64" : "float32";
}

/* Points m at in's rows (either precision) and ids. */
static void
GlueMatrix(const OdpInput *in, OdpMatrix *m)
{
	m->data = in->data;
	m->data64 = in->data64;
	m->rows = in->rows;
	m->dims = in->dims;
	m->ids = in->ids;
}

/*
 * Prepares one engine call on in: picks the path, fills the context and
 * the matrix, and resets info.  Pair with GlueEnd.
 */
static void
GlueBegin(const OdpInput *in, OdpContext *ctx, GlueCancelState *cancel,
		  OdpCall *call, OdpRunInfo *info)
{
	memset(info, 0, sizeof(*info));
	info->on_gpu = OdpChooseGpu(in->rows, in->rows);
	GlueInitContext(ctx, info->on_gpu, cancel);
	memset(call, 0, sizeof(*call));
	GlueMatrix(in, &call->m[0]);
	info->precision = GluePrecisionName(in);
}

/*
 * Finishes one engine call: reports a failure (never returning), else
 * copies the context's timings into info.
 */
static void
GlueEnd(OdpStatus status, const OdpContext *ctx, const GlueCancelState *cancel,
		OdpRunInfo *info)
{
	if (status != ODP_OK)
		GlueReportFailure(status, ctx, cancel);
	info->transfer_ms = ctx->transfer_ms;
	info->compute_ms = ctx->compute_ms;
	info->chunks = ctx->chunks;
	info->spatial_used = ctx->spatial_used != 0;
	info->spatial_distances = ctx->spatial_distances;
	info->batch_queries = ctx->batch_queries;
	info->batch_wait_ms = ctx->batch_wait_ms;
	info->gpu_parts = ctx->gpu_parts > 1 ? ctx->gpu_parts : 1;
}

/*
 * Runs one engine call: in the GPU service when the call runs on the GPU
 * and the library was preloaded, else here.
 */
static OdpStatus
GlueRun(OdpContext *ctx, OdpCall *call, OdpRunInfo *info)
{
	OdpServiceRunInfo service;
	OdpStatus	status;
	double		t0 = odp_now_ms();

	/* the GPU probe before it (OdpGpuUsable) sets up too */
	info->startup_ms += glue_probe_ms;
	glue_probe_ms = 0;
	if (!info->on_gpu || !OdpServiceConfigured())
	{
		status = odp_call_run(ctx, call);
		/* what the engine's phases leave out: a context, modules, threads */
		info->startup_ms += Max(odp_now_ms() - t0 - ctx->transfer_ms - ctx->compute_ms, 0.0);
		return status;
	}
	memset(&service, 0, sizeof(service));
	info->via_service = true;
	status = OdpServiceRun(ctx, call, odp_call_op_name(call->op), &service);
	info->startup_ms += Max(odp_now_ms() - t0 - ctx->transfer_ms - ctx->compute_ms -
						  service.stream_ms - service.queued_ms, 0.0);
	info->queued_ms = service.queued_ms;
	info->dispatch_ms = service.dispatch_ms;
	info->reply_ms = service.reply_ms;
	info->service_device = service.device;
	info->service_retried = service.retried;
	info->staged_bytes += service.staged_bytes;
	info->streamed_bytes += service.streamed_bytes;
	info->streamed_to_gpu_bytes += service.streamed_to_gpu_bytes;
	info->stream_ms += service.stream_ms;
	return status;
}

/* See engine_glue.h. */
void
OdpEngineCallBegin(OdpEngineCall *call, bool on_gpu)
{
	GlueInitContext(&call->ctx, on_gpu, &call->cancel);
}

/* See engine_glue.h. */
void
OdpEngineCallEnd(OdpEngineCall *call, OdpStatus status)
{
	if (status != ODP_OK)
		GlueReportFailure(status, &call->ctx, &call->cancel);
}

/*
 * Computes the k nearest rows of source for every row of queries (the
 * same input for a self join) into dist and index (queries->rows * k
 * each; row indexes of source), on the path info holds (zeroed, then
 * OdpChooseKnnGpu).  The caller has checked the dimensions, k (at most
 * the source's rows, less one for a self join) and, for cosine, the
 * norms.
 */
void
OdpComputeKnn(const OdpInput *queries, const OdpInput *source,
			  OdpMetric metric, int32 k, bool self_join, double *dist,
			  int64 *index, OdpRunInfo *info)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;

	Assert((queries->data64 != NULL) == (source->data64 != NULL));
	info->precision = GluePrecisionName(source);
	info->queries = queries->rows;
	info->query_read_ms = self_join ? 0.0 : queries->read_ms;
	GlueInitContext(&ctx, info->on_gpu, &cancel);
	memset(&call, 0, sizeof(call));
	call.op = ODP_CALL_KNN;
	call.two_inputs = !self_join;
	GlueMatrix(self_join ? source : queries, &call.m[0]);
	GlueMatrix(source, &call.m[1]);
	/* the engine takes the rows' indexes, not their ids */
	call.m[0].ids = NULL;
	call.m[1].ids = NULL;
	call.metric = metric;
	call.k = k;
	call.self_join = self_join;
	call.dist = dist;
	call.index = index;
	GlueEnd(GlueRun(&ctx, &call, info), &ctx, &cancel, info);
}

/* Runs a step of st's node state on its path (and device). */
static void
GlueShardStep(OdpShardState *st, OdpCall *call)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpRunInfo	info;

	memset(&info, 0, sizeof(info));
	info.on_gpu = st->on_gpu;
	GlueInitContext(&ctx, st->on_gpu, &cancel);
	if (st->in_service)
	{
		/* the state lives on one device of the service */
		ctx.gpu_id = st->device;
		ctx.gpu_count = 0;
	}
	call->node = st->local;
	call->handle = st->handle;
	call->k = st->k;
	GlueEnd(GlueRun(&ctx, call, &info), &ctx, &cancel, &info);
}

/* See engine_glue.h. */
void
OdpShardStateOpen(OdpShardState *st, bool on_gpu, const OdpMatrix *rows,
			OdpMetric metric, int32 k, bool bounds)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;
	OdpRunInfo	info;

	memset(st, 0, sizeof(*st));
	st->on_gpu = on_gpu;
	st->in_service = on_gpu && OdpServiceConfigured();
	st->k = k;
	memset(&info, 0, sizeof(info));
	info.on_gpu = on_gpu;
	GlueInitContext(&ctx, on_gpu, &cancel);
	memset(&call, 0, sizeof(call));
	call.op = ODP_CALL_NODE_CREATE;
	call.m[0] = *rows;
	call.metric = metric;
	call.k = k;
	call.bounds = bounds;
	GlueEnd(GlueRun(&ctx, &call, &info), &ctx, &cancel, &info);
	/* in the service, the state is its object there: a handle, a device */
	st->local = st->in_service ? NULL : call.node;
	st->handle = st->in_service ? call.count : 0;
	st->device = st->in_service ? info.service_device : -1;
}

/* See engine_glue.h. */
void
OdpShardStateFirst(OdpShardState *st, int64 m, OdpSsRows *out)
{
	OdpCall		call;

	memset(&call, 0, sizeof(call));
	call.op = ODP_CALL_NODE_FIRST;
	call.n = m;
	call.rows_out = *out;
	GlueShardStep(st, &call);
	out->count = call.count;
}

/* See engine_glue.h. */
void
OdpShardStateExact(OdpShardState *st, const OdpSsRows *cands, double *lists,
			 int64 *distances)
{
	OdpCall		call;

	memset(&call, 0, sizeof(call));
	call.op = ODP_CALL_NODE_EXACT;
	call.rows_in = *cands;
	call.lists = lists;
	GlueShardStep(st, &call);
	*distances += call.count;
}

/* See engine_glue.h. */
void
OdpShardStateNext(OdpShardState *st, bool prune, double min_out, int64 m, OdpSsRows *out)
{
	OdpCall		call;

	memset(&call, 0, sizeof(call));
	call.op = ODP_CALL_NODE_NEXT;
	call.prune = prune;
	call.min_out = min_out;
	call.n = m;
	call.rows_out = *out;
	GlueShardStep(st, &call);
	out->count = call.count;
}

/* See engine_glue.h. */
void
OdpShardStateClose(OdpShardState *st)
{
	if (st->in_service && st->handle > 0)
		OdpServiceDropObject(st->handle);
	else if (!st->in_service)
		odp_ss_node_free(st->local);
	st->local = NULL;
	st->handle = 0;
}

/*
 * For every query its k nearest rows of a shard (odp_knn_excluding: the
 * query's own id excluded where qids is given), by ids; the path as
 * OdpChooseGpu decides.
 */
void
OdpComputeKnnExcluding(const OdpMatrix *queries, const int64 *qids,
					   const OdpMatrix *cands, const int64 *cids,
					   OdpMetric metric, int32 k, double *dist, int64 *ids)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;
	OdpRunInfo	info;

	memset(&info, 0, sizeof(info));
	info.on_gpu = OdpChooseGpu(queries->rows, cands->rows);
	GlueInitContext(&ctx, info.on_gpu, &cancel);
	memset(&call, 0, sizeof(call));
	call.op = ODP_CALL_KNN_EXCLUDING;
	call.two_inputs = true;
	call.m[0] = *queries;
	call.m[0].ids = qids;
	call.m[1] = *cands;
	call.m[1].ids = cids;
	call.metric = metric;
	call.k = k;
	call.dist = dist;
	call.index = ids;
	GlueEnd(GlueRun(&ctx, &call, &info), &ctx, &cancel, &info);
}

/*
 * Decides whether a correlation of rows series runs on the GPU: as
 * OdpChooseGpu decides, and under auto only where cuBLAS can be loaded
 * too (the correlations' products need it).
 */
static bool
GlueChoosePearsonGpu(int64 queries, int64 rows)
{
	OdpContext	ctx;

	if (!OdpChooseGpu(queries, rows))
		return false;
	if ((OdpDeviceSetting) odp_device_setting != ODP_SETTING_AUTO)
		return true;
	if (OdpServiceConfigured())
		return OdpServiceBlasReady();
	memset(&ctx, 0, sizeof(ctx));
	return odp_gpu_pearson_available(&ctx) == ODP_OK;
}

/* Points m at the float64 values of in. */
static void
GlueMatrix64(const OdpInput *in, OdpMatrix64 *m)
{
	m->data = in->data64;
	m->missing = in->missing;
	m->rows = in->rows;
	m->dims = in->dims;
}

/*
 * Starts one correlation call of x against y (NULL: x against itself):
 * the path, the context, the problem; info reset.
 */
static void
GluePearsonBegin(const OdpInput *x, const OdpInput *y, OdpPearsonMethod method,
				 int32 min_periods, OdpContext *ctx, GlueCancelState *cancel,
				 OdpCall *call, OdpRunInfo *info)
{
	memset(info, 0, sizeof(*info));
	info->on_gpu = GlueChoosePearsonGpu(x->rows, x->rows + (y ? y->rows : 0));
	if (y != NULL)
	{
		info->other_rows = y->rows;
		info->other_read_ms = y->read_ms;
	}
	GlueInitContext(ctx, info->on_gpu, cancel);
	memset(call, 0, sizeof(*call));
	GlueMatrix64(x, &call->m64[0]);
	if (y != NULL)
		GlueMatrix64(y, &call->m64[1]);
	call->two_inputs = y != NULL;
	call->pearson_method = method;
	call->min_periods = min_periods;
}

/* The pair callback's state: the caller's sink and where its errors go. */
typedef struct GluePairState
{
	OdpPairSink sink;
	void	   *arg;
	GlueCancelState *cancel;
	double		ms;
} GluePairState;

/*
 * Engine pair callback: hands the pairs to the caller's sink.  An error
 * the sink raises cannot be thrown through the engine: it is kept and
 * re-thrown once the engine has cleaned up, and the engine is told to
 * stop; so is it on a cancel or termination request (GlueCancelRequested,
 * which also absorbs barriers while a large result is being stored).
 */
static bool
GluePairs(void *arg, const int64_t *a, const int64_t *b, const double *r,
		  int64_t count)
{
	GluePairState *st = (GluePairState *) arg;
	MemoryContext old = CurrentMemoryContext;
	volatile bool ok = true;
	double		start = odp_now_ms();

	if (st->cancel->pending_error != NULL)
		return false;
	PG_TRY();
	{
		st->sink(st->arg, a, b, r, count);
	}
	PG_CATCH();
	{
		GlueKeepError(st->cancel, old);
		ok = false;
	}
	PG_END_TRY();
	st->ms += odp_now_ms() - start;
	/* a long output is a long run too: absorb barriers, see a cancel */
	return ok && !GlueCancelRequested(st->cancel);
}

/*
 * Correlates x with y (NULL: every pair of x once) and hands every pair
 * with |r| >= min_abs_r to sink, in (a, b) order; the caller has checked
 * the inputs.
 */
void
OdpComputePearsonPairs(const OdpInput *x, const OdpInput *y, OdpPearsonMethod method,
					   int32 min_periods, double min_abs_r, OdpPairSink sink,
					   void *arg, OdpRunInfo *info)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;
	GluePairState st;

	GluePearsonBegin(x, y, method, min_periods, &ctx, &cancel, &call, info);
	st.sink = sink;
	st.arg = arg;
	st.cancel = &cancel;
	st.ms = 0.0;
	call.op = ODP_CALL_PEARSON_PAIRS;
	call.min_abs_r = min_abs_r;
	call.emit = GluePairs;
	call.emit_arg = &st;
	GlueEnd(GlueRun(&ctx, &call, info), &ctx, &cancel, info);
	info->has_pairs = true;
	info->pairs = call.count;
	info->emit_ms = st.ms;
	/* the pairs were stored during the engine call: output, not start-up */
	info->startup_ms = Max(info->startup_ms - st.ms, 0.0);
}

/*
 * For every series of x its k best partners in y (NULL: in x, itself
 * excluded) into other and r (x->rows * k each, other -1 past the end of
 * a short list); the caller has checked the inputs and k.
 */
void
OdpComputePearsonTop(const OdpInput *x, const OdpInput *y, OdpPearsonMethod method,
					 int32 min_periods, int32 k, OdpPearsonRank rank, int64 *other,
					 double *r, OdpRunInfo *info)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;

	GluePearsonBegin(x, y, method, min_periods, &ctx, &cancel, &call, info);
	call.op = ODP_CALL_PEARSON_TOP;
	call.k = k;
	call.rank = rank;
	call.other = other;
	call.r_out = r;
	GlueEnd(GlueRun(&ctx, &call, info), &ctx, &cancel, info);
}

/* Points r at in's regions. */
static void
GlueRegions(const OdpInput *in, OdpRegions *r)
{
	r->lower = in->lower;
	r->upper = in->upper;
	r->flags = in->bound_flags;
	r->rows = in->rows;
	r->dims = in->dims;
}

/*
 * Starts a matching of a's regions with b's (NULL: within a): the path,
 * the context, the problem (compare allocated here); info reset.  Returns
 * false when there can be no pairs (a source without rows), and then the
 * engine need not run.
 */
static bool
GlueIntervalBegin(const OdpInput *a, const OdpInput *b, OdpContext *ctx,
				  GlueCancelState *cancel, OdpCall *call, OdpRunInfo *info)
{
	int64		rows = a->rows + (b != NULL ? b->rows : 0);
	uint8	   *compare;

	memset(info, 0, sizeof(*info));
	info->has_intervals = true;
	info->on_gpu = OdpChooseGpu(rows, rows);
	if (b != NULL)
	{
		info->other_rows = b->rows;
		info->other_read_ms = b->read_ms;
	}
	GlueInitContext(ctx, info->on_gpu, cancel);
	if (a->rows == 0 || a->dims == 0 || (b != NULL && (b->rows == 0 || b->dims == 0)))
		return false;
	compare = palloc(a->dims);
	for (int d = 0; d < a->dims; d++)
		compare[d] = a->region_dims[d].box ? ODP_INTERVAL_BOX : ODP_INTERVAL_EXACT;
	memset(call, 0, sizeof(*call));
	GlueRegions(a, &call->r[0]);
	if (b != NULL)
		GlueRegions(b, &call->r[1]);
	call->two_inputs = b != NULL;
	call->flags = compare;
	return true;
}

/*
 * Hands every overlapping pair of a's regions with b's (NULL: of a's
 * regions, once) to sink, in (a, b) order, as row indexes; the caller has
 * checked that the sources' dimensions match.
 */
void
OdpComputeIntervalPairs(const OdpInput *a, const OdpInput *b, OdpPairSink sink,
						void *arg, OdpRunInfo *info)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;
	GluePairState st;

	if (!GlueIntervalBegin(a, b, &ctx, &cancel, &call, info))
		return;
	st.sink = sink;
	st.arg = arg;
	st.cancel = &cancel;
	st.ms = 0.0;
	call.op = ODP_CALL_INTERVAL_PAIRS;
	call.emit = GluePairs;
	call.emit_arg = &st;
	GlueEnd(GlueRun(&ctx, &call, info), &ctx, &cancel, info);
	info->intervals = call.intervals;
	info->has_pairs = true;
	info->pairs = call.count;
	info->emit_ms = st.ms;
	/* the pairs were stored during the engine call: output, not start-up */
	info->startup_ms = Max(info->startup_ms - st.ms, 0.0);
}

/* The number of overlapping pairs (as OdpComputeIntervalPairs finds them). */
int64
OdpComputeIntervalCount(const OdpInput *a, const OdpInput *b, OdpRunInfo *info)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;

	if (!GlueIntervalBegin(a, b, &ctx, &cancel, &call, info))
		return 0;
	call.op = ODP_CALL_INTERVAL_COUNT;
	GlueEnd(GlueRun(&ctx, &call, info), &ctx, &cancel, info);
	info->intervals = call.intervals;
	info->has_pairs = true;
	info->pairs = call.count;
	return call.count;
}

/* Computes every row's outlier score into scores (in->rows doubles). */
void
OdpComputeOutlierScores(const OdpInput *in, OdpMetric metric, int32 k,
						double *scores, OdpRunInfo *info)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;

	GlueBegin(in, &ctx, &cancel, &call, info);
	call.op = ODP_CALL_OUTLIER_SCORES;
	call.metric = metric;
	call.k = k;
	call.scores = scores;
	GlueEnd(GlueRun(&ctx, &call, info), &ctx, &cancel, info);
	GlueEnsureFiniteScores(in, scores, NULL, in->rows);
}

/*
 * Computes the top-n outliers of in with the given method and SolvingSet
 * batch size (0: the default; see odp_compute_top_outliers).  order and
 * scores must hold min(n, rows)
 * entries; *count receives how many were written, best first.  If
 * solving_set is not NULL, it and solving_scores must hold in->rows
 * entries and receive the solving set (row indexes, ascending) and its
 * scores, and *solving_count its size.  The caller has checked k against
 * the rows and, for SolvingSet, against ODP_MAX_K.
 */
void
OdpComputeTopOutliers(const OdpInput *in, OdpMetric metric, int32 k, int64 n,
					  OdpOutlierMethod method, int64 batch_size, int64 *order,
					  double *scores, int64 *count, int64 *solving_set,
					  double *solving_scores, int64 *solving_count,
					  OdpRunInfo *info)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;
	OdpTopOutliersStats stats;

	GlueBegin(in, &ctx, &cancel, &call, info);
	call.op = ODP_CALL_TOP_OUTLIERS;
	call.metric = metric;
	call.k = k;
	call.n = n;
	call.method = method;
	call.batch_size = batch_size;
	call.order = order;
	call.scores = scores;
	call.solving_set = solving_set;
	call.solving_scores = solving_scores;
	GlueEnd(GlueRun(&ctx, &call, info), &ctx, &cancel, info);
	*count = call.count;
	stats = call.outliers;

	/*
	 * The best score is the largest, so an overflow anywhere shows in
	 * scores[0]; its row is the one to name.
	 */
	GlueEnsureFiniteScores(in, scores, order, *count);
	if (solving_set != NULL)
	{
		*solving_count = stats.solving_set_size;
		GlueEnsureFiniteScores(in, solving_scores, solving_set, *solving_count);
	}
	info->has_method = true;
	info->method = stats.method;
	info->distances = stats.distances;
	info->solving_set_size = stats.solving_set_size;
	info->iterations = stats.iterations;
}

/* Returns the SQL name of an outlier method. */
const char *
OdpOutlierMethodName(OdpOutlierMethod method)
{
	switch (method)
	{
		case ODP_METHOD_AUTO:
			return "auto";
		case ODP_METHOD_BRUTEFORCE:
			return "bruteforce";
		case ODP_METHOD_SOLVINGSET:
			return "solvingset";
		case ODP_METHOD_SPATIAL:
			return "spatial";
	}
	return "unknown";
}

/*
 * Computes the k-skyband (band = k) of in's float64 rows into
 * dominated_by (in->rows entries: the number of dominating rows, or band
 * for rows outside the band).  maximize has in->dims flags or is NULL.
 */
void
OdpComputeSkyline(const OdpInput *in, const uint8 *maximize, int32 band,
				  int32 *dominated_by, OdpRunInfo *info)
{
	OdpContext	ctx;
	GlueCancelState cancel;
	OdpCall		call;

	memset(info, 0, sizeof(*info));
	info->on_gpu = OdpChooseGpu(in->rows, in->rows);
	info->has_skyline = true;
	GlueInitContext(&ctx, info->on_gpu, &cancel);
	memset(&call, 0, sizeof(call));
	call.op = ODP_CALL_SKYLINE;
	GlueMatrix64(in, &call.m64[0]);
	call.flags = maximize;
	call.band = band;
	call.dominated_by = dominated_by;
	GlueEnd(GlueRun(&ctx, &call, info), &ctx, &cancel, info);
	info->skyline = call.skyline;
}

/*
 * Emits the per-phase NOTICE when odp_gpu.report_timing is on.  Scripts
 * parse its key=value pairs: keep the existing keys and their order, and
 * append new ones at the end.  total is the whole call since call_start
 * (odp_now_ms() when the SQL function began); other, what no phase
 * listed accounts for.
 */
void
OdpReportTiming(const char *what, const OdpInput *in, const OdpRunInfo *info,
				double output_ms, double call_start)
{
	const char *extra = "";
	double		total = odp_now_ms() - call_start;
	double		phases;

	if (!odp_report_timing)
		return;
	if (info->queries > 0)
		extra = psprintf(" queries=" INT64_FORMAT " query_read=%.1f ms",
						 info->queries, info->query_read_ms);
	if (info->other_rows > 0)
		extra = psprintf(" other_rows=" INT64_FORMAT " other_read=%.1f ms",
						 info->other_rows, info->other_read_ms);
	if (info->has_pairs)
		extra = psprintf("%s pairs=" INT64_FORMAT, extra, info->pairs);
	if (info->has_intervals)
		extra = psprintf("%s candidates=" INT64_FORMAT " sweep_dim=%d empty=" INT64_FORMAT
						 " runs=%d prep=%.1f ms setup=%.1f ms match=%.1f ms sort=%.1f ms",
						 extra, info->intervals.candidates, info->intervals.sweep_dim + 1,
						 info->intervals.empty, info->intervals.runs, info->intervals.prep_ms,
						 info->intervals.setup_ms, info->intervals.match_ms,
						 info->intervals.sort_ms);
	if (info->has_skyline)
		extra = psprintf(" members=" INT64_FORMAT " pair_tests=" INT64_FORMAT
						 " full_tests=" INT64_FORMAT " blocks=" INT64_FORMAT,
						 info->skyline.members, info->skyline.pair_tests,
						 info->skyline.full_tests, info->skyline.blocks);
	if (info->has_method)
	{

		/* N^2 as a double: it overflows int64 from about 3e9 rows */
		double		all_pairs = (double) in->rows * (double) in->rows;

		extra = psprintf(" method=%s distances=" INT64_FORMAT " (%.4f of N^2) "
						 "solving_set=" INT64_FORMAT " iterations=%d",
						 OdpOutlierMethodName(info->method), info->distances,
						 all_pairs > 0 ? (double) info->distances / all_pairs : 0.0,
						 info->solving_set_size, info->iterations);
	}
	if (info->on_gpu)
		extra = psprintf("%s devices=%d", extra, info->gpu_parts);
	if (info->via_service && info->on_gpu && info->service_device >= 0)
		extra = psprintf("%s first_device=%d", extra, info->service_device);
	if (info->via_service && info->service_retried)
		extra = psprintf("%s retried_alone_after_fault", extra);
	if (info->via_service)
		extra = psprintf("%s queued=%.1f ms", extra, info->queued_ms);
	phases = in->read_ms + info->query_read_ms + info->other_read_ms +
		info->transfer_ms + info->compute_ms + output_ms + info->stream_ms +
		info->startup_ms + (info->via_service ? info->queued_ms : 0.0);
	extra = psprintf("%s read_workers=%d read_order=%s total=%.1f ms other=%.1f ms",
					 extra, in->read_workers,
					 in->read_order != NULL ? in->read_order : "scan",
					 total, total - phases);
	if (in->cached)
		extra = psprintf("%s cache_check=%.2f ms", extra, in->cache_check_ms);
	if (info->precision != NULL)
		extra = psprintf("%s precision=%s", extra, info->precision);
	if (info->via_service)
		extra = psprintf("%s staged=%.1f MB streamed=%.1f MB stream=%.1f ms streamed_to_gpu=%.1f MB",
						 extra, info->staged_bytes / 1048576.0, info->streamed_bytes / 1048576.0,
						 info->stream_ms, info->streamed_to_gpu_bytes / 1048576.0);
	if (info->batch_queries > 0)
		extra = psprintf("%s batch=%d", extra, info->batch_queries);
	if (info->chosen_by != NULL)
		extra = psprintf("%s chosen_by=%s%s", extra, info->chosen_by,
						 info->chosen_why ? info->chosen_why : "");
	extra = psprintf("%s startup=%.1f ms", extra, info->startup_ms);
	if (info->via_service)
		extra = psprintf("%s (dispatch=%.2f ms reply=%.2f ms%s)", extra,
						 info->dispatch_ms, info->reply_ms,
						 info->batch_queries > 0 ?
						 psprintf(" batch_wait=%.2f ms", info->batch_wait_ms) : "");
	if (info->precision != NULL && !info->has_method && info->spatial_used)
		extra = psprintf("%s method=spatial distances=" INT64_FORMAT, extra,
						 info->spatial_distances);
	else if (info->precision != NULL && !info->has_method)
		extra = psprintf("%s method=bruteforce", extra);
	ereport(NOTICE,
			(errmsg("odp_gpu timing: %s path=%s rows=" INT64_FORMAT " dims=%d "
					"read=%.1f ms (%s) transfer=%.1f ms compute=%.1f ms output=%.1f ms chunks=" INT64_FORMAT "%s",
					what, info->on_gpu ? "gpu" : "cpu", in->rows, in->dims,
					in->read_ms,
					in->cached ? "cache" : in->heap_scan ? "heap" : (in->aggregate ? "aggregate" : "spi"),
					info->transfer_ms, info->compute_ms, output_ms, info->chunks,
					extra)));
}
