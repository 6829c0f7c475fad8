# test/checks/service.sh: sourced by test/run_tests.sh (needs odp_check, the
# run's directory and the throwaway server of test/lib.sh).
# odp_service_start_checks, odp_service_regress_checks and
# odp_service_call_checks (run in turn) restart the server with odp_gpu
# preloaded and odp_gpu.service_engine = cpu: the GPU service then runs every call of the
# GPU path (odp_gpu.device = gpu, odp_gpu.gpu_min_rows = 0) on the engine's
# CPU path, so that all of it (slots, rings of 64 kB that every larger
# input and output streams through in pieces, queue, budget, errors) runs
# on a machine without a GPU.  It checks that
#   - the regress suites give the same rows through the service as in the
#     backend (all but settings, gpu_device and service: the settings'
#     defaults, the GPU's own output, and the mode a server without the
#     service reports), and that a call with the
#     same options did go through it (queued= in its timing);
#   - 60 concurrent sessions, more than the service's 32 slots, each get
#     the CPU path's result of a k-NN join or of the top outliers; the
#     engine process then holds a thread a slot at most, which later calls
#     use again;
#   - with a budget that fits one request (odp_gpu.gpu_memory_limit =
#     300MB, a request wishing for 256 MB and its inputs), 6 concurrent
#     calls all succeed and run one after another;
#   - statement_timeout stops a running call and a queued one,
#     pg_cancel_backend stops a queued call and a running one, each within
#     1.5 s, the next call in each of those sessions works and the calls
#     queued behind them run;
#   - a backend terminated in the middle of a call leaves the others
#     working and its memory free (with the one-request budget, a burst of
#     calls after it succeeds);
#   - the service stopped in the middle of a call (SIGTERM) fails that
#     call with an error naming the service, not the server: no crash, no
#     restart of the postmaster; an auto call meanwhile waits for the
#     service, which comes back by itself, and runs there;
#   - calls made while it restarts: odp_gpu.service_wait = 0 fails at
#     once, statement_timeout ends the wait, and a call waits and succeeds;
#   - pg_stat_activity shows the service.
# (test/checks/cron.sh runs the nightly job with pg_cron and odp_gpu both
# preloaded, its calls in the service, while the regress suites run.)
# Ends with the server restarted without preloading.  About 110 s on two
# cores, 65 of them the regress suites.

declare -gA ODP_SVC_PID

# Server options of the checks: the service on the CPU engine, small rings.
ODP_SVC_OPTS="-c shared_preload_libraries=odp_gpu -c odp_gpu.service_engine=cpu -c odp_gpu.service_ring_size=64"

# The calls: a k-NN join of 500 queries against 20000 rows (its inputs
# stream through the 64 kB rings in pieces), the top outliers of 2000 and
# of 12000 rows (about 0.5 s on the CPU engine, on two cores), and a long
# call (the scores of 60000 rows: tens of seconds) to stop.
ODP_SVC_KNN="SELECT 'r=' || md5(string_agg(query_id || ':' || rank || ':' || id || ':' || distance, ','
	ORDER BY query_id, rank)) FROM odp_knn_join('svc_q', 'svc_pts', k => 5)"
ODP_SVC_TOP="SELECT 'r=' || md5(string_agg(rank || ':' || id || ':' || score, ',' ORDER BY rank))
	FROM odp_top_outliers('(SELECT * FROM svc_pts WHERE id <= 2000)', k => 5, n => 10)"
ODP_SVC_TOP12K="SELECT md5(string_agg(rank || ':' || id || ':' || score, ',' ORDER BY rank))
	FROM odp_top_outliers('(SELECT * FROM svc_pts WHERE id <= 12000)', k => 5, n => 10, method => 'bruteforce')"
ODP_SVC_LONG="SELECT count(*) FROM odp_outlier_scores('svc_long', k => 5)"

odp_svc_now() { date +%s.%N; }

# Seconds from $1 to $2, two decimals.
odp_svc_secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# The server log's size in bytes (where the next lines will start).
odp_svc_log_pos() { stat -c %s "$ODP_PGDATA/server.log"; }

# The server log from byte $1 on.
odp_svc_log_since() { tail -c +"$(($1 + 1))" "$ODP_PGDATA/server.log"; }

