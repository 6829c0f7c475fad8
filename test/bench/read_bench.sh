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

SCALE=${1:-1}
WORKERS=${WORKERS:-0 2 4 8}
REPS=${REPS:-3}
DEVICE=${DEVICE:-gpu}
WORKLOADS=${WORKLOADS:-knn outliers pearson skyline intervals}
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -At)

rows() { awk -v n="$1" -v s="$SCALE" 'BEGIN { r = int(n * s); print (r < 100 ? 100 : r) }'; }
N_POINTS=$(rows 1000000)
N_SERIES=$(rows 4096)
N_SKY=$(rows 500000)
N_REGIONS=$(rows 1000000)
SERIES_LEN=16384

# ---- the tables (made once per SCALE) ----
"${PSQL[@]}" <<EOF
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
CREATE TABLE IF NOT EXISTS rb_points_$N_POINTS (id bigint PRIMARY KEY, f real[]);
INSERT INTO rb_points_$N_POINTS
	SELECT i, (SELECT array_agg(random()::real) FROM generate_series(1, 16) WHERE i > 0)
	FROM generate_series(1, $N_POINTS) i
	WHERE NOT EXISTS (SELECT 1 FROM rb_points_$N_POINTS);
CREATE TABLE IF NOT EXISTS rb_series_$N_SERIES (id bigint PRIMARY KEY, v float8[]);
INSERT INTO rb_series_$N_SERIES
	SELECT i, (SELECT array_agg(random()) FROM generate_series(1, $SERIES_LEN) WHERE i > 0)
	FROM generate_series(1, $N_SERIES) i
	WHERE NOT EXISTS (SELECT 1 FROM rb_series_$N_SERIES);
CREATE TABLE IF NOT EXISTS rb_sky_$N_SKY (id bigint PRIMARY KEY, v float8[]);
INSERT INTO rb_sky_$N_SKY
	SELECT i, (SELECT array_agg(floor(random() * 40)) FROM generate_series(1, 6) WHERE i > 0)
	FROM generate_series(1, $N_SKY) i
	WHERE NOT EXISTS (SELECT 1 FROM rb_sky_$N_SKY);
CREATE TABLE IF NOT EXISTS rb_regions_$N_REGIONS (id bigint PRIMARY KEY, r tstzrange);
INSERT INTO rb_regions_$N_REGIONS
	SELECT i, tstzrange(t, t + make_interval(secs => exp(random() * 12)))
	FROM (SELECT i, timestamptz '2026-01-01' + make_interval(secs => random() * 3e7) AS t
		  FROM generate_series(1, $N_REGIONS) i) s
	WHERE NOT EXISTS (SELECT 1 FROM rb_regions_$N_REGIONS);
VACUUM ANALYZE rb_points_$N_POINTS, rb_series_$N_SERIES, rb_sky_$N_SKY, rb_regions_$N_REGIONS;
EOF

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

# The value of key (ms) in a timing NOTICE.
key() { sed -n "s/.* $1=\([0-9.-]*\).*/\1/p" <<<"$2"; }

printf '| workload | rows | W | PG scan ms | read ms | read / scan | read workers | transfer ms | compute ms | output ms | other ms | whole call ms | scan + compute + output ms | whole / that |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for w in $WORKLOADS; do
	IFS='|' read -r table scan call < <(workload "$w")
	nrows=$("${PSQL[@]}" -c "SELECT count(*) FROM $table")
	for W in $WORKERS; do
		"${PSQL[@]}" -c "ALTER TABLE $table SET (parallel_workers = $W)"
		settings="SET max_parallel_workers_per_gather = $W; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
		scan_ms=$("${PSQL[@]}" <<EOF | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -n | head -1
$settings
\\timing on
$(for ((i = 0; i <= REPS; i++)); do echo "$scan;"; done)
EOF
)
		out=$("${PSQL[@]}" 2>&1 <<EOF
$settings
SET odp_gpu.device = $DEVICE;
SET odp_gpu.report_timing = on;
$(for ((i = 0; i <= REPS; i++)); do echo "$call;"; done)
EOF
) || { echo "$w with $W workers failed: $out" >&2; exit 1; }
		# the warm call with the smallest whole time (the first warms up)
		best=$(grep 'odp_gpu timing' <<<"$out" | tail -n +2 |
			awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^total=/) { split($i, a, "="); print a[2] "\t" $0 } }' |
			sort -n | head -1 | cut -f2-)
		[ -n "$best" ] || { echo "$w with $W workers gave no timing: $out" >&2; exit 1; }
		read_ms=$(key read "$best"); total=$(key total "$best")
		compute=$(key compute "$best"); output=$(key output "$best")
		awk -v w="$w" -v n="$nrows" -v W="$W" -v scan="$scan_ms" -v rd="$read_ms" \
			-v rw="$(key read_workers "$best")" -v tr="$(key transfer "$best")" \
			-v co="$compute" -v ou="$output" -v ot="$(key other "$best")" -v to="$total" \
			'BEGIN { ideal = scan + co + ou;
				printf "| %s | %d | %d | %.1f | %.1f | %.2f | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
					w, n, W, scan, rd, rd / scan, rw, tr, co, ou, ot, to, ideal, to / ideal }'
	done
done

if [ "${KEEP_TABLES:-0}" != 1 ]; then
	"${PSQL[@]}" -c "DROP TABLE rb_points_$N_POINTS, rb_series_$N_SERIES, rb_sky_$N_SKY, rb_regions_$N_REGIONS"
fi
