#!/usr/bin/env bash
#
# datapath_bench.sh
#	  The whole data path of each analytic's call, phase by phase, beside
#	  what PostgreSQL itself needs for the same table and the same result,
#	  and beside the bus's pinned cudaMemcpy speed (issue 41): the source
#	  of README's performance tables.
#
# Workloads (WORKLOADS, SCALE times their rows):
#   pearson   odp_pearson of 4,096 random walks x 16,384 float8[] (TOASTed
#             arrays), |r| >= 0.9;
#   knn       odp_knn_join of 50,000 queries against 400,000 rows x 64
#             real[], k = 10;
#   outliers  odp_top_outliers (k = 10, n = 10) of 202,599 x 39 values of
#             0/1: ADBench's CelebA where the data sets are on the machine,
#             else a random stand-in (the table's title says which);
#   skyline   odp_skyline of 494,021 x 6 integer-valued float8[]: KDD Cup
#             1999 10% (duration, src_bytes, dst_bytes, count, srv_count,
#             dst_host_count) where present, else a random stand-in;
#   regions   odp_interval_match_count of 10^6 tstzrange with itself;
#   pairs     odp_interval_match of those 10^6 against 10^4 probes (about
#             2.8 M pairs at SCALE 1).
# For each, in each mode, one markdown table (stdout; progress on stderr)
# whose rows are the warm call (the best of REPS calls of one session after
# a first) and the first call (the only call of a brand-new psql session),
# each with:
#   - PostgreSQL's own scan of the input tables (sum(array_length(col, 1))
#     for arrays, which detoasts them; count(col) for ranges) with 0 and N
#     workers, planned with no parallel costs as read_bench.sh does, the
#     best of REPS runs after a first; N is WORKERS where set, else the
#     workers the call's read took (PostgreSQL's own sizing of the table,
#     TOAST included), else 4;
#   - the call's phases from its odp_gpu.report_timing NOTICE: read (of
#     every input table), its workers, transfer (ms, and GB/s = the input
#     bytes / the transfer time, beside the pinned reference and the ratio),
#     compute, output, other (no phase), total (inside the function);
#   - the whole statement as psql times it (SELECT count(*) FROM the call:
#     the executor's reading of the result included, no rows to the client);
#   - PostgreSQL's own set-returning function of as many rows with the
#     result's column types, SELECT count(*) FROM (SELECT i::bigint, ...
#     FROM generate_series(1, R) i) s, timed in the same run.
# Input bytes: rows x dims x 4 (real[]) or 8 (float8[]; a tstzrange is two
# 8-byte bounds) plus an 8-byte id per row, of every input table.
# The pinned reference is test/bench/pinned_copy_bench.cu (built here with
# CUDA_HOME's nvcc where a GPU is present): host-to-device cudaMemcpy from
# cudaHostAlloc'd memory, 64 MB and 512 MB; the ratio uses the size nearer
# the input's.
#
# Modes (MODES), the server restarted for each with its own options plus:
#   service  -c shared_preload_libraries=odp_gpu (the GPU service at server
#            defaults; -c odp_gpu.service_engine=cpu as well where
#            SERVICE_ENGINE=cpu, the default when DEVICE=cpu, and the calls
#            then use odp_gpu.device = gpu so that they go through it),
#            -c odp_gpu.table_cache=off: every call reads its tables;
#   cache    the same with the table cache on (its default): the first call
#            reads the vacuumed tables and keeps them, the next ones take
#            them from the cache;
#   backend  odp_gpu not preloaded;
#   mindsm   odp_gpu not preloaded, -c min_dynamic_shared_memory=MIN_DSM
#            (3GB: the recipe before issue 41);
#   streamed the service with -c odp_gpu.staging_size=0 and the table cache
#            off: every input streams to the service through its ring, as
#            inputs that find no room in the staging area do, and goes on
#            to the GPU as it arrives; a line under the table gives the
#            stream phase (stream=, outside the others) and the bytes that
#            went on to the GPU that way.  Not in the default MODES.
# Libraries preloaded besides odp_gpu stay; service and backend set
# min_dynamic_shared_memory=0 (the default) in case the server's own
# options set it.  At the end, also after a failure or an interrupt, the
# server is restarted with its original options.  Where it cannot be
# restarted (no superuser, not the data directory's owner), only the
# server as it runs is measured, and the output says so.
#
# Usage: test/bench/datapath_bench.sh [SCALE]
#   SCALE (default 1) multiplies every table's rows (at least 100 each).
#   MODES="service cache backend mindsm" (or streamed)  DEVICE=gpu (odp_gpu.device)
#   WORKLOADS="pearson knn outliers skyline regions pairs"  REPS=3
#   WORKERS: N, and the workers of the calls' reads too (the tables'
#   parallel_workers, max_parallel_workers_per_gather); unset: as above
#   SERVICE_ENGINE  MIN_DSM=3GB
#   SRF_WORK_MEM=1GB (work_mem of PostgreSQL's SRF; empty: the server's)
#   CUDA_HOME=/usr/local/cuda  ODP_DATASETS (default ../shared/datasets
#   beside the checkout)  KEEP_TABLES=1 keeps the tables (dp_*) for a later
#   run of the same SCALE.
# Needs a running server (PGHOST etc.) with odp_gpu installed, a superuser
# connection, and root or the data directory's owner for the restarts.
# A benchmark, not a test: speed never fails it; a call that errors does
# (the other workloads still run; the exit status is 1).
#
# Copyright (c) 2026, odp_gpu developers
#
# IDENTIFICATION
#	  test/bench/datapath_bench.sh
#
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=test/lib.sh
source "$here/../lib.sh"

