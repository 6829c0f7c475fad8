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

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "odp_engine.h"
#include "optimizer/cost.h"
#include "settings.h"
#include "utils/guc.h"

/* The parsed odp_gpu.devices (the GUC's extra): count -1 means all. */
typedef struct OdpDevicesExtra
{
	int			count;
	int			ids[ODP_DEVICES_MAX];
} OdpDevicesExtra;

int			odp_device_setting = ODP_SETTING_AUTO;
int			odp_parallel_read = ODP_PARALLEL_READ_AUTO;
int			odp_distance_precision = ODP_PRECISION_AUTO;
int			odp_spatial = ODP_SPATIAL_AUTO;
char	   *odp_devices_setting = NULL;
static OdpDevicesExtra odp_devices_parsed = {-1, {0}};
int			odp_device_id = ODP_DEVICE_ID_DEFAULT;
int			odp_gpu_memory_limit_mb = ODP_GPU_MEMORY_LIMIT_DEFAULT;
int			odp_gpu_min_rows = ODP_GPU_MIN_ROWS_DEFAULT;
double		odp_split_min_ms = 25.0;
int			odp_cpu_threads = ODP_CPU_THREADS_DEFAULT;
bool		odp_report_timing = false;
bool		odp_distributed = true;
int			odp_node_connect_timeout = 10;
int			odp_service_wait_ms = 60000;
int			odp_output_memory_kb = 262144;

