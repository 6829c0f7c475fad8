-- Skyline and k-skyband: odp_skyline and odp_skyline_agg against their SQL
-- formulation (NOT EXISTS a dominating row; a correlated count of the
-- dominating rows for the band), on columns and arrays, min and max
-- criteria, ties and duplicates, float64 values that float32 would merge,
-- groups, privileges and row-level security, every error, and the
-- upgrade from 0.3.0.
CREATE EXTENSION odp_gpu VERSION '0.3.0';
ALTER EXTENSION odp_gpu UPDATE TO '0.4.0';
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented,
	   p.provolatile, p.proparallel, p.prosecdef, p.proisstrict
FROM pg_proc p WHERE proname LIKE 'odp_skyline%' ORDER BY p.oid::regprocedure::text COLLATE "C";

\i sql/include/odp_try.psql

-- Hotels: cheap, close to the beach, well rated.  3 is dominated by 1
-- (dearer, farther, worse); 5 equals 4 (neither dominates the other);
-- 6 is dominated by 1, 2 and 4 and 5.
CREATE TABLE hotels (id int PRIMARY KEY, price float8, distance float8, rating float8);
INSERT INTO hotels VALUES (1, 80, 0.5, 4), (2, 50, 2.0, 3), (3, 90, 0.9, 3.5),
	(4, 120, 0.1, 5), (5, 120, 0.1, 5), (6, 130, 2.5, 2);
SELECT * FROM odp_skyline('hotels', directions => '{min,min,max}');
SELECT * FROM odp_skyline('hotels', directions => '{min,min,max}', band => 3);
-- the default is min on every feature; MIN and Max are accepted
SELECT * FROM odp_skyline('hotels', features => '{price,rating}');
SELECT * FROM odp_skyline('hotels', '{MIN,Max}', features => '{price,rating}');
-- one feature: the best value, ties included
SELECT * FROM odp_skyline('hotels', '{max}', features => '{rating}');
-- a query source, and ids that are not a primary key
SELECT * FROM odp_skyline('SELECT id * 10 AS key, price, rating FROM hotels', '{min,max}', id_column => 'key');

-- The oracle: NOT EXISTS a row at least as good everywhere and better
-- somewhere.  2,000 rows, values rounded so that ties are common.
CREATE TABLE pts (id int PRIMARY KEY, a float8, b float8, c float8, d float8);
SELECT setseed(0.42);
INSERT INTO pts SELECT i, round(random()::numeric, 2), round(random()::numeric, 1),
	random(), round((random() * 5)::numeric) FROM generate_series(1, 2000) i;
-- a few exact duplicates
INSERT INTO pts SELECT id + 5000, a, b, c, d FROM pts WHERE id % 97 = 0;
CREATE VIEW pts_sky AS
SELECT q.id FROM pts q WHERE NOT EXISTS (
	SELECT 1 FROM pts p WHERE p.a <= q.a AND p.b >= q.b AND p.c <= q.c AND p.d >= q.d
	  AND (p.a < q.a OR p.b > q.b OR p.c < q.c OR p.d > q.d));
SELECT count(*) AS skyline_rows FROM pts_sky;
SELECT count(*) AS differences FROM (
	(SELECT id FROM odp_skyline('pts', '{min,max,min,max}') EXCEPT SELECT id FROM pts_sky)
	UNION ALL
	(SELECT id FROM pts_sky EXCEPT SELECT id FROM odp_skyline('pts', '{min,max,min,max}'))) x;
-- the 4-skyband with each row's number of dominators
CREATE VIEW pts_band AS
SELECT q.id, (SELECT count(*) FROM pts p WHERE p.a <= q.a AND p.b >= q.b AND p.c <= q.c AND p.d >= q.d
	  AND (p.a < q.a OR p.b > q.b OR p.c < q.c OR p.d > q.d))::int AS dominated_by
FROM pts q;
SELECT count(*) AS band_rows FROM pts_band WHERE dominated_by < 4;
SELECT count(*) AS differences FROM (
	(SELECT * FROM odp_skyline('pts', '{min,max,min,max}', band => 4)
	 EXCEPT SELECT * FROM pts_band WHERE dominated_by < 4)
	UNION ALL
	(SELECT * FROM pts_band WHERE dominated_by < 4
	 EXCEPT SELECT * FROM odp_skyline('pts', '{min,max,min,max}', band => 4))) x;
-- rows come out by id
SELECT bool_and(id > prev) AS ordered FROM (
	SELECT id, lag(id, 1, -1::bigint) OVER () AS prev FROM odp_skyline('pts', '{min,max,min,max}', band => 4)) x;
