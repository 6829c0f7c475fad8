/* odp_gpu--0.8.0--0.9.0.sql: pgvector's types as features (odp_knn's query of pgvector's types or text, the aggregates' features "any"); the GPU service's staging area (odp_gpu_staging()); its engine process in odp_gpu_info() */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.9.0'" to load this file. \quit

-- odp_knn's query takes a vector of pgvector (vector, halfvec, sparsevec)
-- as well as any numeric array.  The float8[] function stays as it was
-- (views over it keep working), and two overloads join it, all three the
-- same C function, which reads the argument's type at call time: one for
-- any type that is no array (pgvector's, found in the catalog when called)
-- and one for text, which an untyped literal ('{1,2}') or an untyped
-- parameter resolves to, as PostgreSQL prefers text for an unknown value
-- (read as float8[]).  Typed arrays of every numeric type still resolve to
-- float8[]: the non-array overload does not take them.
CREATE FUNCTION odp_knn(
	source text,
	query anynonarray,
	k integer DEFAULT 10,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean')
RETURNS TABLE (rank integer, id bigint, distance double precision)
AS 'MODULE_PATHNAME', 'odp_knn'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10 SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_knn(text, anynonarray, integer, text, text[], text) IS
'the k rows of source nearest to query, a vector, halfvec or sparsevec of pgvector, nearest first, ties by smaller id (exact; all rows when k exceeds them); metric as for odp_knn(text, double precision[], ...)';

CREATE FUNCTION odp_knn(
	source text,
	query text,
	k integer DEFAULT 10,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean')
RETURNS TABLE (rank integer, id bigint, distance double precision)
AS 'MODULE_PATHNAME', 'odp_knn'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10 SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_knn(text, text, integer, text, text[], text) IS
'the k rows of source nearest to query, an array literal such as ''{1,2,3}'' (an untyped literal or parameter), read as double precision[]; as odp_knn(text, double precision[], ...)';

-- The aggregates take their features as "any" too: one aggregate in place
-- of the real[] and float8[] pair, which a vector column reached only
-- through pgvector's cast to real[] (and a halfvec column not at all).
-- The transition function reads the argument's type: real[], vector,
-- halfvec and sparsevec are read as float4 values, float8[] and the other
-- numeric arrays as the float8[] aggregate read them.  A view over one of
-- these aggregates must be dropped before this update and created again
-- after it.  Markings and final functions as before.
DROP AGGREGATE odp_top_outliers_agg(bigint, real[], integer, integer);
DROP AGGREGATE odp_top_outliers_agg(bigint, double precision[], integer, integer);
DROP FUNCTION odp_top_outliers_agg_transfn(internal, bigint, real[], integer, integer);
DROP FUNCTION odp_top_outliers_agg_transfn(internal, bigint, double precision[], integer, integer);

CREATE FUNCTION odp_top_outliers_agg_transfn(internal, bigint, "any", integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_top_outliers_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_top_outliers_agg_transfn(internal, bigint, "any", integer, integer) IS
'transition function of odp_top_outliers_agg(bigint, "any", integer, integer)';

CREATE AGGREGATE odp_top_outliers_agg(id bigint, features "any", k integer, n integer) (
	SFUNC = odp_top_outliers_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_top_outliers_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_top_outliers_agg(bigint, "any", integer, integer) IS
'the n rows of each group with the highest outlier scores (sum of euclidean distances to the k nearest neighbours in the group), best first, ties by smaller id (exact); features an array of numbers, or a vector, halfvec or sparsevec of pgvector; NULL over no rows';

DROP AGGREGATE odp_skyline_agg(bigint, real[], text[]);
DROP AGGREGATE odp_skyline_agg(bigint, double precision[], text[]);
DROP AGGREGATE odp_skyline_agg(bigint, real[], text[], integer);
DROP AGGREGATE odp_skyline_agg(bigint, double precision[], text[], integer);
DROP FUNCTION odp_skyline_agg_transfn(internal, bigint, real[], text[]);
DROP FUNCTION odp_skyline_agg_transfn(internal, bigint, double precision[], text[]);
DROP FUNCTION odp_skyline_agg_transfn(internal, bigint, real[], text[], integer);
DROP FUNCTION odp_skyline_agg_transfn(internal, bigint, double precision[], text[], integer);

CREATE FUNCTION odp_skyline_agg_transfn(internal, bigint, "any", text[])
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_skyline_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_skyline_agg_transfn(internal, bigint, "any", text[]) IS
'transition function of odp_skyline_agg(bigint, "any", text[])';

CREATE FUNCTION odp_skyline_agg_transfn(internal, bigint, "any", text[], integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_skyline_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_skyline_agg_transfn(internal, bigint, "any", text[], integer) IS
'transition function of odp_skyline_agg(bigint, "any", text[], integer)';

CREATE AGGREGATE odp_skyline_agg(id bigint, features "any", directions text[]) (
	SFUNC = odp_skyline_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_skyline_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_skyline_agg(bigint, "any", text[]) IS
'the ids of the skyline of each group (the rows no other row of the group dominates), ascending, compared in float64; features an array of numbers, or a vector, halfvec or sparsevec of pgvector; directions min or max per element, NULL for all min; NULL over no rows';

CREATE AGGREGATE odp_skyline_agg(id bigint, features "any", directions text[], band integer) (
	SFUNC = odp_skyline_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_skyline_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_skyline_agg(bigint, "any", text[], integer) IS
'the ids of the k-skyband of each group (rows fewer than band rows of the group dominate), ascending, compared in float64; features as for odp_skyline_agg(bigint, "any", text[]); NULL over no rows';

-- The staging area inputs are read into for the GPU service
-- (odp_gpu.staging_size).  VOLATILE: it changes from one call to the next.
CREATE FUNCTION odp_gpu_staging(
	OUT size bigint,
	OUT used bigint,
	OUT largest_free bigint,
	OUT inputs integer,
	OUT misses bigint,
	OUT page_locked boolean,
	OUT huge_pages boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'odp_gpu_staging'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION odp_gpu_staging() IS
'the GPU service''s staging area, where inputs are read for the service (odp_gpu.staging_size): its size, the bytes input arrays hold now, the longest free run, the arrays held, how many times an input buffer found no room since the server started (its array streamed to the service instead), whether the service page-locked it for the GPUs, and whether it is in huge pages (huge_pages not off and the host has them reserved); size 0 where odp_gpu is not preloaded or the area is off';

-- The GPU service runs its engine (CUDA, the request threads) in a process
-- of its own, which the service restarts when it dies: odp_gpu_info()
-- shows it.  New result columns, so the function is replaced (a view over
-- odp_gpu_info() must be dropped before this update and created again
-- after it).  Markings as before.
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
	OUT waiting_for_slot bigint,
	OUT engine_pid integer,
	OUT engine_started_at timestamptz,
	OUT engine_restarts bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'odp_gpu_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
ROWS 1;

COMMENT ON FUNCTION odp_gpu_info() IS
'GPUs odp_gpu computes on (memory in bytes, versions, whether the current settings use each), or one row saying why none is usable; mode ''service'' when the odp_gpu service holds the GPUs (shared_preload_libraries), with its state, each device''s budget, reserved bytes, running and queued requests, the backends waiting for a free slot, and its engine process (the process that holds CUDA and runs the requests: its pid and start, NULL while it restarts, and how many times it was restarted); mode ''backend'' when each backend opens the GPUs itself (those columns NULL)';