# Waits (at most 20 s) for the service of process id $2 to exit and a new
# one to log that it is ready, after byte $1 of the server log.
odp_svc_wait_restart() {
	for _ in $(seq 200); do
		odp_svc_log_since "$1" | awk -v p="(PID $2) exited" 'index($0, p) { gone = 1 }
			gone && /odp_gpu service ready: 1 device/ { back = 1 } END { exit !back }' && return 0
		sleep 0.1
	done
	return 1
}

# The service's process id (the postmaster's child titled "postgres:
# odp_gpu service", from /proc: ps may be missing); empty when it is not
# running.
odp_svc_pid() {
	local pm p ppid cmd
	pm=$(head -1 "$ODP_PGDATA/postmaster.pid")
	for p in /proc/[0-9]*; do
		read -r _ _ _ ppid _ 2>/dev/null <"$p/stat" || continue
		[ "$ppid" = "$pm" ] || continue
		cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")
		[[ $cmd == *"odp_gpu service"* ]] && echo "${p#/proc/}"
	done
}

# Waits (at most 20 s) for the service to log that it is ready after byte
# $1 of the server log.
odp_svc_wait_ready() {
	for _ in $(seq 200); do
		odp_svc_log_since "$1" | grep -q 'odp_gpu service ready: 1 device' && return 0
		sleep 0.1
	done
	return 1
}

# The start of every session's script: its name, the GPU path for every
# call (that is, the service), the timing report, SQLSTATEs in errors.
odp_svc_preamble() {
	cat <<SQL
SET application_name = 'odp_svc_$1';
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_min_rows = 0;
SET odp_gpu.report_timing = on;
\set VERBOSITY verbose
SQL
}

# Runs the SQL on stdin in a session of its own named $1 in the
# background (killed after $2 seconds, default 120); its output goes to
# svc_$1.out of the run's directory.
odp_svc_bg() {
	local name=$1
	{ odp_svc_preamble "$name"; cat; } >"$ODP_RUN_DIR/svc_$name.sql"
	timeout "${2:-120}" psql -X -At -f "$ODP_RUN_DIR/svc_$name.sql" >"$ODP_RUN_DIR/svc_$name.out" 2>&1 &
	ODP_SVC_PID[$name]=$!
}

# Waits for the background sessions named.
odp_svc_wait() {
	local name
	for name in "$@"; do
		wait "${ODP_SVC_PID[$name]}" 2>/dev/null
	done
}

# Runs the SQL on stdin in a session of its own named $1; prints its output.
odp_svc_psql() {
	{ odp_svc_preamble "$1"; cat; } | timeout 120 psql -X -At 2>&1
}

