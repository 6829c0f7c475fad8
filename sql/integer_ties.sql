-- Integer-valued data with massive ties: 0/1 rows, Poker-like rows (suits
-- 1 .. 4, ranks 1 .. 13) in integer columns, copies of three rows,
-- negative integers.  odp_knn_join, odp_knn, odp_outlier_scores and
-- odp_top_outliers (every method) against oracles written in SQL, for
-- every metric (cosine where no row is zero): the same ids in the same
-- order, ties by smaller id, and the same values, compared exactly.
--
-- The engine computes smallint and real features in float32 and integer
-- ones (it_negs) in float64, the precision they are stored in.  On small
-- integers every sum it accumulates is exact, so the oracle's double
-- precision sums (rounded to real for float32 rows) are its values (a
-- square root of a double rounded to real is the correctly rounded
-- float32 root), and cosine is computed in the rows' precision in the
-- engine's order: 1 - dot / (|x| * |y|), clamped to [0, 2].  A score is
-- the sum of the k smallest of those values, added in double precision in
-- ascending order, as the engine adds them.
CREATE EXTENSION odp_gpu;
SET extra_float_digits = 0;

-- Reproducible bytes: byte j (0 .. 15) of the MD5 of a text.
CREATE FUNCTION it_byte(seed text, j int) RETURNS int
LANGUAGE sql IMMUTABLE AS $$ SELECT get_byte(decode(md5(seed), 'hex'), j) $$;

-- 0/1 rows of 20 dimensions (smallint[]), each row's share of ones from
-- 5% to 95%; rows 121 .. 150 copy rows 1 .. 30.
CREATE TABLE it_bits (id int PRIMARY KEY, f smallint[]);
INSERT INTO it_bits
	SELECT i, array(SELECT (it_byte('b' || i || '.' || j / 16, j % 16) % 100 < 5 + (i % 10) * 10)::int::smallint
					FROM generate_series(0, 19) j)
	FROM generate_series(1, 120) i;
INSERT INTO it_bits SELECT id + 120, f FROM it_bits WHERE id <= 30;
-- Poker-like hands: five (suit, rank) pairs in smallint columns; rows
-- 121 .. 150 copy rows 1 .. 30.
CREATE TABLE it_poker (id int PRIMARY KEY, s1 smallint, r1 smallint, s2 smallint, r2 smallint,
	s3 smallint, r3 smallint, s4 smallint, r4 smallint, s5 smallint, r5 smallint);
INSERT INTO it_poker
	SELECT i, 1 + it_byte('p' || i, 0) % 4, 1 + it_byte('p' || i, 1) % 13,
		   1 + it_byte('p' || i, 2) % 4, 1 + it_byte('p' || i, 3) % 13,
		   1 + it_byte('p' || i, 4) % 4, 1 + it_byte('p' || i, 5) % 13,
		   1 + it_byte('p' || i, 6) % 4, 1 + it_byte('p' || i, 7) % 13,
		   1 + it_byte('p' || i, 8) % 4, 1 + it_byte('p' || i, 9) % 13
	FROM generate_series(1, 120) i;
INSERT INTO it_poker SELECT id + 120, s1, r1, s2, r2, s3, r3, s4, r4, s5, r5 FROM it_poker WHERE id <= 30;
-- 40 copies of each of three rows (real[]), interleaved.
CREATE TABLE it_protos (id int PRIMARY KEY, f real[]);
INSERT INTO it_protos
	SELECT i, CASE i % 3 WHEN 1 THEN '{3, 1, 4, 1, 5, 9}'::real[] WHEN 2 THEN '{2, 7, 1, 8, 2, 8}'
					   ELSE '{-1, -2, -3, -4, -5, -6}' END
	FROM generate_series(1, 120) i;
-- Negative integers -9 .. -1 in 4 dimensions (integer[], bigint ids).
CREATE TABLE it_negs (id bigint PRIMARY KEY, f integer[]);
INSERT INTO it_negs
	SELECT i, array(SELECT -1 - it_byte('n' || i, j) % 9 FROM generate_series(0, 3) j)
	FROM generate_series(1, 120) i;
-- Seven queries per table: copies of three rows, four new rows.
CREATE TABLE it_bits_q (id int PRIMARY KEY, f smallint[]);
INSERT INTO it_bits_q VALUES (1001, (SELECT f FROM it_bits WHERE id = 1)),
	(1002, (SELECT f FROM it_bits WHERE id = 2)), (1003, (SELECT f FROM it_bits WHERE id = 77));
