# test/checks/staging.sh: sourced by test/run_tests.sh after
# test/checks/service.sh, whose helpers (odp_svc_*) it uses.
# odp_staging_checks restarts the server with odp_gpu preloaded, the
# service on the CPU engine, rings of 64 kB and a staging area of 16 MB
# (eight blocks of 2 MB), and checks that
#   - an input of 2.4 MB is read into the area and used there in place
#     (staged= in the timing report), serially and by parallel workers,
#     with the CPU path's rows in the backend;
#   - 60 concurrent sessions whose inputs together (150 MB) exceed the
#     area each get the CPU path's rows, the area's bytes all come back;
#   - a read cancelled while it writes into the area (statement_timeout,
#     pg_cancel_backend at three moments), a call cancelled while the
#     service computes on its input there, and backends terminated in
#     either give every extent back (the service's, once its engine thread
#     stops), and the next call works;
#   - an area too small for any input (2 MB): every input streams to the
#     service through its 64 kB ring in pieces, with the same rows, and
#     the area counts the misses;
#   - a staging size out of range is refused at server start with a
#     message naming the setting.
# Ends with the server restarted without preloading.  About 40 s on two
# cores.

# A k-NN join of 64 queries against 40,000 x 16 real[] rows: its input
# is 2.4 MB of values (the ids, 0.3 MB, are too small for the area).
ODP_STG_KNN="SELECT 'r=' || md5(string_agg(query_id || ':' || rank || ':' || id || ':' || distance, ','
	ORDER BY query_id, rank)) FROM odp_knn_join('(SELECT * FROM stg_pts WHERE id % 625 = 0)', 'stg_pts', k => 3)"
# The same, its source read slowly: the first half at once (1.2 MB, in
# the area), then a pg_sleep per row (seconds), so that a cancel finds it
# writing into the area.
ODP_STG_SLOW="SELECT 'r=' || md5(string_agg(query_id || ':' || rank || ':' || id, ',' ORDER BY query_id, rank))
	FROM odp_knn_join('(SELECT * FROM stg_pts WHERE id % 625 = 0)',
		'(SELECT id, f FROM stg_pts WHERE id <= 20000 OR pg_sleep(0.0001) IS NOT NULL)', k => 3)"
# A long call on an input in the area (the CPU engine computes for
# seconds): a cancel finds the service reading the area.
ODP_STG_LONG="SELECT count(*) FROM odp_outlier_scores('stg_pts', k => 5)"

# The staging area's state as used/inputs (odp_gpu_staging()).
odp_stg_state() { psql -X -At -c "SELECT used || '/' || inputs FROM odp_gpu_staging()"; }

# Waits (at most 10 s) until the area holds nothing.
odp_stg_wait_empty() {
	for _ in $(seq 100); do
		[ "$(odp_stg_state)" = "0/0" ] && return 0
		sleep 0.1
	done
	return 1
}

# Waits (at most 10 s) until the area holds something.
odp_stg_wait_used() {
	for _ in $(seq 100); do
		[ "$(odp_stg_state)" != "0/0" ] && return 0
		sleep 0.1
	done
	return 1
}