# Waits (at most 30 s) until every session named is in the middle of a
# call, waiting for the service (wait event Extension).
odp_svc_wait_in_service() {
	local names n
	names=$(printf "'odp_svc_%s'," "$@")
	for _ in $(seq 300); do
		n=$(psql -X -At -c "SELECT count(*) FROM pg_stat_activity WHERE application_name IN (${names%,})
			AND state = 'active' AND wait_event_type = 'Extension'")
		[ "$n" = "$#" ] && return 0
		sleep 0.1
	done
	echo "only $n of $* waiting in the service after 30 s" >&2
	return 1
}

# Cancels (pg_cancel_backend) or terminates (pg_terminate_backend: $2 =
# terminate) the session named $1.
odp_svc_stop_session() {
	psql -X -At -c "SELECT pg_${2:-cancel}_backend(pid) FROM pg_stat_activity WHERE application_name = 'odp_svc_$1'" >/dev/null
}

# What follows "$2=" in session $1's output (its first such line).
odp_svc_field() { sed -n "s/^$2=//p" "$ODP_RUN_DIR/svc_$1.out" | head -1; }

# The value of "$2=N ms" in the timing report in session $1's output.
odp_svc_ms() { sed -n "s/.* $2=\([0-9.]*\) ms.*/\1/p" "$ODP_RUN_DIR/svc_$1.out" | head -1; }

# The first error of session $1, one line.
odp_svc_error() { grep -m1 -E '(ERROR|FATAL): ' "$ODP_RUN_DIR/svc_$1.out" | sed 's/^psql:[^ ]* //'; }

# Restarts the server with the service's options plus $2, and checks that
# its service comes up (message $3); returns 1 without restarting where
# the checks may not restart the server (they are then skipped, named $1).
odp_svc_restart_checked() {
	local pos
	if [ "${ODP_USE_RUNNING_SERVER:-0}" = 1 ]; then
		echo "skipped: the $1 checks restart the server, which ODP_USE_RUNNING_SERVER=1 forbids"
		return 1
	fi
	pos=$(odp_svc_log_pos)
	odp_restart_server "$ODP_SVC_OPTS $2" && odp_svc_wait_ready "$pos"
	odp_check "$3" $? "$(odp_svc_log_since "$pos" | grep -m1 -e 'odp_gpu service ready' -e FATAL)"
	return 0
}

# Makes the tables of the checks (svc_pts, svc_q, svc_long) and sets
# ODP_SVC_REF_KNN, ODP_SVC_REF_TOP and ODP_SVC_REF_12K to the CPU path's
# results in the backend; checks that it could.
odp_svc_data() {
	local out
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS svc_pts, svc_q, svc_long;
SELECT setseed(0.5);
CREATE TABLE svc_pts AS SELECT i::bigint AS id,
	array(SELECT random()::real FROM generate_series(1, 8) WHERE i > 0) AS f FROM generate_series(1, 20000) i;
CREATE TABLE svc_q AS SELECT id, f FROM svc_pts WHERE id % 40 = 0;
CREATE TABLE svc_long AS SELECT i::bigint AS id,
	array(SELECT random()::real FROM generate_series(1, 8) WHERE i > 0) AS f FROM generate_series(1, 60000) i;
SET odp_gpu.device = cpu;
SELECT 'knn_' || ($ODP_SVC_KNN);
SELECT 'top_' || ($ODP_SVC_TOP);
SELECT 'top12k=' || ($ODP_SVC_TOP12K);
SQL
)
	ODP_SVC_REF_KNN=$(sed -n 's/^knn_r=//p' <<<"$out"); ODP_SVC_REF_TOP=$(sed -n 's/^top_r=//p' <<<"$out")
	ODP_SVC_REF_12K=$(sed -n 's/^top12k=//p' <<<"$out")
	[ -n "$ODP_SVC_REF_KNN" ] && [ -n "$ODP_SVC_REF_TOP" ] && [ -n "$ODP_SVC_REF_12K" ]
	odp_check "service checks: tables and the CPU path's results" $? "$(tr '\n' ' ' <<<"$out" | head -c 300)"
}

# The checks in three parts, which test/run_tests.sh runs in turn (with
# pg_cron's nightly job scheduled between the first two):
# odp_service_start_checks restarts the server with the service's options
# plus $1 and checks that the service came up; false where the checks may
# not restart the server.
odp_service_start_checks() {
	local out
	odp_svc_restart_checked service "${1:-}" \
		"the server restarts with odp_gpu preloaded, its service on the CPU engine" || return 1
	out=$(psql -X -At -c "SELECT backend_type || ' ' || pid FROM pg_stat_activity WHERE backend_type = 'odp_gpu service'")
	[ "$out" = "odp_gpu service $(odp_svc_pid)" ]
	odp_check "pg_stat_activity shows the service, its backend_type naming it" $? "$out"
	# connected, the service must absorb the server's barriers: DROP DATABASE waits for them
	out=$(timeout 30 psql -X -q -c "CREATE DATABASE odp_svc_barrier" -c "DROP DATABASE odp_svc_barrier" 2>&1)
	odp_check "DROP DATABASE completes while the service runs (it absorbs the barrier)" $? "$out"
}

