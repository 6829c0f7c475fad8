/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  The odp_gpu.* configuration parameters and their limits.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/settings.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SETTINGS_H
#define ODP_SETTINGS_H

typedef enum OdpDeviceSetting
{
	ODP_SETTING_AUTO,
	ODP_SETTING_GPU,
	ODP_SETTING_CPU
} OdpDeviceSetting;

/* odp_gpu.parallel_read */
typedef enum OdpParallelReadSetting
{
	ODP_PARALLEL_READ_AUTO,		/* workers as PostgreSQL sizes a scan */
	ODP_PARALLEL_READ_OFF,
	ODP_PARALLEL_READ_FORCE		/* every table source, whatever its size */
} OdpParallelReadSetting;

/* odp_gpu.distance_precision */
typedef enum OdpPrecisionSetting
{
	ODP_PRECISION_AUTO,			/* the precision the features are stored in */
	ODP_PRECISION_FLOAT32,
	ODP_PRECISION_FLOAT64
} OdpPrecisionSetting;

/* -1: not set, odp_gpu.devices decides; else that one device */
#define ODP_DEVICE_ID_DEFAULT		(-1)
#define ODP_DEVICE_ID_MIN			(-1)
#define ODP_DEVICE_ID_MAX			63

/* odp_gpu.devices: 'all' or 1 .. ODP_DEVICES_MAX ordinals 0 .. ODP_DEVICE_ID_MAX */
#define ODP_DEVICES_DEFAULT			"all"
#define ODP_DEVICES_MAX				16	/* = ODP_MAX_GPUS of the engine */

#define ODP_GPU_MEMORY_LIMIT_DEFAULT	0	/* MB; 0 = 90% of free memory */
#define ODP_GPU_MEMORY_LIMIT_MIN		0
#define ODP_GPU_MEMORY_LIMIT_MAX		(64 * 1024 * 1024)

#define ODP_GPU_MIN_ROWS_DEFAULT	2048
#define ODP_GPU_MIN_ROWS_MIN		0
#define ODP_GPU_MIN_ROWS_MAX		INT_MAX

#define ODP_CPU_THREADS_DEFAULT		0	/* as many as a parallel query */
#define ODP_CPU_THREADS_MIN			0
#define ODP_CPU_THREADS_MAX			256

extern int	odp_device_setting;
extern int	odp_parallel_read;
extern int	odp_spatial;		/* OdpSpatialMode */
extern int	odp_distance_precision;
extern int	odp_device_id;
extern int	odp_gpu_memory_limit_mb;
extern int	odp_gpu_min_rows;
extern double odp_split_min_ms;
extern int	odp_cpu_threads;

/*
 * The CPU path's threads: odp_gpu.cpu_threads, or where it is 0 (the
 * default) as many as a parallel query of this session may have
 * processes, 1 + max_parallel_workers_per_gather.
 */
extern int	OdpCpuThreads(void);
extern bool odp_report_timing;
extern bool odp_distributed;
extern int	odp_node_connect_timeout;
extern int	odp_service_wait_ms;
extern int	odp_output_memory_kb;

extern char *odp_devices_setting;

extern void OdpDefineSettings(void);

/*
 * The devices the current settings use: returns -1 for every device of
 * the host, else the number of ordinals written to ids (ODP_DEVICES_MAX
 * entries).  odp_gpu.device_id, when set (>= 0), is that one device;
 * otherwise odp_gpu.devices decides.
 */
extern int	OdpDeviceList(int *ids);
extern const char *OdpDeviceSettingName(void);

#endif							/* ODP_SETTINGS_H */
