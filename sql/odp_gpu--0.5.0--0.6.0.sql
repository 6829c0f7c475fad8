/* odp_gpu--0.5.0--0.6.0.sql: row estimates for the planner */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.6.0'" to load this file. \quit

-- The planner's row estimate of each set-returning function: a support
-- function where the arguments give it (n rows of odp_top_outliers, k of
-- odp_knn, the source's rows of odp_outlier_scores, ...; see
-- src/planner_support.c), and a ROWS for the default arguments or where
-- nothing better is known.
CREATE FUNCTION odp_rows_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_rows_support'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION odp_rows_support(internal) IS
'planner support function of odp_gpu''s set-returning functions: their row estimates from constant arguments (n, k, the source table''s rows)';

ALTER FUNCTION odp_outlier_scores(text, integer, text, text[], text)
	ROWS 10000 SUPPORT odp_rows_support;
ALTER FUNCTION odp_top_outliers(text, integer, integer, text, text[], text, text)
	ROWS 10 SUPPORT odp_rows_support;
ALTER FUNCTION odp_solving_set(text, integer, integer, text, text[], text)
	ROWS 4096;
ALTER FUNCTION odp_knn(text, double precision[], integer, text, text[], text)
	ROWS 10 SUPPORT odp_rows_support;
ALTER FUNCTION odp_knn_join(text, text, integer, text, text[], text, text, text[])
	ROWS 10000 SUPPORT odp_rows_support;
ALTER FUNCTION odp_pearson(text, double precision, text, text[], text, text, integer)
	ROWS 1000 SUPPORT odp_rows_support;
ALTER FUNCTION odp_pearson(text, text, double precision, text, text[], text, text, integer, text, text[])
	ROWS 1000 SUPPORT odp_rows_support;
ALTER FUNCTION odp_pearson_top(text, integer, text, text, text[], text, text, integer)
	ROWS 10000 SUPPORT odp_rows_support;
ALTER FUNCTION odp_pearson_top(text, text, integer, text, text, text[], text, text, integer, text, text[])
	ROWS 10000 SUPPORT odp_rows_support;
ALTER FUNCTION odp_skyline(text, text[], integer, text, text[])
	ROWS 100;
ALTER FUNCTION odp_interval_match(text, text, text[], text, text[], text, text)
	ROWS 1000;
ALTER FUNCTION odp_interval_match(text, text[], text, text)
	ROWS 1000;
ALTER FUNCTION odp_gpu_info()
	ROWS 1;
