/* odp_gpu--0.7.0--0.8.0.sql: the GPU service (odp_gpu_activity; odp_gpu_info() reports its devices) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.8.0'" to load this file. \quit

-- odp_gpu_info() gains the mode (the GPU service or this backend) and the
-- service's state, budgets and queues: new result columns, so the
-- function is replaced (a view over odp_gpu_info() must be dropped before
-- this update and created again after it).  Markings as before: VOLATILE
-- (free memory and the service's queues change between calls).
DROP FUNCTION odp_gpu_info();

CREATE FUNCTION odp_gpu_info(
	OUT device integer,
	OUT name text,
	OUT compute_capability text,
	OUT total_memory bigint,
	OUT free_memory bigint,
	OUT multiprocessors integer,
	OUT driver_version text,
	OUT runtime_version text,
	OUT built_with_cuda text,
	OUT usable boolean,
	OUT selected boolean,
	OUT detail text,
	OUT mode text,
	OUT service_state text,
	OUT budget bigint,
	OUT reserved bigint,
	OUT running integer,
	OUT queued integer,
	OUT waiting_for_slot bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'odp_gpu_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
ROWS 1;

COMMENT ON FUNCTION odp_gpu_info() IS
'GPUs odp_gpu computes on (memory in bytes, versions, whether the current settings use each), or one row saying why none is usable; mode ''service'' when the odp_gpu service holds the GPUs (shared_preload_libraries), with its state, each device''s budget, reserved bytes, running and queued requests, and the backends waiting for a free slot; mode ''backend'' when each backend opens the GPUs itself (those columns NULL)';

-- The requests the GPU service holds.  VOLATILE: it changes from one
-- moment to the next.  PARALLEL RESTRICTED, as pg_stat_get_activity: one
-- process reads one moment of the shared state.  Everyone may read it, as
-- pg_stat_activity: a request's function and rows are NULL for users
-- without the privileges of its session's user or of pg_read_all_stats.
CREATE FUNCTION odp_gpu_activity(
	OUT pid integer,
	OUT database name,
	OUT usename name,
	OUT function text,
	OUT device integer,
	OUT state text,
	OUT rows bigint,
	OUT gpu_memory bigint,
	OUT queued_ms double precision,
	OUT running_ms double precision,
	OUT progress_done bigint,
	OUT progress_total bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'odp_gpu_activity'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
ROWS 10;

COMMENT ON FUNCTION odp_gpu_activity() IS
'requests the odp_gpu service holds, one row each (no rows without the service): the backend''s pid, database and user, the function, the first device it runs on (NULL while queued), its state (queued, running, sending), the rows of its input, the GPU memory reserved for it (bytes), the milliseconds it waited and has run, and its progress (engine steps done; total when known); function and rows are NULL for other users'' requests unless one has their privileges or pg_read_all_stats';

CREATE VIEW odp_gpu_activity AS
	SELECT * FROM odp_gpu_activity();

COMMENT ON VIEW odp_gpu_activity IS
'requests the odp_gpu service holds, one row each: see the function odp_gpu_activity()';

GRANT SELECT ON odp_gpu_activity TO PUBLIC;