# The regress suites through the service (1. above).
odp_service_regress_checks() {
	local dir=$ODP_RUN_DIR out suites name result n rc

	# 1. the regress suites through the service: inputs read into dynamic
	# shared memory and used in place where large; tables read by parallel
	# workers, whose output the service reads in place, but in the
	# exhaustive suites of test/lib.sh, which read serially
	suites=$(odp_regress_suites "settings gpu_device service $ODP_REGRESS_EXHAUSTIVE")
	PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.gpu_min_rows=0 -c odp_gpu.service_inputs_in_place=on -c odp_gpu.parallel_read=force -c max_parallel_workers_per_gather=2" \
		make -C "$ODP_ROOT" -s installcheck \
		REGRESS="$suites" PG_CONFIG="$PG_CONFIG" EXTRA_REGRESS_OPTS="--outputdir=$dir/service_regress" \
		>"$dir/service_regress.log" 2>&1
	suites=$(odp_regress_suites "" "$ODP_REGRESS_EXHAUSTIVE")
	PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.gpu_min_rows=0 -c odp_gpu.service_inputs_in_place=on" \
		make -C "$ODP_ROOT" -s installcheck \
		REGRESS="$suites" PG_CONFIG="$PG_CONFIG" EXTRA_REGRESS_OPTS="--outputdir=$dir/service_regress_serial" \
		>"$dir/service_regress_serial.log" 2>&1
	n=0
	for out in service_regress service_regress_serial; do
		while read -r name result; do
			[ "$result" = ok ]
			odp_check "through the service: regress suite $name" $? "$result"
			n=$((n + 1))
		done < <(sed -nE 's/^(test +| +)([a-z_0-9]+) +\.\.\. +(ok|FAILED|failed).*/\2 \3/p' "$dir/$out.log")
		if grep -qE '\.\.\. +(FAILED|failed)' "$dir/$out.log"; then
			tail -20 "$dir/$out.log"
			[ -f "$dir/$out/regression.diffs" ] && head -100 "$dir/$out/regression.diffs"
			odp_server_log_tail 20
		fi
	done
	rc=0
	if [ "$n" -ne "$(wc -w <<<"$(odp_regress_suites "settings gpu_device service")")" ]; then
		rc=1
		tail -5 "$dir/service_regress.log" "$dir/service_regress_serial.log"
	fi
	odp_check "through the service: the regress suites ran" $rc "$n suites"
}

