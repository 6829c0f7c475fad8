#!/usr/bin/env bash
# Benchmark of the GPU service (odp_gpu in shared_preload_libraries: one
# background worker holds the GPUs and runs every session's GPU work)
# against in-backend GPU use (odp_gpu not preloaded: each backend creates
# its own CUDA context), both measured in one run on one server.
#
# The script restarts the server itself (pg_ctl, as the data directory's
# owner): first with max_connections = 600 and odp_gpu not preloaded (the
# in-backend rows), then with max_connections = 600 and odp_gpu preloaded,
# odp_gpu.service_engine = ODP_SERVICE_ENGINE (the service rows), the
# server's other options as it was started with them; at the end, also
# after a failure, it restarts the server with its original options.
#
# Steps (ODP_SB_STEPS), each measured in both modes:
#   pool        P sessions connect and wait on an advisory lock the script
#               holds; once all wait, the script lets them go and each runs
#               one k-NN join of 16 queries against 200,000 x 32 rows
#               (odp_gpu.device = auto, odp_gpu.gpu_min_rows at its
#               default), then waits on a second lock, staying connected,
#               until every session has answered; the script then reads the
#               GPU memory held (nvidia-smi: per process and in all) and
#               counts the processes holding a CUDA context (nvidia-smi;
#               beside it, the server processes with a GPU device file
#               mapped, from /proc/PID/maps), then lets them all go.
#               Service: 150 and 500 sessions; in-backend: 150 (each call
#               bounded by a statement_timeout).
#   first       the first k-NN call of a brand-new session (16 queries x
#               2,048 rows x 8, auto), as psql's \timing sees it, median of
#               10 new sessions, and the second call of each session; the
#               same for a first correlation call (odp_pearson of 64 series
#               x 256, odp_gpu.device = gpu: cuBLAS loaded by the service,
#               or by each backend).
#   concurrent  40 sessions run one k-NN join each at once, 50,000 queries
#               against 400,000 x 64 rows (device = gpu, k = 10): the wall
#               time until all 40 have finished, released together as in
#               pool.
#   warm        each analytic's whole SQL call in one session (device =
#               gpu), the median of calls 2 to ODP_SB_REPEAT (the first
#               call of a session is cold): the workloads of
#               test/bench/devices_bench.sh at ODP_SB_SCALE of their rows
#               (top outliers by brute force of random card hands, k = 50,
#               n = 10; k-NN self join of N x 32, k = 10; odp_pearson of
#               16,384 x 4,096 random series, |r| >= 0.1; skyline of 10^7 x 8
#               anti-correlated rows; region count of 10^7 extents,
#               alpha = 100), each as SELECT count(*) FROM the function.
# Prints one table (measure, in-backend, service, service / in-backend)
# and notes (the first distinct error messages, where calls ran), also
# written to $OUT/service_bench.txt when OUT is set (the progress log to
# $OUT/service_bench.log).  A step that fails prints its error and the
# script goes on.  The tables (odp_sb_*) are generated in SQL at the start
# and dropped at the end.  Not a test: it never fails on speed.
#
# Needs a running server (PGHOST etc.), a superuser connection (it reads
# postmaster.opts and postmaster.pid with pg_read_file), to run as root or
# as the data directory's owner, odp_gpu installed, and nvidia-smi for the
# GPU memory (n/a without).  On a machine without a GPU,
# ODP_SERVICE_ENGINE=cpu and small sizes test the script (the in-backend
# calls with device = gpu then fail: no GPU).
#
#   ODP_SERVICE_ENGINE=gpu          odp_gpu.service_engine of the service rows
#   ODP_SB_MODES="backend service"  ODP_SB_STEPS="pool first concurrent warm"
#   ODP_SB_POOLS="150 500"          service pools  ODP_SB_BACKEND_POOLS=150
#   ODP_SB_POOL_ROWS=200000  ODP_SB_POOL_DIMS=32  ODP_SB_POOL_QUERIES=16
#   ODP_SB_POOL_LIMIT_S=90 (service)  ODP_SB_BACKEND_POOL_LIMIT_S=60
#       statement_timeout of each pool call; the script waits 15 s more
#   ODP_SB_NEW_SESSIONS=10
#   ODP_SB_CONCURRENT=40  ODP_SB_CONC_QUERIES=50000  ODP_SB_CONC_ROWS=400000
#   ODP_SB_CONC_DIMS=64  ODP_SB_CONC_LIMIT_S=120
#   ODP_SB_SCALE=0.1  ODP_SB_REPEAT=4
#   ODP_SB_DEVICE=gpu               odp_gpu.device of first (Pearson),
#                                   concurrent and warm
#   ODP_SB_MAX_CONNECTIONS=600      ODP_SB_KEEP=0 (1 keeps the tables)
#   ODP_SB_DEADLINE_S=450           a step that would begin less than 30 s
#                                   before it is skipped (noted), and the
#                                   pools' statement timeouts end before it
#
# On the GPU host, after make install:
#   OUT=/some/dir bash test/bench/service_bench.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/lib.sh
source "$here/../lib.sh"

