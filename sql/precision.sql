-- Distances in the precision the features are stored in: float8,
-- numeric, integer and bigint features (or a mix including one) are
-- computed in float64, real, smallint and pgvector's types in float32.
-- Every distance function against an oracle written in SQL in double
-- precision (2-dimensional rows, so that the oracle adds the terms in the
-- engine's order): the same top-n rows and k-NN lists (ORDER BY distance,
-- id), scores and distances within 1e-12 relative.  The same rows as
-- real[] stay float32 (against an oracle in real arithmetic), and
-- odp_gpu.distance_precision = float32 gives the float32 answers back.
CREATE EXTENSION odp_gpu;
SET extra_float_digits = 0;

-- Reproducible numbers 0 .. 65535 from a text.
CREATE FUNCTION pr_h(seed text) RETURNS int
LANGUAGE sql IMMUTABLE AS $$
	SELECT get_byte(decode(md5(seed), 'hex'), 0) * 256 + get_byte(decode(md5(seed), 'hex'), 1)
$$;

-- The data sets, as their tables store them.
-- Payments: epoch seconds (about 1.7e9, which float32 holds to 128 s)
-- and amounts in cents, with planted outliers.
CREATE TABLE pr_pay (id bigint PRIMARY KEY, ts bigint, amount numeric(14,2));
INSERT INTO pr_pay
	SELECT i, 1700000000 + i * 61 + pr_h('t' || i) % 40, 10 + (pr_h('a' || i) % 9000) / 100.0
	FROM generate_series(1, 300) i;
INSERT INTO pr_pay VALUES (9001, 1700009000, 950.00), (9002, 1700012000, 700.00),
	(9003, 1700000000 + 150 * 61 + 37, 140.55);
-- Projected coordinates in metres, centimetre detail.
CREATE TABLE pr_metres (id bigint PRIMARY KEY, e float8, n float8);
INSERT INTO pr_metres
	SELECT i, 500000 + pr_h('e' || i) / 100.0, 4500000 + pr_h('n' || i) / 100.0
	FROM generate_series(1, 150) i;
INSERT INTO pr_metres VALUES (9001, 501200.07, 4500300.11), (9002, 499700.55, 4500900.01);
-- Two clusters at a 10^6 offset, spread 0.01.
CREATE TABLE pr_cluster (id bigint PRIMARY KEY, x float8, y float8);
INSERT INTO pr_cluster
	SELECT i, 1e6 + (i % 2) * 0.02 + (pr_h('x' || i) % 2001 - 1000) / 1e5,
		   1e6 + (pr_h('y' || i) % 2001 - 1000) / 1e5
	FROM generate_series(1, 150) i;
-- Magnitudes near 10^18 (bigint), a million apart.
CREATE TABLE pr_huge (id bigint PRIMARY KEY, a bigint, b bigint);
INSERT INTO pr_huge
	SELECT i, 1000000000000000000 + pr_h('ha' || i)::bigint * 1000003,
		   1000000000000000000 - pr_h('hb' || i)::bigint * 999983
	FROM generate_series(1, 150) i;
-- numeric(20,6) near 10^8.
CREATE TABLE pr_num (id bigint PRIMARY KEY, a numeric(20,6), b numeric(20,6));
INSERT INTO pr_num
	SELECT i, 100000000 + pr_h('na' || i) / 1e6 + pr_h('nc' || i) % 7,
		   -100000000 + pr_h('nb' || i) / 1e6
	FROM generate_series(1, 150) i;
-- A real column beside a float8 one: float64.
CREATE TABLE pr_mixed (id bigint PRIMARY KEY, a real, b float8);
INSERT INTO pr_mixed
	SELECT i, (pr_h('ma' || i) % 1000)::real / 7, 1e6 + pr_h('mb' || i) / 1e4
	FROM generate_series(1, 150) i;
