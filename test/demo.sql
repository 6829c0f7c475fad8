-- Sample data and calls for test/demo.sh: every analytic of odp_gpu on
-- small, deterministic data (setseed and generate_series), each call
-- followed by one line, "found: ...", that states what it found, computed
-- from its result (and, where plain SQL can check it quickly, checked
-- against plain SQL).  odp_gpu.report_timing is on, so that each call also
-- says which path ran (path=gpu or path=cpu); test/demo.sh shortens that
-- NOTICE to one line.  Run by test/demo.sh; runs in any database where
-- odp_gpu can be created (it makes and drops the tables demo_*).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
SET TimeZone = 'UTC';
SELECT setseed(0.42) \g /dev/null
DROP TABLE IF EXISTS demo_points, demo_new_points, demo_returns, demo_hotels,
	demo_bookings, demo_maintenance;

-- 20,000 points in three Gaussian clusters in 4 dimensions (cluster c =
-- id % 3, centred at (10c, -5c, 0, c)), plus 5 planted outliers (ids
-- 900001 .. 900005) far from every cluster.
CREATE TABLE demo_points (id bigint PRIMARY KEY, features real[] NOT NULL);
INSERT INTO demo_points
SELECT i, ARRAY[c * 10 + g1, c * -5 + g2, g3, c + g4]::real[]
FROM (
	SELECT i, i % 3 AS c,
		   sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS g1,
		   sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS g2,
		   sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS g3,
		   sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS g4
	FROM generate_series(1, 20000) AS i
) s;
INSERT INTO demo_points VALUES
	(900001, '{40, 40, 0, 0}'),
	(900002, '{-30, 20, 5, 5}'),
	(900003, '{5, -40, -8, 1}'),
	(900004, '{10, -5, 12, -9}'),
	(900005, '{25, -25, 0, 14}');

-- 99 new points, each near the centre of cluster id % 3.
CREATE TABLE demo_new_points AS
SELECT q AS id,
	   ARRAY[c * 10 + 0.5 * sin(q), c * -5 + 0.5 * cos(q), 0.5 * sin(2 * q), c + 0.5 * cos(3 * q)]::real[] AS features
FROM (SELECT q, q % 3 AS c FROM generate_series(1, 99) AS q) s;

-- The daily returns of 12 stocks over 250 days: three sectors of four
-- (stocks 1-4, 5-8, 9-12), each stock its sector's move of the day plus a
-- smaller move of its own.
CREATE TABLE demo_returns AS
WITH sector AS (
	SELECT g, t, random() - 0.5 AS move
	FROM generate_series(0, 2) AS g, generate_series(1, 250) AS t
)
SELECT g * 4 + m + 1 AS id,
	   array_agg(move + 0.2 * (random() - 0.5) ORDER BY t)::float8[] AS daily
FROM sector, generate_series(0, 3) AS m
GROUP BY g, m;

-- 1,000 hotels: price, distance to the centre, rating (1.0 to 5.0).
CREATE TABLE demo_hotels AS
SELECT i AS id,
	   round((40 + 260 * random())::numeric, 2)::float8 AS price,
	   round((0.1 + 15 * random())::numeric, 1)::float8 AS distance_km,
	   round((1 + 4 * random())::numeric, 1)::float8 AS rating
FROM generate_series(1, 1000) AS i;

-- 2,000 room bookings of 1 to 5 hours over 90 days, and a weekly
-- maintenance window of 3 hours (Wednesdays from 02:00, 13 weeks).
CREATE TABLE demo_bookings AS
SELECT i AS id,
	   tstzrange(t0, t0 + (1 + i % 5) * interval '1 hour') AS during
FROM (SELECT i, timestamptz '2025-01-01 00:00+00' + (i * 37 % 2160) * interval '1 hour' AS t0
	  FROM generate_series(1, 2000) AS i) s;
CREATE TABLE demo_maintenance AS
SELECT w + 1 AS id,
	   tstzrange(timestamptz '2025-01-01 02:00+00' + w * interval '7 days',
				 timestamptz '2025-01-01 05:00+00' + w * interval '7 days') AS during
FROM generate_series(0, 12) AS w;
ANALYZE demo_points, demo_new_points, demo_returns, demo_hotels, demo_bookings, demo_maintenance;

