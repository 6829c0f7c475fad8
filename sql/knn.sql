-- k nearest neighbours: odp_knn and odp_knn_join against references in
-- SQL, ties by smaller id, k beyond the rows, self joins, every metric,
-- large k, errors, and the upgrade from 0.1.0.
CREATE EXTENSION odp_gpu VERSION '0.1.0';
SELECT count(*) AS knn_functions FROM pg_proc WHERE proname LIKE 'odp_knn%';
ALTER EXTENSION odp_gpu UPDATE TO '0.2.0';
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented,
	   p.provolatile, p.proparallel, p.prosecdef, p.proisstrict
FROM pg_proc p WHERE proname LIKE 'odp_knn%' ORDER BY p.oid::regprocedure::text COLLATE "C";
SET extra_float_digits = 0;

\i sql/include/odp_try.psql

-- Points on a line; 6 duplicates 2.
CREATE TABLE line (id integer PRIMARY KEY, x float8);
INSERT INTO line VALUES (1, 0), (2, 1), (3, 2), (4, 3), (5, 10), (6, 1);
-- 2 and 6 at 0, then 1 and 3 tie at 1: smaller id first
SELECT * FROM odp_knn('line', '{1}', k => 4);
SELECT * FROM odp_knn('line', '{1}', k => 1);
-- k beyond the rows returns them all, in order
SELECT array_agg(id ORDER BY rank) FROM odp_knn('line', '{4}', k => 100);
-- inner product: largest first, distance is the inner product
SELECT * FROM odp_knn('line', '{-2}', k => 3, metric => 'inner_product');
-- a real[] query works too
SELECT id FROM odp_knn('line', '{9.5}'::real[], k => 1);