INSERT INTO it_bits_q
	SELECT 1000 + i, array(SELECT (it_byte('bq' || i, j % 16) % 100 < 20 * (i - 3))::int::smallint
						   FROM generate_series(0, 19) j)
	FROM generate_series(4, 7) i;
CREATE TABLE it_poker_q (LIKE it_poker INCLUDING ALL);
INSERT INTO it_poker_q
	SELECT 1000 + row_number() OVER (ORDER BY id), s1, r1, s2, r2, s3, r3, s4, r4, s5, r5
	FROM it_poker WHERE id IN (3, 60, 119);
INSERT INTO it_poker_q VALUES (1004, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), (1005, 4, 13, 4, 13, 4, 13, 4, 13, 4, 13),
	(1006, 2, 7, 3, 7, 2, 7, 3, 7, 2, 7), (1007, 1, 10, 1, 11, 1, 12, 1, 13, 1, 1);
CREATE TABLE it_protos_q (id int PRIMARY KEY, f real[]);
INSERT INTO it_protos_q VALUES (1001, '{3, 1, 4, 1, 5, 9}'), (1002, '{2, 7, 1, 8, 2, 8}'),
	(1003, '{-1, -2, -3, -4, -5, -6}'), (1004, '{3, 1, 4, 1, 5, 8}'), (1005, '{0, 0, 0, 0, 0, 1}'),
	(1006, '{2, 7, 1, 8, 2, 9}'), (1007, '{1, 1, 1, 1, 1, 1}');
CREATE TABLE it_negs_q (id bigint PRIMARY KEY, f integer[]);
INSERT INTO it_negs_q
	SELECT 1000 + row_number() OVER (ORDER BY id), f FROM it_negs WHERE id IN (5, 50, 120);
INSERT INTO it_negs_q VALUES (1004, '{-1, -1, -1, -1}'), (1005, '{-9, -9, -9, -9}'),
	(1006, '{-5, -5, -5, -5}'), (1007, '{-1, -9, -1, -9}');
SELECT (SELECT count(*) FROM it_bits) AS bits, (SELECT count(DISTINCT f) FROM it_bits) AS distinct_bits,
	   (SELECT count(*) FILTER (WHERE 1 <> ALL (f)) FROM it_bits) AS zero_rows,
	   (SELECT count(DISTINCT (s1, r1, s2, r2, s3, r3, s4, r4, s5, r5)) FROM it_poker) AS distinct_hands,
	   (SELECT count(DISTINCT f) FROM it_protos) AS distinct_protos,
	   (SELECT count(DISTINCT f) FROM it_negs) AS distinct_negs;

-- The oracle.  Every value of every table, one per row: (data set, the
-- data set its rows are compared with, id, dimension, value); a query
-- table's data set is its table's with _q.
CREATE TABLE it_long (ds text COLLATE "C", src text COLLATE "C", id bigint, dim int, v float8);
INSERT INTO it_long
	SELECT 'bits', 'bits', id, d, v FROM it_bits, unnest(f) WITH ORDINALITY u(v, d)
	UNION ALL SELECT 'bits_q', 'bits', id, d, v FROM it_bits_q, unnest(f) WITH ORDINALITY u(v, d)
	UNION ALL SELECT 'poker', 'poker', id, d, v FROM it_poker,
		unnest(ARRAY[s1, r1, s2, r2, s3, r3, s4, r4, s5, r5]) WITH ORDINALITY u(v, d)
	UNION ALL SELECT 'poker_q', 'poker', id, d, v FROM it_poker_q,
		unnest(ARRAY[s1, r1, s2, r2, s3, r3, s4, r4, s5, r5]) WITH ORDINALITY u(v, d)
	UNION ALL SELECT 'protos', 'protos', id, d, v FROM it_protos, unnest(f) WITH ORDINALITY u(v, d)
	UNION ALL SELECT 'protos_q', 'protos', id, d, v FROM it_protos_q, unnest(f) WITH ORDINALITY u(v, d)
	UNION ALL SELECT 'negs', 'negs', id, d, v FROM it_negs, unnest(f) WITH ORDINALITY u(v, d)
	UNION ALL SELECT 'negs_q', 'negs', id, d, v FROM it_negs_q, unnest(f) WITH ORDINALITY u(v, d);
