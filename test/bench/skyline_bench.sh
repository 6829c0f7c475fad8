#!/usr/bin/env bash
# Benchmark of odp_skyline inside PostgreSQL, with the peers measured in the
# same run on the same float64 values (smaller is better in every feature).
# Workloads: the synthetic ones of Börzsönyi et al.
# (test/bench/skyline_engine_bench gen: independent, correlated,
# anti-correlated), the seed's 100,000 x 200 (independent), and the real NBA
# and HOUSE sets of ../shared/datasets/skyline where present.  Each is a heap
# table (id bigint primary key, v float8[]) loaded by COPY BINARY.
# Per workload it prints odp_gpu's skyline size, its phases (read, transfer,
# compute with its presort and block-loop parts, output; from the
# odp_gpu.report_timing NOTICE) and the whole SQL call (SELECT count(*) FROM
# odp_skyline(...), the second of two calls in a warm session), the dominance
# tests it did, then the peers: odp_gpu's CPU path (odp_gpu.device = cpu at
# ODP_BENCH_CPU_THREADS threads, its compute phase), the NOT EXISTS
# formulation in SQL (up to ODP_SKY_SQL_MAX_ROWS rows, statement_timeout
# PEER_LIMIT_S), PyTorch block-wise brute force on the GPU (skyline_peers.py),
# and SkyBench's Hybrid (multi-core, ODP_BENCH_CPU_THREADS threads) and
# BSkyTree (one thread), where a SkyBench build for the workload's number of
# features is found in $SKYBENCH_DIR/bin-<D>/SkyBench (make all DIMS=<D> in
# a checkout of github.com/sean-chester/SkyBench; it reads float32).
# Needs a running server with odp_gpu, test/bench/skyline_engine_bench built,
# python3 with numpy (torch for that peer).  Not a test: it never fails on
# speed.
#
#   ODP_SKY_WORKLOADS="anti:1000000:8 ..." (kind:rows:dims, kind independent,
#       correlated, anti, nba or house; default below)
#   ODP_BENCH_PATH=gpu   ODP_BENCH_CPU_THREADS=<nproc>   ODP_BENCH_PEERS=1
#   PEER_LIMIT_S=60   ODP_SKY_SQL_MAX_ROWS=200000   SKYBENCH_DIR=.peers/skybench
#   ODP_SKY_CPU_MAX_ROWS=2000000 (larger inputs skip the CPU path)   PYTHON=python3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
WORKLOADS=${ODP_SKY_WORKLOADS:-"anti:1000000:8 independent:1000000:8 correlated:1000000:8 independent:100000:200 nba:0:0 house:0:0 anti:1000000:4 anti:1000000:16 independent:1000000:4 independent:1000000:16 correlated:1000000:4 correlated:1000000:16"}
path=${ODP_BENCH_PATH:-gpu}
cpu_threads=${ODP_BENCH_CPU_THREADS:-$(nproc)}
peers=${ODP_BENCH_PEERS:-1}
sql_max=${ODP_SKY_SQL_MAX_ROWS:-200000}
cpu_max=${ODP_SKY_CPU_MAX_ROWS:-2000000}
skyb=${SKYBENCH_DIR:-$root/.peers/skybench}
datasets=${ODP_DATASETS:-$root/../shared/datasets}
export PEER_LIMIT_S=${PEER_LIMIT_S:-60}
PY=${PYTHON:-python3}
T=odp_bench_sky
work=$(mktemp -d /tmp/odp_bench_sky.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
key() { sed -n "s/.*[ (]$1=\\([^ )]*\\).*/\\1/p" <<<"$2" | head -1; }
ms_of() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$1" | tail -1; }

echo "== odp_gpu skyline benchmark, $(date -u '+%F %H:%M UTC')"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) threads; odp cpu path at $cpu_threads threads"
echo
printf '| workload | rows x dims | skyline | read ms | transfer ms | compute ms (presort + loop) | output ms | whole call ms | pair tests | full tests | odp CPU path ms | NOT EXISTS ms | PyTorch ms | SkyBench Hybrid ms | BSkyTree ms |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'

