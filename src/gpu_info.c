/*-------------------------------------------------------------------------
 *
 * gpu_info.c
 *	  odp_gpu_info(): the GPUs odp_gpu sees, their memory and versions, and
 *	  which path the current settings run.
 *
 * Without the GPU service (backend mode) it probes CUDA in this backend,
 * as a call on the GPU would.  With the service (the library preloaded)
 * the service holds the GPUs and this backend must never initialise
 * CUDA: the rows are the service's devices as its shared state describes
 * them, with their budgets and what runs and waits on each.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/gpu_info.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "engine_glue.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "service/service.h"
#include "settings.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_gpu_info);

/* The result's columns, in the order odp_gpu_info() declares them. */
typedef enum GpuInfoColumn
{
	COL_DEVICE,
	COL_NAME,
	COL_COMPUTE_CAPABILITY,
	COL_TOTAL_MEMORY,
	COL_FREE_MEMORY,
	COL_MULTIPROCESSORS,
	COL_DRIVER_VERSION,
	COL_RUNTIME_VERSION,
	COL_BUILT_WITH_CUDA,
	COL_USABLE,
	COL_SELECTED,
	COL_DETAIL,
	COL_MODE,
	COL_SERVICE_STATE,
	COL_BUDGET,
	COL_RESERVED,
	COL_RUNNING,
	COL_QUEUED,
	COL_WAITING_FOR_SLOT,
	COL_ENGINE_PID,
	COL_ENGINE_STARTED_AT,
	COL_ENGINE_RESTARTS,
	GPU_INFO_COLS
} GpuInfoColumn;

/* Formats a CUDA version number such as 13000 as "13.0"; 0 as NULL. */
static Datum
CudaVersionText(int version, bool *isnull)
{
	*isnull = version <= 0;
	if (*isnull)
		return (Datum) 0;
	return CStringGetTextDatum(psprintf("%d.%d", version / 1000, (version % 1000) / 10));
}

/*
 * Says, for a used device, which devices a call spreads over and how many
 * parts this one takes: listed and ids as OdpDeviceList returned them.
 */
static const char *
UsedDevicesText(int listed, const int *ids, int parts)
{
	StringInfoData buf;

	if (listed == 1)
		return odp_device_id >= 0 ? " (odp_gpu.device_id names it alone)" : "";
	initStringInfo(&buf);
	if (listed < 0)
		appendStringInfoString(&buf, "; one call spreads its work over every device (odp_gpu.devices = all)");
	else
	{
		appendStringInfoString(&buf, "; one call spreads its work over devices ");
		for (int j = 0; j < listed; j++)
			appendStringInfo(&buf, j == 0 ? "%d" : ",%d", ids[j]);
		if (parts > 1)
			appendStringInfo(&buf, ", %d parts on this one", parts);
		appendStringInfoString(&buf, " (odp_gpu.devices)");
	}
	return buf.data;
}

/*
 * How many parts of a call the device with this ordinal takes under the
 * session's device list (listed and ids as OdpDeviceList returned them);
 * position is its place among the devices, for odp_gpu.devices = all,
 * which takes the first ODP_DEVICES_MAX as the engine does.
 */
static int
DeviceParts(int ordinal, int position, int listed, const int *ids)
{
	int			parts = listed < 0 && position < ODP_DEVICES_MAX ? 1 : 0;

	for (int j = 0; j < listed; j++)
		parts += ids[j] == ordinal;
	return parts;
}

/* Says when a selected device is used. */
static const char *
UsedWhenText(int listed, const int *ids, int parts)
{
	return psprintf("used when odp_gpu.device = %s%s%s",
					OdpDeviceSettingName(),
					odp_device_setting == ODP_SETTING_AUTO ?
					psprintf(" and the input has at least %d rows",
							 odp_gpu_min_rows) : "",
					UsedDevicesText(listed, ids, parts));
}

/* Says why a device the settings do not select is not used. */
static const char *
NotUsedText(void)
{
	return odp_device_setting == ODP_SETTING_CPU ?
		"not used: odp_gpu.device = cpu" :
		odp_device_id >= 0 ?
		"not used: odp_gpu.device_id names another GPU" :
		"not used: odp_gpu.devices does not name it";
}

/* What the session does without a usable GPU. */
static const char *
WithoutGpuText(void)
{
	return odp_device_setting == ODP_SETTING_GPU ?
		"calls fail while odp_gpu.device = gpu" :
		"odp_gpu computes on the CPU";
}

/* Sets every column NULL, then the mode and the build's CUDA version. */
static void
RowStart(Datum *values, bool *nulls, const char *mode)
{
	memset(nulls, true, sizeof(bool) * GPU_INFO_COLS);
	values[COL_MODE] = CStringGetTextDatum(mode);
	nulls[COL_MODE] = false;
	values[COL_BUILT_WITH_CUDA] = CudaVersionText(odp_gpu_build_version(),
												  &nulls[COL_BUILT_WITH_CUDA]);
}

