-- Top-n outliers by method: auto, bruteforce and solvingset must return the
-- same rows, order and scores (bit for bit); odp_solving_set contains the
-- top n with their exact scores; bad methods are errors.
CREATE EXTENSION odp_gpu;
SET extra_float_digits = 0;
\i sql/include/odp_try.psql

-- Rows on which two methods disagree (rank, id or exact score), for source
-- src: 0 means identical results.
CREATE FUNCTION method_diff(src text, k int, n int, m1 text, m2 text,
							metric text DEFAULT 'euclidean') RETURNS bigint
LANGUAGE sql STABLE AS $$
	SELECT count(*)
	FROM odp_top_outliers(src, k => k, n => n, metric => metric, method => m1) a
	FULL JOIN odp_top_outliers(src, k => k, n => n, metric => metric, method => m2) b
		USING (rank)
	WHERE a.id IS DISTINCT FROM b.id OR a.score IS DISTINCT FROM b.score
$$;

-- Solving-set checks for src: (top-n ids missing from the solving set,
-- solving-set scores that differ from odp_outlier_scores, whether the
-- solving set comes in ascending id order).
CREATE FUNCTION solving_set_check(src text, k int, n int,
								  OUT missing bigint, OUT wrong_scores bigint,
								  OUT ascending boolean)
LANGUAGE sql STABLE AS $$
	SELECT (SELECT count(*) FROM odp_top_outliers(src, k => k, n => n) t
			WHERE t.id NOT IN (SELECT id FROM odp_solving_set(src, k => k, n => n))),
		   (SELECT count(*) FROM odp_solving_set(src, k => k, n => n) s
			JOIN odp_outlier_scores(src, k => k) o USING (id)
			WHERE s.score IS DISTINCT FROM o.score),
		   (SELECT array_agg(id) = array_agg(id ORDER BY id)
			FROM odp_solving_set(src, k => k, n => n))
$$;

-- Scattered points (arithmetic, deterministic) with planted outliers.
CREATE TABLE scatter (id int PRIMARY KEY, x float8, y float8, z float8);
INSERT INTO scatter
	SELECT i, ((i * 7919) % 211)::float8 / 10, ((i * 104729) % 199)::float8 / 10,
		   ((i * 31) % 17)::float8 / 4
	FROM generate_series(1, 2000) i;
INSERT INTO scatter VALUES (5001, 80, 80, 0), (5002, -60, 10, 2),
	(5003, 10, -70, 1), (5004, 40, 40, 40);
SELECT * FROM odp_top_outliers('scatter', k => 5, n => 4, method => 'solvingset');
SELECT m, array_agg(id ORDER BY rank) AS top
FROM unnest(ARRAY['auto', 'bruteforce', 'solvingset']) m,
	 LATERAL odp_top_outliers('scatter', k => 10, n => 8, method => m)
GROUP BY m ORDER BY m;
SELECT k, n, method_diff('scatter', k, n, 'bruteforce', 'solvingset') AS diff,
	   method_diff('scatter', k, n, 'bruteforce', 'auto') AS diff_auto
FROM (VALUES (1, 1), (1, 50), (7, 10), (50, 25), (200, 100), (2003, 3),
			 (3, 2004), (3, 5000)) v(k, n)
ORDER BY k, n;
-- every metric
SELECT m, method_diff('scatter', 8, 30, 'bruteforce', 'solvingset', m) AS diff
FROM unnest(ARRAY['euclidean', 'sqeuclidean', 'manhattan', 'chebyshev',
				  'cosine']) m
ORDER BY m;
SELECT * FROM solving_set_check('scatter', 10, 8);

-- Duplicates and ties: a grid where many rows share a score, copies of
-- points, and ties broken by the smaller id on every method.
CREATE TABLE grid (id bigint PRIMARY KEY, v real[]);
INSERT INTO grid SELECT i, ARRAY[i % 20, (i / 20) % 20]::real[]
	FROM generate_series(0, 1199) i;
INSERT INTO grid VALUES (2000, '{50, 50}'), (2001, '{50, 50}'),
	(2002, '{-30, 0}'), (2003, '{-30, 0}'), (2004, '{-30, 0}');
SELECT * FROM odp_top_outliers('grid', k => 2, n => 8, method => 'solvingset');
SELECT k, n, method_diff('grid', k, n, 'bruteforce', 'solvingset') AS diff
FROM (VALUES (1, 10), (2, 40), (3, 100), (5, 400), (60, 30)) v(k, n)
ORDER BY k, n;
SELECT * FROM solving_set_check('grid', 2, 8);