engine=${ODP_SERVICE_ENGINE:-gpu}
modes=${ODP_SB_MODES:-"backend service"}
steps=${ODP_SB_STEPS:-"pool first concurrent warm"}
service_pools=${ODP_SB_POOLS:-"150 500"}
backend_pools=${ODP_SB_BACKEND_POOLS:-150}
pool_rows=${ODP_SB_POOL_ROWS:-200000}
pool_dims=${ODP_SB_POOL_DIMS:-32}
pool_q=${ODP_SB_POOL_QUERIES:-16}
pool_limit=${ODP_SB_POOL_LIMIT_S:-90}
backend_pool_limit=${ODP_SB_BACKEND_POOL_LIMIT_S:-60}
new_sessions=${ODP_SB_NEW_SESSIONS:-10}
conc=${ODP_SB_CONCURRENT:-40}
conc_q=${ODP_SB_CONC_QUERIES:-50000}
conc_rows=${ODP_SB_CONC_ROWS:-400000}
conc_dims=${ODP_SB_CONC_DIMS:-64}
conc_limit=${ODP_SB_CONC_LIMIT_S:-120}
scale=${ODP_SB_SCALE:-0.1}
repeat=${ODP_SB_REPEAT:-4}
device=${ODP_SB_DEVICE:-gpu}
max_conn=${ODP_SB_MAX_CONNECTIONS:-600}
keep=${ODP_SB_KEEP:-0}
out_dir=${OUT:-}

T=odp_sb
APP=odp_service_bench
K1=4177001	# advisory locks: the start barrier and the stay-connected one
K2=4177002
fc_rows=2048 fc_dims=8 fc_q=16 fp_series=64 fp_len=256
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)

work=$(mktemp -d /tmp/odp_service_bench.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
declare -A R=()		# R[key|mode] = a table cell
declare -A W=() WL=()	# the warm step's calls and their labels
notes=()
client_pids=()		# psql clients of the step under way
restarted=0
reported=1	# 0 once the steps begin: the table is then printed whatever happens
deadline=$(($(date +%s) + ${ODP_SB_DEADLINE_S:-450}))
# seconds left before the deadline (steps begun later are skipped)
time_left() { echo $((deadline - $(date +%s))); }
now() { date +%s.%N; }
start=$(now)
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "$*" | tee -a "$work/log"; }
note() { notes+=("$*"); say "  note: $*"; }
put() { R["$1|$2"]=$3; }
q1() { "${PSQL[@]}" -c "$1" 2>&1; }
# median and maximum of the numbers on stdin, "- -" when none
stats() {
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "- -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f %.1f\n", m, v[NR] }'
}
times_of() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'; }
key_of() { sed -n "s/.*[ (]$1=\\([^ )]*\\).*/\\1/p" | head -1; }
one_line() { tr '\n' ' ' | sed 's/  */ /g; s/ $//' | cut -c1-300; }
rows_of() { awk -v n="$1" -v s="$scale" 'BEGIN { r = int(n * s); print (r < 100 ? 100 : r) }'; }

# ---- the server: how it was started (test/lib.sh: odp_server_save), so
# that the script can restart it with more options and then as it was
odp_server_save || exit 1
orig_preload=$(q1 "SHOW shared_preload_libraries")
other_preload=$(tr -d ' "' <<<"$orig_preload" | tr ',' '\n' | grep -vx -e odp_gpu -e '' | paste -sd, -)
postmaster_pid() { q1 "SELECT split_part(pg_read_file('postmaster.pid'), E'\\n', 1)"; }

# restart EXTRA_OPTIONS: pg_ctl restart with the original options and EXTRA
restart() {
	local t0
	t0=$(now)
	if ! odp_server_restart "$1" >"$work/pg_ctl.log"; then
		say "  restart failed: $(one_line <"$work/pg_ctl.log"); server log: $ODP_SRV_LOG"
		tail -5 "$ODP_SRV_LOG" 2>/dev/null
		return 1
	fi
	say "  server restarted in $(secs "$t0") s (options: $ODP_SRV_OPTS $1)"
}
mode_opts() {
	case $1 in
		backend) echo "-c max_connections=$max_conn -c 'shared_preload_libraries=$other_preload'" ;;
		service) echo "-c max_connections=$max_conn -c 'shared_preload_libraries=odp_gpu${other_preload:+,$other_preload}' -c odp_gpu.service_engine=$engine" ;;
	esac
}
wants() { [[ " $steps " == *" $1 "* ]]; }
mode_name() { [ "$1" = backend ] && echo in-backend || echo service; }

