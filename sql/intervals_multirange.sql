-- Region matching on multirange columns against && of multiranges as the
-- oracle: every built-in multirange type, empty multiranges (they overlap
-- nothing), unbounded ranges, rows of many ranges; a multirange with a
-- range in one region, two multiranges in one region (every combination
-- of their ranges), a multirange source against a range source; each pair
-- once, in order, and the count; one set and two; errors.
CREATE EXTENSION odp_gpu;
\i sql/include/odp_try.psql
\i sql/include/odp_check_pairs.psql

-- The definition on small examples.
CREATE TABLE ms (id int PRIMARY KEY, m int4multirange);
INSERT INTO ms VALUES (1, '{[1,3), [10,20)}'), (2, '{}'), (3, '{[3,10)}'), (4, '{(,0], [25,)}'),
	(5, '{[2,3), [15,16), [30,31)}');
SELECT * FROM odp_interval_match('ms', 'ms');
SELECT a.id, b.id FROM ms a JOIN ms b ON a.m && b.m ORDER BY 1, 2;
SELECT * FROM odp_interval_match('ms');
SELECT odp_interval_match_count('ms'), odp_interval_match_count('ms', 'ms');

-- Random multiranges of every built-in type: 0 to 4 ranges a row (range_agg
-- merges those that touch), some unbounded, some rows empty.
SELECT setseed(0.5);
CREATE TABLE parts AS
SELECT id, p, (random() * 200)::int AS lo, (random() * 12)::int AS len
FROM generate_series(1, 300) id, generate_series(1, 4) p
WHERE p <= 1 + id % 5;
CREATE TABLE mr AS
SELECT id,
	CASE WHEN id % 23 = 0 THEN '{}'::int4multirange ELSE range_agg(int4range(CASE WHEN id % 41 = 0 AND p = 1 THEN NULL ELSE lo END, lo + len)) END AS i4,
	range_agg(int8range(lo * 1000000000000, (lo + len) * 1000000000000, '[]')) AS i8,
	range_agg(numrange(lo / 10.0, (lo + len) / 10.0 + 0.01)) AS num,
	range_agg(daterange(date '2020-01-01' + lo, date '2020-01-01' + lo + len, '(]')) AS d,
	range_agg(tsrange(timestamp '2020-01-01' + lo * interval '1 microsecond', timestamp '2020-01-01' + (lo + len) * interval '1 microsecond')) AS ts,
	range_agg(tstzrange(timestamptz '2020-01-01 00:00+00' + lo * interval '1 hour', CASE WHEN id % 37 = 0 THEN NULL ELSE timestamptz '2020-01-01 00:00+00' + (lo + len) * interval '1 hour' END)) AS tstz
FROM parts GROUP BY id;
CREATE TABLE mr2 AS SELECT id + 1000 AS id, i4, i8, num, d, ts, tstz FROM mr WHERE id % 4 <> 1;
SELECT count(*) FILTER (WHERE i4 = '{}') > 0 AS some_empty, max(array_length(array(SELECT unnest(i4)), 1)) > 2 AS several,
	count(*) FILTER (WHERE lower_inf(i4)) > 0 AS unbounded FROM mr;
SELECT col, odp_check(format($$odp_interval_match('mr', 'mr2', dims => '{%s}')$$, col),
					  format($$SELECT s.id, u.id FROM mr s JOIN mr2 u ON s.%1$I && u.%1$I$$, col))
FROM unnest(array['i4', 'i8', 'num', 'd', 'ts', 'tstz']) col;
SELECT col, odp_check(format($$odp_interval_match('mr', dims => '{%s}')$$, col),
					  format($$SELECT a.id, b.id FROM mr a JOIN mr b ON a.%1$I && b.%1$I AND a.id < b.id$$, col))
FROM unnest(array['i4', 'i8', 'num', 'd', 'ts', 'tstz']) col;

-- Two dimensions: a multirange and a range; two multiranges (each row as
-- every combination of their ranges); three, and all six on rows of at
-- most two ranges.
SELECT odp_check($$odp_interval_match('SELECT id, i4, int4range(id % 50, id % 50 + 20) AS r FROM mr', 'SELECT id, i4, int4range(id % 40, id % 40 + 10) AS r FROM mr2', dims => '{i4,r}')$$,
				 $$SELECT s.id, u.id FROM mr s JOIN mr2 u ON s.i4 && u.i4 AND int4range(s.id % 50, s.id % 50 + 20) && int4range(u.id % 40, u.id % 40 + 10)$$) AS multirange_and_range;