for w in $WORKLOADS; do
	IFS=: read -r kind rows dims <<<"$w"
	f64=$work/data.f64
	case $kind in
		nba|house)
			src=$datasets/skyline/$([ "$kind" = nba ] && echo nba-U-8-17264.csv.gz || echo house_data.txt.gz)
			if [ ! -f "$src" ]; then echo "| $kind | (data set not found) |"; continue; fi
			read -r rows dims < <($PY "$here/skyline_peers.py" real "$kind" "$src" "$f64") ;;
		*)
			"$here/skyline_engine_bench" gen "$kind" "$rows" "$dims" 1 "$f64" || { echo "| $kind | generation failed |"; continue; } ;;
	esac
	$PY "$here/skyline_peers.py" copy "$f64" "$rows" "$dims" "$work/data.copy"
	"${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $T" \
		-c "CREATE TABLE $T (id bigint PRIMARY KEY, v float8[])" \
		-c "COPY $T FROM '$work/data.copy' WITH (FORMAT binary)" -c "VACUUM ANALYZE $T" || continue
	rm -f "$work/data.copy"

	# odp_gpu: a tiny call creates the CUDA context, then two calls; the second counts
	out=$("${PSQL[@]}" 2>&1 <<SQL
SET odp_gpu.device = $path;
SET odp_gpu.cpu_threads = $cpu_threads;
SELECT count(*) FROM odp_skyline('SELECT * FROM $T WHERE id <= 10');
SET odp_gpu.report_timing = on;
\timing on
SELECT count(*) FROM odp_skyline('$T');
SELECT count(*) FROM odp_skyline('$T');
SQL
)
	note=$(grep 'odp_gpu timing' <<<"$out" | tail -1)
	whole=$(ms_of "$out")
	members=$(key members "$note")
	[ -z "$members" ] && { echo "| $kind | $rows x $dims | odp_skyline failed: $(grep ERROR <<<"$out" | head -1) |"; continue; }
	# the engine's split of compute (presort, block loop), from
	# skyline_engine_bench on the same file
	split=$("$here/skyline_engine_bench" run "$f64" "$rows" "$dims" --$([ "$path" = cpu ] && echo cpu || echo gpu) --reps 2 --threads "$cpu_threads" 2>/dev/null | tail -1)
	compute="$(key compute "$note") ($(key presort_ms "$split") + $(key loop_ms "$split"))"

	cpu_ms=- sql_ms=- torch_ms=- hyb_ms=- bsky_ms=-
	if [ "$peers" = 1 ]; then
		if [ "$rows" -le "$cpu_max" ]; then
			cout=$("${PSQL[@]}" 2>&1 <<SQL
SET odp_gpu.device = cpu;
SET odp_gpu.cpu_threads = $cpu_threads;
SET odp_gpu.report_timing = on;
SET statement_timeout = '${PEER_LIMIT_S}s';
SELECT count(*) FROM odp_skyline('$T');
SQL
)
			cpu_ms=$(key compute "$(grep 'odp_gpu timing' <<<"$cout" | tail -1)")
			[ -z "$cpu_ms" ] && cpu_ms=">${PEER_LIMIT_S}000"
		fi
		if [ "$rows" -le "$sql_max" ]; then
			le=$(seq 1 "$dims" | sed 's/.*/p.v[&] <= q.v[&]/' | paste -sd' ' | sed 's/ p\./ AND p./g')
			lt=$(seq 1 "$dims" | sed 's/.*/p.v[&] < q.v[&]/' | paste -sd' ' | sed 's/ p\./ OR p./g')
			sout=$("${PSQL[@]}" 2>&1 <<SQL
SET statement_timeout = '${PEER_LIMIT_S}s';
SET max_parallel_workers_per_gather = 0;
\timing on
SELECT count(*) FROM $T q WHERE NOT EXISTS (SELECT 1 FROM $T p WHERE $le AND ($lt));
SQL
)
			sql_ms=$(ms_of "$sout")
			grep -q "statement timeout" <<<"$sout" && sql_ms=">${PEER_LIMIT_S}000"
			sky_sql=$(grep -E '^ *[0-9]+$' <<<"$sout" | tr -d ' ' | head -1)
			[ -n "$sky_sql" ] && [ "$sky_sql" != "$members" ] && sql_ms="$sql_ms (DIFFERENT: $sky_sql)"
		fi
		tout=$(timeout $((PEER_LIMIT_S * 2 + 60)) $PY "$here/skyline_peers.py" torch "$f64" "$rows" "$dims" 2>&1 | tail -1)
		torch_ms=$(sed -n 's/.*torch_ms=\([^ ]*\).*/\1/p' <<<"$tout")
		[ -z "$torch_ms" ] && torch_ms=$(sed -n 's/.*torch=\(.*\)/\1/p' <<<"$tout")
		tm=$(sed -n 's/.*members=\([0-9]*\).*/\1/p' <<<"$tout")
		[ -n "$tm" ] && [ "$tm" != "$members" ] && torch_ms="$torch_ms (DIFFERENT: $tm)"
		sb=$skyb/bin-$dims/SkyBench
		if [ -x "$sb" ]; then
			$PY "$here/skyline_peers.py" csv "$f64" "$rows" "$dims" "$work/data.csv"
			# without -v SkyBench prints one line: each algorithm's time in ms, in order
			sbout=$(timeout $((PEER_LIMIT_S * 2)) "$sb" -f "$work/data.csv" -s "hybrid bskytree" -t "$cpu_threads" 2>&1 | tail -1)
			hyb_ms=$(awk 'NF == 2 { print $1 }' <<<"$sbout")
			bsky_ms=$(awk 'NF == 2 { print $2 }' <<<"$sbout")
			[ -z "$hyb_ms" ] && hyb_ms=">$((PEER_LIMIT_S * 2))000" && bsky_ms=">$((PEER_LIMIT_S * 2))000"
			rm -f "$work/data.csv"
		fi
	fi
	printf '| %s | %s x %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
		"$kind" "$rows" "$dims" "$members" "$(key read "$note")" "$(key transfer "$note")" \
		"$compute" "$(key output "$note")" "$whole" "$(key pair_tests "$note")" \
		"$(key full_tests "$note")" "$cpu_ms" "$sql_ms" "$torch_ms" "$hyb_ms" "$bsky_ms"
	"${PSQL[@]}" -c "DROP TABLE $T"
done
