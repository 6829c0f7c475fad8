-- Pearson and Spearman correlation: odp_pearson and odp_pearson_top
-- against their SQL formulations (corr() over unnest, ORDER BY .. LIMIT,
-- average ranks by window functions, an exact two-pass in numeric), one
-- and two sources, NULL and NaN as missing values, long-format data as a
-- query source, privileges and row-level security, every error, and the
-- upgrade from 0.2.0.  Coefficients are shown rounded, so that the CPU
-- and GPU paths print the same.
CREATE EXTENSION odp_gpu VERSION '0.2.0';
ALTER EXTENSION odp_gpu UPDATE TO '0.3.0';
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented,
	   p.provolatile, p.proparallel, p.prosecdef, p.proisstrict
FROM pg_proc p WHERE proname LIKE 'odp_pearson%' ORDER BY p.oid::regprocedure::text COLLATE "C";

\i sql/include/odp_try.psql

-- A small example: 2 is 1 doubled (r = 1), 3 is 1 reversed (r = -1), 4 is
-- constant (no correlation, no rows), 5 is unrelated.
CREATE TABLE tiny (id int PRIMARY KEY, v float8[]);
INSERT INTO tiny VALUES (1, '{1,2,3,4,5}'), (2, '{2,4,6,8,10}'), (3, '{5,4,3,2,1}'),
	(4, '{7,7,7,7,7}'), (5, '{2,1,4,3,6}');
SELECT id_a, id_b, round(r::numeric, 10) AS r FROM odp_pearson('tiny');
SELECT id_a, id_b, round(r::numeric, 10) AS r FROM odp_pearson('tiny', min_abs_r => 0.9);
SELECT id, rank, other_id, round(r::numeric, 10) AS r FROM odp_pearson_top('tiny', k => 2);
SELECT id, rank, other_id, round(r::numeric, 10) AS r FROM odp_pearson_top('tiny', k => 1, sign => 'negative');
-- k beyond the partners returns those there are
SELECT id, count(*) FROM odp_pearson_top('tiny', k => 100) GROUP BY id ORDER BY id;
-- Spearman of a monotone but non-linear pair is 1
SELECT round(r::numeric, 10) FROM odp_pearson('SELECT * FROM (VALUES (1, ARRAY[1, 2, 3, 4]::float8[]), (2, ARRAY[1, 8, 27, 64]::float8[])) s(id, v)',
	method => 'spearman');

-- 40 series of 30 pseudo-random values: every coefficient against corr()
CREATE TABLE series AS
	SELECT s AS id, array(SELECT ((s * 7919 + t * 104729 + s * t * 31) % 1009) / 1009.0
							  + 0.01 * t * (s % 3 - 1) FROM generate_series(1, 30) t)::float8[] AS v
	FROM generate_series(1, 40) s;
ALTER TABLE series ADD PRIMARY KEY (id);
CREATE VIEW series_corr AS
	SELECT a.id AS id_a, b.id AS id_b, corr(y, x) AS r
	FROM series a, series b, LATERAL unnest(a.v, b.v) u(x, y)
	WHERE a.id <> b.id GROUP BY a.id, b.id;
SELECT count(*) AS pairs, max(abs(o.r - c.r)) < 1e-10 AS within_1e_10
FROM odp_pearson('series') o JOIN series_corr c USING (id_a, id_b);
-- the pairs over a threshold are exactly those of the SQL formulation
SELECT count(*) AS over_0_3 FROM odp_pearson('series', min_abs_r => 0.3);
(SELECT id_a, id_b FROM odp_pearson('series', min_abs_r => 0.3)
 EXCEPT SELECT id_a, id_b FROM series_corr WHERE id_a < id_b AND abs(r) >= 0.3)
UNION ALL
(SELECT id_a, id_b FROM series_corr WHERE id_a < id_b AND abs(r) >= 0.3
 EXCEPT SELECT id_a, id_b FROM odp_pearson('series', min_abs_r => 0.3));
-- rows come ordered by id_a, id_b
SELECT bool_and(ok) AS ordered FROM (
	SELECT (id_a, id_b) > lag((id_a, id_b)) OVER () OR lag(id_a) OVER () IS NULL AS ok
	FROM odp_pearson('series')) s;