# shellcheck disable=SC2317  # (run by the EXIT trap)
cleanup() {
	trap - EXIT INT TERM
	stop_clients
	[ "$reported" = 0 ] && report
	if [ "$keep" != 1 ]; then
		"${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $(all_tables)" >/dev/null 2>&1
	fi
	if [ "$restarted" = 1 ]; then
		say "== restoring the server's original options"
		restart "" || say "  the server could not be restarted with its original options: $ODP_SRV_OPTS"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'note "interrupted"; exit 130' INT TERM

# ---- the clients of a step: stop_clients ends those still running (ours)
stop_clients() {
	local p alive=()
	[ "${#client_pids[@]}" -eq 0 ] && return 0
	for p in "${client_pids[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
	if [ "${#alive[@]}" -gt 0 ]; then
		q1 "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '$APP'" >/dev/null
		sleep 1
		for p in "${alive[@]}"; do kill "$p" 2>/dev/null; done
	fi
	wait "${client_pids[@]}" 2>/dev/null
	client_pids=()
}
# counts the clients still running into $alive_n
count_alive() {
	local p
	alive_n=0
	for p in "${client_pids[@]}"; do kill -0 "$p" 2>/dev/null && alive_n=$((alive_n + 1)); done
}
# waits until no session of the benchmark is left in the server (30 s)
wait_gone() {
	local i
	for ((i = 0; i < 150; i++)); do
		[ "$(q1 "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$APP'")" = 0 ] && return 0
		sleep 0.2
	done
	say "  sessions of the benchmark still in the server after 30 s"
}

# ---- GPU memory and CUDA contexts: sets snap_apps (processes nvidia-smi
# lists), snap_apps_mib (their memory), snap_total_mib (memory used on all
# GPUs), snap_maps (server processes with /dev/nvidiaN mapped)
gpu_snapshot() {
	local apps p pm
	snap_apps=n/a snap_apps_mib=n/a snap_total_mib=n/a snap_maps=0 snap_pids=
	if command -v nvidia-smi >/dev/null; then
		apps=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null)
		snap_apps=$(grep -c '[0-9]' <<<"$apps")
		snap_pids=$(awk -F', *' '$1 ~ /^[0-9]+$/ { print $1 }' <<<"$apps" | head -5 | one_line)
		snap_apps_mib=$(awk -F', *' '$2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }' <<<"$apps")
		snap_total_mib=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null |
			awk '$1 ~ /^[0-9]+$/ { s += $1; n++ } END { if (n) print s; else print "n/a" }')
	fi
	pm=$(postmaster_pid)
	[[ $pm =~ ^[0-9]+$ ]] || { snap_maps=n/a; return 0; }
	for p in $pm $(ps -o pid= --ppid "$pm" 2>/dev/null); do
		grep -qs '/dev/nvidia[0-9]' "/proc/$p/maps" && snap_maps=$((snap_maps + 1))
	done
}