SCALE=${1:-1}
REPS=${REPS:-3}
DEVICE=${DEVICE:-gpu}
MODES=${MODES:-service cache backend mindsm}
WORKLOADS=${WORKLOADS:-pearson knn outliers skyline regions pairs}
WORKERS=${WORKERS:-}
MIN_DSM=${MIN_DSM:-3GB}
SRF_WORK_MEM=${SRF_WORK_MEM-1GB}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ -z "${SERVICE_ENGINE:-}" ]; then
	SERVICE_ENGINE=gpu
	[ "$DEVICE" = cpu ] && SERVICE_ENGINE=cpu
fi
for d in "${ODP_DATASETS:-}" "$root/../shared/datasets" "$root/shared/datasets" /work/shared/datasets; do
	[ -n "$d" ] && [ -d "$d" ] && { DATASETS=$d; break; }
done
DATASETS=${DATASETS:-${ODP_DATASETS:-$root/../shared/datasets}}
# shellcheck source=test/bench/bench_lib.sh
source "$here/bench_lib.sh"

work=$(mktemp -d /tmp/odp_datapath_bench.XXXXXX)
chmod 755 "$work"
failed=0
restarted=0
notes=()
say() { printf '[%4d s] %s\n' "$SECONDS" "$*" >&2; }
note() { notes+=("$*"); say "note: $*"; }
q1() { "${PSQL[@]}" -c "$1" 2>&1; }
one_line() { tr '\n' ' ' | sed 's/  */ /g; s/ $//' | cut -c1-300; }

