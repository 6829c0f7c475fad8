#!/usr/bin/env bash
# Benchmark of odp_top_outliers (issue 3) on real and generated data sets,
# inside PostgreSQL, with the peers measured in the same run on the same
# data.  Prints one table per data set: rows, dims, k, n, the method asked
# for (auto: the default call) and the one that ran, path,
# distances computed and their fraction of N^2, solving set size, time per
# phase (read, transfer, compute, output) and the whole SQL call in a warm
# session; then the peers' times (PyTorch brute force on the GPU,
# scikit-learn NearestNeighbors on all host CPUs) and whether their top n
# match.  Needs a running server (PGHOST etc.) with odp_gpu installed, and
# python3 with numpy (torch and scikit-learn for the peers).  Not a test:
# it never fails on speed.
#
#   ODP_DATASETS=../shared/datasets   where the ADBench files are (or a copy)
#   ODP_BENCH_SETS="cover donors http poker g2d celeba kdd"
#   ODP_BENCH_KS="5 10 50"   ODP_BENCH_N=10
#   ODP_BENCH_METHODS="auto solvingset bruteforce"   ODP_BENCH_PATH=gpu (where they run)
#   ODP_BENCH_CPU_SETS="cover poker"   data sets also run with the CPU SolvingSet (k = 50; "none": none)
#   ODP_BENCH_CPU_THREADS=16   ODP_BENCH_PEERS=1
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
datasets=${ODP_DATASETS:-$here/../../../shared/datasets}
sets=${ODP_BENCH_SETS:-"cover donors http poker g2d celeba kdd"}
ks=${ODP_BENCH_KS:-"5 10 50"}
n=${ODP_BENCH_N:-10}
methods=${ODP_BENCH_METHODS:-"auto solvingset bruteforce"}
cpu_sets=${ODP_BENCH_CPU_SETS:-"cover poker"}
cpu_threads=${ODP_BENCH_CPU_THREADS:-16}
path=${ODP_BENCH_PATH:-gpu}
work=$(mktemp -d /tmp/odp_bench_top.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -d "$datasets" ] || echo "no ADBench files at $datasets: only generated data sets run"

python3 "$here/outliers_datasets.py" "$datasets" "$work" $sets || exit 1
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || exit 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS odp_bench_warm;
CREATE TABLE odp_bench_warm AS SELECT i::bigint AS id, ARRAY[i % 7, i % 5]::real[] AS f FROM generate_series(1, 100) i;
SQL

# load each data set as odp_bench_<name>(id bigint primary key, f real[]), ids = row numbers
for s in $sets; do
	[ -f "$work/$s.csv" ] || continue
	d=$(head -1 "$work/$s.csv" | awk -F, '{ print NF }')
	cols=$(seq -s, -f 'c%g' 1 "$d"); defs=$(seq -s, -f 'c%g real' 1 "$d")
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL || exit 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_bench_raw, odp_bench_$s;
CREATE UNLOGGED TABLE odp_bench_raw (id bigserial, $defs);
\\copy odp_bench_raw ($cols) FROM '$work/$s.csv' WITH (FORMAT csv)
CREATE TABLE odp_bench_$s AS SELECT id, ARRAY[$cols]::real[] AS f FROM odp_bench_raw;
ALTER TABLE odp_bench_$s ADD PRIMARY KEY (id);
DROP TABLE odp_bench_raw;
VACUUM ANALYZE odp_bench_$s;
-- the bulk writes above bypass shared buffers: one scan puts the table
-- there, so the first timed call reads it like the later ones
SELECT count(*) FROM odp_bench_$s;
SQL
done