# ---- data, generated in SQL in parallel chunks
all_tables() {
	echo "${T}_pool_t, ${T}_pool_q, ${T}_fc_t, ${T}_fc_q, ${T}_fp, ${T}_cc_t, ${T}_cc_q," \
		"${T}_poker, ${T}_knn, ${T}_pearson, ${T}_sky, ${T}_iv_a, ${T}_iv_b"
}
running=0
seeds=0
spawn() {	# runs "$@" in the background, at most nproc at once
	if [ "$running" -ge "$(nproc)" ]; then wait -n; running=$((running - 1)); fi
	"$@" &
	running=$((running + 1))
}
gen_sql() {	# file sql: runs it, errors to file
	"${PSQL[@]}" -c "SET client_min_messages = warning" -c "$2" >/dev/null 2>"$work/gen.$1.err"
}
# gen TABLE COLUMNS ROWS CHUNKS BODY: BODY an INSERT's SELECT over
# generate_series(@LO@, @HI@) i
gen() {
	local t=$1 cols=$2 n=$3 chunks=$4 body=$5 c lo hi b
	gen_sql "$t.create" "DROP TABLE IF EXISTS $t; CREATE TABLE $t ($cols)" || return 1
	[ "$chunks" -gt "$n" ] && chunks=$n
	for ((c = 0; c < chunks; c++)); do
		lo=$((n * c / chunks + 1)); hi=$((n * (c + 1) / chunks))
		b=${body//@LO@/$lo}
		seeds=$((seeds + 1))
		spawn gen_sql "$t.$c" "SELECT setseed($((seeds % 1000)) / 1000.0); INSERT INTO $t ${b//@HI@/$hi}"
	done
}
vec() {	# rows dims: random uniform real[] rows
	echo "SELECT i::bigint, array(SELECT random()::real FROM generate_series(1, $2) WHERE i > 0) FROM generate_series(@LO@, @HI@) i"
}
load_data() {
	local par t0 n_poker n_knn n_pearson n_sky n_iv len f
	par=$(nproc)
	t0=$(now)
	say "== generating the tables"
	gen "${T}_pool_t" "id bigint, f real[]" "$pool_rows" "$par" "$(vec "$pool_rows" "$pool_dims")"
	gen "${T}_pool_q" "id bigint, f real[]" "$pool_q" 1 "$(vec "$pool_q" "$pool_dims")"
	gen "${T}_fc_t" "id bigint, f real[]" "$fc_rows" 1 "$(vec "$fc_rows" "$fc_dims")"
	gen "${T}_fc_q" "id bigint, f real[]" "$fc_q" 1 "$(vec "$fc_q" "$fc_dims")"
	gen "${T}_fp" "id bigint, v float8[]" "$fp_series" 1 \
		"SELECT i::bigint, array(SELECT 100 * exp(sum(ln(1 + 0.02 * (random() - 0.5))) OVER (ORDER BY t)) FROM generate_series(1, $fp_len) t WHERE i > 0) FROM generate_series(@LO@, @HI@) i"
	gen "${T}_cc_t" "id bigint, f real[]" "$conc_rows" "$par" "$(vec "$conc_rows" "$conc_dims")"
	gen "${T}_cc_q" "id bigint, f real[]" "$conc_q" "$par" "$(vec "$conc_q" "$conc_dims")"
	n_poker=$(rows_of 1000000) n_knn=$(rows_of 1000000) n_pearson=$(rows_of 16384) n_sky=$(rows_of 10000000)
	n_iv=$(rows_of 10000000)
	len=$(awk -v n="$n_iv" 'BEGIN { printf "%.0f", 1e12 * 100 / n }')
	gen "${T}_poker" "id bigint, f real[]" "$n_poker" "$par" \
		"SELECT i::bigint, (SELECT array_agg(v ORDER BY p, j) FROM (
			SELECT row_number() OVER () AS p, c FROM (SELECT c FROM generate_series(0, 51) c
				WHERE i > 0 ORDER BY random() LIMIT 5) d) h
			CROSS JOIN LATERAL (VALUES (1, (1 + c / 13)::real), (2, (1 + c % 13)::real)) x(j, v))
		FROM generate_series(@LO@, @HI@) i"
	gen "${T}_knn" "id bigint, f real[]" "$n_knn" "$par" "$(vec "$n_knn" 32)"
	gen "${T}_pearson" "id bigint, v float8[]" "$n_pearson" "$par" \
		"SELECT i::bigint, array(SELECT random() FROM generate_series(1, 4096) WHERE i > 0) FROM generate_series(@LO@, @HI@) i"
	gen "${T}_sky" "id bigint, v float8[]" "$n_sky" "$par" \
		"SELECT i::bigint, (SELECT array_agg(x / s ORDER BY o) FROM unnest(a) WITH ORDINALITY u(x, o), (SELECT sum(y) AS s FROM unnest(a) y) t)
		FROM (SELECT i, array[random(), random(), random(), random(), random(), random(), random(), random()] AS a FROM generate_series(@LO@, @HI@) i) r"
	gen "${T}_iv_a" "id bigint, r int8range" $((n_iv / 2)) "$par" \
		"SELECT i::bigint, int8range(lo, lo + $len) FROM (SELECT i, (random() * 1e12)::bigint AS lo FROM generate_series(@LO@, @HI@) i) s"
	gen "${T}_iv_b" "id bigint, r int8range" $((n_iv / 2)) "$par" \
		"SELECT i::bigint, int8range(lo, lo + $len) FROM (SELECT i, (random() * 1e12)::bigint AS lo FROM generate_series(@LO@, @HI@) i) s"
	wait
	running=0
	for f in "$work"/gen.*.err; do
		[ -s "$f" ] && { say "  generating failed: $(one_line <"$f")"; return 1; }
	done
	"${PSQL[@]}" -c "VACUUM ANALYZE $(all_tables)" >/dev/null 2>"$work/gen.vacuum.err" ||
		{ say "  VACUUM failed: $(one_line <"$work/gen.vacuum.err")"; return 1; }
	say "  generated in $(secs "$t0") s: pool $pool_rows x $pool_dims (queries $pool_q), new sessions $fc_q x $fc_rows x $fc_dims" \
		"and $fp_series series x $fp_len, concurrent $conc_q x $conc_rows x $conc_dims, warm: poker $n_poker, k-NN $n_knn x 32," \
		"Pearson $n_pearson x 4096, skyline $n_sky x 8, regions $n_iv"
	W[poker]="odp_top_outliers('${T}_poker', k => 50, n => 10, method => 'bruteforce')"
	WL[poker]="top outliers, card hands $n_poker x 10, k=50 n=10, brute force"
	W[knn]="odp_knn_join('${T}_knn', '${T}_knn', k => 10)"
	WL[knn]="k-NN self join $n_knn x 32, k=10"
	W[pearson]="odp_pearson('${T}_pearson', min_abs_r => 0.1)"
	WL[pearson]="Pearson pairs $n_pearson x 4096, |r| >= 0.1"
	W[sky]="odp_skyline('${T}_sky')"
	WL[sky]="skyline $n_sky x 8 anti-correlated"
	W[iv]="odp_interval_match_count('${T}_iv_a', '${T}_iv_b')"
	WL[iv]="region count $n_iv extents, alpha=100"
}
# reads every table once after a restart (heap and TOAST into shared buffers)
warm_tables() {
	local t
	for t in pool_t cc_t cc_q knn poker; do
		spawn "${PSQL[@]}" -c "SELECT sum(array_length(f, 1)) FROM ${T}_$t" >/dev/null 2>&1
	done
	for t in pearson sky; do
		spawn "${PSQL[@]}" -c "SELECT sum(array_length(v, 1)) FROM ${T}_$t" >/dev/null 2>&1
	done
	spawn "${PSQL[@]}" -c "SELECT count(*) FROM ${T}_iv_a, (SELECT count(*) FROM ${T}_iv_b) b GROUP BY b.count" >/dev/null 2>&1
	wait
	running=0
}

