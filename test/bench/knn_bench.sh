#!/usr/bin/env bash
# Benchmark of odp_knn and odp_knn_join (issue 4) inside PostgreSQL, with the
# peers measured in the same run on the same float32 values.  Workloads
# (random standard Gaussian rows, fixed seeds, euclidean, k = 10):
#   self join   odp_knn_join(t32, t32): every row of N x 32 against the rest
#   batch       odp_knn_join(q128, t128): Q queries against N x 128
#   single      odp_knn(t128, query): one query against N x 128, called
#               REPEAT times in one session (first call apart: it is cold)
#   join, D=32  odp_knn_join(q32, t32): CUBE_Q queries against N x 32, the
#               odp side of the comparison with cube
# Prints a table of odp_gpu's phases (read, query read, transfer, compute,
# output: from the odp_gpu.report_timing NOTICE) and the whole SQL call as
# psql timed it in a warm session (a tiny call first made the CUDA context;
# each join runs twice and the second run counts, the first also loading
# its kernels; not for the single query's first call); then the peers' times and odp_gpu's
# speedup over each (compute phase and whole call); then how many neighbour
# lists agree.  Peers (test/bench/knn_peers.py): PyTorch on the same GPU,
# scikit-learn brute force on all host CPUs, and the contrib cube extension
# with a GiST index in the same server.  Joins run as SELECT count(*) FROM
# odp_knn_join(...), so the whole call has no client transfer of the rows.
# Needs a running server (PGHOST etc.) with odp_gpu installed (and contrib
# cube for that peer), and python3 with numpy (torch, scikit-learn for the
# peers).  Not a test: it never fails on speed.
#
#   ODP_KNN_N=1000000   rows of each source     ODP_KNN_Q=10000   batch queries
#   ODP_KNN_REPEAT=100  single-query calls      ODP_KNN_CUBE_Q=100  cube queries
#   ODP_BENCH_PATH=gpu  odp_gpu.device for the odp calls (gpu, cpu, auto)
#   ODP_BENCH_CPU_THREADS=<nproc>   odp_gpu.cpu_threads
#   ODP_BENCH_PEERS=1   PEER_LIMIT_S=40 (per peer and workload; the rest is
#   extrapolated)   ODP_KNN_SK_SUBSET=20000 (scikit-learn's self-join queries)
#   ODP_KNN_KEEP=0      1 keeps the tables     PYTHON=python3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
N=${ODP_KNN_N:-1000000}
Q=${ODP_KNN_Q:-10000}
R=${ODP_KNN_REPEAT:-100}
CQ=${ODP_KNN_CUBE_Q:-100}
K=10
path=${ODP_BENCH_PATH:-gpu}
cpu_threads=${ODP_BENCH_CPU_THREADS:-$(nproc)}
peers=${ODP_BENCH_PEERS:-1}
limit=${PEER_LIMIT_S:-40}
PY=${PYTHON:-python3}
export K PEER_LIMIT_S=$limit SK_SUBSET=${ODP_KNN_SK_SUBSET:-20000}
T=odp_bench_knn
work=$(mktemp -d /tmp/odp_bench_knn.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
now() { date +%s.%N; }
start=$(now)
drop_tables() {
	"${PSQL[@]}" -c "SET client_min_messages = warning" \
		-c "DROP TABLE IF EXISTS ${T}_t32, ${T}_t128, ${T}_q128, ${T}_q32, ${T}_warm, ${T}_c32, ${T}_cq"
}
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

echo "== odp_gpu k-NN benchmark (issue 4), $(date -u '+%F %H:%M UTC')"
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "host: GPU ${gpu:-none}; $(nproc) CPUs ($cpu); $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
"${PSQL[@]}" -At -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu" \
	-c "SELECT 'server: ' || split_part(version(), ' on ', 1) || ', odp_gpu ' || extversion || ', shared_buffers ' || current_setting('shared_buffers') FROM pg_extension WHERE extname = 'odp_gpu'" || exit 1
echo "N = $N rows, Q = $Q batch queries, $R single-query calls, $CQ cube queries, k = $K, odp_gpu.device = $path, cpu_threads = $cpu_threads"

# ---- data: numpy at fixed seeds -> .npy (peers) + COPY BINARY files (tables)
t0=$(now)
"$PY" "$here/knn_peers.py" gen "$work" "$N" "$Q" "$R" "$CQ" || exit 1
echo "data files written in $(secs "$t0") s"

# ---- load: (id bigint primary key, f real[]) heap tables, COPY FREEZE, then
# the key, VACUUM ANALYZE and one read so the first timed call finds them
# where every later call does
load() {	# table
	"${PSQL[@]}" >/dev/null <<SQL
SET client_min_messages = warning;
BEGIN;
DROP TABLE IF EXISTS ${T}_$1;
CREATE TABLE ${T}_$1 (id bigint, f real[]);
\\copy ${T}_$1 FROM '$work/$1.bin' WITH (FORMAT binary, FREEZE)
COMMIT;
ALTER TABLE ${T}_$1 ADD PRIMARY KEY (id);
VACUUM ANALYZE ${T}_$1;
SELECT count(*) FROM ${T}_$1;
SQL
	local rc=$?
	rm -f "$work/$1.bin"
	return $rc
}
cube_build() {
	"${PSQL[@]}" >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS cube;
DROP TABLE IF EXISTS ${T}_c32, ${T}_cq;
CREATE TABLE ${T}_c32 AS SELECT id, cube(f::float8[]) AS c FROM ${T}_t32;
SET maintenance_work_mem = '2GB';
CREATE INDEX ON ${T}_c32 USING gist (c);
VACUUM ANALYZE ${T}_c32;
CREATE TABLE ${T}_cq AS SELECT id, cube(f::float8[]) AS c FROM ${T}_q32;
SQL
}
t0=$(now)
"${PSQL[@]}" >/dev/null <<SQL || exit 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${T}_warm;
CREATE TABLE ${T}_warm AS SELECT i::bigint AS id, ARRAY[i % 7, i % 5]::real[] AS f FROM generate_series(1, 100) i;
ALTER TABLE ${T}_warm ADD PRIMARY KEY (id);
SQL
{ load t128 && echo "  t128 ($N x 128) loaded in $(secs "$t0") s" && load q128; } &
job_a=$!
{ load t32 && echo "  t32 ($N x 32) loaded in $(secs "$t0") s" && load q32 || exit 1
  if [ "$peers" = 1 ]; then
	t1=$(now)
	if cube_build 2>"$work/cube.err"; then
		echo "gist_build	$(awk -v a="$t1" -v b="$(now)" 'BEGIN { printf "%.0f", 1000 * (b - a) }')" >"$work/cube.tsv"
		echo "  cube table + GiST index built in $(secs "$t1") s"
	else
		echo "status	unavailable: $(tr '\n' ' ' <"$work/cube.err")" >"$work/cube.tsv"
	fi
  fi; } &
job_b=$!
wait $job_a || { echo "loading failed"; exit 1; }
wait $job_b || { echo "loading failed"; exit 1; }
echo "loaded in $(secs "$t0") s"

# ---- odp_gpu runs
# mean of one NOTICE key (or of bare numbers, key "") over the lines on stdin
mean() {
	awk -v key="$1" '{
		if (key == "") s = $1
		else if (match($0, "[ (]" key "=[^ )]*")) { s = substr($0, RSTART + 1, RLENGTH - 1); sub(/^[^=]*=/, "", s) }
		else next
		sum += s; n++ }
	END { if (!n) { printf "-"; exit } v = sum / n
		if (key ~ /^(rows|queries|dims|chunks)$/ && v == int(v)) printf "%d", v
		else if (v < 10) printf "%.2f", v; else printf "%.1f", v }'
}
fmt='%-29s %8s %8s %4s %3s %-4s %9s %9s %9s %11s %10s %11s %6s\n'
printf "\n$fmt" workload rows queries dims k path "read ms" "q-read ms" "xfer ms" "compute ms" "output ms" "whole ms" chunks
# row WORKLOAD LABEL DEFAULT_QUERIES NOTICES TIMES: prints the line, appends to odp.tsv
row() {
	local w=$1 label=$2 dq=$3 nt=$4 tm=$5 v=() f
	if [ -z "$nt" ]; then
		printf '%-29s %s\n' "$label" "no timing NOTICE"; return
	fi
	for f in rows queries dims read query_read transfer compute output; do v+=("$(mean $f <<<"$nt")"); done
	[ "${v[1]}" = - ] && v[1]=$dq
	v+=("$(mean '' <<<"$tm")" "$(mean chunks <<<"$nt")")
	printf "$fmt" "$label" "${v[0]}" "${v[1]}" "${v[2]}" "$K" "$path" "${v[3]}" "${v[4]}" "${v[5]}" "${v[6]}" "${v[7]}" "${v[8]}" "${v[9]}"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$path" "${v[0]}" "${v[1]}" "${v[2]}" "$K" \
		"${v[3]}" "${v[4]}" "${v[5]}" "${v[6]}" "${v[7]}" "${v[8]}" "${v[9]}" >>"$work/odp.tsv"
}
settings=(-c "SET odp_gpu.device = $path" -c "SET odp_gpu.cpu_threads = $cpu_threads")
# one statement run twice in a warm session; the row is the second run, the
# first (which also loads the kernels it launches: CUDA loads them lazily)
# is noted below the table
odp_run() {	# workload label default_queries sql
	local out nt tm
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 "${settings[@]}" \
		-c "SELECT count(*) FROM odp_knn('${T}_warm', '{0,0}', k => 1)" \
		-c "SET odp_gpu.report_timing = on" -c '\timing on' -c "$4" -c "$4" 2>&1)
	if ! grep -q '^NOTICE:  odp_gpu timing: ' <<<"$out"; then
		printf '%-29s %s\n' "$2" "$(grep -v '^Time:' <<<"$out" | tail -3 | tr '\n' ' ')"; return
	fi
	nt=$(sed -n 's/^NOTICE:  odp_gpu timing: //p' <<<"$out")
	tm=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -2)
	row "$1" "$2" "$3" "$(tail -1 <<<"$nt")" "$(tail -1 <<<"$tm")"
	first_calls+="  $2, first run: compute $(head -1 <<<"$nt" | mean compute) ms, whole $(head -1 <<<"$tm") ms"$'\n'
}
first_calls=""
odp_run self "self join (count)" "$N" "SELECT count(*) FROM odp_knn_join('${T}_t32', '${T}_t32', k => $K)"
odp_run batch "batch (count)" "$Q" "SELECT count(*) FROM odp_knn_join('${T}_q128', '${T}_t128', k => $K)"
odp_run q100 "join D=32, cube's queries" "$CQ" "SELECT count(*) FROM odp_knn_join('${T}_q32', '${T}_t32', k => $K)"

