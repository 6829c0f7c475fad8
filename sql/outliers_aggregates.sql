-- odp_top_outliers_agg: per-group results equal odp_top_outliers on the
-- group's rows; bad rows get the table functions' errors; no rows -> NULL.
CREATE EXTENSION odp_gpu;
SET extra_float_digits = 0;
\i sql/include/odp_try.psql

-- Four groups of different sizes, rows inserted in descending id order
-- (the aggregate sorts by id), a planted outlier in groups 1 and 2, ties
-- in group 3 (a grid).
CREATE TABLE pts (g int, id bigint, f real[], d float8[]);
INSERT INTO pts
	SELECT i % 3 + 1, i,
		   CASE WHEN i % 3 = 2
				THEN ARRAY[(i / 3) % 6, (i / 18) % 6]::real[]
				ELSE ARRAY[((i * 7919) % 97)::real / 10,
						   ((i * 104729) % 89)::real / 10] END,
		   NULL
	FROM generate_series(600, 1, -1) i;
INSERT INTO pts VALUES (1, 9001, '{40, 40}', NULL), (2, 9002, '{-30, 5}', NULL),
	(4, 9100, '{0, 0}', NULL), (4, 9101, '{0, 1}', NULL), (4, 9102, '{3, 0}', NULL);
UPDATE pts SET d = f::float8[];

SELECT g, (unnest(odp_top_outliers_agg(id, f, 5, 3))).*
FROM pts WHERE g <> 4 GROUP BY g ORDER BY g, rank;
SELECT g, odp_top_outliers_agg(id, f, 1, 2) FROM pts WHERE g = 4 GROUP BY g;

-- Every group equals odp_top_outliers on a query source of its rows, for
-- real[] (float32) and float8[] (float64) vectors and several k and n:
-- rows that differ.
CREATE FUNCTION agg_diff(k int, n int) RETURNS TABLE (real_diff bigint, float8_diff bigint)
LANGUAGE sql STABLE AS $$
	WITH a AS (SELECT g, (unnest(odp_top_outliers_agg(id, f, k, n))).* FROM pts GROUP BY g),
		 a8 AS (SELECT g, (unnest(odp_top_outliers_agg(id, d, k, n))).* FROM pts GROUP BY g),
		 b AS (SELECT g, t.* FROM (SELECT DISTINCT g FROM pts) gs,
			   LATERAL odp_top_outliers(format('SELECT id, f FROM pts WHERE g = %s', g),
										k => k, n => n) t),
		 b8 AS (SELECT g, t.* FROM (SELECT DISTINCT g FROM pts) gs,
				LATERAL odp_top_outliers(format('SELECT id, d FROM pts WHERE g = %s', g),
										 k => k, n => n) t)
	SELECT (SELECT count(*) FROM ((TABLE a EXCEPT TABLE b) UNION ALL (TABLE b EXCEPT TABLE a)) x),
		   (SELECT count(*) FROM ((TABLE a8 EXCEPT TABLE b8) UNION ALL (TABLE b8 EXCEPT TABLE a8)) y)
$$;
SELECT k, n, d.* FROM (VALUES (1, 1), (2, 5), (2, 1000)) v(k, n), LATERAL agg_diff(k, n) d
ORDER BY k, n;
-- the same once k exceeds group 4: it is filtered out
SELECT count(*) AS groups,
	   bool_and(o = (SELECT array_agg(t::odp_outlier ORDER BY t.rank)
					 FROM odp_top_outliers(format('SELECT id, f FROM pts WHERE g = %s', g),
										   k => 10, n => 7) t)) AS equal
FROM (SELECT g, odp_top_outliers_agg(id, f, 10, 7) AS o FROM pts WHERE g <> 4 GROUP BY g) s;
-- whole table, no GROUP BY; ORDER BY in the aggregate changes nothing
SELECT odp_top_outliers_agg(id, f, 3, 4) = odp_top_outliers_agg(id, f, 3, 4 ORDER BY id DESC) AS same
FROM pts;
SELECT (unnest(odp_top_outliers_agg(id, f, 3, 4))).* FROM pts;

