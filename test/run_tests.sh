#!/usr/bin/env bash
# Runs every test of odp_gpu on a fresh Debian 12 machine (as root or as a
# user who already has PostgreSQL 15 and its headers): installs what is
# missing, builds with warnings as errors, installs, checks the tree's
# layout and the build without CUDA, runs the engine unit tests, starts a
# throwaway server, runs the pg_regress suites (serially read and read by
# parallel workers), the suite against the real pgvector (built from its
# source where ../shared/third_party/ has it, else skipped), the parallel
# read, upgrade, cancellation,
# pg_cron, GPU service and sharded-table checks of test/checks/ (the GPU
# service's on its CPU engine, the last with two node servers of its own),
# stops the servers, and ends with "N passed, N failed".  Logs go to a
# directory of the run's own (/tmp/odp_run.XXXXXX), removed at the end,
# kept and named on a failure.  Exits non-zero on any failure.
# Usage: bash test/run_tests.sh
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/checks/cancel.sh"
source "$(dirname "$0")/checks/spatial.sh"
source "$(dirname "$0")/checks/upgrade.sh"
source "$(dirname "$0")/checks/catalog.sh"
source "$(dirname "$0")/checks/cron.sh"
source "$(dirname "$0")/checks/service.sh"
source "$(dirname "$0")/checks/staging.sh"
source "$(dirname "$0")/checks/table_cache.sh"
source "$(dirname "$0")/checks/engine.sh"
source "$(dirname "$0")/checks/parallel_read.sh"
source "$(dirname "$0")/checks/distributed.sh"
source "$(dirname "$0")/checks/pgvector.sh"
ODP_PASSED=0
ODP_FAILED=0
odp_run_dir_create
log=$ODP_RUN_DIR
set -e
odp_install_deps
odp_build
set +e

# 0. the layout of the tree (test/checks/layout.sh: includes and calls run
# one way, no names a letter apart, long files mapped), and the build
# without CUDA, in a copy of the tree: its engine test program links only
# if every GPU entry point has its stub
odp_log "layout and the build without CUDA"
bash "$ODP_ROOT/test/checks/layout.sh" >"$log/layout.out" 2>&1
cat "$log/layout.out"
ODP_PASSED=$((ODP_PASSED + $(grep -c '^ok ' "$log/layout.out")))
ODP_FAILED=$((ODP_FAILED + $(grep -c '^FAILED ' "$log/layout.out")))
grep '^FAILED ' "$log/layout.out" | while read -r _ line; do odp_note_failure "layout: $line"; done
# The C objects are the same in both builds (no flag differs): they come
# along, times kept, so that this build compiles the stubs and links.
mkdir "$log/nocuda"
(cd "$ODP_ROOT" && { git ls-files -z --cached --others --exclude-standard 2>/dev/null ||
	find . -path ./.git -prune -o -type f -print0; }
	find src kernels -name '*.o' -newer Makefile -print0) |
	(cd "$ODP_ROOT" && xargs -0 cp -p --parents -t "$log/nocuda" 2>/dev/null)
make -C "$log/nocuda" -s -j"$(nproc)" WITH_CUDA=no PG_CONFIG="$PG_CONFIG" PG_CFLAGS=-Werror \
	all test/engine/test_engine >"$log/nocuda.log" 2>&1
odp_check "builds and links without CUDA (make WITH_CUDA=no)" $? "$(grep -m3 -E 'error|undefined' "$log/nocuda.log" | tr '\n' ' ')"
rm -rf "$log/nocuda"

# 1. engine unit tests (CPU everywhere, GPU where one is usable)
odp_log "engine unit tests"
make -C "$ODP_ROOT" -s engine-test PG_CONFIG="$PG_CONFIG" >"$log/engine_test.log" 2>&1
rc=$?
grep -E '^(FAIL|GPU tests)' "$log/engine_test.log"
odp_engine_log_counts "$log/engine_test.log"
line=$ODP_ENGINE_LINE
[ -n "$line" ] && echo "engine: $line"
if [ $rc -ne 0 ] && { [ -z "$line" ] || [ "$(cut -d' ' -f3 <<<"$line")" = 0 ]; }; then
	tail -20 "$log/engine_test.log"
	ODP_FAILED=$((ODP_FAILED + 1))
fi