-- top-k: the SQL formulation ORDER BY abs(r) DESC, id LIMIT k, per series
SELECT sign, count(*) AS rows, count(*) FILTER (WHERE o.other_id = c.id_b AND abs(o.r - c.r) < 1e-10) AS same
FROM unnest(ARRAY['abs', 'positive', 'negative']) sign,
	LATERAL odp_pearson_top('series', k => 3, sign => sign) o
	JOIN LATERAL (
		SELECT id_b, r FROM series_corr c WHERE c.id_a = o.id
		ORDER BY CASE sign WHEN 'abs' THEN -abs(r) WHEN 'positive' THEN -r ELSE r END, id_b
		OFFSET o.rank - 1 LIMIT 1) c ON true
GROUP BY sign ORDER BY sign;

-- Spearman: Pearson of the average ranks, by window functions
CREATE VIEW series_ranks AS
	SELECT id, t, rank() OVER w + (count(*) OVER (PARTITION BY id, x) - 1) / 2.0 AS rk
	FROM series, unnest(v) WITH ORDINALITY u(x, t)
	WINDOW w AS (PARTITION BY id ORDER BY x);
-- ties: values rounded to one digit, so every series has many
CREATE TABLE tied AS SELECT id, array(SELECT round(x::numeric, 1)::float8 FROM unnest(v) x) AS v FROM series;
CREATE VIEW tied_ranks AS
	SELECT id, t, rank() OVER w + (count(*) OVER (PARTITION BY id, x) - 1) / 2.0 AS rk
	FROM tied, unnest(v) WITH ORDINALITY u(x, t)
	WINDOW w AS (PARTITION BY id ORDER BY x);
SELECT 'distinct' AS data, count(*) AS pairs, max(abs(o.r - c.r)) < 1e-10 AS within_1e_10
FROM odp_pearson('series', method => 'spearman') o
JOIN (SELECT a.id AS id_a, b.id AS id_b, corr(b.rk, a.rk) AS r FROM series_ranks a
	  JOIN series_ranks b USING (t) WHERE a.id < b.id GROUP BY 1, 2) c USING (id_a, id_b)
UNION ALL
SELECT 'ties', count(*), max(abs(o.r - c.r)) < 1e-10
FROM odp_pearson('tied', method => 'spearman') o
JOIN (SELECT a.id AS id_a, b.id AS id_b, corr(b.rk, a.rk) AS r FROM tied_ranks a
	  JOIN tied_ranks b USING (t) WHERE a.id < b.id GROUP BY 1, 2) c USING (id_a, id_b);

-- Huge offsets: 1e9 + k / 1024 (exact in float8), where one-pass formulas
-- lose every digit and corr() itself loses about eight; the oracle is a
-- two-pass computation in numeric on the exact values.
CREATE TABLE offsets AS
	SELECT s AS id, array(SELECT 1000000000 + ((s * 37 + t * t * 11 + s * t) % 997) / 1024.0
						  FROM generate_series(1, 25) t) AS exact
	FROM generate_series(1, 12) s;
ALTER TABLE offsets ADD COLUMN v float8[];
UPDATE offsets SET v = exact::float8[];
SELECT count(*) AS pairs, max(abs(o.r - c.r)) < 1e-12 AS within_1e_12
FROM odp_pearson('offsets', features => '{v}') o
JOIN (SELECT a.id AS id_a, b.id AS id_b,
			 sum((x - mx) * (y - my)) / sqrt(sum((x - mx) ^ 2) * sum((y - my) ^ 2)) AS r
	  FROM offsets a, offsets b,
		   LATERAL (SELECT avg(x) AS mx, avg(y) AS my FROM unnest(a.exact, b.exact) w(x, y)) m,
		   LATERAL unnest(a.exact, b.exact) u(x, y)
	  WHERE a.id < b.id GROUP BY 1, 2, mx, my) c USING (id_a, id_b);

-- Missing values (nulls => 'pairwise'): each pair uses the positions where
-- both series have a value, as corr() does over unnest; NaN is missing too.
CREATE TABLE gappy AS
	SELECT id, array(SELECT CASE WHEN (id * 13 + t * 7) % 5 = 0 THEN NULL
								 WHEN (id * 3 + t) % 11 = 0 THEN 'NaN'::float8
								 ELSE x END
					 FROM unnest(v) WITH ORDINALITY u(x, t)) AS v
	FROM series WHERE id <= 20;
-- one series with too few values against the others, one with none at all
INSERT INTO gappy VALUES (21, array_fill(NULL::float8, ARRAY[30])),
	(22, array(SELECT CASE WHEN t <= 3 THEN t * 1.5 END FROM generate_series(1, 30) t));
