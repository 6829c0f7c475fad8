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
	metric text DEFAULT 'euclidean')
RETURNS TABLE (rank integer, id bigint, score double precision)
AS 'MODULE_PATHNAME', 'odp_top_outliers'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_top_outliers(text, integer, integer, text, text[], text) IS
'the n rows of source with the highest outlier scores (sum of distances to the k nearest neighbours), best first, ties by smaller id (exact)';

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
