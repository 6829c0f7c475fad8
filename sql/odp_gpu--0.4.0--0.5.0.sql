/* odp_gpu--0.4.0--0.5.0.sql: region matching (odp_interval_match, odp_interval_match_count) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.5.0'" to load this file. \quit

-- Markings as for the other table functions (see odp_gpu--0.1.0.sql):
-- caller's rights, STABLE, PARALLEL RESTRICTED, not STRICT (a NULL source
-- or bounds is an error; NULL dims and id columns mean the defaults).
-- Regions come from range columns (one dimension each), a box column
-- (two) or a cube column (its dimensions), or pairs of lower and upper
-- columns; two regions overlap when they overlap in every dimension, as
-- && says on those types.

CREATE FUNCTION odp_interval_match(
	subscriptions text,
	updates text,
	dims text[] DEFAULT NULL,
	id_column text DEFAULT NULL,
	other_dims text[] DEFAULT NULL,
	other_id_column text DEFAULT NULL,
	bounds text DEFAULT '[]')
RETURNS TABLE (subscription_id bigint, update_id bigint)
AS 'MODULE_PATHNAME', 'odp_interval_match'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_interval_match(text, text, text[], text, text[], text, text) IS
'every pair of a region of subscriptions and a region of updates that overlap in every dimension, by subscription_id and update_id; dims names the region columns (range columns, a box or a cube column, or pairs of lower and upper columns; default: every range column, else the one box or cube column), other_dims and other_id_column those of updates (default: dims and id_column); bounds (default [], both included) the inclusivity of pairs'' bounds; overlap is && on those types, exact in each type''s domain';

CREATE FUNCTION odp_interval_match(
	regions text,
	dims text[] DEFAULT NULL,
	id_column text DEFAULT NULL,
	bounds text DEFAULT '[]')
RETURNS TABLE (id_a bigint, id_b bigint)
AS 'MODULE_PATHNAME', 'odp_interval_match_self'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_interval_match(text, text[], text, text) IS
'every pair of regions of one source that overlap in every dimension, once (id_a < id_b), by id_a and id_b; dims, id_column and bounds as for two sources (pass dims by name: a second positional text argument is the updates source)';

CREATE FUNCTION odp_interval_match_count(
	subscriptions text,
	updates text,
	dims text[] DEFAULT NULL,
	id_column text DEFAULT NULL,
	other_dims text[] DEFAULT NULL,
	other_id_column text DEFAULT NULL,
	bounds text DEFAULT '[]')
RETURNS bigint
AS 'MODULE_PATHNAME', 'odp_interval_match_count'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_interval_match_count(text, text, text[], text, text[], text, text) IS
'the number of rows odp_interval_match(subscriptions, updates, ...) returns, counted without producing them';

CREATE FUNCTION odp_interval_match_count(
	regions text,
	dims text[] DEFAULT NULL,
	id_column text DEFAULT NULL,
	bounds text DEFAULT '[]')
RETURNS bigint
AS 'MODULE_PATHNAME', 'odp_interval_match_count_self'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_interval_match_count(text, text[], text, text) IS
'the number of rows odp_interval_match(regions, ...) returns, counted without producing them';