CREATE VIEW gappy_corr AS
	SELECT a.id AS id_a, b.id AS id_b, corr(y, x) AS r, count(*) AS n
	FROM gappy a, gappy b, LATERAL unnest(a.v, b.v) u(x, y)
	WHERE a.id < b.id AND x IS NOT NULL AND y IS NOT NULL AND x <> 'NaN' AND y <> 'NaN'
	GROUP BY 1, 2;
SELECT count(*) AS pairs, max(abs(o.r - c.r)) < 1e-10 AS within_1e_10,
	   count(*) FILTER (WHERE c.r IS NULL) AS without_corr
FROM odp_pearson('gappy', nulls => 'pairwise') o LEFT JOIN gappy_corr c USING (id_a, id_b);
SELECT count(*) AS corr_pairs FROM gappy_corr WHERE r IS NOT NULL;
-- min_periods: pairs with fewer common values get no row
SELECT (SELECT count(*) FROM odp_pearson('gappy', nulls => 'pairwise', min_periods => 20)) AS odp,
	   (SELECT count(*) FROM gappy_corr WHERE r IS NOT NULL AND n >= 20) AS sql;
SELECT id, count(*) AS partners FROM odp_pearson_top('gappy', k => 50, nulls => 'pairwise')
WHERE id >= 20 GROUP BY id ORDER BY id;

-- Long-format readings turned into series by a query source
CREATE TABLE readings (sensor_id int, t int, value float8);
INSERT INTO readings
	SELECT s, t, sin(t / 3.0 + s) + CASE WHEN s % 2 = 0 THEN t / 10.0 ELSE 0 END
	FROM generate_series(1, 6) s, generate_series(1, 24) t;
SELECT id_a, id_b, round(r::numeric, 10) AS r
FROM odp_pearson('SELECT sensor_id AS id, array_agg(value ORDER BY t) AS v FROM readings GROUP BY sensor_id',
	min_abs_r => 0.5);
SELECT bool_and(abs(o.r - c.r) < 1e-10) AS matches_corr
FROM odp_pearson('SELECT sensor_id AS id, array_agg(value ORDER BY t) AS v FROM readings GROUP BY sensor_id') o
JOIN (SELECT a.sensor_id AS id_a, b.sensor_id AS id_b, corr(b.value, a.value) AS r
	  FROM readings a JOIN readings b USING (t) WHERE a.sensor_id < b.sensor_id GROUP BY 1, 2) c
	USING (id_a, id_b);

-- Two sources: stocks against indices (the sums of some stocks); named ids
-- and features on the other side
CREATE TABLE stocks AS SELECT id AS stock, v FROM series WHERE id <= 12;
CREATE TABLE indices AS
	SELECT i AS idx, array(SELECT sum(x) FROM series, unnest(v) WITH ORDINALITY u(x, t)
						   WHERE id % 3 = i GROUP BY t ORDER BY t) AS prices
	FROM generate_series(0, 2) i;
SELECT id_a, id_b, round(r::numeric, 10) AS r
FROM odp_pearson('stocks', 'indices', min_abs_r => 0.5, id_column => 'stock',
	other_id_column => 'idx', other_features => '{prices}');
SELECT id, rank, other_id, round(r::numeric, 10) AS r
FROM odp_pearson_top('stocks', 'indices', k => 1, id_column => 'stock',
	other_id_column => 'idx', other_features => '{prices}') WHERE id <= 4;
SELECT count(*) AS pairs, max(abs(o.r - c.r)) < 1e-10 AS within_1e_10
FROM odp_pearson('stocks', 'SELECT idx AS stock, prices AS v FROM indices', id_column => 'stock') o
JOIN (SELECT s.stock AS id_a, i.idx AS id_b, corr(y, x) AS r
	  FROM stocks s, indices i, LATERAL unnest(s.v, i.prices) u(x, y) GROUP BY 1, 2) c USING (id_a, id_b);
-- a source against itself as two sources: every pair both ways, itself included
SELECT count(*), count(*) FILTER (WHERE id_a = id_b AND round(r::numeric, 10) = 1) AS diagonal
FROM odp_pearson('tiny', 'tiny');

-- Value types: real[] (widened exactly), integer[], numeric[], scalar columns
CREATE TABLE typed (id bigint PRIMARY KEY, f4 real[], i4 int[], num numeric[], a float8, b float8, c int);
INSERT INTO typed VALUES (1, '{1.5,2.25,3}', '{1,2,4}', '{1.5,2.25,3}', 1, 2, 3),
	(2, '{3,2,1.125}', '{9,5,1}', '{3,2,1.125}', 3, 2, 2), (3, '{0.1,0.7,0.2}', '{3,1,2}', '{0.1,0.7,0.2}', 0, 1, 1);
