# test/checks/table_cache.sh: sourced by test/run_tests.sh after
# test/checks/staging.sh, whose helpers (odp_svc_*, odp_stg_*) it uses.
# odp_table_cache_checks restarts the server with odp_gpu preloaded, the
# service on the CPU engine and a staging area of 64 MB, and checks that
#   - a repeated call on a vacuumed table reads it from the cache (the
#     timing report says read=... (cache)), for every analytic, with the
#     rows of a read with odp_gpu.table_cache off, and the view lists the
#     entries with their hits;
#   - after every kind of change (update, insert, delete, each before and
#     after VACUUM; TRUNCATE, VACUUM FULL, ALTER TABLE adding, dropping and
#     retyping columns, CLUSTER, a rolled-back savepoint, DROP and CREATE
#     under the same name, COPY FREEZE) a k-NN call gives the SQL oracle's
#     rows (ORDER BY .. LIMIT), as it does with the cache off;
#   - a REPEATABLE READ transaction keeps its snapshot's rows while another
#     session changes the table, a transaction sees its own changes, and
#     another session's uncommitted change is not seen;
#   - an UPDATE of a TOASTed float8[] row is seen; a partition is kept, its
#     parent read as a query;
#   - 12 sessions in REPEATABLE READ transactions, each call checked
#     against the oracle and the cache-off read in the same snapshot,
#     while a writer updates and vacuums the table: every answer right,
#     and some of them from the cache;
#   - unlogged and temporary tables are not kept (DEBUG1 says why); a
#     table under row-level security is read for two users in turn, each
#     with its policy, never from the owner's entry; the view hides
#     entries from roles that may not read the table, which get 42501
#     with an entry there; only the owner drops them;
#   - odp_gpu_table_cache_load keeps a table ahead of its first call, and
#     says why it cannot; two databases holding a table of the same OID
#     and relfilenode each get their own rows; entries made before a
#     restart of the service are still used, with the oracle's rows;
#   - the entries keep to odp_gpu.table_cache_share, give way least
#     recently used first, and give way to an input that finds no room
#     (no miss counted); an entry dropped while a call uses it goes once
#     the call ends, as do the pins of a terminated backend;
#   - a call through the service leaves a copy of its table in the engine
#     (the view's device), which the next calls use with the oracle's rows;
#     a new engine process holds none and makes them again; a call that
#     needs the device memory a copy holds gets it at once;
#   - 64 sessions of single k-NN queries on a cached table, a writer
#     changing it: every answer the oracle's in its snapshot, some served
#     by shared passes, a bad k and statement timeouts failing alone;
#   - in the end no byte of the area is held.
# Ends with the server restarted without preloading.  About 50 s on two
# cores.

# The k-NN call of the checks, and its SQL oracle: squared distances of
# integer coordinates, exact in float32 and float64; ties by id in both.
ODP_TC_KNN="SELECT 'r=' || string_agg(id || ':' || distance, ',' ORDER BY rank)
	FROM odp_knn('tc_pts', '{500,500}'::real[], k => 10, metric => 'sqeuclidean')"
ODP_TC_ORACLE="SELECT 'r=' || string_agg(id || ':' || d, ',' ORDER BY d, id) FROM
	(SELECT id, (f[1] - 500)::float8 ^ 2 + (f[2] - 500)::float8 ^ 2 AS d FROM tc_pts ORDER BY d, id LIMIT 10) s"

# Every analytic on the checks' tables, one md5 each.
ODP_TC_BATTERY="SELECT 'knn=' || md5(string_agg(id || ':' || distance, ',' ORDER BY rank))
	FROM odp_knn('tc_pts', '{500,500}'::real[], k => 10);
SELECT 'top=' || md5(string_agg(id || ':' || score, ',' ORDER BY id)) FROM odp_top_outliers('tc_pts', k => 5, n => 5);
SELECT 'join=' || md5(string_agg(query_id || ':' || rank || ':' || id, ',' ORDER BY query_id, rank))
	FROM odp_knn_join('(SELECT * FROM tc_pts WHERE id % 97 = 0)', 'tc_pts', k => 3);
SELECT 'sky=' || md5(string_agg(id || ':' || dominated_by, ',' ORDER BY id)) FROM odp_skyline('tc_x', '{min,max,min}');
SELECT 'corr=' || md5(string_agg(id_a || ':' || id_b || ':' || r, ',' ORDER BY id_a, id_b)) FROM odp_pearson('tc_series', 0.2);
SELECT 'regions=' || odp_interval_match_count('tc_regs');"

# Session $1's lines name=value of the battery, sorted, on one line.
odp_tc_results() { grep -E '^(knn|top|join|sky|corr|regions)=' <<<"$1" | sort | tr '\n' ' '; }

# The bytes the table cache holds, as the superuser's view shows them.
odp_tc_bytes() { psql -X -At -c "SELECT coalesce(sum(bytes), 0) FROM odp_gpu_table_cache"; }

# Where the long calls of the checks compute: gpu, the service (on its CPU
# engine they take seconds), or cpu, the backend (the service's GPU engine
# is done with them in milliseconds).
ODP_TC_LONG_DEVICE=${ODP_TC_LONG_DEVICE:-gpu}

# Waits until session $1's long call computes: in the service, or a
# second into its CPU run in the backend.
odp_tc_wait_computing() {
	if [ "$ODP_TC_LONG_DEVICE" = gpu ]; then
		odp_svc_wait_in_service "$1"
	else
		sleep 1
	fi
}

