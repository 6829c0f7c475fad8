#!/usr/bin/env bash
# Benchmark of odp_outlier_scores: 100,000 and 1,000,000 random rows of 10
# dimensions (uniform in [0,1), fixed seed), k = 50, on the GPU and the CPU.
# Prints one table: rows, path, read, transfer, compute, output and the
# whole SQL call as the client saw it.  Needs a running server (PGHOST...)
# with odp_gpu installed.  Not a test: it never fails on speed.
#
#   ODP_BENCH_SIZES="100000 1000000"   rows to run
#   ODP_BENCH_CPU_MAX_ROWS=100000      largest input also timed on the CPU
#   ODP_BENCH_CPU_THREADS=1            odp_gpu.cpu_threads for the CPU runs
#   ODP_BENCH_PATHS="gpu cpu"          which paths
set -euo pipefail
sizes=${ODP_BENCH_SIZES:-"100000 1000000"}
cpu_max=${ODP_BENCH_CPU_MAX_ROWS:-100000}
cpu_threads=${ODP_BENCH_CPU_THREADS:-1}
paths=${ODP_BENCH_PATHS:-"gpu cpu"}
dims=10
k=50
psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu" >/dev/null

for n in $sizes; do
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
SELECT setseed(0.5);
DROP TABLE IF EXISTS odp_bench_$n;
CREATE TABLE odp_bench_$n AS
	SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, $dims) WHERE i > 0) AS features
	FROM generate_series(1, $n) i;
ALTER TABLE odp_bench_$n ADD PRIMARY KEY (id);
VACUUM ANALYZE odp_bench_$n;
SQL
done

printf '\n%-9s %-5s %-3s %-4s %10s %12s %12s %11s %11s %11s %7s\n' rows dims k path "read ms" "transfer ms" "compute ms" "output ms" "total ms" "cold ms" chunks
for n in $sizes; do
	for p in $paths; do
		if [ "$p" = cpu ] && [ "$n" -gt "$cpu_max" ]; then continue; fi
		# one session: a cold call (new backend: CUDA context creation on the
		# GPU), then the timed warm call, as a pooled connection would see it
		# (the CPU has nothing to initialise: no cold call there)
		cold_sql="SELECT count(*) FROM odp_top_outliers('odp_bench_$n', k => $k, n => 1)"
		[ "$p" = cpu ] && cold_sql="SELECT 1"
		out=$(psql -X -q -c "SET odp_gpu.device = $p" -c "SET odp_gpu.cpu_threads = $cpu_threads" \
			-c '\timing on' -c "$cold_sql" -c "SET odp_gpu.report_timing = on" \
			-c "SELECT count(*) FROM odp_outlier_scores('odp_bench_$n', k => $k)" 2>&1) || { echo "$out"; continue; }
		t=$(sed -n 's/^NOTICE:  odp_gpu timing: //p' <<<"$out")
		cold=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | sed -n 1p)
		[ "$p" = cpu ] && cold=-
		total=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -1)
		get() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$t"; }
		printf '%-9s %-5s %-3s %-4s %10s %12s %12s %11s %11s %11s %7s\n' "$n" "$dims" "$k" "$p" \
			"$(get read)" "$(get transfer)" "$(get compute)" "$(get output)" "$total" "$cold" "$(get chunks)"
	done
done
echo "(cpu: odp_gpu.cpu_threads = $cpu_threads; total: the whole SQL call timed by psql, warm session;"
echo " cold: odp_top_outliers(k, n => 1) as the first call of a new session, CUDA context creation included)"