# ---- the pinned-copy reference (GB/s), "-" where there is none
PIN64=- PIN512=- PAGE64=- PAGE512=-
pinned_reference() {
	local out
	if ! nvidia-smi -L >/dev/null 2>&1; then
		note "no GPU here (nvidia-smi): no pinned cudaMemcpy reference"
		return 0
	fi
	if [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
		note "no nvcc at $CUDA_HOME/bin: no pinned cudaMemcpy reference (set CUDA_HOME)"
		return 0
	fi
	say "== building and running test/bench/pinned_copy_bench.cu"
	if ! "$CUDA_HOME/bin/nvcc" -O2 -o "$work/pinned_copy_bench" "$here/pinned_copy_bench.cu" 2>"$work/nvcc.err"; then
		note "pinned_copy_bench.cu did not build: $(one_line <"$work/nvcc.err")"
		return 0
	fi
	if ! out=$("$work/pinned_copy_bench" 2>&1); then
		note "pinned_copy_bench failed: $(one_line <<<"$out")"
		return 0
	fi
	PIN64=$(awk '$1 == "pinned_64MB" { print $2 }' <<<"$out")
	PIN512=$(awk '$1 == "pinned_512MB" { print $2 }' <<<"$out")
	PAGE64=$(awk '$1 == "pageable_64MB" { print $2 }' <<<"$out")
	PAGE512=$(awk '$1 == "pageable_512MB" { print $2 }' <<<"$out")
}

# ---- the data
N_SERIES=$(bench_rows 4096)
SERIES_LEN=16384
N_QUERIES=$(bench_rows 50000)
N_POINTS=$(bench_rows 400000)
N_BITS=$(bench_rows 202599)
N_KDD=$(bench_rows 494021)
N_REGIONS=$(bench_rows 1000000)
N_PROBES=$(bench_rows 10000)
CELEBA=$DATASETS/adbench_classical/csv/8_celeba.csv.gz
KDD=$DATASETS/kddcup99/kddcup.data_10_percent.gz
all_tables=()

# have TABLE ROWS: whether TABLE exists with ROWS rows (a KEEP_TABLES
# run's, or this run's: it is made once)
have() {
	all_tables+=("$1")
	[ "$(q1 "SELECT to_regclass('$1') IS NOT NULL")" = t ] &&
		[ "$(q1 "SELECT count(*) FROM $1")" = "$2" ]
}
# head_of FILE N: the first N lines of gzipped FILE (zcat ends on a broken
# pipe where N is less than all)
head_of() { { zcat "$1" 2>/dev/null || :; } | head -n "$2"; }
# load TABLE COLUMNS: a new TABLE filled from COPY text on stdin
load() {
	"${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $1" \
		-c "CREATE TABLE $1 ($2)" -c "COPY $1 FROM STDIN" -c "VACUUM ANALYZE $1"
}
gen() { all_tables+=("$1"); bench_gen "$@"; }
# from_file_or_gen FILE T AWK T2 COLUMNS N SQL SEED TITLE TITLE2: table T
# of the first N rows of gzipped FILE through AWK (COPY text) where FILE is
# readable, else T2 generated by SQL; sets t to the table made and W_TITLE
# to its title
from_file_or_gen() {
	if [ -r "$1" ]; then
		t=$2 W_TITLE=$9
		have "$t" "$6" || head_of "$1" "$6" | awk -F, "$3" | load "$t" "$5"
	else
		t=$4 W_TITLE=${10}
		gen "$t" "$5" "$6" "$7" "$8"
	fi
}

vec() {	# dims: uniform real[] rows
	echo "SELECT i, array(SELECT random()::real FROM generate_series(1, $1) WHERE i > 0) FROM generate_series(@LO@, @HI@) i"
}
# Regions: starts uniform over 3e7 s, lengths exp(U * 11.4) s (mean 7,835
# s); probes of 600 s among them meet N * (7,835 + 600) / 3e7 regions
# each: 10^4 probes x 10^6 regions give about 2.8 M pairs.
regions_sql() {	# length expression in seconds
	echo "SELECT i, tstzrange(t, t + make_interval(secs => $1))
		FROM (SELECT i, timestamptz '2026-01-01' + make_interval(secs => random() * 3e7) AS t
			  FROM generate_series(@LO@, @HI@) i) s"
}

# make_tables WORKLOAD: creates its tables and sets, for the workload:
# W_TITLE, W_TABLES (table:column ...), W_CALL (the statement), W_EB (input
# bytes per dimension of a row), W_SRF (the result's columns as
# expressions of i)
make_tables() {
	local t u
	case $1 in
	pearson)
		t=dp_walks_${N_SERIES}
		gen "$t" "id bigint PRIMARY KEY, v float8[]" "$N_SERIES" \
			"SELECT i, array(SELECT 100 * exp(sum(ln(1 + 0.02 * (random() - 0.5))) OVER (ORDER BY s))
				FROM generate_series(1, $SERIES_LEN) s WHERE i > 0) FROM generate_series(@LO@, @HI@) i" 1 || return 1
		W_TITLE="odp_pearson: $N_SERIES random walks x $SERIES_LEN float8[] (TOASTed), |r| >= 0.9"
		W_TABLES="$t:v"
		W_CALL="SELECT count(*) FROM odp_pearson('$t', min_abs_r => 0.9)"
		W_EB=8 W_SRF="i::bigint, (i + 1)::bigint, i::float8" ;;
	knn)
		t=dp_knn_q_${N_QUERIES} u=dp_knn_t_${N_POINTS}
		gen "$t" "id bigint PRIMARY KEY, f real[]" "$N_QUERIES" "$(vec 64)" 2 &&
			gen "$u" "id bigint PRIMARY KEY, f real[]" "$N_POINTS" "$(vec 64)" 3 || return 1
		W_TITLE="odp_knn_join: $N_QUERIES queries x $N_POINTS rows x 64 real[], k = 10"
		W_TABLES="$u:f $t:f"
		W_CALL="SELECT count(*) FROM odp_knn_join('$t', '$u', k => 10)"
		W_EB=4 W_SRF="i::bigint, i::integer, (i + 1)::bigint, i::float8" ;;
	outliers)
		from_file_or_gen "$CELEBA" "dp_celeba_${N_BITS}" \
			'{ s = $1; for (j = 2; j <= 39; j++) s = s "," $j; print NR "\t{" s "}" }' \
			"dp_bits_${N_BITS}" "id bigint PRIMARY KEY, f real[]" "$N_BITS" \
			"SELECT i, array(SELECT (random() < 0.3)::int::real FROM generate_series(1, 39) WHERE i > 0) FROM generate_series(@LO@, @HI@) i" 4 \
			"odp_top_outliers: CelebA (ADBench 8_celeba) $N_BITS x 39 of 0/1, k = 10, n = 10" \
			"odp_top_outliers: $N_BITS x 39 random 0/1 (P(1) = 0.3; a stand-in: no $CELEBA), k = 10, n = 10" || return 1
		W_TABLES="$t:f"
		W_CALL="SELECT count(*) FROM odp_top_outliers('$t', k => 10, n => 10)"
		W_EB=4 W_SRF="i::integer, i::bigint, i::float8" ;;
	skyline)
		from_file_or_gen "$KDD" "dp_kdd_${N_KDD}" '{ print NR "\t{" $1 "," $5 "," $6 "," $23 "," $24 "," $32 "}" }' \
			"dp_sky_${N_KDD}" "id bigint PRIMARY KEY, v float8[]" "$N_KDD" \
			"SELECT i, array(SELECT floor(random() * 40) FROM generate_series(1, 6) WHERE i > 0) FROM generate_series(@LO@, @HI@) i" 5 \
			"odp_skyline: KDD Cup 1999 10% $N_KDD x 6 (duration, src_bytes, dst_bytes, count, srv_count, dst_host_count) float8[]" \
			"odp_skyline: $N_KDD x 6 random integers 0-39 float8[] (a stand-in for KDD Cup 1999: no $KDD)" || return 1
		W_TABLES="$t:v"
		W_CALL="SELECT count(*) FROM odp_skyline('$t')"
		W_EB=8 W_SRF="i::bigint, i::integer" ;;
	regions|pairs)
		t=dp_regions_${N_REGIONS}
		gen "$t" "id bigint PRIMARY KEY, r tstzrange" "$N_REGIONS" "$(regions_sql "exp(random() * 11.4)")" 6 || return 1
		W_EB=16
		if [ "$1" = regions ]; then
			W_TITLE="odp_interval_match_count: $N_REGIONS tstzrange with themselves"
			W_TABLES="$t:r"
			W_CALL="SELECT odp_interval_match_count('$t', dims => '{r}')"
			W_SRF="i::bigint"
		else
			u=dp_probes_${N_PROBES}
			gen "$u" "id bigint PRIMARY KEY, r tstzrange" "$N_PROBES" "$(regions_sql 600)" 7 || return 1
			W_TITLE="odp_interval_match: $N_REGIONS tstzrange x $N_PROBES probes"
			W_TABLES="$t:r $u:r"
			W_CALL="SELECT count(*) FROM odp_interval_match('$t', '$u', dims => '{r}')"
			W_SRF="i::bigint, (i + 1)::bigint"
		fi ;;
	*)
		echo "unknown workload $1 (pearson knn outliers skyline regions pairs)" >&2
		return 1 ;;
	esac
}

