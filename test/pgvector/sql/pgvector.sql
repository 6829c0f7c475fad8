-- pgvector: columns of pgvector's vector, halfvec and sparsevec as the
-- features of every analytic, against pgvector's own exact search (ORDER
-- BY ... LIMIT, no index) and against the same values stored as real[]
-- and float8[]; queries of every type to odp_knn; typmods, ragged
-- dimensions, NULL rows, dimension limits, types that are only called
-- vector; TOASTed vectors; parallel reads.  Needs the real pgvector
-- (test/run_tests.sh builds it), installed here in a schema of its own,
-- since odp_gpu finds its types wherever they are.
SET client_min_messages = warning;
CREATE SCHEMA pgv;
CREATE EXTENSION vector SCHEMA pgv;
CREATE EXTENSION odp_gpu;
RESET client_min_messages;
SET search_path = public, pgv;
SET extra_float_digits = 0;

\i sql/include/odp_try.psql

-- The functions that take pgvector's types as arguments: one each, "any".
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented,
	   p.provolatile, p.proparallel, p.proisstrict, p.prorows, p.prosupport
FROM pg_proc p WHERE proname IN ('odp_knn', 'odp_top_outliers_agg', 'odp_skyline_agg',
								 'odp_top_outliers_agg_transfn', 'odp_skyline_agg_transfn')
ORDER BY p.oid::regprocedure::text COLLATE "C";

