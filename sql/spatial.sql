-- The spatial path (odp_gpu.spatial) for rows of 1 to 3 dimensions:
-- k-NN lists, joins, outlier scores and top outliers give the rows, order
-- and distances of an oracle written in SQL (every pair, ORDER BY
-- distance, id) and of odp_gpu.spatial = off, on data with ties on every
-- boundary (integer lattices, duplicate rows), two far clusters, in
-- float8 and real; NULL, NaN and infinity are refused as on the other
-- paths.
CREATE EXTENSION odp_gpu;
SET extra_float_digits = 0;

-- A 23 x 17 integer lattice, its first 209 points twice (600 rows).
CREATE TABLE sp_lat (id bigint PRIMARY KEY, x float8, y float8);
INSERT INTO sp_lat SELECT i, i % 23, (i / 23) % 17 FROM generate_series(0, 599) i;
-- The same as real, and a 3-D set of two clusters 10^6 apart.
CREATE TABLE sp_lat32 (id bigint PRIMARY KEY, f real[]);
INSERT INTO sp_lat32 SELECT id, ARRAY[x, y]::real[] FROM sp_lat;
CREATE TABLE sp_far (id bigint PRIMARY KEY, x float8, y float8, z float8);
INSERT INTO sp_far
	SELECT i, (i % 2) * 1e6 + (i * 7919 % 101) / 8.0, (i * 104729 % 97) / 8.0, (i % 5) / 4.0
	FROM generate_series(1, 500) i;

-- The oracle's self-join lists, euclidean, in float8 (terms added in
-- column order, as the engine adds them).
CREATE FUNCTION sp_oracle_lat(kk int) RETURNS TABLE (query_id bigint, rank int, id bigint, distance float8)
LANGUAGE sql AS $$
	SELECT qid, rk::int, nid, d FROM (
		SELECT a.id AS qid, b.id AS nid, d,
			   row_number() OVER (PARTITION BY a.id ORDER BY d, b.id) AS rk
		FROM sp_lat a CROSS JOIN LATERAL (
			SELECT b.id, sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)) AS d
			FROM sp_lat b WHERE b.id <> a.id) b) s
	WHERE rk <= kk
$$;

SET odp_gpu.spatial = on;
-- k-NN self join of the lattice, k = 9 and k = 40: every list as the oracle's.
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE o.id IS NULL OR j.id IS DISTINCT FROM o.id OR j.distance IS DISTINCT FROM o.distance) AS differ
FROM odp_knn_join('sp_lat', 'sp_lat', k => 9) j
FULL JOIN sp_oracle_lat(9) o USING (query_id, rank);
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE o.id IS NULL OR j.id IS DISTINCT FROM o.id OR j.distance IS DISTINCT FROM o.distance) AS differ
FROM odp_knn_join('sp_lat', 'sp_lat', k => 40) j
FULL JOIN sp_oracle_lat(40) o USING (query_id, rank);
-- Outlier scores: the oracle's sums of the 6 nearest distances.
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE abs(s.score - o.score) > 1e-12 * greatest(o.score, 1)) AS differ
FROM odp_outlier_scores('sp_lat', k => 6) s
JOIN (SELECT query_id AS id, sum(distance) AS score FROM sp_oracle_lat(6) GROUP BY 1) o USING (id);
-- Top outliers: method spatial, auto and bruteforce name the same rows and scores.
CREATE TABLE sp_top_spatial AS SELECT * FROM odp_top_outliers('sp_lat', k => 6, n => 12, method => 'spatial');
CREATE TABLE sp_top_brute AS SELECT * FROM odp_top_outliers('sp_lat', k => 6, n => 12, method => 'bruteforce');
SELECT count(*) AS rows, count(*) FILTER (WHERE a IS DISTINCT FROM b) AS differ
FROM sp_top_spatial a FULL JOIN sp_top_brute b USING (rank);
SELECT rank, id, round(score::numeric, 6) AS score FROM sp_top_spatial ORDER BY rank LIMIT 4;

