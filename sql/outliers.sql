-- Outlier scores and top-n outliers: exact values, ties, metrics checked
-- against a reference written in SQL, planted outliers, edge shapes.
CREATE EXTENSION odp_gpu;
SET extra_float_digits = 0;

-- Five points on a line: scores can be checked by hand.
CREATE TABLE line (id integer PRIMARY KEY, x float8);
INSERT INTO line VALUES (1, 0), (2, 1), (3, 2), (4, 3), (5, 10);
SELECT * FROM odp_outlier_scores('line', k => 1);
SELECT * FROM odp_outlier_scores('line', k => 2);
-- ids 1 and 4 tie at 3: the smaller id ranks first
SELECT * FROM odp_top_outliers('line', k => 2, n => 3);
-- N = k + 1: every other row is a neighbour
SELECT * FROM odp_top_outliers('line', k => 4, n => 5);
-- n larger than the table returns every row
SELECT count(*) FROM odp_top_outliers('line', k => 1, n => 100);
-- every metric on one dimension equals |x - y| (cosine aside)
SELECT m, array_agg(round(score::numeric, 6) ORDER BY id)
FROM unnest(ARRAY['euclidean', 'sqeuclidean', 'manhattan', 'chebyshev']) m,
	 LATERAL odp_outlier_scores('line', k => 2, metric => m)
GROUP BY m ORDER BY m;

-- Duplicates: ten copies of the origin and one far point.
CREATE TABLE dup (id bigint PRIMARY KEY, v real[]);
INSERT INTO dup SELECT i, '{0, 0}' FROM generate_series(1, 10) i;
INSERT INTO dup VALUES (11, '{3, 4}');
SELECT * FROM odp_top_outliers('dup', k => 3, n => 3);
SELECT id, score FROM odp_outlier_scores('dup', k => 10) WHERE id IN (1, 11);

-- A constant column changes nothing.
CREATE TABLE constcol (id int PRIMARY KEY, a float8, b float8);
INSERT INTO constcol SELECT id, x, 7 FROM line;
SELECT array_agg(id ORDER BY rank) FROM odp_top_outliers('constcol', k => 2, n => 5);

-- All metrics against a reference in SQL (float8 arithmetic): scores must
-- agree within 1e-5 relative.
CREATE TABLE pts AS
	SELECT i AS id, ((i * 37) % 101)::float8 / 7 AS a,
		   ((i * 53) % 89)::float8 / 5 - 4 AS b, ((i * 11) % 13)::float8 + 1 AS c
	FROM generate_series(1, 120) i;
ALTER TABLE pts ADD PRIMARY KEY (id);
CREATE FUNCTION ref_dist(metric text, x float8[], y float8[]) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE metric
		WHEN 'euclidean' THEN sqrt(sum((x[i] - y[i]) ^ 2))
		WHEN 'sqeuclidean' THEN sum((x[i] - y[i]) ^ 2)
		WHEN 'manhattan' THEN sum(abs(x[i] - y[i]))
		WHEN 'chebyshev' THEN max(abs(x[i] - y[i]))
		WHEN 'cosine' THEN 1 - sum(x[i] * y[i]) / (sqrt(sum(x[i] ^ 2)) * sqrt(sum(y[i] ^ 2)))
	END
	FROM generate_subscripts(x, 1) i
$$;
CREATE FUNCTION ref_scores(metric text, k int) RETURNS TABLE (id int, score float8)
LANGUAGE sql STABLE AS $$
	SELECT p.id, (SELECT sum(d) FROM (
		SELECT ref_dist(metric, ARRAY[p.a, p.b, p.c], ARRAY[q.a, q.b, q.c]) AS d
		FROM pts q WHERE q.id <> p.id ORDER BY 1 LIMIT k) s)
	FROM pts p
$$;
SELECT m, k, count(*) AS rows,
	   count(*) FILTER (WHERE abs(o.score - r.score) > 1e-5 * greatest(1, abs(r.score))) AS mismatches
FROM unnest(ARRAY['euclidean', 'sqeuclidean', 'manhattan', 'chebyshev', 'cosine']) m,
	 unnest(ARRAY[1, 5]) k,
	 LATERAL odp_outlier_scores('pts', k => k, metric => m) o
	 JOIN LATERAL ref_scores(m, k) r ON r.id = o.id
GROUP BY m, k ORDER BY m, k;
-- the top 5 agree with the reference's ranking
SELECT (SELECT array_agg(id ORDER BY rank) FROM odp_top_outliers('pts', k => 5, n => 5))
	 = (SELECT array_agg(id::bigint) FROM (SELECT id FROM ref_scores('euclidean', 5)
								  ORDER BY score DESC, id LIMIT 5) s) AS same_top5;

-- Planted outliers: a 50 x 60 grid plus four far points.
CREATE TABLE grid (id bigint PRIMARY KEY, f real[]);
INSERT INTO grid SELECT i, ARRAY[i % 50, i / 50, (i * 7) % 3]::real[] FROM generate_series(0, 2999) i;
INSERT INTO grid VALUES (10001, '{200, 200, 0}'), (10002, '{-90, 30, 1}'),
						(10003, '{25, -70, 2}'), (10004, '{60, 100, 40}');
SELECT rank, id, round(score::numeric, 3) AS score FROM odp_top_outliers('grid', k => 20, n => 6);
SELECT count(*), round(sum(score)::numeric, 2) FROM odp_outlier_scores('grid', k => 10);

-- Wide rows: D = 1000.
CREATE TABLE wide (id int PRIMARY KEY, f real[]);
INSERT INTO wide SELECT i, array(SELECT ((i * j) % 17)::real FROM generate_series(1, 1000) j)
FROM generate_series(1, 40) i;
SELECT rank, id, round(score::numeric, 2) AS score FROM odp_top_outliers('wide', k => 3, n => 3);

-- The same answer on the CPU path, forced, as on whatever auto picks.
SET odp_gpu.device = cpu;
SELECT rank, id, round(score::numeric, 3) AS score FROM odp_top_outliers('grid', k => 20, n => 6);
RESET odp_gpu.device;

-- Results join with business tables.
SELECT l.id, l.x, s.score FROM line l JOIN odp_outlier_scores('line', k => 1) s USING (id)
WHERE s.score > 2;

DROP FUNCTION ref_scores(text, int);
DROP FUNCTION ref_dist(text, float8[], float8[]);
DROP TABLE line, dup, constcol, pts, grid, wide;
DROP EXTENSION odp_gpu;
