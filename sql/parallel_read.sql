--
-- parallel_read: tables read by the backend with parallel workers
-- (odp_gpu.parallel_read = force, two workers) give the rows, results and
-- errors of the serial read (off), and of SQL itself: every analytic on
-- tables in and out of id order, with dead and updated rows, rows of the
-- current transaction, NULL masks, regions (ranges, multiranges, numeric
-- bounds) and TOASTed arrays; the same
-- error, naming the same row, for bad data anywhere in the table; and
-- row-level security, which keeps the serial path.
--
CREATE EXTENSION odp_gpu;
SET max_parallel_workers_per_gather = 2;

-- Runs a statement and shows the error it raises, with its SQLSTATE.
CREATE FUNCTION odp_try(stmt text, OUT code text, OUT message text)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	code := '00000';
	message := 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
END
$$;

-- Rows of a query that differ between a run under the settings serial and
-- one under parallel (SET LOCAL statements; by default a serial and a
-- forced parallel read), both ways, as a count: 0 means the same multiset.
CREATE FUNCTION odp_diff(q text,
	serial text DEFAULT 'SET LOCAL odp_gpu.parallel_read = off',
	parallel text DEFAULT 'SET LOCAL odp_gpu.parallel_read = force')
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE serial;
	EXECUTE format('CREATE TEMP TABLE odp_serial AS %s', q);
	EXECUTE parallel;
	EXECUTE format('CREATE TEMP TABLE odp_parallel AS %s', q);
	SELECT count(*) INTO n FROM (
		(TABLE odp_serial EXCEPT ALL TABLE odp_parallel)
		UNION ALL
		(TABLE odp_parallel EXCEPT ALL TABLE odp_serial)) d;
	DROP TABLE odp_serial, odp_parallel;
	RETURN n;
END
$$;

-- 20,000 points over many blocks, in id order, and the same shuffled
CREATE TABLE pr_points (id bigint PRIMARY KEY, f real[]);
INSERT INTO pr_points
	SELECT i, ARRAY[(i * 7919) % 1009, (i * 104729) % 997, (i * 31) % 101, i % 7]::real[]
	FROM generate_series(1, 20000) i;
CREATE TABLE pr_shuffled AS SELECT * FROM pr_points ORDER BY (id * 7907) % 20011;
ALTER TABLE pr_shuffled ADD PRIMARY KEY (id);
-- dead rows and updated rows (new versions elsewhere in the table)
DELETE FROM pr_shuffled WHERE id % 97 = 0;
UPDATE pr_shuffled SET f = f || '{}'::real[] WHERE id % 89 = 0;
SELECT pg_relation_size('pr_points') / current_setting('block_size')::int > 40 AS many_blocks;

SET odp_gpu.parallel_read = force;

-- k-NN against SQL's ORDER BY .. LIMIT, on both tables
SELECT count(*) AS differing FROM (
	(SELECT id FROM odp_knn('pr_shuffled', '{500, 500, 50, 3}', k => 25))
	EXCEPT
	(SELECT id FROM pr_shuffled
	 ORDER BY sqrt((f[1] - 500) ^ 2 + (f[2] - 500) ^ 2 + (f[3] - 50) ^ 2 + (f[4] - 3) ^ 2), id
	 LIMIT 25)) d;
SELECT odp_diff($$SELECT * FROM odp_knn('pr_points', '{1, 2, 3, 4}', k => 50)$$) AS knn,
	   odp_diff($$SELECT * FROM odp_knn('pr_shuffled', '{1, 2, 3, 4}', k => 50)$$) AS knn_shuffled,
	   odp_diff($$SELECT * FROM odp_outlier_scores('SELECT * FROM pr_points WHERE id <= 3000', k => 3)$$) AS scores_query,
	   odp_diff($$SELECT * FROM odp_top_outliers('pr_shuffled', k => 3, n => 10)$$) AS top_outliers,
	   odp_diff($$SELECT * FROM odp_knn_join('SELECT * FROM pr_points WHERE id <= 20', 'pr_shuffled', k => 5)$$) AS knn_join;

-- a query source the planner runs with parallel workers (a Gather under
-- the query): the rows of the same query run serially (the planner's
-- parallel query, as settings for odp_diff)
\set gather 'SET LOCAL max_parallel_workers_per_gather = 2; SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0; SET LOCAL min_parallel_table_scan_size = 0'
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT * FROM pr_shuffled WHERE id % 3 <> 0;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SELECT odp_diff($$SELECT * FROM odp_outlier_scores('SELECT * FROM pr_shuffled WHERE id % 3 <> 0', k => 2)$$,
				'SET LOCAL max_parallel_workers_per_gather = 0', :'gather') AS scores_gather;