-- Every metric, float8 and real, against the brute force (odp_gpu.spatial = off).
CREATE FUNCTION sp_same(src text, kk int, m text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	differ bigint;
BEGIN
	SET LOCAL odp_gpu.spatial = on;
	CREATE TEMP TABLE sp_a ON COMMIT DROP AS
		SELECT * FROM odp_knn_join(src, src, k => kk, metric => m);
	CREATE TEMP TABLE sp_sa ON COMMIT DROP AS
		SELECT * FROM odp_outlier_scores(src, k => kk, metric => m);
	SET LOCAL odp_gpu.spatial = off;
	CREATE TEMP TABLE sp_b ON COMMIT DROP AS
		SELECT * FROM odp_knn_join(src, src, k => kk, metric => m);
	CREATE TEMP TABLE sp_sb ON COMMIT DROP AS
		SELECT * FROM odp_outlier_scores(src, k => kk, metric => m);
	SELECT (SELECT count(*) FROM sp_a a FULL JOIN sp_b b USING (query_id, rank)
			WHERE a.id IS DISTINCT FROM b.id OR a.distance IS DISTINCT FROM b.distance)
		 + (SELECT count(*) FROM sp_sa a FULL JOIN sp_sb b USING (id)
			WHERE a.score IS DISTINCT FROM b.score)
	INTO differ;
	DROP TABLE sp_a, sp_b, sp_sa, sp_sb;
	RETURN differ;
END
$$;
SELECT src, m, sp_same(src, 7, m) AS differ
FROM unnest(ARRAY['sp_lat', 'sp_lat32', 'sp_far']) src,
	 unnest(ARRAY['euclidean', 'sqeuclidean', 'manhattan', 'chebyshev']) m
ORDER BY 1, 2;

-- A join of other queries: 50 lattice points shifted by a quarter.
CREATE TABLE sp_q (id bigint PRIMARY KEY, x float8, y float8);
INSERT INTO sp_q SELECT i, i % 23 + 0.25, i % 17 + 0.25 FROM generate_series(1, 50) i;
SELECT count(*) AS rows,
	   count(*) FILTER (WHERE o.id IS NULL OR j.id IS DISTINCT FROM o.id OR j.distance IS DISTINCT FROM o.distance) AS differ
FROM odp_knn_join('sp_q', 'sp_lat', k => 5) j
FULL JOIN (SELECT qid AS query_id, rk::int AS rank, nid AS id, d AS distance FROM (
			SELECT q.id AS qid, b.id AS nid, b.d,
				   row_number() OVER (PARTITION BY q.id ORDER BY b.d, b.id) AS rk
			FROM sp_q q CROSS JOIN LATERAL (
				SELECT b.id, sqrt((q.x - b.x) * (q.x - b.x) + (q.y - b.y) * (q.y - b.y)) AS d
				FROM sp_lat b) b) s WHERE rk <= 5) o USING (query_id, rank);

-- Settings: auto is the default; off keeps the brute force.
RESET odp_gpu.spatial;
SHOW odp_gpu.spatial;
SET odp_gpu.spatial = sometimes;

-- Refusals: method spatial needs 1 .. 3 dimensions, a distance it bounds and k <= 128.
CREATE TABLE sp_four (id bigint PRIMARY KEY, f real[]);
INSERT INTO sp_four SELECT i, ARRAY[i, i % 7, i % 5, i % 3]::real[] FROM generate_series(1, 50) i;
SELECT * FROM odp_top_outliers('sp_four', k => 3, n => 2, method => 'spatial');
SELECT * FROM odp_top_outliers('sp_q', k => 3, n => 2, metric => 'cosine', method => 'spatial');
SELECT * FROM odp_top_outliers('sp_lat', k => 129, n => 2, method => 'spatial');
SELECT * FROM odp_top_outliers('sp_lat', k => 3, n => 2, method => 'nearest');
-- NULL, NaN and infinity are refused on this path as on the others.
SET odp_gpu.spatial = on;
INSERT INTO sp_lat VALUES (1000, 'NaN', 1);
SELECT count(*) FROM odp_outlier_scores('sp_lat', k => 3);
UPDATE sp_lat SET x = 'Infinity' WHERE id = 1000;
SELECT count(*) FROM odp_outlier_scores('sp_lat', k => 3);
UPDATE sp_lat SET x = NULL WHERE id = 1000;
SELECT count(*) FROM odp_outlier_scores('sp_lat', k => 3);

DROP FUNCTION sp_oracle_lat(int), sp_same(text, int, text);
DROP TABLE sp_lat, sp_lat32, sp_far, sp_q, sp_four, sp_top_spatial, sp_top_brute;
DROP EXTENSION odp_gpu;
