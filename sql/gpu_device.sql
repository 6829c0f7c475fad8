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
SELECT bool_or(selected) AS selected FROM odp_gpu_info();
-- a GPU memory cap too small for even one chunk of these rows: out of GPU
-- memory (53200) with a GPU, no usable GPU (55000) without one
CREATE TABLE w (id int PRIMARY KEY, f real[]);
INSERT INTO w SELECT i, array_fill(i::real, ARRAY[16384]) FROM generate_series(1, 100) i;
SET odp_gpu.gpu_memory_limit = '1MB';
DO $$
BEGIN
	PERFORM * FROM odp_top_outliers('w', k => 2, n => 2);
	RAISE NOTICE 'no error';
EXCEPTION WHEN out_of_memory OR object_not_in_prerequisite_state THEN
	RAISE NOTICE 'error %: %', SQLSTATE, SQLERRM;
END $$;
-- the next call works, on the GPU where there is one
RESET ALL;
SET odp_gpu.gpu_min_rows = 0;
SELECT rank, id, score FROM odp_top_outliers('w', k => 2, n => 2);
RESET ALL;
DROP TABLE t, w;
DROP EXTENSION odp_gpu;