# ---- the server: how it was started, so that it can be restarted with
# each mode's options and then as it was (test/lib.sh)
if ! odp_server_save 2>"$work/save.err"; then
	note "the server cannot be restarted by this script ($(one_line <"$work/save.err")): only its current configuration is measured"
	MODES=current
fi
orig_preload=$(q1 "SHOW shared_preload_libraries")
other_preload=$(tr -d ' "' <<<"$orig_preload" | tr ',' '\n' | grep -vx -e odp_gpu -e '' | paste -sd, -)

mode_opts() {
	case $1 in
	service|cache|streamed)
		echo "-c 'shared_preload_libraries=odp_gpu${other_preload:+,$other_preload}' -c min_dynamic_shared_memory=0"
		[ "$1" != cache ] && echo "-c odp_gpu.table_cache=off"
		[ "$1" = streamed ] && echo "-c odp_gpu.staging_size=0"
		[ "$SERVICE_ENGINE" = cpu ] && echo "-c odp_gpu.service_engine=cpu" ;;
	backend) echo "-c 'shared_preload_libraries=$other_preload' -c min_dynamic_shared_memory=0" ;;
	mindsm) echo "-c 'shared_preload_libraries=$other_preload' -c min_dynamic_shared_memory=$MIN_DSM" ;;
	esac
}