-- Rows in which two queries differ, both ways (0: the same multiset), and
-- the rows of the first, so that an empty result cannot pass unseen.
CREATE FUNCTION differ(a text, b text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	d bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM (%s) x', a) INTO n;
	EXECUTE format('SELECT count(*) FROM (((%1$s) EXCEPT ALL (%2$s)) UNION ALL ((%2$s) EXCEPT ALL (%1$s))) d',
				   a, b) INTO d;
	RETURN format('%s rows, %s differ', n, d);
END $$;

-- 400 points in 8 dimensions: halves of small integers, exact in every
-- type, a third of them zero (sparse), some rows repeated (ties, broken
-- by id).  Each type holds the same values, so every analytic must give
-- the same answer on each column.
CREATE TABLE emb (id int PRIMARY KEY, e vector(8), h halfvec(8), s sparsevec(8),
				  r real[], d float8[]);
INSERT INTO emb
SELECT i, a::vector, a::halfvec, a::vector::sparsevec, a::real[], a
FROM (SELECT i, array(SELECT CASE WHEN (i + j) % 3 = 0 THEN 0
								  ELSE ((i * 37 + j * 101) % 41 - 20) / 2.0 END
					  FROM generate_series(1, 8) j)::float8[] AS a
	  FROM generate_series(1, 400) i) x;
SELECT count(*) AS rows, count(DISTINCT e) AS distinct_vectors,
	   bool_and(s::vector = e AND h::vector = e AND e::real[] = r) AS same_values,
	   min(pgv.vector_dims(e)) AS dims, min(array_length(s::vector::real[], 1)) AS dense_dims
FROM emb;
-- typmods: every column has its declared dimensions
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'emb'::regclass AND attnum > 1 ORDER BY attnum;

-- Queries: halves of small integers too.
CREATE TABLE qs (qid int PRIMARY KEY, q float8[]);
INSERT INTO qs SELECT i, array(SELECT ((i * 13 + j * 7) % 29 - 14) / 2.0 FROM generate_series(1, 8) j)
FROM generate_series(1, 5) i;

-- The oracle: pgvector's exact search, ORDER BY col op q, id LIMIT k (no
-- index), for every query of qs given as a value of the column's type.
-- Counts the ranks where odp_knn disagrees: a distance more than 1e-5
-- relative off, or another id whose own distance (pgvector's) is not the
-- oracle's at that rank (exact ties go either way only if equal).
CREATE FUNCTION knn_vs_pgvector(col text, typ text, metric text, op text, k int)
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
	dist text := CASE WHEN op = '<#>' THEN '(-(%1$s.%2$I <#> q.v))' ELSE '(%1$s.%2$I ' || op || ' q.v)' END;
	n bigint;
	m bigint;
	bad bigint := 0;
	total bigint := 0;
	qv text;
BEGIN
	FOR qv IN SELECT q::text FROM qs ORDER BY qid LOOP
		EXECUTE format($$
			WITH q AS (SELECT %1$L::float8[]::vector::%2$s AS v),
			o AS (SELECT r.* FROM q, odp_knn('emb', q.v, %3$s, features => ARRAY[%4$L],
											 metric => %5$L) r),
			p AS (SELECT row_number() OVER (ORDER BY emb.%4$I %6$s q.v, emb.id) AS rank,
						 emb.id, %7$s AS dist
				  FROM emb, q ORDER BY emb.%4$I %6$s q.v, emb.id LIMIT %3$s)
			SELECT count(*) FILTER (WHERE o.id IS NULL OR p.id IS NULL
				OR abs(o.distance - p.dist) > 1e-5 * greatest(1, abs(p.dist))
				OR (o.id <> p.id AND abs(%8$s - p.dist) > 1e-5 * greatest(1, abs(p.dist)))),
				count(*)
			FROM o FULL JOIN p USING (rank) LEFT JOIN emb x ON x.id = o.id, q$$,
			qv, typ, k, col, metric, op, format(dist, 'emb', col), format(dist, 'x', col))
		INTO n, m;
		bad := bad + n;
		total := total + m;
	END LOOP;
	RETURN format('%s ranks of 5 queries, %s disagree', total, bad);
END $fn$;

SELECT col, metric, knn_vs_pgvector(col, typ, metric, op, 12) AS against_pgvector
FROM (VALUES ('e', 'vector'), ('h', 'halfvec'), ('s', 'sparsevec')) t(col, typ),
	 (VALUES ('euclidean', '<->'), ('cosine', '<=>'), ('manhattan', '<+>'),
			 ('inner_product', '<#>')) m(metric, op)
ORDER BY col, metric;
-- k beyond the rows: all of them, as pgvector's search returns them
SELECT knn_vs_pgvector('e', 'vector', 'euclidean', '<->', 500) AS all_rows;
-- the check can fail: another metric than the oracle's
SELECT knn_vs_pgvector('e', 'vector', 'manhattan', '<->', 12) AS wrong_oracle;

-- Every analytic gives on vector, halfvec and sparsevec what it gives on
-- real[] (float8[] for the float64 analytics).  The correlations'
-- thresholds sit just above round values: many pairs of these short,
-- tie-heavy series have |r| = 0.5 exactly, which the CPU and GPU paths
-- compute within their documented 1e-10 but not to the same last bit.
CREATE TABLE same_as_arrays (analytic text, col text, result text);
DO $$
DECLARE
	col text;
	checks text[] := ARRAY[
		'knn', $q$SELECT * FROM odp_knn('emb', '{1,-2,3,0,4.5,-6,7,0.5}', 15, features => '{%s}')$q$,
		'knn cosine', $q$SELECT * FROM odp_knn('emb', '{1,-2,3,0,4.5,-6,7,0.5}', 15, features => '{%s}', metric => 'cosine')$q$,
		'knn chebyshev', $q$SELECT * FROM odp_knn('emb', '{1,-2,3,0,4.5,-6,7,0.5}', 15, features => '{%s}', metric => 'chebyshev')$q$,
		'knn_join self', $q$SELECT * FROM odp_knn_join('emb', 'emb', 4, features => '{%s}')$q$,
		'knn_join query source', $q$SELECT * FROM odp_knn_join('SELECT id, %s AS v FROM emb WHERE id % 7 = 0', 'emb', 3, features => '{%s}', query_features => '{v}')$q$,
		'outlier_scores', $q$SELECT * FROM odp_outlier_scores('emb', 6, features => '{%s}')$q$,
		'top_outliers', $q$SELECT * FROM odp_top_outliers('emb', 6, 10, features => '{%s}')$q$,
		'top_outliers solvingset', $q$SELECT * FROM odp_top_outliers('emb', 6, 10, features => '{%s}', method => 'solvingset')$q$,
		'solving_set', $q$SELECT * FROM odp_solving_set('emb', 6, 10, features => '{%s}', batch_size => 50)$q$,
		'outlier_predict', $q$SELECT * FROM odp_outlier_predict('SELECT id, %s FROM emb WHERE id <= 200', 'SELECT id, %s FROM emb WHERE id > 200', k => 6)$q$,
		'top_outliers_agg', $q$SELECT id % 3, (unnest(odp_top_outliers_agg(id, %s, 4, 5))).* FROM emb GROUP BY 1$q$,
		'skyline', $q$SELECT * FROM odp_skyline('emb', '{min,max,min,max,min,max,min,max}', features => '{%s}')$q$,
		'skyline band', $q$SELECT * FROM odp_skyline('emb', band => 3, features => '{%s}')$q$,
		'skyline_agg', $q$SELECT id % 4, odp_skyline_agg(id, %s, '{max,max,min,min,max,max,min,min}') FROM emb GROUP BY 1$q$,
		'skyline_agg band', $q$SELECT id % 4, odp_skyline_agg(id, %s, NULL, 2) FROM emb GROUP BY 1$q$,
		'pearson', $q$SELECT * FROM odp_pearson('emb', 0.5000001, features => '{%s}')$q$,
		'pearson spearman', $q$SELECT * FROM odp_pearson('emb', 0.5000001, features => '{%s}', method => 'spearman')$q$,
		'pearson two sources', $q$SELECT * FROM odp_pearson('SELECT id, %s FROM emb WHERE id <= 100', 'SELECT id, %s FROM emb WHERE id > 300', 0.3000001)$q$,
		'pearson_top', $q$SELECT * FROM odp_pearson_top('emb', 3, features => '{%s}')$q$,
		'pearson_top two sources', $q$SELECT * FROM odp_pearson_top('SELECT id, %s FROM emb WHERE id <= 100', 'SELECT id, %s FROM emb WHERE id > 300', 2, 'negative')$q$];
	float64 text[] := ARRAY['skyline', 'skyline band', 'skyline_agg', 'skyline_agg band', 'pearson',
							'pearson spearman', 'pearson two sources', 'pearson_top', 'pearson_top two sources'];
	array_col text;
BEGIN
	FOR i IN 1 .. array_length(checks, 1) / 2 LOOP
		array_col := CASE WHEN checks[2 * i - 1] = ANY (float64) THEN 'd' ELSE 'r' END;
		FOREACH col IN ARRAY ARRAY['e', 'h', 's'] LOOP
			INSERT INTO same_as_arrays VALUES (checks[2 * i - 1], col,
				differ(replace(checks[2 * i], '%s', col), replace(checks[2 * i], '%s', array_col)));
		END LOOP;
	END LOOP;
END $$;
SELECT analytic, string_agg(col || ': ' || result, ', ' ORDER BY col) AS "vector, halfvec, sparsevec against the arrays"
FROM same_as_arrays GROUP BY analytic ORDER BY min(ctid);
-- and the check can fail: another column's values
SELECT differ($$SELECT * FROM odp_outlier_scores('emb', 6, features => '{e}')$$,
			  $$SELECT * FROM odp_outlier_scores('SELECT id, r[1:7] || 9::real AS r FROM emb', 6)$$) AS other_values;
-- Pearson on halfvec equals SQL's corr() on the float8 values
SELECT count(*) AS pairs,
	   count(*) FILTER (WHERE abs(o.r - c.r) > 1e-10) AS differ_from_corr
FROM odp_pearson('emb', features => '{h}') o
JOIN (SELECT a.id AS id_a, b.id AS id_b, corr(x, y) AS r
	  FROM emb a, emb b, unnest(a.d, b.d) u(x, y)
	  WHERE a.id < b.id AND a.id <= 40 AND b.id <= 40 GROUP BY 1, 2) c USING (id_a, id_b);

-- Queries of every type: a vector, halfvec or sparsevec, an untyped
-- literal, integer, numeric, smallint, real and float8 arrays, the source as
-- text and as regclass, called
-- directly and through a polymorphic function (the type known only when it
-- runs); each on every column, the same neighbours.
CREATE FUNCTION knn_ids(q anyelement, col text) RETURNS text LANGUAGE sql AS $$
	SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('emb', q, 6, features => ARRAY[col])
$$;
SELECT col, count(*) AS queries, count(DISTINCT res) AS distinct_results, min(res) AS neighbours
FROM (VALUES ('e'), ('h'), ('s'), ('r'), ('d')) c(col),
	 LATERAL (VALUES
		((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('emb', '{1,-2,3,0,4,-6,7,1}', 6, features => ARRAY[col]))),
		((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('emb', ARRAY[1,-2,3,0,4,-6,7,1], 6, features => ARRAY[col]))),
		((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('emb', ARRAY[1.0,-2,3,0,4,-6,7,1], 6, features => ARRAY[col]))),
		((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('emb', '[1,-2,3,0,4,-6,7,1]'::vector, 6, features => ARRAY[col]))),
		((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('emb', query => '[1,-2,3,0,4,-6,7,1]'::halfvec, k => 6, features => ARRAY[col]))),
		((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('emb'::regclass, '[1,-2,3,0,4,-6,7,1]'::vector, 6, features => ARRAY[col]))),
		((SELECT array_agg(id ORDER BY rank)::text FROM odp_knn('emb'::regclass, '{1,-2,3,0,4,-6,7,1}', 6, features => ARRAY[col]))),
		(knn_ids('[1,-2,3,0,4,-6,7,1]'::vector, col)),
		(knn_ids('[1,-2,3,0,4,-6,7,1]'::halfvec, col)),
		(knn_ids('{1:1,2:-2,3:3,5:4,6:-6,7:7,8:1}/8'::sparsevec, col)),
		(knn_ids(ARRAY[1,-2,3,0,4,-6,7,1], col)),
		(knn_ids(ARRAY[1.0,-2,3,0,4,-6,7,1], col)),
		(knn_ids(ARRAY[1,-2,3,0,4,-6,7,1]::int2[], col)),
		(knn_ids(ARRAY[1,-2,3,0,4,-6,7,1]::real[], col)),
		(knn_ids(ARRAY[1,-2,3,0,4,-6,7,1]::float8[], col))) v(res)
GROUP BY col ORDER BY col;
-- a sparsevec query densified: its zeros count (not the vector without them)
SELECT differ($$SELECT * FROM odp_knn('emb', '{2:5}/8'::sparsevec, 20, features => '{r}')$$,
			  $$SELECT * FROM odp_knn('emb', '{0,5,0,0,0,0,0,0}', 20, features => '{r}')$$) AS sparse_query;
-- a halfvec query is the float values of its halves: 0.1 is 0.0999755859375
SELECT differ($$SELECT * FROM odp_knn('emb', '[0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1]'::halfvec, 20, features => '{r}')$$,
			  $$SELECT * FROM odp_knn('emb', array_fill(0.0999755859375::float8, ARRAY[8]), 20, features => '{r}')$$) AS half_query;

-- Dimensions: a query, a second source, a source of queries of another
-- dimension are refused as today; so are rows of mixed dimensions in an
-- untyped column (pgvector allows them), naming the row.
SELECT odp_try($$SELECT * FROM odp_knn('emb', '[1,2,3]'::vector, 3, features => '{e}')$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', '{1:1}/9'::sparsevec, 3, features => '{s}')$$);
SELECT odp_try($$SELECT * FROM odp_knn_join('SELECT id, e::vector(8)::real[] AS v FROM emb', 'SELECT 1 AS id, ''[1,2]''::vector AS v', 3)$$);
SELECT odp_try($$SELECT * FROM odp_pearson('SELECT id, h FROM emb', 'SELECT 1 AS id, ''[1,2,3]''::halfvec AS h')$$);
CREATE TABLE mixed (id int PRIMARY KEY, e vector, h halfvec, s sparsevec);
INSERT INTO mixed VALUES (1, '[1,2]', '[1,2]', '{1:1}/2'), (2, '[3,4]', '[3,4]', '{2:4}/2'),
	(3, '[5,6,7]', '[5,6,7]', '{1:5}/3'), (4, '[1,1]', '[1,1]', '{}/2');
SELECT odp_try(format($$SELECT * FROM odp_top_outliers('mixed', 1, 1, features => '{%s}')$$, c))
FROM unnest(ARRAY['e', 'h', 's']) c;
SELECT odp_try($$SELECT odp_top_outliers_agg(id, e, 1, 1) FROM mixed$$);
SELECT odp_try($$SELECT * FROM odp_pearson('mixed', features => '{h}')$$);
-- without row 3, the untyped columns work
DELETE FROM mixed WHERE id = 3;
SELECT rank, id, round(distance::numeric, 6) AS distance
FROM odp_knn('mixed', '[1,2]'::vector, 3, features => '{s}');
SELECT rank, id, round(distance::numeric, 6) AS distance
FROM odp_knn('mixed', '[1,2]'::vector, 3, features => '{h}', metric => 'manhattan');

-- NULL rows are NULL vectors: an error naming the row, also where missing
-- values are allowed (nulls => 'pairwise' takes NULL elements, not rows).
INSERT INTO mixed VALUES (5, NULL, NULL, NULL);
SELECT odp_try(format($$SELECT * FROM odp_knn('mixed', '[1,2]'::vector, 2, features => '{%s}')$$, c))
FROM unnest(ARRAY['e', 'h', 's']) c;
SELECT odp_try($$SELECT * FROM odp_pearson('mixed', features => '{e}', nulls => 'pairwise')$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, s, NULL) FROM mixed$$);
-- a NULL query
SELECT odp_try($$SELECT * FROM odp_knn('mixed', NULL::vector, 2)$$);

-- The dimension limit: a sparsevec beyond it, as a column or a query, is
-- refused (54000) before it is densified.
CREATE TABLE huge (id int PRIMARY KEY, s sparsevec);
INSERT INTO huge VALUES (1, '{1:1}/20000'), (2, '{20000:1}/20000');
SELECT odp_try($$SELECT * FROM odp_top_outliers('huge', 1, 1)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', '{1:1}/20000'::sparsevec, 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', '{1:1}/16385'::sparsevec, 2, features => '{e}')$$);
-- at the limit it is read, densified: 16384 dimensions
UPDATE huge SET s = CASE id WHEN 1 THEN '{1:1,16384:2}/16384'::sparsevec ELSE '{16384:1}/16384' END;
SELECT rank, id, round(distance::numeric, 6) AS distance
FROM odp_knn('huge', '{1:1,16384:1.5}/16384'::sparsevec, 2);