SELECT 'f4' AS col, id_a, id_b, round(r::numeric, 10) AS r FROM odp_pearson('typed', features => '{f4}')
UNION ALL SELECT 'i4', id_a, id_b, round(r::numeric, 10) FROM odp_pearson('typed', features => '{i4}')
UNION ALL SELECT 'num', id_a, id_b, round(r::numeric, 10) FROM odp_pearson('typed', features => '{num}')
UNION ALL SELECT 'abc', id_a, id_b, round(r::numeric, 10) FROM odp_pearson('typed', features => '{a,b,c}')
ORDER BY 1, 2, 3;

-- Privileges and row-level security hold as for every odp_gpu function
CREATE ROLE regress_odp_corr;
CREATE TABLE owned (id int PRIMARY KEY, owner name, v float8[]);
INSERT INTO owned SELECT id, CASE WHEN id <= 3 THEN 'regress_odp_corr' ELSE 'someone' END, v FROM tiny;
ALTER TABLE owned ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON owned FOR SELECT USING (owner = current_user);
SET ROLE regress_odp_corr;
SELECT odp_try($$SELECT * FROM odp_pearson('owned')$$);
RESET ROLE;
GRANT SELECT ON owned TO regress_odp_corr;
SET ROLE regress_odp_corr;
SELECT id_a, id_b, round(r::numeric, 10) AS r FROM odp_pearson('owned', features => '{v}');
RESET ROLE;
REVOKE SELECT ON owned FROM regress_odp_corr;
GRANT SELECT (id, owner) ON owned TO regress_odp_corr;
SET ROLE regress_odp_corr;
SELECT odp_try($$SELECT * FROM odp_pearson('owned', features => '{v}')$$);
RESET ROLE;

-- Errors
SELECT odp_try($$SELECT * FROM odp_pearson(NULL)$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', min_abs_r => -0.1)$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', min_abs_r => 1.5)$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', min_abs_r => 'NaN')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', min_abs_r => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', method => 'kendall')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', nulls => 'ignore')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', method => 'spearman', nulls => 'pairwise')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', min_periods => 0)$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', min_periods => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_pearson_top('tiny', k => 0)$$);
SELECT odp_try($$SELECT * FROM odp_pearson_top('tiny', k => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_pearson_top('tiny', k => 5000)$$);
SELECT odp_try($$SELECT * FROM odp_pearson_top('tiny', sign => 'largest')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', NULL::text)$$);
-- series of different lengths, of one value, one series, no series
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT * FROM (VALUES (1, ARRAY[1, 2, 3]::float8[]), (2, ARRAY[1, 2]::float8[])) s(id, v)')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT * FROM (VALUES (1, ARRAY[1]::float8[]), (2, ARRAY[2]::float8[])) s(id, v)')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT * FROM tiny WHERE id = 1')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT * FROM tiny WHERE id < 0')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', 'typed', features => '{v}', other_features => '{f4}')$$);
-- NULL, NaN and infinite values
SELECT odp_try($$SELECT * FROM odp_pearson('gappy')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT * FROM (VALUES (1, ARRAY[1, 2, ''NaN'']::float8[]), (2, ARRAY[1, 2, 3]::float8[])) s(id, v)')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT * FROM (VALUES (1, ARRAY[1, 2, ''Infinity'']::float8[]), (2, ARRAY[1, 2, 3]::float8[])) s(id, v)', nulls => 'pairwise')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT * FROM (VALUES (1, NULL::float8[]), (2, ARRAY[1, 2, 3]::float8[])) s(id, v)', nulls => 'pairwise')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT * FROM (VALUES (1, 2.0, 3.0), (2, NULL, 1.0)) s(id, a, b)')$$);
-- a scalar NULL is a missing value under pairwise (too few left: no pairs)
SELECT count(*) FROM odp_pearson('SELECT * FROM (VALUES (1, 2.0, 3.0), (2, NULL, 1.0)) s(id, a, b)', nulls => 'pairwise');
-- unknown table and column, wrong column type
SELECT odp_try($$SELECT * FROM odp_pearson('no_such_table')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('tiny', features => '{w}')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('owned', features => '{owner}')$$);

DROP POLICY own_rows ON owned;
DROP VIEW series_corr, series_ranks, tied_ranks, gappy_corr;
DROP TABLE owned, typed, stocks, indices, readings, gappy, offsets, tied, tiny, series;
DROP ROLE regress_odp_corr;
DROP FUNCTION odp_try(text);
DROP EXTENSION odp_gpu;
