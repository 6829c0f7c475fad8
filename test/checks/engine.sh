# test/checks/engine.sh: sourced by test/run_tests.sh after
# test/checks/service.sh, whose helpers it uses (odp_svc_*).
# odp_engine_checks restarts the server with odp_gpu preloaded, its service
# on the CPU engine, which runs in the service's engine process (the
# program odp_gpu_engine, src/service/service_engine.h).  It checks that
#   - the engine process runs: the worker's child, titled "odp_gpu engine",
#     mapping none of the server's main shared memory (which the worker
#     maps), its pid in odp_gpu_info();
#   - SIGSEGV, SIGKILL and SIGABRT sent to it in the middle of a call, with
#     20 other sessions busy (6 odp_gpu calls queued behind the running one
#     by a budget of one request, 14 plain transactions): the call fails
#     with SQLSTATE 58000 and a message naming the engine process, the
#     queued calls succeed with the CPU path's rows, every plain
#     transaction commits, the postmaster neither restarts nor ends a
#     session, a new engine process is up within 2 s (odp_gpu_info() counts
#     the restart) and the next call gives the CPU path's rows;
#   - a hang (odp_gpu.service_fault_test = hang: a call that never moves
#     again) is caught by the watchdog (odp_gpu.engine_timeout = 2s): the
#     call fails with 58000, the engine process restarts, a queued call runs;
#   - afterwards nothing is left reserved: no GPU memory, no staging.
# Ends with the server restarted without preloading.  About 40 s on two
# cores.

# The engine process's pid: the child of the service's worker titled
# "odp_gpu engine" (from /proc); empty when there is none.
odp_engine_pid() {
	local worker p stat ppid
	worker=$(odp_svc_pid)
	[ -n "$worker" ] || return 0
	for p in /proc/[0-9]*; do
		# the title, in parentheses, has a space: the fields follow its end
		stat=$(cat "$p/stat" 2>/dev/null) || continue
		read -r _ ppid _ <<<"${stat##*) }"
		[ "$ppid" = "$worker" ] || continue
		[ "$(cat "$p/comm" 2>/dev/null)" = "odp_gpu engine" ] && echo "${p#/proc/}"
	done
}

