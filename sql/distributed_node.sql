-- The node functions a coordinator drives (odp_node_*): a SolvingSet state
-- opened on a shard, its steps fed with each other's payloads, k-NN and
-- skyband payloads, the state's lifetime, and every bad argument or
-- payload refused with a clear error.  The sharded tables
-- themselves (postgres_fdw nodes) are checked by test/checks/distributed.sh.
CREATE EXTENSION odp_gpu;
\i sql/include/odp_try.psql

SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented,
	   p.provolatile, p.proparallel, p.prosecdef
FROM pg_proc p WHERE proname LIKE 'odp_node%' ORDER BY p.oid::regprocedure::text COLLATE "C";
SELECT odp_node_protocol();

CREATE TABLE shard (id bigint PRIMARY KEY, f real[]);
INSERT INTO shard SELECT i, ARRAY[(i * 7919) % 97, (i * 104729) % 89]::real[]
FROM generate_series(1, 500) i;
CREATE TABLE empty_shard (id bigint PRIMARY KEY, f real[]);

-- A payload is a 40-byte header and its arrays: rows carry 8 + 8 + 8 bytes
-- each plus their vectors, lists k floats per candidate (float32 rows).
CREATE TEMP TABLE st AS
SELECT * FROM odp_node_ss_open('shard', 5, 'id', '{f}', 'euclidean', true);
SELECT rows, dims FROM st;
CREATE TEMP TABLE props AS SELECT odp_node_ss_first(handle, 64) AS p FROM st;
SELECT length(p) = 40 + 64 * (8 + 8 + 8 + 2 * 4) AS first_64_rows FROM props;
CREATE TEMP TABLE lists AS
SELECT odp_node_ss_exact(handle, (SELECT p FROM props)) AS l FROM st;
SELECT length(l) = 40 + 64 * 5 * 4 AS lists_64_by_5 FROM lists;
-- the same candidates a second time: a row cannot join the solving set twice
SELECT odp_try(format('SELECT odp_node_ss_exact(%s, %L::bytea)', handle, (SELECT p FROM props)))
FROM st;
SELECT length(odp_node_ss_next(handle, false, 0, 10)) = 40 + 10 * (8 + 8 + 8 + 2 * 4) AS next_10_rows FROM st;
SELECT odp_node_ss_close(handle), odp_node_ss_close(handle) FROM st;
SELECT odp_try(format('SELECT odp_node_ss_first(%s, 4)', handle)) FROM st;

-- an empty shard is a node without rows
SELECT rows, dims FROM odp_node_ss_open('empty_shard', 5, 'id', '{f}', 'euclidean', true);

-- bad arguments
SELECT odp_try($$SELECT odp_node_ss_open(NULL, 5, 'id', '{f}', 'euclidean', true)$$);
SELECT odp_try($$SELECT odp_node_ss_open('shard', 4096, 'id', '{f}', 'euclidean', true)$$);
SELECT odp_try($$SELECT odp_node_ss_open('shard', 0, 'id', '{f}', 'euclidean', true)$$);
SELECT odp_try($$SELECT odp_node_ss_open('shard', 5, 'id', '{f}', 'inner_product', true)$$);
SELECT odp_try($$SELECT odp_node_ss_open('shard', 5, 'id', '{f}', 'euclidean', NULL)$$);
SELECT odp_try($$SELECT odp_node_ss_open('no_such_shard', 5, 'id', '{f}', 'euclidean', true)$$);
SELECT odp_try($$SELECT odp_node_ss_first(-7, 10)$$);
SELECT odp_try($$SELECT odp_node_ss_first(NULL, 10)$$);
CREATE TEMP TABLE st2 AS
SELECT * FROM odp_node_ss_open('shard', 5, 'id', '{f}', 'euclidean', true);
SELECT odp_try(format('SELECT odp_node_ss_first(%s, 0)', handle)) FROM st2;
SELECT odp_try(format('SELECT odp_node_ss_next(%s, NULL, 0, 10)', handle)) FROM st2;
-- malformed payloads: too short, a foreign format, lists for rows, cut short
SELECT odp_try(format('SELECT odp_node_ss_exact(%s, %L::bytea)', handle, '\x0102'::bytea)) FROM st2;
SELECT odp_try(format('SELECT odp_node_ss_exact(%s, %L::bytea)', handle,
	decode(repeat('ab', 40), 'hex'))) FROM st2;
SELECT odp_try(format('SELECT odp_node_ss_exact(%s, %L::bytea)', handle, (SELECT l FROM lists)))
FROM st2;
SELECT odp_try(format('SELECT odp_node_ss_exact(%s, %L::bytea)', handle,
	substr((SELECT p FROM props), 1, 100))) FROM st2;
SELECT odp_node_ss_close(handle) FROM st2;

-- k-NN: the queries travel as a rows payload (here: proposals of a state)
CREATE TEMP TABLE st3 AS
SELECT * FROM odp_node_ss_open('shard', 3, 'id', '{f}', 'euclidean', true);
CREATE TEMP TABLE q AS SELECT odp_node_ss_first(handle, 7) AS p FROM st3;
SELECT length(odp_node_knn('shard', (SELECT p FROM q), 4, 'id', '{f}', 'manhattan', true))
	= 40 + 7 * 4 * (8 + 4) AS knn_7_by_4;
