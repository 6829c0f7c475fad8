-- Region matching on numeric bounds, compared exactly as PostgreSQL
-- compares numerics, against && as the oracle: decimals that double
-- precision cannot hold (0.1, 462.7), tiny and huge ones (1e-30, 1e30,
-- beyond double precision's range: 1e400), values a double cannot tell
-- apart (0.3 and 0.30000000000000000001), infinities, equal values of
-- different scales, equal bounds with exclusive ends; numrange columns,
-- numeric pairs, numeric mixed with double precision in a pair and
-- across the sources; one set and two, with many ties.
CREATE EXTENSION odp_gpu;
\i sql/include/odp_try.psql
\i sql/include/odp_check_pairs.psql

-- The values, in an order unrelated to theirs.
CREATE TABLE vals (k int PRIMARY KEY, v numeric);
INSERT INTO vals VALUES
	(0, 0.1), (1, 0.2), (2, 0.3), (3, 0.30000000000000000001), (4, 0.29999999999999999999),
	(5, 1e-30), (6, 1e30), (7, -1e30), (8, 462.7), (9, 500.1),
	(10, 1e400), (11, -1e400), (12, 1e-400), (13, 0), (14, 0.10000000000000000555),
	(15, 0.1000000000000000055511151231257827021181583404541015625), (16, 1.00), (17, 1),
	(18, 123456789012345678901234567890.123456789), (19, 123456789012345678901234567890.123456788),
	(20, -0.1), (21, 2.5), (22, 'Infinity'), (23, '-Infinity'), (24, 0.5);

-- The small cases the definition turns on.
CREATE TABLE ns (id int PRIMARY KEY, r numrange);
CREATE TABLE nu (id int PRIMARY KEY, r numrange);
INSERT INTO ns VALUES (1, numrange(462.7, 500.1)), (2, numrange(0.1, 0.3)), (3, numrange(1e-30, 1e30)),
	(4, numrange(0.3, 0.3, '[]')), (5, numrange(NULL, 0.1, '()')), (6, 'empty'), (7, numrange(1e400, NULL)),
	(8, numrange(0.1, 0.1, '[]'));
INSERT INTO nu VALUES (1, numrange(500.1, 600)), (2, numrange(0.3, 0.4)), (3, numrange(0.30000000000000000001, 1)),
	(4, numrange(0.1, 0.1, '[]')), (5, numrange(1e30, NULL)), (6, numrange(0, 1e-30, '[]')),
	(7, numrange(0.09999999999999999999, 0.1, '(]')), (8, numrange(0.29999999999999999999, 0.3, '[)')),
	(9, numrange(1e399, 1e400, '[]')), (10, numrange(0.10000000000000000555, 0.2));
SELECT * FROM odp_interval_match('ns', 'nu');
SELECT s.id, u.id FROM ns s JOIN nu u ON s.r && u.r ORDER BY 1, 2;
SELECT odp_check($$odp_interval_match('ns', 'nu')$$, $$SELECT s.id, u.id FROM ns s JOIN nu u ON s.r && u.r$$);
SELECT odp_check($$odp_interval_match('nu')$$, $$SELECT a.id, b.id FROM nu a JOIN nu b ON a.r && b.r AND a.id < b.id$$);

-- Random ranges over those values, of every inclusivity, some unbounded.
CREATE TABLE nr AS
SELECT i AS id,
	numrange(CASE WHEN i % 29 = 0 THEN NULL ELSE least(a.v, b.v) END,
			 CASE WHEN i % 31 = 0 THEN NULL ELSE greatest(a.v, b.v) END,
			 (array['[]', '[)', '(]', '()'])[i % 4 + 1]) AS r
FROM generate_series(1, 400) i
JOIN vals a ON a.k = (i * 7) % 25
JOIN vals b ON b.k = (i * 11 + i / 25) % 25;
CREATE TABLE nr2 AS SELECT id + 1000 AS id, r FROM nr WHERE id % 3 <> 0;
SELECT count(*) FILTER (WHERE isempty(r)) > 0 AS some_empty, count(DISTINCT r) > 100 AS varied FROM nr;
SELECT odp_check($$odp_interval_match('nr', 'nr2')$$, $$SELECT s.id, u.id FROM nr s JOIN nr2 u ON s.r && u.r$$);
SELECT odp_check($$odp_interval_match('nr')$$, $$SELECT a.id, b.id FROM nr a JOIN nr b ON a.r && b.r AND a.id < b.id$$);
-- the same set twice: one read, ranked once
SELECT odp_check($$odp_interval_match('nr', 'nr')$$, $$SELECT s.id, u.id FROM nr s JOIN nr u ON s.r && u.r$$);

-- Numeric pairs of lower and upper columns, with two dimensions of which
-- one is an int4range; then numeric with double precision in one pair and
-- across the sources (double precision values that are exact decimals, so
-- that the oracle's cast to numeric keeps them).
CREATE TABLE np AS
SELECT id, lower(r) AS lo, upper(r) AS hi, int4range(id % 17, id % 17 + id % 5, '[]') AS band,
	(array[0.5, 0.25, 2, 1024, 0.125, 1048576, -3])[id % 7 + 1]::float8 AS f
FROM nr WHERE NOT lower_inf(r) AND NOT upper_inf(r) AND NOT isempty(r) AND lower(r) < upper(r);
SELECT odp_check($$odp_interval_match('np', 'np', dims => '{lo,hi}', bounds => '[)')$$,
				 $$SELECT s.id, u.id FROM np s JOIN np u ON numrange(s.lo, s.hi, '[)') && numrange(u.lo, u.hi, '[)')$$);
SELECT odp_check($$odp_interval_match('np', 'SELECT id, r, int4range(id % 13, id % 13 + 3) AS r2 FROM nr', dims => '{lo,hi,band}', other_dims => '{r,r2}', bounds => '[]')$$,
				 $$SELECT s.id, u.id FROM np s JOIN (SELECT id, r, int4range(id % 13, id % 13 + 3) AS r2 FROM nr) u
				   ON numrange(s.lo, s.hi, '[]') && u.r AND s.band && u.r2$$) AS two_dims;
SELECT odp_check($$odp_interval_match('SELECT id, lo, f AS hi FROM np WHERE lo <= f::numeric', 'nr', dims => '{lo,hi}', other_dims => '{r}')$$,
				 $$SELECT s.id, u.id FROM np s JOIN nr u ON s.lo <= s.f::numeric AND numrange(s.lo, s.f::numeric, '[]') && u.r$$) AS numeric_and_float8;
SELECT odp_check($$odp_interval_match('SELECT id, f AS lo, f + 1 AS hi FROM np', 'nr', dims => '{lo,hi}', other_dims => '{r}')$$,
				 $$SELECT s.id, u.id FROM np s JOIN nr u ON numrange(s.f::numeric, (s.f + 1)::numeric, '[]') && u.r$$) AS float8_against_numeric;
-- a double precision bound is the exact value it holds: 0.1::float8 is
-- above the numeric 0.1 and below 0.1000000000000000055511151231257828
SELECT * FROM odp_interval_match('SELECT 1 AS id, 0.1::float8 AS lo, 0.1::float8 AS hi',
	'SELECT k AS id, v AS lo, v AS hi FROM vals WHERE k IN (0, 14, 15)', dims => '{lo,hi}');

-- Many ties: 2,000 ranges over 12 values against 300.
CREATE TABLE nt AS
SELECT i AS id, numrange(least(a.v, b.v), greatest(a.v, b.v), CASE WHEN i % 2 = 0 THEN '[)' ELSE '[]' END) AS r
FROM generate_series(1, 2000) i
JOIN vals a ON a.k = (i * 5) % 12 JOIN vals b ON b.k = (i * 7 + 3) % 12;
SELECT odp_check($$odp_interval_match('nt', 'SELECT id, r FROM nt WHERE id <= 300')$$,
				 $$SELECT s.id, u.id FROM nt s JOIN nt u ON s.r && u.r WHERE u.id <= 300$$);

-- Decimals of at most 15 significant digits alone keep the keys of their
-- nearest doubles (no ranking needed), with ties; with double precision
-- bounds in the other source they are ranked.
CREATE TABLE short_vals AS SELECT row_number() OVER (ORDER BY k) - 1 AS j, v FROM vals
WHERE k IN (0, 1, 2, 5, 6, 7, 8, 9, 13, 16, 17, 20, 21, 24);
CREATE TABLE nsh AS
SELECT i AS id, numrange(least(a.v, b.v), greatest(a.v, b.v), (array['[]', '[)', '(]', '()'])[i % 4 + 1]) AS r
FROM generate_series(1, 600) i
JOIN short_vals a ON a.j = (i * 7) % 14 JOIN short_vals b ON b.j = (i * 11 + i / 14) % 14;
SELECT odp_check($$odp_interval_match('nsh', 'SELECT id + 1000 AS id, r FROM nsh WHERE id % 2 = 0')$$,
				 $$SELECT s.id, u.id + 1000 FROM nsh s JOIN nsh u ON s.r && u.r WHERE u.id % 2 = 0$$) AS short_decimals;
SELECT odp_check($$odp_interval_match('nsh', 'SELECT id, f AS lo, f + 1 AS hi FROM np', other_dims => '{lo,hi}')$$,
				 $$SELECT s.id, u.id FROM nsh s JOIN np u ON s.r && numrange(u.f::numeric, (u.f + 1)::numeric, '[]')$$) AS short_and_float8;
SELECT * FROM odp_interval_match('SELECT 1 AS id, numrange(0.1, 0.1, ''[]'') AS r', 'SELECT 2 AS id, 0.1::float8 AS lo, 0.1::float8 AS hi', other_dims => '{lo,hi}');

-- Random decimals of 1 to 15 significant digits from 1e-30 to 1e30 (the
-- double nearest to each found from its digits, or from its text beyond
-- 1e22), equal values written with different scales: their keys alone
-- order them.
SELECT setseed(0.75);
CREATE TABLE rnd_vals AS
SELECT j, CASE WHEN j % 5 = 0 THEN (m * power(10::numeric, e))::numeric(80, 40) ELSE m * power(10::numeric, e) END AS v
FROM (SELECT j, trunc(random() * 10 ^ (1 + j % 15))::numeric * (CASE WHEN j % 3 = 0 THEN -1 ELSE 1 END) AS m,
		(j * 7919 % 61) - 30 - (1 + j % 15) AS e FROM generate_series(1, 400) j) x;
CREATE TABLE rnd AS
SELECT i AS id, numrange(least(a.v, b.v), greatest(a.v, b.v), (array['[]', '[)', '(]', '()'])[i % 4 + 1]) AS r
FROM generate_series(1, 1500) i JOIN rnd_vals a ON a.j = 1 + (i * 7) % 400 JOIN rnd_vals b ON b.j = 1 + (i * 13 + i / 400) % 400;
SELECT odp_check($$odp_interval_match('rnd', 'SELECT id, r FROM rnd WHERE id % 3 = 0')$$,
				 $$SELECT s.id, u.id FROM rnd s JOIN rnd u ON s.r && u.r WHERE u.id % 3 = 0$$) AS random_decimals;

-- NaN stays an error
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, 1::numeric AS lo, ''NaN''::numeric AS hi', dims => '{lo,hi}')$$);
-- a numeric lower above its upper, told apart beyond double precision
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, 0.30000000000000000001 AS lo, 0.3 AS hi', dims => '{lo,hi}')$$);

DROP TABLE vals, ns, nu, nr, nr2, np, nt, short_vals, nsh, rnd_vals, rnd;
DROP FUNCTION odp_try(text), odp_check(text, text);
DROP EXTENSION odp_gpu;