-- Types that are only called vector, halfvec or sparsevec are refused
-- (42804), wherever they are used: a composite, a domain over another
-- type, a base type of the same storage whose input function is not
-- pgvector's.  A domain over pgvector's type is pgvector's.
CREATE SCHEMA fake;
CREATE TYPE fake.vector AS (a int);
CREATE DOMAIN fake.halfvec AS real[];
CREATE TYPE fake.sparsevec;
CREATE FUNCTION fake.sparsevec_in(cstring) RETURNS fake.sparsevec LANGUAGE internal IMMUTABLE STRICT AS 'textin';
CREATE FUNCTION fake.sparsevec_out(fake.sparsevec) RETURNS cstring LANGUAGE internal IMMUTABLE STRICT AS 'textout';
CREATE TYPE fake.sparsevec (INPUT = fake.sparsevec_in, OUTPUT = fake.sparsevec_out, INTERNALLENGTH = VARIABLE);
CREATE DOMAIN embedding AS vector(8);
CREATE TABLE impostors (id int PRIMARY KEY, v fake.vector, h fake.halfvec, s fake.sparsevec,
						e embedding, r real[]);
INSERT INTO impostors SELECT id, ROW(1)::fake.vector, r, 'x', e, r FROM emb WHERE id <= 50;
SELECT odp_try(format($$SELECT * FROM odp_top_outliers('impostors', 2, 2, features => '{%s}')$$, c))
FROM unnest(ARRAY['v', 'h', 's']) c;
-- as a default too: not left out silently
SELECT odp_try($$SELECT * FROM odp_top_outliers('impostors', 2, 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', ROW(1)::fake.vector, 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', 'x'::fake.sparsevec, 2)$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, h, 2, 2) FROM impostors$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, s, NULL) FROM impostors$$);
-- the domain over pgvector's vector, as a column and as a query
SELECT differ($$SELECT * FROM odp_top_outliers('impostors', 2, 5, features => '{e}')$$,
			  $$SELECT * FROM odp_top_outliers('impostors', 2, 5, features => '{r}')$$) AS domain_column,
	   differ($$SELECT * FROM odp_knn('impostors', '[1,2,3,4,5,6,7,8]'::embedding, 5, features => '{r}')$$,
			  $$SELECT * FROM odp_knn('impostors', '{1,2,3,4,5,6,7,8}', 5, features => '{r}')$$) AS domain_query;

