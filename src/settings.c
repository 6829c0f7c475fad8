/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  Defines the odp_gpu.* configuration parameters.
 *
 * All are user-settable: they choose how one query runs, not how the
 * server behaves.  Defining them touches no CUDA state.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "settings.h"
#include "utils/guc.h"

int			odp_device_setting = ODP_SETTING_AUTO;
int			odp_device_id = ODP_DEVICE_ID_DEFAULT;
int			odp_gpu_memory_limit_mb = ODP_GPU_MEMORY_LIMIT_DEFAULT;
int			odp_gpu_min_rows = ODP_GPU_MIN_ROWS_DEFAULT;
int			odp_cpu_threads = ODP_CPU_THREADS_DEFAULT;
bool		odp_report_timing = false;
bool		odp_distributed = true;
int			odp_node_connect_timeout = 10;

static const struct config_enum_entry device_options[] = {
	{"auto", ODP_SETTING_AUTO, false},
	{"gpu", ODP_SETTING_GPU, false},
	{"cpu", ODP_SETTING_CPU, false},
	{NULL, 0, false}
};

/* Registers every odp_gpu.* parameter and reserves the prefix. */
void
OdpDefineSettings(void)
{
	DefineCustomEnumVariable("odp_gpu.device",
							 "Chooses where odp_gpu computes: auto, gpu or cpu.",
							 "auto uses the GPU when one is usable and the input has at least "
							 "odp_gpu.gpu_min_rows rows (and, for k-NN, at least 16 queries), "
							 "else the CPU; gpu fails when no GPU is usable; cpu never touches "
							 "the GPU.",
							 &odp_device_setting, ODP_SETTING_AUTO, device_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("odp_gpu.device_id",
							"CUDA device ordinal odp_gpu uses.",
							"Valid range is 0 .. 63; odp_gpu_info() lists the devices.",
							&odp_device_id, ODP_DEVICE_ID_DEFAULT,
							ODP_DEVICE_ID_MIN, ODP_DEVICE_ID_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("odp_gpu.gpu_memory_limit",
							"Caps the GPU memory one call may use.",
							"0 means 90% of the memory free on the device. Inputs larger "
							"than the cap are processed in chunks with the same results.",
							&odp_gpu_memory_limit_mb, ODP_GPU_MEMORY_LIMIT_DEFAULT,
							ODP_GPU_MEMORY_LIMIT_MIN, ODP_GPU_MEMORY_LIMIT_MAX,
							PGC_USERSET, GUC_UNIT_MB, NULL, NULL, NULL);

	DefineCustomIntVariable("odp_gpu.gpu_min_rows",
							"Smallest input that odp_gpu.device = auto sends to the GPU.",
							"Smaller inputs run on the CPU, where they finish before a GPU "
							"would have started.",
							&odp_gpu_min_rows, ODP_GPU_MIN_ROWS_DEFAULT,
							ODP_GPU_MIN_ROWS_MIN, ODP_GPU_MIN_ROWS_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("odp_gpu.cpu_threads",
							"Threads the CPU path uses inside one backend.",
							"Valid range is 1 .. 256. Threads never call into the server; "
							"only the backend's own thread checks for cancellation.",
							&odp_cpu_threads, ODP_CPU_THREADS_DEFAULT,
							ODP_CPU_THREADS_MIN, ODP_CPU_THREADS_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("odp_gpu.report_timing",
							 "Reports each call's phases (read, transfer, compute, output) as a NOTICE.",
							 NULL,
							 &odp_report_timing, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("odp_gpu.distributed",
							 "Computes outliers, k-NN and skylines of a sharded table on its nodes.",
							 "A partitioned table whose partitions are postgres_fdw foreign tables on "
							 "servers with odp_gpu is computed on those servers; off reads every row "
							 "through postgres_fdw instead.",
							 &odp_distributed, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("odp_gpu.node_connect_timeout",
							"Seconds to wait for a node's connection, where its foreign server sets no connect_timeout.",
							NULL,
							&odp_node_connect_timeout, 10, 1, 3600,
							PGC_USERSET, GUC_UNIT_S, NULL, NULL, NULL);

	MarkGUCPrefixReserved("odp_gpu");
}

/* Returns the current odp_gpu.device value as text. */
const char *
OdpDeviceSettingName(void)
{
	return device_options[odp_device_setting].name;
}
