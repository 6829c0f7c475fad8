/* odp_gpu--0.6.0--0.7.0.sql: sharded tables computed on their nodes (distributed SolvingSet, k-NN, skyline) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.7.0'" to load this file. \quit

-- The node's side of a distributed call (src/node.c, src/skyline.c).  The
-- calling server of a partitioned table whose partitions are postgres_fdw
-- foreign tables calls these on each node over the user mapping's
-- connection; any other coordinator can drive them the same way.  They
-- read with the caller's rights (the mapped role on a node), so its
-- privileges and row-level security apply.  Payloads are bytea in
-- odp_gpu's own layout (src/dist_wire.h), checked on arrival.
--
-- The SolvingSet state lives in the connection that opened it (not in a
-- transaction), so the step functions are VOLATILE and PARALLEL UNSAFE: a
-- parallel worker has no such state.

CREATE FUNCTION odp_node_protocol()
RETURNS integer
AS 'MODULE_PATHNAME', 'odp_node_protocol'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION odp_node_protocol() IS
'version of the protocol of odp_gpu''s node functions; a coordinator checks that every node speaks its own';

CREATE FUNCTION odp_node_ss_open(
	source text,
	k integer,
	id_column text,
	features text[],
	metric text,
	bounds boolean,
	OUT handle integer,
	OUT rows bigint,
	OUT dims integer)
AS 'MODULE_PATHNAME', 'odp_node_ss_open'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION odp_node_ss_open(text, integer, text, text[], text, boolean) IS
'distributed SolvingSet, node side: reads this node''s shard of the data set and keeps its state for the steps (bounds false: a brute force without pruning); returns the handle, the shard''s rows and its features; the state belongs to this connection until odp_node_ss_close or the connection ends';

CREATE FUNCTION odp_node_ss_first(handle integer, m bigint)
RETURNS bytea
AS 'MODULE_PATHNAME', 'odp_node_ss_first'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION odp_node_ss_first(integer, bigint) IS
'distributed SolvingSet, node side: the shard''s m first candidates (smallest keys of their ids), for the coordinator to merge';

CREATE FUNCTION odp_node_ss_exact(handle integer, candidates bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'odp_node_ss_exact'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION odp_node_ss_exact(integer, bytea) IS
'distributed SolvingSet, node side: each candidate''s k smallest distances to the shard''s other rows; then the shard''s rows take the candidates into their upper bounds';

CREATE FUNCTION odp_node_ss_next(handle integer, prune boolean, min_out double precision, m bigint)
RETURNS bytea
AS 'MODULE_PATHNAME', 'odp_node_ss_next'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION odp_node_ss_next(integer, boolean, double precision, bigint) IS
'distributed SolvingSet, node side: prunes the shard''s rows whose upper bound is below min_out (when prune) and proposes the m rows of largest upper bound';

CREATE FUNCTION odp_node_ss_close(handle integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'odp_node_ss_close'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION odp_node_ss_close(integer) IS
'distributed SolvingSet, node side: frees the state of handle; false when this connection held none';

CREATE FUNCTION odp_node_knn(
	source text,
	queries bytea,
	k integer,
	id_column text,
	features text[],
	metric text,
	exclude_self boolean)
RETURNS bytea
AS 'MODULE_PATHNAME', 'odp_node_knn'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_node_knn(text, bytea, integer, text, text[], text, boolean) IS
'distributed k-NN, node side: for every query, its k nearest rows of this node''s shard (ties by smaller id; exclude_self leaves out the row with the query''s id), for the coordinator to merge';

CREATE FUNCTION odp_node_skyline(
	source text,
	directions text[],
	band integer,
	id_column text,
	features text[])
RETURNS bytea
AS 'MODULE_PATHNAME', 'odp_node_skyline'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_node_skyline(text, text[], integer, text, text[]) IS
'distributed skyline, node side: the shard''s k-skyband (rows fewer than band of its rows dominate) with their values; the skyband of the union of the shards'' skybands is the table''s';
