-- The path of a k-NN call (odp_knn_path) and the cost model's terms
-- (odp_knn_cost_model): what each setting decides, the CPU path's
-- threads, auto's decision against its own estimates, the errors.
CREATE EXTENSION odp_gpu;

-- a setting decides alone, without estimates (the threads of the
-- server's default max_parallel_workers_per_gather, whatever the server's)
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.device = cpu;
SELECT path, chosen_by, cpu_ms IS NULL AS no_estimate, cpu_threads
FROM odp_knn_path(100000, 1000000, 128);

-- the CPU path's threads: 1 + max_parallel_workers_per_gather by default
SET max_parallel_workers_per_gather = 0;
SELECT cpu_threads FROM odp_knn_path(1, 1000, 16);
SET max_parallel_workers_per_gather = 7;
SELECT cpu_threads FROM odp_knn_path(1, 1000, 16);
SET odp_gpu.cpu_threads = 5;
SELECT cpu_threads FROM odp_knn_path(1, 1000, 16);
RESET odp_gpu.cpu_threads;
SET max_parallel_workers_per_gather = 2;

-- auto: the CPU where no GPU is usable, else the cheaper path by the
-- model's own estimates, over a grid of shapes (this must hold on any host)
SET odp_gpu.device = auto;
SELECT count(*) AS shapes,
	count(*) FILTER (WHERE chosen_by NOT IN ('no_gpu', 'cost')) AS bad_reason,
	count(*) FILTER (WHERE chosen_by = 'no_gpu' AND (path <> 'cpu' OR cpu_ms IS NOT NULL)) AS bad_no_gpu,
	count(*) FILTER (WHERE chosen_by = 'cost' AND
		path <> CASE WHEN gpu_ms < cpu_ms THEN 'gpu' ELSE 'cpu' END) AS bad_choice,
	count(*) FILTER (WHERE chosen_by = 'cost' AND
		(cpu_ms <= 0 OR gpu_ms <= 0 OR gpu_copy_ms < 0 OR gpu_copy_ms > gpu_ms)) AS bad_estimate
FROM generate_series(0, 4) r, generate_series(0, 3) d, generate_series(0, 5) q,
	(VALUES (false), (true)) c(on_device),
	LATERAL odp_knn_path((10 ^ q)::bigint, (10 ^ (r + 3))::bigint, (ARRAY[2, 16, 128, 1024])[d + 1],
		on_device => c.on_device);
-- a copy on the device never makes the GPU dearer; float64 never cheaper
SELECT count(*) FILTER (WHERE d.gpu_ms > h.gpu_ms) AS device_dearer,
	count(*) FILTER (WHERE w.cpu_ms < h.cpu_ms OR w.gpu_ms < h.gpu_ms) AS float64_cheaper
FROM generate_series(0, 3) r, generate_series(0, 3) q,
	LATERAL odp_knn_path((10 ^ q)::bigint, (10 ^ (r + 3))::bigint, 64) h,
	LATERAL odp_knn_path((10 ^ q)::bigint, (10 ^ (r + 3))::bigint, 64, on_device => true) d,
	LATERAL odp_knn_path((10 ^ q)::bigint, (10 ^ (r + 3))::bigint, 64, float64 => true) w;
-- a self join has as many queries as rows
SELECT a.cpu_ms IS NOT DISTINCT FROM b.cpu_ms AS same
FROM odp_knn_path(1, 5000, 8, self_join => true) a, odp_knn_path(5000, 5000, 8, self_join => true) b;

-- the terms: every one there and not negative
SELECT count(*) AS terms, bool_and(value >= 0) AS none_negative, count(DISTINCT source) AS sources
FROM odp_knn_cost_model();

-- errors
SELECT * FROM odp_knn_path(NULL, 1000, 16);
SELECT * FROM odp_knn_path(1, 1000, NULL);
SELECT * FROM odp_knn_path(1, 1000, 16, metric => NULL);
SELECT * FROM odp_knn_path(0, 1000, 16);
SELECT * FROM odp_knn_path(1, 1000, 0);
SELECT * FROM odp_knn_path(1, 1000, 16, metric => 'hamming');
DROP EXTENSION odp_gpu;