# single query: REPEAT calls in one new session, the first one cold
{
	printf '%s\n' "SET odp_gpu.device = $path;" "SET odp_gpu.cpu_threads = $cpu_threads;" \
		"SET odp_gpu.report_timing = on;" '\timing on'
	awk -v t="${T}_t128" -v k="$K" '{ printf "SELECT string_agg(id::text, %s ORDER BY rank) FROM odp_knn(%s, %s::float8[], k => %d);\n", "\047,\047", "\047" t "\047", "\047" $0 "\047", k }' "$work/single.txt"
} >"$work/single.sql"
psql -X -q -At -v ON_ERROR_STOP=1 -f "$work/single.sql" >"$work/single.out" 2>"$work/single.err"
# (psql -f prefixes messages with psql:FILE:LINE:)
sed -n 's/^.*NOTICE:  odp_gpu timing: //p' "$work/single.err" >"$work/single.notice"
sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$work/single.out" >"$work/single.time"
grep -E '^[0-9]+(,[0-9]+)*$' "$work/single.out" >"$work/odp_ids.single.txt"
calls=$(wc -l <"$work/single.time")
if [ "$calls" -lt "$R" ]; then
	echo "single query: $calls of $R calls ran: $(grep -v 'NOTICE:  odp_gpu timing' "$work/single.err" | tail -3 | tr '\n' ' ')"