-- The calls: every one says which path ran, and the GPU, where there is
-- one, takes even this small data (under auto it otherwise leaves inputs
-- below 2,048 rows to the CPU; a single k-NN query and Pearson's 12
-- series, under 16 queries, stay on the CPU either way, being faster
-- there than the copy of the rows).
SET client_min_messages = notice;
SET odp_gpu.report_timing = on;
SET odp_gpu.gpu_min_rows = 0;
\pset footer off

\echo
\echo '== The GPU: SELECT device, name, usable, detail FROM odp_gpu_info();'
SELECT device, name, usable, detail FROM odp_gpu_info();
SELECT format('found: %s', CASE WHEN bool_or(usable)
	THEN format('%s usable GPU(s) (%s): the calls below run on the GPU (path=gpu), but for the single k-NN query and the 12 series of Pearson, under 16 queries or series, which the CPU answers faster than the copy to the GPU',
				count(*) FILTER (WHERE usable), string_agg(DISTINCT name, ', ') FILTER (WHERE usable))
	ELSE 'no usable GPU: every call below runs on the CPU path (path=cpu), with the same results' END)
FROM odp_gpu_info() \g (format=unaligned tuples_only=on)

\echo
\echo '== Top outliers: the 10 of 20,005 points farthest from their 50 nearest neighbours'
\echo '   SELECT * FROM odp_top_outliers(''demo_points'', k => 50, n => 10);'
CREATE TEMP TABLE demo_top AS SELECT * FROM odp_top_outliers('demo_points', k => 50, n => 10);
SELECT rank, id, round(score::numeric, 2) AS score FROM demo_top ORDER BY rank;
SELECT format('found: %s of the 5 planted outliers (900001-900005) among the top 10, at ranks %s',
			  count(*) FILTER (WHERE id > 900000),
			  coalesce(string_agg(rank::text, ', ' ORDER BY rank) FILTER (WHERE id > 900000), 'none'))
FROM demo_top \g (format=unaligned tuples_only=on)

\echo
\echo '== k nearest neighbours of one point: the 5 points nearest to (10, -5, 0, 1), the centre of cluster 1'
\echo '   SELECT * FROM odp_knn(''demo_points'', ''{10,-5,0,1}'', k => 5);'
CREATE TEMP TABLE demo_knn AS SELECT * FROM odp_knn('demo_points', '{10,-5,0,1}', k => 5);
SELECT rank, id, round(distance::numeric, 4) AS distance FROM demo_knn ORDER BY rank;
WITH plain AS (
	SELECT id, row_number() OVER (ORDER BY d, id) AS rank
	FROM (SELECT id, sqrt((features[1] - 10) ^ 2 + (features[2] + 5) ^ 2 + features[3] ^ 2 + (features[4] - 1) ^ 2) AS d
		  FROM demo_points) s
	ORDER BY d, id LIMIT 5
)
SELECT format('found: %s of the 5 nearest are in cluster 1 (id %% 3 = 1); %s',
			  count(*) FILTER (WHERE k.id % 3 = 1),
			  CASE WHEN count(p.id) = 5 THEN 'the same 5 rows, in the same order, as an ORDER BY of every distance in plain SQL'
				   ELSE 'NOT the rows of an ORDER BY of every distance in plain SQL' END)
FROM demo_knn k LEFT JOIN plain p ON p.id = k.id AND p.rank = k.rank \g (format=unaligned tuples_only=on)

\echo
\echo '== k-NN join: for each of 99 new points, its 5 nearest points'
\echo '   SELECT * FROM odp_knn_join(''demo_new_points'', ''demo_points'', k => 5);  (the first two new points shown)'
CREATE TEMP TABLE demo_join AS SELECT * FROM odp_knn_join('demo_new_points', 'demo_points', k => 5);
SELECT query_id, rank, id, round(distance::numeric, 4) AS distance FROM demo_join WHERE query_id <= 2 ORDER BY query_id, rank;
SELECT format('found: %s neighbours for %s new points; for %s of them all 5 lie in the cluster the point was placed in',
			  sum(n), count(*), count(*) FILTER (WHERE same = 5))
FROM (SELECT query_id, count(*) AS n, count(*) FILTER (WHERE id % 3 = query_id % 3) AS same
	  FROM demo_join GROUP BY query_id) s \g (format=unaligned tuples_only=on)