-- Timestamps, read by a query source as extract(epoch FROM ts) (numeric).
CREATE TABLE pr_events (id bigint PRIMARY KEY, ts timestamptz, amount float8);
INSERT INTO pr_events
	SELECT i, timestamptz '2023-11-14 22:13:20+00' + (i * 47 + pr_h('v' || i) % 30) * interval '1 second'
			  + (pr_h('us' || i) % 1000) * interval '1 millisecond',
		   (pr_h('w' || i) % 5000) / 100.0
	FROM generate_series(1, 150) i;
-- The payments as real[]: float32, as before.
CREATE TABLE pr_pay_real (id bigint PRIMARY KEY, f real[]);
INSERT INTO pr_pay_real SELECT id, ARRAY[ts, amount]::real[] FROM pr_pay;

-- Every data set's rows as the engine reads them: (data set, source, id,
-- x, y) in float64, and the float32 values where the set is float32.
CREATE TABLE pr_rows (ds text COLLATE "C", src text, id bigint, x float8, y float8,
					  x4 real, y4 real);
INSERT INTO pr_rows (ds, src, id, x, y)
	SELECT 'pay', 'pr_pay', id, ts::float8, amount::float8 FROM pr_pay
	UNION ALL SELECT 'metres', 'pr_metres', id, e, n FROM pr_metres
	UNION ALL SELECT 'cluster', 'pr_cluster', id, x, y FROM pr_cluster
	UNION ALL SELECT 'huge', 'pr_huge', id, a::float8, b::float8 FROM pr_huge
	UNION ALL SELECT 'num', 'pr_num', id, a::float8, b::float8 FROM pr_num
	UNION ALL SELECT 'mixed', 'pr_mixed', id, a::float8, b FROM pr_mixed
	UNION ALL SELECT 'events', 'SELECT id, extract(epoch FROM ts) AS t, amount FROM pr_events',
					 id, extract(epoch FROM ts)::float8, amount FROM pr_events;
INSERT INTO pr_rows
	SELECT 'pay_real', 'pr_pay_real', id, f[1], f[2], f[1], f[2] FROM pr_pay_real;
SELECT ds, count(*) AS rows, count(DISTINCT (x, y)) AS distinct_rows FROM pr_rows GROUP BY ds ORDER BY ds;

-- The distance of two rows under a metric, as the engine defines it, in
-- float64 (x4 NULL) or in real arithmetic (float32 rows).
CREATE FUNCTION pr_dist(metric text, ax float8, ay float8, bx float8, by_ float8,
						ax4 real, ay4 real, bx4 real, by4 real) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN ax4 IS NOT NULL THEN
			sqrt(((ax4 - bx4) * (ax4 - bx4) + (ay4 - by4) * (ay4 - by4))::float8)::real::float8
		WHEN metric = 'euclidean' THEN sqrt((ax - bx) * (ax - bx) + (ay - by_) * (ay - by_))
		WHEN metric = 'chebyshev' THEN greatest(abs(ax - bx), abs(ay - by_))
		WHEN metric = 'cosine' THEN
			greatest(0, least(2, 1 - (ax * bx + ay * by_) /
								 (sqrt(ax * ax + ay * ay) * sqrt(bx * bx + by_ * by_))))
	END
$$;

-- The oracle: every pair's distance (euclidean; chebyshev and cosine too
-- on the metres), a row with itself included; each row's 10 nearest
-- other rows, nearest first, ties by smaller id; every row's score for
-- k = 5 (its 5 smallest distances added ascending); the weights of rows
-- 1 .. 20 against their whole set, themselves included, for k = 6; row
-- 7's 10 nearest rows, itself included.
CREATE TABLE pr_pair AS
SELECT q.ds, m AS metric, q.id AS qid, p.id,
	   pr_dist(m, q.x, q.y, p.x, p.y, q.x4, q.y4, p.x4, p.y4) AS d
FROM pr_rows q JOIN pr_rows p ON p.ds = q.ds,
	 unnest(ARRAY['euclidean', 'chebyshev', 'cosine']) m
