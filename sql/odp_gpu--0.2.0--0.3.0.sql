/* odp_gpu--0.2.0--0.3.0.sql: Pearson and Spearman correlation (odp_pearson, odp_pearson_top) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.3.0'" to load this file. \quit

-- Markings as for the other table functions (see odp_gpu--0.1.0.sql):
-- caller's rights, STABLE, PARALLEL RESTRICTED, not STRICT.  Each row of
-- a source is one series (its feature vector, read as float64 as stored);
-- a constant series has no correlation and gets no row.

CREATE FUNCTION odp_pearson(
	source text,
	min_abs_r double precision DEFAULT 0,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	method text DEFAULT 'pearson',
	nulls text DEFAULT 'error',
	min_periods integer DEFAULT 2)
RETURNS TABLE (id_a bigint, id_b bigint, r double precision)
AS 'MODULE_PATHNAME', 'odp_pearson'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_pearson(text, double precision, text, text[], text, text, integer) IS
'every pair of series of source (id_a < id_b) whose correlation r has |r| >= min_abs_r, by id_a and id_b; method pearson or spearman (Pearson of the ranks, ties averaged); nulls error or pairwise (each pair uses the positions where both series have a value, and needs min_periods of them); computed in float64 from centred series';

CREATE FUNCTION odp_pearson(
	source text,
	other text,
	min_abs_r double precision DEFAULT 0,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	method text DEFAULT 'pearson',
	nulls text DEFAULT 'error',
	min_periods integer DEFAULT 2,
	other_id_column text DEFAULT NULL,
	other_features text[] DEFAULT NULL)
RETURNS TABLE (id_a bigint, id_b bigint, r double precision)
AS 'MODULE_PATHNAME', 'odp_pearson_other'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_pearson(text, text, double precision, text, text[], text, text, integer, text, text[]) IS
'every series of source (id_a) against every series of other (id_b) with |r| >= min_abs_r, by id_a and id_b; the series must have the same length; other_id_column and other_features default to id_column and features';

CREATE FUNCTION odp_pearson_top(
	source text,
	k integer DEFAULT 10,
	sign text DEFAULT 'abs',
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	method text DEFAULT 'pearson',
	nulls text DEFAULT 'error',
	min_periods integer DEFAULT 2)
RETURNS TABLE (id bigint, rank integer, other_id bigint, r double precision)
AS 'MODULE_PATHNAME', 'odp_pearson_top'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_pearson_top(text, integer, text, text, text[], text, text, integer) IS
'for every series of source its k other series with the largest |r| (sign abs), r (positive) or -r (negative), ties by smaller id, by id and rank; fewer where fewer have a correlation';

CREATE FUNCTION odp_pearson_top(
	source text,
	other text,
	k integer DEFAULT 10,
	sign text DEFAULT 'abs',
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	method text DEFAULT 'pearson',
	nulls text DEFAULT 'error',
	min_periods integer DEFAULT 2,
	other_id_column text DEFAULT NULL,
	other_features text[] DEFAULT NULL)
RETURNS TABLE (id bigint, rank integer, other_id bigint, r double precision)
AS 'MODULE_PATHNAME', 'odp_pearson_top_other'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_pearson_top(text, text, integer, text, text, text[], text, text, integer, text, text[]) IS
'for every series of source its k series of other with the largest |r| (sign abs), r (positive) or -r (negative), ties by smaller id, by id and rank; other_id_column and other_features default to id_column and features';