# The calls of 2. to 7. above; ends with the server restarted without
# preloading.
odp_service_call_checks() {
	local dir=$ODP_RUN_DIR out rc pos ok n i t0 t1 el s e r rd qd
	local ref_knn ref_top ref_12k spans overlap shortest pm_start pid pid2 eng slots th1 th2

	# inputs in place: a 2.6 MB input read into dynamic shared memory gives
	# the CPU path's k-NN join through the service
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS svc_inplace;
CREATE TABLE svc_inplace AS
	SELECT i AS id, array(SELECT ((i * 7919 + j * 104729) % 1000)::real FROM generate_series(1, 32) j) AS f
	FROM generate_series(1, 20000) i;
SET odp_gpu.device = cpu;
SELECT 'cpu=' || md5(string_agg(query_id || ':' || id, ',' ORDER BY query_id, rank))
FROM odp_knn_join('(SELECT * FROM svc_inplace WHERE id <= 64)', 'svc_inplace', k => 3);
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_min_rows = 0;
SET odp_gpu.service_inputs_in_place = on;
SELECT 'svc=' || md5(string_agg(query_id || ':' || id, ',' ORDER BY query_id, rank))
FROM odp_knn_join('(SELECT * FROM svc_inplace WHERE id <= 64)', 'svc_inplace', k => 3);
DROP TABLE svc_inplace;
SQL
)
	[ -n "$(sed -n 's/^cpu=//p' <<<"$out")" ] &&
		[ "$(sed -n 's/^cpu=//p' <<<"$out")" = "$(sed -n 's/^svc=//p' <<<"$out")" ]
	odp_check "inputs read into dynamic shared memory and used in place give the CPU path's rows" $? \
		"$(tr '\n' ' ' <<<"$out" | head -c 300)"

	# the data of the checks below, and the CPU path's results in the backend
	odp_svc_data
	ref_knn=$ODP_SVC_REF_KNN ref_top=$ODP_SVC_REF_TOP ref_12k=$ODP_SVC_REF_12K

	# a call with the suites' options goes through the service
	out=$(odp_svc_psql one <<<"$ODP_SVC_KNN;")
	grep -q "^r=$ref_knn\$" <<<"$out" && grep -q 'odp_knn_join path=gpu .* queued=[0-9.]* ms' <<<"$out" &&
		grep -qE 'startup=[0-9.]+ ms \(dispatch=[0-9.]+ ms reply=[0-9.]+ ms\)' <<<"$out"
	odp_check "through the service: a call with odp_gpu.device = gpu, odp_gpu.gpu_min_rows = 0 runs there, same rows as the CPU path, its timing with the service's parts of startup" $? \
		"$(grep -m1 -o 'path=.*' <<<"$out" | head -c 200)"

	# 2. 60 concurrent sessions, more than the service's slots
	t0=$(odp_svc_now)
	for i in $(seq 60); do
		if [ $((i % 2)) -eq 0 ]; then odp_svc_bg "c$i" <<<"$ODP_SVC_KNN;"; else odp_svc_bg "c$i" <<<"$ODP_SVC_TOP;"; fi
	done
	odp_svc_wait $(seq -f 'c%g' 60)
	t1=$(odp_svc_now)
	ok=0 n=0 qd=0
	for i in $(seq 60); do
		if [ $((i % 2)) -eq 0 ]; then r=$ref_knn; else r=$ref_top; fi
		[ "$(odp_svc_field "c$i" r)" = "$r" ] && ok=$((ok + 1))
		rd=$(odp_svc_ms "c$i" queued)
		[ -n "$rd" ] && n=$((n + 1)) && qd=$(awk -v a="$qd" -v b="$rd" 'BEGIN { print (b > a ? b : a) }')
	done
	[ "$ok" -eq 60 ] && [ "$n" -eq 60 ]
	odp_check "60 concurrent sessions through the service: each gets the CPU path's result" $? \
		"$ok/60 same, $n/60 through the service, longest queued $qd ms, $(odp_svc_secs "$t0" "$t1") s$(
		[ "$ok" -eq 60 ] || for i in $(seq 60); do odp_svc_error "c$i"; done | sort | uniq -c | head -3 | tr '\n' ' ')"

	# the engine process keeps the threads of finished requests for the
	# next ones: one a slot at most besides its main thread, and later
	# calls start none
	eng=$(odp_engine_pid)
	slots=$(psql -X -At -c "SHOW odp_gpu.service_slots")
	th1=$(odp_engine_threads "$eng")
	for i in $(seq 3); do odp_svc_psql "p$i" <<<"$ODP_SVC_KNN;" >/dev/null; done
	th2=$(odp_engine_threads "$eng")
	[ -n "$th1" ] && [ "$th1" -ge 2 ] && [ "$th1" -le $((slots + 1)) ] && [ "$th2" = "$th1" ]
	odp_check "the engine process keeps its request threads: at most one a slot after 60 sessions, none started for later calls" $? \
		"$th1 threads after the 60 sessions, $th2 after 3 more calls; $slots slots"

	# the spatial path's calls from many sessions at once
	odp_spatial_data && odp_spatial_sessions_check gpu "through the service"

	# a call that a GPU fault failed (odp_gpu.service_fault_test = victim
	# fails its first run as another call's fault would, on a driver that
	# poisons the engine process) runs again, alone: once the engine has
	# ended the call that ran beside it (whose backend still returns its
	# 60,000 rows then), with the CPU path's rows
	pos=$(odp_svc_log_pos)
	odp_svc_bg A <<SQL
$ODP_SVC_LONG;
SELECT 'end=' || extract(epoch FROM clock_timestamp());
SQL
	odp_svc_wait_in_service A
	odp_svc_bg V <<SQL
SET odp_gpu.service_fault_test = victim;
$ODP_SVC_KNN;
SELECT 'end=' || extract(epoch FROM clock_timestamp());
SQL
	odp_svc_wait A V
	[ "$(odp_svc_field V r)" = "$ref_knn" ] && grep -q 'retried_alone_after_fault' "$dir/svc_V.out" &&
		grep -q '^60000$' "$dir/svc_A.out" &&
		awk -v a="$(odp_svc_field A end)" -v v="$(odp_svc_field V end)" 'BEGIN { exit !(v >= a - 1) }' &&
		odp_svc_log_since "$pos" | grep -q 'running it again, alone'
	odp_check "a call a GPU fault failed runs again, alone, once the call beside it ended: the CPU path's rows" $? \
		"$(odp_svc_field V r) $(odp_svc_error V) A ended $(odp_svc_field A end), V $(odp_svc_field V end)"

	# 3. a budget that fits one request: 6 concurrent calls, one after another
	psql -X -q -c "ALTER SYSTEM SET odp_gpu.gpu_memory_limit = '300MB'" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	for i in $(seq 6); do
		odp_svc_bg "b$i" <<SQL