-- Queries that are no vector.
SELECT odp_try($$SELECT * FROM odp_knn('emb', '[1,2,3,4,5,6,7,8]', 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', 'abc'::text, 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', ARRAY[[1,2],[3,4]], 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', ARRAY[1,NULL,3,4,5,6,7,8], 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', '{}'::int[], 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', ARRAY['NaN'::numeric,2,3,4,5,6,7,8], 2)$$);
SELECT odp_try($$SELECT * FROM odp_knn('emb', '{1,2,3}', 2, features => '{e}')$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, 'abc'::text, 1, 1) FROM emb$$);
SELECT odp_try($$SELECT odp_skyline_agg(id, ARRAY['a'], NULL) FROM emb$$);
-- the aggregates take integer and numeric arrays as float8[] was taken
SELECT differ($$SELECT odp_top_outliers_agg(id, r::int[], 3, 4) FROM emb WHERE id % 2 = 0$$,
			  $$SELECT odp_top_outliers_agg(id, r::int[]::float8[], 3, 4) FROM emb WHERE id % 2 = 0$$) AS int_agg,
	   differ($$SELECT odp_skyline_agg(id, d::numeric[], NULL) FROM emb$$,
			  $$SELECT odp_skyline_agg(id, d, NULL) FROM emb$$) AS numeric_agg;

-- TOASTed vectors: 1,000 dimensions, stored out of line uncompressed
-- (pgvector's STORAGE external; vector and halfvec are read in place,
-- sparsevec detoasted), the same answers as real[] and float8[] (stored
-- so too).
CREATE TABLE wide (id int PRIMARY KEY, e vector(1000), h halfvec(1000), s sparsevec(1000),
				   r real[], d float8[]);
ALTER TABLE wide ALTER r SET STORAGE EXTERNAL, ALTER d SET STORAGE EXTERNAL;
INSERT INTO wide
SELECT i, a::vector, a::halfvec, a::vector::sparsevec, a::real[], a
FROM (SELECT i, array(SELECT CASE WHEN (i * j) % 5 = 0 THEN 0
								  ELSE ((i * 7 + j * 13) % 53 - 26) / 4.0 END
					  FROM generate_series(1, 1000) j)::float8[] AS a
	  FROM generate_series(1, 150) i) x;
SELECT pg_relation_size(reltoastrelid) > 0 AS toasted,
	   pg_relation_size(oid) / 150 < 200 AS every_vector_out_of_line,
	   (SELECT min(pg_column_size(e)) FROM wide) AS vector_bytes,
	   (SELECT min(pg_column_size(h)) FROM wide) AS halfvec_bytes
FROM pg_class WHERE relname = 'wide';
SELECT c AS col,
	   differ(format($$SELECT * FROM odp_knn('wide', (SELECT e FROM wide WHERE id = 7), 10, features => '{%s}')$$, c),
			  $$SELECT * FROM odp_knn('wide', (SELECT e FROM wide WHERE id = 7), 10, features => '{r}')$$) AS knn,
	   differ(format($$SELECT * FROM odp_outlier_scores('wide', 4, features => '{%s}')$$, c),
			  $$SELECT * FROM odp_outlier_scores('wide', 4, features => '{r}')$$) AS scores,
	   differ(format($$SELECT * FROM odp_pearson('wide', features => '{%s}')$$, c),
			  $$SELECT * FROM odp_pearson('wide', features => '{d}')$$) AS pearson,
	   differ(format($$SELECT * FROM odp_skyline('wide', features => '{%s}')$$, c),
			  $$SELECT * FROM odp_skyline('wide', features => '{d}')$$) AS skyline,
	   differ(format($$SELECT odp_top_outliers_agg(id, %s, 3, 5) FROM wide$$, c),
			  $$SELECT odp_top_outliers_agg(id, r, 3, 5) FROM wide$$) AS agg
FROM unnest(ARRAY['e', 'h', 's']) c;
-- against pgvector: the 10 nearest rows of a TOASTed column
SELECT array_agg(id ORDER BY rank) = (SELECT array_agg(id::bigint) FROM (
		SELECT id FROM wide ORDER BY h <-> (SELECT h FROM wide WHERE id = 7), id LIMIT 10) p) AS halfvec_knn
FROM odp_knn('wide', (SELECT h FROM wide WHERE id = 7), 10, features => '{h}');

-- Parallel reads: every table read by the backend and two workers gives
-- what the serial read gives (rows, results, errors).
CREATE FUNCTION serial_vs_parallel(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	SET LOCAL max_parallel_workers_per_gather = 2;
	SET LOCAL odp_gpu.parallel_read = off;
	EXECUTE format('CREATE TEMP TABLE odp_serial AS %s', q);
	SET LOCAL odp_gpu.parallel_read = force;
	EXECUTE format('CREATE TEMP TABLE odp_parallel AS %s', q);
	result := differ('TABLE odp_serial', 'TABLE odp_parallel');
	DROP TABLE odp_serial, odp_parallel;
	RETURN result;
END $$;
SELECT c AS col,
	   serial_vs_parallel(format($$SELECT * FROM odp_outlier_scores('emb', 5, features => '{%s}')$$, c)) AS scores,
	   serial_vs_parallel(format($$SELECT * FROM odp_pearson('wide', features => '{%s}')$$, c)) AS wide_pearson,
	   serial_vs_parallel(format($$SELECT * FROM odp_knn('wide', (SELECT e FROM wide WHERE id = 9), 20, features => '{%s}')$$, c)) AS wide_knn
FROM unnest(ARRAY['e', 'h', 's']) c;
SET odp_gpu.parallel_read = force;
SET max_parallel_workers_per_gather = 2;
-- the same errors, naming the same row
INSERT INTO wide (id, e, h, s, r, d) SELECT 1000, e, NULL, s, r, d FROM wide WHERE id = 1;
SELECT odp_try($$SELECT * FROM odp_outlier_scores('wide', 4, features => '{h}')$$);
CREATE TABLE ragged AS SELECT id, e::vector AS e, h::halfvec AS h FROM emb;
UPDATE ragged SET e = '[1,2]', h = '[1,2,3]' WHERE id = 350;
SELECT odp_try($$SELECT * FROM odp_outlier_scores('ragged', 4, features => '{e}')$$);
SELECT odp_try($$SELECT * FROM odp_pearson('ragged', features => '{h}')$$);
RESET odp_gpu.parallel_read;
RESET max_parallel_workers_per_gather;

DROP FUNCTION serial_vs_parallel(text), knn_ids(anyelement, text),
	knn_vs_pgvector(text, text, text, text, int), differ(text, text), odp_try(text);
DROP TABLE emb, qs, same_as_arrays, mixed, huge, impostors, wide, ragged;
DROP DOMAIN embedding;
DROP SCHEMA fake CASCADE;
DROP EXTENSION odp_gpu;
DROP EXTENSION vector;
DROP SCHEMA pgv;