ANALYZE it_long;
-- Each query's 64 nearest rows under every metric, nearest first, ties
-- by smaller id, at the engine's distances (float64 for it_negs, float32
-- for the others): a table's rows
-- against the table itself (a row is not its own neighbour) and against
-- its queries.
CREATE TABLE it_ref AS
WITH pairs AS (
	SELECT q.ds AS qds, q.src, q.id AS qid, p.id,
		   sum((q.v - p.v) * (q.v - p.v)) AS sq, sum(abs(q.v - p.v)) AS l1,
		   max(abs(q.v - p.v)) AS linf, sum(q.v * p.v) AS dot
	FROM it_long q JOIN it_long p ON p.ds = q.src AND p.dim = q.dim
	WHERE p.ds <> q.ds OR p.id <> q.id
	GROUP BY 1, 2, 3, 4),
norms AS (SELECT ds, id, sqrt(sum(v * v))::real AS norm, sqrt(sum(v * v)) AS norm64
		  FROM it_long GROUP BY 1, 2),
dists AS (
	SELECT qds, qid, p.id, m AS metric,
		   CASE WHEN p.src = 'negs' THEN
			   CASE m
				   WHEN 'euclidean' THEN sqrt(sq)
				   WHEN 'sqeuclidean' THEN sq
				   WHEN 'manhattan' THEN l1
				   WHEN 'chebyshev' THEN linf
				   WHEN 'cosine' THEN greatest(0, least(2, 1 - dot / (qn.norm64 * pn.norm64)))
			   END
		   ELSE
			   CASE m
				   WHEN 'euclidean' THEN sqrt(sq)::real
				   WHEN 'sqeuclidean' THEN sq::real
				   WHEN 'manhattan' THEN l1::real
				   WHEN 'chebyshev' THEN linf::real
				   WHEN 'cosine' THEN greatest(0::real, least(2::real,
						1::real - dot::real / (qn.norm * pn.norm)))
			   END::float8
		   END AS d
	FROM pairs p
	JOIN norms qn ON qn.ds = p.qds AND qn.id = p.qid
	JOIN norms pn ON pn.ds = p.src AND pn.id = p.id,
		 unnest(ARRAY['euclidean', 'sqeuclidean', 'manhattan', 'chebyshev', 'cosine']::text[] COLLATE "C") m
	WHERE m <> 'cosine' OR p.src <> 'bits')
SELECT * FROM (
	SELECT qds, metric, qid, id, d,
		   row_number() OVER (PARTITION BY qds, metric, qid ORDER BY d, id) AS rank
	FROM dists) s
WHERE rank <= 64;
CREATE INDEX ON it_ref (qds, metric, qid, rank);
-- Every row's score for k = 1, 5, 20 and 64: its k smallest distances
-- added in ascending order.
CREATE TABLE it_scores AS
SELECT qds AS ds, metric, k, qid AS id, sum(d ORDER BY rank) AS score
FROM it_ref, unnest(ARRAY[1, 5, 20, 64]) k
WHERE qds NOT LIKE '%\_q' AND rank <= k
GROUP BY 1, 2, 3, 4;
CREATE INDEX ON it_scores (ds, metric, k);
SELECT qds, metric, count(DISTINCT qid) AS queries, count(*) AS entries,
	   count(*) - count(DISTINCT (qid, d)) AS tied_entries
FROM it_ref WHERE rank <= 10 GROUP BY 1, 2 ORDER BY 1, 2;
-- The cases: data set, metric, and the table names.
CREATE TABLE it_cases AS
SELECT ds, m AS metric, 'it_' || ds AS src, 'it_' || ds || '_q' AS queries
FROM unnest(ARRAY['bits', 'negs', 'poker', 'protos']::text[] COLLATE "C") ds,
	 unnest(ARRAY['euclidean', 'sqeuclidean', 'manhattan', 'chebyshev', 'cosine']::text[] COLLATE "C") m
WHERE m <> 'cosine' OR ds <> 'bits';

-- Ties, shown: the copies of a row come first, by id, at distance 0.
SELECT * FROM odp_knn('it_protos', '{3, 1, 4, 1, 5, 9}', k => 4);
SELECT * FROM odp_knn_join('SELECT id, f FROM it_protos_q WHERE id = 1004', 'it_protos', k => 3,
						   metric => 'manhattan');
SELECT rank, id, score FROM odp_top_outliers('it_protos', k => 50, n => 4);