-- Self join: a row is not its own neighbour (2 and 6 are each other's)
SELECT * FROM odp_knn_join('line', 'line', k => 2);
-- the same relation under another name is a self join too: 6 x 5 rows
SELECT count(*) FROM odp_knn_join('line', 'public.line', k => 10);
-- a query is other data: each row finds itself at 0
SELECT * FROM odp_knn_join('SELECT * FROM line WHERE id <= 2', 'line', k => 2);
-- queries with their own id and feature names, found by default or named
CREATE TABLE probe (qid int PRIMARY KEY, pos float8);
INSERT INTO probe VALUES (10, 2.4), (20, 9), (30, -1);
SELECT * FROM odp_knn_join('probe', 'line', k => 2);
SELECT count(*) FROM odp_knn_join('probe', 'line', k => 2, query_id_column => 'qid',
								  query_features => '{pos}');
-- results join with business tables
SELECT p.qid, p.pos, l.x FROM probe p
JOIN odp_knn_join('probe', 'line', k => 1) j ON j.query_id = p.qid
JOIN line l ON l.id = j.id ORDER BY p.qid;

-- Every metric against a reference in SQL on integer data (exact in
-- float32, so even the ties agree; cosine compares distances only).
CREATE TABLE pts AS
	SELECT i AS id, ARRAY[(i * 37) % 101 - 50, (i * 53) % 89, (i * 11) % 13 + 1]::real[] AS f
	FROM generate_series(1, 300) i;
ALTER TABLE pts ADD PRIMARY KEY (id);
CREATE TABLE qs AS
	SELECT 1000 + i AS id, ARRAY[(i * 17) % 61 - 30, (i * 7) % 97, i % 9 + 1]::real[] AS f
	FROM generate_series(1, 7) i;
CREATE FUNCTION ref_dist(metric text, x real[], y real[]) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE metric
		WHEN 'euclidean' THEN sqrt(sum((x[i]::float8 - y[i]) ^ 2))
		WHEN 'sqeuclidean' THEN sum((x[i]::float8 - y[i]) ^ 2)
		WHEN 'manhattan' THEN sum(abs(x[i]::float8 - y[i]))
		WHEN 'chebyshev' THEN max(abs(x[i]::float8 - y[i]))
		WHEN 'cosine' THEN 1 - sum(x[i]::float8 * y[i]) / (sqrt(sum(x[i]::float8 ^ 2)) * sqrt(sum(y[i]::float8 ^ 2)))
		WHEN 'inner_product' THEN sum(x[i]::float8 * y[i])
	END
	FROM generate_subscripts(x, 1) i
$$;
-- The reference's k = 10 nearest of every query, metric and mode at once
-- (k = 1 is its first rank): each pair's sums over its features, grouped.
CREATE TEMP TABLE ref AS
WITH q AS (SELECT false AS rself, id, f FROM qs UNION ALL SELECT true, id, f FROM pts),
	 sums AS (
		SELECT q.rself, q.id AS query_id, p.id,
			   sum((x::float8 - y) ^ 2) AS sq, sum(abs(x::float8 - y)) AS l1,
			   max(abs(x::float8 - y)) AS linf, sum(x::float8 * y) AS dot,
			   sum(x::float8 ^ 2) AS xx, sum(y::float8 ^ 2) AS yy
		FROM q, pts p, unnest(q.f, p.f) u(x, y)
		WHERE NOT q.rself OR p.id <> q.id
		GROUP BY q.rself, q.id, p.id),
	 d AS (
		SELECT rm, rself, query_id, id,
			   CASE rm WHEN 'euclidean' THEN sqrt(sq) WHEN 'sqeuclidean' THEN sq
					   WHEN 'manhattan' THEN l1 WHEN 'chebyshev' THEN linf
					   WHEN 'cosine' THEN 1 - dot / (sqrt(xx) * sqrt(yy))
					   WHEN 'inner_product' THEN dot END AS distance
		FROM sums, unnest(ARRAY['euclidean', 'sqeuclidean', 'manhattan', 'chebyshev', 'cosine', 'inner_product']) rm)
SELECT * FROM (
	SELECT rm, rself, query_id, id, distance,
		   row_number() OVER (PARTITION BY rm, rself, query_id
							  ORDER BY CASE WHEN rm = 'inner_product' THEN -distance ELSE distance END, id) AS rank
	FROM d) s
WHERE rank <= 10;
SELECT m, k, self, count(*) AS rows,
	   count(*) FILTER (WHERE (o.id IS DISTINCT FROM r.id AND m <> 'cosine')
							  OR abs(o.distance - r.distance) > 1e-5 * greatest(1, abs(r.distance))) AS mismatches
FROM unnest(ARRAY['euclidean', 'sqeuclidean', 'manhattan', 'chebyshev', 'cosine', 'inner_product']) m,
	 unnest(ARRAY[1, 10]) k, unnest(ARRAY[false, true]) self,
	 LATERAL (SELECT * FROM odp_knn_join(CASE WHEN self THEN 'pts' ELSE 'qs' END, 'pts',
										 k => k, metric => m)) o
	 FULL JOIN LATERAL (SELECT * FROM ref WHERE rm = m AND rself = self AND ref.rank <= k) r
		ON r.query_id = o.query_id AND r.rank = o.rank
GROUP BY m, k, self ORDER BY m, k, self;
-- odp_knn gives odp_knn_join's rows for a single query
SELECT m, (SELECT array_agg(id ORDER BY rank) FROM odp_knn('pts', '{3, 40, 5}', k => 20, metric => m))
	 = (SELECT array_agg(id ORDER BY rank) FROM odp_knn_join('SELECT 1 AS id, ''{3, 40, 5}''::real[] AS f',
															 'pts', k => 20, metric => m)) AS same
FROM unnest(ARRAY['euclidean', 'manhattan', 'cosine', 'inner_product']) m;

-- Large k (lists beyond the fast path on the GPU), and k beyond the rows.
CREATE TABLE many AS SELECT i AS id, ARRAY[(i * 7919) % 1009, (i * 104729) % 997]::real[] AS f
	FROM generate_series(1, 3000) i;
ALTER TABLE many ADD PRIMARY KEY (id);
SELECT (SELECT array_agg(id ORDER BY rank) FROM odp_knn('many', '{500, 500}', k => 1500, metric => 'manhattan'))
	 = (SELECT array_agg(id::bigint ORDER BY abs(f[1] - 500) + abs(f[2] - 500), id)
		FROM (SELECT * FROM many ORDER BY abs(f[1] - 500) + abs(f[2] - 500), id LIMIT 1500) s) AS k1500_exact;
SELECT count(*), count(DISTINCT query_id), count(*) FILTER (WHERE rank = 1 AND query_id = id) AS itself_first
FROM odp_knn_join('SELECT * FROM many WHERE id <= 50', 'many', k => 4000);

-- The CPU path, forced, gives the same rows as whatever auto picks.
SET odp_gpu.device = cpu;
CREATE TEMP TABLE cpu_rows AS SELECT * FROM odp_knn_join('many', 'many', k => 5);
RESET odp_gpu.device;
SELECT count(*) AS rows, count(*) FILTER (WHERE c IS DISTINCT FROM a) AS differences
FROM (SELECT * FROM cpu_rows) c FULL JOIN odp_knn_join('many', 'many', k => 5) a
	ON (a.query_id, a.rank) = (c.query_id, c.rank);

-- Errors.
SELECT odp_try($$SELECT * FROM odp_knn(NULL, '{1}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', NULL)$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{{1}}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{1, NULL}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{1, 2}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{NaN}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{Infinity}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{1e300}')$$);
-- a float32 table takes its query in float32
SET odp_gpu.distance_precision = float32;
SELECT odp_try($$SELECT * FROM odp_knn('line', '{1e300}')$$);
RESET odp_gpu.distance_precision;
SELECT odp_try($$SELECT * FROM odp_knn('line', '{0}', metric => 'cosine')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{1}', k => 0)$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{1}', k => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{1}', k => 5000)$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{1}', metric => 'dot')$$);
SELECT odp_try($$SELECT * FROM odp_knn('line', '{3e19}')$$);
SET odp_gpu.distance_precision = float32;
SELECT odp_try($$SELECT * FROM odp_knn('line', '{3e19}')$$);
RESET odp_gpu.distance_precision;
SELECT odp_try($$SELECT * FROM odp_knn('no_such_table', '{1}')$$);
SELECT odp_try($$SELECT * FROM odp_knn_join(NULL, 'line')$$);
SELECT odp_try($$SELECT * FROM odp_knn_join('line', NULL)$$);
SELECT odp_try($$SELECT * FROM odp_knn_join('pts', 'line')$$);
SELECT odp_try($$SELECT * FROM odp_knn_join('probe', 'line', query_id_column => 'nope')$$);
SELECT odp_try($$SELECT * FROM odp_knn_join('line', 'line', k => 1, metric => 'cosine')$$);
SELECT odp_try($$SELECT * FROM odp_top_outliers('line', k => 1, metric => 'inner_product')$$);
-- a one-row self join has no neighbours at all
SELECT count(*) FROM odp_knn_join('SELECT 1 AS id, 5.0 AS x', 'SELECT 1 AS id, 5.0 AS x', k => 3);

-- 0.9.0: beside query float8[], odp_knn takes anynonarray (pgvector's
-- types) and text (an untyped literal or parameter), so that '{...}',
-- ARRAY[...] and $1 all still resolve: arrays of every numeric type give
-- the neighbours of the float8[] query; a value that is no vector,
-- pgvector's text form without its type and a type only called vector
-- are refused.
ALTER EXTENSION odp_gpu UPDATE TO '0.9.0';
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented,
	   p.provolatile, p.proparallel, p.proisstrict, p.prorows, p.prosupport
FROM pg_proc p WHERE proname = 'odp_knn' ORDER BY p.oid::regprocedure::text COLLATE "C";
CREATE FUNCTION knn_ids(q anyelement) RETURNS text LANGUAGE sql AS $$
	SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('pts', q, k => 8)
$$;
SELECT count(*) AS queries, count(DISTINCT r) AS distinct_results, min(r) AS neighbours
FROM (VALUES
	((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('pts', '{10, 20, 3}', k => 8))),
	((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('pts', ARRAY[10, 20, 3], k => 8))),
	((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('pts', ARRAY[10.0, 20, 3], k => 8))),
	((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('pts', query => '{10, 20, 3}', k => 8))),
	(knn_ids('{10, 20, 3}'::float8[])), (knn_ids('{10, 20, 3}'::real[])),
	(knn_ids('{10, 20, 3}'::int2[])), (knn_ids('{10, 20, 3}'::int4[])),
	(knn_ids('{10, 20, 3}'::int8[])), (knn_ids('{10, 20, 3}'::numeric[]))) v(r);
-- an untyped parameter, as drivers send them, and a text value
PREPARE knn_untyped AS SELECT array_agg(id ORDER BY rank)::text AS r FROM odp_knn('pts', $1, k => 8);
EXECUTE knn_untyped('{10, 20, 3}');
DEALLOCATE knn_untyped;
SELECT array_agg(id ORDER BY rank)::text AS r FROM odp_knn('pts', '{10, 20, 3}'::text, k => 8);
-- the same as SQL's nearest rows, ties by smaller id
SELECT array_agg(id ORDER BY d, id)::text AS reference FROM (
	SELECT id, ref_dist('euclidean', f, '{10, 20, 3}') AS d FROM pts ORDER BY 2, 1 LIMIT 8) s;
SELECT odp_try($$SELECT * FROM odp_knn('pts', 'abc'::text)$$);
SELECT odp_try($$SELECT * FROM odp_knn('pts', ARRAY['a', 'b', 'c'])$$);
SELECT odp_try($$SELECT * FROM odp_knn('pts', '[10, 20, 3]')$$);
SELECT odp_try($$SELECT * FROM odp_knn('pts', '{{1, 2, 3}}'::int[])$$);
SELECT odp_try($$SELECT * FROM odp_knn('pts', ARRAY[1, NULL, 3]::numeric[])$$);
SELECT odp_try($$SELECT * FROM odp_knn('pts', ARRAY['NaN', 1, 2]::numeric[])$$);
SELECT odp_try($$SELECT * FROM odp_knn('pts', ARRAY[1, 2]::int8[])$$);
CREATE SCHEMA knn_lookalike;
CREATE TYPE knn_lookalike.vector AS (x float8, y float8, z float8);
CREATE TABLE lookalike (id int PRIMARY KEY, v knn_lookalike.vector, f real[]);
INSERT INTO lookalike VALUES (1, ROW(1, 2, 3), '{1, 2, 3}'), (2, ROW(4, 5, 6), '{4, 5, 6}');
SELECT odp_try($$SELECT * FROM odp_knn('pts', ROW(1, 2, 3)::knn_lookalike.vector)$$);
SELECT odp_try($$SELECT * FROM odp_knn('lookalike', '{1, 2, 3}', features => '{v}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('lookalike', '{1, 2, 3}')$$);
SELECT rank, id, round(distance::numeric, 5) AS distance
FROM odp_knn('lookalike', '{1, 2, 3}', features => '{f}');
DROP TABLE lookalike;
DROP SCHEMA knn_lookalike CASCADE;
DROP FUNCTION knn_ids(anyelement);

-- A result of 500,000 rows at work_mem = 4MB stays in memory, up to
-- odp_gpu.output_memory; below that it spills to a temporary file, with the
-- same rows.
CREATE TABLE out_pts AS
	SELECT i AS id, ARRAY[(i % 100)::real, (i / 100)::real] AS f FROM generate_series(1, 1000) i;
CREATE TABLE out_q AS
	SELECT i AS id, ARRAY[(i % 977)::real / 10, (i % 13)::real] AS f FROM generate_series(1, 100000) i;
CREATE FUNCTION out_join() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	spilled bool := false;
BEGIN
	FOR line IN EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
		SELECT count(*) FROM odp_knn_join('out_q', 'out_pts', k => 5)
	LOOP
		spilled := spilled OR line ~ 'temp (read|written)=';
	END LOOP;
	RETURN (SELECT count(*) || ' rows, md5 ' ||
				   md5(string_agg(query_id || ':' || rank || ':' || id || ':' || distance, ','
								  ORDER BY query_id, rank))
			FROM odp_knn_join('out_q', 'out_pts', k => 5)) ||
		CASE WHEN spilled THEN ', spilled' ELSE ', in memory' END;
END $$;
SET work_mem = '4MB';
CREATE TEMP TABLE out_res AS SELECT 'default' AS setting, out_join() AS result;
SET odp_gpu.output_memory = '1MB';
INSERT INTO out_res SELECT '1MB', out_join();
RESET odp_gpu.output_memory;
RESET work_mem;
SELECT setting, split_part(result, ', ', 1) AS rows, split_part(result, ', ', 3) AS kept
FROM out_res ORDER BY setting;
SELECT count(DISTINCT split_part(result, ', ', 2)) AS distinct_results FROM out_res;
DROP TABLE out_pts, out_q, out_res;
DROP FUNCTION out_join();

DROP TABLE ref;
DROP FUNCTION ref_dist(text, real[], real[]);
DROP FUNCTION odp_try(text);
DROP TABLE line, probe, pts, qs, many;
DROP EXTENSION odp_gpu;