SELECT length(odp_node_knn('empty_shard', (SELECT p FROM q), 4, 'id', '{f}', 'euclidean', false))
	= 40 + 7 * 4 * (8 + 4) AS knn_empty_shard;
SELECT odp_try($$SELECT odp_node_knn('shard', '\x00'::bytea, 4, 'id', '{f}', 'euclidean', false)$$);
SELECT odp_try($$SELECT odp_node_knn('shard', NULL, 4, 'id', '{f}', 'euclidean', false)$$);
SELECT odp_try(format('SELECT odp_node_knn(%L, %L::bytea, 4096, %L, %L, %L, false)',
	'shard', (SELECT p FROM q), 'id', '{f}', 'euclidean'));
SELECT odp_try(format('SELECT odp_node_knn(%L, %L::bytea, 4, %L, %L, %L, NULL)',
	'shard', (SELECT p FROM q), 'id', '{f}', 'euclidean'));
-- queries of another dimension
CREATE TABLE wide (id bigint PRIMARY KEY, f real[]);
INSERT INTO wide SELECT i, ARRAY[i, i, i]::real[] FROM generate_series(1, 10) i;
SELECT odp_try(format('SELECT odp_node_knn(%L, %L::bytea, 2, %L, %L, %L, false)',
	'wide', (SELECT p FROM q), 'id', '{f}', 'euclidean'));
SELECT odp_node_ss_close(handle) FROM st3;

-- float64 rows (float8 features) travel as double: vectors, lists and
-- k-NN distances; odp_gpu.distance_precision (which a coordinator sets
-- on its connections) decides, and a payload of the other precision is
-- refused
CREATE TABLE shard64 (id bigint PRIMARY KEY, t float8, x float8);
INSERT INTO shard64 SELECT i, 1.7e9 + ((i * 7919) % 97) * 0.01, i % 5 FROM generate_series(1, 300) i;
CREATE TEMP TABLE st4 AS
SELECT * FROM odp_node_ss_open('shard64', 4, 'id', '{t,x}', 'euclidean', true);
CREATE TEMP TABLE props64 AS SELECT odp_node_ss_first(handle, 20) AS p FROM st4;
SELECT length(p) = 40 + 20 * (8 + 8 + 8 + 2 * 8) AS first_20_rows_float64 FROM props64;
SELECT length(odp_node_ss_exact(handle, (SELECT p FROM props64))) = 40 + 20 * 4 * 8
	AS lists_20_by_4_float64 FROM st4;
SELECT length(odp_node_knn('shard64', (SELECT p FROM props64), 3, 'id', '{t,x}', 'euclidean', true))
	= 40 + 20 * 3 * (8 + 8) AS knn_20_by_3_float64;
SELECT odp_try(format('SELECT odp_node_ss_exact(%s, %L::bytea)', handle, (SELECT p FROM props)))
FROM st4;
SELECT odp_node_ss_close(handle) FROM st4;
SET odp_gpu.distance_precision = float32;
SELECT length(odp_node_knn('shard64', (SELECT p FROM q), 3, 'id', '{t,x}', 'euclidean', false))
	= 40 + 7 * 3 * (8 + 4) AS knn_float32_when_set;
SELECT odp_try(format('SELECT odp_node_knn(%L, %L::bytea, 3, %L, %L, %L, false)',
	'shard64', (SELECT p FROM props64), 'id', '{t,x}', 'euclidean'));
RESET odp_gpu.distance_precision;

-- skyband: the shard's k-skyband with its values, by id
CREATE TABLE hotels (id int PRIMARY KEY, price float8, rating float8);
INSERT INTO hotels VALUES (1, 80, 4), (2, 50, 3), (3, 90, 3.5), (4, 120, 5), (5, 130, 2);
SELECT length(odp_node_skyline('hotels', '{min,max}', 1, 'id', '{price,rating}')) = 40 + 3 * (8 + 2 * 8)
	AS skyline_3_rows;
SELECT length(odp_node_skyline('hotels', '{min,max}', 2, 'id', '{price,rating}')) = 40 + 4 * (8 + 2 * 8)
	AS skyband_2_4_rows;
SELECT odp_try($$SELECT odp_node_skyline('hotels', '{min}', 1, 'id', '{price,rating}')$$);
SELECT odp_try($$SELECT odp_node_skyline('hotels', '{min,max}', 0, 'id', '{price,rating}')$$);

-- the settings of sharded tables
SHOW odp_gpu.distributed;
SHOW odp_gpu.node_connect_timeout;
SELECT odp_try($$SET odp_gpu.node_connect_timeout = 0$$);
SELECT odp_try($$SET odp_gpu.distributed = 'sometimes'$$);

DROP TABLE shard, empty_shard, wide, hotels, shard64;
DROP FUNCTION odp_try(text);
DROP EXTENSION odp_gpu;
