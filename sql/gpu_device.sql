-- odp_gpu.device = gpu and odp_gpu_info(); this output differs with and
-- without a usable GPU (expected/gpu_device.out: none; _1.out: a GPU).
CREATE EXTENSION odp_gpu;
CREATE TABLE t (id int PRIMARY KEY, f real[]);
INSERT INTO t SELECT i, ARRAY[i, i % 3]::real[] FROM generate_series(1, 50) i;
SELECT count(*) > 0 AS has_rows, bool_or(usable) AS usable,
	   min(built_with_cuda) ~ '^[0-9]+\.[0-9]+$' AS built_with_cuda
FROM odp_gpu_info();
-- auto: falls back to the CPU when no GPU is usable
SELECT rank, id, round(score::numeric, 4) FROM odp_top_outliers('t', k => 2, n => 2);
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_min_rows = 0;
DO $$
BEGIN
	PERFORM * FROM odp_top_outliers('t', k => 2, n => 2);
	RAISE NOTICE 'computed on the GPU';
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	RAISE NOTICE 'error %: %', SQLSTATE, SQLERRM;
END $$;
SELECT selected FROM odp_gpu_info() ORDER BY device;
RESET ALL;
DROP TABLE t;
DROP EXTENSION odp_gpu;
