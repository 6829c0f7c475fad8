/*-------------------------------------------------------------------------
 *
 * knn_cost.c
 *	  The path of a k-NN call under odp_gpu.device = auto, by the cost
 *	  model (odp_cost.h), and its SQL surface: odp_knn_path(), which gives
 *	  a shape's decision as a call of that shape would make it, and
 *	  odp_knn_cost_model(), the terms in use.
 *
 * With the GPU service the terms are the engine process's, timed when it
 * started; without it a backend times the CPU's once, at its first call
 * that must choose, and weighs the GPU with the built-in terms.  Whether
 * a cached table's copy is on a GPU already is asked of the service's
 * book (service_resident.h).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/knn_cost.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "args.h"
#include "engine_glue.h"
#include "fmgr.h"
#include "funcapi.h"
#include "input/input.h"
#include "knn_cost.h"
#include "miscadmin.h"
#include "odp_cost.h"
#include "service/service.h"
#include "service/service_resident.h"
#include "service/service_shmem.h"
#include "settings.h"
#include "shared_buffers.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_knn_path);
PG_FUNCTION_INFO_V1(odp_knn_cost_model);

static OdpKnnCostModel backend_model;
static bool backend_model_timed = false;

/*
 * The model in use: the service's, else this backend's (its CPU timed at
 * the first need).
 */
static void
KnnCostModel(OdpKnnCostModel *m)
{
	if (OdpServiceConfigured() && OdpService != NULL)
	{
		LWLockAcquire(OdpService->lock, LW_SHARED);
		*m = OdpService->knn_cost;
		LWLockRelease(OdpService->lock);
		/* a service that never reached READY published nothing yet */
		if (m->cpu_cores > 0)
			return;
	}
	if (!backend_model_timed)
	{
		OdpContext	ctx;

		memset(&ctx, 0, sizeof(ctx));
		ctx.device = ODP_DEVICE_CPU;
		/* a failure leaves the built-in terms, which serve as well */
		(void) odp_knn_cost_calibrate(&ctx, &backend_model, NULL, 0);
		backend_model_timed = true;
	}
	*m = backend_model;
}

/* Whether the candidate rows at data (bytes) have a copy on a GPU. */
static OdpCostInput
KnnCandidatesWhere(const OdpInput *source)
{
	OdpSharedLocation loc;
	const void *data = source->data64 ? (const void *) source->data64 : (const void *) source->data;
	Size		bytes = (Size) source->rows * source->dims *
		(source->data64 ? sizeof(double) : sizeof(float));

	if (source->cached && data != NULL && OdpSharedBufferFind(data, bytes, &loc) &&
		loc.cached && OdpResidentDevice(loc.entry.slot, loc.entry.generation) >= 0)
		return ODP_COST_INPUT_DEVICE;
	return ODP_COST_INPUT_HOST;
}

/*
 * The decision for shape s (s->threads filled here) per odp_gpu.device:
 * the setting's, or auto's where no GPU is usable, or the cheaper path.
 * Fills *e under auto with a usable GPU, and *by.
 */
static bool
KnnDecide(OdpKnnCostShape *s, OdpKnnCostEstimate *e, const char **by)
{
	OdpKnnCostModel m;
	char	   *why = NULL;

	memset(e, 0, sizeof(*e));
	s->threads = OdpCpuThreads();
	if ((OdpDeviceSetting) odp_device_setting != ODP_SETTING_AUTO)
	{
		*by = "setting";
		return OdpChooseGpu(s->queries, s->rows);
	}
	if (!OdpGpuUsable(&why))
	{
		*by = "no_gpu";
		return false;
	}
	KnnCostModel(&m);
	odp_knn_cost_estimate(&m, s, e);
	*by = "cost";
	return e->gpu;
}

/* See knn_cost.h. */
bool
OdpChooseKnnGpu(const OdpInput *queries, const OdpInput *source, OdpMetric metric,
				int32 k, bool self_join, OdpRunInfo *info)
{
	OdpKnnCostShape s;
	OdpKnnCostEstimate e;
	bool		gpu;

	memset(&s, 0, sizeof(s));
	s.queries = queries->rows;
	s.rows = source->rows;
	s.dims = source->dims;
	s.k = k;
	s.wide = source->data64 != NULL;
	s.self_join = self_join;
	s.metric = metric;
	s.input = KnnCandidatesWhere(source);
	gpu = KnnDecide(&s, &e, &info->chosen_by);
	if (strcmp(info->chosen_by, "cost") == 0)
		info->chosen_why = psprintf(" est_cpu=%.2f ms est_gpu=%.2f ms candidates=%s threads=%d",
									e.cpu_ms, e.gpu_ms,
									s.input == ODP_COST_INPUT_DEVICE ? "device" : "host",
									s.threads);
	return gpu;
}