-- a band as large as the input returns every row
SELECT count(*) FROM odp_skyline('pts', band => 1000000);

-- An array feature: one direction per element; real[] and float8[] agree
CREATE TABLE vecs (id bigint PRIMARY KEY, v float8[], r real[]);
INSERT INTO vecs SELECT id, ARRAY[a, b, c, d], ARRAY[a, b, c, d]::real[] FROM pts;
SELECT count(*) AS differences FROM (
	(SELECT id FROM odp_skyline('vecs', '{min,max,min,max}', features => '{v}') EXCEPT SELECT id FROM pts_sky)
	UNION ALL
	(SELECT id FROM pts_sky EXCEPT SELECT id FROM odp_skyline('vecs', '{min,max,min,max}', features => '{v}'))) x;
SELECT count(*) FROM odp_skyline('vecs', '{min,max,min,max}', features => '{r}');

-- Many features: 150 rows of 80, dominance over unnest as the oracle
CREATE TABLE wide (id int PRIMARY KEY, v float8[]);
INSERT INTO wide SELECT i, array_agg(CASE WHEN j <= 3 THEN round((random() * 3)::numeric) ELSE i % 7 + j END ORDER BY j)
FROM generate_series(1, 150) i, generate_series(1, 80) j GROUP BY i;
CREATE VIEW wide_sky AS
SELECT q.id FROM wide q WHERE NOT EXISTS (
	SELECT 1 FROM wide p WHERE p.id <> q.id
	  AND NOT EXISTS (SELECT 1 FROM unnest(p.v, q.v) u(x, y) WHERE x > y)
	  AND EXISTS (SELECT 1 FROM unnest(p.v, q.v) u(x, y) WHERE x < y));
SELECT count(*) AS skyline_rows, count(*) = (SELECT count(*) FROM odp_skyline('wide')) AS same_count,
	   count(*) FILTER (WHERE id NOT IN (SELECT id FROM odp_skyline('wide'))) AS missing
FROM wide_sky;

-- float8 as stored: values that differ in the 10th digit are different
-- (in float32 all of them would be 1e9, and all three on the skyline)
SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, 1000000000.000001::float8, 2.0::float8),
	(2, 1000000000.000002, 2.0), (3, 1000000000.000003, 1.0)) s(id, x, y)');
-- integers compare exactly up to 2^53 (beyond, float64 rounds them)
SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, 9007199254740991::bigint, 1), (2, 9007199254740990, 1)) s(id, x, y)');
-- -0 equals 0
SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, ''-0''::float8, 1.0::float8), (2, 0, 1)) s(id, x, y)');

-- The aggregate: each group's skyline, against NOT EXISTS within the group
CREATE TABLE listings (id bigint PRIMARY KEY, city text, price float8, size float8);
INSERT INTO listings SELECT id, (ARRAY['north', 'south', 'east'])[id % 3 + 1], a * 1000, c * 100 FROM pts;
SELECT city, cardinality(odp_skyline_agg(id, ARRAY[price, size], '{min,max}')) AS skyline_rows
FROM listings GROUP BY city ORDER BY city;
SELECT count(*) AS differences FROM (
	(SELECT city, unnest(odp_skyline_agg(id, ARRAY[price, size], '{min,max}')) FROM listings GROUP BY city
	 EXCEPT
	 SELECT city, id FROM listings q WHERE NOT EXISTS (
		SELECT 1 FROM listings p WHERE p.city = q.city AND p.price <= q.price AND p.size >= q.size
		  AND (p.price < q.price OR p.size > q.size)))
	UNION ALL
	(SELECT city, id FROM listings q WHERE NOT EXISTS (
		SELECT 1 FROM listings p WHERE p.city = q.city AND p.price <= q.price AND p.size >= q.size
		  AND (p.price < q.price OR p.size > q.size))
	 EXCEPT
	 SELECT city, unnest(odp_skyline_agg(id, ARRAY[price, size], '{min,max}')) FROM listings GROUP BY city)) x;
SELECT odp_skyline_agg(id, v, NULL) FROM (VALUES (1, '{1,2}'::real[]), (2, '{2,1}'), (3, '{2,2}')) s(id, v);
SELECT odp_skyline_agg(id, v, '{min,min}', 2) FROM (VALUES (1, '{1,2}'::float8[]), (2, '{2,1}'), (3, '{2,2}'), (4, '{3,3}')) s(id, v);
-- the same directions spelled differently in different rows are the same
SELECT odp_skyline_agg(id, v, CASE WHEN id = 1 THEN '{MIN,min}' ELSE '{min,Min}' END::text[])
FROM (VALUES (1, '{1,2}'::float8[]), (2, '{2,1}'), (3, '{2,2}')) s(id, v);
SELECT odp_skyline_agg(id, v, '{min}') IS NULL AS no_rows FROM (VALUES (1, '{1}'::float8[])) s(id, v) WHERE id < 0;