odp_staging_checks() {
	local dir=$ODP_RUN_DIR out pos ref ok n staged streamed misses i

	odp_svc_restart_checked staging "-c odp_gpu.staging_size=16MB" \
		"the server restarts with a staging area of 16 MB" || return 0
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
ALTER EXTENSION odp_gpu UPDATE;
DROP TABLE IF EXISTS stg_pts;
SELECT setseed(0.25);
CREATE TABLE stg_pts AS SELECT i::bigint AS id,
	array(SELECT random()::real FROM generate_series(1, 16) WHERE i > 0) AS f FROM generate_series(1, 40000) i;
ALTER TABLE stg_pts ADD PRIMARY KEY (id);
ANALYZE stg_pts;
SELECT 'size=' || size || ' state=' || used || '/' || inputs || ' locked=' || page_locked || ' huge=' || huge_pages FROM odp_gpu_staging();
SET odp_gpu.device = cpu;
SELECT 'ref_' || ($ODP_STG_KNN);
SQL
)
	ref=$(sed -n 's/^ref_r=//p' <<<"$out")
	# huge pages only where the host has some reserved
	huge='(true|false)'
	[ "$(awk '/^HugePages_Total:/ { print $2 }' /proc/meminfo)" = 0 ] && huge=false
	[ -n "$ref" ] && grep -Eq "^size=16777216 state=0/0 locked=false huge=$huge\$" <<<"$out"
	odp_check "odp_gpu_staging() shows the area: 16 MB, empty, not page-locked by the CPU engine, in huge pages only where the host has them" $? \
		"$(tr '\n' ' ' <<<"$out" | head -c 300)"

	# 1. read into the area and used in place: serially, and by parallel workers
	out=$(odp_svc_psql stg1 <<SQL
$ODP_STG_KNN;
SET odp_gpu.parallel_read = force;
SET max_parallel_workers_per_gather = 2;
$ODP_STG_KNN;
SQL
)
	n=$(grep -c "^r=$ref\$" <<<"$out")
	staged=$(grep -c 'odp_knn_join path=gpu .* read_workers=0 .* staged=2\.[0-9] MB streamed=0\.[0-9] MB' <<<"$out")
	[ "$n" = 2 ] && [ "$staged" = 1 ] &&
		grep -q 'odp_knn_join path=gpu .* read_workers=[12] .* staged=2\.[0-9] MB streamed=0\.[0-9] MB' <<<"$out"
	odp_check "an input of 2.4 MB is read into the staging area and used in place, serially and in parallel, with the CPU path's rows" $? \
		"$n/2 same; $(grep -o 'read_workers=.*' <<<"$out" | tr '\n' ' ' | head -c 300)"
	odp_stg_wait_empty
	odp_check "after those calls the area holds nothing" $? "$(odp_stg_state)"

	# 2. 60 concurrent sessions, 150 MB of inputs against 16 MB
	for i in $(seq 60); do odp_svc_bg "s$i" <<<"$ODP_STG_KNN;"; done
	odp_svc_wait $(seq -f 's%g' 60)
	ok=0 staged=0 streamed=0
	for i in $(seq 60); do
		[ "$(odp_svc_field "s$i" r)" = "$ref" ] && ok=$((ok + 1))
		grep -q 'staged=2\.' "$dir/svc_s$i.out" && staged=$((staged + 1))
		grep -q 'streamed=2\.' "$dir/svc_s$i.out" && streamed=$((streamed + 1))
	done
	misses=$(psql -X -At -c "SELECT misses FROM odp_gpu_staging()")
	[ "$ok" -eq 60 ] && [ "$staged" -gt 0 ]
	odp_check "60 concurrent sessions whose inputs exceed the area: each gets the CPU path's rows" $? \
		"$ok/60 same; $staged read into the area, $streamed streamed (misses: $misses)$(
		[ "$ok" -eq 60 ] || for i in $(seq 60); do odp_svc_error "s$i"; done | sort | uniq -c | head -3 | tr '\n' ' ')"
	odp_stg_wait_empty
	odp_check "after the 60 sessions the area holds nothing" $? "$(odp_stg_state)"

	# 3. a read stopped while it writes into the area, a call stopped
	# while the service reads it, and backends terminated in either
	odp_svc_bg slow1 <<SQL