\echo
\echo '== Series that move together: the pairs of 12 stocks whose daily returns correlate with |r| >= 0.9'
\echo '   SELECT * FROM odp_pearson(''demo_returns'', min_abs_r => 0.9);'
CREATE TEMP TABLE demo_pairs AS SELECT * FROM odp_pearson('demo_returns', min_abs_r => 0.9);
SELECT id_a, id_b, round(r::numeric, 4) AS r FROM demo_pairs ORDER BY id_a, id_b;
SELECT format('found: %s pairs; %s of them within a sector, %s across sectors (the 3 sectors of 4 stocks hold 18 pairs); the lowest r is %s',
			  count(*), count(*) FILTER (WHERE (id_a - 1) / 4 = (id_b - 1) / 4),
			  count(*) FILTER (WHERE (id_a - 1) / 4 <> (id_b - 1) / 4), round(min(r)::numeric, 4))
FROM demo_pairs \g (format=unaligned tuples_only=on)

\echo
\echo '== Skyline: the hotels no other hotel beats on price, distance and rating at once'
\echo '   SELECT * FROM odp_skyline(''demo_hotels'', directions => ''{min,min,max}'', features => ''{price,distance_km,rating}'');'
CREATE TEMP TABLE demo_sky AS
	SELECT * FROM odp_skyline('demo_hotels', directions => '{min,min,max}', features => '{price,distance_km,rating}');
SELECT h.* FROM demo_sky s JOIN demo_hotels h USING (id) ORDER BY h.price LIMIT 8;
WITH plain AS (
	SELECT id FROM demo_hotels h
	WHERE NOT EXISTS (
		SELECT 1 FROM demo_hotels o
		WHERE o.price <= h.price AND o.distance_km <= h.distance_km AND o.rating >= h.rating
		  AND (o.price < h.price OR o.distance_km < h.distance_km OR o.rating > h.rating))
)
SELECT format('found: %s of 1,000 hotels on the skyline (the 8 cheapest shown); %s',
			  (SELECT count(*) FROM demo_sky),
			  CASE WHEN (SELECT array_agg(id ORDER BY id) FROM demo_sky) = (SELECT array_agg(id::bigint ORDER BY id) FROM plain)
				   THEN 'the same hotels as the NOT EXISTS query in plain SQL'
				   ELSE 'NOT the hotels of the NOT EXISTS query in plain SQL' END) \g (format=unaligned tuples_only=on)

\echo
\echo '== Overlapping regions: which of 2,000 bookings (tstzrange) overlap one of 13 maintenance windows'
\echo '   SELECT * FROM odp_interval_match(''demo_bookings'', ''demo_maintenance'');  (the first 6 shown)'
CREATE TEMP TABLE demo_clash AS SELECT * FROM odp_interval_match('demo_bookings', 'demo_maintenance');
SELECT c.subscription_id AS booking,
	   to_char(lower(b.during), 'Dy Mon DD HH24:MI') || ' - ' || to_char(upper(b.during), 'HH24:MI') AS booked,
	   c.update_id AS maintenance,
	   to_char(lower(m.during), 'Dy Mon DD HH24:MI') || ' - ' || to_char(upper(m.during), 'HH24:MI') AS "window"
FROM demo_clash c JOIN demo_bookings b ON b.id = c.subscription_id JOIN demo_maintenance m ON m.id = c.update_id
ORDER BY c.subscription_id, c.update_id LIMIT 6;
WITH plain AS (
	SELECT b.id AS subscription_id, m.id AS update_id
	FROM demo_bookings b JOIN demo_maintenance m ON b.during && m.during
)
SELECT format('found: %s bookings of 2,000 overlap a maintenance window (%s pairs); %s',
			  (SELECT count(DISTINCT subscription_id) FROM demo_clash), (SELECT count(*) FROM demo_clash),
			  CASE WHEN NOT EXISTS (SELECT * FROM demo_clash EXCEPT SELECT * FROM plain)
					AND NOT EXISTS (SELECT * FROM plain EXCEPT SELECT * FROM demo_clash)
				   THEN 'the same pairs as PostgreSQL''s && join'
				   ELSE 'NOT the pairs of PostgreSQL''s && join' END) \g (format=unaligned tuples_only=on)

RESET odp_gpu.report_timing;
SET client_min_messages = warning;
DROP TABLE demo_points, demo_new_points, demo_returns, demo_hotels, demo_bookings, demo_maintenance;