DO \$\$
DECLARE t0 float8; t1 float8; r text;
BEGIN
	t0 := extract(epoch FROM clock_timestamp());
	$ODP_SVC_TOP12K INTO r;
	t1 := extract(epoch FROM clock_timestamp());
	RAISE NOTICE 'span % % %', t0, t1, r;
END \$\$;
SQL
	done
	odp_svc_wait b1 b2 b3 b4 b5 b6
	# each call's admission: its start plus its reading and its wait in the queue
	spans=$dir/svc_spans
	: >"$spans"
	ok=0
	for i in $(seq 6); do
		read -r s e r < <(sed -n 's/.*: span //p' "$dir/svc_b$i.out")
		rd=$(odp_svc_ms "b$i" read); qd=$(odp_svc_ms "b$i" queued)
		[ -n "$r" ] && [ "$r" = "$ref_12k" ] && [ -n "$qd" ] && ok=$((ok + 1)) &&
			awk -v s="$s" -v e="$e" -v r="$rd" -v q="$qd" 'BEGIN { printf "%.3f %.3f\n", s + (r + q) / 1000, e }' >>"$spans"
	done
	sort -n -o "$spans" "$spans"
	[ "$ok" -eq 6 ]
	odp_check "a budget of one request (gpu_memory_limit = 300MB): 6 concurrent calls succeed with the CPU path's result" $? \
		"$ok/6$([ "$ok" -eq 6 ] || for i in $(seq 6); do odp_svc_error "b$i"; done | head -2 | tr '\n' ' ')"
	# one after another: none admitted before the one before it ended (it
	# may look so by a scheduling delay, much shorter than a run)
	overlap=$(awk 'NR > 1 && end - $1 > m { m = end - $1 } $2 > end { end = $2 } END { printf "%.2f", m + 0 }' "$spans")
	shortest=$(awk '!m || $2 - $1 < m { m = $2 - $1 } END { printf "%.2f", m + 0 }' "$spans")
	[ "$ok" -eq 6 ] && awk -v o="$overlap" -v s="$shortest" 'BEGIN { exit !(s > 0.05 && o < 0.5 * s) }'
	odp_check "a budget of one request: the 6 calls ran one after another" $? \
		"runs of ${shortest} s or more, one admitted at most $overlap s before the one before ended, $(
		awk 'NR == 1 { a = $1 } { e = $2 } END { printf "%.2f", e - a }' "$spans") s for the 6"

	# 4. statement_timeout and cancel, of a running call and of queued ones
	out=$(odp_svc_psql timeout <<SQL
SELECT 't0=' || extract(epoch FROM clock_timestamp());
SET statement_timeout = '1s';
$ODP_SVC_LONG;
RESET statement_timeout;
SELECT 't1=' || extract(epoch FROM clock_timestamp());
$ODP_SVC_KNN;
SQL
)
	el=$(odp_svc_secs "$(sed -n 's/^t0=//p' <<<"$out")" "$(sed -n 's/^t1=//p' <<<"$out")")
	grep -q '57014: canceling statement due to statement timeout' <<<"$out" && awk -v e="$el" 'BEGIN { exit !(e < 1.5) }'
	odp_check "statement_timeout = 1s stops a call running in the service" $? "stopped after $el s"
	grep -q "^r=$ref_knn\$" <<<"$out"
	odp_check "the next call in that session works" $? "$(grep -m1 "^r=" <<<"$out" || grep -m1 ERROR <<<"$out")"

	# L runs (the budget fits it alone); q1 .. q4 queue behind it
	odp_svc_bg L <<SQL
$ODP_SVC_LONG;
SELECT 'after=' || extract(epoch FROM clock_timestamp());
$ODP_SVC_KNN;
SQL
	odp_svc_wait_in_service L
	odp_svc_bg q1 <<<"$ODP_SVC_KNN;"
	odp_svc_bg q2 <<SQL
$ODP_SVC_KNN;
SELECT 'after=' || extract(epoch FROM clock_timestamp());
$ODP_SVC_KNN;
SQL
	odp_svc_bg q3 <<<"$ODP_SVC_KNN;"
	odp_svc_wait_in_service L q1 q2 q3
	odp_svc_bg q4 <<SQL
