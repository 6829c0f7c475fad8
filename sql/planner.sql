-- Row estimates for the planner: odp_rows_support tells it how many rows
-- each set-returning function returns where constant arguments say it, so
-- that a join of odp_top_outliers(..., n => 10) with a large table looks
-- the ten ids up by index instead of scanning the table.
CREATE EXTENSION odp_gpu;

-- The estimate PostgreSQL makes for the function scan of a query.
CREATE FUNCTION odp_estimate(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
	RETURN (WITH RECURSIVE nodes(n) AS (
				SELECT plan -> 0 -> 'Plan'
				UNION ALL
				SELECT p FROM nodes, json_array_elements(coalesce(n -> 'Plans', '[]')) p)
			SELECT string_agg((n ->> 'Function Name') || ': ' || (n ->> 'Plan Rows'), ', ')
			FROM nodes WHERE n ->> 'Node Type' = 'Function Scan');
END $$;

CREATE TABLE pts (id bigint PRIMARY KEY, f real[]);
INSERT INTO pts SELECT i, array[(i % 37)::real, (i % 11)::real] FROM generate_series(1, 2000) i;
CREATE TABLE big_table (id bigint PRIMARY KEY, payload text);
INSERT INTO big_table SELECT i, md5(i::text) FROM generate_series(1, 200000) i;
ANALYZE pts;
ANALYZE big_table;

-- n rows of odp_top_outliers: an index lookup into the big table
SELECT odp_estimate($$SELECT * FROM odp_top_outliers('pts', k => 5, n => 10) o JOIN big_table USING (id)$$);
EXPLAIN (COSTS OFF) SELECT * FROM odp_top_outliers('pts', k => 5, n => 10) o JOIN big_table USING (id);
-- the same rows as without the index
SELECT count(*), count(payload) FROM odp_top_outliers('pts', k => 5, n => 10) o JOIN big_table USING (id);

-- the other estimates: the source's rows, k, queries x k, every pair, the
-- new rows
SELECT odp_estimate($$SELECT * FROM odp_outlier_scores('pts', k => 5)$$);
SELECT odp_estimate($$SELECT * FROM odp_top_outliers('pts', n => 5000)$$);
SELECT odp_estimate($$SELECT * FROM odp_knn('pts', '{1,2}', k => 7)$$);
SELECT odp_estimate($$SELECT * FROM odp_knn_join('pts', 'pts', k => 3)$$);
SELECT odp_estimate($$SELECT * FROM odp_pearson_top('pts', k => 4)$$);
SELECT odp_estimate($$SELECT * FROM odp_pearson_top('pts', 'pts', k => 2)$$);
SELECT odp_estimate($$SELECT * FROM odp_pearson('pts')$$);
SELECT odp_estimate($$SELECT * FROM odp_pearson('pts', 'pts')$$);
SELECT odp_estimate($$SELECT * FROM odp_outlier_predict('pts', 'big_table', k => 3)$$);
-- where the arguments do not say: the function's ROWS
SELECT odp_estimate($$SELECT * FROM odp_pearson('pts', min_abs_r => 0.9)$$);
SELECT odp_estimate($$SELECT * FROM odp_outlier_scores('SELECT * FROM pts', k => 5)$$);
SELECT odp_estimate($$SELECT * FROM odp_top_outliers('pts', n => (SELECT 3))$$);
SELECT odp_estimate($$SELECT * FROM odp_outlier_scores('no_such_table')$$);
SELECT odp_estimate($$SELECT * FROM odp_skyline('pts')$$);
SELECT odp_estimate($$SELECT * FROM odp_solving_set('pts')$$);
SELECT odp_estimate($$SELECT * FROM odp_interval_match('pts', 'pts')$$);
SELECT odp_estimate($$SELECT * FROM odp_gpu_info()$$);
-- a table never analysed has no row estimate to give
CREATE TABLE fresh (id bigint, f real[]);
SELECT odp_estimate($$SELECT * FROM odp_outlier_scores('fresh')$$);

SELECT p.oid::regprocedure AS function, p.prorows, p.prosupport
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'odp_gpu'
WHERE p.proretset ORDER BY p.oid::regprocedure::text COLLATE "C";

DROP TABLE pts, big_table, fresh;
DROP FUNCTION odp_estimate(text);
DROP EXTENSION odp_gpu;
