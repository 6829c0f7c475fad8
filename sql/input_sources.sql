--
-- input_sources: how odp_gpu reads its source (tables, views, queries),
-- resolves id_column and features, and rejects bad input.
-- Scores use k => 1, so each row's score is its nearest-neighbour distance.
--
CREATE EXTENSION odp_gpu;
SET odp_gpu.device = cpu;

-- Runs a statement and shows the error it raises, with its SQLSTATE.
CREATE FUNCTION odp_try(stmt text,
	OUT code text, OUT message text, OUT detail text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	code := '00000';
	message := 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE,
		message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL,
		hint = PG_EXCEPTION_HINT;
END
$$;

-- Scores of every row, rounded.
CREATE FUNCTION odp_show(source text, id_column text DEFAULT NULL,
	features text[] DEFAULT NULL)
RETURNS TABLE (id bigint, score numeric)
LANGUAGE sql AS $$
	SELECT s.id, round(s.score::numeric, 4)
	FROM odp_outlier_scores(source, k => 1, id_column => id_column,
							features => features) s
$$;

-- a plain table, rows inserted out of id order
CREATE TABLE pts (id bigint PRIMARY KEY, f real[]);
INSERT INTO pts VALUES
	(3, '{0,1}'), (1, '{0,0}'), (5, '{10,10}'), (2, '{3,4}'), (4, '{3,5}');
SELECT * FROM odp_show('pts');
SELECT * FROM odp_show('public.pts');
SELECT * FROM odp_show('  PTS  ');
SELECT * FROM odp_show('"pts"');

-- schema-qualified and quoted mixed-case names
CREATE SCHEMA odp_in;
CREATE TABLE odp_in."MixedCase" (id int PRIMARY KEY, v float8[], "Weight" int);
INSERT INTO odp_in."MixedCase" VALUES
	(10, '{1,1,1}', 5), (20, '{1,1,3}', 1), (30, '{4,1,1}', 7);
SELECT * FROM odp_show('odp_in."MixedCase"');
SELECT * FROM odp_show('"odp_in"."MixedCase"');
SELECT * FROM odp_show('odp_in."MixedCase"', features => '{Weight}');
SELECT * FROM odp_show('odp_in.MixedCase');
SET search_path = odp_in, public;
SELECT * FROM odp_show('"MixedCase"');
RESET search_path;

-- a view: no primary key, so the column named id
CREATE VIEW pts_view AS SELECT id, f FROM pts WHERE id <> 5;
SELECT * FROM odp_show('pts_view');

-- queries: SELECT, WITH, VALUES, TABLE, in parentheses, any case
SELECT * FROM odp_show('SELECT id, f FROM pts WHERE id <> 5');
SELECT * FROM odp_show('with q AS (SELECT id * 10 AS id, f FROM pts) SELECT * FROM q');
SELECT * FROM odp_show('VALUES (1, 0.5), (2, 1.5), (3, 4.0)', id_column => 'column1');
SELECT * FROM odp_show('TABLE pts');
SELECT * FROM odp_show(' ((select * from pts where id < 4))');
SELECT * FROM odp_show(E'\n\tSelect id, f[1] AS x, f[2] AS y FROM pts');

-- default id: a single-column integer primary key, whatever its name
CREATE TABLE keyed (key smallint PRIMARY KEY, x float8, y numeric, label text);
INSERT INTO keyed VALUES (1, 0, 0, 'a'), (2, 0, 2, 'b'), (3, 5, 2, 'c');
SELECT * FROM odp_show('keyed');
-- ... else an integer column named id (here next to a text primary key)
CREATE TABLE text_key (code text PRIMARY KEY, id int, x int, y bigint);
INSERT INTO text_key VALUES ('a', 7, 0, 0), ('b', 8, 1, 0), ('c', 9, 9, 9);
SELECT * FROM odp_show('text_key');
-- ... and a two-column key does not count
CREATE TABLE two_key (a int, b int, id int, x real, PRIMARY KEY (a, b));
INSERT INTO two_key VALUES (1, 1, 100, 0), (1, 2, 200, 1), (2, 3, 300, 3);
SELECT * FROM odp_show('two_key');
-- id_column given explicitly, any integer type
SELECT * FROM odp_show('two_key', id_column => 'b', features => '{x}');

-- features: default is the only numeric array column, even next to scalars
CREATE TABLE mixed (id int PRIMARY KEY, n int, v real[], t text);
INSERT INTO mixed VALUES (1, 100, '{0,0}', 'x'), (2, -50, '{1,0}', 'y'), (3, 7, '{0,2}', 'z');
SELECT * FROM odp_show('mixed');
-- a list of scalar columns, and one array column named explicitly
SELECT * FROM odp_show('mixed', features => '{n}');
SELECT * FROM odp_show('keyed', features => '{y,x}');
SELECT * FROM odp_show('mixed', features => '{v}');
-- arrays of every numeric element type
SELECT * FROM odp_show('SELECT 1 AS id, ''{1,2}''::int2[] AS v UNION ALL SELECT 2, ''{2,2}''');
SELECT * FROM odp_show('SELECT 1 AS id, ''{1,2}''::int4[] AS v UNION ALL SELECT 2, ''{4,6}''');
SELECT * FROM odp_show('SELECT 1 AS id, ''{1,2}''::int8[] AS v UNION ALL SELECT 2, ''{1,5}''');
SELECT * FROM odp_show('SELECT 1 AS id, ''{1.5,2}''::numeric[] AS v UNION ALL SELECT 2, ''{1.5,2.25}''');
SELECT * FROM odp_show('SELECT 1 AS id, ''{1e3,0.5}''::float8[] AS v UNION ALL SELECT 2, ''{1e3,-0.5}''');
-- long vectors, stored compressed and stored out of line
CREATE TABLE long_vec (id int PRIMARY KEY, v real[]);
INSERT INTO long_vec VALUES (1, array_fill(1.0::real, ARRAY[1000])),
	(2, array_fill(2.0::real, ARRAY[1000]));
SELECT * FROM odp_show('long_vec');
ALTER TABLE long_vec ALTER COLUMN v SET STORAGE EXTERNAL;
INSERT INTO long_vec VALUES (3, array_fill(4.0::real, ARRAY[1000]));
SELECT * FROM odp_show('long_vec');
-- the largest number of dimensions
SELECT * FROM odp_show('SELECT i AS id, array_fill(i::real, ARRAY[16384]) AS v FROM generate_series(1, 2) i');

-- dropped columns, a column added with a default, domains
CREATE DOMAIN odp_pos AS int CHECK (VALUE > 0);
CREATE TABLE altered (junk text, id odp_pos PRIMARY KEY, v real[]);
INSERT INTO altered VALUES ('a', 1, '{0,0}'), ('b', 2, '{0,3}'), ('c', 3, '{4,0}');
ALTER TABLE altered DROP COLUMN junk;
ALTER TABLE altered ADD COLUMN w float8 DEFAULT 2.5;
INSERT INTO altered VALUES (4, '{4,3}', -1.5);
SELECT * FROM odp_show('altered');
SELECT * FROM odp_show('altered', features => '{w}');

-- other relation kinds: partitioned table, materialized view, inheritance
CREATE TABLE parted (id int PRIMARY KEY, v real[]) PARTITION BY RANGE (id);
CREATE TABLE parted_lo PARTITION OF parted FOR VALUES FROM (0) TO (10);
CREATE TABLE parted_hi PARTITION OF parted FOR VALUES FROM (10) TO (100);
INSERT INTO parted VALUES (15, '{5}'), (1, '{1}'), (11, '{3}'), (2, '{0}');
SELECT * FROM odp_show('parted');
CREATE MATERIALIZED VIEW pts_mat AS SELECT id, f FROM pts WHERE id > 1;
SELECT * FROM odp_show('pts_mat');
CREATE TABLE inh_parent (id int, v real[]);
CREATE TABLE inh_child () INHERITS (inh_parent);
INSERT INTO inh_parent VALUES (1, '{0}'), (2, '{1}');
INSERT INTO inh_child VALUES (3, '{5}');
SELECT * FROM odp_show('inh_parent');

-- row-level security: a role sees only the rows its policy allows
CREATE ROLE regress_odp_reader;
CREATE TABLE rls_pts (id int PRIMARY KEY, owner text, v real[]);
INSERT INTO rls_pts VALUES
	(1, 'regress_odp_reader', '{0}'), (2, 'someone', '{0.5}'),
	(3, 'regress_odp_reader', '{2}'), (4, 'regress_odp_reader', '{10}');
ALTER TABLE rls_pts ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON rls_pts FOR SELECT USING (owner = current_user);
GRANT SELECT ON rls_pts TO regress_odp_reader;
SELECT * FROM odp_show('rls_pts');
SET ROLE regress_odp_reader;
SELECT * FROM odp_show('rls_pts');
RESET ROLE;

-- privileges: none, some columns, all columns used
CREATE TABLE secret (id int PRIMARY KEY, a float8, b float8, s float8);
INSERT INTO secret VALUES (1, 0, 0, 0), (2, 1, 0, 0), (3, 0, 3, 0);
GRANT SELECT (id, a, b) ON secret TO regress_odp_reader;
CREATE TABLE no_access (id int PRIMARY KEY, v real[]);
CREATE VIEW no_access_view AS SELECT * FROM no_access;
SET ROLE regress_odp_reader;
\x on
SELECT * FROM odp_try($$SELECT * FROM odp_show('no_access')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('no_access_view')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('secret')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT * FROM secret')$$);
\x off
SELECT * FROM odp_show('secret', features => '{a,b}');
RESET ROLE;

-- errors: the source
\x on
SELECT * FROM odp_try($$SELECT * FROM odp_show('DELETE FROM pts')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('foo bar')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('no_such_table')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('MixedCase')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('pts_pkey')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_outlier_scores(NULL)$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT id, f FROM pts FOR UPDATE')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('WITH d AS (DELETE FROM pts RETURNING *) SELECT * FROM d')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT * FROM pts; SELECT 1')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT id, id, f FROM pts')$$);

-- errors: the id column
SELECT * FROM odp_try($$SELECT * FROM odp_show('pts', id_column => 'nope')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('pts', id_column => 'ID')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('mixed', id_column => 't')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('keyed', id_column => 'x')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('VALUES (1, 2.0), (2, 3.0)')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT id::text AS id, f FROM pts')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT id, f FROM pts UNION ALL SELECT NULL, ''{1,1}''')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT id % 3 AS id, f FROM pts')$$);
CREATE TABLE dup_ids (id int, v real[]);
INSERT INTO dup_ids VALUES (1, '{0}'), (2, '{1}'), (1, '{2}');
SELECT * FROM odp_try($$SELECT * FROM odp_show('dup_ids')$$);

-- errors: the features argument
SELECT * FROM odp_try($$SELECT * FROM odp_show('keyed', features => '{x,nope}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('keyed', features => '{X}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('keyed', features => '{x,label}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('mixed', features => '{v,n}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('mixed', features => '{n,v}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('keyed', features => '{}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('keyed', features => '{x,NULL}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('keyed', features => '{key,x}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('keyed', features => '{x,x}')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 1 AS id, ''{a}''::text[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 1 AS id, ''{1}''::real[] AS v, ''{2}''::real[] AS w')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 1 AS id, ''a''::text AS t')$$);

-- errors: the values
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 1 AS id, NULL::real[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 1 AS id, ''{1,NULL}''::real[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 2 AS id, ''{NULL,1}''::float8[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 3 AS id, 1.0 AS x, NULL::float8 AS y')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('VALUES (1, ''{1,2}''::real[]), (2, ''{1,2,3}'')', id_column => 'column1')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 1 AS id, ''{}''::real[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 1 AS id, ''{{1,2},{3,4}}''::real[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 4 AS id, ''{1,NaN}''::real[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 5 AS id, ''{-Infinity}''::float8[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 6 AS id, ''Infinity''::real AS x')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 7 AS id, ''NaN''::numeric AS x')$$);
-- float8 values beyond float32 are refused where the distances are float32
SET odp_gpu.distance_precision = float32;
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 8 AS id, 1e300::float8 AS x')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 9 AS id, ''{0,-1e39}''::float8[] AS v')$$);
RESET odp_gpu.distance_precision;
-- and numeric values beyond float64 everywhere
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 8 AS id, 1e400::numeric AS x')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 9 AS id, ARRAY[0, -1e309]::numeric[] AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT 1 AS id, array_fill(1::real, ARRAY[16385]) AS v')$$);
SELECT * FROM odp_try($$SELECT * FROM odp_show('SELECT id, f FROM pts WHERE false')$$);
CREATE TABLE empty_pts (id int PRIMARY KEY, v real[]);
SELECT * FROM odp_try($$SELECT * FROM odp_show('empty_pts')$$);
-- every row hidden by the policy
UPDATE rls_pts SET owner = 'someone';
SET ROLE regress_odp_reader;
SELECT * FROM odp_try($$SELECT * FROM odp_show('rls_pts')$$);
RESET ROLE;
\x off

DROP VIEW pts_view, no_access_view;
DROP MATERIALIZED VIEW pts_mat;
DROP TABLE pts, odp_in."MixedCase", keyed, text_key, two_key, mixed, long_vec,
	parted, inh_parent, inh_child, rls_pts, secret, no_access, dup_ids,
	empty_pts, altered;
DROP DOMAIN odp_pos;
DROP SCHEMA odp_in;
DROP ROLE regress_odp_reader;
DROP FUNCTION odp_try(text), odp_show(text, text, text[]);
DROP EXTENSION odp_gpu;