SELECT 't0=' || extract(epoch FROM clock_timestamp());
SET statement_timeout = '1s';
$ODP_SVC_KNN;
RESET statement_timeout;
SELECT 't1=' || extract(epoch FROM clock_timestamp());
$ODP_SVC_KNN;
SQL
	t0=$(odp_svc_now)
	odp_svc_stop_session q2
	sleep 2.5	# q4's statement_timeout goes off while it waits
	t1=$(odp_svc_now)
	odp_svc_stop_session L
	odp_svc_wait L q1 q2 q3 q4
	el=$(odp_svc_secs "$t0" "$(odp_svc_field q2 after)")
	grep -q '57014: canceling statement due to user request' "$dir/svc_q2.out" && awk -v e="$el" 'BEGIN { exit !(e < 1.5) }'
	odp_check "pg_cancel_backend stops a call waiting in the service's queue" $? "stopped $el s after the cancel; $(odp_svc_error q2)"
	el=$(odp_svc_secs "$(odp_svc_field q4 t0)" "$(odp_svc_field q4 t1)")
	grep -q '57014: canceling statement due to statement timeout' "$dir/svc_q4.out" && awk -v e="$el" 'BEGIN { exit !(e < 1.5) }'
	odp_check "statement_timeout = 1s stops a call waiting in the queue" $? "stopped after $el s; $(odp_svc_error q4)"
	el=$(odp_svc_secs "$t1" "$(odp_svc_field L after)")
	grep -q '57014: canceling statement due to user request' "$dir/svc_L.out" && awk -v e="$el" 'BEGIN { exit !(e < 1.5) }'
	odp_check "pg_cancel_backend stops a call running in the service" $? "stopped $el s after the cancel; $(odp_svc_error L)"
	[ "$(sed -n 's/^r=//p' "$dir/svc_q2.out")" = "$ref_knn" ] && [ "$(sed -n 's/^r=//p' "$dir/svc_q4.out")" = "$ref_knn" ] &&
		[ "$(odp_svc_field L r)" = "$ref_knn" ]
	odp_check "the next call in each of those sessions works" $? \
		"$(for name in q2 q4 L; do echo "$name: $(grep -c "^r=$ref_knn\$" "$dir/svc_$name.out")"; done | tr '\n' ' ')"
	qd=$(odp_svc_ms q1 queued); rd=$(odp_svc_ms q3 queued)
	[ "$(odp_svc_field q1 r)" = "$ref_knn" ] && [ "$(odp_svc_field q3 r)" = "$ref_knn" ] &&
		awk -v a="$qd" -v b="$rd" 'BEGIN { exit !(a >= 1000 && b >= 1000) }'
	odp_check "the calls queued behind them run once the running one is stopped" $? \
		"queued $qd ms and $rd ms; $(odp_svc_error q1) $(odp_svc_error q3)"

	# 5. a backend terminated in the middle of its call
	pid=$(odp_svc_pid)
	odp_svc_bg T <<<"$ODP_SVC_LONG;"
	odp_svc_wait_in_service T
	odp_svc_bg o <<<"$ODP_SVC_KNN;"
	odp_svc_wait_in_service T o
	odp_svc_stop_session T terminate
	odp_svc_wait T o
	grep -q 'terminating connection due to administrator command' "$dir/svc_T.out" &&
		[ "$(odp_svc_field o r)" = "$ref_knn" ]
	odp_check "a backend terminated in the middle of a call: the call queued behind it runs" $? \
		"$(odp_svc_error T); other: $(grep -m1 -e '^r=' -e ERROR "$dir/svc_o.out")"
	for i in $(seq 6); do odp_svc_bg "t$i" 60 <<<"$ODP_SVC_KNN;"; done
	odp_svc_wait t1 t2 t3 t4 t5 t6
	ok=0
	for i in $(seq 6); do [ "$(odp_svc_field "t$i" r)" = "$ref_knn" ] && ok=$((ok + 1)); done
	[ "$ok" -eq 6 ] && [ -n "$pid" ] && [ "$(odp_svc_pid)" = "$pid" ]
	odp_check "after it the service frees its memory: a burst of 6 calls within the one-request budget succeeds" $? \
		"$ok/6, service pid $pid, now $(odp_svc_pid)"
	psql -X -q -c "ALTER SYSTEM RESET odp_gpu.gpu_memory_limit" -c "SELECT pg_reload_conf()" >/dev/null

	# 6. the service stopped in the middle of a call
	pm_start=$(psql -X -At -c "SELECT pg_postmaster_start_time()")
	pos=$(odp_svc_log_pos)
	pid=$(odp_svc_pid)
	odp_svc_bg S <<SQL
