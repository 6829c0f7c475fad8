--
-- read_order: rows stored out of id order, read serially, reach the
-- analytics in id order with their own values, whether a btree index on
-- the ids lets the read place each row at its id's offset or not: every
-- row's distance to a query equals SQL's (odp_knn with k = all rows),
-- with dead, updated and deleted rows, gaps in the ids, a descending
-- index, int2 and int4 ids, ids too sparse to place, an index whose ends
-- are dead, rows of the current transaction, regions, arrays stored out
-- of line; and a duplicate id raises the error it raises without an
-- index, a NaN in an array stored out of line the error naming it.
--
CREATE EXTENSION odp_gpu;
SET odp_gpu.parallel_read = off;
SET odp_gpu.table_cache = off;

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

-- Rows of odp_knn(src, q, k => every row, sqeuclidean) that differ from
-- SQL's ranks, ids and distances (both ways): 0 means the same.  The
-- features are small integers, so both are exact.
CREATE FUNCTION ro_diff(src text, q float8[], id_column text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	total int;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s', src) INTO total;
	EXECUTE format($f$
		WITH odp AS (
			SELECT rank, id, distance
			FROM odp_knn(%1$L, %2$L::float8[], k => %3$s,
						 id_column => %4$L, metric => 'sqeuclidean')),
		oracle AS (
			SELECT (row_number() OVER (ORDER BY d, id))::int AS rank, id::bigint, d AS distance
			FROM (SELECT t.id, (SELECT sum((t.f[i]::float8 - (%2$L::float8[])[i]) ^ 2)
								FROM generate_subscripts(t.f, 1) i) AS d
				  FROM %1$s t) s)
		SELECT count(*) FROM (
			(TABLE odp EXCEPT ALL TABLE oracle)
			UNION ALL
			(TABLE oracle EXCEPT ALL TABLE odp)) d$f$,
		src, q, total, id_column) INTO n;
	RETURN n;
END
$$;

-- 4,000 rows written in a scrambled order, over many blocks
CREATE TABLE ro_points (id bigint PRIMARY KEY, f real[]);
INSERT INTO ro_points
	SELECT i, ARRAY[(i * 7919) % 1009, (i * 104729) % 997, i % 7]::real[]
	FROM generate_series(1, 4000) i
	ORDER BY (i * 7907) % 4001;
SELECT pg_relation_size('ro_points') / current_setting('block_size')::int > 10 AS many_blocks;
SELECT ro_diff('ro_points', '{500, 500, 3}');
-- gaps in the ids, dead rows, updated rows (their new versions elsewhere)
DELETE FROM ro_points WHERE id % 13 = 0 OR id BETWEEN 1500 AND 1700;
UPDATE ro_points SET f[3] = f[3] + 1 WHERE id % 11 = 0;
SELECT ro_diff('ro_points', '{500, 500, 3}');
-- the ends of the ids deleted: the range shrinks
DELETE FROM ro_points WHERE id <= 20 OR id > 3980;
SELECT ro_diff('ro_points', '{0, 0, 0}');
-- rows of the current transaction, beyond both ends and in a gap
BEGIN;
INSERT INTO ro_points VALUES (-5, '{1,2,3}'), (1600, '{4,5,6}'), (4100, '{7,8,9}');
DELETE FROM ro_points WHERE id = 2000;
SELECT ro_diff('ro_points', '{1, 2, 3}');
ROLLBACK;
SELECT ro_diff('ro_points', '{1, 2, 3}');

-- int4 ids under a descending index, named as the id column
CREATE TABLE ro_desc (id int, f real[]);
INSERT INTO ro_desc SELECT id, f FROM ro_points ORDER BY (id * 31) % 3989;
CREATE INDEX ON ro_desc (id DESC);
SELECT ro_diff('ro_desc', '{7, 7, 7}', 'id');

-- int2 ids
CREATE TABLE ro_small (id smallint PRIMARY KEY, f real[]);
INSERT INTO ro_small SELECT id, f FROM ro_points WHERE id < 3000 ORDER BY (id * 17) % 2999;
SELECT ro_diff('ro_small', '{9, 9, 9}');

-- ids far apart: too sparse to place, ordered after the read
CREATE TABLE ro_sparse (id bigint PRIMARY KEY, f real[]);
INSERT INTO ro_sparse SELECT id * 100000, f FROM ro_points ORDER BY (id * 31) % 3989;
SELECT ro_diff('ro_sparse', '{7, 7, 7}');

-- an index whose ends hold only dead entries (nothing vacuumed)
CREATE TABLE ro_dead_ends (id bigint PRIMARY KEY, f real[]);
ALTER TABLE ro_dead_ends SET (autovacuum_enabled = off);
INSERT INTO ro_dead_ends SELECT id, f FROM ro_points ORDER BY (id * 31) % 3989;
DELETE FROM ro_dead_ends WHERE id < 1000 OR id > 3000;
SELECT ro_diff('ro_dead_ends', '{3, 1, 4}');

-- a partial index is not used for the range; the read still works
CREATE TABLE ro_partial (id bigint, f real[]);
INSERT INTO ro_partial SELECT id, f FROM ro_points ORDER BY (id * 31) % 3989;
CREATE INDEX ON ro_partial (id) WHERE id > 2000;
SELECT ro_diff('ro_partial', '{3, 1, 4}', 'id');

-- a duplicate id: the same error with an index on the ids as without one
CREATE TABLE ro_dup (id int, f real[]);
INSERT INTO ro_dup SELECT id, f FROM ro_points ORDER BY (id * 31) % 3989;
INSERT INTO ro_dup VALUES (2500, '{1,1,1}'), (700, '{2,2,2}');
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('ro_dup', '{1,1,1}', id_column => 'id')$$);
CREATE INDEX ON ro_dup (id);
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('ro_dup', '{1,1,1}', id_column => 'id')$$);