# a statement to the session holding the locks (an error, not SIGPIPE, if
# it has gone)
lock_send() { (trap '' PIPE; printf '%s\n' "$2" >&"$1") 2>/dev/null; }

# ---- pool KEY MODE SESSIONS LIMIT_S CALL SETTING...: SESSIONS clients
# released together run SELECT count(*) FROM CALL (after the SETTINGs),
# stay connected until all have answered; sets the cells of KEY
pool() {
	local key=$1 mode=$2 n=$3 limit=$4 call=$5; shift 5
	local dir=$work/$key.$mode fd locker i t0 waiting f alive_n=0 left answered errors a
	local on_gpu on_cpu first last ms connected
	mkdir -p "$dir"
	# the calls end before the deadline
	[ "$limit" -gt "$(($(time_left) - 25))" ] && limit=$(($(time_left) - 25))
	[ "$limit" -lt 5 ] && limit=5
	{
		echo "SET application_name = '$APP';"
		printf '%s;\n' "$@"
		echo "SET odp_gpu.report_timing = on;"
		echo "SELECT 'ready';"
		echo "SELECT pg_advisory_lock_shared($K1);"
		echo "SELECT pg_advisory_unlock_shared($K1);"
		echo "SET statement_timeout = '${limit}s';"
		echo "SELECT 'start ' || extract(epoch FROM clock_timestamp());"
		echo "SELECT 'result ' || count(*) FROM $call;"
		echo "SELECT 'end ' || extract(epoch FROM clock_timestamp());"
		echo "RESET statement_timeout;"
		echo "SELECT pg_advisory_lock_shared($K2);"
	} >"$dir/client.sql"
	# the barriers: a session of the script holds both locks exclusively
	mkfifo "$dir/lock.fifo"
	psql -X -q -At <"$dir/lock.fifo" >"$dir/lock.out" 2>&1 &
	locker=$!
	exec {fd}>"$dir/lock.fifo"
	lock_send "$fd" "SELECT pg_advisory_lock($K1), pg_advisory_lock($K2);"
	for ((i = 0; i < 150; i++)); do
		[ "$(q1 "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid IN ($K1, $K2) AND mode = 'ExclusiveLock' AND granted")" = 2 ] && break
		sleep 0.2
	done
	if [ "$i" -eq 150 ]; then
		say "  $key: the barrier locks could not be taken: $(one_line <"$dir/lock.out")"
		exec {fd}>&-
		wait "$locker"
		return 1
	fi
	t0=$(now)
	for ((i = 1; i <= n; i++)); do
		# (without the locks' pipe: the session holding them ends when the
		# script closes it)
		psql -X -q -At -f "$dir/client.sql" </dev/null >"$dir/c$i.out" 2>"$dir/c$i.err" {fd}>&- &
		client_pids[i]=$!
	done
	# every client is about to wait on the first lock (its ready line: psql
	# writes each result at once), or has given up (connection refused)
	for ((i = 0; ; i++)); do
		waiting=$(grep -l '^ready' "$dir"/c*.out 2>/dev/null | wc -l)
		count_alive
		[ "$((waiting + n - alive_n))" -ge "$n" ] && break
		if [ "$i" -ge 600 ]; then
			note "$key ($(mode_name "$mode")): $waiting of $n sessions connected after 120 s; released anyway"
			break
		fi
		sleep 0.2
	done
	sleep 0.3
	say "  $n clients started, $waiting connected and waiting after $(secs "$t0") s ($(q1 "SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND objid = $K1 AND NOT granted" | one_line) on the lock); released"
	lock_send "$fd" "SELECT pg_advisory_unlock($K1);"
	t0=$(now)
	# every client has printed its end line, or has exited
	while :; do
		left=0
		while read -r f; do
			[ -n "$f" ] || continue
			i=${f##*/c}; i=${i%.out}
			kill -0 "${client_pids[i]}" 2>/dev/null && left=$((left + 1))
		done < <(grep -L '^end ' "$dir"/c*.out)
		[ "$left" -eq 0 ] && break
		if awk -v a="$t0" -v b="$(now)" -v l="$limit" 'BEGIN { exit !(b - a > l + 15) }'; then
			note "$key ($(mode_name "$mode")): $left sessions still without an answer after $((limit + 15)) s"
			break
		fi
		sleep 0.2
	done
	# all answered (or given up) and still connected: the GPU now
	gpu_snapshot
	connected=$(q1 "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$APP'")
	[[ $connected =~ ^[0-9]+$ ]] || { say "  counting the sessions failed: $(one_line <<<"$connected")"; connected="?"; }
	exec {fd}>&-
	wait "$locker"
	for ((i = 0; i < 150; i++)); do
		count_alive
		[ "$alive_n" -eq 0 ] && break
		sleep 0.2
	done
	stop_clients
	wait_gone

	# the clients' lines: answered start end
	awk '/^start / { s[FILENAME] = $2 } /^end / { e[FILENAME] = $2 } /^result / { r[FILENAME] = 1 }
		END { for (f in s) print ((f in r) ? 1 : 0), s[f], ((f in e) ? e[f] : "") }' "$dir"/c*.out >"$dir/clients.txt"
	answered=$(awk '$1 == 1' "$dir/clients.txt" | wc -l)
	errors=$(grep -lE 'ERROR:|FATAL:|psql: error' "$dir"/c*.err 2>/dev/null | wc -l)
	on_gpu=$(cat "$dir"/c*.err | grep 'odp_gpu timing' | grep -c ' path=gpu ')
	on_cpu=$(cat "$dir"/c*.err | grep 'odp_gpu timing' | grep -c ' path=cpu ')
	first=$(awk 'NR == 1 || $2 < m { m = $2 } END { print m }' "$dir/clients.txt")
	last=$(awk '$3 != "" && (!n++ || $3 > m) { m = $3 } END { print m }' "$dir/clients.txt")
	ms=$(awk '$1 == 1 && $3 != "" { printf "%.3f\n", 1000 * ($3 - $2) }' "$dir/clients.txt" | stats)
	put "$key.answered" "$mode" "$answered / $errors"
	put "$key.path" "$mode" "$on_gpu / $on_cpu"
	[ -n "$first" ] && [ -n "$last" ] &&
		put "$key.wall" "$mode" "$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.2f", b - a }')"
	put "$key.ms" "$mode" "${ms% *} / ${ms#* }"
	put "$key.mem" "$mode" "$snap_apps_mib / $snap_total_mib"
	put "$key.procs" "$mode" "$snap_apps / $snap_maps"
	put "$key.connected" "$mode" "$connected"
	say "  $key ($(mode_name "$mode")): $answered of $n answered, $errors with an error, $on_gpu on the GPU," \
		"last reply after ${R[$key.wall|$mode]:-?} s; GPU MiB held $snap_apps_mib (total $snap_total_mib)," \
		"CUDA processes $snap_apps${snap_pids:+ (pids $snap_pids)} (maps: $snap_maps), $connected connected at the measure"
	if [ "$errors" -gt 0 ]; then
		while read -r a; do
			note "$key ($(mode_name "$mode")) error x $a"
		done < <(cat "$dir"/c*.err | grep -E 'ERROR:|FATAL:|psql: error' |
			sed -E -e 's/^psql:[^:]*:[0-9]+: //' -e 's/socket "[^"]*"/socket/' | sort | uniq -c | sort -rn | head -3 |
			sed -E 's/^ *([0-9]+) /\1: /' | cut -c1-240)
	fi
}

