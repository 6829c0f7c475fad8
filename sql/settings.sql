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
SET odp_gpu.device_id = -1;
SET odp_gpu.device_id = 64;
SET odp_gpu.gpu_memory_limit = '512MB';
SHOW odp_gpu.gpu_memory_limit;
SET odp_gpu.gpu_memory_limit = -1;
SET odp_gpu.gpu_min_rows = -1;
SET odp_gpu.cpu_threads = 0;
SET odp_gpu.cpu_threads = 257;
SET odp_gpu.no_such_setting = 1;
RESET ALL;
SHOW odp_gpu.device;

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
DROP TABLE pts, one;
DROP EXTENSION odp_gpu;