$ODP_SVC_LONG;
SELECT 'after=' || extract(epoch FROM clock_timestamp());
SET odp_gpu.device = auto;
$ODP_SVC_KNN;
SQL
	odp_svc_wait_in_service S
	t0=$(odp_svc_now)
	kill -TERM "$pid"
	odp_svc_wait S
	el=$(odp_svc_secs "$t0" "$(odp_svc_field S after)")
	odp_svc_error S | grep -q 'odp_gpu service'
	odp_check "the service stopped (SIGTERM) in the middle of a call: the call fails with an error naming it" $? \
		"after $el s: $(odp_svc_error S)"
	[ "$(odp_svc_field S r)" = "$ref_knn" ] && grep -q 'odp_knn_join path=gpu .* queued=' "$dir/svc_S.out"
	odp_check "an auto call made while the service is down waits for it and runs there, not on the CPU" $? \
		"$(grep -o 'odp_knn_join path=[a-z]* .*queued=[0-9.]* ms' "$dir/svc_S.out" | tail -1)"
	odp_svc_wait_restart "$pos" "$pid"
	rc=$?
	pid2=$(odp_svc_pid)
	out=$(odp_svc_psql after <<<"$ODP_SVC_KNN;")
	[ $rc -eq 0 ] && [ -n "$pid2" ] && [ "$pid2" != "$pid" ] && grep -q "^r=$ref_knn\$" <<<"$out" &&
		grep -q 'odp_knn_join path=gpu .* queued=' <<<"$out"
	odp_check "the service restarts by itself and the next call runs there" $? \
		"pid $pid, then $pid2; $(grep -m1 -e 'queued=[0-9.]* ms' -e ERROR -o <<<"$out")"
	[ "$(psql -X -At -c "SELECT pg_postmaster_start_time()")" = "$pm_start" ] &&
		! odp_svc_log_since "$pos" | grep -q -e 'terminated by signal' -e 'terminating any other active server processes' &&
		odp_svc_log_since "$pos" | grep -q "(PID $pid) exited with exit code 1"
	odp_check "no crash: the postmaster did not restart, the service exited with code 1" $? \
		"started $pm_start; $(odp_svc_log_since "$pos" | grep -m1 -e "(PID $pid)" -e 'terminated by signal' | cut -c 1-200)"

	# 7. calls made while the service is down (it restarts a second after
	# it exits): bounded by odp_gpu.service_wait and by statement_timeout,
	# else they wait and run there
	pos=$(odp_svc_log_pos)
	pid=$(odp_svc_pid)
	kill -TERM "$pid"
	for _ in $(seq 100); do
		odp_svc_log_since "$pos" | grep -q "(PID $pid) exited" && break
		sleep 0.02
	done
	out=$(odp_svc_psql D <<SQL
SET odp_gpu.service_wait = 0;
$ODP_SVC_KNN;
SET odp_gpu.service_wait = '60s';
SET statement_timeout = '200ms';
$ODP_SVC_KNN;
RESET statement_timeout;
$ODP_SVC_KNN;
SQL
)
	grep -q 'ERROR:  57P03: the odp_gpu service is [a-z]* after 0 ms of waiting for it' <<<"$out" &&
		grep -q 'ERROR:  57014: canceling statement due to statement timeout' <<<"$out" &&
		grep -q "^r=$ref_knn\$" <<<"$out" && grep -q 'odp_knn_join path=gpu .* queued=' <<<"$out"
	odp_check "calls while the service restarts: odp_gpu.service_wait = 0 fails at once (57P03), statement_timeout ends the wait (57014), a third waits and runs there" $? \
		"$(grep -m3 -e ERROR -e '^r=' <<<"$out" | cut -c 1-120 | tr '\n' ' ')"
	odp_svc_wait_restart "$pos" "$pid"
	odp_check "the service is back after the second stop" $? "pid $pid, now $(odp_svc_pid)"
	psql -X -q -c "DROP TABLE svc_pts, svc_q, svc_long" >/dev/null
	odp_restart_server ""
	odp_check "the server restarts without odp_gpu preloaded" $? ""
}