-- Privileges and row-level security hold as for every odp_gpu function
CREATE ROLE regress_odp_sky;
CREATE TABLE owned (id int PRIMARY KEY, owner name, price float8, rating float8);
INSERT INTO owned SELECT id, CASE WHEN id IN (2, 3, 6) THEN 'regress_odp_sky' ELSE 'someone' END, price, rating FROM hotels;
ALTER TABLE owned ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON owned FOR SELECT USING (owner = current_user);
SET ROLE regress_odp_sky;
SELECT odp_try($$SELECT * FROM odp_skyline('owned', features => '{price,rating}')$$);
RESET ROLE;
GRANT SELECT ON owned TO regress_odp_sky;
SET ROLE regress_odp_sky;
-- only the policy's rows: 1 and 4 would dominate 3 and 6, but are hidden
SELECT * FROM odp_skyline('owned', '{min,max}', features => '{price,rating}');
RESET ROLE;
REVOKE SELECT ON owned FROM regress_odp_sky;
GRANT SELECT (id, owner) ON owned TO regress_odp_sky;
SET ROLE regress_odp_sky;
SELECT odp_try($$SELECT * FROM odp_skyline('owned', features => '{price,rating}')$$);
RESET ROLE;

-- Errors
SELECT odp_try($$SELECT * FROM odp_skyline(NULL)$$);
SELECT odp_try($$SELECT * FROM odp_skyline('hotels', '{min,max}')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('hotels', '{}')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('hotels', '{min,max,best}')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('hotels', '{min,NULL,max}')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('hotels', '{{min,max},{min,max}}')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('hotels', band => 0)$$);
SELECT odp_try($$SELECT * FROM odp_skyline('hotels', band => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_skyline('vecs', '{min,max}', features => '{v}')$$);
-- NULL, NaN and infinite values, vectors of different lengths, no rows
SELECT odp_try($$SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, 2.0::float8, 3.0::float8), (2, NULL, 1.0)) s(id, a, b)')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, ARRAY[1, ''NaN'']::float8[]), (2, ARRAY[1, 2]::float8[])) s(id, v)')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, ARRAY[1, ''-Infinity'']::float8[]), (2, ARRAY[1, 2]::float8[])) s(id, v)')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, NULL::float8[]), (2, ARRAY[1, 2]::float8[])) s(id, v)')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, ARRAY[1, 2, 3]::float8[]), (2, ARRAY[1, 2]::float8[])) s(id, v)')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('SELECT * FROM hotels WHERE id < 0')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('SELECT * FROM (VALUES (1, 1.0), (1, 2.0)) s(id, x)')$$);
-- unknown table and column, wrong column type
SELECT odp_try($$SELECT * FROM odp_skyline('no_such_table')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('hotels', features => '{stars}')$$);
SELECT odp_try($$SELECT * FROM odp_skyline('owned', features => '{owner}')$$);
-- the aggregate's arguments must not change within a group
SELECT odp_try($$SELECT odp_skyline_agg(id, v, CASE WHEN id = 1 THEN '{min,min}' ELSE '{min,max}' END::text[]) FROM (VALUES (1, '{1,2}'::float8[]), (2, '{2,1}')) s(id, v)$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, v, '{min,min}', id::int) FROM (VALUES (1, '{1,2}'::float8[]), (2, '{2,1}')) s(id, v)$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, v, '{min,up}') FROM (VALUES (1, '{1,2}'::float8[])) s(id, v)$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, v, '{min}') FROM (VALUES (1, '{1,2}'::float8[])) s(id, v)$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, v, '{min,min}', 0) FROM (VALUES (1, '{1,2}'::float8[])) s(id, v)$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, v, '{min,min}') FROM (VALUES (1, '{1,2}'::float8[]), (1, '{2,1}')) s(id, v)$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, v, '{min,min}') FROM (VALUES (1, '{1,NaN}'::float8[])) s(id, v)$$);

DROP POLICY own_rows ON owned;
DROP VIEW pts_sky, pts_band, wide_sky;
DROP TABLE owned, listings, wide, vecs, pts, hotels;
DROP ROLE regress_odp_sky;
DROP FUNCTION odp_try(text);
DROP EXTENSION odp_gpu;
