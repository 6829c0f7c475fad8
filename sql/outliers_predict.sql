-- The solving set as a model (seed 001, Definition 3.3): batch_size
-- shrinks the set odp_solving_set returns; every row left out of it weighs
-- at most w*, the n-th best score, against it; odp_outlier_predict scores
-- new rows against a stored set, checked against the same sums in SQL and
-- against the whole data set.  Integer coordinates keep every squared
-- distance exact in float32, so both engines' weights agree to the bit.
CREATE EXTENSION odp_gpu;
SET extra_float_digits = 0;
\i sql/include/odp_try.psql

-- 2,000 points scattered over a 211 x 199 box, four planted far outside it.
CREATE TABLE pts (id int PRIMARY KEY, x float8, y float8);
INSERT INTO pts
	SELECT i, (i * 7919) % 211, (i * 104729) % 199 FROM generate_series(1, 2000) i;
INSERT INTO pts VALUES (3001, 900, 900), (3002, -600, 100), (3003, 100, -700),
	(3004, 700, -500);

-- The default batch (4,096 rows at least) takes the whole table in one
-- batch; smaller batches keep fewer rows.  The top n is the same.
SELECT b AS batch_size, count(*) AS set_rows,
	   count(*) FILTER (WHERE id > 3000) AS planted
FROM unnest(ARRAY[NULL, 1000, 200, 40, 4]) b,
	 LATERAL odp_solving_set('pts', k => 5, n => 4, batch_size => b)
GROUP BY b ORDER BY b DESC NULLS FIRST;
SELECT array_agg(id ORDER BY rank) AS top FROM odp_top_outliers('pts', k => 5, n => 4);

-- The set as a table: the model.  w*: the 4th best score.
CREATE TABLE model AS
	SELECT p.* FROM odp_solving_set('pts', k => 5, n => 4, batch_size => 40) s
	JOIN pts p USING (id);
CREATE TABLE w_star AS SELECT min(score) AS w FROM odp_top_outliers('pts', k => 5, n => 4);

-- Definition 3.3: no row outside the set reaches w* against it, so none is
-- predicted an outlier
SELECT count(*) AS outside, max(weight) <= (SELECT w FROM w_star) AS below_w_star,
	   count(*) FILTER (WHERE is_outlier) AS flagged
FROM odp_outlier_predict('model', 'SELECT * FROM pts WHERE id NOT IN (SELECT id FROM model)',
						 k => 5, threshold => (SELECT w FROM w_star));

-- New rows: inside the box, at its edge, far outside it.
CREATE TABLE arrivals (id int PRIMARY KEY, x float8, y float8);
INSERT INTO arrivals VALUES (1, 100, 100), (2, 5, 190), (3, 210, 0), (4, 260, 240),
	(5, 1500, 1500), (6, -800, -800), (7, 900, 900), (8, 105, -40);
SELECT id, is_outlier FROM odp_outlier_predict('model', 'arrivals', k => 5,
											   threshold => (SELECT w FROM w_star))
ORDER BY id;

-- Weights against the SQL formulation: the k smallest distances to the
-- set's rows, summed in float8 (each distance a float32 square root, as
-- outlier scores take it: 1e-6 relative).
CREATE FUNCTION ref_weight(set_query text, k int)
RETURNS TABLE (id int, weight float8) LANGUAGE plpgsql STABLE AS $$
BEGIN
	RETURN QUERY EXECUTE format($q$
		SELECT a.id, (SELECT sum(d) FROM (
				SELECT sqrt((a.x - s.x) ^ 2 + (a.y - s.y) ^ 2) AS d
				FROM (%s) s ORDER BY 1 LIMIT %s) n)
		FROM arrivals a$q$, set_query, k);
END $$;
SELECT s, k, count(*) AS rows,
	   count(*) FILTER (WHERE abs(o.weight - r.weight) > 1e-6 * greatest(1, r.weight)) AS mismatches
FROM unnest(ARRAY['model', 'pts']) s, unnest(ARRAY[1, 5, 20]) k,
	 LATERAL odp_outlier_predict(s, 'arrivals', k => k) o
	 JOIN LATERAL ref_weight('SELECT * FROM ' || s, k) r ON r.id = o.id
GROUP BY s, k ORDER BY s, k;

-- Against the whole data set a row weighs no more than against the set,
-- so a row the set clears is cleared by the data set too.
SELECT count(*) AS arrivals,
	   count(*) FILTER (WHERE m.weight < d.weight) AS lighter_against_set,
	   count(*) FILTER (WHERE d.is_outlier AND NOT m.is_outlier) AS missed
FROM odp_outlier_predict('model', 'arrivals', k => 5, threshold => (SELECT w FROM w_star)) m
JOIN odp_outlier_predict('pts', 'arrivals', k => 5, threshold => (SELECT w FROM w_star)) d
	USING (id);

-- Without a threshold the weights come alone; other names and features.
SELECT count(*), count(weight), count(is_outlier) FROM odp_outlier_predict('model', 'arrivals', k => 5);
SELECT id, weight, is_outlier FROM odp_outlier_predict('model',
	'SELECT 42 AS key, ARRAY[x + 1, y]::real[] AS f FROM arrivals WHERE id = 3',
	k => 1, threshold => 0, id_column => 'id', features => ARRAY['x', 'y'],
	new_id_column => 'key', new_features => ARRAY['f']);

-- Errors.
SELECT odp_try($$SELECT * FROM odp_solving_set('pts', k => 5, n => 4, batch_size => 0)$$);
SELECT odp_try($$SELECT * FROM odp_solving_set('pts', k => 5, n => 4, batch_size => -3)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict('model', 'arrivals', k => 81)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict('model', 'arrivals', k => 100000)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict('model', 'arrivals', k => 0)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict(NULL, 'arrivals')$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict('model', NULL)$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict('model', 'SELECT 1 AS id, 2.0 AS x')$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict('model', 'arrivals', metric => 'hamming')$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict('model', 'arrivals', threshold => 'NaN')$$);
SELECT odp_try($$SELECT * FROM odp_outlier_predict('no_such_table', 'arrivals')$$);

DROP TABLE pts, model, w_star, arrivals;
DROP FUNCTION ref_weight(text, int), odp_try(text);
DROP EXTENSION odp_gpu;