# Waits (at most 10 s) until the area's longest free run is $1 bytes.
odp_tc_wait_free() {
	for _ in $(seq 100); do
		[ "$(psql -X -At -c "SELECT largest_free FROM odp_gpu_staging()")" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# The engine's copies of the entries (service_resident.h), on a table of
# 250,000 x 32 real[] (32 MB): a call through the service leaves a copy in
# the engine (the view's device), the next calls give the oracle's rows
# from it; a new engine process holds none and makes them again; and under
# a device budget of 358 MB a call that needs more than the copy leaves
# (a request wishes for 256 MB and twice its inputs) gets it at once,
# the copy giving way.  The calls ask for the GPU path, which the service
# serves (under auto, a single k-NN query computes in the backend).
ODP_TC_DEV_KNN="SELECT 'r=' || string_agg(id || ':' || distance, ',' ORDER BY rank)
	FROM odp_knn('tc_dev', array_fill(50::real, '{32}'), k => 10, metric => 'sqeuclidean')"
ODP_TC_DEV_ORACLE="SELECT 'r=' || string_agg(id || ':' || d, ',' ORDER BY d, id) FROM
	(SELECT id, (SELECT sum((x - 50)::float8 ^ 2) FROM unnest(f) x) AS d FROM tc_dev ORDER BY d, id LIMIT 10) s"
# Waits up to 2 s for tc_dev's copy: the worker marks a copy made when it
# frees the call's slot, just after the call returns.
ODP_TC_DEV_COPY_WAIT="DO \$\$ BEGIN
	FOR i IN 1 .. 100 LOOP
		EXIT WHEN (SELECT count(device) FROM odp_gpu_table_cache WHERE relation = 'tc_dev'::regclass) > 0;
		PERFORM pg_sleep(0.02);
	END LOOP;
END \$\$"
odp_tc_copy_checks() {
	local out eng new
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET odp_gpu.device = gpu;
CREATE TABLE tc_dev (id bigint PRIMARY KEY, f real[]) WITH (autovacuum_enabled = off);
INSERT INTO tc_dev SELECT i, array(SELECT ((i * 7919 + j * 104729) % 97)::real FROM generate_series(1, 32) j)
	FROM generate_series(1, 250000) i;
VACUUM tc_dev;
SELECT 'first_' || ($ODP_TC_DEV_KNN);
$ODP_TC_DEV_COPY_WAIT;
SELECT 'copies=' || count(device) FILTER (WHERE relation = 'tc_dev'::regclass) FROM odp_gpu_table_cache;
SELECT 'again_' || ($ODP_TC_DEV_KNN);
SELECT 'oracle_' || ($ODP_TC_DEV_ORACLE);
SQL
)
	[ -n "$(sed -n 's/^oracle_r=//p' <<<"$out")" ] && grep -q '^copies=1$' <<<"$out" &&
		[ "$(sed -n 's/^first_r=//p' <<<"$out")" = "$(sed -n 's/^oracle_r=//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^again_r=//p' <<<"$out")" = "$(sed -n 's/^oracle_r=//p' <<<"$out")" ]
	odp_check "a table read through the service leaves a copy in the engine, and the call on the copy gives the SQL oracle's rows" $? \
		"$(tr '\n' ' ' <<<"$out" | head -c 400)"

	eng=$(psql -X -At -c "SELECT engine_pid FROM odp_gpu_info() WHERE engine_pid IS NOT NULL LIMIT 1")
	[ -n "$eng" ] && kill -KILL "$eng"
	for _ in $(seq 500); do
		new=$(psql -X -At -c "SELECT engine_pid FROM odp_gpu_info() WHERE engine_pid IS NOT NULL LIMIT 1")
		[ -n "$new" ] && [ "$new" != "$eng" ] && break
		sleep 0.02
	done
	out=$(psql -X -q -At 2>&1 <<SQL
SET odp_gpu.device = gpu;
SELECT 'gone=' || count(*) FILTER (WHERE device IS NULL) || '/' || count(*) FROM odp_gpu_table_cache WHERE relation = 'tc_dev'::regclass;
SELECT 'after_' || ($ODP_TC_DEV_KNN);
$ODP_TC_DEV_COPY_WAIT;
SELECT 'copies=' || count(device) FROM odp_gpu_table_cache WHERE relation = 'tc_dev'::regclass;
SELECT 'oracle_' || ($ODP_TC_DEV_ORACLE);
SQL
)
	[ -n "$eng" ] && [ "$new" != "$eng" ] && grep -q '^gone=1/1$' <<<"$out" && grep -q '^copies=1$' <<<"$out" &&
		[ "$(sed -n 's/^after_r=//p' <<<"$out")" = "$(sed -n 's/^oracle_r=//p' <<<"$out")" ]
	odp_check "a new engine process holds no copy (the entry stays, with no device) and makes it again, with the oracle's rows" $? \
		"engine $eng -> $new; $(tr '\n' ' ' <<<"$out" | head -c 400)"

	psql -X -q -c "ALTER SYSTEM SET odp_gpu.gpu_memory_limit = '358MB'" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	out=$(psql -X -q -At 2>&1 <<SQL
SET statement_timeout = '60s';
SET odp_gpu.device = gpu;
SELECT 'first_' || ($ODP_TC_DEV_KNN);
SELECT 'before=' || count(device) FROM odp_gpu_table_cache WHERE relation = 'tc_dev'::regclass;
SELECT 'big=' || string_agg(id::text, ',' ORDER BY rank) FROM odp_knn(
	'(SELECT id, f FROM tc_dev UNION ALL SELECT id + 1000000, f FROM tc_dev WHERE id <= 125000)',
	array_fill(50::real, '{32}'), k => 3, metric => 'sqeuclidean');
SELECT 'after=' || count(device) FROM odp_gpu_table_cache WHERE relation = 'tc_dev'::regclass;
SELECT 'again_' || ($ODP_TC_DEV_KNN);
SELECT 'oracle_' || ($ODP_TC_DEV_ORACLE);
SQL
)
	psql -X -q -c "ALTER SYSTEM RESET odp_gpu.gpu_memory_limit" -c "SELECT pg_reload_conf()" >/dev/null
	grep -q '^before=1$' <<<"$out" && grep -q '^after=0$' <<<"$out" && grep -q '^big=[0-9]' <<<"$out" &&
		[ "$(sed -n 's/^first_r=//p' <<<"$out")" = "$(sed -n 's/^oracle_r=//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^again_r=//p' <<<"$out")" = "$(sed -n 's/^oracle_r=//p' <<<"$out")" ]
	odp_check "under a device budget of 358 MB, a call that needs the memory a copy holds gets it at once, the copy giving way" $? \
		"$(tr '\n' ' ' <<<"$out" | head -c 400)"
	psql -X -q -c "DROP TABLE tc_dev" >/dev/null
}

# Concurrent single k-NN queries on a cached table of 50,000 x 32 share
# passes in the service (kernels/knn/knn_batch.c): 64 sessions, each a
# REPEATABLE READ transaction of 2 calls, then their SQL oracles in the
# same snapshot, while a writer changes and vacuums the table from 0.4 s
# after the calls start (each change drops the entry; the next read keeps
# a new one); one session asks for a
# bad k between good queries, one has a statement timeout of 2 ms, one
# making 4,000 calls in one statement (seconds of them) is cancelled by
# pg_cancel_backend 0.2 s into them.  Every answer
# right, the bad k, the timeout and the cancel fail alone, and some
# passes served several sessions (the timing report's batch=, with the
# call's wait for the passes before its own, batch_wait=).
odp_tc_batch_checks() {
	local s t q sql at got want names=() bad=0 right=0 shared=0 badk wrote dist cancelled
	dist=$(for d in $(seq 1 32); do printf '(b.f[%d] - a.f[%d])::float8 ^ 2 + ' "$d" "$d"; done)
	dist=${dist% + }
	psql -X -q -c "DROP TABLE IF EXISTS tc_bq" \
		-c "CREATE TABLE tc_bq (id bigint PRIMARY KEY, f real[]) WITH (autovacuum_enabled = off)" \
		-c "INSERT INTO tc_bq SELECT i, array(SELECT ((i * 7919 + j * 104729) % 23)::real FROM generate_series(1, 32) j) FROM generate_series(1, 50000) i" \
		-c "VACUUM tc_bq" -c "SET odp_gpu.device = gpu" \
		-c "SELECT count(*) FROM odp_knn('tc_bq', array_fill(1::real, '{32}'), k => 1)" >/dev/null
	# every session starts its calls at the same moment, then runs their
	# oracles: the calls of the sessions meet
	at=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 5 }')
	for s in $(seq 1 64); do
		sql=$({
			echo "SELECT pg_sleep(greatest(0, $at - extract(epoch FROM clock_timestamp())));"
			[ "$s" = 1 ] && echo "SET statement_timeout = '2ms';"
			if [ "$s" = 3 ]; then
				echo "SET application_name = 'tc_bq_cancelled';"
				echo "SELECT 'many=' || count(*) FROM generate_series(1, 4000) g,
	LATERAL odp_knn('tc_bq', (SELECT f FROM tc_bq WHERE id = g * 113 % 50000 + 1), k => 10, metric => 'sqeuclidean');"
				exit 0
			fi
			echo "BEGIN ISOLATION LEVEL REPEATABLE READ;"
			for t in 1 2; do
				q=$(( (s * 37 + t * 101) % 50000 + 1 ))
				echo "SELECT 'got_$t=' || string_agg(id || ':' || distance, ',' ORDER BY rank)
	FROM odp_knn('tc_bq', (SELECT f FROM tc_bq WHERE id = $q), k => 10, metric => 'sqeuclidean');"
				[ "$s" = 2 ] && [ "$t" = 2 ] && echo "SAVEPOINT a; SELECT 'badk=' || count(*) FROM odp_knn('tc_bq', array_fill(1::real, '{32}'), k => 0); ROLLBACK TO a;"
			done
			for t in 1 2; do
				q=$(( (s * 37 + t * 101) % 50000 + 1 ))
				echo "SELECT 'want_$t=' || string_agg(id || ':' || d, ',' ORDER BY d, id) FROM
	(SELECT b.id, $dist AS d FROM tc_bq b, tc_bq a WHERE a.id = $q ORDER BY d, b.id LIMIT 10) s;"
			done
			echo "COMMIT;"
		})
		odp_svc_bg "tc_bq$s" 300 <<<"$sql"
		names+=("tc_bq$s")
	done
	odp_svc_bg tc_bq_writer 300 <<SQL
SELECT pg_sleep(greatest(0, $at - extract(epoch FROM clock_timestamp())));
SELECT pg_sleep(0.4);
UPDATE tc_bq SET f = array_fill(0::real, '{32}') WHERE id = 25000;
VACUUM tc_bq;
SELECT pg_sleep(0.1);
UPDATE tc_bq SET f = array_fill(22::real, '{32}') WHERE id = 25001;
VACUUM tc_bq;
SELECT pg_sleep(0.1);
DELETE FROM tc_bq WHERE id = 77;
VACUUM tc_bq;
SELECT 'wrote=3';
SQL
	# session 3's 4,000 calls are cancelled by pg_cancel_backend 0.2 s into them
	odp_svc_bg tc_bq_canceller 300 <<SQL
SELECT pg_sleep(greatest(0, $at - extract(epoch FROM clock_timestamp())));
DO \$\$
DECLARE
	victim int;
BEGIN
	FOR i IN 1 .. 20000 LOOP
		-- a transaction sees one snapshot of the activity unless it clears it
		PERFORM pg_stat_clear_snapshot();
		SELECT pid INTO victim FROM pg_stat_activity WHERE application_name = 'tc_bq_cancelled'
			AND state = 'active' AND query LIKE '%many=%'
			AND query_start < clock_timestamp() - interval '0.2 s';
		IF victim IS NOT NULL AND pg_cancel_backend(victim) THEN
			RAISE NOTICE 'cancelled=1';
			RETURN;
		END IF;
		PERFORM pg_sleep(0.001);
	END LOOP;
END
\$\$;
SQL
	odp_svc_wait "${names[@]}" tc_bq_writer tc_bq_canceller
	for s in $(seq 1 64); do
		for t in 1 2; do
			got=$(odp_svc_field "tc_bq$s" "got_$t")
			want=$(odp_svc_field "tc_bq$s" "want_$t")
			# the sessions with a 2 ms timeout and a cancel: what they got, where both ran
			if { [ "$s" = 1 ] || [ "$s" = 3 ]; } && { [ -z "$got" ] || [ -z "$want" ]; }; then
				continue
			elif [ -n "$got" ] && [ "$got" = "$want" ]; then
				right=$((right + 1))
			else
				bad=$((bad + 1))
			fi
		done
	done
	shared=$(cat "$ODP_RUN_DIR"/svc_tc_bq*.out | grep -cE 'batch=([2-9]|[1-9][0-9]) .*batch_wait=[0-9.]+ ms')
	badk=$(grep -c 'k must be at least 1' "$ODP_RUN_DIR/svc_tc_bq2.out")
	wrote=$(odp_svc_field tc_bq_writer wrote)
	cancelled=$(grep -c 'canceling statement due to user request' "$ODP_RUN_DIR/svc_tc_bq3.out")
	[ "$bad" = 0 ] && [ "$right" -ge 124 ] && [ "$shared" -ge 1 ] && [ "$badk" = 1 ] && [ "$wrote" = 3 ] &&
		[ "$cancelled" = 1 ] && grep -q 'cancelled=1' "$ODP_RUN_DIR/svc_tc_bq_canceller.out" &&
		! grep -q '^many=' "$ODP_RUN_DIR/svc_tc_bq3.out"
	odp_check "64 sessions of single k-NN queries on a cached table, a writer changing it: every answer the oracle's in its snapshot, passes shared, a bad k, a timeout and a pg_cancel_backend failing alone" $? \
		"$right right, $bad wrong, $shared calls in shared passes, bad k reported $badk time(s), session 3 cancelled $cancelled time(s), writer $wrote; $(grep -h -m1 -E 'ERROR' "$ODP_RUN_DIR"/svc_tc_bq[4-9].out 2>/dev/null | head -2)"
	psql -X -q -c "DROP TABLE tc_bq" >/dev/null
}