static void
SetBool(Datum *values, bool *nulls, int col, bool value)
{
	values[col] = BoolGetDatum(value);
	nulls[col] = false;
}

static void
SetText(Datum *values, bool *nulls, int col, const char *value)
{
	values[col] = CStringGetTextDatum(value);
	nulls[col] = false;
}

static void
SetInt64(Datum *values, bool *nulls, int col, int64 value)
{
	values[col] = Int64GetDatum(value);
	nulls[col] = false;
}

static void
SetInt32(Datum *values, bool *nulls, int col, int32 value)
{
	values[col] = Int32GetDatum(value);
	nulls[col] = false;
}

/*
 * The service's engine process: its pid and start (NULL while there is
 * none) and how many times it was restarted.
 */
static void
SetEngine(Datum *values, bool *nulls, const OdpServiceInfo *service)
{
	if (service->engine_pid != 0)
	{
		SetInt32(values, nulls, COL_ENGINE_PID, service->engine_pid);
		values[COL_ENGINE_STARTED_AT] = TimestampTzGetDatum(service->engine_started_at);
		nulls[COL_ENGINE_STARTED_AT] = false;
	}
	SetInt64(values, nulls, COL_ENGINE_RESTARTS, service->engine_restarts);
}

/*
 * Service mode: one row per device the service holds (the CPU engine's
 * one with odp_gpu.service_engine = cpu), or one row saying why it has
 * none.  No CUDA call here.
 */