SET statement_timeout = '1s';
$ODP_STG_SLOW;
RESET statement_timeout;
$ODP_STG_KNN;
SQL
	odp_stg_wait_used
	out=$(odp_stg_state)
	odp_svc_wait slow1
	grep -q '57014: canceling statement due to statement timeout' "$dir/svc_slow1.out" &&
		[ "$(odp_svc_field slow1 r)" = "$ref" ] && [ "$out" != "0/0" ]
	odp_check "statement_timeout stops a read writing into the area; the next call works" $? \
		"area during the read: $out; $(odp_svc_error slow1) $(grep -m1 '^r=' "$dir/svc_slow1.out")"
	odp_stg_wait_empty
	odp_check "the stopped read gave its extents back" $? "$(odp_stg_state)"

	for i in 1 2 3; do
		odp_svc_bg "cx$i" <<<"$ODP_STG_SLOW;"
		odp_stg_wait_used
		sleep "0.$((i * 3 - 2))"
		odp_svc_stop_session "cx$i"
		odp_svc_wait "cx$i"
	done
	odp_svc_bg cx4 <<<"$ODP_STG_LONG;"
	odp_svc_wait_in_service cx4
	sleep 0.3
	out=$(odp_stg_state)
	odp_svc_stop_session cx4
	odp_svc_wait cx4
	ok=0
	for i in 1 2 3 4; do grep -q '57014' "$dir/svc_cx$i.out" && ok=$((ok + 1)); done
	odp_stg_wait_empty && [ "$ok" -eq 4 ] && [ "$out" != "0/0" ]
	odp_check "pg_cancel_backend while a read writes into the area (three moments) and while the service computes on it: every extent comes back" $? \
		"$ok/4 cancelled; area while computing $out, after $(odp_stg_state)"

	odp_svc_bg kill1 <<<"$ODP_STG_SLOW;"
	odp_stg_wait_used
	sleep 0.2
	out=$(odp_stg_state)
	odp_svc_stop_session kill1 terminate
	odp_svc_bg kill2 <<<"$ODP_STG_LONG;"
	odp_svc_wait_in_service kill2
	sleep 0.3
	odp_svc_stop_session kill2 terminate
	odp_svc_wait kill1 kill2
	odp_stg_wait_empty && grep -q 'terminating connection due to administrator command' "$dir/svc_kill1.out" &&
		grep -q 'terminating connection due to administrator command' "$dir/svc_kill2.out" && [ "$out" != "0/0" ]
	odp_check "backends terminated while writing into the area and while the service computes on it: their extents come back" $? \
		"area during the read: $out, after: $(odp_stg_state); $(odp_svc_error kill1) $(odp_svc_error kill2)"
	out=$(odp_svc_psql after_kill <<<"$ODP_STG_KNN;")
	grep -q "^r=$ref\$" <<<"$out"
	odp_check "after them the next call works" $? "$(grep -m1 -e '^r=' -e ERROR <<<"$out")"

	# 4. an area too small for any input: every input streams in pieces
	pos=$(odp_svc_log_pos)
	odp_restart_server "$ODP_SVC_OPTS -c odp_gpu.staging_size=2MB" && odp_svc_wait_ready "$pos"
	out=$(odp_svc_psql tiny <<SQL
$ODP_STG_KNN;
SELECT 'misses=' || misses FROM odp_gpu_staging();
SQL
)
	grep -q "^r=$ref\$" <<<"$out" && grep -q 'staged=0\.0 MB streamed=2\.[0-9] MB' <<<"$out" &&
		! grep -q '^misses=0$' <<<"$out"
	odp_check "a staging area too small for the input (2 MB): it streams to the service in pieces, same rows" $? \
		"$(grep -o -e 'staged=.*' -e '^misses=.*' -e '^r=.*' -e 'ERROR.*' <<<"$out" | tr '\n' ' ')"

	# 5. a size out of range is refused at server start
	pos=$(odp_svc_log_pos)
	odp_restart_server "$ODP_SVC_OPTS -c odp_gpu.staging_size=-1" >/dev/null 2>&1
	n=$?
	out=$(odp_svc_log_since "$pos" | grep -m1 'odp_gpu.staging_size')
	[ "$n" -ne 0 ] && grep -q 'FATAL: .*invalid value for parameter "odp_gpu.staging_size": "-1"' <<<"$out"
	odp_check "odp_gpu.staging_size = -1 is refused at server start, naming the setting" $? "rc $n: $out"

	odp_restart_server "" >/dev/null 2>&1
	odp_check "the server restarts without preloading" $? ""
}
