#!/usr/bin/env bash
# temporary device script (not committed)
source .devpg/start.sh >/dev/null 2>&1
make -s -j16 >$OUT/build.log 2>&1 && make -s install >>$OUT/build.log 2>&1 || { tail -50 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
ODP_DATASETS=.bench_data PEER_LIMIT_S=60 ODP_BENCH_CPU_SETS=cover timeout 420 bash test/bench/bench_top_outliers.sh >$OUT/bench.log 2>&1
cat $OUT/bench.log
ODP_PASSED=0; ODP_FAILED=0
source test/cancel_check.sh
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
SELECT setseed(0.75);
CREATE TABLE odp_cancel_gpu AS
	SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, 32) WHERE i > 0) AS features
	FROM generate_series(1, 1500000) i;
SQL
odp_cancel_checks gpu odp_cancel_gpu 50
echo "cancel: $ODP_PASSED passed, $ODP_FAILED failed"