-- regions out of id order: the self count equals SQL's && join
CREATE TABLE ro_regions (id int PRIMARY KEY, r int4range);
INSERT INTO ro_regions
	SELECT i, int4range((i * 7919) % 10007, (i * 7919) % 10007 + 1 + i % 50)
	FROM generate_series(1, 3000) i
	ORDER BY (i * 7907) % 3001;
DELETE FROM ro_regions WHERE id % 7 = 0;
SELECT odp_interval_match_count('ro_regions') =
	(SELECT count(*) FROM ro_regions a JOIN ro_regions b ON a.r && b.r AND a.id < b.id) AS same;

-- arrays stored out of line uncompressed (TOAST), float8[] and real[]:
-- every row's distance equals SQL's; a NaN or an infinity names its row
-- and element; Pearson with nulls => 'pairwise' skips a NaN as corr() does
CREATE TABLE ro_long (id int PRIMARY KEY, f float8[]);
ALTER TABLE ro_long ALTER COLUMN f SET STORAGE EXTERNAL;
INSERT INTO ro_long
	SELECT i, array(SELECT ((i * 7 + j * 13) % 17)::float8 FROM generate_series(1, 1500) j)
	FROM generate_series(1, 60) i
	ORDER BY (i * 7) % 61;
CREATE TABLE ro_long4 (id int PRIMARY KEY, f real[]);
ALTER TABLE ro_long4 ALTER COLUMN f SET STORAGE EXTERNAL;
INSERT INTO ro_long4 SELECT id, f::real[] FROM ro_long;
SELECT relname, pg_relation_size(reltoastrelid) > 0 AS toasted
FROM pg_class WHERE relname IN ('ro_long', 'ro_long4') ORDER BY 1;
SELECT ro_diff('ro_long', (SELECT f FROM ro_long WHERE id = 5));
SELECT ro_diff('ro_long4', (SELECT f FROM ro_long WHERE id = 6));
UPDATE ro_long SET f[700] = 'NaN' WHERE id = 33;
UPDATE ro_long4 SET f[701] = '-Infinity' WHERE id = 34;
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('ro_long', (SELECT f FROM ro_long WHERE id = 5))$$);
SELECT * FROM odp_try($$SELECT count(*) FROM odp_knn('ro_long4', (SELECT f FROM ro_long WHERE id = 5))$$);
SELECT round(o.r::numeric, 10) = round(c.r::numeric, 10) AS pearson_skips_nan
FROM odp_pearson('ro_long', min_abs_r => 0, nulls => 'pairwise') o,
	 (SELECT corr(x, y) AS r
	  FROM unnest((SELECT f FROM ro_long WHERE id = 5), (SELECT f FROM ro_long WHERE id = 33)) u(x, y)
	  WHERE x <> 'NaN' AND y <> 'NaN') c
WHERE o.id_a = 5 AND o.id_b = 33;

-- the parallel read (forced) gives the same rows as the serial one
SET odp_gpu.parallel_read = force;
SET max_parallel_workers_per_gather = 2;
SELECT ro_diff('ro_points', '{500, 500, 3}');
SELECT ro_diff('ro_desc', '{7, 7, 7}', 'id');

DROP TABLE ro_points, ro_desc, ro_small, ro_sparse, ro_dead_ends, ro_partial, ro_dup, ro_regions,
	ro_long, ro_long4;
DROP FUNCTION odp_try(text), ro_diff(text, float8[], text);
DROP EXTENSION odp_gpu;