# shellcheck disable=SC2317  # (run by the EXIT trap)
cleanup() {
	trap - EXIT INT TERM
	if [ "$restarted" = 1 ]; then
		say "== restoring the server's original options"
		odp_server_restart "" >"$work/pg_ctl.log" ||
			say "the server did not restart with its original options ($ODP_SRV_OPTS): $(one_line <"$work/pg_ctl.log"); log $ODP_SRV_LOG"
	fi
	if [ "${KEEP_TABLES:-0}" != 1 ] && [ "${#all_tables[@]}" -gt 0 ]; then
		"${PSQL[@]}" -c "SET client_min_messages = warning" \
			-c "DROP TABLE IF EXISTS $(printf '%s\n' "${all_tables[@]}" | sort -u | paste -sd, -)" >/dev/null 2>&1
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# ---- measuring

# run_calls DEVICE N: N calls of W_CALL in one new session; sets C_TIMES
# (psql's ms per call), C_NOTICES (one timing NOTICE per call), C_RESULT
# (the first call's value) and C_ERR (the first error, empty when none)
run_calls() {
	local i
	{
		echo "SET odp_gpu.device = $1;"
		echo "SET odp_gpu.report_timing = on;"
		[ -n "$WORKERS" ] && echo "SET max_parallel_workers_per_gather = $WORKERS;"
		printf '%s\n' '\timing on'
		for ((i = 0; i < $2; i++)); do echo "$W_CALL;"; done
	} | "${PSQL[@]}" >"$work/calls.out" 2>"$work/calls.err"
	C_ERR=$(grep -m1 -E 'ERROR|FATAL|server closed' "$work/calls.err")
	mapfile -t C_TIMES < <(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$work/calls.out")
	mapfile -t C_NOTICES < <(grep 'odp_gpu timing' "$work/calls.err")
	C_RESULT=$(grep -m1 -E '^[0-9]+$' "$work/calls.out")
	if [ -z "$C_ERR" ] && { [ "${#C_TIMES[@]}" != "$2" ] || [ "${#C_NOTICES[@]}" != "$2" ]; }; then
		C_ERR="$2 calls gave ${#C_TIMES[@]} times and ${#C_NOTICES[@]} timing NOTICEs: $(one_line <"$work/calls.err")"
	fi
}

# scans W: PostgreSQL's own scan of every input table with W workers, ms
# (the sum over the tables)
scans() {
	local tc t c sql ms total=0 restore
	for tc in $W_TABLES; do
		t=${tc%%:*} c=${tc#*:}
		if [ "$c" = r ]; then sql="SELECT count($c) FROM $t"; else sql="SELECT sum(array_length($c, 1)) FROM $t"; fi
		restore="RESET (parallel_workers)"
		[ -n "$WORKERS" ] && restore="SET (parallel_workers = $WORKERS)"
		"${PSQL[@]}" -c "ALTER TABLE $t SET (parallel_workers = $1)" || return 1
		ms=$(bench_scan_ms "$1" "$sql")
		"${PSQL[@]}" -c "ALTER TABLE $t $restore"
		[ -n "$ms" ] || return 1
		total=$(awk -v a="$total" -v b="$ms" 'BEGIN { print a + b }')
	done
	echo "$total"
}

# PostgreSQL's own SRF of R rows with the result's columns, ms
# (bench_srf_ms), at work_mem = SRF_WORK_MEM, so that its tuplestore stays
# in memory as the calls' do (odp_gpu.output_memory).
srf_ms() { bench_srf_ms "$1" "$W_SRF" "$SRF_WORK_MEM"; }

# row LABEL NOTICE WHOLE_MS: one row of the table (the globals SCAN0,
# SCANN, SRF hold the shared cells); row LABEL NOTICE: only the limit, ms
row() {
	local n=$2 summary=0
	[ -z "${3:-}" ] && summary=1
	awk -v label="$1" -v whole="${3:-}" -v scan0="$SCAN0" -v scann="$SCANN" -v srf="$SRF" \
		-v rows="$(bench_key rows "$n")" -v dims="$(bench_key dims "$n")" \
		-v queries="$(bench_key queries "$n")" -v other_rows="$(bench_key other_rows "$n")" \
		-v rd="$(bench_key read "$n")" -v qrd="$(bench_key query_read "$n")" -v ord="$(bench_key other_read "$n")" \
		-v rw="$(bench_key read_workers "$n")" -v tr="$(bench_key transfer "$n")" \
		-v co="$(bench_key compute "$n")" -v ou="$(bench_key output "$n")" \
		-v ot="$(bench_key other "$n")" -v to="$(bench_key total "$n")" \
		-v path="$(sed -n 's/.* path=\([a-z]*\).*/\1/p' <<<"$n")" -v queued="$(bench_key queued "$n")" \
		-v cached="$(grep -c 'ms (cache)' <<<"$n")" \
		-v eb="$W_EB" -v p64="$PIN64" -v p512="$PIN512" -v summary="$summary" '
		function ms(v) { return v == "" ? "-" : sprintf("%.1f", v) }
		BEGIN {
			per = dims * eb + 8
			bytes = rows * per + (queries + other_rows) * per
			gbps = tr > 0 ? bytes / 1e9 / (tr / 1000) : ""
			ref = bytes < 181e6 ? p64 : p512
			# the limit: the faster scan, the copy at the pinned speed
			# (where known), the compute, the SRF
			scan = scann < scan0 ? scann : scan0
			limit = scan + (ref == "-" ? 0 : bytes / 1e9 / ref * 1000) + co + srf
			if (summary) {
				printf "%.1f\n", limit
				exit
			}
			# the output and the reading of it by PostgreSQL (the statement
			# beyond the function) against the SRF of as many rows
			outr = (srf > 0.5 && whole != "") ? sprintf("%.2f", (ou + whole - to) / srf) : "-"
			printf "| %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				label, path, (queued != "" ? " (service)" : "") (cached > 0 ? ", read from the table cache" : ""), ms(scan0), ms(scann),
				ms(rd + qrd + ord), rw, ms(tr), gbps == "" ? "-" : sprintf("%.1f", gbps),
				ref == "-" ? "-" : ref, (gbps == "" || ref == "-") ? "-" : sprintf("%.2f", gbps / ref),
				ms(co), ms(ou), ms(ot), ms(to), ms(whole), ms(srf), outr, ms(limit),
				(limit > 0 ? sprintf("%.2f", whole / limit) : "-")
		}'
}

# Input bytes of a NOTICE, for the title.
input_bytes() {
	awk -v rows="$(bench_key rows "$1")" -v dims="$(bench_key dims "$1")" -v q="$(bench_key queries "$1")" \
		-v o="$(bench_key other_rows "$1")" -v eb="$W_EB" \
		'BEGIN { printf "%.1f MB", (rows + q + o) * (dims * eb + 8) / 1e6 }'
}

# measure WORKLOAD MODE: the workload's table in this mode
measure() {
	local w=$1 mode=$2 dev=$DEVICE i best=-1 bt n first_n first_ms N
	[[ $mode == service || $mode == cache || $mode == streamed ]] && [ "$SERVICE_ENGINE" = cpu ] && dev=gpu
	make_tables "$w" >/dev/null || { failed=1; echo; echo "$w: its tables could not be made"; return 1; }
	# the cache keeps only tables whose pages are all-visible: vacuumed
	# with no older transaction about (the server was just restarted)
	[ "$mode" = cache ] && for tc in $W_TABLES; do "${PSQL[@]}" -c "VACUUM ${tc%%:*}" >/dev/null; done
	say "-- $w ($mode): first call"
	run_calls "$dev" 1
	if [ -n "$C_ERR" ]; then
		failed=1
		echo; echo "#### $W_TITLE ($mode): the first call failed: $C_ERR"
		return 1
	fi
	first_n=${C_NOTICES[0]} first_ms=${C_TIMES[0]}
	say "-- $w ($mode): $((REPS + 1)) calls in one session"
	run_calls "$dev" $((REPS + 1))
	if [ -n "$C_ERR" ]; then
		failed=1
		echo; echo "#### $W_TITLE ($mode): a warm call failed: $C_ERR"
		return 1
	fi
	for ((i = 1; i <= REPS; i++)); do
		if [ "$best" -lt 0 ] || awk -v a="${C_TIMES[$i]}" -v b="$bt" 'BEGIN { exit !(a < b) }'; then
			best=$i bt=${C_TIMES[$i]}
		fi
	done
	[ "$best" -lt 0 ] && best=0 bt=${C_TIMES[0]}
	n=${C_NOTICES[$best]}
	RESULT_ROWS=$C_RESULT
	[ "$w" = regions ] && RESULT_ROWS=1
	N=$WORKERS
	[ -z "$N" ] && N=$(bench_key read_workers "$n")
	[ -z "$N" ] || [ "$N" = 0 ] && N=4
	say "-- $w ($mode): PostgreSQL's scans (0 and $N workers), its SRF of $RESULT_ROWS rows"
	SCAN0=$(scans 0) || { failed=1; echo "$w: PostgreSQL's scan failed"; return 1; }
	SCANN=$(scans "$N") || { failed=1; echo "$w: PostgreSQL's scan failed"; return 1; }
	SRF=$(srf_ms "$RESULT_ROWS")
	echo
	echo "#### $W_TITLE; mode $mode"
	echo
	echo "Input $(input_bytes "$n"); result $RESULT_ROWS row$([ "$RESULT_ROWS" = 1 ] || echo s)$([ "$w" = regions ] && echo " (a count: $C_RESULT pairs)")$([ "$w" = pearson ] || [ "$w" = pairs ] && echo " ($C_RESULT pairs)")."
	echo
	echo "| call | path | PG scan, 0 workers ms | PG scan, $N workers ms | read ms | read workers | transfer ms | transfer GB/s | pinned cudaMemcpy GB/s | transfer / pinned | compute ms | output ms | other ms | total (in the function) ms | whole statement ms | PG SRF of $RESULT_ROWS rows ms | (output + reading it) / SRF | limit ms | whole / limit |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	row "warm (best of $REPS)" "$n" "$bt"
	row "first (new session)" "$first_n" "$first_ms"
	[ "$mode" = streamed ] && echo && echo "The stream phase took $(bench_key stream "$n") ms warm and $(bench_key stream "$first_n") ms first;" \
		"of $(bench_key streamed "$n") MB streamed, $(bench_key streamed_to_gpu "$n") MB went on to the GPU as they arrived."
	SUMMARY+=("$w|$mode|$(awk -v a="$bt" -v b="$first_ms" 'BEGIN { printf "%.1f|%.1f", a, b }')|$(row - "$n")")
}

SUMMARY=()
start_s=$SECONDS
say "== odp_gpu data-path benchmark, $(date -u '+%F %H:%M UTC')"
pinned_reference
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "# odp_gpu data path, $(date -u '+%F %H:%M UTC')"
echo
echo "- host: ${gpu:-no GPU}; $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs;" \
	"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
echo "- server: $(q1 "SELECT split_part(version(), ' on ', 1)"); its options: ${ODP_SRV_OPTS:-?}; preloaded: '${orig_preload}'"
echo "- SCALE $SCALE, REPS $REPS, odp_gpu.device = $DEVICE$([ "$SERVICE_ENGINE" = cpu ] && echo ", the service's engine: cpu (service calls with device = gpu)")"
echo "- pinned cudaMemcpy host to device: 64 MB $PIN64 GB/s, 512 MB $PIN512 GB/s; pageable (malloc): 64 MB $PAGE64 GB/s, 512 MB $PAGE512 GB/s"
"${PSQL[@]}" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu" >/dev/null 2>"$work/ext.err" ||
	{ echo "CREATE EXTENSION odp_gpu failed: $(one_line <"$work/ext.err")" >&2; exit 1; }
say "== making the tables"
for w in $WORKLOADS; do
	say "-- $w"
	make_tables "$w" >/dev/null || { failed=1; note "the tables of $w could not be made"; }
done
if [ -n "$WORKERS" ]; then
	for t in $(printf '%s\n' "${all_tables[@]}" | sort -u); do
		"${PSQL[@]}" -c "ALTER TABLE $t SET (parallel_workers = $WORKERS)"
	done
fi

for mode in $MODES; do
	case $mode in
	service|cache|backend|mindsm|streamed)
		say "== mode $mode: restarting the server with $(mode_opts "$mode" | tr '\n' ' ')"
		restarted=1
		if ! odp_server_restart "$(mode_opts "$mode" | tr '\n' ' ')" >"$work/pg_ctl.log"; then
			failed=1
			note "mode $mode skipped: the server did not restart: $(one_line <"$work/pg_ctl.log"); its log ($ODP_SRV_LOG) ends: $(tail -3 "$ODP_SRV_LOG" 2>/dev/null | one_line)"
			continue
		fi
		if [[ $mode == service || $mode == cache || $mode == streamed ]] && ! odp_service_wait 2>"$work/wait.err"; then
			note "mode $mode: the service is not ready: $(one_line <"$work/wait.err")"
		fi ;;
	current) ;;
	*) note "unknown mode $mode (service, cache, backend, mindsm, streamed)"; failed=1; continue ;;
	esac
	echo
	echo "## mode $mode$([ "$mode" = current ] && echo " (the server as it runs: this script could not restart it)"): shared_preload_libraries = '$(q1 "SHOW shared_preload_libraries")'," \
		"min_dynamic_shared_memory = $(q1 "SHOW min_dynamic_shared_memory"), work_mem = $(q1 "SHOW work_mem")," \
		"odp_gpu.output_memory = $("${PSQL[@]}" -c "LOAD 'odp_gpu'" -c "SHOW odp_gpu.output_memory" 2>&1 | tail -1)," \
		"max_parallel_workers_per_gather = $(q1 "SHOW max_parallel_workers_per_gather")"
	for w in $WORKLOADS; do
		measure "$w" "$mode"
	done