-- Every row identical: every score is 0, so the ranking is by id alone.
CREATE TABLE same (id int PRIMARY KEY, a real, b real);
INSERT INTO same SELECT 1000 - i, 1, 2 FROM generate_series(1, 300) i;
SELECT * FROM odp_top_outliers('same', k => 4, n => 3, method => 'solvingset');
SELECT method_diff('same', 4, 50, 'bruteforce', 'solvingset') AS diff;

-- Edge shapes: two rows, k = rows - 1, n > rows.
SELECT * FROM odp_top_outliers('SELECT * FROM (VALUES (1, 0.0), (2, 3.0)) v(id, x)',
							   k => 1, n => 5, method => 'solvingset');
SELECT * FROM odp_solving_set('SELECT * FROM (VALUES (1, 0.0), (2, 3.0)) v(id, x)',
							  k => 1, n => 1);

-- Large enough for SolvingSet to prune (auto runs it from 262,144 rows on).
CREATE TABLE big AS
	SELECT i AS id, ARRAY[((i * 7919) % 1000)::real / 10,
						  ((i * 104729) % 997)::real / 10] AS f
	FROM generate_series(1, 18000) i;
INSERT INTO big VALUES (20001, '{150, 150}'), (20002, '{-40, 50}');
ALTER TABLE big ADD PRIMARY KEY (id);
SELECT rank, id, round(score::numeric, 4) AS score
FROM odp_top_outliers('big', k => 5, n => 4);
SELECT method_diff('big', 5, 20, 'bruteforce', 'auto') AS diff_auto,
	   method_diff('big', 5, 20, 'bruteforce', 'solvingset') AS diff;
-- the solving set holds the top 20 with exact scores and prunes rows
SELECT * FROM solving_set_check('big', 5, 20);
SELECT count(*) < 18002 AS pruned FROM odp_solving_set('big', k => 5, n => 20);

-- Errors: method
SELECT odp_try($$SELECT * FROM odp_top_outliers('scatter', k => 5, method => 'SolvingSet')$$);
SELECT odp_try($$SELECT * FROM odp_top_outliers('scatter', k => 5, method => 'exact')$$);
SELECT odp_try($$SELECT * FROM odp_top_outliers('scatter', k => 5, method => NULL)$$);
-- k too large for SolvingSet (checked before the source is read)
SELECT odp_try($$SELECT * FROM odp_top_outliers('no_such_table', k => 4096, method => 'solvingset')$$);
SELECT odp_try($$SELECT * FROM odp_solving_set('no_such_table', k => 4096)$$);
-- odp_solving_set checks its arguments like odp_top_outliers
SELECT odp_try($$SELECT * FROM odp_solving_set('scatter', k => 5, n => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_solving_set('scatter', k => 5, n => 0)$$);
SELECT odp_try($$SELECT * FROM odp_solving_set('scatter', k => 0)$$);
SELECT odp_try($$SELECT * FROM odp_solving_set('scatter', k => 2004)$$);
SELECT odp_try($$SELECT * FROM odp_solving_set('scatter', k => 5, metric => 'hamming')$$);
-- distances that overflow float32, on every method
CREATE TABLE huge (id int PRIMARY KEY, f float8[]);
INSERT INTO huge VALUES (1, '{1e30, 0}'), (2, '{-1e30, 0}'), (3, '{0, 1}');
SET odp_gpu.distance_precision = float32;
SELECT m, odp_try(format('SELECT * FROM odp_top_outliers(%L, k => 1, method => %L)', 'huge', m))
FROM unnest(ARRAY['auto', 'bruteforce', 'solvingset']) m ORDER BY m;
SELECT odp_try($$SELECT * FROM odp_solving_set('huge', k => 1)$$);
RESET odp_gpu.distance_precision;
-- float64 (float8 features) overflows at squares of 1e160
UPDATE huge SET f = '{1e160, 0}' WHERE id = 1;
SELECT m, odp_try(format('SELECT * FROM odp_top_outliers(%L, k => 1, method => %L)', 'huge', m))
FROM unnest(ARRAY['auto', 'bruteforce', 'solvingset']) m ORDER BY m;

DROP TABLE scatter, grid, same, big, huge;
DROP FUNCTION method_diff(text, int, int, text, text, text);
DROP FUNCTION solving_set_check(text, int, int);
DROP FUNCTION odp_try(text);
DROP EXTENSION odp_gpu;