# ---- first_call KEY MODE CALL SETTING...: the first and second call of
# ODP_SB_NEW_SESSIONS new sessions, the medians
first_call() {
	local key=$1 mode=$2 call=$3; shift 3
	local sets=() s i out tm firsts=() seconds=() paths="" err=0 msg="" queued=()
	for s in "$@"; do sets+=(-c "$s"); done
	for ((i = 0; i < new_sessions; i++)); do
		out=$("${PSQL[@]}" "${sets[@]}" -c "SET odp_gpu.report_timing = on" -c '\timing on' \
			-c "SELECT count(*) FROM $call" -c "SELECT count(*) FROM $call" 2>&1)
		tm=$(times_of <<<"$out")
		if [ "$(wc -l <<<"$tm")" -lt 2 ] || [ -z "$tm" ]; then
			err=$((err + 1)); [ -n "$msg" ] || msg=$(grep -E 'ERROR|FATAL|error' <<<"$out" | head -2 | one_line)
			continue
		fi
		firsts+=("$(sed -n 1p <<<"$tm")"); seconds+=("$(sed -n 2p <<<"$tm")")
		paths+="$(grep 'odp_gpu timing' <<<"$out" | head -1 | key_of path) "
		s=$(grep 'odp_gpu timing' <<<"$out" | head -1 | key_of queued)
		[ -n "$s" ] && queued+=("$s")
	done
	[ "${#firsts[@]}" -gt 0 ] && put "$key.first" "$mode" "$(printf '%s\n' "${firsts[@]}" | stats | cut -d' ' -f1)"
	[ "${#seconds[@]}" -gt 0 ] && put "$key.second" "$mode" "$(printf '%s\n' "${seconds[@]}" | stats | cut -d' ' -f1)"
	say "  $key ($(mode_name "$mode")): first calls ${firsts[*]:-none} ms, second ${seconds[*]:-none} ms," \
		"paths ${paths:-none}${queued[*]:+, queued ${queued[*]} ms}"
	[ "$err" -gt 0 ] && note "$key ($(mode_name "$mode")): $err of $new_sessions sessions failed: $msg"
	return 0
}

