# test/checks/parallel_read.sh: sourced by test/run_tests.sh and
# test/gpu_suite.sh (needs odp_check, the run's directory and a running
# server: test/lib.sh).
# odp_parallel_read_checks DEVICE: on a table of 300,000 rows, the read takes
# the parallel workers PostgreSQL would give a scan of it (the timing
# NOTICE's read_workers), none where it must not (parallel_read = off, a
# temporary table, row-level security, a query source, a call inside a
# parallel query's leader), the results are those of the serial read, a
# statement_timeout and pg_cancel_backend during the read stop it within a
# second and leave no parallel worker behind, the next call works, and the
# server log has no leaked shared memory.
# Prints one "ok"/"FAILED" line per check and adds to ODP_PASSED/ODP_FAILED.

# The parallel workers still running, once none is left or 5 s passed (a
# worker ends once it has seen its leader's cancel; on a loaded machine
# that can take a moment).
odp_parallel_workers_left() {
	local left
	for _ in $(seq 100); do
		left=$(psql -X -At -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel worker'")
		[ "$left" = 0 ] && break
		sleep 0.05
	done
	echo "$left"
}

odp_parallel_read_checks() {
	local dev=$1 out workers orders prec pid t0 el left
	# reads, not the table cache (with the service, a vacuumed table is
	# taken from it without a read)
	local PGOPTIONS="${PGOPTIONS:-} -c odp_gpu.table_cache=off"
	export PGOPTIONS
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS odp_par_data;
CREATE TABLE odp_par_data (id bigint PRIMARY KEY, f real[]);
INSERT INTO odp_par_data
	SELECT i, array(SELECT ((i::bigint * 7919 + j * 104729) % 1000003)::real FROM generate_series(1, 16) j)
	FROM generate_series(1, 300000) i;
VACUUM ANALYZE odp_par_data;
SQL
	odp_check "$dev: the parallel read checks' table is made" $? ""
	# workers: "read_workers=N" of each call's NOTICE
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET odp_gpu.device = $dev;
SET odp_gpu.report_timing = on;
SET max_parallel_workers_per_gather = 2;
SET min_parallel_table_scan_size = '8MB';
SELECT 'auto=' || count(*) FROM odp_knn('odp_par_data', (SELECT f::float8[] FROM odp_par_data WHERE id = 7), k => 10);
SET odp_gpu.parallel_read = off;
SELECT 'off=' || count(*) FROM odp_knn('odp_par_data', (SELECT f::float8[] FROM odp_par_data WHERE id = 7), k => 10);
RESET odp_gpu.parallel_read;
SELECT 'query=' || count(*) FROM odp_knn('SELECT * FROM odp_par_data', (SELECT f::float8[] FROM odp_par_data WHERE id = 7), k => 10);
CREATE TEMP TABLE odp_par_temp AS SELECT * FROM odp_par_data;
SET odp_gpu.parallel_read = force;
SELECT 'temp=' || count(*) FROM odp_knn('odp_par_temp', (SELECT f::float8[] FROM odp_par_data WHERE id = 7), k => 10);
SQL
)
	workers=$(grep -o 'read_workers=[0-9]*' <<<"$out" | cut -d= -f2 | tr '\n' ' ')
	[ "$workers" = "2 0 0 0 " ]
	odp_check "$dev: parallel workers read a large table (2), none with parallel_read = off, for a query or a temporary table" $? \
		"read_workers: $workers; $(grep -v NOTICE <<<"$out" | tail -3)"
	# the read of a table with a primary key places the rows at their ids'
	# offsets (read_order=placed); a query's and an unindexed table's rows
	# come in id order already (scan)
	orders=$(grep -o 'read_order=[a-z]*' <<<"$out" | cut -d= -f2 | tr '\n' ' ')
	[ "$orders" = "placed placed scan scan " ]
	odp_check "$dev: the parallel and the serial read place rows by the primary key's range (read_order=placed)" $? \
		"read_order: $orders"
	# the NOTICE says which precision ran: real[] float32, float8 float64
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET odp_gpu.device = $dev;
SET odp_gpu.report_timing = on;
SET odp_gpu.parallel_read = force;
SELECT count(*) FROM odp_knn('odp_par_data', (SELECT f::float8[] FROM odp_par_data WHERE id = 7), k => 10);
SELECT count(*) FROM odp_knn('SELECT id, f::float8[] AS f FROM odp_par_data WHERE id <= 5000',
							 (SELECT f::float8[] FROM odp_par_data WHERE id = 7), k => 10);
SQL
)
	prec=$(grep -o 'precision=[a-z0-9]*' <<<"$out" | cut -d= -f2 | tr '\n' ' ')
	[ "$prec" = "float32 float64 " ]
	odp_check "$dev: the timing NOTICE names the precision (real[] float32, float8[] float64)" $? \
		"precision: $prec; $(grep -v NOTICE <<<"$out" | tail -3)"

	# regions: multirange rows (several pieces each) and decimal bounds are
	# read by workers; numeric bounds whose values a ranking needs are read
	# again serially (against double precision bounds) or at once (numerics
	# a double cannot tell apart); the same pairs as the serial read
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_par_regions;
CREATE TABLE odp_par_regions AS
	SELECT i AS id, int8multirange(int8range(i % 9973, i % 9973 + 5), int8range(i % 7919 + 20000, i % 7919 + 20003)) AS m,
		numrange(i % 9973 / 10.0, (i % 9973 + 7) / 10.0) AS n,
		numrange(i % 9973 / 10.0 + 0.00000000000000000001, (i % 9973 + 7) / 10.0) AS long_n
	FROM generate_series(1, 200000) i;