-- every row read, once, in id order: the scores of k => 1 match SQL's
SELECT count(*) AS rows, count(DISTINCT id) AS ids, bool_and(id IS NOT NULL) AS ids_set
FROM odp_outlier_scores('pr_shuffled', k => 1);
SELECT (SELECT count(*) FROM pr_shuffled) AS table_rows;

-- statistics that promise far fewer rows than the table holds (wide rows
-- when analysed, narrow ones since): the output overflows, the table is
-- read again serially, with the same rows
CREATE TABLE pr_grown (id bigint PRIMARY KEY, f real[], pad text);
INSERT INTO pr_grown SELECT i, ARRAY[i % 13, i % 17]::real[], repeat('x', 1500) FROM generate_series(1, 200) i;
ANALYZE pr_grown;
ALTER TABLE pr_grown SET (autovacuum_enabled = off);
INSERT INTO pr_grown SELECT i, ARRAY[i % 13, i % 17]::real[], NULL FROM generate_series(201, 8000) i;
SELECT odp_diff($$SELECT * FROM odp_outlier_scores('pr_grown', k => 2)$$) AS grown,
	   (SELECT count(*) FROM odp_outlier_scores('pr_grown', k => 2)) AS rows;
DROP TABLE pr_grown;

-- rows of the current transaction, and deleted ones, as the snapshot sees them
BEGIN;
INSERT INTO pr_shuffled VALUES (100001, '{9999, 9999, 9999, 9999}');
DELETE FROM pr_shuffled WHERE id = 1;
SELECT rank, id FROM odp_top_outliers('pr_shuffled', k => 1, n => 1);
SELECT count(*) FILTER (WHERE id = 1) AS deleted_seen, count(*) AS rows
FROM odp_outlier_scores('pr_shuffled', k => 1);
ROLLBACK;

-- float64 series with missing values (NULL masks) and TOASTed arrays
CREATE TABLE pr_series (id int PRIMARY KEY, v float8[]);
INSERT INTO pr_series
	SELECT i, (SELECT array_agg(CASE WHEN (i + j) % 211 = 0 THEN NULL ELSE sin(i * j) END)
			   FROM generate_series(1, 3000) j)
	FROM generate_series(1, 120) i;
SELECT pg_relation_size(reltoastrelid) > 0 AS toasted FROM pg_class WHERE relname = 'pr_series';
SELECT odp_diff($$SELECT id_a, id_b, round(r::numeric, 12) FROM odp_pearson('pr_series', min_abs_r => 0.05, nulls => 'pairwise')$$) AS pearson_pairwise,
	   odp_diff($$SELECT * FROM odp_pearson_top('SELECT id, v[1:2000] FROM pr_series WHERE id > 3', k => 3, nulls => 'pairwise')$$) AS pearson_top_query;
SELECT count(*) AS differing FROM (
	SELECT a.id, b.id, round(corr(x, y)::numeric, 9)
	FROM pr_series a, pr_series b,
		 LATERAL unnest(a.v, b.v) AS u(x, y)
	WHERE a.id < b.id AND a.id <= 6 AND b.id <= 6
	GROUP BY a.id, b.id
	EXCEPT
	SELECT id_a, id_b, round(r::numeric, 9)
	FROM odp_pearson('pr_series', nulls => 'pairwise')
	WHERE id_a <= 6 AND id_b <= 6) d;

-- TOASTed rows many to a heap block, each block's rows read in pieces by
-- line pointer: in id order behind an index (rows placed at their ids'
-- offsets), and shuffled without one (counted, then read in place), with
-- dead and updated rows; 12 MB of TOAST on a few heap blocks
CREATE TABLE pr_wide (id bigint PRIMARY KEY, v float8[]);
ALTER TABLE pr_wide ALTER v SET STORAGE EXTERNAL;
INSERT INTO pr_wide
	SELECT i, (SELECT array_agg(sin(i * 7.0 + j) * 100) FROM generate_series(1, 4000) j)
	FROM generate_series(1, 400) i;