fi
row single_cold "single, first call (cold)" 1 "$(head -1 "$work/single.notice")" "$(head -1 "$work/single.time")"
[ "$calls" -gt 1 ] && row single_warm "single, mean of calls 2..$calls" 1 "$(tail -n +2 "$work/single.notice")" "$(tail -n +2 "$work/single.time")"
echo "(whole: the SQL call as psql timed it; joins as SELECT count(*) FROM odp_knn_join(...): no rows to the"
echo " client, the output phase is odp_gpu's result building; warm session except the single query's first call;"
echo " each join's second run in its session, the first also loading the kernels it launches:)"
printf '%s' "$first_calls"

if [ "$peers" != 1 ]; then
	[ "${ODP_KNN_KEEP:-0}" = 1 ] || drop_tables
	exit 0
fi

# ids for the agreement check (calls not timed)
for spec in "batch ${T}_q128 ${T}_t128" "q100 ${T}_q32 ${T}_t32"; do
	set -- $spec
	psql -X -q -At "${settings[@]}" -c "COPY (SELECT query_id, rank, id FROM odp_knn_join('$2', '$3', k => $K)) TO STDOUT" \
		>"$work/odp_ids.$1.txt" 2>"$work/odp_ids.err" || echo "odp ids for $1: $(head -2 "$work/odp_ids.err")"