SELECT odp_check($$odp_interval_match('mr', 'mr2', dims => '{i4,num}')$$,
				 $$SELECT s.id, u.id FROM mr s JOIN mr2 u ON s.i4 && u.i4 AND s.num && u.num$$) AS two_multiranges;
SELECT odp_check($$odp_interval_match('mr', dims => '{i4,num,tstz}')$$,
				 $$SELECT a.id, b.id FROM mr a JOIN mr b ON a.id < b.id AND a.i4 && b.i4 AND a.num && b.num AND a.tstz && b.tstz$$) AS three;
SELECT odp_check($$odp_interval_match('SELECT * FROM mr WHERE id % 5 < 2', dims => '{i4,i8,num,d,ts,tstz}')$$,
				 $$SELECT a.id, b.id FROM mr a JOIN mr b ON a.id < b.id AND a.id % 5 < 2 AND b.id % 5 < 2 AND a.i4 && b.i4
				   AND a.i8 && b.i8 AND a.num && b.num AND a.d && b.d AND a.ts && b.ts AND a.tstz && b.tstz$$) AS six;
-- by default every range and multirange column is a dimension
SELECT odp_check($$odp_interval_match('SELECT id, i4, int4range(id % 50, id % 50 + 20) AS r FROM mr')$$,
				 $$SELECT a.id, b.id FROM mr a JOIN mr b ON a.id < b.id AND a.i4 && b.i4 AND int4range(a.id % 50, a.id % 50 + 20) && int4range(b.id % 50, b.id % 50 + 20)$$) AS by_default;

-- A multirange source against a range source of the same subtype.
CREATE TABLE rr AS SELECT id, lo, int4range(lo, lo + len) AS r FROM parts WHERE p = 1;
SELECT odp_check($$odp_interval_match('mr', 'rr', dims => '{i4}', other_dims => '{r}')$$,
				 $$SELECT s.id, u.id FROM mr s JOIN rr u ON s.i4 && u.r$$) AS against_ranges;
SELECT odp_check($$odp_interval_match('rr', 'mr', dims => '{r}', other_dims => '{i4}')$$,
				 $$SELECT s.id, u.id FROM rr s JOIN mr u ON s.r && u.i4$$) AS ranges_against;

-- A row of many ranges matching many rows of many ranges: each pair once.
CREATE TABLE wide AS SELECT 1 AS id, range_agg(int4range(2 * i, 2 * i + 1)) AS m FROM generate_series(0, 999) i
UNION ALL SELECT 1 + j, range_agg(int4range(2 * i + j % 2, 2 * i + j % 2 + 1, '[]')) FROM generate_series(1, 40) j, generate_series(0, 499) i GROUP BY j;
SELECT odp_check($$odp_interval_match('wide', 'wide')$$, $$SELECT a.id, b.id FROM wide a JOIN wide b ON a.m && b.m$$);
SELECT odp_check($$odp_interval_match('wide')$$, $$SELECT a.id, b.id FROM wide a JOIN wide b ON a.m && b.m AND a.id < b.id$$);

-- Errors: null, duplicate ids (also of rows of several ranges), too many
-- combinations, a range and a multirange of different subtypes.
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, NULL::int4multirange AS m')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, ''{[1,2),[5,6)}''::int4multirange AS m UNION ALL SELECT 1, ''{[3,4)}''')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 7 AS id, ''{[1,2),[5,6)}''::int4multirange AS m UNION ALL SELECT 7, ''{[3,4),[8,9)}''')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, m AS a, m AS b FROM (SELECT range_agg(int4range(2 * i, 2 * i + 1)) AS m FROM generate_series(0, 1000) i) x', dims => '{a,b}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('mr', 'rr', dims => '{d}', other_dims => '{r}')$$);

DROP TABLE ms, parts, mr, mr2, rr, wide;
DROP FUNCTION odp_try(text), odp_check(text, text);
DROP EXTENSION odp_gpu;
