--
-- catalog: the regclass form of every function that reads a table.  The
-- same rows as the text form; a string literal still resolving to the text
-- form; views that depend on their tables (DROP refuses, RENAME and SET
-- SCHEMA are followed); the same errors and privileges.
--
CREATE EXTENSION odp_gpu;
SET odp_gpu.device = cpu;
SET extra_float_digits = 0;
\i sql/include/odp_try.psql

CREATE SCHEMA odp_cat;
CREATE TABLE pts (id bigint PRIMARY KEY, f real[]);
INSERT INTO pts SELECT i, array[(i * 37 % 101)::real / 7, (i * 53 % 89)::real / 5, (i % 13)::real]
FROM generate_series(1, 300) i;
CREATE TABLE q AS SELECT * FROM pts WHERE id % 10 = 0;
CREATE TABLE series (id bigint PRIMARY KEY, v float8[]);
INSERT INTO series SELECT s, array(SELECT sin(s * t / 17.0) + (s * t % 7) / 10.0 FROM generate_series(1, 40) t)
FROM generate_series(1, 30) s;
CREATE TABLE regs (id bigint PRIMARY KEY, r int8range);
INSERT INTO regs SELECT i, int8range(i * 7 % 500, i * 7 % 500 + i % 9, '[]') FROM generate_series(1, 200) i;
CREATE TABLE regs2 (id bigint PRIMARY KEY, r int8range);
INSERT INTO regs2 SELECT i, int8range(i * 11 % 500, i * 11 % 500 + i % 5) FROM generate_series(1, 150) i;
CREATE TABLE ss AS SELECT id, f FROM odp_solving_set('pts', k => 3, n => 5) JOIN pts USING (id);

-- every function: the regclass form gives the text form's rows
CREATE FUNCTION same(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE n bigint; m bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) d', a, b) INTO n;
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) d', b, a) INTO m;
	RETURN n = 0 AND m = 0;
END $$;
-- (odp_knn's anynonarray form takes pgvector's types: test/pgvector)
SELECT f, same(replace(c, '@', ''), replace(c, '@', '::regclass')) AS same_rows
FROM (VALUES
	('outlier_scores', 'SELECT * FROM odp_outlier_scores(''pts''@, k => 3)'),
	('top_outliers', 'SELECT * FROM odp_top_outliers(''pts''@, k => 3, n => 5)'),
	('top_outliers ss', 'SELECT * FROM odp_top_outliers(''pts''@, k => 3, n => 5, method => ''solvingset'')'),
	('solving_set', 'SELECT * FROM odp_solving_set(''pts''@, k => 3, n => 5)'),
	('predict', 'SELECT * FROM odp_outlier_predict(''ss''@, ''q''@, k => 3, threshold => 10)'),
	('knn float8[]', 'SELECT * FROM odp_knn(''pts''@, ''{1,2,3}''::float8[], k => 4)'),
	('knn text', 'SELECT * FROM odp_knn(''pts''@, ''{1,2,3}'', k => 4, metric => ''manhattan'')'),
	('knn_join', 'SELECT * FROM odp_knn_join(''q''@, ''pts''@, k => 2)'),
	('knn_join self', 'SELECT * FROM odp_knn_join(''pts''@, ''pts''@, k => 2)'),
	('pearson', 'SELECT * FROM odp_pearson(''series''@, min_abs_r => 0.5)'),
	('pearson pair', 'SELECT * FROM odp_pearson(''series''@, ''series''@, min_abs_r => 0.9)'),
	('pearson_top', 'SELECT * FROM odp_pearson_top(''series''@, k => 2)'),
	('pearson_top pair', 'SELECT * FROM odp_pearson_top(''series''@, ''series''@, k => 2, sign => ''negative'')'),
	('skyline', 'SELECT * FROM odp_skyline(''pts''@, ''{min,max,min}'', band => 2)'),
	('interval_match', 'SELECT * FROM odp_interval_match(''regs''@, ''regs2''@)'),
	('interval_match self', 'SELECT * FROM odp_interval_match(''regs''@, dims => ''{r}'')'),
	('interval_match_count', 'SELECT odp_interval_match_count(''regs''@, ''regs2''@)'),
	('interval_match_count self', 'SELECT odp_interval_match_count(''regs''@)')
) t(f, c) ORDER BY f COLLATE "C";