static const struct config_enum_entry parallel_read_options[] = {
	{"auto", ODP_PARALLEL_READ_AUTO, false},
	{"off", ODP_PARALLEL_READ_OFF, false},
	{"force", ODP_PARALLEL_READ_FORCE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry precision_options[] = {
	{"auto", ODP_PRECISION_AUTO, false},
	{"float32", ODP_PRECISION_FLOAT32, false},
	{"float64", ODP_PRECISION_FLOAT64, false},
	{NULL, 0, false}
};

static const struct config_enum_entry spatial_options[] = {
	{"auto", ODP_SPATIAL_AUTO, false},
	{"on", ODP_SPATIAL_ON, false},
	{"off", ODP_SPATIAL_OFF, false},
	{NULL, 0, false}
};

static const struct config_enum_entry device_options[] = {
	{"auto", ODP_SETTING_AUTO, false},
	{"gpu", ODP_SETTING_GPU, false},
	{"cpu", ODP_SETTING_CPU, false},
	{NULL, 0, false}
};

/*
 * Parses an odp_gpu.devices value into *out: "all" (any case, blanks
 * around it allowed) or a comma-separated list of ordinals.  On failure
 * sets the check's detail and returns false.
 */
static bool
OdpParseDevices(const char *value, OdpDevicesExtra *out)
{
	const char *p = value;

	while (*p == ' ' || *p == '\t')
		p++;
	if (pg_strncasecmp(p, "all", 3) == 0)
	{
		const char *q = p + 3;

		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '\0')
		{
			out->count = -1;
			return true;
		}
	}
	out->count = 0;
	for (;;)
	{
		long		id;
		char	   *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
		{
			GUC_check_errdetail("Expected a device ordinal at \"%s\".", p);
			GUC_check_errhint("Use 'all' or a comma-separated list of CUDA device ordinals such as '0,2'.");
			return false;
		}
		errno = 0;
		id = strtol(p, &end, 10);
		if (errno != 0 || id > ODP_DEVICE_ID_MAX)
		{
			GUC_check_errdetail("Device ordinals lie in 0 .. %d.", ODP_DEVICE_ID_MAX);
			return false;
		}
		if (out->count == ODP_DEVICES_MAX)
		{
			GUC_check_errdetail("A device list has at most %d entries.", ODP_DEVICES_MAX);
			return false;
		}
		out->ids[out->count++] = (int) id;
		p = end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			return true;
		if (*p != ',')
		{
			GUC_check_errdetail("Expected a comma at \"%s\".", p);
			GUC_check_errhint("Use 'all' or a comma-separated list of CUDA device ordinals such as '0,2'.");
			return false;
		}
		p++;
	}
}

/* Check hook of odp_gpu.devices: parses the value into the extra. */
static bool
OdpCheckDevices(char **newval, void **extra, GucSource source)
{
	OdpDevicesExtra parsed;
	OdpDevicesExtra *copy;

	(void) source;
	if (*newval == NULL || !OdpParseDevices(*newval, &parsed))
		return false;
	/* the server frees a check hook's extra with free() */
	copy = (OdpDevicesExtra *) malloc(sizeof(OdpDevicesExtra));
	if (copy == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		return false;
	}
	*copy = parsed;
	*extra = copy;
	return true;
}

/* Assign hook of odp_gpu.devices: makes the parsed list current. */
static void
OdpAssignDevices(const char *newval, void *extra)
{
	(void) newval;
	if (extra != NULL)
		odp_devices_parsed = *(const OdpDevicesExtra *) extra;
}

/* See settings.h. */
int
OdpDeviceList(int *ids)
{
	if (odp_device_id >= 0)
	{
		ids[0] = odp_device_id;
		return 1;
	}
	if (odp_devices_parsed.count < 0)
		return -1;
	memcpy(ids, odp_devices_parsed.ids, sizeof(int) * odp_devices_parsed.count);
	return odp_devices_parsed.count;
}

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

	DefineCustomEnumVariable("odp_gpu.parallel_read",
							 "Reads table sources with parallel workers: auto, off or force.",
							 "auto reads a plain table with as many parallel workers as "
							 "PostgreSQL would give a scan of it (its size, TOAST included, the "
							 "table's parallel_workers and max_parallel_workers_per_gather); "
							 "force uses max_parallel_workers_per_gather workers whatever the "
							 "size (for tests); off reads in the backend alone.",
							 &odp_parallel_read, ODP_PARALLEL_READ_AUTO, parallel_read_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomEnumVariable("odp_gpu.distance_precision",
							 "The precision of the distance analytics' rows: auto, float32 or float64.",
							 "auto computes features stored as real, real[], vector, halfvec, "
							 "sparsevec or smallint in float32, and features stored as double "
							 "precision, numeric, integer or bigint (or a mix including one) in "
							 "float64, exact for the stored values; float32 rounds every feature "
							 "to float32 (the earlier behaviour, faster on the GPU); float64 "
							 "computes every source in float64.",
							 &odp_distance_precision, ODP_PRECISION_AUTO, precision_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomEnumVariable("odp_gpu.spatial",
							 "Runs k-NN and outlier calls on rows of 1 to 3 dimensions through a spatial tree: auto, on or off.",
							 "The spatial path returns the brute force's rows, order and distances "
							 "exactly, for the euclidean, sqeuclidean, manhattan and chebyshev "
							 "metrics and k up to 128; auto takes it for tables of at least 256 rows "
							 "and calls of at least 256 queries; on "
							 "takes it whenever it can run, "
							 "off never (the brute force and SolvingSet of before).",
							 &odp_spatial, ODP_SPATIAL_AUTO, spatial_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomStringVariable("odp_gpu.devices",
							   "CUDA devices one call spreads its work over: all, or a list such as 0,2.",
							   "all uses every device of the host. An ordinal listed twice "
							   "splits that device's work and budget in two parts (to test the "
							   "split on a host with one GPU). odp_gpu.device_id, when set, "
							   "overrides this with one device.",
							   &odp_devices_setting, ODP_DEVICES_DEFAULT,
							   PGC_USERSET, 0, OdpCheckDevices, OdpAssignDevices, NULL);

	DefineCustomIntVariable("odp_gpu.device_id",
							"One CUDA device ordinal for odp_gpu to use, -1 for odp_gpu.devices.",
							"Valid range is -1 .. 63; a value of 0 or more means that device "
							"alone, whatever odp_gpu.devices says; odp_gpu_info() lists the devices.",
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

	DefineCustomRealVariable("odp_gpu.split_min_ms",
							 "Smallest estimated one-device compute, in milliseconds, that a call "
							 "spreads over the devices of odp_gpu.devices.",
							 "A call estimated to compute for less on one device runs on the first "
							 "device of the list: on two H200s calls below it measured no faster "
							 "whole (Pearson's 16,384 x 4,096, 24 ms, took 348 ms on one and 387 on two). "
							 "0 spreads every call that can be split.",
							 &odp_split_min_ms, 25.0, 0.0, 1e9,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("odp_gpu.cpu_threads",
							"Threads the CPU path uses inside one backend.",
							"0 (the default) takes as many as a parallel query may have processes: "
							"1 + max_parallel_workers_per_gather. Threads never call into the server; "
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

	DefineCustomIntVariable("odp_gpu.service_wait",
							"How long a call that wants the GPU waits for the GPU service to start or restart.",
							"Past it the call fails; it never falls back to the CPU while the "
							"service is on its way.  0 fails at once.",
							&odp_service_wait_ms, 60000, 0, 3600000,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);

	DefineCustomIntVariable("odp_gpu.output_memory",
							"Memory a result may take before it spills to a temporary file.",
							"A result's rows take memory as they arrive, up to this (or work_mem "
							"where that is larger); a larger result spills to disk.",
							&odp_output_memory_kb, 262144, 64, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);

}

/* Returns the current odp_gpu.device value as text. */
const char *
OdpDeviceSettingName(void)
{
	return device_options[odp_device_setting].name;
}

/* See settings.h. */
int
OdpCpuThreads(void)
{
	if (odp_cpu_threads > 0)
		return odp_cpu_threads;
	return Min(1 + Max(max_parallel_workers_per_gather, 0), ODP_CPU_THREADS_MAX);
}
