/* odp_gpu--0.1.0.sql: install script of odp_gpu 0.1.0 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION odp_gpu" to load this file. \quit

-- The table functions read their source with the caller's rights (never
-- SECURITY DEFINER), so they need no REVOKE: a caller sees only rows and
-- columns it may SELECT, with row-level security applied.
-- STABLE: results depend on the snapshot, never on anything else.
-- PARALLEL RESTRICTED: they read tables by name (temporary ones too) and
-- may drive a GPU from the leader only.
-- Not STRICT: NULL options mean "the default" and other NULLs get a clear
-- error instead of a silent empty result.

CREATE FUNCTION odp_outlier_scores(
	source text,
	k integer DEFAULT 50,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean')
RETURNS TABLE (id bigint, score double precision)
AS 'MODULE_PATHNAME', 'odp_outlier_scores'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_outlier_scores(text, integer, text, text[], text) IS
'distance-based outlier score of every row of source: the sum of the distances to its k nearest neighbours, itself excluded (exact)';

CREATE FUNCTION odp_top_outliers(
	source text,
	k integer DEFAULT 50,
	n integer DEFAULT 10,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean',
	method text DEFAULT 'auto')
RETURNS TABLE (rank integer, id bigint, score double precision)
AS 'MODULE_PATHNAME', 'odp_top_outliers'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_top_outliers(text, integer, integer, text, text[], text, text) IS
'the n rows of source with the highest outlier scores (sum of distances to the k nearest neighbours), best first, ties by smaller id (exact); method auto, bruteforce or solvingset changes only the speed';

CREATE FUNCTION odp_solving_set(
	source text,
	k integer DEFAULT 50,
	n integer DEFAULT 10,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean')
RETURNS TABLE (id bigint, score double precision)
AS 'MODULE_PATHNAME', 'odp_solving_set'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_solving_set(text, integer, integer, text, text[], text) IS
'the solving set SolvingSet builds for the top n outliers of source (the rows whose exact outlier score it computed, in id order, with those scores): it contains the top-n outliers, and a new point can be predicted an outlier or an inlier by comparing the sum of its distances to its k nearest neighbours in the set with the n-th best score, without reading the whole source';

-- One top-n outlier of an aggregate's result.
CREATE TYPE odp_outlier AS (rank integer, id bigint, score double precision);

COMMENT ON TYPE odp_outlier IS
'one top-n outlier: its rank (1 = highest score), its id and its outlier score';

-- The aggregates: not STRICT (a null id or vector is an error, as in the
-- table functions), no combine function (so not PARALLEL SAFE), and the
-- final function orders the state in place (FINALFUNC_MODIFY = READ_WRITE).
-- VOLATILE support functions: they keep state between calls.
CREATE FUNCTION odp_top_outliers_agg_transfn(internal, bigint, real[], integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_top_outliers_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_top_outliers_agg_transfn(internal, bigint, real[], integer, integer) IS
'transition function of odp_top_outliers_agg(bigint, real[], integer, integer)';

CREATE FUNCTION odp_top_outliers_agg_transfn(internal, bigint, double precision[], integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_top_outliers_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_top_outliers_agg_transfn(internal, bigint, double precision[], integer, integer) IS
'transition function of odp_top_outliers_agg(bigint, double precision[], integer, integer)';

CREATE FUNCTION odp_top_outliers_agg_finalfn(internal)
RETURNS odp_outlier[]
AS 'MODULE_PATHNAME', 'odp_top_outliers_agg_finalfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_top_outliers_agg_finalfn(internal) IS
'final function of odp_top_outliers_agg';

CREATE AGGREGATE odp_top_outliers_agg(id bigint, features real[], k integer, n integer) (
	SFUNC = odp_top_outliers_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_top_outliers_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_top_outliers_agg(bigint, real[], integer, integer) IS
'the n rows of each group with the highest outlier scores (sum of euclidean distances to the k nearest neighbours in the group), best first, ties by smaller id (exact); NULL over no rows';

CREATE AGGREGATE odp_top_outliers_agg(id bigint, features double precision[], k integer, n integer) (
	SFUNC = odp_top_outliers_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_top_outliers_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_top_outliers_agg(bigint, double precision[], integer, integer) IS
'the n rows of each group with the highest outlier scores (sum of euclidean distances to the k nearest neighbours in the group), best first, ties by smaller id (exact); NULL over no rows';

-- VOLATILE: free memory and device state change between calls.
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
	OUT detail text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'odp_gpu_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_gpu_info() IS
'GPUs visible to odp_gpu (memory in bytes, versions, whether the current settings use each), or one row saying why none is usable';
