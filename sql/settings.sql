-- odp_gpu.* settings: defaults, valid values and out-of-range values.
CREATE EXTENSION odp_gpu;
SHOW odp_gpu.device;
SHOW odp_gpu.device_id;
SHOW odp_gpu.gpu_memory_limit;
SHOW odp_gpu.gpu_min_rows;
SHOW odp_gpu.cpu_threads;
SHOW odp_gpu.report_timing;
SET odp_gpu.device = cpu;
SHOW odp_gpu.device;
SET odp_gpu.device = 'GPU';
SHOW odp_gpu.device;
SET odp_gpu.device = tpu;
SET odp_gpu.device_id = -2;
SET odp_gpu.device_id = 64;
SET odp_gpu.gpu_memory_limit = '512MB';
SHOW odp_gpu.gpu_memory_limit;
SET odp_gpu.gpu_memory_limit = -1;
SET odp_gpu.gpu_min_rows = -1;
SET odp_gpu.cpu_threads = -1;
SET odp_gpu.cpu_threads = 257;
SET odp_gpu.no_such_setting = 1;
RESET ALL;
SHOW odp_gpu.device;

-- odp_gpu.devices: all, or a list of ordinals (one listed twice: two parts)
SHOW odp_gpu.devices;
SET odp_gpu.devices = '0,2';
SHOW odp_gpu.devices;
SET odp_gpu.devices = ' 0 , 0 ';
SHOW odp_gpu.devices;
SET odp_gpu.devices = 'ALL';
SHOW odp_gpu.devices;
SET odp_gpu.devices = '';
SET odp_gpu.devices = '0,';
SET odp_gpu.devices = '0;1';
SET odp_gpu.devices = '-1';
SET odp_gpu.devices = '64';
SET odp_gpu.devices = '99999999999999999999';
SET odp_gpu.devices = 'all,0';

-- odp_gpu.split_min_ms: the least estimated one-device compute a split needs
SHOW odp_gpu.split_min_ms;
SET odp_gpu.split_min_ms = 0;
SHOW odp_gpu.split_min_ms;
SET odp_gpu.split_min_ms = 2.5;
SHOW odp_gpu.split_min_ms;
SET odp_gpu.split_min_ms = -1;
RESET odp_gpu.split_min_ms;
SET odp_gpu.devices = '0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16';
SET odp_gpu.devices = '0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15';
SHOW odp_gpu.devices;
-- a bad list is refused with SQLSTATE 22023, the setting unchanged
DO $$
BEGIN
	SET odp_gpu.devices = 'gpu0';
EXCEPTION WHEN invalid_parameter_value THEN
	RAISE NOTICE 'refused with %: %', SQLSTATE, SQLERRM;
END
$$;
SHOW odp_gpu.devices;
-- device_id: -1 (default) leaves the choice to odp_gpu.devices
SET odp_gpu.device_id = 1;
SHOW odp_gpu.device_id;
SET odp_gpu.device_id = -2;
RESET ALL;
SHOW odp_gpu.devices;
SHOW odp_gpu.device_id;

-- the settings do not matter on the CPU path
CREATE TABLE dev_pts AS SELECT i AS id, ARRAY[(i * 37) % 101, (i * 53) % 89]::real[] AS f
	FROM generate_series(1, 300) i;
SET odp_gpu.device = cpu;
CREATE TABLE dev_one AS SELECT * FROM odp_outlier_scores('dev_pts', k => 5);
SET odp_gpu.devices = '0,0';
SELECT count(*) AS rows, count(*) FILTER (WHERE o.score IS DISTINCT FROM f.score) AS differ
FROM dev_one o JOIN odp_outlier_scores('dev_pts', k => 5) f USING (id);
RESET ALL;
DROP TABLE dev_pts, dev_one;

-- the CPU path gives the same scores with any number of threads
CREATE TABLE pts AS SELECT i AS id, ARRAY[(i * 37) % 101, (i * 53) % 89]::real[] AS f
	FROM generate_series(1, 500) i;
SET odp_gpu.device = cpu;
CREATE TABLE one AS SELECT * FROM odp_outlier_scores('pts', k => 7);
SET odp_gpu.cpu_threads = 4;
SELECT count(*) AS rows, count(*) FILTER (WHERE o.score IS DISTINCT FROM f.score) AS differ
FROM one o JOIN odp_outlier_scores('pts', k => 7) f USING (id);

-- report_timing adds a NOTICE (its times vary, so it is not shown here)
SET odp_gpu.report_timing = on;
SET client_min_messages = warning;
SELECT rank FROM odp_top_outliers('pts', k => 3, n => 1);
RESET ALL;

-- odp_gpu.distance_precision: auto (the precision the features are
-- stored in), float32 or float64; anything else is refused
SHOW odp_gpu.distance_precision;
SET odp_gpu.distance_precision = FLOAT64;
SHOW odp_gpu.distance_precision;
SET odp_gpu.distance_precision = float16;
RESET odp_gpu.distance_precision;
SHOW odp_gpu.distance_precision;

-- odp_gpu.output_memory (64 kB .. 2 TB) and odp_gpu.service_wait
-- (0 .. 1 h): their defaults, a value in units, and values out of range
SHOW odp_gpu.output_memory;
SET odp_gpu.output_memory = '1GB';
SHOW odp_gpu.output_memory;
SET odp_gpu.output_memory = '32kB';
SET odp_gpu.output_memory = -1;
RESET odp_gpu.output_memory;
SHOW odp_gpu.service_wait;
SET odp_gpu.service_wait = '5min';
SHOW odp_gpu.service_wait;
SET odp_gpu.service_wait = -1;
SET odp_gpu.service_wait = '2h';
RESET odp_gpu.service_wait;

-- odp_gpu.backend_staging_size (0 .. 1 TB, superuser): its default, a
-- value in units, values out of range
SHOW odp_gpu.backend_staging_size;
SET odp_gpu.backend_staging_size = '256MB';
SHOW odp_gpu.backend_staging_size;
SET odp_gpu.backend_staging_size = 0;
SHOW odp_gpu.backend_staging_size;
SET odp_gpu.backend_staging_size = -1;
SET odp_gpu.backend_staging_size = '2TB';
RESET odp_gpu.backend_staging_size;
DROP TABLE pts, one;
DROP EXTENSION odp_gpu;