/*
 * odp_knn_path(queries, rows, dims, metric, float64, on_device,
 * self_join): the path a k-NN call of that shape takes now, and both
 * estimates.
 */
Datum
odp_knn_path(PG_FUNCTION_ARGS)
{
	static const char *const args[] = {
		"queries", "rows", "dims", "metric", "float64", "on_device", "self_join"};
	TupleDesc	desc;
	Datum		values[6];
	bool		nulls[6] = {false};
	OdpKnnCostShape s;
	OdpKnnCostEstimate e;
	const char *by;
	bool		gpu;

	for (int a = 0; a < (int) lengthof(args); a++)
		OdpArgNotNull(fcinfo, a, args[a]);
	memset(&s, 0, sizeof(s));
	s.queries = PG_GETARG_INT64(0);
	s.rows = PG_GETARG_INT64(1);
	s.dims = PG_GETARG_INT32(2);
	s.metric = OdpArgMetric(fcinfo, 3, true);
	s.wide = PG_GETARG_BOOL(4);
	s.input = PG_GETARG_BOOL(5) ? ODP_COST_INPUT_DEVICE : ODP_COST_INPUT_HOST;
	s.self_join = PG_GETARG_BOOL(6);
	if (s.queries < 1 || s.rows < 1 || s.dims < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queries, rows and dims must be at least 1")));
	if (s.self_join)
		s.queries = s.rows;
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "odp_knn_path must return a row");
	gpu = KnnDecide(&s, &e, &by);
	values[0] = CStringGetTextDatum(gpu ? "gpu" : "cpu");
	values[1] = CStringGetTextDatum(by);
	values[2] = Float8GetDatum(e.cpu_ms);
	values[3] = Float8GetDatum(e.gpu_ms);
	values[4] = Float8GetDatum(e.gpu_copy_ms);
	values[5] = Int32GetDatum(s.threads);
	nulls[2] = nulls[3] = nulls[4] = strcmp(by, "cost") != 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/* The words of a model's source. */
static const char *
KnnCostSourceName(OdpCostSource source)
{
	switch (source)
	{
		case ODP_COST_BUILTIN:
			return "built-in";
		case ODP_COST_CALIBRATED_CPU:
			return "cpu timed, gpu built-in";
		case ODP_COST_CALIBRATED:
			return "timed";
	}
	return "?";
}

/* odp_knn_cost_model(): the terms auto weighs the k-NN paths with. */
Datum
odp_knn_cost_model(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OdpKnnCostModel m;
	const char *source;
	static const char *const terms[] = {
		"cpu_call_ms", "cpu_value_ns", "cpu_term_ns", "cpu_pair_ns", "cpu_wide", "cpu_speedup",
		"cpu_cores", "gpu_call_ms", "gpu_tile_call_ms", "gpu_few_value_ns", "gpu_few_pair_ns",
		"gpu_tile_value_ns", "gpu_term_ns", "gpu_pair_ns", "gpu_wide", "copy_gbps",
		"calibrate_ms", "cpu_list_ns", "gpu_host_call_ms"};
	double		v[lengthof(terms)];

	InitMaterializedSRF(fcinfo, 0);
	/* as a call would: a service that is starting publishes its terms at READY */
	if (OdpServiceConfigured())
	{
		char	   *why = NULL;

		(void) OdpGpuUsable(&why);
	}
	KnnCostModel(&m);
	source = KnnCostSourceName(m.source);
	v[0] = m.cpu_call_ms;
	v[1] = m.cpu_value_ns;
	v[2] = m.cpu_term_ns;
	v[3] = m.cpu_pair_ns;
	v[4] = m.cpu_wide;
	v[5] = m.cpu_speedup;
	v[6] = m.cpu_cores;
	v[7] = m.gpu_call_ms;
	v[8] = m.gpu_tile_call_ms;
	v[9] = m.gpu_few_value_ns;
	v[10] = m.gpu_few_pair_ns;
	v[11] = m.gpu_tile_value_ns;
	v[12] = m.gpu_term_ns;
	v[13] = m.gpu_pair_ns;
	v[14] = m.gpu_wide;
	v[15] = m.copy_gbps;
	v[16] = m.calibrate_ms;
	v[17] = m.cpu_list_ns;
	v[18] = m.gpu_host_call_ms;
	for (int i = 0; i < (int) lengthof(terms); i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false};

		values[0] = CStringGetTextDatum(terms[i]);
		values[1] = Float8GetDatum(v[i]);
		values[2] = CStringGetTextDatum(source);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