static void
ServiceRows(ReturnSetInfo *rsinfo, const OdpServiceInfo *service)
{
	Datum		values[GPU_INFO_COLS];
	bool		nulls[GPU_INFO_COLS];
	int			ids[ODP_DEVICES_MAX];
	int			listed = OdpDeviceList(ids);
	const char *held;

	if (service->ndevices == 0)
	{
		RowStart(values, nulls, "service");
		SetText(values, nulls, COL_SERVICE_STATE, service->state);
		SetInt64(values, nulls, COL_WAITING_FOR_SLOT, service->waiting_for_slot);
		SetEngine(values, nulls, service);
		SetBool(values, nulls, COL_USABLE, false);
		SetBool(values, nulls, COL_SELECTED, false);
		values[COL_DRIVER_VERSION] = CudaVersionText(service->driver_version,
													 &nulls[COL_DRIVER_VERSION]);
		values[COL_RUNTIME_VERSION] = CudaVersionText(service->runtime_version,
													  &nulls[COL_RUNTIME_VERSION]);
		SetText(values, nulls, COL_DETAIL,
				service->ready ?
				psprintf("no usable GPU: the odp_gpu service has none: %s; %s",
						 service->why[0] ? service->why : "no device", WithoutGpuText()) :
				psprintf("no usable GPU: the odp_gpu service is %s (it restarts by itself); %s",
						 service->state, WithoutGpuText()));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		return;
	}

	held = service->engine_pid != 0 ?
		psprintf("held by the odp_gpu service (pid %d, since %s) in its engine process "
				 "(pid %d, since %s)", service->pid, timestamptz_to_str(service->started_at),
				 service->engine_pid, timestamptz_to_str(service->engine_started_at)) :
		psprintf("held by the odp_gpu service (pid %d, since %s), whose engine process "
				 "restarts (the last one %s)", service->pid,
				 timestamptz_to_str(service->started_at),
				 service->engine_last_exit[0] ? service->engine_last_exit : "ended");
	for (int d = 0; d < service->ndevices; d++)
	{
		const OdpServiceDeviceInfo *dev = &service->devices[d];

		/* the CPU engine takes every request, whatever the device list */
		int			parts = service->cpu_engine ? 1 :
			DeviceParts(dev->ordinal, d, listed, ids);
		bool		selected = parts > 0 && odp_device_setting != ODP_SETTING_CPU;

		RowStart(values, nulls, "service");
		SetInt32(values, nulls, COL_DEVICE, dev->ordinal);
		SetText(values, nulls, COL_NAME, dev->name);
		if (!service->cpu_engine)
		{
			SetText(values, nulls, COL_COMPUTE_CAPABILITY,
					psprintf("%d.%d", dev->cc_major, dev->cc_minor));
			SetInt64(values, nulls, COL_TOTAL_MEMORY, dev->total_memory);
			SetInt32(values, nulls, COL_MULTIPROCESSORS, dev->multiprocessors);
		}
		/* what requests may still reserve, not what CUDA reports free */
		SetInt64(values, nulls, COL_FREE_MEMORY, Max(dev->budget - dev->reserved, 0));
		values[COL_DRIVER_VERSION] = CudaVersionText(service->driver_version,
													 &nulls[COL_DRIVER_VERSION]);
		values[COL_RUNTIME_VERSION] = CudaVersionText(service->runtime_version,
													  &nulls[COL_RUNTIME_VERSION]);
		SetBool(values, nulls, COL_USABLE, true);
		SetBool(values, nulls, COL_SELECTED, selected);
		SetText(values, nulls, COL_DETAIL,
				psprintf("%s; %s", held,
						 !selected ? NotUsedText() :
						 service->cpu_engine ? UsedWhenText(1, ids, 1) :
						 UsedWhenText(listed, ids, parts)));
		SetText(values, nulls, COL_SERVICE_STATE, service->state);
		SetInt64(values, nulls, COL_BUDGET, dev->budget);
		SetInt64(values, nulls, COL_RESERVED, dev->reserved);
		SetInt32(values, nulls, COL_RUNNING, dev->running);
		SetInt32(values, nulls, COL_QUEUED, dev->queued);
		SetInt64(values, nulls, COL_WAITING_FOR_SLOT, service->waiting_for_slot);
		SetEngine(values, nulls, service);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * Backend mode: probes CUDA here; one row per visible GPU, or one row
 * that says why no GPU is usable.
 */
static void
BackendRows(ReturnSetInfo *rsinfo)
{
	OdpContext	ctx;
	OdpStatus	status;
	int			count = 0,
				driver = 0,
				runtime = 0;
	int			ids[ODP_DEVICES_MAX];
	int			listed;
	Datum		values[GPU_INFO_COLS];
	bool		nulls[GPU_INFO_COLS];

	memset(&ctx, 0, sizeof(ctx));
	status = odp_gpu_probe(&ctx, &count, &driver, &runtime);
	if (status != ODP_OK)
	{
		RowStart(values, nulls, "backend");
		values[COL_DRIVER_VERSION] = CudaVersionText(driver, &nulls[COL_DRIVER_VERSION]);
		values[COL_RUNTIME_VERSION] = CudaVersionText(runtime, &nulls[COL_RUNTIME_VERSION]);
		SetBool(values, nulls, COL_USABLE, false);
		SetBool(values, nulls, COL_SELECTED, false);
		SetText(values, nulls, COL_DETAIL,
				psprintf("no usable GPU: %s; %s",
						 ctx.message[0] ? ctx.message : odp_status_name(status),
						 WithoutGpuText()));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		return;
	}

	listed = OdpDeviceList(ids);
	for (int i = 0; i < count; i++)
	{
		OdpGpuInfo	gpu;
		int			parts = DeviceParts(i, i, listed, ids);
		bool		selected = parts > 0 && odp_device_setting != ODP_SETTING_CPU;

		memset(&gpu, 0, sizeof(gpu));
		status = odp_gpu_device_info(&ctx, i, &gpu);
		RowStart(values, nulls, "backend");
		SetInt32(values, nulls, COL_DEVICE, i);
		SetText(values, nulls, COL_NAME, status == ODP_OK ? gpu.name : "unknown");
		if (status == ODP_OK)
		{
			SetText(values, nulls, COL_COMPUTE_CAPABILITY,
					psprintf("%d.%d", gpu.cc_major, gpu.cc_minor));
			SetInt64(values, nulls, COL_TOTAL_MEMORY, (int64) gpu.total_memory);
			SetInt64(values, nulls, COL_FREE_MEMORY, (int64) gpu.free_memory);
			SetInt32(values, nulls, COL_MULTIPROCESSORS, gpu.multiprocessors);
		}
		values[COL_DRIVER_VERSION] = CudaVersionText(driver, &nulls[COL_DRIVER_VERSION]);
		values[COL_RUNTIME_VERSION] = CudaVersionText(runtime, &nulls[COL_RUNTIME_VERSION]);
		SetBool(values, nulls, COL_USABLE, status == ODP_OK);
		SetBool(values, nulls, COL_SELECTED, selected);
		SetText(values, nulls, COL_DETAIL,
				status != ODP_OK ? ctx.message :
				selected ? UsedWhenText(listed, ids, parts) : NotUsedText());
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * odp_gpu_info() -> the devices odp_gpu computes on, or one row that says
 * why none is usable.  Columns: device, name, compute_capability,
 * total_memory, free_memory, multiprocessors, driver_version,
 * runtime_version, built_with_cuda, usable, selected, detail, then mode
 * ('service' or 'backend') and the service's columns (NULL in backend
 * mode): service_state, budget, reserved, running, queued,
 * waiting_for_slot.
 */
Datum
odp_gpu_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OdpServiceInfo service;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == GPU_INFO_COLS);
	if (OdpServiceGetInfo(&service))
		ServiceRows(rsinfo, &service);
	else
		BackendRows(rsinfo);
	return (Datum) 0;
}
