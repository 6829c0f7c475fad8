-- Every bad argument gets an ERROR with a precise SQLSTATE and a message
-- that says what to fix (input problems are in input_sources).
CREATE EXTENSION odp_gpu;
\i sql/include/odp_try.psql
CREATE TABLE t (id int PRIMARY KEY, f real[]);
INSERT INTO t SELECT i, ARRAY[i, i * i]::real[] FROM generate_series(1, 5) i;
CREATE TABLE z (id int PRIMARY KEY, f real[]);
INSERT INTO z VALUES (1, '{1, 0}'), (2, '{0, 0}'), (3, '{0, 2}');

-- NULL arguments
SELECT odp_try($$SELECT * FROM odp_outlier_scores(NULL, k => 1)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_scores('t', k => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_top_outliers('t', k => 1, n => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_scores('t', k => 1, metric => NULL)$$);
-- k and n out of range
SELECT odp_try($$SELECT * FROM odp_outlier_scores('t', k => 0)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_scores('t', k => -3)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_scores('t', k => 5)$$);
SELECT odp_try($$SELECT * FROM odp_top_outliers('t', k => 50, n => 10)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_scores('t', k => 100000)$$);
SELECT odp_try($$SELECT * FROM odp_top_outliers('t', k => 1, n => 0)$$);
-- metrics
SELECT odp_try($$SELECT * FROM odp_outlier_scores('t', k => 1, metric => 'hamming')$$);
SELECT odp_try($$SELECT * FROM odp_outlier_scores('t', k => 1, metric => 'Euclidean')$$);
SELECT odp_try($$SELECT * FROM odp_outlier_scores('z', k => 1, metric => 'cosine')$$);
-- distances that overflow float32
CREATE TABLE huge (id int PRIMARY KEY, f float8[]);
INSERT INTO huge VALUES (1, '{1e30, 0}'), (2, '{-1e30, 0}'), (3, '{0, 1}');
-- in float32 (the setting), squares of 1e30 overflow
SET odp_gpu.distance_precision = float32;
SELECT odp_try($$SELECT * FROM odp_outlier_scores('huge', k => 1)$$);
SELECT * FROM odp_outlier_scores('huge', k => 1, metric => 'chebyshev');
INSERT INTO huge VALUES (4, '{3e38, 3e38}');
SELECT odp_try($$SELECT * FROM odp_outlier_scores('huge', k => 1, metric => 'cosine')$$);
RESET odp_gpu.distance_precision;
-- float8 features are float64: those fit, squares of 1e160 do not
SELECT * FROM odp_outlier_scores('huge', k => 1) ORDER BY id;
INSERT INTO huge VALUES (5, '{1e160, 0}');
SELECT odp_try($$SELECT * FROM odp_outlier_scores('huge', k => 1)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_scores('huge', k => 1, metric => 'cosine')$$);
-- unknown table
SELECT odp_try($$SELECT * FROM odp_outlier_scores('no_such_table', k => 1)$$);
-- argument checks come before reading: a bad k on a missing table names k
SELECT odp_try($$SELECT * FROM odp_outlier_scores('no_such_table', k => 0)$$);
-- still working after all of that
SELECT * FROM odp_top_outliers('t', k => 1, n => 2);

DROP TABLE t, z, huge;
DROP FUNCTION odp_try(text);
DROP EXTENSION odp_gpu;