ANALYZE odp_par_regions;
SET client_min_messages = notice;
SET odp_gpu.device = $dev;
SET odp_gpu.report_timing = on;
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.parallel_read = force;
SELECT 'mr=' || odp_interval_match_count('odp_par_regions', 'SELECT id, m FROM odp_par_regions WHERE id % 50 = 0', dims => '{m}');
SELECT 'num=' || odp_interval_match_count('odp_par_regions', 'SELECT id, n FROM odp_par_regions WHERE id % 50 = 0', dims => '{n}');
SELECT 'float=' || odp_interval_match_count('odp_par_regions', 'SELECT id, lower(n)::float8 AS lo, upper(n)::float8 AS hi FROM odp_par_regions WHERE id % 50 = 0', dims => '{n}', other_dims => '{lo,hi}');
SELECT 'long=' || odp_interval_match_count('odp_par_regions', 'SELECT id, n FROM odp_par_regions WHERE id % 50 = 0', dims => '{long_n}', other_dims => '{n}');
SET odp_gpu.parallel_read = off;
SELECT 'mr=' || odp_interval_match_count('odp_par_regions', 'SELECT id, m FROM odp_par_regions WHERE id % 50 = 0', dims => '{m}');
SELECT 'num=' || odp_interval_match_count('odp_par_regions', 'SELECT id, n FROM odp_par_regions WHERE id % 50 = 0', dims => '{n}');
SELECT 'float=' || odp_interval_match_count('odp_par_regions', 'SELECT id, lower(n)::float8 AS lo, upper(n)::float8 AS hi FROM odp_par_regions WHERE id % 50 = 0', dims => '{n}', other_dims => '{lo,hi}');
SELECT 'long=' || odp_interval_match_count('odp_par_regions', 'SELECT id, n FROM odp_par_regions WHERE id % 50 = 0', dims => '{long_n}', other_dims => '{n}');
DROP TABLE odp_par_regions;
SQL
)
	workers=$(grep -o 'read_workers=[0-9]*' <<<"$out" | cut -d= -f2 | tr '\n' ' ')
	[ "$workers" = "2 2 0 0 0 0 0 0 " ] && [ "$(grep -c '^mr=' <<<"$out")" = 2 ] &&
		[ "$(grep '^mr=' <<<"$out" | sort -u | wc -l)" = 1 ] && [ "$(grep '^num=' <<<"$out" | sort -u | wc -l)" = 1 ] &&
		[ "$(grep '^float=' <<<"$out" | sort -u | wc -l)" = 1 ] && [ "$(grep '^long=' <<<"$out" | sort -u | wc -l)" = 1 ]
	odp_check "$dev: workers read multirange and decimal regions (2) with the serial read's pairs; numeric bounds a ranking needs are read serially" $? \
		"read_workers: $workers; $(grep -v NOTICE <<<"$out" | tr '\n' ' ')"

	# results: every score of the table, serial and parallel
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET odp_gpu.device = $dev;
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.parallel_read = off;
SELECT sum(id * rank) || ':' || sum(distance)::numeric(20,3) FROM odp_knn('odp_par_data', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 100);
SET odp_gpu.parallel_read = force;
SELECT sum(id * rank) || ':' || sum(distance)::numeric(20,3) FROM odp_knn('odp_par_data', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 100);
SQL
)
	[ "$(sed -n 1p <<<"$out")" = "$(sed -n 2p <<<"$out")" ] && [ -n "$(sed -n 1p <<<"$out")" ]
	odp_check "$dev: the parallel read gives the serial read's k-NN" $? "$out"

	# narrow rows stored out of id order: every participant puts them in
	# id order, each row at its id's offset where the ids are a permutation
	# of a range, else through a ranking of the ids (sparse ids); a repeated
	# id within a range of as many values as rows gives the serial read's
	# error; the serial read's k-NN
	out=$(psql -X -At -v ON_ERROR_STOP=0 2>&1 <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_par_shuffled, odp_par_shuf_sparse, odp_par_shuf_dup;
CREATE TABLE odp_par_shuffled AS SELECT * FROM odp_par_data ORDER BY (id * 7919) % 300007;
CREATE TABLE odp_par_shuf_sparse AS SELECT id * 3 - 7 AS id, f FROM odp_par_shuffled;
CREATE TABLE odp_par_shuf_dup AS SELECT CASE WHEN id = 2 THEN 1 ELSE id END AS id, f FROM odp_par_shuffled;
ANALYZE odp_par_shuffled; ANALYZE odp_par_shuf_sparse; ANALYZE odp_par_shuf_dup;
SET client_min_messages = notice;
SET odp_gpu.device = $dev;
SET odp_gpu.report_timing = on;
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.parallel_read = off;
SELECT 'dense=' || sum(id * rank) || ':' || sum(distance)::numeric(20,3) FROM odp_knn('odp_par_shuffled', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 100);
SELECT 'sparse=' || sum(id * rank) || ':' || sum(distance)::numeric(20,3) FROM odp_knn('odp_par_shuf_sparse', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 100);
SELECT count(*) FROM odp_knn('odp_par_shuf_dup', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 5);
SET odp_gpu.parallel_read = force;
SELECT 'dense=' || sum(id * rank) || ':' || sum(distance)::numeric(20,3) FROM odp_knn('odp_par_shuffled', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 100);
SELECT 'sparse=' || sum(id * rank) || ':' || sum(distance)::numeric(20,3) FROM odp_knn('odp_par_shuf_sparse', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 100);
SELECT count(*) FROM odp_knn('odp_par_shuf_dup', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 5);
SELECT 'dense=' || sum(id * rank) || ':' || sum(distance)::numeric(20,3) FROM odp_knn('odp_par_data', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 100);
DROP TABLE odp_par_shuffled, odp_par_shuf_sparse, odp_par_shuf_dup;
SQL
)
	workers=$(grep -o 'read_workers=[0-9]*' <<<"$out" | cut -d= -f2 | tr '\n' ' ')
	[ "$workers" = "0 0 2 2 2 " ] && [ "$(grep -c -e '^dense=' -e '^sparse=' <<<"$out")" = 5 ] &&
		[ "$(grep '^dense=' <<<"$out" | sort -u | wc -l)" = 1 ] && [ "$(grep '^sparse=' <<<"$out" | sort -u | wc -l)" = 1 ] &&
		[ "$(grep -c 'ERROR:  id column "id" has duplicate value 1$' <<<"$out")" = 2 ]
	odp_check "$dev: workers put narrow rows stored out of id order (ids a permutation of a range, sparse, repeated) in id order: the serial read's k-NN and duplicate-id error" $? \
		"read_workers: $workers; $(grep -v NOTICE <<<"$out" | tr '\n' ' ')"

	# wide rows (TOASTed float8[]) stored out of id order, ids dense and
	# sparse: workers place each row at its rank; the results and the
	# duplicate-id error are the serial read's
	out=$(psql -X -At -v ON_ERROR_STOP=0 2>&1 <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_par_wide, odp_par_sparse, odp_par_dup;
CREATE TABLE odp_par_wide (id bigint, v float8[]);
INSERT INTO odp_par_wide
	SELECT i, array(SELECT ((i::bigint * 7919 + j * 104729) % 1000003)::float8 / 1000 FROM generate_series(1, 1024) j)
	FROM generate_series(1, 3001) i ORDER BY (i * 7) % 3001;
CREATE TABLE odp_par_sparse AS SELECT id * 1000003 - 5000000 AS id, v FROM odp_par_wide;
CREATE TABLE odp_par_dup AS SELECT id % 2999 AS id, v FROM odp_par_wide;
VACUUM ANALYZE odp_par_wide, odp_par_sparse, odp_par_dup;
SET client_min_messages = notice;
SET odp_gpu.device = $dev;
SET odp_gpu.report_timing = on;
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.parallel_read = off;
SELECT 'knn=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank)) FROM odp_knn('odp_par_wide', (SELECT v FROM odp_par_wide WHERE id = 11), k => 200);
SELECT 'sparse=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank)) FROM odp_knn('odp_par_sparse', (SELECT v FROM odp_par_wide WHERE id = 11), k => 200);
SELECT 'top=' || md5(string_agg(t::text, ',' ORDER BY t::text)) FROM odp_pearson_top('odp_par_sparse', k => 30) t;
SELECT count(*) FROM odp_knn('odp_par_dup', (SELECT v FROM odp_par_wide WHERE id = 11), k => 5);
SET odp_gpu.parallel_read = force;
SELECT 'knn=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank)) FROM odp_knn('odp_par_wide', (SELECT v FROM odp_par_wide WHERE id = 11), k => 200);
SELECT 'sparse=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank)) FROM odp_knn('odp_par_sparse', (SELECT v FROM odp_par_wide WHERE id = 11), k => 200);
SELECT 'top=' || md5(string_agg(t::text, ',' ORDER BY t::text)) FROM odp_pearson_top('odp_par_sparse', k => 30) t;
SELECT count(*) FROM odp_knn('odp_par_dup', (SELECT v FROM odp_par_wide WHERE id = 11), k => 5);
DROP TABLE odp_par_wide, odp_par_sparse, odp_par_dup;
SQL
)
	workers=$(grep -o 'read_workers=[0-9]*' <<<"$out" | cut -d= -f2 | tr '\n' ' ')
	[ "$workers" = "0 0 0 2 2 2 " ] && [ "$(grep -c -e '^knn=' -e '^sparse=' -e '^top=' <<<"$out")" = 6 ] &&
		[ "$(grep '^knn=' <<<"$out" | sort -u | wc -l)" = 1 ] && [ "$(grep '^sparse=' <<<"$out" | sort -u | wc -l)" = 1 ] &&
		[ "$(grep '^top=' <<<"$out" | sort -u | wc -l)" = 1 ] &&
		[ "$(grep -c 'ERROR:  id column "id" has duplicate value 1$' <<<"$out")" = 2 ]
	odp_check "$dev: workers place wide rows stored out of id order (dense and sparse ids) at their ranks: the serial read's results and duplicate-id error" $? \
		"read_workers: $workers; $(grep -v NOTICE <<<"$out" | tr '\n' ' ')"

	# rows stored out of id order under an index on the ids, with gaps:
	# workers decode each row straight to its id's offset, narrow and wide
	# rows alike (read_order=placed), with the serial read's results; a
	# repeated id under a non-unique index fails the parallel read, and the
	# serial read gives its duplicate-id error
	out=$(psql -X -At -v ON_ERROR_STOP=0 2>&1 <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_par_placed, odp_par_placed_wide, odp_par_placed_dup;
CREATE TABLE odp_par_placed AS
	SELECT * FROM odp_par_data WHERE id % 101 <> 0 ORDER BY (id * 7919) % 300007;
ALTER TABLE odp_par_placed ADD PRIMARY KEY (id);
CREATE TABLE odp_par_placed_dup AS
	SELECT CASE WHEN id = 2 THEN 1 ELSE id END AS id, f FROM odp_par_placed;
CREATE INDEX ON odp_par_placed_dup (id);
CREATE TABLE odp_par_placed_wide (id int PRIMARY KEY, v float8[]);
INSERT INTO odp_par_placed_wide
	SELECT i, array(SELECT ((i::bigint * 7919 + j * 104729) % 1000003)::float8 / 1000 FROM generate_series(1, 1024) j)
	FROM generate_series(1, 3001) i WHERE i % 13 <> 0 ORDER BY (i * 7) % 3001;
VACUUM ANALYZE odp_par_placed, odp_par_placed_dup, odp_par_placed_wide;
SET client_min_messages = notice;
SET odp_gpu.device = $dev;
SET odp_gpu.report_timing = on;
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.parallel_read = off;
SELECT 'narrow=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank)) FROM odp_knn('odp_par_placed', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 500);
SELECT 'wide=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank)) FROM odp_knn('odp_par_placed_wide', (SELECT v FROM odp_par_placed_wide WHERE id = 11), k => 200);
SELECT 'top=' || md5(string_agg(t::text, ',' ORDER BY t::text)) FROM odp_pearson_top('odp_par_placed_wide', k => 30) t;
SELECT count(*) FROM odp_knn('odp_par_placed_dup', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 5);
SET odp_gpu.parallel_read = force;
SELECT 'narrow=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank)) FROM odp_knn('odp_par_placed', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 500);
SELECT 'wide=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank)) FROM odp_knn('odp_par_placed_wide', (SELECT v FROM odp_par_placed_wide WHERE id = 11), k => 200);
SELECT 'top=' || md5(string_agg(t::text, ',' ORDER BY t::text)) FROM odp_pearson_top('odp_par_placed_wide', k => 30) t;
SELECT count(*) FROM odp_knn('odp_par_placed_dup', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 5);
DROP TABLE odp_par_placed, odp_par_placed_wide, odp_par_placed_dup;
SQL
)
	workers=$(grep -o 'read_workers=[0-9]*' <<<"$out" | cut -d= -f2 | tr '\n' ' ')
	orders=$(grep -o 'read_order=[a-z]*' <<<"$out" | cut -d= -f2 | tr '\n' ' ')
	[ "$workers" = "0 0 0 2 2 2 " ] && [ "$orders" = "placed placed placed placed placed placed " ] &&
		[ "$(grep -c -e '^narrow=' -e '^wide=' -e '^top=' <<<"$out")" = 6 ] &&
		[ "$(grep '^narrow=' <<<"$out" | sort -u | wc -l)" = 1 ] && [ "$(grep '^wide=' <<<"$out" | sort -u | wc -l)" = 1 ] &&
		[ "$(grep '^top=' <<<"$out" | sort -u | wc -l)" = 1 ] &&
		[ "$(grep -c 'ERROR:  id column "id" has duplicate value 1$' <<<"$out")" = 2 ]
	odp_check "$dev: workers place rows stored out of id order at their ids' offsets under an index (narrow and wide, with gaps): the serial read's results and duplicate-id error" $? \
		"read_workers: $workers; read_order: $orders; $(grep -v NOTICE <<<"$out" | tr '\n' ' ')"

	# statement_timeout during the read (calls one after another, most of
	# each the read: a fast host reads the table within any fixed timeout);
	# no worker left; the next call works
	out=$(psql -X -At -v ON_ERROR_STOP=0 2>&1 <<SQL
SET odp_gpu.device = $dev;
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.parallel_read = force;
SELECT 't0=' || extract(epoch FROM clock_timestamp());
SET statement_timeout = '150ms';
DO \$\$ BEGIN FOR i IN 1..100000 LOOP
	PERFORM count(*) FROM odp_knn('odp_par_data', (SELECT f::float8[] FROM odp_par_data WHERE id = 7), k => 10);
END LOOP; END \$\$;
RESET statement_timeout;
SELECT 't1=' || extract(epoch FROM clock_timestamp());
SELECT 'next=' || count(*) FROM odp_knn('odp_par_data', (SELECT f::float8[] FROM odp_par_data WHERE id = 7), k => 10);
SQL
)
	el=$(awk -v a="$(sed -n 's/^t0=//p' <<<"$out")" -v b="$(sed -n 's/^t1=//p' <<<"$out")" 'BEGIN { printf "%.2f", b - a }')
	left=$(odp_parallel_workers_left)
	grep -q "canceling statement due to statement timeout" <<<"$out" && [ "$left" = 0 ] \
		&& grep -q '^next=10$' <<<"$out" && awk -v e="$el" 'BEGIN { exit !(e < 1.0) }'
	odp_check "$dev: statement_timeout stops a parallel read, no worker is left, the next call works" $? \
		"after $el s; $(grep -E 'ERROR|^next' <<<"$out" | tr '\n' ' ') left=$left"

	# pg_cancel_backend from another session, repeated until one lands in a read
	psql -X -At -c "SET application_name = 'odp_par_cancel'" -c "SET odp_gpu.device = $dev" \
		-c "SET max_parallel_workers_per_gather = 2" -c "SET odp_gpu.parallel_read = force" \
		-c "DO \$\$ BEGIN FOR i IN 1..200 LOOP PERFORM count(*) FROM odp_knn('odp_par_data', '{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}', k => 10); END LOOP; END \$\$" \
		>"$ODP_RUN_DIR/par_cancel.out" 2>&1 &
	pid=$!
	sleep 1
	t0=$(date +%s.%N)
	psql -X -At -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'odp_par_cancel'" >/dev/null
	wait $pid
	el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	left=$(odp_parallel_workers_left)
	grep -q "canceling statement due to user request" "$ODP_RUN_DIR/par_cancel.out" && [ "$left" = 0 ] \
		&& awk -v e="$el" 'BEGIN { exit !(e < 1.5) }'
	odp_check "$dev: pg_cancel_backend stops repeated parallel reads, no worker is left" $? \
		"after $el s, $left workers left; $(tail -2 "$ODP_RUN_DIR/par_cancel.out")"

	# row-level security keeps the serial path and its policy
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
DROP ROLE IF EXISTS odp_par_reader;
CREATE ROLE odp_par_reader;
GRANT SELECT ON odp_par_data TO odp_par_reader;
ALTER TABLE odp_par_data ENABLE ROW LEVEL SECURITY;
CREATE POLICY odp_par_low ON odp_par_data FOR SELECT USING (id % 3 = 0);
SET ROLE odp_par_reader;
SET client_min_messages = notice;
SET odp_gpu.device = $dev;
SET odp_gpu.report_timing = on;
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.parallel_read = force;
SELECT 'rls=' || count(*) || ':' || bool_and(id % 3 = 0) FROM odp_knn('odp_par_data', (SELECT f::float8[] FROM odp_par_data WHERE id = 9), k => 50);
RESET ROLE;
DROP POLICY odp_par_low ON odp_par_data;
ALTER TABLE odp_par_data DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON odp_par_data FROM odp_par_reader;
DROP ROLE odp_par_reader;
SQL
)
	grep -q '^rls=50:true$' <<<"$out" && grep -q 'read_workers=0' <<<"$out"
	odp_check "$dev: a table under row-level security is read serially, through its policy" $? "$out"

	odp_server_log_tail 2000 | grep -q "dynamic shared memory leak"
	[ $? -ne 0 ]
	odp_check "$dev: no shared memory leaked by parallel reads" $? "$(odp_server_log_tail 2000 | grep -m3 'leak')"
	psql -X -q -c "DROP TABLE odp_par_data" >/dev/null
}
