-- Sample data for test/demo.sh: 20,000 points in three Gaussian clusters
-- in 4 dimensions, plus 5 planted outliers (ids 900001 .. 900005) far
-- from every cluster.  Deterministic (setseed).
CREATE EXTENSION IF NOT EXISTS odp_gpu;
SET client_min_messages = warning;
SELECT setseed(0.42) \g /dev/null
DROP TABLE IF EXISTS points;
CREATE TABLE points (id bigint PRIMARY KEY, features real[] NOT NULL);
INSERT INTO points
SELECT i, ARRAY[c * 10 + g1, c * -5 + g2, g3, c + g4]::real[]
FROM (
	SELECT i, i % 3 AS c,
		   sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS g1,
		   sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS g2,
		   sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS g3,
		   sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS g4
	FROM generate_series(1, 20000) AS i
) s;
INSERT INTO points VALUES
	(900001, '{40, 40, 0, 0}'),
	(900002, '{-30, 20, 5, 5}'),
	(900003, '{5, -40, -8, 1}'),
	(900004, '{10, -5, 12, -9}'),
	(900005, '{25, -25, 0, 14}');
ANALYZE points;

\echo
\echo 'odp_gpu_info():'
SELECT device, name, compute_capability, usable, detail FROM odp_gpu_info();
\echo
\echo 'SELECT * FROM odp_top_outliers(''points'', k => 50, n => 10);'
\timing on
SELECT * FROM odp_top_outliers('points', k => 50, n => 10);
\timing off
