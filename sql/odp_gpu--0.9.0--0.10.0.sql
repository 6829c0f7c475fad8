/* odp_gpu--0.9.0--0.10.0.sql: the GPU service's staging area (odp_gpu_staging()) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.10.0'" to load this file. \quit

-- The staging area inputs are read into for the GPU service
-- (odp_gpu.staging_size).  VOLATILE: it changes from one call to the next.
CREATE FUNCTION odp_gpu_staging(
	OUT size bigint,
	OUT used bigint,
	OUT largest_free bigint,
	OUT inputs integer,
	OUT misses bigint,
	OUT page_locked boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'odp_gpu_staging'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION odp_gpu_staging() IS
'the GPU service''s staging area, where inputs are read for the service (odp_gpu.staging_size): its size, the bytes input arrays hold now, the longest free run, the arrays held, how many arrays found no room since the server started (they streamed to the service instead), and whether the service page-locked it for the GPUs; size 0 where odp_gpu is not preloaded or the area is off';