# The threads of engine process $1 (from /proc); empty when it is gone.
odp_engine_threads() {
	awk '/^Threads:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# Waits (at most 10 s) until odp_gpu_info() shows an engine process other
# than $1; prints its pid and the seconds since $2 (odp_svc_now).
odp_engine_wait_new() {
	local pid
	for _ in $(seq 500); do
		pid=$(psql -X -At -c "SELECT engine_pid FROM odp_gpu_info() WHERE engine_pid IS NOT NULL LIMIT 1")
		if [ -n "$pid" ] && [ "$pid" != "$1" ]; then
			echo "$pid $(odp_svc_secs "$2" "$(odp_svc_now)")"
			return 0
		fi
		sleep 0.02
	done
	return 1
}

# Mappings of process $1 that are the server's main shared memory: its
# anonymous shared mapping (/dev/zero) and its System V segment.
odp_engine_main_shm_maps() {
	grep -c -E '/dev/zero|SYSV' "/proc/$1/maps" 2>/dev/null || true
}

# One crash: signal $1 to the engine process while a long call runs in it,
# 6 calls wait behind it and 14 plain transactions are open.
odp_engine_crash_check() {
	local sig=$1 dir=$ODP_RUN_DIR pos pm_start eng new el out ok i committed
	pos=$(odp_svc_log_pos)
	pm_start=$(psql -X -At -c "SELECT pg_postmaster_start_time()")
	eng=$(odp_engine_pid)
	psql -X -q -c "TRUNCATE eng_tx" >/dev/null
	odp_svc_bg "L$sig" <<<"$ODP_SVC_LONG;"
	odp_svc_wait_in_service "L$sig"
	for i in $(seq 6); do odp_svc_bg "q$sig$i" <<<"$ODP_SVC_KNN;"; done
	for i in $(seq 14); do
		odp_svc_bg "tx$sig$i" <<SQL
BEGIN;
INSERT INTO eng_tx VALUES ($i, 'before');
SELECT pg_sleep(2);
INSERT INTO eng_tx VALUES ($i, 'after');
COMMIT;
SQL
	done
	odp_svc_wait_in_service "L$sig" $(seq -f "q$sig%g" 6)
	t0=$(odp_svc_now)
	kill "-$sig" "$eng"
	read -r new el < <(odp_engine_wait_new "$eng" "$t0")
	odp_svc_wait "L$sig" $(seq -f "q$sig%g" 6) $(seq -f "tx$sig%g" 14)

	odp_svc_error "L$sig" | grep -q "58000: GPU failure: the odp_gpu engine process (pid $eng) was killed by signal"
	odp_check "SIG$sig to the engine process: the call running in it fails with 58000, naming it" $? \
		"$(odp_svc_error "L$sig" | cut -c 1-200)"
	ok=0
	for i in $(seq 6); do [ "$(odp_svc_field "q$sig$i" r)" = "$ODP_SVC_REF_KNN" ] && ok=$((ok + 1)); done
	[ "$ok" -eq 6 ]
	odp_check "SIG$sig: the 6 calls queued behind it run in the new engine process, the CPU path's rows" $? \
		"$ok/6$([ "$ok" -eq 6 ] || for i in $(seq 6); do odp_svc_error "q$sig$i"; done | head -2 | tr '\n' ' ')"
	committed=$(psql -X -At -c "SELECT count(*) FROM eng_tx")
	[ "$committed" = 28 ]
	odp_check "SIG$sig: the 14 plain transactions open meanwhile all commit" $? \
		"$committed of 28 rows; $(for i in $(seq 14); do odp_svc_error "tx$sig$i"; done | head -1)"
	[ "$(psql -X -At -c "SELECT pg_postmaster_start_time()")" = "$pm_start" ] &&
		! odp_svc_log_since "$pos" | grep -q -e 'terminating any other active server processes' \
			-e 'terminated by signal' -e 'was terminated' -e 'all server processes terminated'
	odp_check "SIG$sig: the postmaster sees nothing (no crash restart, no session ended)" $? \
		"$(odp_svc_log_since "$pos" | grep -m1 -e 'terminat' | cut -c 1-200)"
	[ -n "$new" ] && awk -v e="$el" 'BEGIN { exit !(e <= 2) }'
	odp_check "SIG$sig: a new engine process is up within 2 s" $? "pid $eng, then ${new:-none} after ${el:-?} s"
	out=$(odp_svc_psql "n$sig" <<<"$ODP_SVC_KNN;")
	grep -q "^r=$ODP_SVC_REF_KNN\$" <<<"$out" && grep -q 'odp_knn_join path=gpu .* queued=' <<<"$out"
	odp_check "SIG$sig: the next call runs in the new engine process with the CPU path's rows" $? \
		"$(grep -m1 -e 'queued=[0-9.]* ms' -e ERROR -o <<<"$out")"
}

odp_engine_checks() {
	local dir=$ODP_RUN_DIR out eng worker restarts t0 el pos sig

	odp_svc_restart_checked engine "" \
		"the server restarts with odp_gpu preloaded, its engine process on the CPU engine" || return 0
	odp_svc_data
	psql -X -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS eng_tx" -c "CREATE TABLE eng_tx(i int, at text)" >/dev/null

	# 1. the process
	eng=$(odp_engine_pid)
	worker=$(odp_svc_pid)
	out=$(psql -X -At -c "SELECT DISTINCT engine_pid || ' ' || engine_restarts FROM odp_gpu_info()")
	[ -n "$eng" ] && [ "$out" = "$eng 0" ] && [ "$(tr '\0' ' ' <"/proc/$eng/cmdline")" = "odp_gpu engine " ]
	odp_check "the engine process runs: the service worker's child, titled \"odp_gpu engine\", in odp_gpu_info()" $? \
		"worker $worker, engine ${eng:-none}; odp_gpu_info(): $out"
	[ "$(odp_engine_main_shm_maps "$worker")" -gt 0 ] && [ "$(odp_engine_main_shm_maps "$eng")" = 0 ] &&
		grep -q 'memfd:odp_gpu engine area' "/proc/$eng/maps"
	odp_check "it maps none of the server's main shared memory (the worker does), only its own areas" $? \
		"worker: $(odp_engine_main_shm_maps "$worker") mappings, engine: $(odp_engine_main_shm_maps "$eng"); $(
		grep -o 'memfd:[a-z_ ]*' "/proc/$eng/maps" | sort -u | tr '\n' ' ')"

	# 2. crashes, with a budget that fits one request, so that calls queue
	psql -X -q -c "ALTER SYSTEM SET odp_gpu.gpu_memory_limit = '300MB'" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	for sig in SEGV KILL ABRT; do
		odp_engine_crash_check "$sig"
	done
	restarts=$(psql -X -At -c "SELECT DISTINCT engine_restarts FROM odp_gpu_info()")
	[ "$restarts" = 3 ]
	odp_check "odp_gpu_info() counts the 3 restarts" $? "engine_restarts = $restarts"

	# 3. the watchdog: a call that never moves again
	psql -X -q -c "ALTER SYSTEM SET odp_gpu.engine_timeout = '2s'" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	eng=$(odp_engine_pid)
	pos=$(odp_svc_log_pos)
	odp_svc_bg H <<SQL
SELECT 't0=' || extract(epoch FROM clock_timestamp());
SET odp_gpu.service_fault_test = hang;
$ODP_SVC_KNN;
SELECT 't1=' || extract(epoch FROM clock_timestamp());
SQL
	odp_svc_wait_in_service H
	odp_svc_bg Hq <<<"$ODP_SVC_KNN;"
	odp_svc_wait H Hq
	el=$(odp_svc_secs "$(odp_svc_field H t0)" "$(odp_svc_field H t1)")
	odp_svc_error H | grep -q "58000: GPU failure: the odp_gpu engine process (pid $eng) made no progress on a call for 2 s (odp_gpu.engine_timeout) and was killed" &&
		awk -v e="$el" 'BEGIN { exit !(e >= 2 && e < 6) }'
	odp_check "a hung call: the watchdog kills the engine process after odp_gpu.engine_timeout, the call fails with 58000" $? \
		"after $el s: $(odp_svc_error H | cut -c 1-200)"
	[ "$(odp_svc_field Hq r)" = "$ODP_SVC_REF_KNN" ] && [ -n "$(odp_engine_pid)" ] && [ "$(odp_engine_pid)" != "$eng" ] &&
		odp_svc_log_since "$pos" | grep -q 'odp_gpu service has a new engine process'
	odp_check "after the watchdog's kill a new engine process runs the call queued behind" $? \
		"engine $eng, now $(odp_engine_pid); queued call: $(grep -m1 -e '^r=' -e ERROR "$dir/svc_Hq.out" | cut -c 1-100)"
	psql -X -q -c "ALTER SYSTEM RESET odp_gpu.engine_timeout" -c "ALTER SYSTEM RESET odp_gpu.gpu_memory_limit" \
		-c "SELECT pg_reload_conf()" >/dev/null

	# 4. nothing left held
	sleep 0.5
	out=$(psql -X -At -c "SELECT sum(reserved) || ' ' || sum(running) || ' ' || (SELECT used FROM odp_gpu_staging()) FROM odp_gpu_info()")
	[ "$out" = "0 0 0" ]
	odp_check "after the crashes nothing is left reserved: GPU budget, running requests, staging" $? \
		"reserved, running, staging used: $out"

	psql -X -q -c "DROP TABLE svc_pts, svc_q, svc_long, eng_tx" >/dev/null
	odp_restart_server ""
	odp_check "the server restarts without odp_gpu preloaded" $? ""
}