-- a self join is one whatever the form: the same rows either way
SELECT same('SELECT * FROM odp_knn_join(''pts'', ''pts''::regclass, k => 2)',
			'SELECT * FROM odp_knn_join(''pts'', ''pts'', k => 2)') AS mixed_self_join;

-- a string literal resolves to the text form (no ambiguity), a cast to
-- the regclass form: the views' definitions show which
CREATE VIEW v_text AS SELECT
	(SELECT count(*) FROM odp_outlier_scores('pts', k => 3)) AS scores,
	(SELECT count(*) FROM odp_top_outliers('pts', k => 3, n => 5)) AS top,
	(SELECT count(*) FROM odp_solving_set('pts', k => 3, n => 5)) AS ss,
	(SELECT count(*) FROM odp_outlier_predict('ss', 'q', k => 3)) AS predict,
	(SELECT count(*) FROM odp_knn('pts', '{1,2,3}', k => 4)) AS knn,
	(SELECT count(*) FROM odp_knn('pts', '{1,2,3}'::float8[], k => 4)) AS knn_array,
	(SELECT count(*) FROM odp_knn_join('q', 'pts', k => 2)) AS knn_join,
	(SELECT count(*) FROM odp_pearson('series', min_abs_r => 0.5)) AS pearson,
	(SELECT count(*) FROM odp_pearson('series', 'series')) AS pearson_pair,
	(SELECT count(*) FROM odp_pearson_top('series', k => 2)) AS pearson_top,
	(SELECT count(*) FROM odp_pearson_top('series', 'series', k => 2)) AS pearson_top_pair,
	(SELECT count(*) FROM odp_skyline('pts')) AS skyline,
	(SELECT count(*) FROM odp_interval_match('regs', 'regs2')) AS im,
	(SELECT count(*) FROM odp_interval_match('regs')) AS im_self,
	odp_interval_match_count('regs', 'regs2') AS imc,
	odp_interval_match_count('regs') AS imc_self;
