/* odp_gpu--0.3.0--0.4.0.sql: skyline and k-skyband (odp_skyline, odp_skyline_agg) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.4.0'" to load this file. \quit

-- Markings as for the other table functions (see odp_gpu--0.1.0.sql):
-- caller's rights, STABLE, PARALLEL RESTRICTED, not STRICT (a NULL
-- argument is an error, except directions, whose NULL means all 'min').
-- Features are compared as the float64 they are stored as.

CREATE FUNCTION odp_skyline(
	source text,
	directions text[] DEFAULT NULL,
	band integer DEFAULT 1,
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL)
RETURNS TABLE (id bigint, dominated_by integer)
AS 'MODULE_PATHNAME', 'odp_skyline'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_skyline(text, text[], integer, text, text[]) IS
'the rows of source that fewer than band other rows dominate (band 1: the skyline, no row dominates them), by id, with the number of rows that dominate each; directions has one entry per feature (per element of an array feature), min or max, default all min; a row dominates another when it is at least as good in every feature and better in one; equal rows do not dominate each other; exact in float64';

-- Aggregates: like odp_top_outliers_agg, no combine function (not
-- PARALLEL SAFE) and a final function that orders the state in place.
CREATE FUNCTION odp_skyline_agg_transfn(internal, bigint, real[], text[])
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_skyline_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_skyline_agg_transfn(internal, bigint, real[], text[]) IS
'transition function of odp_skyline_agg(bigint, real[], text[])';

CREATE FUNCTION odp_skyline_agg_transfn(internal, bigint, double precision[], text[])
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_skyline_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_skyline_agg_transfn(internal, bigint, double precision[], text[]) IS
'transition function of odp_skyline_agg(bigint, double precision[], text[])';

CREATE FUNCTION odp_skyline_agg_transfn(internal, bigint, real[], text[], integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_skyline_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_skyline_agg_transfn(internal, bigint, real[], text[], integer) IS
'transition function of odp_skyline_agg(bigint, real[], text[], integer)';

CREATE FUNCTION odp_skyline_agg_transfn(internal, bigint, double precision[], text[], integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'odp_skyline_agg_transfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_skyline_agg_transfn(internal, bigint, double precision[], text[], integer) IS
'transition function of odp_skyline_agg(bigint, double precision[], text[], integer)';

CREATE FUNCTION odp_skyline_agg_finalfn(internal)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'odp_skyline_agg_finalfn'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_skyline_agg_finalfn(internal) IS
'final function of odp_skyline_agg';

CREATE AGGREGATE odp_skyline_agg(id bigint, features real[], directions text[]) (
	SFUNC = odp_skyline_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_skyline_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_skyline_agg(bigint, real[], text[]) IS
'the ids of the skyline of each group (the rows no other row of the group dominates), ascending; directions min or max per element, NULL for all min; NULL over no rows';

CREATE AGGREGATE odp_skyline_agg(id bigint, features double precision[], directions text[]) (
	SFUNC = odp_skyline_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_skyline_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_skyline_agg(bigint, double precision[], text[]) IS
'the ids of the skyline of each group (the rows no other row of the group dominates), ascending, compared in float64; directions min or max per element, NULL for all min; NULL over no rows';

CREATE AGGREGATE odp_skyline_agg(id bigint, features real[], directions text[], band integer) (
	SFUNC = odp_skyline_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_skyline_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_skyline_agg(bigint, real[], text[], integer) IS
'the ids of the k-skyband of each group (rows fewer than band rows of the group dominate), ascending; NULL over no rows';

CREATE AGGREGATE odp_skyline_agg(id bigint, features double precision[], directions text[], band integer) (
	SFUNC = odp_skyline_agg_transfn,
	STYPE = internal,
	FINALFUNC = odp_skyline_agg_finalfn,
	FINALFUNC_MODIFY = READ_WRITE,
	PARALLEL = RESTRICTED
);

COMMENT ON AGGREGATE odp_skyline_agg(bigint, double precision[], text[], integer) IS
'the ids of the k-skyband of each group (rows fewer than band rows of the group dominate), ascending, compared in float64; NULL over no rows';