# ---- warm_call KEY MODE CALL: ODP_SB_REPEAT calls in one session; the
# cell is the median of calls 2..
warm_call() {
	local key=$1 mode=$2 call=$3 args=() i out tm nt
	for ((i = 0; i < repeat; i++)); do args+=(-c "SELECT count(*) FROM $call"); done
	out=$("${PSQL[@]}" -c "SET odp_gpu.device = $device" -c "SET odp_gpu.report_timing = on" \
		-c '\timing on' "${args[@]}" 2>&1)
	tm=$(times_of <<<"$out")
	if [ "$(grep -c . <<<"$tm")" -lt "$repeat" ]; then
		note "$key ($(mode_name "$mode")) failed: $(grep -E 'ERROR|FATAL|error' <<<"$out" | head -2 | one_line)"
		return 0
	fi
	put "$key" "$mode" "$(tail -n +2 <<<"$tm" | stats | cut -d' ' -f1)"
	nt=$(grep 'odp_gpu timing' <<<"$out" | tail -1)
	say "  $key ($(mode_name "$mode")): calls $(tr '\n' ' ' <<<"$tm")ms; the last: path=$(key_of path <<<"$nt")" \
		"compute=$(key_of compute <<<"$nt") ms${nt:+ queued=$(key_of queued <<<"$nt") ms}"
}

# late STEP: whether the deadline (ODP_SB_DEADLINE_S) is near, noting
# that STEP is skipped
late() {
	[ "$(time_left)" -ge 30 ] && return 1
	note "$1 ($(mode_name "$mode")) skipped: $(time_left) s left before ODP_SB_DEADLINE_S"
}

# ---- one mode: restart, then the steps
run_mode() {
	local mode=$1 p pools s
	say "== $(mode_name "$mode") mode"
	restarted=1
	restart "$(mode_opts "$mode")" || { note "$(mode_name "$mode") mode skipped: the server did not restart"; return 1; }
	say "  shared_preload_libraries = '$(q1 "SHOW shared_preload_libraries")', max_connections = $(q1 "SHOW max_connections")"
	warm_tables
	if [ "$mode" = service ]; then
		s=$(now)
		odp_service_wait 2>"$work/ready.err" || note "the service is not ready: $(one_line <"$work/ready.err")"
		say "  service ready after $(secs "$s") s of waiting, its process:" \
			"$(pgrep -a -P "$(postmaster_pid)" -f 'odp_gpu service' | one_line)"
		"${PSQL[@]}" -c "SET odp_gpu.device = gpu" -c "SELECT count(*) FROM odp_pearson('${T}_fp', min_abs_r => 0.9)" >/dev/null 2>&1
		pools=$service_pools
	else
		pools=$backend_pools
	fi
	gpu_snapshot
	put idle.mem "$mode" "$snap_apps_mib / $snap_total_mib"
	put idle.procs "$mode" "$snap_apps / $snap_maps"
	say "  idle: GPU MiB held $snap_apps_mib (total $snap_total_mib), CUDA processes $snap_apps${snap_pids:+ (pids $snap_pids)} (maps: $snap_maps)"
	if wants pool; then
		for p in $pools; do
			late "pool of $p sessions" && continue
			say "-- pool of $p sessions"
			pool "pool$p" "$mode" "$p" "$([ "$mode" = service ] && echo "$pool_limit" || echo "$backend_pool_limit")" \
				"odp_knn_join('${T}_pool_q', '${T}_pool_t', k => 10)" "SET odp_gpu.device = auto"
		done
	fi
	if wants first && ! late "first calls"; then
		say "-- first calls of new sessions"
		first_call fknn "$mode" "odp_knn_join('${T}_fc_q', '${T}_fc_t', k => 10)" "SET odp_gpu.device = auto"
		first_call fpearson "$mode" "odp_pearson('${T}_fp', min_abs_r => 0.9)" "SET odp_gpu.device = $device"
	fi
	if wants concurrent && ! late "concurrent joins"; then
		say "-- $conc concurrent k-NN joins"
		pool conc "$mode" "$conc" "$conc_limit" "odp_knn_join('${T}_cc_q', '${T}_cc_t', k => 10)" "SET odp_gpu.device = $device"
	fi
	if wants warm && ! late "warm calls"; then
		say "-- warm whole calls"
		for s in poker knn pearson sky iv; do
			[ -n "${W[$s]:-}" ] && warm_call "w$s" "$mode" "${W[$s]}"
		done
	fi
}