WHERE m = 'euclidean' OR q.ds = 'metres';
CREATE TABLE pr_ref AS
SELECT * FROM (
	SELECT ds, metric, qid, id, d,
		   row_number() OVER (PARTITION BY ds, metric, qid ORDER BY d, id) AS rank
	FROM pr_pair WHERE id <> qid) s
WHERE rank <= 10;
CREATE TABLE pr_score AS
SELECT ds, metric, qid AS id, sum(d ORDER BY rank) AS score
FROM pr_ref WHERE rank <= 5 GROUP BY 1, 2, 3;
CREATE TABLE pr_weight AS
SELECT ds, metric, qid AS id, sum(d ORDER BY rank) AS weight
FROM (SELECT ds, metric, qid, d, row_number() OVER (PARTITION BY ds, metric, qid ORDER BY d, id) AS rank
	  FROM pr_pair WHERE qid <= 20) s
WHERE rank <= 6 GROUP BY 1, 2, 3;
CREATE TABLE pr_knn7 AS
SELECT * FROM (
	SELECT ds, metric, id, d, row_number() OVER (PARTITION BY ds, metric ORDER BY d, id) AS rank
	FROM pr_pair WHERE qid = 7) s
WHERE rank <= 10;

-- Whether a value is within 1e-12 relative of the oracle's.
CREATE FUNCTION pr_close(v float8, ref float8) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$ SELECT abs(v - ref) <= 1e-12 * abs(ref) $$;

-- The checks of one data set and metric: rows (or list entries) that
-- differ from the oracle, for each function.
CREATE FUNCTION pr_check(set text, metric text,
	OUT scores bigint, OUT top_auto bigint, OUT top_bruteforce bigint,
	OUT top_solvingset bigint, OUT solving_set bigint, OUT knn_join bigint,
	OUT knn bigint, OUT predict bigint)
LANGUAGE sql STABLE AS $$
	WITH src AS (SELECT DISTINCT src FROM pr_rows WHERE ds = set),
	top AS (SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
			FROM pr_score s WHERE s.ds = set AND s.metric = pr_check.metric),
	q AS (SELECT ARRAY[x, y] AS v FROM pr_rows WHERE ds = set AND id = 7)
	SELECT
		(SELECT count(*) FILTER (WHERE o.score IS NULL OR s.score IS NULL OR NOT pr_close(o.score, s.score))
		 FROM odp_outlier_scores((TABLE src), k => 5, metric => metric) o
		 FULL JOIN (SELECT * FROM pr_score s WHERE s.ds = set AND s.metric = pr_check.metric) s
			 USING (id)),
		(SELECT count(*) FILTER (WHERE o.id IS DISTINCT FROM t.id OR NOT pr_close(o.score, t.score))
		 FROM odp_top_outliers((TABLE src), k => 5, n => 10, metric => metric) o
		 FULL JOIN (SELECT * FROM top WHERE rank <= 10) t USING (rank)),
		(SELECT count(*) FILTER (WHERE o.id IS DISTINCT FROM t.id OR NOT pr_close(o.score, t.score))
		 FROM odp_top_outliers((TABLE src), k => 5, n => 10, metric => metric,
							   method => 'bruteforce') o
		 FULL JOIN (SELECT * FROM top WHERE rank <= 10) t USING (rank)),
		(SELECT count(*) FILTER (WHERE o.id IS DISTINCT FROM t.id OR NOT pr_close(o.score, t.score))
		 FROM odp_top_outliers((TABLE src), k => 5, n => 10, metric => metric,
							   method => 'solvingset') o
		 FULL JOIN (SELECT * FROM top WHERE rank <= 10) t USING (rank)),
		-- the solving set holds the top 10, each with its exact score
		(SELECT count(*) FILTER (WHERE t.id IS NULL OR NOT pr_close(o.score, t.score))
		 FROM odp_solving_set((TABLE src), k => 5, n => 10, metric => metric) o
		 LEFT JOIN top t USING (id))
		+ (SELECT count(*) FROM top t WHERE t.rank <= 10 AND t.id NOT IN
			  (SELECT id FROM odp_solving_set((TABLE src), k => 5, n => 10, metric => metric))),
		(SELECT count(*) FILTER (WHERE o.id IS DISTINCT FROM r.id OR NOT pr_close(o.distance, r.d))
		 FROM odp_knn_join((TABLE src), (TABLE src), k => 10, metric => metric) o
		 FULL JOIN (SELECT * FROM pr_ref r WHERE r.ds = set AND r.metric = pr_check.metric) r
			 ON r.qid = o.query_id AND r.rank = o.rank),
		-- row 7's values as the query
		(SELECT count(*) FILTER (WHERE o.id IS DISTINCT FROM r.id OR NOT (o.distance = r.d OR pr_close(o.distance, r.d)))
		 FROM odp_knn((TABLE src), (SELECT v FROM q), k => 10, metric => metric) o
		 FULL JOIN (SELECT * FROM pr_knn7 r WHERE r.ds = set AND r.metric = pr_check.metric) r
			 USING (rank)),
		-- the whole set as the model, its rows 1 .. 20 as new rows
		(SELECT count(*) FILTER (WHERE w.weight IS NULL OR NOT (o.weight = w.weight OR pr_close(o.weight, w.weight)))
		 FROM odp_outlier_predict((TABLE src), format('SELECT * FROM (%s) s WHERE id <= 20',
						CASE WHEN (TABLE src) LIKE 'SELECT%' THEN (TABLE src)
							 ELSE 'TABLE ' || (TABLE src) END),
								  k => 6, metric => metric) o
		 LEFT JOIN (SELECT * FROM pr_weight w WHERE w.ds = set AND w.metric = pr_check.metric) w
			 USING (id))