# one run: dataset path method k -> a table line, and the ids in $work/ids.<set>.<k>.<path>.<method>
odp_run() {
	local s=$1 p=$2 m=$3 k=$4 out t ids total rows get
	out=$(psql -X -At -c "SET odp_gpu.device = $p" -c "SET odp_gpu.cpu_threads = $cpu_threads" \
		-c "SELECT count(*) FROM odp_top_outliers('odp_bench_warm', k => 3, n => 1)" \
		-c "SET odp_gpu.report_timing = on" -c '\timing on' \
		-c "SELECT string_agg(id::text, ',' ORDER BY rank) FROM odp_top_outliers('odp_bench_$s', k => $k, n => $n, method => '$m')" 2>&1)
	t=$(sed -n 's/^NOTICE:  odp_gpu timing: //p' <<<"$out")
	if [ -z "$t" ]; then echo "$s $p $m k=$k: $(tail -3 <<<"$out" | tr '\n' ' ')"; return; fi
	total=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -1)
	ids=$(grep -E '^[0-9]+(,[0-9]+)*$' <<<"$out" | tail -1)
	echo "$ids" >"$work/ids.$s.$k.$p.$m"
	get() { sed -n "s/.*[ (]$1=\([^ )]*\).*/\1/p" <<<"$t" | head -1; }
	rows=$(get rows)
	printf '%-7s %8s %4s %3s %3s %-10s %-10s %-4s %14s %9s %8s %9s %9s %10s %9s %10s\n' "$s" "$rows" "$(get dims)" "$k" "$n" \
		"$m" "$(get method)" "$p" "$(get distances)" \
		"$(awk -v d="$(get distances)" -v r="$rows" 'BEGIN { if (r > 0 && d != "") printf "%.4f%%", 100 * d / (r * r) }')" \
		"$(get solving_set)" "$(get read)" "$(get transfer)" "$(get compute)" "$(get output)" "$total"
}

hdr() {
	printf '%-7s %8s %4s %3s %3s %-10s %-10s %-4s %14s %9s %8s %9s %9s %10s %9s %10s\n' set rows dims k n asked ran path \
		distances "of N^2" "|S|" "read ms" "xfer ms" "compute ms" "output ms" "total ms"
}

if [ "${ODP_BENCH_PEERS:-1}" = 1 ]; then
	KS="$ks" N="$n" python3 "$here/outliers_peers.py" "$work" $sets >"$work/peers.txt" 2>&1
fi

for s in $sets; do
	[ -f "$work/$s.csv" ] || continue
	echo; echo "== $s"; hdr
	for k in $ks; do
		for m in $methods; do odp_run "$s" "$path" "$m" "$k"; done
	done
	if grep -qw "$s" <<<"$cpu_sets"; then odp_run "$s" cpu solvingset 50; fi
	for k in $ks; do
		# brute force is the reference; without it, auto
		ref="$work/ids.$s.$k.$path.bruteforce"
		[ -f "$ref" ] || ref="$work/ids.$s.$k.$path.auto"
		for f in "$work"/ids."$s".$k.*; do
			[ -f "$ref" ] && [ "$f" != "$ref" ] && { cmp -s "$f" "$ref" && r=same || r=DIFFERENT; \
				echo "k=$k $(basename "$f" | cut -d. -f4,5): top $n ids $r as $path $(basename "$ref" | cut -d. -f5)"; }
		done
		grep "^peer $s [a-z]* $k " "$work/peers.txt" 2>/dev/null | while read -r _ _ peer _ ms ids; do
			if [ "$ms" = "-" ]; then echo "k=$k peer $peer: unavailable"; continue; fi
			if [ "$ids" = "-" ]; then echo "k=$k peer $peer: $ms ms (stopped)"; continue; fi
			[ -f "$ref" ] && { [ "$ids" = "$(cat "$ref")" ] && r=same || r="differ (float64 / matrix-product distances)"; }
			echo "k=$k peer $peer: $ms ms (all k from one pass), top $n ids ${r:-?} as odp_gpu"
		done
	done
	grep "^peer $s .* unavailable" "$work/peers.txt" 2>/dev/null | sort -u
done
exit 0
