-- Region matching: odp_interval_match and odp_interval_match_count against
-- their SQL formulation (a join on &&), on every built-in range type, a
-- user-defined range over float8, box, cube and pairs of lower and upper
-- columns; bounds of every inclusivity, unbounded and empty ranges,
-- identical regions, one region containing all others, timestamps one
-- microsecond apart, 1 to 4 dimensions, one set and two; query sources,
-- privileges and row-level security, every error, and the upgrade from
-- 0.4.0.
CREATE EXTENSION odp_gpu VERSION '0.4.0';
ALTER EXTENSION odp_gpu UPDATE TO '0.5.0';
CREATE EXTENSION cube;
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented,
	   p.provolatile, p.proparallel, p.prosecdef, p.proisstrict
FROM pg_proc p WHERE proname LIKE 'odp_interval%' ORDER BY p.oid::regprocedure::text COLLATE "C";

\i sql/include/odp_try.psql

\i sql/include/odp_check_pairs.psql

-- The definition on small examples: [1,5) and [5,10] do not overlap,
-- [5,10] and [10,11) do; an empty range overlaps nothing; unbounded ends.
CREATE TABLE subs (id int PRIMARY KEY, r int4range);
CREATE TABLE upds (id int PRIMARY KEY, r int4range);
INSERT INTO subs VALUES (1, '[1,5)'), (2, '[5,10]'), (3, 'empty'), (4, '(,3)'), (5, '[20,)');
INSERT INTO upds VALUES (10, '[4,6)'), (11, '[10,11)'), (12, '[100,200)'), (13, '[3,3]'), (14, '(,)');
SELECT * FROM odp_interval_match('subs', 'upds');
SELECT s.id, u.id FROM subs s JOIN upds u ON s.r && u.r ORDER BY 1, 2;
SELECT odp_interval_match_count('subs', 'upds');
-- one set: each pair once, id_a < id_b; dims by name (a second text is updates)
SELECT * FROM odp_interval_match('subs');
SELECT * FROM odp_interval_match('upds', dims => '{r}');
SELECT odp_interval_match_count('upds');

-- Random ranges of every built-in type, bounds of every inclusivity,
-- some empty, some unbounded, against && (both ways and one set).
SELECT setseed(0.25);
CREATE TABLE rr AS
SELECT i AS id,
	CASE WHEN i % 97 = 0 THEN 'empty'::int4range ELSE int4range(CASE WHEN i % 31 = 0 THEN NULL ELSE lo END, lo + len, b) END AS i4,
	int8range(lo * 1000000000000, CASE WHEN i % 37 = 0 THEN NULL ELSE (lo + len) * 1000000000000 END, b) AS i8,
	numrange(lo / 4.0, (lo + len) / 4.0, b) AS num,
	daterange(date '2020-01-01' + lo, date '2020-01-01' + lo + len, b) AS d,
	tsrange(timestamp '2020-01-01' + lo * interval '1 microsecond', timestamp '2020-01-01' + (lo + len) * interval '1 microsecond', b) AS ts,
	tstzrange(timestamptz '2020-01-01 00:00+00' + lo * interval '1 hour', timestamptz '2020-01-01 00:00+00' + (lo + len) * interval '1 hour', b) AS tstz
FROM (SELECT i, (random() * 60)::int AS lo, (random() * 6)::int AS len,
			 (ARRAY['[]', '[)', '(]', '()'])[1 + floor(random() * 4)::int] AS b
	  FROM generate_series(1, 400) i) x;
CREATE TABLE rs AS SELECT id + 1000 AS id, i4, i8, num, d, ts, tstz FROM rr WHERE id % 2 = 0;
SELECT col, odp_check(format('odp_interval_match(''rr'', ''rs'', dims => ''{%s}'')', col),
					  format('SELECT a.id::bigint, b.id::bigint FROM rr a JOIN rs b ON a.%s && b.%s', col, col))
FROM unnest(ARRAY['i4', 'i8', 'num', 'd', 'ts', 'tstz']) col;
SELECT col, odp_check(format('odp_interval_match(''rr'', dims => ''{%s}'')', col),
					  format('SELECT a.id::bigint, b.id::bigint FROM rr a JOIN rr b ON a.%s && b.%s AND a.id < b.id', col, col))
