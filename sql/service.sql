-- The GPU service's SQL side on a server that does not preload odp_gpu, as
-- the regress run is: each backend opens the GPUs itself (mode backend),
-- the service holds no request, its settings have their defaults.
CREATE EXTENSION odp_gpu;
SELECT DISTINCT mode, service_state, budget, reserved, running, queued, waiting_for_slot
FROM odp_gpu_info();
SELECT a.name, format_type(a.type, NULL) AS type
FROM pg_proc p, unnest(p.proargnames, p.proallargtypes) WITH ORDINALITY a(name, type, n)
WHERE p.oid = 'odp_gpu_info()'::regprocedure ORDER BY a.n;

-- the activity view: no rows without the service
\d odp_gpu_activity
SELECT * FROM odp_gpu_activity;
SELECT count(*) FROM odp_gpu_activity();

-- the service's settings: the number of slots and the rings' size are
-- fixed at server start, the path it computes on by the configuration
SHOW odp_gpu.service_engine;
SHOW odp_gpu.service_slots;
SHOW odp_gpu.service_ring_size;
SET odp_gpu.service_slots = 8;
SET odp_gpu.service_ring_size = '1MB';
SET odp_gpu.service_engine = cpu;

-- the engine process's watchdog is set in the server's configuration;
-- the fault test (superuser) poisons a context or hangs a call, and "on"
-- still means poison
SHOW odp_gpu.engine_timeout;
SET odp_gpu.engine_timeout = '1min';
ALTER SYSTEM SET odp_gpu.engine_timeout = -1;
ALTER SYSTEM SET odp_gpu.engine_timeout = '2d';
SET odp_gpu.service_fault_test = on;
SHOW odp_gpu.service_fault_test;
SET odp_gpu.service_fault_test = hang;
SHOW odp_gpu.service_fault_test;
SET odp_gpu.service_fault_test = crash;
RESET odp_gpu.service_fault_test;

-- the staging area inputs are read into for the service: none without
-- it (size 0); its size is fixed at server start
SELECT * FROM odp_gpu_staging();
SHOW odp_gpu.staging_size;
SET odp_gpu.staging_size = '2GB';

-- everyone may read both, as pg_stat_activity
CREATE ROLE regress_odp_watcher;
SET ROLE regress_odp_watcher;
SELECT count(*) FROM odp_gpu_activity;
SELECT count(*) > 0 AS has_rows, bool_and(mode = 'backend') AS backend FROM odp_gpu_info();
RESET ROLE;
DROP ROLE regress_odp_watcher;

SELECT obj_description('odp_gpu_activity'::regclass, 'pg_class') IS NOT NULL AS view_comment,
	   obj_description('odp_gpu_activity()'::regprocedure, 'pg_proc') IS NOT NULL AS function_comment,
	   obj_description('odp_gpu_info()'::regprocedure, 'pg_proc') IS NOT NULL AS info_comment,
	   obj_description('odp_gpu_staging()'::regprocedure, 'pg_proc') IS NOT NULL AS staging_comment;
DROP EXTENSION odp_gpu;