-- No rows: NULL (no GROUP BY), or no groups at all.
SELECT odp_top_outliers_agg(id, f, 3, 4) IS NULL AS is_null FROM pts WHERE false;
SELECT g, odp_top_outliers_agg(id, f, 3, 4) FROM pts WHERE false GROUP BY g;

-- Errors: the table functions' errors and SQLSTATEs.
CREATE TABLE bad (g int, id bigint, f real[]);
INSERT INTO bad VALUES (1, 1, '{0, 0}'), (1, 2, '{1, 0}'), (1, 3, '{0, 1}'),
	(1, 4, '{5, 5}');
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 2) FROM
	(TABLE bad UNION ALL VALUES (1, NULL::bigint, '{1, 1}'::real[])) s$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 2) FROM
	(TABLE bad UNION ALL VALUES (1, 7, NULL::real[])) s$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 2) FROM
	(TABLE bad UNION ALL VALUES (1, 7, '{1, NULL}'::real[])) s$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 2) FROM
	(TABLE bad UNION ALL VALUES (1, 7, '{1, 2, 3}'::real[])) s$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 2) FROM
	(TABLE bad UNION ALL VALUES (1, 7, '{1, NaN}'::real[])) s$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f::float8[], 1, 2) FROM
	(TABLE bad UNION ALL VALUES (1, 7, '{1, Infinity}'::real[])) s$$);
-- float8[] beyond float32 is refused where the distances are float32
SET odp_gpu.distance_precision = float32;
SELECT odp_try($$SELECT odp_top_outliers_agg(id, ARRAY[1e39, 0]::float8[], 1, 2) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 2) FROM
	(TABLE bad UNION ALL VALUES (1, 7, '{}'::real[])) s$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 2) FROM
	(TABLE bad UNION ALL VALUES (1, 3, '{7, 7}'::real[])) s$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, ARRAY[id * 1e30, 0]::float8[], 1, 2) FROM bad$$);
RESET odp_gpu.distance_precision;
SELECT odp_try($$SELECT odp_top_outliers_agg(id, ARRAY[id * 1e160, 0]::float8[], 1, 2) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, ARRAY[1e400, 0]::numeric[], 1, 2) FROM bad$$);
-- k and n
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 4, 2) FROM bad$$);
SELECT odp_try($$SELECT g, odp_top_outliers_agg(id, f, 5, 3) FROM pts GROUP BY g$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 0) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 0, 1) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, NULL, 1) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, NULL) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 5000, 1) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, id::int, 1) FROM bad$$);
-- the features argument is "any": integer and numeric arrays are read as
-- float8[] vectors are; what is no vector is refused
SELECT g, odp_top_outliers_agg(id, f::int[], 5, 3) = odp_top_outliers_agg(id, f::int[]::float8[], 5, 3) AS int_same,
	   odp_top_outliers_agg(id, d::numeric[], 5, 3) = odp_top_outliers_agg(id, d::numeric[]::float8[], 5, 3) AS numeric_same,
	   array_length(odp_top_outliers_agg(id, f::int[], 5, 3), 1) AS rows
FROM pts WHERE g <> 4 GROUP BY g ORDER BY g;
SELECT odp_try($$SELECT odp_top_outliers_agg(id, 'abc'::text, 1, 1) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, '{1, 2}', 1, 1) FROM bad$$);
SELECT odp_try($$SELECT odp_top_outliers_agg(id, ARRAY['a'], 1, 1) FROM bad$$);
-- not a window function (the final function orders its state in place)
SELECT odp_try($$SELECT odp_top_outliers_agg(id, f, 1, 1) OVER (ORDER BY id) FROM bad$$);

DROP TABLE pts, bad;
DROP FUNCTION agg_diff(int, int);
DROP FUNCTION odp_try(text);
DROP EXTENSION odp_gpu;