# 2. pg_regress suites against a throwaway server (their results and
# regression.diffs in the run's directory, regress/)
set -e
odp_start_server
set +e
# Runs the suites once (label $1, results in $log/$2, PGOPTIONS $3, the
# suites $4, default every one) and counts their results.
odp_regress_pass() {
	local ok bad
	odp_log "pg_regress suites$1"
	PGOPTIONS="${3:-}" make -C "$ODP_ROOT" -s installcheck PG_CONFIG="$PG_CONFIG" \
		${4:+REGRESS="$4"} EXTRA_REGRESS_OPTS="--outputdir=$log/$2" >"$log/$2.log" 2>&1
	grep -E '^(test| +[a-z_0-9]+ +\.\.\.)|\.\.\. (ok|FAILED|failed)' "$log/$2.log"
	ok=$(grep -cE '\.\.\. ok' "$log/$2.log")
	bad=$(grep -cE '\.\.\. (FAILED|failed)' "$log/$2.log")
	ODP_PASSED=$((ODP_PASSED + ok))
	ODP_FAILED=$((ODP_FAILED + bad))
	grep -E '\.\.\. (FAILED|failed)' "$log/$2.log" | while read -r line; do
		odp_note_failure "pg_regress suites$1: $line (diffs: $log/$2/regression.diffs)"
	done
	if [ "$bad" -gt 0 ] || [ "$ok" -eq 0 ]; then
		[ "$ok" -eq 0 ] && [ "$bad" -eq 0 ] && ODP_FAILED=$((ODP_FAILED + 1)) &&
			odp_note_failure "pg_regress suites$1: none ran ($(tail -2 "$log/$2.log" | tr '\n' ' '))"
		tail -30 "$log/$2.log"
		[ -f "$log/$2/regression.diffs" ] && head -200 "$log/$2/regression.diffs"
		odp_server_log_tail 30
	fi
}
odp_regress_pass "" regress
# the suites again with each table read in parallel (all but the
# exhaustive ones of test/lib.sh), then the parallel reads' own checks
# (workers used or not, cancels, leaks).  One worker beside the leader,
# which reads too: two readers that place rows at once, as many readers
# do.  A worker costs about 30 ms to start on a 2-core machine, and the
# suites make hundreds of calls; the GPU suite and the parallel reads' own
# checks keep two workers and more.
odp_regress_pass ", tables read in parallel (odp_gpu.parallel_read = force)" regress_parallel \
	"-c odp_gpu.parallel_read=force -c max_parallel_workers_per_gather=1" \
	"$(odp_regress_suites "$ODP_REGRESS_EXHAUSTIVE")"
odp_log "parallel read checks"
odp_parallel_read_checks cpu
# pgvector's types as features, against the real pgvector (test/pgvector),
# serially read and read by parallel workers
odp_log "pgvector's vector, halfvec and sparsevec (test/pgvector)"
if odp_pgvector_install; then
	odp_pgvector_suite "" pgvector
	odp_pgvector_suite ", tables read in parallel" pgvector_parallel \
		"-c odp_gpu.parallel_read=force -c max_parallel_workers_per_gather=2"
	odp_pgvector_workers_check cpu
fi

# 3. upgrades from the first release, released scripts left alone, and the
# README's benchmark tables as recorded
odp_log "upgrade checks"
odp_upgrade_checks
odp_log "regclass sources: dump and restore"
odp_catalog_checks
odp_released_scripts_check
bash "$ODP_ROOT/test/bench/plot_benchmarks.sh" --check >"$log/plots.out" 2>&1
odp_check "README.md's benchmark tables are those of test/bench/results" $? "$(head -c 300 "$log/plots.out")"

# 4. cancellation of a long CPU run (the GPU suite repeats this on a GPU)
odp_log "cancellation checks"
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS odp_cancel_data;
CREATE TABLE odp_cancel_data AS
	SELECT i AS id, array(SELECT random()::real FROM generate_series(1, 16) WHERE i > 0) AS features
	FROM generate_series(1, 100000) i;
SQL
odp_cancel_checks cpu odp_cancel_data 10
odp_cancel_series_checks cpu 20000 64
odp_cancel_sky_checks cpu 150000
odp_cancel_interval_checks cpu 200000
psql -X -q -c "DROP TABLE odp_cancel_data" >/dev/null
odp_spatial_cancel_checks cpu 1000000
odp_log "the spatial path: many sessions at once"
odp_spatial_data && odp_spatial_sessions_check cpu "in backends"

# 5. the GPU service (odp_gpu preloaded) on its CPU engine: the regress
# suites through it, many sessions, a budget of one request, cancels,
# a backend and the service stopped mid-call; its staging area and the
# table cache in it.  pg_cron is preloaded beside it while the suites run:
# a nightly job scheduled before them runs at the minute boundary that
# comes meanwhile (its results, idempotence, a failed run, its calls in
# the service)
odp_log "the GPU service, and a nightly job under pg_cron in it"
odp_cron_database
if odp_service_start_checks "$(odp_cron_installed && echo "$ODP_CRON_OPTS")"; then
	odp_cron_schedule
	odp_service_regress_checks
	odp_cron_results
	odp_service_call_checks
fi
odp_cron_drop
odp_log "the GPU service's staging area"
odp_staging_checks
odp_log "the table cache"
odp_table_cache_checks
odp_log "the GPU service's engine process: crashes and hangs"
odp_engine_checks

# 6. a table sharded over two node servers and the coordinator
odp_log "sharded tables (postgres_fdw nodes)"
odp_distributed_checks

odp_stop_server
odp_failure_recap
odp_run_dir_end "$ODP_FAILED"
echo "$ODP_PASSED passed, $ODP_FAILED failed"
[ "$ODP_FAILED" -eq 0 ]
