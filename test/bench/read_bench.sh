#!/usr/bin/env bash
#
# read_bench.sh
#	  How fast each analytic's main workload reads its table, beside
#	  PostgreSQL's own scan of the same rows, with 0, 2, 4 and 8 parallel
#	  workers; and the whole call split into its phases.
#
# For every workload and worker count W it sets the table's
# parallel_workers and max_parallel_workers_per_gather to W, then times
#   - PostgreSQL's scan: SELECT sum(array_length(col, 1)) FROM t (or
#     count(col) for scalar columns), planned with no parallel costs so
#     that it takes W workers;
#   - the odp_gpu call (the best of REPS calls in one warm session), whose
#     odp_gpu.report_timing NOTICE gives read, transfer, compute, output,
#     the whole call (total) and what no phase accounts for (other).
# It prints one table: read / scan is the input layer against
# PostgreSQL's scan with the same workers; total / (scan + compute +
# output) is the whole call against the ideal of a read at PostgreSQL's
# speed plus the compute and output.  A benchmark, not a test: speed
# never fails it; a call that errors does.
#
# Usage: test/bench/read_bench.sh [SCALE]
#   SCALE (default 1) multiplies every table's rows (0.1 for a quick run).
#   WORKERS="0 2 4 8", REPS=3, DEVICE=gpu (odp_gpu.device for the calls),
#   WORKLOADS="knn outliers pearson skyline intervals" pick the runs.
#   The server needs max_worker_processes and max_parallel_workers of at
#   least the largest W (plus one for the GPU service where preloaded).
#   KEEP_TABLES=1 keeps the tables for a later run of the same SCALE.
#
# Copyright (c) 2026, odp_gpu developers
#
# IDENTIFICATION
#	  test/bench/read_bench.sh
#
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

SCALE=${1:-1}
WORKERS=${WORKERS:-0 2 4 8}
REPS=${REPS:-3}
DEVICE=${DEVICE:-gpu}
WORKLOADS=${WORKLOADS:-knn outliers pearson skyline intervals}
# shellcheck source=test/bench/bench_lib.sh
source "$here/bench_lib.sh"

N_POINTS=$(bench_rows 1000000)
N_SERIES=$(bench_rows 4096)
N_SKY=$(bench_rows 500000)
N_REGIONS=$(bench_rows 1000000)
SERIES_LEN=16384

# ---- the tables (made once per SCALE)
"${PSQL[@]}" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu"
bench_gen "rb_points_$N_POINTS" "id bigint PRIMARY KEY, f real[]" "$N_POINTS" \
	"SELECT i, (SELECT array_agg(random()::real) FROM generate_series(1, 16) WHERE i > 0) FROM generate_series(@LO@, @HI@) i"
bench_gen "rb_series_$N_SERIES" "id bigint PRIMARY KEY, v float8[]" "$N_SERIES" \
	"SELECT i, (SELECT array_agg(random()) FROM generate_series(1, $SERIES_LEN) WHERE i > 0) FROM generate_series(@LO@, @HI@) i" 1
bench_gen "rb_sky_$N_SKY" "id bigint PRIMARY KEY, v float8[]" "$N_SKY" \
	"SELECT i, (SELECT array_agg(floor(random() * 40)) FROM generate_series(1, 6) WHERE i > 0) FROM generate_series(@LO@, @HI@) i" 2
bench_gen "rb_regions_$N_REGIONS" "id bigint PRIMARY KEY, r tstzrange" "$N_REGIONS" \
	"SELECT i, tstzrange(t, t + make_interval(secs => exp(random() * 12)))
	 FROM (SELECT i, timestamptz '2026-01-01' + make_interval(secs => random() * 3e7) AS t
		   FROM generate_series(@LO@, @HI@) i) s" 3

# workload: table | PostgreSQL's scan | the call
workload() {
	case $1 in
	knn) echo "rb_points_$N_POINTS|SELECT sum(array_length(f, 1)) FROM rb_points_$N_POINTS|SELECT count(*) FROM odp_knn('rb_points_$N_POINTS', (SELECT f::float8[] FROM rb_points_$N_POINTS WHERE id = 1), k => 10)" ;;
	outliers) echo "rb_points_$N_POINTS|SELECT sum(array_length(f, 1)) FROM rb_points_$N_POINTS|SELECT count(*) FROM odp_top_outliers('rb_points_$N_POINTS', k => 10, n => 10)" ;;
	pearson) echo "rb_series_$N_SERIES|SELECT sum(array_length(v, 1)) FROM rb_series_$N_SERIES|SELECT count(*) FROM odp_pearson('rb_series_$N_SERIES', min_abs_r => 0.9)" ;;
	skyline) echo "rb_sky_$N_SKY|SELECT sum(array_length(v, 1)) FROM rb_sky_$N_SKY|SELECT count(*) FROM odp_skyline('rb_sky_$N_SKY')" ;;
	intervals) echo "rb_regions_$N_REGIONS|SELECT count(r) FROM rb_regions_$N_REGIONS|SELECT odp_interval_match_count('rb_regions_$N_REGIONS', dims => '{r}')" ;;
	esac
}

printf '| workload | rows | W | PG scan ms | read ms | read / scan | read workers | transfer ms | compute ms | output ms | other ms | whole call ms | scan + compute + output ms | whole / that |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for w in $WORKLOADS; do
	IFS='|' read -r table scan call < <(workload "$w")
	nrows=$("${PSQL[@]}" -c "SELECT count(*) FROM $table")
	for W in $WORKERS; do
		"${PSQL[@]}" -c "ALTER TABLE $table SET (parallel_workers = $W)"
		scan_ms=$(bench_scan_ms "$W" "$scan")
		out=$("${PSQL[@]}" 2>&1 <<EOF
$(bench_parallel_settings "$W")
SET odp_gpu.device = $DEVICE;
SET odp_gpu.report_timing = on;
SET odp_gpu.table_cache = off;
$(for ((i = 0; i <= REPS; i++)); do echo "$call;"; done)
EOF
) || { echo "$w with $W workers failed: $out" >&2; exit 1; }
		# the warm call with the smallest whole time (the first warms up)
		best=$(bench_best_notice "$out")
		[ -n "$best" ] || { echo "$w with $W workers gave no timing: $out" >&2; exit 1; }
		read_ms=$(bench_key read "$best"); total=$(bench_key total "$best")
		compute=$(bench_key compute "$best"); output=$(bench_key output "$best")
		awk -v w="$w" -v n="$nrows" -v W="$W" -v scan="$scan_ms" -v rd="$read_ms" \
			-v rw="$(bench_key read_workers "$best")" -v tr="$(bench_key transfer "$best")" \
			-v co="$compute" -v ou="$output" -v ot="$(bench_key other "$best")" -v to="$total" \
			'BEGIN { ideal = scan + co + ou;
				printf "| %s | %d | %d | %.1f | %.1f | %.2f | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
					w, n, W, scan, rd, rd / scan, rw, tr, co, ou, ot, to, ideal, to / ideal }'
	done
done

if [ "${KEEP_TABLES:-0}" != 1 ]; then
	"${PSQL[@]}" -c "DROP TABLE rb_points_$N_POINTS, rb_series_$N_SERIES, rb_sky_$N_SKY, rb_regions_$N_REGIONS"
fi