done

echo
echo "## summary: whole statement ms, warm / first (the warm call's limit)"
echo
read -ra modes <<<"$MODES"
echo "| workload | $(printf '%s | ' "${modes[@]}")"
echo "|---|$(printf -- '---:|%.0s' "${modes[@]}")"
for w in $WORKLOADS; do
	line="| $w |"
	for mode in $MODES; do
		cell=-
		for s in "${SUMMARY[@]}"; do
			IFS='|' read -r sw sm warm first limit <<<"$s"
			[ "$sw" = "$w" ] && [ "$sm" = "$mode" ] && cell="$warm / $first ($limit)"
		done
		line+=" $cell |"
	done
	echo "$line"
done
echo
echo "Limit: PostgreSQL's scan (the faster of 0 and N workers) + the input bytes at the pinned cudaMemcpy speed (where measured)" \
	"+ the call's compute + PostgreSQL's SRF of the result's rows (issue 41's bound for a whole call)."
echo
echo "Input bytes: rows x dims x 4 (real[]) or 8 (float8[]; a tstzrange: two 8-byte bounds) + 8 (id) per row" \
	"of every input table; transfer GB/s = those bytes / the transfer phase; the pinned reference is the size" \
	"nearer the input's (64 or 512 MB).  PG SRF: SELECT count(*) FROM f(R), f a STRICT (not inlined) SQL function" \
	"RETURNS TABLE of the result's column types, SELECT casts of i FROM generate_series(1, n) i: a tuplestore of R rows" \
	"of those columns, read back by the executor; it runs at work_mem = ${SRF_WORK_MEM:-as the server sets it}."
if [ "${#notes[@]}" -gt 0 ]; then
	echo
	printf -- '- note: %s\n' "${notes[@]}"
fi
say "(benchmark took $((SECONDS - start_s)) s)"
exit "$failed"
