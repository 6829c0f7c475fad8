/* odp_gpu--0.1.0--0.2.0.sql: k nearest neighbours (odp_knn, odp_knn_join) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.2.0'" to load this file. \quit

-- Markings as for the outlier functions (see odp_gpu--0.1.0.sql): caller's
-- rights, STABLE, PARALLEL RESTRICTED, not STRICT.

CREATE FUNCTION odp_knn(
	source text,
	query double precision[],
	k integer DEFAULT 10,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean')
RETURNS TABLE (rank integer, id bigint, distance double precision)
AS 'MODULE_PATHNAME', 'odp_knn'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_knn(text, double precision[], integer, text, text[], text) IS
'the k rows of source nearest to query, nearest first, ties by smaller id (exact; all rows when k exceeds them); metric euclidean, sqeuclidean, manhattan, chebyshev, cosine, or inner_product (largest first, distance = the inner product)';

CREATE FUNCTION odp_knn_join(
	queries text,
	source text,
	k integer DEFAULT 10,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	metric text DEFAULT 'euclidean',
	query_id_column text DEFAULT NULL,
	query_features text[] DEFAULT NULL)
RETURNS TABLE (query_id bigint, rank integer, id bigint, distance double precision)
AS 'MODULE_PATHNAME', 'odp_knn_join'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_knn_join(text, text, integer, text, text[], text, text, text[]) IS
'for every row of queries, its k nearest rows of source, nearest first, ties by smaller id (exact); when queries and source name the same data a row is not its own neighbour; query_id_column and query_features default to id_column and features';