SELECT * FROM v_text;
SELECT regexp_count(pg_get_viewdef('v_text'), '''::text') AS text_arguments,
	regexp_count(pg_get_viewdef('v_text'), '::regclass') AS regclass_arguments;

CREATE VIEW v_regclass AS SELECT
	(SELECT count(*) FROM odp_outlier_scores('pts'::regclass, k => 3)) AS scores,
	(SELECT count(*) FROM odp_top_outliers('pts'::regclass, k => 3, n => 5)) AS top,
	(SELECT count(*) FROM odp_solving_set('pts'::regclass, k => 3, n => 5)) AS ss,
	(SELECT count(*) FROM odp_outlier_predict('ss'::regclass, 'q'::regclass, k => 3)) AS predict,
	(SELECT count(*) FROM odp_knn('pts'::regclass, '{1,2,3}', k => 4)) AS knn,
	(SELECT count(*) FROM odp_knn('pts'::regclass, '{1,2,3}'::float8[], k => 4)) AS knn_array,
	(SELECT count(*) FROM odp_knn_join('q'::regclass, 'pts'::regclass, k => 2)) AS knn_join,
	(SELECT count(*) FROM odp_pearson('series'::regclass, min_abs_r => 0.5)) AS pearson,
	(SELECT count(*) FROM odp_pearson('series'::regclass, 'series'::regclass)) AS pearson_pair,
	(SELECT count(*) FROM odp_pearson_top('series'::regclass, k => 2)) AS pearson_top,
	(SELECT count(*) FROM odp_pearson_top('series'::regclass, 'series'::regclass, k => 2)) AS pearson_top_pair,
	(SELECT count(*) FROM odp_skyline('pts'::regclass)) AS skyline,
	(SELECT count(*) FROM odp_interval_match('regs'::regclass, 'regs2'::regclass)) AS im,
	(SELECT count(*) FROM odp_interval_match('regs'::regclass)) AS im_self,
	odp_interval_match_count('regs'::regclass, 'regs2'::regclass) AS imc,
	odp_interval_match_count('regs'::regclass) AS imc_self;
SELECT (SELECT row(v.*)::text FROM v_regclass v) = (SELECT row(v.*)::text FROM v_text v) AS same_counts;
SELECT row(v.*)::text AS counts FROM v_regclass v \gset
SELECT regexp_count(pg_get_viewdef('v_regclass'), '''::text') AS text_arguments,
	regexp_count(pg_get_viewdef('v_regclass'), '::regclass') AS regclass_arguments;

-- the regclass view depends on its tables, the text view on none
SELECT v, array_agg(DISTINCT d.refobjid::regclass::text ORDER BY d.refobjid::regclass::text) AS depends_on
FROM (VALUES ('v_text'), ('v_regclass')) t(v)
LEFT JOIN pg_rewrite r ON r.ev_class = t.v::regclass
LEFT JOIN pg_depend d ON d.objid = r.oid AND d.classid = 'pg_rewrite'::regclass
	AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> t.v::regclass
GROUP BY v ORDER BY v;

-- DROP TABLE refuses without CASCADE
SELECT odp_try('DROP TABLE pts');
SELECT odp_try('DROP TABLE regs2');

-- RENAME and SET SCHEMA are followed by the regclass view; the text view
-- then names nothing, and says how to fix it
ALTER TABLE pts RENAME TO pts_moved;
ALTER TABLE pts_moved SET SCHEMA odp_cat;
SELECT (SELECT row(v.*)::text FROM v_regclass v) = :'counts' AS same_counts_after_moves;
SELECT odp_try('SELECT * FROM v_text');
SELECT pg_get_viewdef('v_regclass') LIKE '%''odp_cat.pts_moved''::regclass%' AS shows_new_name;
ALTER TABLE odp_cat.pts_moved SET SCHEMA public;
ALTER TABLE pts_moved RENAME TO pts;

-- the same errors in both forms: no such relation, no privilege, a
-- relation of a kind with no rows
SELECT odp_try('SELECT * FROM odp_top_outliers(''nope'', k => 3, n => 5)');
SELECT odp_try('SELECT * FROM odp_top_outliers(''nope''::regclass, k => 3, n => 5)');
SELECT odp_try('SELECT * FROM odp_top_outliers(''public.nope'', k => 3, n => 5)');
SELECT odp_try('SELECT * FROM odp_top_outliers(4294967295::oid::regclass, k => 3, n => 5)');
SELECT odp_try('SELECT * FROM odp_top_outliers(''pts_pkey''::regclass, k => 3, n => 5)')
	= odp_try('SELECT * FROM odp_top_outliers(''pts_pkey'', k => 3, n => 5)') AS same_error;
SELECT odp_try('SELECT * FROM odp_top_outliers(NULL::regclass, k => 3, n => 5)');
CREATE ROLE regress_odp_cat;
GRANT USAGE ON SCHEMA odp_cat TO regress_odp_cat;
SET ROLE regress_odp_cat;
SELECT odp_try('SELECT * FROM odp_top_outliers(''pts''::regclass, k => 3, n => 5)')
	= odp_try('SELECT * FROM odp_top_outliers(''pts'', k => 3, n => 5)') AS same_privilege_error,
	odp_try('SELECT * FROM odp_top_outliers(''pts''::regclass, k => 3, n => 5)');
RESET ROLE;
GRANT SELECT ON pts TO regress_odp_cat;
SET ROLE regress_odp_cat;
SELECT count(*) FROM odp_top_outliers('pts'::regclass, k => 3, n => 5);
RESET ROLE;
REVOKE ALL ON pts FROM regress_odp_cat;
REVOKE ALL ON SCHEMA odp_cat FROM regress_odp_cat;
DROP ROLE regress_odp_cat;

-- the planner's estimate reads the relation's size in both forms
CREATE FUNCTION plan_rows(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
	RETURN (j -> 0 -> 'Plan' ->> 'Plan Rows')::int;
END $$;
ANALYZE pts;
SELECT plan_rows('SELECT * FROM odp_outlier_scores(''pts''::regclass, k => 3)') AS regclass_rows,
	plan_rows('SELECT * FROM odp_outlier_scores(''pts'', k => 3)') AS text_rows;
DROP FUNCTION plan_rows(text);

-- every regclass form has a comment
SELECT count(*) AS regclass_forms, count(obj_description(p.oid, 'pg_proc')) AS commented
FROM pg_proc p WHERE p.proname LIKE 'odp\_%' AND 'regclass'::regtype = ANY (p.proargtypes::oid[]);

DROP VIEW v_text, v_regclass;
DROP FUNCTION same(text, text);
DROP TABLE pts, q, series, regs, regs2, ss;
DROP SCHEMA odp_cat;
DROP FUNCTION odp_try(text);
DROP EXTENSION odp_gpu;
