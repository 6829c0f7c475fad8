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
#     retyping columns) a k-NN call gives the SQL oracle's rows
#     (ORDER BY .. LIMIT), as it does with the cache off;
#   - a REPEATABLE READ transaction keeps its snapshot's rows while another
#     session changes the table, and a transaction sees its own changes;
#   - 12 sessions in REPEATABLE READ transactions, each call checked
#     against the oracle and the cache-off read in the same snapshot,
#     while a writer updates and vacuums the table: every answer right,
#     and some of them from the cache;
#   - unlogged and temporary tables are not kept (DEBUG1 says why); a
#     table under row-level security is read for a user the policy
#     applies to, never from the owner's entry; the view hides entries
#     from roles that may not read the table; only the owner drops them;
#   - the entries keep to odp_gpu.table_cache_share, give way least
#     recently used first, and give way to an input that finds no room
#     (no miss counted); an entry dropped while a call uses it goes once
#     the call ends, as do the pins of a terminated backend;
#   - in the end no byte of the area is held.
# Ends with the server restarted without preloading.  About 30 s on two
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

# Waits (at most 10 s) until the area's longest free run is $1 bytes.
odp_tc_wait_free() {
	for _ in $(seq 100); do
		[ "$(psql -X -At -c "SELECT largest_free FROM odp_gpu_staging()")" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
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
DROP ROLE IF EXISTS tc_none;
CREATE ROLE tc_reader;
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
GRANT SELECT ON tc_pts TO tc_reader;
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
		"ALTER TABLE tc_pts ALTER COLUMN f TYPE float8[]; VACUUM tc_pts"; do
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
	[ "$ok" = 12 ]
	odp_check "after updates, inserts, deletes (each before and after VACUUM), VACUUM FULL, TRUNCATE and ALTER TABLE, k-NN from the cache is the SQL oracle's" $? \
		"$ok of 12 steps right;$bad"

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
$ODP_TC_KNN;
ALTER TABLE tc_pts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tc_even ON tc_pts TO tc_reader USING (id % 2 = 0);
SET ROLE tc_reader;
SELECT 'rls_' || ($ODP_TC_KNN);
SELECT 'rls_oracle_' || ($ODP_TC_ORACLE);
SELECT 'seen=' || count(*) FROM odp_gpu_table_cache WHERE relation = 'tc_pts'::regclass;
RESET ROLE;
SET ROLE tc_none;
SELECT 'hidden=' || count(*) FROM odp_gpu_table_cache;
SELECT odp_gpu_table_cache_drop('tc_pts');
RESET ROLE;
DROP POLICY tc_even ON tc_pts;
ALTER TABLE tc_pts DISABLE ROW LEVEL SECURITY;
SQL
)
	n=$(sed -n 's/^rls_oracle_r=//p' <<<"$out")
	[ -n "$n" ] && [ "$(sed -n 's/^rls_r=//p' <<<"$out")" = "$n" ] &&
		[ "$(grep -c 'odp_knn path=.* read=[0-9.]* ms (spi)' <<<"$out")" = 1 ] &&
		grep -q '^seen=1$' <<<"$out" && grep -q '^hidden=0$' <<<"$out" &&
		grep -q 'ERROR:  must be owner of table tc_pts' <<<"$out"
	odp_check "row-level security: a user the policy applies to gets the policy's rows, never the owner's entry; the view hides entries from a role that may not read the table, and only the owner drops them" $? \
		"$(grep -e '_r=' -e '^seen' -e '^hidden' -e ERROR -e 'read=' <<<"$out" | sed 's/transfer.*//' | tr '\n' ' ' | head -c 500)"

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

	# 7. an entry dropped while a call uses it, and a terminated user's pins
	psql -X -q -c "SELECT odp_gpu_table_cache_drop()" -c "SELECT count(*) FROM odp_knn('tc_long', '{1,1,1,1,1,1,1,1}'::real[], k => 2)" >/dev/null
	size=$(psql -X -At -c "SELECT size FROM odp_gpu_staging()")
	odp_svc_bg tc_long <<<"SELECT 'long=' || count(*) FROM odp_outlier_scores('tc_long', k => 3);"
	odp_svc_wait_in_service tc_long
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
	odp_svc_bg tc_term <<<"SELECT count(*) FROM odp_outlier_scores('tc_long', k => 3);"
	odp_svc_wait_in_service tc_term
	odp_svc_stop_session tc_term terminate
	odp_svc_wait tc_term
	out=$(psql -X -At -c "SELECT 'dropped=' || odp_gpu_table_cache_drop()")
	odp_tc_wait_free "$size"
	grep -q '^dropped=1$' <<<"$out" && [ "$(psql -X -At -c "SELECT largest_free FROM odp_gpu_staging()")" = "$size" ] &&
		[ "$(odp_tc_bytes)" = 0 ]
	odp_check "a backend terminated while it computes on an entry: its pins go, the entry is dropped, and the whole area is free" $? \
		"$out; free $(psql -X -At -c "SELECT largest_free FROM odp_gpu_staging()") of $size"

	psql -X -q -c "DROP TABLE IF EXISTS tc_pts, tc_x, tc_series, tc_regs, tc_m1, tc_m2, tc_m3, tc_big, tc_long, tc_unlogged" \
		-c "DROP ROLE tc_reader" -c "DROP ROLE tc_none" >/dev/null 2>&1
	odp_restart_server "" >/dev/null 2>&1
	odp_check "the server restarts without preloading" $? ""
}