# ---- the table: measure, in-backend, service, service / in-backend
fmt='%-68s %17s %17s %9s\n'
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a > 0 && b > 0) printf "%.3f", b / a; else print "-" }'
}
row() {	# key label [1: with the ratio [the answered / errors cells' key:
	# no ratio where either side had errors]]
	local b=${R[$1|backend]:--} s=${R[$1|service]:--} r=-
	[ "${3:-0}" = 1 ] && r=$(ratio "$b" "$s")
	if [ "$r" != - ] && [ -n "${4:-}" ] && { [[ ${R[$4|backend]:-} != *" / 0" ]] || [[ ${R[$4|service]:-} != *" / 0" ]]; }; then
		r="(errors)"
	fi
	# shellcheck disable=SC2059
	printf "$fmt" "$2" "$b" "$s" "$r"
}
print_table() {
	local p sizes=""
	[[ " $modes " == *" backend "* ]] && sizes+=" $backend_pools"
	[[ " $modes " == *" service "* ]] && sizes+=" $service_pools"
	echo
	echo "== odp_gpu service benchmark: in-backend GPU use against the GPU service (service_engine = $engine)"
	# shellcheck disable=SC2059
	printf "$fmt" measure in-backend service "svc/in-bk"
	row idle.mem "after the restart, idle: GPU MiB held by processes / used in all"
	row idle.procs "  processes with a CUDA context: nvidia-smi / with a GPU mapped"
	if wants pool; then
		for p in $(tr ' ' '\n' <<<"$sizes" | grep . | sort -nu); do
			row "pool$p.answered" "pool of $p sessions, k-NN $pool_q x $pool_rows x $pool_dims (auto): answered / errors"
			row "pool$p.path" "  calls on the GPU / on the CPU (timing NOTICE)"
			row "pool$p.wall" "  from the release to the last reply, s" 1 "pool$p.answered"
			row "pool$p.ms" "  call time, median / max, ms"
			row "pool$p.mem" "  all still connected: GPU MiB held by processes / used in all"
			row "pool$p.procs" "  processes with a CUDA context: nvidia-smi / with a GPU mapped"
			row "pool$p.connected" "  sessions connected at that moment"
		done
	fi
	if wants first; then
		row fknn.first "first k-NN call of a new session, $fc_q x $fc_rows x $fc_dims (auto), median ms" 1
		row fknn.second "  the second call of that session, median ms" 1
		row fpearson.first "first Pearson call of a new session, $fp_series x $fp_len ($device), median ms" 1
		row fpearson.second "  the second call of that session, median ms" 1
	fi
	if wants concurrent; then
		row conc.answered "$conc concurrent k-NN joins $conc_q x $conc_rows x $conc_dims ($device): answered / errors"
		row conc.wall "  from the release until all have finished, s" 1 conc.answered
		row conc.ms "  call time, median / max, ms"
		row conc.mem "  all still connected: GPU MiB held by processes / used in all"
		row conc.procs "  processes with a CUDA context: nvidia-smi / with a GPU mapped"
	fi
	if wants warm; then
		printf '%s\n' "warm whole call of each analytic (device = $device), ms:"
		row wpoker "  ${WL[poker]:-top outliers}" 1
		row wknn "  ${WL[knn]:-k-NN join}" 1
		row wpearson "  ${WL[pearson]:-Pearson pairs}" 1
		row wsky "  ${WL[sky]:-skyline}" 1
		row wiv "  ${WL[iv]:-region matching}" 1
	fi
	echo "(in-backend: odp_gpu not preloaded, each backend its own CUDA context; service: odp_gpu preloaded;"
	printf ' both with max_connections = %s; first calls: timed by psql in a new session, %s sessions;\n' "$max_conn" "$new_sessions"
	echo " warm: median of calls 2 to $repeat of one session; svc/in-bk: service / in-backend, lower is better)"
	if [ "${#notes[@]}" -gt 0 ]; then
		echo "notes:"
		printf '  %s\n' "${notes[@]}"
	fi
	echo "(benchmark took $(secs "$start") s)"
}

# prints the table, also to $OUT
report() {
	reported=1
	print_table | tee "$work/table.txt"
	if [ -n "$out_dir" ]; then
		mkdir -p "$out_dir"
		cp "$work/table.txt" "$out_dir/service_bench.txt"
		cp "$work/log" "$out_dir/service_bench.log"
	fi
}

say "== odp_gpu service benchmark, $(date -u '+%F %H:%M UTC')"
say "host: GPU $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 || true);" \
	"$(nproc) CPUs; $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
say "server: $(q1 "SELECT split_part(version(), ' on ', 1)"), data $(q1 "SHOW data_directory"), log $ODP_SRV_LOG"
say "its options: ${ODP_SRV_OPTS:-none}; preloaded: '$orig_preload' (restored at the end)"
"${PSQL[@]}" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu" >/dev/null 2>"$work/ext.err" ||
	{ echo "CREATE EXTENSION odp_gpu failed: $(one_line <"$work/ext.err")"; exit 1; }
load_data || note "generating the tables failed; the steps that need them fail"
reported=0
for m in $modes; do
	case $m in
		backend|service) run_mode "$m" ;;
		*) note "unknown mode $m (backend, service)" ;;
	esac
done
report
exit 0