CREATE TABLE pr_wide_shuffled (LIKE pr_wide);
ALTER TABLE pr_wide_shuffled ALTER v SET STORAGE EXTERNAL;
INSERT INTO pr_wide_shuffled SELECT * FROM pr_wide ORDER BY (id * 37) % 401;
DELETE FROM pr_wide_shuffled WHERE id % 29 = 0;
UPDATE pr_wide_shuffled SET v[1] = 0 WHERE id % 31 = 0;
ANALYZE pr_wide, pr_wide_shuffled;
SELECT pg_relation_size(reltoastrelid) / pg_relation_size(oid) >= 64 AS toast_per_block
FROM pg_class WHERE relname IN ('pr_wide', 'pr_wide_shuffled');
SELECT odp_diff($$SELECT * FROM odp_knn('pr_wide', (SELECT v FROM pr_wide WHERE id = 5), k => 400)$$) AS knn_wide,
	   odp_diff($$SELECT * FROM odp_knn('pr_wide_shuffled', (SELECT v FROM pr_wide WHERE id = 5), k => 400)$$) AS knn_wide_shuffled,
	   odp_diff($$SELECT id_a, id_b, round(r::numeric, 12) FROM odp_pearson('pr_wide_shuffled', min_abs_r => 0.5)$$) AS pearson_wide_shuffled;
SELECT count(*) AS rows, count(DISTINCT id) AS ids
FROM odp_knn('pr_wide_shuffled', (SELECT v FROM pr_wide WHERE id = 5), k => 400);

-- skyline and regions
CREATE TABLE pr_sky (id bigint PRIMARY KEY, a float8, b float8, c float8);
INSERT INTO pr_sky SELECT i, (i * 37) % 101, (i * 53) % 97, (i * 11) % 89 FROM generate_series(1, 30000) i;
SELECT odp_diff($$SELECT * FROM odp_skyline('pr_sky')$$) AS skyline,
	   odp_diff($$SELECT * FROM odp_skyline('pr_sky', band => 3)$$) AS skyband,
	   odp_diff($$SELECT * FROM odp_skyline('SELECT id, a, b FROM pr_sky WHERE c > 10')$$,
				'SET LOCAL max_parallel_workers_per_gather = 0', :'gather') AS skyline_gather;
SELECT count(*) AS differing FROM (
	SELECT id FROM odp_skyline('pr_sky')
	EXCEPT
	SELECT id FROM pr_sky p WHERE NOT EXISTS (
		SELECT 1 FROM pr_sky q WHERE q.a <= p.a AND q.b <= p.b AND q.c <= p.c
			AND (q.a < p.a OR q.b < p.b OR q.c < p.c))) d;
CREATE TABLE pr_regions (id bigint PRIMARY KEY, r int8range, s tstzrange);
INSERT INTO pr_regions
	SELECT i, int8range(i * 10, i * 10 + (i * 7) % 300),
		   tstzrange('2026-01-01'::timestamptz + i * interval '1 minute',
					 '2026-01-01'::timestamptz + (i + (i * 13) % 500) * interval '1 minute', '(]')
	FROM generate_series(1, 20000) i;
-- the oracle's join probes this index instead of testing all 20,000^2 pairs
CREATE INDEX pr_regions_r ON pr_regions USING gist (r);
ANALYZE pr_regions;
SELECT odp_interval_match_count('pr_regions') AS pairs,
	   (SELECT count(*) FROM pr_regions a JOIN pr_regions b ON a.id < b.id AND a.r && b.r AND a.s && b.s) AS sql_pairs;
SELECT odp_diff($$SELECT * FROM odp_interval_match('pr_regions', 'SELECT * FROM pr_regions WHERE id % 50 = 0')$$) AS region_pairs;
-- multiranges (a row, many regions); numeric bounds, whose exact values
-- only the backend holds (the read tries workers, then reads serially)
CREATE TABLE pr_multi (id bigint PRIMARY KEY, m int4multirange, r int8range);
INSERT INTO pr_multi
	SELECT i, int4multirange(int4range(i, i + i % 5), int4range(i + 10, i + 10 + i % 3)),
		   int8range(i / 3, i / 3 + i % 7)
	FROM generate_series(1, 20000) i;
CREATE TABLE pr_numeric (id bigint PRIMARY KEY, n numrange);
INSERT INTO pr_numeric
	SELECT i, numrange(i / 7.0, i / 7.0 + (i % 13) / 3.0, CASE WHEN i % 4 = 0 THEN '(]' ELSE '[)' END)
	FROM generate_series(1, 20000) i;
SELECT odp_diff($$SELECT odp_interval_match_count('pr_multi')$$) AS multirange_count,
	   odp_diff($$SELECT * FROM odp_interval_match('pr_multi', 'SELECT * FROM pr_multi WHERE id % 50 = 0')$$)
		   AS multirange_pairs,
	   odp_diff($$SELECT odp_interval_match_count('pr_numeric')$$) AS numeric_count,
	   odp_diff($$SELECT * FROM odp_interval_match('pr_numeric', 'SELECT * FROM pr_numeric WHERE id % 50 = 0')$$)
		   AS numeric_pairs;
