/* odp_gpu--0.5.0--0.6.0.sql: row estimates for the planner; the solving set as a model (batch_size, odp_outlier_predict) */

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

-- odp_solving_set takes the batch size: a new argument, so the function is
-- replaced (a view over it must be dropped before this update and made
-- again after it).
DROP FUNCTION odp_solving_set(text, integer, integer, text, text[], text);

CREATE FUNCTION odp_solving_set(
	source text,
	k integer DEFAULT 50,
	n integer DEFAULT 10,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean',
	batch_size integer DEFAULT NULL)
RETURNS TABLE (id bigint, score double precision)
AS 'MODULE_PATHNAME', 'odp_solving_set'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 4096;

COMMENT ON FUNCTION odp_solving_set(text, integer, integer, text, text[], text, integer) IS
'the solving set SolvingSet builds for the top n outliers of source (the rows whose exact outlier score it computed, in id order, with those scores): it contains the top-n outliers, and every other row weighs at most the n-th best score against it, so odp_outlier_predict can judge new rows against it without reading the whole source; batch_size (default: what odp_top_outliers uses, rows / 64 within 4,096 .. 16,384) is the candidates per batch: a smaller one gives a smaller set in more iterations';

CREATE FUNCTION odp_outlier_predict(
	solving_set text,
	new_rows text,
	k integer DEFAULT 50,
	threshold double precision DEFAULT NULL,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean',
	new_id_column text DEFAULT NULL,
	new_features text[] DEFAULT NULL)
RETURNS TABLE (id bigint, weight double precision, is_outlier boolean)
AS 'MODULE_PATHNAME', 'odp_outlier_predict'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10000 SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_outlier_predict(text, text, integer, double precision, text, text[], text, text, text[]) IS
'for every row of new_rows, by id, its weight against the rows of solving_set (the sum of the distances to its k nearest rows there, as outlier scores sum them) and whether it reaches threshold, normally the n-th best score w* of the data the set was built from: a row below w* cannot be among that data''s top n, one at or above it is predicted an outlier (NULL threshold: NULL); new_id_column and new_features default to id_column and features';
