#!/usr/bin/env bash
# Benchmark of odp_pearson and odp_pearson_top inside PostgreSQL, with the
# peers measured in the same run on the same float64 values.  Workloads
# (random walks as in the Pearson report: each series starts at 100 and
# each value is the last one changed by up to 1%, numpy at fixed seeds):
#   w16k   16,384 series x 4,096: pairs with |r| >= 0.9, and top-k, k = 10
#   w8k    8,192 x 8,192 (the report's size): pairs with |r| >= 0.9
#   w100k  100,000 x 256 (many short series, output-bound): |r| >= 0.95
# Each is a heap table (id bigint primary key, v float8[]) loaded by COPY
# BINARY; the arrays are TOASTed (32 KB at N = 4,096).  Prints, per
# workload: how fast the arrays come out of the table in plain SQL (count(*)
# without detoasting; sum(array_length(v, 1)), which detoasts every array,
# serial and with the server's parallel workers) next to odp_gpu's read
# phase; odp_gpu's phases (read, transfer, compute, output; from the
# odp_gpu.report_timing NOTICE) and the whole SQL call as psql timed it, in
# a warm session (a tiny call first creates the CUDA context; each call runs
# twice and the second counts; the first is noted), the calls being
# SELECT count(*) FROM odp_pearson(...), so no rows travel to the client;
# then the peers (test/bench/pearson_peers.py: cupy.corrcoef and
# torch.corrcoef on the GPU in float32 and float64, numpy.corrcoef and
# pandas DataFrame.corr on the host CPUs) with odp_gpu's speed-up over each
# (compute phase against the matrix plus its pairs); PostgreSQL's corr()
# over the pairs of the first 256 series of w16k, per pair and extrapolated
# to all pairs, with the largest |r| difference from odp_pearson on them;
# and odp_gpu's pairs against cupy's float64 ones.
# Needs a running server (PGHOST etc.) with odp_gpu installed, and python3
# with numpy (cupy, torch, pandas for those peers).  Not a test: it never
# fails on speed.
#
#   ODP_PEARSON_WORKLOADS="w16k:16384x4096:0.9:10 w8k:8192x8192:0.9:0 w100k:100000x256:0.95:0"
#       name:MxN:min_abs_r:k (k 0: no top-k run)
#   ODP_BENCH_PATH=gpu  odp_gpu.device for the odp calls (gpu, cpu, auto)
#   ODP_BENCH_CPU_THREADS=<nproc>   odp_gpu.cpu_threads
#   ODP_BENCH_PEERS=1   PEER_LIMIT_S=40   ODP_PEARSON_CORR_SUBSET=256
#   ODP_PEARSON_KEEP=0  1 keeps the tables      PYTHON=python3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
WORKLOADS=${ODP_PEARSON_WORKLOADS:-"w16k:16384x4096:0.9:10 w8k:8192x8192:0.9:0 w100k:100000x256:0.95:0"}
path=${ODP_BENCH_PATH:-gpu}
cpu_threads=${ODP_BENCH_CPU_THREADS:-$(nproc)}
peers=${ODP_BENCH_PEERS:-1}
subset=${ODP_PEARSON_CORR_SUBSET:-256}
export PEER_LIMIT_S=${PEER_LIMIT_S:-40}
PY=${PYTHON:-python3}
T=odp_bench_pearson
work=$(mktemp -d /tmp/odp_bench_pearson.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
now() { date +%s.%N; }
start=$(now)
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# the value of one key=value of a timing NOTICE line
key() { sed -n "s/.*[ (]$1=\\([^ )]*\\).*/\\1/p" <<<"$2" | head -1; }
# psql's last "Time:" of its output, in ms
ms_of() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$1" | tail -1; }

echo "== odp_gpu correlation benchmark, $(date -u '+%F %H:%M UTC')"
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "host: GPU ${gpu:-none}; $(nproc) CPUs ($cpu); $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
"${PSQL[@]}" -At -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu" \
	-c "SELECT 'server: ' || split_part(version(), ' on ', 1) || ', odp_gpu ' || extversion || ', shared_buffers ' || current_setting('shared_buffers') || ', max_parallel_workers_per_gather ' || current_setting('max_parallel_workers_per_gather') FROM pg_extension WHERE extname = 'odp_gpu'" || exit 1
echo "odp_gpu.device = $path, cpu_threads = $cpu_threads, workloads: $WORKLOADS"
"${PSQL[@]}" >/dev/null <<SQL || exit 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS ${T}_warm;
CREATE TABLE ${T}_warm AS SELECT i::bigint AS id, ARRAY[i, i * i, 1, i % 3]::float8[] AS v FROM generate_series(1, 20) i;
SQL

settings=(-c "SET odp_gpu.device = $path" -c "SET odp_gpu.cpu_threads = $cpu_threads")
# odp_call STATEMENT: runs it twice in a warm session; prints "NOTICE<TAB>ms"
# of the second run, and the first run's on a line starting "first"
odp_call() {
	local out nt tm
	out=$("${PSQL[@]}" -At "${settings[@]}" \
		-c "SELECT count(*) FROM odp_pearson('${T}_warm')" \
		-c "SET odp_gpu.report_timing = on" -c '\timing on' -c "$1" -c "$1" 2>&1)
	nt=$(sed -n 's/^NOTICE:  odp_gpu timing: //p' <<<"$out")
	tm=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out")
	if [ -z "$nt" ]; then
		echo "error	$(grep -v '^Time:' <<<"$out" | tail -2 | tr '\n' ' ')"
		return
	fi
	printf '%s\t%s\n' "$(tail -1 <<<"$nt")" "$(tail -1 <<<"$tm")"
	printf 'first\t%s\t%s\n' "$(key compute "$(head -1 <<<"$nt")")" "$(head -1 <<<"$tm")"
}

declare -a rows peer_rows notes
for spec in $WORKLOADS; do
	IFS=: read -r name size thr k <<<"$spec"
	m=${size%x*}
	n=${size#*x}
	tab=${T}_$name
	echo
	echo "-- $name: $m series x $n values"
	t0=$(now)
	"$PY" "$here/pearson_peers.py" gen "$work" "$name" "$m" "$n" "$((m + n))" || exit 1
	"${PSQL[@]}" >/dev/null <<SQL || exit 1
SET client_min_messages = warning;
BEGIN;
DROP TABLE IF EXISTS $tab;
CREATE TABLE $tab (id bigint, v float8[]);
\\copy $tab FROM '$work/$name.bin' WITH (FORMAT binary, FREEZE)
COMMIT;
ALTER TABLE $tab ADD PRIMARY KEY (id);
VACUUM ANALYZE $tab;
SELECT sum(array_length(v, 1)) FROM $tab;
SQL
	rm -f "$work/$name.bin"
	echo "loaded in $(secs "$t0") s: $("${PSQL[@]}" -At -c "SELECT pg_size_pretty(pg_total_relation_size('$tab')) || ' in all, '
		|| pg_size_pretty(pg_relation_size(reltoastrelid)) || ' of TOAST; an array takes ' || (SELECT pg_column_size(v) FROM $tab LIMIT 1)
		|| ' bytes for ' || $n * 8 || ' of values' FROM pg_class WHERE oid = '$tab'::regclass")"

	# reading in plain SQL: no detoast, then detoasting every array
	out=$("${PSQL[@]}" -At -c '\timing on' -c "SELECT count(*) FROM $tab" -c "SELECT count(*) FROM $tab" 2>&1)
	r_count=$(ms_of "$out")
	out=$("${PSQL[@]}" -At -c "SET max_parallel_workers_per_gather = 0" -c '\timing on' \
		-c "SELECT sum(array_length(v, 1)) FROM $tab" -c "SELECT sum(array_length(v, 1)) FROM $tab" 2>&1)
	r_serial=$(ms_of "$out")
	out=$("${PSQL[@]}" -At -c '\timing on' \
		-c "SELECT sum(array_length(v, 1)) FROM $tab" -c "SELECT sum(array_length(v, 1)) FROM $tab" 2>&1)
	r_par=$(ms_of "$out")
	mb=$(awk -v m="$m" -v n="$n" 'BEGIN { printf "%.1f", m * n * 8 / 1e6 }')
	rate() { awk -v ms="$1" -v mb="$mb" 'BEGIN { if (ms > 0) printf "%.0f MB/s", mb / ms * 1000; else printf "-" }'; }
	echo "reading $mb MB of float8: count(*) $r_count ms; sum(array_length(v, 1)) serial $r_serial ms ($(rate "$r_serial")), parallel $r_par ms ($(rate "$r_par"))"

	calls=("odp_pearson:SELECT count(*) FROM odp_pearson('$tab', min_abs_r => $thr)")
	[ "$k" != 0 ] && calls+=("odp_pearson_top k=$k:SELECT count(*) FROM odp_pearson_top('$tab', k => $k)")
	for c in "${calls[@]}"; do
		label=${c%%:*}
		res=$(odp_call "${c#*:}")
		line=$(head -1 <<<"$res")
		if [[ "$line" == error* ]]; then
			echo "$label: $line"
			continue
		fi
		nt=${line%$'\t'*}
		whole=${line##*$'\t'}
		first=$(sed -n 's/^first\t//p' <<<"$res")
		pairs=$(key pairs "$nt")
		rows+=("$(printf '%-6s %-21s %9s %6s %-4s %9s %9s %9s %9s %9s %9s' "$name" "$label" "${m}x$n" \
			"${thr}" "$(key path "$nt")" "${pairs:--}" "$(key read "$nt")" "$(key transfer "$nt")" \
			"$(key compute "$nt")" "$(key output "$nt")" "$whole")")
		notes+=("$name $label: first run of its session compute $(cut -f1 <<<"$first") ms, whole $(cut -f2 <<<"$first") ms; odp_gpu read $(rate "$(key read "$nt")")")
		[ "$label" = odp_pearson ] && printf '%s\t%s\n' "$name" "$(key compute "$nt")" >>"$work/odp_compute.tsv"
	done

	if [ "$peers" = 1 ]; then
		"$PY" "$here/pearson_peers.py" peers "$work" "$name" "$thr" >"$work/peers.$name.tsv" 2>"$work/peers.$name.err" ||
			echo "peers failed: $(tail -2 "$work/peers.$name.err")"
		odp_ms=$(awk -v w="$name" '$1 == w { print $2 }' "$work/odp_compute.tsv" | tail -1)
		while IFS=$'\t' read -r p mat matp np note; do
			sp=$(awk -v a="$matp" -v b="$odp_ms" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1fx", a / b; else printf "-" }')
			peer_rows+=("$(printf '%-6s %-8s %11s %13s %9s %8s  %s' "$name" "$p" "$mat" "$matp" "$np" "$sp" "$note")")
		done <"$work/peers.$name.tsv"
		if [ "$name" = w16k ]; then
			"${PSQL[@]}" "${settings[@]}" \
				-c "COPY (SELECT id_a, id_b, r FROM odp_pearson('$tab', min_abs_r => $thr)) TO STDOUT" \
				>"$work/odp_pairs.tsv" 2>/dev/null &&
				exact=$("$PY" "$here/pearson_peers.py" compare "$work" "$name" "$work/odp_pairs.tsv")
		fi
	fi
	rm -f "$work/$name.npy" "$work/$name.cupy64.npz" "$work/odp_pairs.tsv"

	# PostgreSQL's corr() over the pairs of the first series of the first workload
	if [ -z "${corr_line:-}" ] && [ "$peers" = 1 ]; then
		out=$("${PSQL[@]}" -At <<SQL 2>&1
SET client_min_messages = warning;
SET odp_gpu.device = $path;
SET odp_gpu.cpu_threads = $cpu_threads;
DROP TABLE IF EXISTS ${T}_sub;
CREATE TABLE ${T}_sub AS SELECT * FROM $tab WHERE id <= $subset;
\\timing on
SELECT 'pairs=' || count(*) FROM (SELECT a.id, b.id, corr(y, x) FROM ${T}_sub a, ${T}_sub b,
	LATERAL unnest(a.v, b.v) u(x, y) WHERE a.id < b.id GROUP BY 1, 2) s;
\\timing off
SELECT 'maxdiff=' || max(abs(o.r - c.r)) FROM odp_pearson('${T}_sub') o
JOIN (SELECT a.id AS id_a, b.id AS id_b, corr(y, x) AS r FROM ${T}_sub a, ${T}_sub b,
	LATERAL unnest(a.v, b.v) u(x, y) WHERE a.id < b.id GROUP BY 1, 2) c USING (id_a, id_b);
DROP TABLE ${T}_sub;
SQL
)
		cms=$(ms_of "$out")
		np=$(sed -n 's/^pairs=//p' <<<"$out")
		md=$(sed -n 's/^maxdiff=//p' <<<"$out")
		corr_line=$(awk -v ms="$cms" -v np="$np" -v m="$m" -v md="$md" -v w="$name" 'BEGIN {
			if (np + 0 == 0) { print "corr(): failed"; exit }
			per = ms / np; all = m * (m - 1) / 2
			printf "corr() over the %d pairs of the first series of %s: %.0f ms, %.3f ms a pair; all %.0f pairs: %.0f s (extrapolated); max |odp_pearson - corr()| on them %s",
				np, w, ms, per, all, per * all / 1000, md }')
	fi
	[ "${ODP_PEARSON_KEEP:-0}" = 1 ] || "${PSQL[@]}" -c "DROP TABLE $tab"
done

echo
echo "odp_gpu (ms; whole = the SQL call as psql timed it, a warm session, the call's second run):"
printf '%-6s %-21s %9s %6s %-4s %9s %9s %9s %9s %9s %9s\n' workload call size "|r|>=" path pairs read transfer compute output whole
[ ${#rows[@]} -gt 0 ] && printf '%s\n' "${rows[@]}"
[ ${#notes[@]} -gt 0 ] && printf '  %s\n' "${notes[@]}"
if [ "$peers" = 1 ]; then
	echo
	echo "peers (ms; matrix = the M x M coefficients; +pairs = with the pairs over the threshold brought to host memory;"
	echo " speed-up = peer's +pairs over odp_gpu's compute phase):"
	printf '%-6s %-8s %11s %13s %9s %8s  %s\n' workload peer matrix +pairs pairs speed-up note
	[ ${#peer_rows[@]} -gt 0 ] && printf '%s\n' "${peer_rows[@]}"
	[ -n "${exact:-}" ] && echo "w16k pairs, odp_gpu against cupy float64: $exact"
	echo "${corr_line:-}"
fi
echo "(benchmark took $(secs "$start") s)"
"${PSQL[@]}" -c "DROP TABLE IF EXISTS ${T}_warm"
exit 0