$$;

SELECT ds, metric, c.*
FROM (SELECT DISTINCT ds, metric FROM pr_score) s, LATERAL pr_check(ds, metric) c
ORDER BY ds, metric;

-- The payments' top 3: float64 finds the planted rows; float32 (the
-- real[] copy, or the setting) does not, and gives other scores.
SELECT rank, id, round(score::numeric, 6) AS score
FROM odp_top_outliers('pr_pay', k => 5, n => 3);
SELECT rank, id, round(score::numeric, 6) AS score
FROM odp_top_outliers('pr_pay_real', k => 5, n => 3);
SET odp_gpu.distance_precision = float32;
-- the setting gives exactly the float32 answers of the real[] copy
SELECT (SELECT array_agg((id, score) ORDER BY id) FROM odp_outlier_scores('pr_pay', k => 5)) =
	   (SELECT array_agg((id, score) ORDER BY id) FROM odp_outlier_scores('pr_pay_real', k => 5))
	   AS scores_same,
	   (SELECT array_agg((query_id, rank, id, distance)) FROM odp_knn_join('pr_pay', 'pr_pay', k => 5)) =
	   (SELECT array_agg((query_id, rank, id, distance)) FROM odp_knn_join('pr_pay_real', 'pr_pay_real', k => 5))
	   AS knn_same;
-- and every score differs from the exact one
SELECT count(*) AS rows, count(*) FILTER (WHERE NOT pr_close(o.score, s.score)) AS differ
FROM odp_outlier_scores('pr_pay', k => 5) o
JOIN pr_score s ON s.ds = 'pay' AND s.metric = 'euclidean' AND s.id = o.id;
-- float64 for every source, real[] too: its values are widened exactly
SET odp_gpu.distance_precision = float64;
SELECT count(*) FILTER (WHERE NOT pr_close(o.score, s.score)) AS differ
FROM odp_outlier_scores('pr_pay_real', k => 5) o
JOIN (SELECT id, sum(d ORDER BY rank) AS score
	  FROM (SELECT q.id, row_number() OVER (PARTITION BY q.id ORDER BY d, p.id) AS rank, d
			FROM pr_rows q JOIN pr_rows p ON p.ds = q.ds AND p.id <> q.id,
				 LATERAL (SELECT pr_dist('euclidean', q.x, q.y, p.x, p.y, NULL, NULL, NULL, NULL) AS d) dd
			WHERE q.ds = 'pay_real') r
	  WHERE rank <= 5 GROUP BY id) s USING (id);
