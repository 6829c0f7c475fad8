/* odp_gpu--0.9.0--0.10.0.sql: regclass sources (every function that reads a table takes its tables as regclass as well as by name or query); the table cache (the view odp_gpu_table_cache, odp_gpu_table_cache_drop()) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION odp_gpu UPDATE TO '0.10.0'" to load this file. \quit

-- Every function that reads a table gains an overload that takes the
-- table (the source, the other source of a pair or a match, the queries of
-- a k-NN join, a solving set and the new rows of a prediction) as
-- regclass, as pg_relation_size and pg_prewarm do.  The same C function
-- serves both forms: it reads the argument's declared type, and a relation
-- becomes its schema-qualified name, read as the text form reads a name,
-- so results, errors, privileges and options are the same.  Written in a
-- view, a materialized view or a function, 'pts'::regclass is stored as
-- the relation's OID: the object depends on the table (DROP TABLE refuses
-- without CASCADE), follows ALTER TABLE ... RENAME and SET SCHEMA, and
-- pg_dump writes it schema-qualified, so pg_restore finds it with its
-- empty search_path.  A string literal still resolves to the text form
-- (PostgreSQL prefers text for an unknown literal), so existing calls and
-- views are unchanged.  Markings, defaults, row estimates and support
-- functions are the text form's.

CREATE FUNCTION odp_interval_match(
	regions regclass,
	dims text[] DEFAULT NULL::text[],
	id_column text DEFAULT NULL::text,
	bounds text DEFAULT '[]'::text)
RETURNS TABLE (id_a bigint, id_b bigint)
AS 'MODULE_PATHNAME', 'odp_interval_match_self'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_interval_match(regclass, text[], text, text) IS
'the regclass form of odp_interval_match(text, text[], text, text): the same rows, errors, privileges and options, with regions a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_interval_match(
	subscriptions regclass,
	updates regclass,
	dims text[] DEFAULT NULL::text[],
	id_column text DEFAULT NULL::text,
	other_dims text[] DEFAULT NULL::text[],
	other_id_column text DEFAULT NULL::text,
	bounds text DEFAULT '[]'::text)
RETURNS TABLE (subscription_id bigint, update_id bigint)
AS 'MODULE_PATHNAME', 'odp_interval_match'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_interval_match(regclass, regclass, text[], text, text[], text, text) IS
'the regclass form of odp_interval_match(text, text, text[], text, text[], text, text): the same rows, errors, privileges and options, with subscriptions and updates relations (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_interval_match_count(
	regions regclass,
	dims text[] DEFAULT NULL::text[],
	id_column text DEFAULT NULL::text,
	bounds text DEFAULT '[]'::text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'odp_interval_match_count_self'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_interval_match_count(regclass, text[], text, text) IS
'the regclass form of odp_interval_match_count(text, text[], text, text): the same rows, errors, privileges and options, with regions a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_interval_match_count(
	subscriptions regclass,
	updates regclass,
	dims text[] DEFAULT NULL::text[],
	id_column text DEFAULT NULL::text,
	other_dims text[] DEFAULT NULL::text[],
	other_id_column text DEFAULT NULL::text,
	bounds text DEFAULT '[]'::text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'odp_interval_match_count'
LANGUAGE C STABLE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_interval_match_count(regclass, regclass, text[], text, text[], text, text) IS
'the regclass form of odp_interval_match_count(text, text, text[], text, text[], text, text): the same rows, errors, privileges and options, with subscriptions and updates relations (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_knn(
	source regclass,
	query double precision[],
	k integer DEFAULT 10,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	metric text DEFAULT 'euclidean'::text)
RETURNS TABLE (rank integer, id bigint, distance double precision)
AS 'MODULE_PATHNAME', 'odp_knn'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_knn(regclass, double precision[], integer, text, text[], text) IS
'the regclass form of odp_knn(text, double precision[], integer, text, text[], text): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_knn(
	source regclass,
	query anynonarray,
	k integer DEFAULT 10,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	metric text DEFAULT 'euclidean'::text)
RETURNS TABLE (rank integer, id bigint, distance double precision)
AS 'MODULE_PATHNAME', 'odp_knn'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_knn(regclass, anynonarray, integer, text, text[], text) IS
'the regclass form of odp_knn(text, anynonarray, integer, text, text[], text): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_knn(
	source regclass,
	query text,
	k integer DEFAULT 10,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	metric text DEFAULT 'euclidean'::text)
RETURNS TABLE (rank integer, id bigint, distance double precision)
AS 'MODULE_PATHNAME', 'odp_knn'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_knn(regclass, text, integer, text, text[], text) IS
'the regclass form of odp_knn(text, text, integer, text, text[], text): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_knn_join(
	queries regclass,
	source regclass,
	k integer DEFAULT 10,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	metric text DEFAULT 'euclidean'::text,
	query_id_column text DEFAULT NULL::text,
	query_features text[] DEFAULT NULL::text[])
RETURNS TABLE (query_id bigint, rank integer, id bigint, distance double precision)
AS 'MODULE_PATHNAME', 'odp_knn_join'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10000
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_knn_join(regclass, regclass, integer, text, text[], text, text, text[]) IS
'the regclass form of odp_knn_join(text, text, integer, text, text[], text, text, text[]): the same rows, errors, privileges and options, with queries and source relations (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_outlier_predict(
	solving_set regclass,
	new_rows regclass,
	k integer DEFAULT 50,
	threshold double precision DEFAULT NULL::double precision,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	metric text DEFAULT 'euclidean'::text,
	new_id_column text DEFAULT NULL::text,
	new_features text[] DEFAULT NULL::text[])
RETURNS TABLE (id bigint, weight double precision, is_outlier boolean)
AS 'MODULE_PATHNAME', 'odp_outlier_predict'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10000
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_outlier_predict(regclass, regclass, integer, double precision, text, text[], text, text, text[]) IS
'the regclass form of odp_outlier_predict(text, text, integer, double precision, text, text[], text, text, text[]): the same rows, errors, privileges and options, with solving_set and new_rows relations (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_outlier_scores(
	source regclass,
	k integer DEFAULT 50,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	metric text DEFAULT 'euclidean'::text)
RETURNS TABLE (id bigint, score double precision)
AS 'MODULE_PATHNAME', 'odp_outlier_scores'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10000
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_outlier_scores(regclass, integer, text, text[], text) IS
'the regclass form of odp_outlier_scores(text, integer, text, text[], text): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_pearson(
	source regclass,
	min_abs_r double precision DEFAULT 0,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	method text DEFAULT 'pearson'::text,
	nulls text DEFAULT 'error'::text,
	min_periods integer DEFAULT 2)
RETURNS TABLE (id_a bigint, id_b bigint, r double precision)
AS 'MODULE_PATHNAME', 'odp_pearson'
LANGUAGE C STABLE PARALLEL RESTRICTED
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_pearson(regclass, double precision, text, text[], text, text, integer) IS
'the regclass form of odp_pearson(text, double precision, text, text[], text, text, integer): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_pearson(
	source regclass,
	other regclass,
	min_abs_r double precision DEFAULT 0,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	method text DEFAULT 'pearson'::text,
	nulls text DEFAULT 'error'::text,
	min_periods integer DEFAULT 2,
	other_id_column text DEFAULT NULL::text,
	other_features text[] DEFAULT NULL::text[])
RETURNS TABLE (id_a bigint, id_b bigint, r double precision)
AS 'MODULE_PATHNAME', 'odp_pearson_other'
LANGUAGE C STABLE PARALLEL RESTRICTED
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_pearson(regclass, regclass, double precision, text, text[], text, text, integer, text, text[]) IS
'the regclass form of odp_pearson(text, text, double precision, text, text[], text, text, integer, text, text[]): the same rows, errors, privileges and options, with source and other relations (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_pearson_top(
	source regclass,
	k integer DEFAULT 10,
	sign text DEFAULT 'abs'::text,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	method text DEFAULT 'pearson'::text,
	nulls text DEFAULT 'error'::text,
	min_periods integer DEFAULT 2)
RETURNS TABLE (id bigint, rank integer, other_id bigint, r double precision)
AS 'MODULE_PATHNAME', 'odp_pearson_top'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10000
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_pearson_top(regclass, integer, text, text, text[], text, text, integer) IS
'the regclass form of odp_pearson_top(text, integer, text, text, text[], text, text, integer): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_pearson_top(
	source regclass,
	other regclass,
	k integer DEFAULT 10,
	sign text DEFAULT 'abs'::text,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	method text DEFAULT 'pearson'::text,
	nulls text DEFAULT 'error'::text,
	min_periods integer DEFAULT 2,
	other_id_column text DEFAULT NULL::text,
	other_features text[] DEFAULT NULL::text[])
RETURNS TABLE (id bigint, rank integer, other_id bigint, r double precision)
AS 'MODULE_PATHNAME', 'odp_pearson_top_other'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10000
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_pearson_top(regclass, regclass, integer, text, text, text[], text, text, integer, text, text[]) IS
'the regclass form of odp_pearson_top(text, text, integer, text, text, text[], text, text, integer, text, text[]): the same rows, errors, privileges and options, with source and other relations (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_skyline(
	source regclass,
	directions text[] DEFAULT NULL::text[],
	band integer DEFAULT 1,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[])
RETURNS TABLE (id bigint, dominated_by integer)
AS 'MODULE_PATHNAME', 'odp_skyline'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100;

COMMENT ON FUNCTION odp_skyline(regclass, text[], integer, text, text[]) IS
'the regclass form of odp_skyline(text, text[], integer, text, text[]): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_solving_set(
	source regclass,
	k integer DEFAULT 50,
	n integer DEFAULT 10,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	metric text DEFAULT 'euclidean'::text,
	batch_size integer DEFAULT NULL::integer)
RETURNS TABLE (id bigint, score double precision)
AS 'MODULE_PATHNAME', 'odp_solving_set'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 4096;

COMMENT ON FUNCTION odp_solving_set(regclass, integer, integer, text, text[], text, integer) IS
'the regclass form of odp_solving_set(text, integer, integer, text, text[], text, integer): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

CREATE FUNCTION odp_top_outliers(
	source regclass,
	k integer DEFAULT 50,
	n integer DEFAULT 10,
	id_column text DEFAULT NULL::text,
	features text[] DEFAULT NULL::text[],
	metric text DEFAULT 'euclidean'::text,
	method text DEFAULT 'auto'::text)
RETURNS TABLE (rank integer, id bigint, score double precision)
AS 'MODULE_PATHNAME', 'odp_top_outliers'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 10
SUPPORT odp_rows_support;

COMMENT ON FUNCTION odp_top_outliers(regclass, integer, integer, text, text[], text, text) IS
'the regclass form of odp_top_outliers(text, integer, integer, text, text[], text, text): the same rows, errors, privileges and options, with source a relation (''pts''::regclass) rather than a name or a query; a view, materialized view or function written with it depends on the relation (DROP TABLE refuses without CASCADE; ALTER TABLE ... RENAME and SET SCHEMA are followed) and survives pg_dump and pg_restore';

-- The table cache (decoded inputs of unchanged tables kept by the GPU
-- service between calls).

-- The entries of the table cache.  VOLATILE: entries come and go from one
-- moment to the next.  PARALLEL RESTRICTED: one process reads one moment
-- of the shared state.  Everyone may read it; it shows only entries of
-- this database's relations that the caller may read, as the read itself
-- would require.
CREATE FUNCTION odp_gpu_table_cache(
	OUT database name,
	OUT relation regclass,
	OUT columns text[],
	OUT rows bigint,
	OUT bytes bigint,
	OUT device integer,
	OUT hits bigint,
	OUT built_at timestamptz,
	OUT last_used_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'odp_gpu_table_cache'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
ROWS 10;

COMMENT ON FUNCTION odp_gpu_table_cache() IS
'entries of the odp_gpu table cache (none without the GPU service), one row each, for relations of this database the caller may read: the database, the relation, the columns read (the id column first), the rows, the bytes held in the staging area, the device holding a copy (NULL: host memory only), the calls that used the entry, when it was made and when it was last used';

CREATE VIEW odp_gpu_table_cache AS
	SELECT * FROM odp_gpu_table_cache();

COMMENT ON VIEW odp_gpu_table_cache IS
'entries of the odp_gpu table cache, one row each: see the function odp_gpu_table_cache()';

GRANT SELECT ON odp_gpu_table_cache TO PUBLIC;

-- Drops entries: of a relation, whose owner the caller must be (or a
-- superuser); with NULL, of every relation of this database the caller
-- owns, or every entry of the server for a superuser.  Returns how many.
-- Not STRICT: NULL means all.  VOLATILE and PARALLEL UNSAFE: it changes
-- shared state.
CREATE FUNCTION odp_gpu_table_cache_drop(relation regclass DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'odp_gpu_table_cache_drop'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION odp_gpu_table_cache_drop(regclass) IS
'drops the odp_gpu table cache''s entries of a relation (its owner or a superuser only), or with NULL those of every relation of this database the caller owns (a superuser: every entry); returns how many; an entry in use goes when its calls end, and no call finds it again';

-- Reads a table into the cache ahead of the first call that needs it, as
-- that call would read it (form: 'distance' for outliers and k-NN,
-- 'float64' for correlations and the skyline, 'regions' for the
-- matching).  Not STRICT: a NULL argument gets the error every function
-- gives.  VOLATILE and PARALLEL UNSAFE: it changes shared state.
CREATE FUNCTION odp_gpu_table_cache_load(
	relation regclass,
	form text DEFAULT 'distance',
	id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	bounds text DEFAULT '[]')
RETURNS bigint
AS 'MODULE_PATHNAME', 'odp_gpu_table_cache_load'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION odp_gpu_table_cache_load(regclass, text, text, text[], text) IS
'reads a table into the odp_gpu table cache ahead of the first call that needs it, as that call reads it: form distance (outliers, k-NN), float64 (correlations, skyline) or regions (matching; features are its dims, bounds its bounds), id_column and features as the call names them; returns the rows kept; an error (55000) says why where the table cannot be kept (not vacuumed, unlogged, no GPU service, ...)';

-- The path a k-NN call of a shape takes under the current settings, as
-- odp_knn and odp_knn_join decide it (odp_gpu.device = auto: by the cost
-- model), and, under auto with a usable GPU, both paths' estimates.  Not
-- STRICT: a NULL argument is an error (22004).  VOLATILE: the terms and
-- the GPU's state change; PARALLEL RESTRICTED: it may probe the GPU.
CREATE FUNCTION odp_knn_path(
	queries bigint,
	rows bigint,
	dims integer,
	metric text DEFAULT 'euclidean',
	float64 boolean DEFAULT false,
	on_device boolean DEFAULT false,
	self_join boolean DEFAULT false,
	OUT path text,
	OUT chosen_by text,
	OUT cpu_ms double precision,
	OUT gpu_ms double precision,
	OUT gpu_copy_ms double precision,
	OUT cpu_threads integer)
RETURNS record
AS 'MODULE_PATHNAME', 'odp_knn_path'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION odp_knn_path(bigint, bigint, integer, text, boolean, boolean, boolean) IS
'the path (cpu or gpu) a k-NN call of queries rows against rows candidates of dims values takes now, what chose it (setting, no_gpu or cost) and, for cost, the estimated milliseconds of each path and of the GPU''s copy; on_device: the candidates'' copy is on a GPU (a cached table''s)';

-- The terms odp_gpu.device = auto weighs the k-NN paths with: timed by
-- the GPU service's engine process at its start, else by this backend
-- (its CPU) and built in (the GPU).  VOLATILE: a restart times them
-- again; PARALLEL RESTRICTED: a backend may time its CPU.
CREATE FUNCTION odp_knn_cost_model(
	OUT term text,
	OUT value double precision,
	OUT source text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'odp_knn_cost_model'
LANGUAGE C VOLATILE PARALLEL RESTRICTED
ROWS 17;

COMMENT ON FUNCTION odp_knn_cost_model() IS
'the terms of the k-NN cost model odp_gpu.device = auto uses (nanoseconds per unit of work, the GPU''s fixed milliseconds a call, the copy''s GB/s), and where they come from: timed (the GPU service at its start), cpu timed, gpu built-in, or built-in';
