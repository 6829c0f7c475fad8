#!/usr/bin/env bash
# Engine-level timings of every analytic at one fixed workload each (no
# server): builds the engine benchmarks, runs each on the GPU (best of 3 in
# one process, after a warm-up run inside the benchmark), and prints one line
# per workload.  For checking that a change leaves the engine's speed as it
# was: run it before and after on the same machine.
# Each run's output and the build log go to OUTDIR (default: a new
# /tmp/odp_engine_timings.XXXXXX, printed at the start).
#   bash test/bench/engine_timings.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-$(mktemp -d /tmp/odp_engine_timings.XXXXXX)}
mkdir -p "$out"
echo "logs in $out"
b=test/bench
make -s -j"$(nproc)" $b/knn_engine_bench $b/outliers_engine_bench $b/pearson_engine_bench \
	$b/skyline_engine_bench $b/intervals_engine_bench \
	PG_CONFIG="${PG_CONFIG:-pg_config}" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
run() {
	local name=$1; shift
	echo "### $name: $*"
	"$@" 2>&1 | tee "$out/$name.log" | grep -vE '^  top' | tail -6
}
run knn_all_1e6x32 $b/knn_engine_bench --rows 1000000 --dims 32 --k 10 --reps 3
run knn_batch_1e4x1e6x128 $b/knn_engine_bench --rows 1000000 --queries 10000 --dims 128 --k 10 --reps 3
run outliers_poker_1e6 $b/outliers_engine_bench poker --rows 1000000 --k 50 --n 10 --reps 3
run outliers_unif10_1e6 $b/outliers_engine_bench unif10 --rows 1000000 --k 50 --n 10 --reps 3
run pearson_16384x4096 $b/pearson_engine_bench --series 16384 --len 4096 --threshold 0.9 --reps 3
$b/skyline_engine_bench gen anti 1000000 8 1 "$out/sky_anti.f64" >/dev/null
run skyline_anti_1e6x8 $b/skyline_engine_bench run "$out/sky_anti.f64" 1000000 8 --gpu --reps 3
run intervals_d2_1e6 $b/intervals_engine_bench run 2 1000000 100 1 --gpu --reps 3
rm -f "$out/sky_anti.f64"
