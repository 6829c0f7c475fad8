/*-------------------------------------------------------------------------
 *
 * gpu_info.c
 *	  odp_gpu_info(): the GPUs odp_gpu sees, their memory and versions, and
 *	  which path the current settings run.
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
#include "settings.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_gpu_info);

#define GPU_INFO_COLS 12

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
 * odp_gpu_info() -> one row per visible GPU, or one row that says why no
 * GPU is usable.  Columns: device, name, compute_capability,
 * total_memory, free_memory, multiprocessors, driver_version,
 * runtime_version, built_with_cuda, usable, selected, detail.
 */
Datum
odp_gpu_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OdpContext	ctx;
	OdpStatus	status;
	int			count = 0,
				driver = 0,
				runtime = 0;
	int			ids[ODP_DEVICES_MAX];
	int			listed;
	Datum		values[GPU_INFO_COLS];
	bool		nulls[GPU_INFO_COLS];

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == GPU_INFO_COLS);

	memset(&ctx, 0, sizeof(ctx));
	status = odp_gpu_probe(&ctx, &count, &driver, &runtime);
	if (status != ODP_OK)
	{
		memset(nulls, true, sizeof(nulls));
		values[6] = CudaVersionText(driver, &nulls[6]);
		values[7] = CudaVersionText(runtime, &nulls[7]);
		values[8] = CudaVersionText(odp_gpu_build_version(), &nulls[8]);
		values[9] = BoolGetDatum(false);
		nulls[9] = false;
		values[10] = BoolGetDatum(false);
		nulls[10] = false;
		values[11] = CStringGetTextDatum(psprintf("no usable GPU: %s; %s",
												  ctx.message[0] ? ctx.message : odp_status_name(status),
												  odp_device_setting == ODP_SETTING_GPU ?
												  "calls fail while odp_gpu.device = gpu" :
												  "odp_gpu computes on the CPU"));
		nulls[11] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		return (Datum) 0;
	}

	listed = OdpDeviceList(ids);
	for (int i = 0; i < count; i++)
	{
		OdpGpuInfo	gpu;
		/* all: the first ODP_DEVICES_MAX devices, as the engine takes them */
		int			parts = listed < 0 && i < ODP_DEVICES_MAX ? 1 : 0;
		bool		selected;

		for (int j = 0; j < listed; j++)
			parts += ids[j] == i;
		selected = parts > 0 && odp_device_setting != ODP_SETTING_CPU;

		memset(nulls, false, sizeof(nulls));
		memset(&gpu, 0, sizeof(gpu));
		status = odp_gpu_device_info(&ctx, i, &gpu);
		values[0] = Int32GetDatum(i);
		values[1] = CStringGetTextDatum(status == ODP_OK ? gpu.name : "unknown");
		values[2] = CStringGetTextDatum(psprintf("%d.%d", gpu.cc_major, gpu.cc_minor));
		values[3] = Int64GetDatum((int64) gpu.total_memory);
		values[4] = Int64GetDatum((int64) gpu.free_memory);
		values[5] = Int32GetDatum(gpu.multiprocessors);
		values[6] = CudaVersionText(driver, &nulls[6]);
		values[7] = CudaVersionText(runtime, &nulls[7]);
		values[8] = CudaVersionText(odp_gpu_build_version(), &nulls[8]);
		values[9] = BoolGetDatum(status == ODP_OK);
		values[10] = BoolGetDatum(selected);
		if (status != ODP_OK)
			values[11] = CStringGetTextDatum(ctx.message);
		else if (selected)
			values[11] = CStringGetTextDatum(psprintf("used when odp_gpu.device = %s%s%s",
													  OdpDeviceSettingName(),
													  odp_device_setting == ODP_SETTING_AUTO ?
													  psprintf(" and the input has at least %d rows",
																odp_gpu_min_rows) : "",
													  UsedDevicesText(listed, ids, parts)));
		else
			values[11] = CStringGetTextDatum(odp_device_setting == ODP_SETTING_CPU ?
											 "not used: odp_gpu.device = cpu" :
											 odp_device_id >= 0 ?
											 "not used: odp_gpu.device_id names another GPU" :
											 "not used: odp_gpu.devices does not name it");
		if (status != ODP_OK)
		{
			nulls[2] = nulls[3] = nulls[4] = nulls[5] = true;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