odp_table_cache_checks() {
	local dir=$ODP_RUN_DIR out off on1 on2 n ok bad hits i pos misses size

	odp_svc_restart_checked table_cache "-c odp_gpu.staging_size=64MB" \
		"the server restarts with a staging area of 64 MB for the table cache checks" || return 0
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
ALTER EXTENSION odp_gpu UPDATE;
DROP TABLE IF EXISTS tc_pts, tc_x, tc_series, tc_regs, tc_m1, tc_m2, tc_m3, tc_big, tc_long, tc_unlogged;
DROP ROLE IF EXISTS tc_reader;
DROP ROLE IF EXISTS tc_reader2;
DROP ROLE IF EXISTS tc_none;
CREATE ROLE tc_reader;
CREATE ROLE tc_reader2;
CREATE ROLE tc_none;
CREATE TABLE tc_pts (id bigint PRIMARY KEY, f real[]) WITH (autovacuum_enabled = off);
INSERT INTO tc_pts SELECT i, array[(i * 7919) % 1009, (i * 104729) % 1013]::real[] FROM generate_series(1, 20000) i;
CREATE TABLE tc_x (id bigint PRIMARY KEY, v float8[]) WITH (autovacuum_enabled = off);
INSERT INTO tc_x SELECT i, array[1.7e9 + (i * 31) % 977, (i * 17) % 1001 / 3.0, (i * 13) % 89] FROM generate_series(1, 5000) i;
CREATE TABLE tc_series (id bigint PRIMARY KEY, v float8[]) WITH (autovacuum_enabled = off);
INSERT INTO tc_series SELECT s, array(SELECT sin(s * t / 7.0) + (s * t % 5) / 3.0 FROM generate_series(1, 64) t) FROM generate_series(1, 40) s;
CREATE TABLE tc_regs (id bigint PRIMARY KEY, r tstzrange) WITH (autovacuum_enabled = off);
INSERT INTO tc_regs SELECT i, tstzrange('2026-01-01'::timestamptz + (i * 37 % 5000) * interval '1 minute',
	'2026-01-01'::timestamptz + (i * 37 % 5000 + i % 30) * interval '1 minute') FROM generate_series(1, 5000) i;
GRANT SELECT ON tc_pts TO tc_reader, tc_reader2;
VACUUM tc_pts, tc_x, tc_series, tc_regs;
SELECT 'ok';
SQL
)
	[ "$(tail -1 <<<"$out")" = ok ]
	odp_check "table cache checks: tables made and vacuumed" $? "$(tr '\n' ' ' <<<"$out" | head -c 300)"

	# 1. every analytic: cache off, then a miss that keeps, then hits
	off=$(odp_tc_results "$(odp_svc_psql tc_off <<<"SET odp_gpu.table_cache = off; $ODP_TC_BATTERY")")
	on1=$(odp_tc_results "$(odp_svc_psql tc_on1 <<<"$ODP_TC_BATTERY")")
	out=$(odp_svc_psql tc_on2 <<SQL
$ODP_TC_BATTERY
SELECT 'entries=' || count(*) || ' hits=' || sum(hits) FROM odp_gpu_table_cache;
SQL
)
	on2=$(odp_tc_results "$out")
	n=$(grep -c 'read=[0-9.]* ms (cache)' <<<"$out")
	[ -n "$off" ] && [ "$off" = "$on1" ] && [ "$off" = "$on2" ] && [ "$(wc -w <<<"$off")" = 6 ]
	odp_check "every analytic gives the same rows with the table cache off, on a first call and on a repeated one" $? \
		"off: $off; first: $on1; again: $on2"
	# the second battery: k-NN, top outliers, the join's table (its queries
	# are a query), skyline, correlations and regions from the cache
	[ "$n" -ge 6 ] && grep -q '^entries=4 hits=[1-9][0-9]*$' <<<"$out"
	odp_check "a repeated call on an unchanged vacuumed table reads it from the cache, and the view lists the entries with their hits" $? \
		"$n calls read from the cache; $(grep '^entries=' <<<"$out")"

	# 2. changes of every kind, each checked against the SQL oracle
	ok=0 bad=""
	for step in \
		"UPDATE tc_pts SET f = '{500,501}' WHERE id = 17" "VACUUM tc_pts" \
		"INSERT INTO tc_pts VALUES (20001, '{499,500}')" "VACUUM tc_pts" \
		"DELETE FROM tc_pts WHERE id = 17" "VACUUM tc_pts" \
		"VACUUM FULL tc_pts" \
		"TRUNCATE tc_pts; INSERT INTO tc_pts SELECT i, array[(i * 13) % 1009, (i * 29) % 1013]::real[] FROM generate_series(1, 20000) i; VACUUM tc_pts" \
		"ALTER TABLE tc_pts ADD COLUMN note text DEFAULT 'x'; VACUUM tc_pts" \
		"ALTER TABLE tc_pts ADD COLUMN g real[] DEFAULT '{1,2}'; ALTER TABLE tc_pts DROP COLUMN f; ALTER TABLE tc_pts RENAME COLUMN g TO f; VACUUM tc_pts" \
		"UPDATE tc_pts SET f = array[(id * 7) % 1009, (id * 11) % 1013]::real[]; VACUUM tc_pts" \
		"ALTER TABLE tc_pts ALTER COLUMN f TYPE float8[]; VACUUM tc_pts" \
		"UPDATE tc_pts SET f = '{501,500}' WHERE id = 3; CLUSTER tc_pts USING tc_pts_pkey; VACUUM tc_pts" \
		"BEGIN; SAVEPOINT s; UPDATE tc_pts SET f = '{500,500}' WHERE id = 4; ROLLBACK TO s; COMMIT; VACUUM tc_pts" \
		"CREATE TEMP TABLE tc_keep AS SELECT * FROM tc_pts; BEGIN; TRUNCATE tc_pts; INSERT INTO tc_pts SELECT id, array[f[2], f[1]] FROM tc_keep; COMMIT; VACUUM FREEZE tc_pts" \
		"BEGIN; CREATE TABLE tc_swap (id bigint PRIMARY KEY, f float8[]) WITH (autovacuum_enabled = off); INSERT INTO tc_swap SELECT id, array[f[1] + 1, f[2]] FROM tc_pts; DROP TABLE tc_pts; ALTER TABLE tc_swap RENAME TO tc_pts; ALTER INDEX tc_swap_pkey RENAME TO tc_pts_pkey; COMMIT; VACUUM tc_pts; GRANT SELECT ON tc_pts TO tc_reader, tc_reader2" \
		"CREATE TEMP TABLE tc_copy AS SELECT id, array[f[1], f[2] + 2] AS f FROM tc_pts; BEGIN; TRUNCATE tc_pts; INSERT INTO tc_pts SELECT * FROM tc_copy; COMMIT; COPY tc_pts TO '/tmp/odp_tc_copy.txt'; BEGIN; TRUNCATE tc_pts; COPY tc_pts FROM '/tmp/odp_tc_copy.txt' WITH (FREEZE); COMMIT"; do
		out=$(odp_svc_psql tc_step <<SQL
$step;
SELECT 'oracle_' || ($ODP_TC_ORACLE);
SELECT 'on1_' || ($ODP_TC_KNN);
SELECT 'on2_' || ($ODP_TC_KNN);
SET odp_gpu.table_cache = off;
SELECT 'off_' || ($ODP_TC_KNN);
SQL
)
		n=$(sed -n 's/^oracle_r=//p' <<<"$out")
		if [ -n "$n" ] && [ "$(sed -n 's/^on1_r=//p' <<<"$out")" = "$n" ] &&
			[ "$(sed -n 's/^on2_r=//p' <<<"$out")" = "$n" ] && [ "$(sed -n 's/^off_r=//p' <<<"$out")" = "$n" ]; then
			ok=$((ok + 1))
		else
			bad="$bad [$step: $(grep -e '_r=' -e ERROR <<<"$out" | tr '\n' ' ' | head -c 300)]"
		fi
	done
	[ "$ok" = 17 ]
	odp_check "after updates, inserts, deletes (each before and after VACUUM), VACUUM FULL, TRUNCATE, ALTER TABLE, CLUSTER, a rolled-back savepoint, DROP and CREATE under the same name and COPY FREEZE, k-NN from the cache is the SQL oracle's" $? \
		"$ok of 17 steps right;$bad"

	# 3. snapshots: a REPEATABLE READ transaction while another session
	# changes the table; a transaction's own change
	psql -X -q -c "VACUUM tc_pts" >/dev/null
	odp_svc_bg tc_rr <<SQL
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT 'before_' || ($ODP_TC_KNN);
SELECT pg_sleep(3);
SELECT 'after_' || ($ODP_TC_KNN);
SELECT 'oracle_' || ($ODP_TC_ORACLE);
COMMIT;
SELECT 'later_' || ($ODP_TC_KNN);
SELECT 'later_oracle_' || ($ODP_TC_ORACLE);
SQL
	sleep 1.5
	psql -X -q -c "UPDATE tc_pts SET f = '{500,500}' WHERE id = 5" -c "VACUUM tc_pts" >/dev/null
	odp_svc_wait tc_rr
	n=$(odp_svc_field tc_rr before_r)
	[ -n "$n" ] && [ "$(odp_svc_field tc_rr after_r)" = "$n" ] && [ "$(odp_svc_field tc_rr oracle_r)" = "$n" ] &&
		[ "$(odp_svc_field tc_rr later_r)" = "$(odp_svc_field tc_rr later_oracle_r)" ] &&
		[ "$(odp_svc_field tc_rr later_r)" != "$n" ]
	odp_check "a REPEATABLE READ transaction keeps its snapshot's rows while another session changes the table; the next transaction sees the change" $? \
		"$(grep -e '_r=' -e ERROR "$dir/svc_tc_rr.out" | tr '\n' ' ' | head -c 400)"
	out=$(odp_svc_psql tc_own <<SQL
VACUUM tc_pts;
SELECT 'warm_' || ($ODP_TC_KNN);
BEGIN;
UPDATE tc_pts SET f = '{500,500}' WHERE id = 6;
SELECT 'own_' || ($ODP_TC_KNN);
SELECT 'own_oracle_' || ($ODP_TC_ORACLE);
ROLLBACK;
SELECT 'back_' || ($ODP_TC_KNN);
SQL
)
	n=$(sed -n 's/^own_oracle_r=//p' <<<"$out")
	[ -n "$n" ] && [ "$(sed -n 's/^own_r=//p' <<<"$out")" = "$n" ] &&
		[ "$(sed -n 's/^back_r=//p' <<<"$out")" = "$(sed -n 's/^warm_r=//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^warm_r=//p' <<<"$out")" != "$n" ]
	odp_check "a transaction's own uncommitted change is seen, and gone after its rollback" $? \
		"$(grep -e '_r=' -e ERROR <<<"$out" | tr '\n' ' ' | head -c 400)"

	# another session's uncommitted change
	psql -X -q -c "VACUUM tc_pts" >/dev/null
	odp_svc_bg tc_other <<<"BEGIN; UPDATE tc_pts SET f = '{500,500}' WHERE id = 9; SELECT pg_sleep(4); ROLLBACK;"
	sleep 1.5
	out=$(odp_svc_psql tc_beside <<SQL
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT 'beside_' || ($ODP_TC_KNN);
SELECT 'beside_oracle_' || ($ODP_TC_ORACLE);
COMMIT;
SQL
)
	odp_svc_wait tc_other
	n=$(sed -n 's/^beside_oracle_r=//p' <<<"$out")
	[ -n "$n" ] && [ "$(sed -n 's/^beside_r=//p' <<<"$out")" = "$n" ] && ! grep -q '^beside_r=9:0,' <<<"$out"
	odp_check "beside another session's uncommitted change, k-NN is the SQL oracle's (the change unseen)" $? \
		"$(grep -e '_r=' -e ERROR <<<"$out" | tr '\n' ' ' | head -c 300)"

	# an UPDATE of an array stored out of line (TOAST); integer values, so
	# the oracle's float64 sums are exact
	out=$(odp_svc_psql tc_toast <<'SQL'
CREATE TABLE tc_toast (id bigint PRIMARY KEY, f float8[]) WITH (autovacuum_enabled = off);
ALTER TABLE tc_toast ALTER COLUMN f SET STORAGE EXTERNAL;
INSERT INTO tc_toast SELECT i, array(SELECT ((i * 31 + j * 17) % 10)::float8 FROM generate_series(1, 600) j) FROM generate_series(1, 300) i;
VACUUM tc_toast;
CREATE TEMP VIEW tc_toast_oracle AS SELECT 'r=' || string_agg(id || ':' || d, ',' ORDER BY d, id) AS r FROM
	(SELECT id, (SELECT sum((v - 5) ^ 2) FROM unnest(f) v) AS d FROM tc_toast ORDER BY d, id LIMIT 5) s;
SELECT 'a_' || string_agg(id || ':' || distance, ',' ORDER BY rank) FROM odp_knn('tc_toast', array_fill(5::float8, ARRAY[600]), k => 5, metric => 'sqeuclidean');
SELECT 'a2_' || string_agg(id || ':' || distance, ',' ORDER BY rank) FROM odp_knn('tc_toast', array_fill(5::float8, ARRAY[600]), k => 5, metric => 'sqeuclidean');
SELECT 'oracle1_' || r FROM tc_toast_oracle;
UPDATE tc_toast SET f = array_fill(5::float8, ARRAY[600]) WHERE id = 77;
VACUUM tc_toast;
SELECT 'c_' || string_agg(id || ':' || distance, ',' ORDER BY rank) FROM odp_knn('tc_toast', array_fill(5::float8, ARRAY[600]), k => 5, metric => 'sqeuclidean');
SELECT 'oracle2_' || r FROM tc_toast_oracle;
SQL
)
	n=$(sed -n 's/^oracle1_r=//p' <<<"$out")
	[ -n "$n" ] && [ "$(sed -n 's/^a_//p' <<<"$out")" = "$n" ] && [ "$(sed -n 's/^a2_//p' <<<"$out")" = "$n" ] &&
		[ "$(sed -n 's/^c_//p' <<<"$out")" = "$(sed -n 's/^oracle2_r=//p' <<<"$out")" ] &&
		grep -q '^c_77:0,' <<<"$out" && [ "$(grep -c 'read=[0-9.]* ms (cache)' <<<"$out")" -ge 1 ]
	odp_check "an UPDATE of a TOASTed float8[] row: the next call has it, as the SQL oracle does" $? \
		"$(grep -e '^[ac]_' -e 'oracle' -e ERROR <<<"$out" | tr '\n' ' ' | head -c 400)"

	# a partition, read directly and through its parent
	out=$(odp_svc_psql tc_partition <<'SQL'
CREATE TABLE tc_parted (id bigint, f real[]) PARTITION BY RANGE (id);
CREATE TABLE tc_parted_1 PARTITION OF tc_parted FOR VALUES FROM (1) TO (10001) WITH (autovacuum_enabled = off);
CREATE TABLE tc_parted_2 PARTITION OF tc_parted FOR VALUES FROM (10001) TO (20001) WITH (autovacuum_enabled = off);
INSERT INTO tc_parted SELECT id, f::real[] FROM tc_pts;
VACUUM tc_parted;
SELECT 'p1_' || string_agg(id || ':' || distance, ',' ORDER BY rank) FROM odp_knn('tc_parted_1', '{500,500}'::real[], k => 5, metric => 'sqeuclidean');
SELECT 'p2_' || string_agg(id || ':' || distance, ',' ORDER BY rank) FROM odp_knn('tc_parted_1', '{500,500}'::real[], k => 5, metric => 'sqeuclidean');
SELECT 'po_' || string_agg(id || ':' || d, ',' ORDER BY d, id) FROM (SELECT id, (f[1] - 500)::float8 ^ 2 + (f[2] - 500)::float8 ^ 2 AS d
	FROM tc_parted_1 ORDER BY d, id LIMIT 5) s;
SELECT 'all_' || string_agg(id || ':' || distance, ',' ORDER BY rank) FROM odp_knn('tc_parted', '{500,500}'::real[], k => 5, metric => 'sqeuclidean');
SELECT 'allo_' || string_agg(id || ':' || d, ',' ORDER BY d, id) FROM (SELECT id, (f[1] - 500)::float8 ^ 2 + (f[2] - 500)::float8 ^ 2 AS d
	FROM tc_parted ORDER BY d, id LIMIT 5) s;
SQL
)
	n=$(sed -n 's/^po_//p' <<<"$out")
	[ -n "$n" ] && [ "$(sed -n 's/^p1_//p' <<<"$out")" = "$n" ] && [ "$(sed -n 's/^p2_//p' <<<"$out")" = "$n" ] &&
		[ "$(sed -n 's/^all_//p' <<<"$out")" = "$(sed -n 's/^allo_//p' <<<"$out")" ] &&
		[ "$(grep -c 'odp_knn path=.* read=[0-9.]* ms (cache)' <<<"$out")" = 1 ]
	odp_check "a partition is kept and read from the cache, its parent read as a query, both the SQL oracle's" $? \
		"$(grep -e '^p[12o]_' -e '^allo*_' -e ERROR <<<"$out" | tr '\n' ' ' | head -c 400)"

	# 4. 12 sessions checking every answer while a writer changes the table
	psql -X -q -c "VACUUM tc_pts" >/dev/null
	for _ in $(seq 12); do
		cat <<SQL
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT 'oracle_' || ($ODP_TC_ORACLE);
SELECT 'on_' || ($ODP_TC_KNN);
SET LOCAL odp_gpu.table_cache = off;
SELECT 'off_' || ($ODP_TC_KNN);
COMMIT;
SELECT pg_sleep(0.25);
SQL
	done >"$dir/tc_concurrent.sql"
	for i in $(seq 12); do odp_svc_bg "tc_c$i" 180 <"$dir/tc_concurrent.sql"; done
	for i in $(seq 20); do
		psql -X -q -c "UPDATE tc_pts SET f = array[$((400 + i * 3)), $((600 - i * 2))]::real[] WHERE id = $((i * 101))" -c "VACUUM tc_pts" >/dev/null
		sleep 0.1
	done
	# then VACUUM alone, which marks the pages all-visible again once the
	# transactions older than the last update have ended
	while pgrep -f "svc_tc_c[0-9]*.sql" >/dev/null; do
		psql -X -q -c "VACUUM tc_pts" >/dev/null
		sleep 0.2
	done
	odp_svc_wait $(seq -f 'tc_c%g' 12)
	ok=0 bad=0 hits=0
	for i in $(seq 12); do
		n=$(awk -F'_r=' '/^oracle_r=/ { o = $2 } /^on_r=/ { on = $2 } /^off_r=/ { if (on == o && $2 == o) ok++; else bad++ }
			END { print ok + 0, bad + 0 }' "$dir/svc_tc_c$i.out")
		ok=$((ok + ${n% *})) bad=$((bad + ${n#* }))
		hits=$((hits + $(grep -c 'read=[0-9.]* ms (cache)' "$dir/svc_tc_c$i.out")))
	done
	[ "$ok" = 144 ] && [ "$bad" = 0 ] && [ "$hits" -gt 0 ]
	odp_check "12 sessions, 144 transactions, a writer updating and vacuuming for part of the time: every k-NN answer is the oracle's in its snapshot, some from the cache" $? \
		"$ok right, $bad wrong, $hits from the cache; $(odp_svc_error tc_c1)"

	# 5. what is never kept or never shown
	out=$(odp_svc_psql tc_excluded <<'SQL'
SET client_min_messages = debug1;
CREATE UNLOGGED TABLE tc_unlogged AS SELECT * FROM tc_pts;
VACUUM tc_unlogged;
SELECT count(*) FROM odp_knn('tc_unlogged', '{1,1}'::real[], k => 2);
CREATE TEMP TABLE tc_temp AS SELECT * FROM tc_pts;
VACUUM tc_temp;
SELECT count(*) FROM odp_knn('tc_temp', '{1,1}'::real[], k => 2);
SELECT 'kept=' || count(*) FROM odp_gpu_table_cache WHERE relation IN ('tc_unlogged'::regclass, 'tc_temp'::regclass);
SQL
)
	[ "$(grep -c 'is not read from the table cache: the table is unlogged or temporary' <<<"$out")" = 2 ] &&
		grep -q '^kept=0$' <<<"$out"
	odp_check "unlogged and temporary tables are not kept, and DEBUG1 says why" $? \
		"$(grep -e 'table cache' -e '^kept' -e ERROR <<<"$out" | tr '\n' ' ' | head -c 400)"
	out=$(psql -X -q -At 2>&1 <<SQL
VACUUM tc_pts;
SET odp_gpu.report_timing = on;
SET client_min_messages = debug1;
$ODP_TC_KNN;
RESET client_min_messages;
ALTER TABLE tc_pts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tc_even ON tc_pts TO tc_reader USING (id % 2 = 0);
CREATE POLICY tc_odd ON tc_pts TO tc_reader2 USING (id % 2 = 1);
SET ROLE tc_reader;
SELECT 'rls_' || ($ODP_TC_KNN);
SELECT 'rls_oracle_' || ($ODP_TC_ORACLE);
SELECT 'seen=' || count(*) FROM odp_gpu_table_cache WHERE relation = 'tc_pts'::regclass;
RESET ROLE;
SET ROLE tc_reader2;
SELECT 'rls2_' || ($ODP_TC_KNN);
SELECT 'rls2_oracle_' || ($ODP_TC_ORACLE);
RESET ROLE;
SET ROLE tc_none;
SELECT 'hidden=' || count(*) FROM odp_gpu_table_cache;
SELECT odp_gpu_table_cache_drop('tc_pts');
SELECT count(*) FROM odp_knn('tc_pts', '{500,500}'::real[], k => 3);
RESET ROLE;
DROP POLICY tc_even ON tc_pts;
DROP POLICY tc_odd ON tc_pts;
ALTER TABLE tc_pts DISABLE ROW LEVEL SECURITY;
SQL
)
	n=$(sed -n 's/^rls_oracle_r=//p' <<<"$out")
	[ -n "$n" ] && [ "$(sed -n 's/^rls_r=//p' <<<"$out")" = "$n" ] &&
		[ -n "$(sed -n 's/^rls2_oracle_r=//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^rls2_r=//p' <<<"$out")" = "$(sed -n 's/^rls2_oracle_r=//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^rls2_r=//p' <<<"$out")" != "$n" ] &&
		[ "$(grep -c 'odp_knn path=.* read=[0-9.]* ms (spi)' <<<"$out")" = 2 ] &&
		grep -q '^seen=1$' <<<"$out" && grep -q '^hidden=0$' <<<"$out" &&
		grep -q 'ERROR:  must be owner of table tc_pts' <<<"$out" &&
		grep -q 'ERROR:  permission denied for table tc_pts' <<<"$out"
	odp_check "row-level security, two users in turn: each gets its policy's rows, never the owner's entry; the view hides entries from a role that may not read the table, which gets 42501 with an entry there, and only the owner drops them" $? \
		"$(grep -e '_r=' -e '^seen' -e '^hidden' -e ERROR -e 'read=' -e 'table cache' <<<"$out" | sed 's/transfer.*//' | tr '\n' ' ' | head -c 700)"

	# 6. the share, least recently used first, and inputs first
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<'SQL'
SELECT odp_gpu_table_cache_drop();
CREATE TABLE tc_m1 WITH (autovacuum_enabled = off) AS SELECT i::bigint AS id, array[i % 7, i % 11, i % 13, i % 17, i % 19, i % 23, i % 29, i % 31]::real[] AS f
	FROM generate_series(1, 150000) i;
CREATE TABLE tc_m2 WITH (autovacuum_enabled = off) AS SELECT * FROM tc_m1;
CREATE TABLE tc_m3 WITH (autovacuum_enabled = off) AS SELECT * FROM tc_m1;
CREATE TABLE tc_long WITH (autovacuum_enabled = off) AS SELECT * FROM tc_m1 WHERE id <= 40000;
CREATE TABLE tc_big WITH (autovacuum_enabled = off) AS SELECT i::bigint AS id, array[i % 7, i % 11, i % 13, i % 17, i % 19, i % 23, i % 29, i % 31]::real[] AS f
	FROM generate_series(1, 700000) i;
VACUUM tc_m1, tc_m2, tc_m3, tc_big, tc_long;
ALTER SYSTEM SET odp_gpu.table_cache_share = 0.3;
SELECT pg_reload_conf();
SQL
)
	sleep 0.5
	out=$(odp_svc_psql tc_share <<'SQL'
SET client_min_messages = debug1;
SELECT count(*) FROM odp_knn('tc_m1', '{1,1,1,1,1,1,1,1}'::real[], k => 2);
SELECT count(*) FROM odp_knn('tc_m2', '{1,1,1,1,1,1,1,1}'::real[], k => 2);
SELECT count(*) FROM odp_knn('tc_m1', '{1,1,1,1,1,1,1,1}'::real[], k => 2);
SELECT count(*) FROM odp_knn('tc_m3', '{1,1,1,1,1,1,1,1}'::real[], k => 2);
SELECT 'share=' || string_agg(relation::text, ',' ORDER BY relation::text) FROM odp_gpu_table_cache;
SELECT count(*) FROM odp_knn('tc_big', '{1,1,1,1,1,1,1,1}'::real[], k => 2);
SELECT 'big=' || count(*) FROM odp_gpu_table_cache WHERE relation = 'tc_big'::regclass;
SQL
)
	grep -q '^share=tc_m1,tc_m3$' <<<"$out" && grep -q '^big=0$' <<<"$out" &&
		grep -q 'tc_big.* is not kept in the table cache: larger than its share' <<<"$out"
	odp_check "entries keep to odp_gpu.table_cache_share (19 MB of 64): the least recently used gives way, a table larger than the share is not kept" $? \
		"$(grep -e '^share' -e '^big' -e 'not kept' -e ERROR <<<"$out" | tr '\n' ' ' | head -c 400)"
	psql -X -q -c "ALTER SYSTEM SET odp_gpu.table_cache_share = 1" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 0.5
	misses=$(psql -X -At -c "SELECT misses FROM odp_gpu_staging()")
	out=$(odp_svc_psql tc_room <<'SQL'
SELECT count(*) FROM odp_knn('tc_m2', '{1,1,1,1,1,1,1,1}'::real[], k => 2);
SELECT count(*) FROM odp_knn('tc_big', '{1,1,1,1,1,1,1,1}'::real[], k => 2);
SELECT 'entries=' || string_agg(relation::text, ',' ORDER BY relation::text) FROM odp_gpu_table_cache;
SELECT count(*) FROM odp_knn('(SELECT * FROM tc_big)', '{1,1,1,1,1,1,1,1}'::real[], k => 2);
SELECT 'after=' || string_agg(relation::text, ',' ORDER BY relation::text) FROM odp_gpu_table_cache;
SELECT 'misses=' || misses FROM odp_gpu_staging();
SQL
)
	grep -q '^entries=tc_big,tc_m1,tc_m2,tc_m3$' <<<"$out" && grep -q "^misses=$misses\$" <<<"$out" &&
		grep -q 'odp_knn path=gpu .* staged=2[0-9]\.[0-9] MB streamed=0\.0 MB' <<<"$out" &&
		! grep -q '^after=tc_big,tc_m1,tc_m2,tc_m3$' <<<"$out"
	odp_check "an input that finds no room in the area evicts entries rather than stream (no miss counted)" $? \
		"misses before $misses; $(grep -e '^entries' -e '^after' -e '^misses' -e ERROR -e 'staged=' <<<"$out" | sed 's/.*staged=/staged=/' | tr '\n' ' ' | head -c 400)"
	psql -X -q -c "ALTER SYSTEM RESET odp_gpu.table_cache_share" -c "SELECT pg_reload_conf()" >/dev/null

	# odp_gpu_table_cache_load: a table kept ahead of its first call
	out=$(odp_svc_psql tc_load <<'SQL'
SELECT odp_gpu_table_cache_drop();
SELECT 'loaded=' || odp_gpu_table_cache_load('tc_x', 'float64');
SELECT 'loaded_regions=' || odp_gpu_table_cache_load('tc_regs', 'regions', bounds => '[)');
SELECT 'regions=' || odp_interval_match_count('tc_regs', bounds => '[)');
SET odp_gpu.table_cache = off;
SELECT 'regions_off=' || odp_interval_match_count('tc_regs', bounds => '[)');
RESET odp_gpu.table_cache;
SELECT 'sky=' || md5(string_agg(id || ':' || dominated_by, ',' ORDER BY id)) FROM odp_skyline('tc_x', '{min,max,min}');
SET odp_gpu.table_cache = off;
SELECT 'sky_off=' || md5(string_agg(id || ':' || dominated_by, ',' ORDER BY id)) FROM odp_skyline('tc_x', '{min,max,min}');
RESET odp_gpu.table_cache;
UPDATE tc_x SET v[1] = v[1] + 1 WHERE id = 1;
\set VERBOSITY default
SELECT odp_gpu_table_cache_load('tc_x', 'float64');
SELECT odp_gpu_table_cache_load('tc_x', 'float32');
SELECT odp_gpu_table_cache_load(NULL);
SELECT odp_gpu_table_cache_load('tc_regs', 'regions', bounds => '[x');
SQL
)
	grep -q '^loaded=5000$' <<<"$out" && [ -n "$(sed -n 's/^sky=//p' <<<"$out")" ] &&
		grep -q '^loaded_regions=5000$' <<<"$out" && [ -n "$(sed -n 's/^regions=//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^regions=//p' <<<"$out")" = "$(sed -n 's/^regions_off=//p' <<<"$out")" ] &&
		[ "$(grep -c 'odp_interval_match_count path=.* read=[0-9.]* ms (cache)' <<<"$out")" = 1 ] &&
		[ "$(sed -n 's/^sky=//p' <<<"$out")" = "$(sed -n 's/^sky_off=//p' <<<"$out")" ] &&
		[ "$(grep -c 'odp_skyline path=.* read=[0-9.]* ms (cache)' <<<"$out")" = 1 ] &&
		grep -q 'ERROR:  table "public"."tc_x" was not kept in the table cache' <<<"$out" &&
		grep -q 'DETAIL:  some of the table.s pages are not all-visible' <<<"$out" &&
		grep -q 'ERROR:  unknown form "float32"' <<<"$out" &&
		grep -q 'ERROR:  relation must not be null' <<<"$out" &&
		grep -q 'ERROR:  unknown bounds "\[x"' <<<"$out"
	odp_check "odp_gpu_table_cache_load keeps a table ahead of its first call (a skyline's float64 rows, regions with bounds '[)'), which reads it from the cache; a table not vacuumed since a change is refused, saying why; a bad form, a NULL relation and bad bounds are errors" $? \
		"$(grep -e '^loaded' -e '^sky' -e '^regions' -e ERROR -e DETAIL -e 'odp_skyline path' -e 'odp_interval_match_count path' <<<"$out" | sed 's/transfer.*//' | tr '\n' ' ' | head -c 500)"

	# two databases holding the same relation OID and relfilenode
	out=$(psql -X -q -At 2>&1 <<'SQL'
DROP DATABASE IF EXISTS tc_db1;
DROP DATABASE IF EXISTS tc_db2;
CREATE DATABASE tc_db1;
\c tc_db1
SET client_min_messages = warning;
CREATE EXTENSION odp_gpu;
CREATE TABLE t (id bigint PRIMARY KEY, f real[]);
INSERT INTO t SELECT i, array[i % 101, i % 103]::real[] FROM generate_series(1, 5000) i;
VACUUM t;
\c postgres
CREATE DATABASE tc_db2 TEMPLATE tc_db1;
\c tc_db2
UPDATE t SET f = '{50,50}' WHERE id = 4999;
VACUUM t;
SELECT 'oid2=' || 't'::regclass::oid || '/' || pg_relation_filenode('t');
SELECT 'ka2_' || string_agg(id::text, ',' ORDER BY rank) FROM odp_knn('t', '{50,50}'::real[], k => 3, metric => 'sqeuclidean');
\c tc_db1
SELECT 'oid1=' || 't'::regclass::oid || '/' || pg_relation_filenode('t');
SELECT 'ka1_' || string_agg(id::text, ',' ORDER BY rank) FROM odp_knn('t', '{50,50}'::real[], k => 3, metric => 'sqeuclidean');
SELECT 'kb1_' || string_agg(id::text, ',' ORDER BY rank) FROM odp_knn('t', '{50,50}'::real[], k => 3, metric => 'sqeuclidean');
SELECT 'o1_' || string_agg(id::text, ',' ORDER BY d, id) FROM (SELECT id, (f[1] - 50)::float8 ^ 2 + (f[2] - 50)::float8 ^ 2 AS d FROM t ORDER BY d, id LIMIT 3) s;
\c tc_db2
SELECT 'kb2_' || string_agg(id::text, ',' ORDER BY rank) FROM odp_knn('t', '{50,50}'::real[], k => 3, metric => 'sqeuclidean');
SELECT 'o2_' || string_agg(id::text, ',' ORDER BY d, id) FROM (SELECT id, (f[1] - 50)::float8 ^ 2 + (f[2] - 50)::float8 ^ 2 AS d FROM t ORDER BY d, id LIMIT 3) s;
SELECT 'view2=' || count(*) FROM odp_gpu_table_cache;
SQL
)
	[ "$(sed -n 's/^oid1=//p' <<<"$out")" = "$(sed -n 's/^oid2=//p' <<<"$out")" ] &&
		[ -n "$(sed -n 's/^o1_//p' <<<"$out")" ] && [ "$(sed -n 's/^o1_//p' <<<"$out")" != "$(sed -n 's/^o2_//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^ka1_//p' <<<"$out")" = "$(sed -n 's/^o1_//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^kb1_//p' <<<"$out")" = "$(sed -n 's/^o1_//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^ka2_//p' <<<"$out")" = "$(sed -n 's/^o2_//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^kb2_//p' <<<"$out")" = "$(sed -n 's/^o2_//p' <<<"$out")" ] &&
		grep -q '^view2=1$' <<<"$out"
	odp_check "two databases holding a table of the same OID and relfilenode: each call gets its own database's rows, from its own entry" $? \
		"$(grep -e '^oid' -e '^k[ab][12]' -e '^o[12]' -e '^view' -e ERROR <<<"$out" | tr '\n' ' ' | head -c 400)"

	# entries stay valid across a restart of the service (they live in the
	# server's staging area, not in the service)
	pos=$(odp_svc_log_pos)
	n=$(odp_svc_pid)
	psql -X -q -c "VACUUM tc_pts" -c "SELECT count(*) FROM odp_knn('tc_pts', '{1,1}'::real[], k => 2)" >/dev/null
	[ -n "$n" ] && kill -TERM "$n"
	odp_svc_wait_restart "$pos" "$n"
	out=$(odp_svc_psql tc_restart <<SQL
SELECT 'after_' || ($ODP_TC_KNN);
SELECT 'oracle_' || ($ODP_TC_ORACLE);
SQL
)
	[ -n "$(sed -n 's/^oracle_r=//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^after_r=//p' <<<"$out")" = "$(sed -n 's/^oracle_r=//p' <<<"$out")" ] &&
		grep -q 'odp_knn path=gpu .* read=[0-9.]* ms (cache)' <<<"$out"
	odp_check "after the service restarts, an entry made before is still used, with the SQL oracle's rows" $? \
		"$(grep -e '_r=' -e ERROR -e 'read=' <<<"$out" | sed 's/transfer.*//' | tr '\n' ' ' | head -c 300)"

	# 7. an entry dropped while a call uses it, and a terminated user's pins
	psql -X -q -c "SELECT odp_gpu_table_cache_drop()" -c "SELECT count(*) FROM odp_knn('tc_long', '{1,1,1,1,1,1,1,1}'::real[], k => 2)" >/dev/null
	size=$(psql -X -At -c "SELECT size FROM odp_gpu_staging()")
	odp_svc_bg tc_long <<<"SET odp_gpu.device = $ODP_TC_LONG_DEVICE; SELECT 'long=' || count(*) FROM odp_outlier_scores('tc_long', k => 3);"
	odp_tc_wait_computing tc_long
	out=$(psql -X -At -c "SELECT 'dropped=' || odp_gpu_table_cache_drop('tc_long')" \
		-c "SELECT 'listed=' || count(*) FROM odp_gpu_table_cache" -c "SELECT 'free=' || largest_free FROM odp_gpu_staging()")
	odp_svc_wait tc_long
	odp_tc_wait_free "$size"
	grep -q '^dropped=1$' <<<"$out" && grep -q '^listed=0$' <<<"$out" && ! grep -q "^free=$size\$" <<<"$out" &&
		[ "$(odp_svc_field tc_long long)" = 40000 ] && grep -q 'read=[0-9.]* ms (cache)' "$dir/svc_tc_long.out" &&
		[ "$(psql -X -At -c "SELECT largest_free FROM odp_gpu_staging()")" = "$size" ]
	odp_check "an entry dropped while a call computes on it: no longer listed, the call ends with its rows, then its memory comes back" $? \
		"$(tr '\n' ' ' <<<"$out") long=$(odp_svc_field tc_long long) $(odp_svc_error tc_long); free now $(psql -X -At -c "SELECT largest_free FROM odp_gpu_staging()") of $size"
	psql -X -q -c "SELECT count(*) FROM odp_knn('tc_long', '{1,1,1,1,1,1,1,1}'::real[], k => 2)" >/dev/null
	odp_svc_bg tc_term <<<"SET odp_gpu.device = $ODP_TC_LONG_DEVICE; SELECT count(*) FROM odp_outlier_scores('tc_long', k => 3);"
	odp_tc_wait_computing tc_term
	odp_svc_stop_session tc_term terminate
	odp_svc_wait tc_term
	out=$(psql -X -At -c "SELECT 'dropped=' || odp_gpu_table_cache_drop()")
	odp_tc_wait_free "$size"
	grep -q '^dropped=1$' <<<"$out" && [ "$(psql -X -At -c "SELECT largest_free FROM odp_gpu_staging()")" = "$size" ] &&
		[ "$(odp_tc_bytes)" = 0 ]
	odp_check "a backend terminated while it computes on an entry: its pins go, the entry is dropped, and the whole area is free" $? \
		"$out; free $(psql -X -At -c "SELECT largest_free FROM odp_gpu_staging()") of $size"

	odp_tc_copy_checks
	odp_tc_batch_checks

	psql -X -q -c "DROP TABLE IF EXISTS tc_pts, tc_x, tc_series, tc_regs, tc_m1, tc_m2, tc_m3, tc_big, tc_long, tc_unlogged" \
		-c "DROP TABLE IF EXISTS tc_toast, tc_parted" -c "DROP DATABASE IF EXISTS tc_db1" -c "DROP DATABASE IF EXISTS tc_db2" \
		-c "DROP ROLE tc_reader" -c "DROP ROLE tc_reader2" -c "DROP ROLE tc_none" >/dev/null 2>&1
	odp_restart_server "" >/dev/null 2>&1
	odp_check "the server restarts without preloading" $? ""
}