done

# ---- peers: PyTorch and scikit-learn (knn_peers.py), then cube in this server
echo
echo "peers (each stopped after about $limit s, the rest extrapolated):"
t0=$(now)
"$PY" "$here/knn_peers.py" peers "$work" 2>&1 | sed 's/^/  /'
echo "  (torch and sklearn took $(secs "$t0") s)"

if grep -q '^gist_build' "$work/cube.tsv" 2>/dev/null; then
	lat="CROSS JOIN LATERAL (SELECT id FROM ${T}_c32 t ORDER BY t.c <-> q.c LIMIT $K) n"
	plan=$(psql -X -q -At -c "EXPLAIN (COSTS OFF) SELECT q.id, n.id FROM ${T}_cq q $lat" 2>&1)
	grep -q "Index Scan using ${T}_c32" <<<"$plan" || echo "  cube: the plan does not use the GiST index: $(tr '\n' ' ' <<<"$plan")"
	# a probe of 3 queries sizes the timed run to the time cap
	probe=$(psql -X -q -At -c '\timing on' -c "SELECT count(*) FROM (SELECT id, c FROM ${T}_cq ORDER BY id LIMIT 3) q $lat" 2>&1 |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
	m=$(awk -v p="${probe:-0}" -v l="$limit" -v cq="$CQ" 'BEGIN { m = p > 0 ? int(l * 1000 / (p / 3)) : cq; if (m > cq) m = cq; if (m < 3) m = 3; print m }')
	out=$(psql -X -q -At -c '\timing on' -c "SELECT q.id, n.id FROM (SELECT id, c FROM ${T}_cq ORDER BY id LIMIT $m) q $lat" 2>&1)
	ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -1)
	if [ -n "$ms" ]; then
		grep -E '^[0-9]+\|[0-9]+$' <<<"$out" | awk -F'|' '{ r[$1]++; print $1 "\t" r[$1] "\t" $2 }' >"$work/cube_ids.txt"
		printf 'time\t%s\t%s\t%s\n' "$m" "$CQ" "$ms" >>"$work/cube.tsv"
		echo "  cube: $m queries in $ms ms (probe: 3 in ${probe:-?} ms)"
	else
		printf 'status\tfailed: %s\n' "$(tail -2 <<<"$out" | tr '\n' ' ')" >>"$work/cube.tsv"
	fi
fi

echo
"$PY" "$here/knn_peers.py" report "$work"
echo "(benchmark took $(secs "$start") s)"

[ "${ODP_KNN_KEEP:-0}" = 1 ] || drop_tables
exit 0