FROM unnest(ARRAY['i4', 'i8', 'num', 'd', 'ts', 'tstz']) col;
-- several range columns are several dimensions; by default every range column
SELECT odp_check('odp_interval_match(''rr'', ''rs'', dims => ''{i4,ts}'')',
				 'SELECT a.id::bigint, b.id::bigint FROM rr a JOIN rs b ON a.i4 && b.i4 AND a.ts && b.ts');
SELECT odp_check('odp_interval_match(''rr'', ''rs'', dims => ''{d,num,i8,tstz}'')',
				 'SELECT a.id::bigint, b.id::bigint FROM rr a JOIN rs b ON a.d && b.d AND a.num && b.num AND a.i8 && b.i8 AND a.tstz && b.tstz');
SELECT odp_check('odp_interval_match(''rr'', ''rs'')',
				 'SELECT a.id::bigint, b.id::bigint FROM rr a JOIN rs b ON a.i4 && b.i4 AND a.i8 && b.i8 AND a.num && b.num
				  AND a.d && b.d AND a.ts && b.ts AND a.tstz && b.tstz');

-- Rows read from their tuples' bytes, where fixed-width columns alone come
-- before the range: ids of every width, columns in between to align past,
-- rows with a NULL elsewhere (deformed instead), and rows stored before the
-- range column was added (its default then comes from the catalog).
CREATE TABLE rdw (id smallint, flag boolean, x bigint, r daterange);
INSERT INTO rdw SELECT i, i % 2 = 0, CASE WHEN i % 11 = 0 THEN NULL ELSE i END,
	CASE WHEN i % 23 = 0 THEN 'empty' ELSE daterange(date '2020-01-01' + i % 50, date '2020-01-01' + i % 50 + i % 7, '(]') END
FROM generate_series(1, 300) i;
SELECT odp_check('odp_interval_match(''rdw'', dims => ''{r}'')',
				 'SELECT a.id::bigint, b.id::bigint FROM rdw a JOIN rdw b ON a.r && b.r AND a.id < b.id');
CREATE TABLE rda (id bigint);
INSERT INTO rda SELECT i FROM generate_series(1, 200) i;
ALTER TABLE rda ADD COLUMN r tsrange DEFAULT tsrange('2030-01-01', '2030-01-02');
INSERT INTO rda SELECT i, tsrange(timestamp '2030-01-01' + i * interval '7 minutes', timestamp '2030-01-01' + i * interval '9 minutes', '[]')
FROM generate_series(201, 400) i;
SELECT odp_check('odp_interval_match(''rda'')',
				 'SELECT a.id::bigint, b.id::bigint FROM rda a JOIN rda b ON a.r && b.r AND a.id < b.id');
SELECT odp_interval_match_count('rda') = (SELECT count(*) FROM rda a JOIN rda b ON a.r && b.r AND a.id < b.id) AS count_matches;

-- Timestamps one microsecond apart stay apart (never through float32);
-- '(t, t + 1us)' holds no timestamp but is not empty, so it overlaps itself.
CREATE TABLE tt (id int PRIMARY KEY, r tsrange);
INSERT INTO tt VALUES
	(1, tsrange('2030-06-01 12:00:00', '2030-06-01 12:00:00.000001', '[)')),
	(2, tsrange('2030-06-01 12:00:00.000001', '2030-06-01 12:00:00.000002', '[)')),
	(3, tsrange('2030-06-01 12:00:00', '2030-06-01 12:00:00.000001', '()')),
	(4, tsrange('2030-06-01 12:00:00', '2030-06-01 12:00:00.000001', '()')),
	(5, tsrange('2030-06-01 12:00:00.000001', '2030-06-01 12:00:00.000001', '[]')),
	(6, tsrange('infinity', NULL, '()')),
	(7, tsrange('-infinity', '2030-06-01 12:00:00', '[)')),
	(8, tsrange(NULL, '-infinity', '(]'));
SELECT * FROM odp_interval_match('tt');
SELECT a.id, b.id FROM tt a JOIN tt b ON a.r && b.r AND a.id < b.id ORDER BY 1, 2;
SELECT odp_interval_match_count('tt');

-- A user-defined range over float8, doubles of both signs and large
-- magnitudes with excluded bounds (ranked positions in the engine)
CREATE TYPE floatrange AS RANGE (subtype = float8, subtype_diff = float8mi);
SELECT setseed(0.5);
CREATE TABLE fr AS SELECT i AS id,
	floatrange(x, x + w, (ARRAY['[]', '[)', '(]', '()'])[1 + floor(random() * 4)::int]) AS r
FROM (SELECT i, (random() - 0.5) * 1e300 * (CASE WHEN i % 5 = 0 THEN 1e-290 ELSE 1 END) AS x,
			 CASE WHEN i % 3 = 0 THEN 0 ELSE random() * 1e299 END AS w
	  FROM generate_series(1, 300) i) s;
INSERT INTO fr VALUES (1001, '(,)'), (1002, '[-Infinity,-Infinity]'), (1003, '[Infinity,]'), (1004, '[-0,0]'), (1005, '[0,0]');
SELECT odp_check('odp_interval_match(''fr'')',
				 'SELECT a.id::bigint, b.id::bigint FROM fr a JOIN fr b ON a.r && b.r AND a.id < b.id');

-- box: two dimensions, compared as box && compares them, within 1e-6
CREATE TABLE bx (id int PRIMARY KEY, b box);
INSERT INTO bx VALUES (1, '((0,0),(1,1))'), (2, '((1.0000005,0),(2,1))'), (3, '((1.000002,0),(2,1))'),
	(4, '((5,5),(6,6))'), (5, '((0.5,1.0000009),(0.7,3))'), (6, '((-1e-7,-1e-7),(-1e-7,-1e-7))');
SELECT * FROM odp_interval_match('bx');
SELECT a.id, b.id FROM bx a JOIN bx b ON a.b && b.b AND a.id < b.id ORDER BY 1, 2;
SELECT setseed(0.75);
CREATE TABLE bxr AS SELECT i AS id, box(point(x, y), point(x + w * 1e-6, y + h * 1e-6)) AS b
FROM (SELECT i, (random() * 40)::int * 1e-6 + 3 AS x, (random() * 40)::int * 1e-6 AS y,
			 (random() * 3)::int AS w, (random() * 3)::int AS h FROM generate_series(1, 300) i) s;
SELECT odp_check('odp_interval_match(''bxr'')',
				 'SELECT a.id::bigint, b.id::bigint FROM bxr a JOIN bxr b ON a.b && b.b AND a.id < b.id');

-- cube: its dimensions, corners in either order, points
CREATE TABLE cb (id int PRIMARY KEY, c cube);
INSERT INTO cb VALUES (1, '(0,0,0),(1,1,1)'), (2, '(2,2,2),(1,1,1)'), (3, '(2,0,0),(3,1,1)'),
	(4, '(0.5,0.5,0.5)'), (5, '(-1e300,-1e300,-1e300),(1e300,1e300,1e300)');
SELECT * FROM odp_interval_match('cb');
SELECT a.id, b.id FROM cb a JOIN cb b ON a.c && b.c AND a.id < b.id ORDER BY 1, 2;
SELECT setseed(0.125);
CREATE TABLE cr AS SELECT i AS id,
	cube(array[x, y, z, u], array[x + (random() * 3)::int, y + (random() * 3)::int, z + (random() * 3)::int, u + (random() * 3)::int]) AS c
FROM (SELECT i, (random() * 12)::int AS x, (random() * 12)::int AS y, (random() * 12)::int AS z,
			 (random() * 12)::int AS u FROM generate_series(1, 400) i) s;
CREATE TABLE cr2 AS SELECT id + 5000 AS id, c FROM cr WHERE id % 3 = 0;
SELECT odp_check('odp_interval_match(''cr'', ''cr2'')',
				 'SELECT a.id::bigint, b.id::bigint FROM cr a JOIN cr2 b ON a.c && b.c');
SELECT odp_check('odp_interval_match(''cr'')',
				 'SELECT a.id::bigint, b.id::bigint FROM cr a JOIN cr b ON a.c && b.c AND a.id < b.id');

-- Pairs of lower and upper columns: bounds as the range constructors take them
CREATE TABLE pr (id int PRIMARY KEY, lo int, hi bigint, x0 float8, x1 real, t0 timestamptz, t1 timestamptz,
				 d0 date, d1 date, n0 numeric, n1 numeric);
SELECT setseed(0.375);
INSERT INTO pr SELECT i, lo, lo + len, lo / 8.0, (lo + len) / 8.0,
	timestamptz '2024-03-01 00:00+00' + lo * interval '1 minute', timestamptz '2024-03-01 00:00+00' + (lo + len) * interval '1 minute',
	date '2024-03-01' + lo, date '2024-03-01' + lo + len, lo / 2.0, (lo + len) / 2.0
FROM (SELECT i, (random() * 40)::int AS lo, (random() * 4)::int AS len FROM generate_series(1, 300) i) s;
SELECT b, odp_check(format('odp_interval_match(''pr'', dims => ''{lo,hi}'', bounds => ''%s'')', b),
					format('SELECT a.id::bigint, c.id::bigint FROM pr a JOIN pr c ON int8range(a.lo, a.hi, ''%s'') && int8range(c.lo, c.hi, ''%s'') AND a.id < c.id', b, b))
FROM unnest(ARRAY['[]', '[)', '(]', '()']) b;
SELECT b, odp_check(format('odp_interval_match(''pr'', dims => ''{x0,x1,t0,t1}'', bounds => ''%s'')', b),
					format('SELECT a.id::bigint, c.id::bigint FROM pr a JOIN pr c ON floatrange(a.x0, a.x1, ''%s'') && floatrange(c.x0, c.x1, ''%s'')
							AND tstzrange(a.t0, a.t1, ''%s'') && tstzrange(c.t0, c.t1, ''%s'') AND a.id < c.id', b, b, b, b))
FROM unnest(ARRAY['[]', '[)', '()']) b;
SELECT odp_check('odp_interval_match(''pr'', dims => ''{d0,d1,n0,n1}'', bounds => ''(]'')',
				 'SELECT a.id::bigint, c.id::bigint FROM pr a JOIN pr c ON daterange(a.d0, a.d1, ''(]'') && daterange(c.d0, c.d1, ''(]'')
				  AND numrange(a.n0, a.n1, ''(]'') && numrange(c.n0, c.n1, ''(]'') AND a.id < c.id');
-- pairs against ranges of the same domain; other_dims and other_id_column
SELECT odp_check('odp_interval_match(''pr'', ''rr'', dims => ''{lo,hi}'', other_dims => ''{i4}'', bounds => ''[)'')',
				 'SELECT a.id::bigint, c.id::bigint FROM pr a JOIN rr c ON int4range(a.lo, a.hi::int, ''[)'') && c.i4');
SELECT count(*), min(subscription_id), max(update_id) FROM odp_interval_match(
	'SELECT id * 10 AS key, i4 FROM rr', 'SELECT id AS uid, i4 AS other FROM rs',
	id_column => 'key', other_id_column => 'uid', other_dims => '{other}');

-- Identical regions; one region containing all the others
CREATE TABLE same (id int PRIMARY KEY, r numrange);
INSERT INTO same SELECT i, numrange(1, 2, '[)') FROM generate_series(1, 50) i;
SELECT odp_interval_match_count('same'), 50 * 49 / 2 AS expected;
INSERT INTO same VALUES (100, '(,)');
SELECT odp_interval_match_count('same', 'same'), 51 * 51 AS expected;

-- Sources without rows have no pairs; regions never overlapping give none
CREATE TABLE nothing (id int PRIMARY KEY, r int4range);
SELECT count(*) FROM odp_interval_match('nothing', 'subs');
SELECT odp_interval_match_count('nothing'), odp_interval_match_count('subs', 'nothing');
SELECT count(*) FROM odp_interval_match('SELECT 1 AS id, c FROM cb WHERE false', 'cb');
SELECT count(*) FROM odp_interval_match('SELECT id, r FROM subs WHERE id = 3');

-- Errors
SELECT odp_try($$SELECT * FROM odp_interval_match('no_such_table', 'upds')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match(NULL, 'upds')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('subs', NULL)$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('subs', bounds => NULL)$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('subs', bounds => '[[')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, 2 AS x')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, ''a''::text AS x', dims => '{x}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('pr', dims => '{lo}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('pr', dims => '{lo,t0}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('pr', dims => '{}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('pr', dims => '{lo,NULL}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('pr', dims => '{id,lo}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('rr', dims => '{i4,i4}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('rr', dims => '{I4}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, c, c AS c2 FROM cb', dims => '{c,i}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT id, c, c AS c2 FROM cb')$$);
-- the two sources' dimensions must match, in number and in kind
SELECT odp_try($$SELECT * FROM odp_interval_match('rr', 'rs', dims => '{i4,d}', other_dims => '{i4}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('rr', 'rs', dims => '{i4}', other_dims => '{d}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('bx', 'SELECT id, x0, x1, x0 AS y0, x1 AS y1 FROM pr', other_dims => '{x0,x1,y0,y1}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('cb', 'SELECT 1 AS id, cube(1, 2) AS c')$$);
-- null regions and bounds; an empty range is no error
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, NULL::int4range AS r')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, 2 AS lo, NULL::int AS hi', dims => '{lo,hi}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, ''empty''::int4range AS r')$$);
-- bounds double precision cannot hold (0.1, 1e400) are no error (compared
-- exactly: intervals_numeric); NaN and bounds upside down are
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, numrange(0.1, 1) AS r')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, numrange(1, 1e400) AS r')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, 1::numeric AS lo, ''NaN''::numeric AS hi', dims => '{lo,hi}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, ''NaN''::float8 AS lo, 1::float8 AS hi', dims => '{lo,hi}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, box(point(''NaN'', 0), point(1, 1)) AS b')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, 5 AS lo, 4 AS hi', dims => '{lo,hi}')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, cube(array[0,0], array[1,1]) AS c UNION ALL SELECT 2, cube(0, 1)')$$);
-- ids
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, r FROM subs')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT NULL::int AS id, r FROM subs')$$);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT ''x'' AS key, r FROM subs', id_column => 'key')$$);
-- a range over a type whose bounds cannot be compared
CREATE TYPE textrange AS RANGE (subtype = text);
SELECT odp_try($$SELECT * FROM odp_interval_match('SELECT 1 AS id, textrange(''a'', ''b'') AS r')$$);

-- Privileges and row-level security hold as for SELECT
CREATE ROLE odp_iv_reader;
CREATE TABLE secret_regions (id int PRIMARY KEY, r int4range, owner text);
INSERT INTO secret_regions VALUES (1, '[1,10)', 'alice'), (2, '[5,15)', 'bob'), (3, '[8,9)', 'alice');
GRANT SELECT (id, owner) ON secret_regions TO odp_iv_reader;
SET ROLE odp_iv_reader;
SELECT odp_try($$SELECT * FROM odp_interval_match('secret_regions')$$);
RESET ROLE;
GRANT SELECT ON secret_regions TO odp_iv_reader;
ALTER TABLE secret_regions ENABLE ROW LEVEL SECURITY;
CREATE POLICY alice_only ON secret_regions FOR SELECT TO odp_iv_reader USING (owner = 'alice');
SET ROLE odp_iv_reader;
SELECT * FROM odp_interval_match('secret_regions');
SELECT a.id, b.id FROM secret_regions a JOIN secret_regions b ON a.r && b.r AND a.id < b.id ORDER BY 1, 2;
RESET ROLE;
SELECT * FROM odp_interval_match('secret_regions');
DROP TABLE secret_regions;
DROP ROLE odp_iv_reader;

DROP TABLE subs, upds, rr, rs, tt, fr, bx, bxr, cb, cr, cr2, pr, same, nothing;
DROP TYPE floatrange, textrange;
DROP FUNCTION odp_try(text), odp_check(text, text);
DROP EXTENSION cube;
DROP EXTENSION odp_gpu;