-- odp_knn_join: self joins (k = 1, 10 and 64) and query tables (k = 10
-- and 64).  A row differs when its id, rank or distance does, or it is
-- missing on either side.
SELECT c.ds, c.metric, count(*) AS rows, count(*) FILTER (WHERE x.bad) AS mismatches
FROM it_cases c, (VALUES (true, 1), (true, 10), (true, 64), (false, 10), (false, 64)) v(self, k),
	 LATERAL (
		SELECT o.id IS DISTINCT FROM r.id OR o.distance IS DISTINCT FROM r.d AS bad
		FROM odp_knn_join(CASE WHEN self THEN c.src ELSE c.queries END, c.src,
						  k => k, metric => c.metric) o
		FULL JOIN (SELECT * FROM it_ref
				   WHERE qds = c.ds || CASE WHEN self THEN '' ELSE '_q' END
					 AND metric = c.metric AND rank <= k) r
			ON r.qid = o.query_id AND r.rank = o.rank) x
GROUP BY 1, 2 ORDER BY 1, 2;

-- odp_knn: queries alone (a copy of a row and a new row), k = 64.
SELECT c.ds, c.metric, count(*) AS rows, count(*) FILTER (WHERE x.bad) AS mismatches
FROM it_cases c, (VALUES (64)) v(k),
	 LATERAL (SELECT id AS qid, array_agg(v ORDER BY dim) AS v FROM it_long
			  WHERE ds = c.ds || '_q' AND id IN (1001, 1004) GROUP BY id) q,
	 LATERAL (
		SELECT o.id IS DISTINCT FROM r.id OR o.distance IS DISTINCT FROM r.d AS bad
		FROM odp_knn(c.src, q.v, k => k, metric => c.metric) o
		FULL JOIN (SELECT * FROM it_ref
				   WHERE qds = c.ds || '_q' AND qid = q.qid AND metric = c.metric AND rank <= k) r
			ON r.rank = o.rank) x
GROUP BY 1, 2 ORDER BY 1, 2;

-- odp_outlier_scores: every row's score, k = 1, 20 and 64.
SELECT c.ds, c.metric, count(*) AS rows, count(*) FILTER (WHERE x.bad) AS mismatches
FROM it_cases c, unnest(ARRAY[1, 20, 64]) kk,
	 LATERAL (
		SELECT o.score IS DISTINCT FROM r.score AS bad
		FROM odp_outlier_scores(c.src, k => kk, metric => c.metric) o
		FULL JOIN (SELECT * FROM it_scores s WHERE s.ds = c.ds AND s.metric = c.metric AND s.k = kk) r
			ON r.id = o.id) x
GROUP BY 1, 2 ORDER BY 1, 2;

-- odp_top_outliers: the 15 highest scores, ties by smaller id, k = 5
-- and 20, by auto and by SolvingSet.
SELECT c.ds, c.metric, count(*) AS rows, count(*) FILTER (WHERE x.bad) AS mismatches
FROM it_cases c, unnest(ARRAY[5, 20]) kk, unnest(ARRAY['auto', 'solvingset']) method,
	 LATERAL (
		SELECT o.id IS DISTINCT FROM r.id OR o.score IS DISTINCT FROM r.score AS bad
		FROM odp_top_outliers(c.src, k => kk, n => 15, metric => c.metric, method => method) o
		FULL JOIN (SELECT s.id, s.score, row_number() OVER (ORDER BY s.score DESC, s.id) AS rank
				   FROM it_scores s WHERE s.ds = c.ds AND s.metric = c.metric AND s.k = kk
				   ORDER BY s.score DESC, s.id LIMIT 15) r
			ON r.rank = o.rank) x
GROUP BY 1, 2 ORDER BY 1, 2;

-- The CPU path, forced, gives the same rows as whatever auto picks.
SET odp_gpu.device = cpu;
CREATE TEMP TABLE it_cpu AS
	SELECT * FROM odp_knn_join('it_poker', 'it_poker', k => 64, metric => 'sqeuclidean');
RESET odp_gpu.device;
SELECT count(*) AS rows, count(*) FILTER (WHERE c IS DISTINCT FROM a) AS differences
FROM it_cpu c FULL JOIN odp_knn_join('it_poker', 'it_poker', k => 64, metric => 'sqeuclidean') a
	ON (a.query_id, a.rank) = (c.query_id, c.rank);

DROP TABLE it_cpu, it_cases, it_scores, it_ref, it_long;
DROP TABLE it_bits, it_bits_q, it_poker, it_poker_q, it_protos, it_protos_q, it_negs, it_negs_q;
DROP FUNCTION it_byte(text, int);
DROP EXTENSION odp_gpu;