-- two tables of numeric multiranges, small, matched after another call of
-- the session: their numeric bounds read again serially, from workers'
-- keys
CREATE TABLE pr_nm AS
	SELECT i AS id, nummultirange(numrange(i / 10.0, i / 10.0 + 0.35), numrange(i / 10.0 + 1, i / 10.0 + 1.05)) AS m,
		   int8multirange(int8range(i, i + 3)) AS k
	FROM generate_series(1, 800) i;
CREATE TABLE pr_nm2 AS SELECT id + 10000 AS id, m, k FROM pr_nm WHERE id % 3 <> 0;
SELECT odp_diff($$SELECT * FROM odp_interval_match('pr_nm', 'pr_nm2', dims => '{k}')$$) AS multirange_int8,
	   odp_diff($$SELECT * FROM odp_interval_match('pr_nm', 'pr_nm2', dims => '{m}')$$) AS multirange_numeric,
	   odp_diff($$SELECT * FROM odp_interval_match('pr_nm', 'pr_nm2', dims => '{k}')$$ ||
				$$ UNION ALL SELECT * FROM odp_interval_match('pr_nm', 'pr_nm2', dims => '{m}')$$) AS one_after_another;
SELECT count(*) AS differing FROM (
	(SELECT * FROM odp_interval_match('pr_nm', 'pr_nm2', dims => '{m}')
	 EXCEPT SELECT a.id, b.id FROM pr_nm a JOIN pr_nm2 b ON a.m && b.m)
	UNION ALL
	(SELECT a.id, b.id FROM pr_nm a JOIN pr_nm2 b ON a.m && b.m
	 EXCEPT SELECT * FROM odp_interval_match('pr_nm', 'pr_nm2', dims => '{m}'))) d;

-- bad data anywhere: the error of the serial read, naming the same row
CREATE TABLE pr_bad (id bigint PRIMARY KEY, f real[]);
INSERT INTO pr_bad SELECT i, ARRAY[i, i + 1]::real[] FROM generate_series(1, 20000) i;
UPDATE pr_bad SET f = NULL WHERE id = 15001;
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('pr_bad', '{1, 2}')$$);
UPDATE pr_bad SET f = '{1, 2}' WHERE id = 15001;
UPDATE pr_bad SET f = '{1, 2, 3}' WHERE id IN (12000, 18000);
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('pr_bad', '{1, 2}')$$);
UPDATE pr_bad SET f = '{1, 2}' WHERE id IN (12000, 18000);
UPDATE pr_bad SET f = '{1, NaN}' WHERE id = 19999;
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('pr_bad', '{1, 2}')$$);
UPDATE pr_bad SET f = '{1, 2}' WHERE id = 19999;
INSERT INTO pr_bad SELECT id + 1, f FROM pr_bad WHERE id = 19999 ON CONFLICT DO NOTHING;
CREATE TABLE pr_dup (id bigint, f real[]);
INSERT INTO pr_dup SELECT i % 15000, ARRAY[i, i]::real[] FROM generate_series(1, 20000) i;
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('pr_dup', '{1, 2}')$$);
SELECT count(*) AS rows FROM odp_outlier_scores('pr_bad', k => 1);
DELETE FROM pr_bad;
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('pr_bad', '{1, 2}')$$);

-- row-level security: the policy's rows only (the serial path)
CREATE ROLE regress_odp_parallel;
GRANT SELECT ON pr_points TO regress_odp_parallel;
ALTER TABLE pr_points ENABLE ROW LEVEL SECURITY;
CREATE POLICY pr_low ON pr_points FOR SELECT USING (id <= 100);
SET ROLE regress_odp_parallel;
SELECT count(*) AS rows, max(id) AS max_id FROM odp_outlier_scores('pr_points', k => 1);
RESET ROLE;

-- the setting
SHOW odp_gpu.parallel_read;
SELECT * FROM odp_try($$SET odp_gpu.parallel_read = sometimes$$);
RESET odp_gpu.parallel_read;
SELECT boot_val, enumvals FROM pg_settings WHERE name = 'odp_gpu.parallel_read';

DROP POLICY pr_low ON pr_points;
DROP TABLE pr_points, pr_shuffled, pr_series, pr_sky, pr_regions, pr_multi, pr_numeric, pr_nm, pr_nm2, pr_wide, pr_wide_shuffled, pr_bad, pr_dup;
DROP ROLE regress_odp_parallel;
DROP FUNCTION odp_try(text), odp_diff(text, text, text);
DROP EXTENSION odp_gpu;