RESET odp_gpu.distance_precision;

-- The aggregate decides by its vector's type: float8[] and numeric[] are
-- float64, real[] float32.
SELECT ds,
	   (SELECT array_agg(o.id ORDER BY o.rank)
		FROM unnest(odp_top_outliers_agg(r.id, ARRAY[x, y], 5, 10)) o) =
	   (SELECT array_agg(t.id ORDER BY t.score DESC, t.id)
		FROM (SELECT * FROM pr_score s WHERE s.ds = r.ds AND s.metric = 'euclidean'
			  ORDER BY score DESC, id LIMIT 10) t) AS float8_top,
	   (SELECT bool_and(pr_close(o.score, s.score))
		FROM unnest(odp_top_outliers_agg(r.id, ARRAY[x, y], 5, 10)) o
		JOIN pr_score s ON s.ds = r.ds AND s.metric = 'euclidean' AND s.id = o.id) AS float8_scores
FROM pr_rows r WHERE ds <> 'pay_real' GROUP BY ds ORDER BY ds;
SELECT odp_top_outliers_agg(id, ARRAY[ts::numeric, amount], 5, 3) =
	   odp_top_outliers_agg(id, ARRAY[ts, amount]::float8[], 5, 3) AS numeric_is_float64,
	   odp_top_outliers_agg(id, ARRAY[ts, amount]::real[], 5, 3) =
	   (SELECT array_agg(t::odp_outlier ORDER BY rank) FROM odp_top_outliers('pr_pay_real', k => 5, n => 3) t)
	   AS real_is_float32
FROM pr_pay;

-- odp_knn's query is taken in the table's precision: 0.4 s from row 9001
-- in float64; in float32 both round to the same 128 s step.
SELECT rank, id, distance FROM odp_knn('pr_pay', ARRAY[1700009000.4, 950], k => 2);
SELECT rank, id, distance FROM odp_knn('pr_pay_real', ARRAY[1700009000.4, 950], k => 2);

-- A k-NN join of float32 queries with float64 rows runs in float64.
SELECT o.query_id, o.rank, o.id, o.distance = r.d AS exact
FROM odp_knn_join('SELECT id, f[1] AS ts, f[2] AS amount FROM pr_pay_real WHERE id IN (9001, 9002)',
				  'pr_pay', k => 2) o
JOIN LATERAL (SELECT p.id, pr_dist('euclidean', q.f[1], q.f[2], p.x, p.y, NULL, NULL, NULL, NULL) AS d
			  FROM pr_pay_real q, pr_rows p
			  WHERE q.id = o.query_id AND p.ds = 'pay' AND p.id = o.id) r ON true
ORDER BY 1, 2;

-- Read by parallel workers, float64 rows are the same.
SET odp_gpu.parallel_read = force;
SELECT count(*) FILTER (WHERE NOT pr_close(o.score, s.score)) AS differ
FROM odp_outlier_scores('pr_metres', k => 5) o
JOIN pr_score s ON s.ds = 'metres' AND s.metric = 'euclidean' AND s.id = o.id;
RESET odp_gpu.parallel_read;

-- numeric beyond float64 is an error naming its row.
\i sql/include/odp_try.psql
SELECT odp_try($$SELECT * FROM odp_outlier_scores('SELECT 1 AS id, 1e400::numeric AS x UNION ALL SELECT 2, 0', k => 1)$$);

DROP FUNCTION odp_try(text), pr_check(text, text), pr_close(float8, float8),
	pr_dist(text, float8, float8, float8, float8, real, real, real, real), pr_h(text);
DROP TABLE pr_pay, pr_metres, pr_cluster, pr_huge, pr_num, pr_mixed, pr_events,
	pr_pay_real, pr_rows, pr_pair, pr_ref, pr_score, pr_weight, pr_knn7;
DROP EXTENSION odp_gpu;
