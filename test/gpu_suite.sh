#!/usr/bin/env bash
# The GPU host's one script: builds, installs, runs the engine tests (GPU
# part included), the regress suites with odp_gpu.device = gpu (and the
# suite against the real pgvector, test/pgvector, where its source is at
# hand: test/checks/pgvector.sh), GPU-vs-CPU
# comparisons on random and adversarial data of several sizes (one split
# into many chunks by a small odp_gpu.gpu_memory_limit; integer data for
# the exact integer path), concurrent sessions on integer data, the
# cancellation checks on the GPU, and the benchmark; ends with "N passed,
# N failed".
#
# Needs a running server: PGHOST etc. set (e.g. source .devpg/start.sh),
# or none, and then it starts a throwaway one like test/run_tests.sh.
#   ODP_SKIP_ENGINE=1, ODP_SKIP_REGRESS=1, ODP_SKIP_BENCH=1 skip those parts,
#   ODP_SKIP_COMPARE=1 the GPU-vs-CPU comparisons, the large input and the
#   cancellation checks (the two-part checks of odp_gpu.devices still run).
#   ODP_ANALYTICS="outliers knn pearson skyline intervals precision sharded"
#   (default all)
#   limits the engine tests, comparisons, cancellation checks and
#   benchmarks to those; one analytic alone (outliers, knn, pearson,
#   skyline, intervals; precision: float64 rows) runs only its engine tests (test_engine --NAME) and
#   its regress suites (sql/NAME.sql, sql/NAME_*.sql); sharded alone runs
#   the distributed engine tests, every regress suite and the distributed
#   checks (test/checks/distributed.sh) with the nodes on the GPU.
#   ODP_PREBUILT=1 installs the odp_gpu.so already built in the tree (same
#   compiler and flags, e.g. built on a machine without a GPU) instead of
#   building, and uses the engine test binary already built.
#   ODP_SERVICE=1 runs everything through the GPU service: after building
#   and installing, it restarts the server with its own options plus
#   shared_preload_libraries = odp_gpu and odp_gpu.service_engine = gpu
#   (ODP_SERVICE_ENGINE), waits until the service takes GPU calls, starts
#   the sharded-table checks' node servers the same way, and at the end
#   restarts a running server with its own options again; the regress
#   suites, comparisons, cancellation checks and benchmarks then reach the
#   GPU through the service (the engine tests, without a server, do not).
# Logs go to a directory of the run's own (/tmp/odp_run.XXXXXX), removed at
# the end, kept and named on a failure.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/checks/cancel.sh"
source "$(dirname "$0")/checks/spatial.sh"
source "$(dirname "$0")/checks/distributed.sh"
source "$(dirname "$0")/checks/parallel_read.sh"
source "$(dirname "$0")/checks/pgvector.sh"
source "$(dirname "$0")/checks/service.sh"
source "$(dirname "$0")/checks/staging.sh"
source "$(dirname "$0")/checks/table_cache.sh"
ODP_PASSED=0
ODP_FAILED=0
odp_run_dir_create
log=$ODP_RUN_DIR
cd "$ODP_ROOT"
if [ -n "${PGHOST:-}" ] && pg_isready -q 2>/dev/null; then
	export ODP_USE_RUNNING_SERVER=1
	export PG_CONFIG=${PG_CONFIG:-$(command -v pg_config)}
fi
ODP_ANALYTICS=${ODP_ANALYTICS:-outliers knn pearson skyline intervals precision sharded}
odp_wants() { [[ " $ODP_ANALYTICS " == *" $1 "* ]]; }
set -e
odp_install_deps
if [ "${ODP_PREBUILT:-0}" = 1 ]; then
	odp_install_prebuilt
else
	odp_build
fi
odp_start_server
set +e
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu" >/dev/null
service_opts=
if [ "${ODP_SERVICE:-0}" = 1 ]; then
	service_opts="-c shared_preload_libraries=odp_gpu -c odp_gpu.service_engine=${ODP_SERVICE_ENGINE:-gpu}${ODP_SERVICE_OPTS:+ $ODP_SERVICE_OPTS}"
	odp_log "restarting the server with odp_gpu preloaded: the GPU service runs every GPU call below"
	odp_server_save && odp_server_restart "$service_opts" >"$log/restart.log" && odp_service_wait
	odp_check "the server preloads odp_gpu and its GPU service takes GPU calls" $? \
		"shared_preload_libraries = '$(psql -X -At -c 'SHOW shared_preload_libraries' 2>&1)'; $(tail -1 "$log/restart.log")"
fi
if [ "${ODP_SKIP_ENGINE:-0}" != 1 ]; then
odp_log "engine unit tests"
case "$ODP_ANALYTICS" in
	outliers|knn|pearson|skyline|intervals|precision) engine_args=--$ODP_ANALYTICS ;;
	sharded) engine_args=--distributed ;;
	*) engine_args= ;;
esac
if [ "${ODP_PREBUILT:-0}" = 1 ]; then
	test/engine/test_engine $engine_args >"$log/engine_test.log" 2>&1
else
	make -s test/engine/test_engine PG_CONFIG="$PG_CONFIG" >"$log/engine_test.log" 2>&1 &&
		test/engine/test_engine $engine_args >>"$log/engine_test.log" 2>&1
fi
tail -60 "$log/engine_test.log"
grep -E '^FAIL' "$log/engine_test.log" | head -20
odp_engine_log_counts "$log/engine_test.log"
[ -n "$ODP_ENGINE_LINE" ] || ODP_FAILED=$((ODP_FAILED + 1))
fi

if [ "${ODP_SKIP_REGRESS:-0}" != 1 ]; then
odp_log "pg_regress suites with odp_gpu.device = gpu, odp_gpu.gpu_min_rows = 0"
# settings is left out: it checks the settings' defaults, which PGOPTIONS changes
suites=$(ls sql/*.sql | sed 's|sql/||; s|\.sql$||' | grep -v -e '^odp_gpu--' -e '^settings$' | tr '\n' ' ')
# the service suite describes a server without the service
[ "${ODP_SERVICE:-0}" = 1 ] && suites=$(tr ' ' '\n' <<<"$suites" | grep -v '^service$' | tr '\n' ' ')
# one analytic: its suites, named feature first (outliers, outliers_solvingset, ...)
case "$ODP_ANALYTICS" in
	outliers|knn|pearson|skyline|intervals|precision)
		suites=$(ls sql/"$ODP_ANALYTICS".sql sql/"$ODP_ANALYTICS"_*.sql 2>/dev/null | sed 's|sql/||; s|\.sql$||' | tr '\n' ' ') ;;
esac
# twice: tables read by the backend alone, then by two parallel workers
for pass in regress regress_parallel; do
	opts="-c odp_gpu.device=gpu -c odp_gpu.gpu_min_rows=0"
	[ $pass = regress_parallel ] && opts="$opts -c odp_gpu.parallel_read=force -c max_parallel_workers_per_gather=2" &&
		odp_log "the same suites, every table read by parallel workers"
	PGOPTIONS="$opts" make -s installcheck REGRESS="$suites" \
		EXTRA_REGRESS_OPTS="--outputdir=$log/$pass" PG_CONFIG="$PG_CONFIG" >"$log/$pass.log" 2>&1
	grep -E '\.\.\. ' "$log/$pass.log"
	ok=$(grep -cE '\.\.\. ok' "$log/$pass.log"); bad=$(grep -cE '\.\.\. (FAILED|failed)' "$log/$pass.log")
	ODP_PASSED=$((ODP_PASSED + ok)); ODP_FAILED=$((ODP_FAILED + bad))
	grep -E '\.\.\. (FAILED|failed)' "$log/$pass.log" | while read -r line; do odp_note_failure "$pass: $line"; done
	[ "$bad" -gt 0 ] && head -150 "$log/$pass/regression.diffs"
done
odp_log "parallel read checks on the GPU"
odp_parallel_read_checks gpu
# the suite against the real pgvector (test/pgvector), with every analytic
# but one selected; skipped where its source is not at hand
case "$ODP_ANALYTICS" in
	outliers|knn|pearson|skyline|intervals|precision|sharded) ;;
	*)
		odp_log "pgvector's vector, halfvec and sparsevec on the GPU (test/pgvector)"
		if odp_pgvector_install; then
			odp_pgvector_suite " with odp_gpu.device = gpu" pgvector \
				"-c odp_gpu.device=gpu -c odp_gpu.gpu_min_rows=0"
			odp_pgvector_suite " with odp_gpu.device = gpu, tables read in parallel" pgvector_parallel \
				"-c odp_gpu.device=gpu -c odp_gpu.gpu_min_rows=0 -c odp_gpu.parallel_read=force -c max_parallel_workers_per_gather=2"
			odp_pgvector_workers_check gpu
		fi ;;
esac
fi

if odp_wants knn; then
odp_log "the spatial path: concurrent sessions on the GPU"
odp_spatial_data && odp_spatial_sessions_check gpu "on the GPU"
fi

if [ "${ODP_SKIP_COMPARE:-0}" != 1 ]; then
if odp_wants outliers; then
odp_log "GPU vs CPU on random data"
# odp_compare NAME ROWS DIMS K METRIC GENERATOR [MEMORY_LIMIT_MB]
odp_compare() {
	local name=$1 rows=$2 dims=$3 k=$4 metric=$5 gen=$6 limit=${7:-0} out
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
SELECT setseed(0.25);
DROP TABLE IF EXISTS cmp_data, cmp_cpu, cmp_gpu;
CREATE TABLE cmp_data AS SELECT i::bigint AS id,
	array(SELECT ($gen)::real FROM generate_series(1, $dims) WHERE i > 0) AS f
	FROM generate_series(1, $rows) i;
SET odp_gpu.device = cpu;
SET odp_gpu.cpu_threads = 16;
CREATE TABLE cmp_cpu AS SELECT * FROM odp_outlier_scores('cmp_data', k => $k, metric => '$metric');
SELECT 'cpu_top=' || array_agg(id ORDER BY rank)::text FROM odp_top_outliers('cmp_data', k => $k, n => 25, metric => '$metric');
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_memory_limit = $limit;
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
CREATE TABLE cmp_gpu AS SELECT * FROM odp_outlier_scores('cmp_data', k => $k, metric => '$metric');
SET client_min_messages = warning;
SELECT 'gpu_top=' || array_agg(id ORDER BY rank)::text FROM odp_top_outliers('cmp_data', k => $k, n => 25, metric => '$metric');
SELECT 'cmp=' || count(*) || ' ' || count(*) FILTER (WHERE g.score = c.score) || ' '
	|| coalesce(max(abs(g.score - c.score) / greatest(abs(c.score), 1e-300)), 0)
	FROM cmp_cpu c FULL JOIN cmp_gpu g USING (id);
DROP TABLE cmp_data, cmp_cpu, cmp_gpu;
SQL
)
	local cmp=$(sed -n 's/^cmp=//p' <<<"$out") chunks=$(sed -n 's/.*chunks=\([0-9]*\).*/\1/p' <<<"$out")
	local n=$(cut -d' ' -f1 <<<"$cmp") exact=$(cut -d' ' -f2 <<<"$cmp") maxrel=$(cut -d' ' -f3 <<<"$cmp")
	local gt=$(sed -n 's/^gpu_top=//p' <<<"$out") ct=$(sed -n 's/^cpu_top=//p' <<<"$out")
	[ "$n" = "$rows" ] && [ -n "$gt" ] && [ "$gt" = "$ct" ] && awk -v r="$maxrel" 'BEGIN { exit !(r <= 1e-5) }'
	odp_check "gpu-vs-cpu $name: rows=$rows dims=$dims k=$k $metric limit=${limit}MB" $? \
		"chunks=$chunks, bit-identical $exact/$n, max rel diff $maxrel, top-25 $([ "$gt" = "$ct" ] && echo same || echo DIFFERENT)"
	grep -q '^ERROR' <<<"$out" && grep '^ERROR' <<<"$out" | head -3
}
odp_compare uniform 3000 3 5 euclidean "random()"
odp_compare uniform 20000 10 50 euclidean "random()"
odp_compare uniform 20000 10 50 sqeuclidean "random()"
odp_compare uniform 20000 10 50 manhattan "random()"
odp_compare uniform 20000 10 50 chebyshev "random()"
odp_compare uniform 20000 10 50 cosine "random() + 0.01"
odp_compare gaussian 100000 10 50 euclidean "sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())"
odp_compare chunked 100000 10 50 euclidean "random()" 4
odp_compare ties 20000 2 10 euclidean "floor(random() * 4)"
odp_compare wide 4000 1000 20 euclidean "random()"
odp_compare k1 5000 8 1 manhattan "random()"
odp_compare bigk 5000 8 1000 euclidean "random()"
# integer data: the exact integer path (kernels/knn/knn_gpu_int.cu), its
# norms folded into the products or not, manhattan on 0/1 rows, and a
# memory limit too small for it (the float paths take over)
odp_compare poker-like 100000 10 50 euclidean "1 + floor(random() * 13)"
odp_compare int-range200 30000 4 20 sqeuclidean "floor(random() * 201)"
odp_compare binary 50000 39 10 manhattan "floor(random() * 2)"
odp_compare binary 50000 39 10 sqeuclidean "floor(random() * 2)"
odp_compare int-chunked 60000 10 50 euclidean "1 + floor(random() * 13)" 4

fi

if odp_wants knn; then
odp_log "k-NN: GPU vs CPU"
# odp_compare_knn NAME QUERIES ROWS DIMS K METRIC [MEMORY_LIMIT_MB [GENERATOR]]:
# QUERIES = 0 is a self join, 1 a single odp_knn query; rows and distances
# must be equal.
odp_compare_knn() {
	local name=$1 nq=$2 rows=$3 dims=$4 k=$5 metric=$6 limit=${7:-0} gen=${8:-"random() - 0.3"} out call
	if [ "$nq" = 0 ]; then call="odp_knn_join('knn_src', 'knn_src', k => $k, metric => '$metric')"
	elif [ "$nq" = 1 ]; then call="(SELECT 1::bigint AS query_id, * FROM odp_knn('knn_src', (SELECT f FROM knn_q), k => $k, metric => '$metric')) s"
	else call="odp_knn_join('knn_q', 'knn_src', k => $k, metric => '$metric')"; fi
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
SELECT setseed(0.5);
DROP TABLE IF EXISTS knn_src, knn_q, knn_cpu, knn_gpu;
CREATE TABLE knn_src AS SELECT i::bigint AS id,
	array(SELECT ($gen)::real FROM generate_series(1, $dims) WHERE i > 0) AS f FROM generate_series(1, $rows) i;
CREATE TABLE knn_q AS SELECT i::bigint AS id,
	array(SELECT ($gen)::real FROM generate_series(1, $dims) WHERE i > 0) AS f FROM generate_series(1, greatest($nq, 1)) i;
SET odp_gpu.device = cpu;
SET odp_gpu.cpu_threads = 16;
CREATE TABLE knn_cpu AS SELECT query_id, rank, id, distance FROM $call;
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_memory_limit = $limit;
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
CREATE TABLE knn_gpu AS SELECT query_id, rank, id, distance FROM $call;
SET client_min_messages = warning;
SELECT 'cmp=' || count(*) || ' ' || count(*) FILTER (WHERE c.id = g.id AND c.distance = g.distance)
	FROM knn_cpu c FULL JOIN knn_gpu g USING (query_id, rank);
DROP TABLE knn_src, knn_q, knn_cpu, knn_gpu;
SQL
)
	local cmp=$(sed -n 's/^cmp=//p' <<<"$out") chunks=$(sed -n 's/.*chunks=\([0-9]*\).*/\1/p' <<<"$out")
	local n=$(cut -d' ' -f1 <<<"$cmp") same=$(cut -d' ' -f2 <<<"$cmp") expect
	expect=$(( (nq == 0 ? rows : (nq == 1 ? 1 : nq)) * (k < rows ? k : rows - (nq == 0 ? 1 : 0)) ))
	[ -n "$n" ] && [ "$n" = "$expect" ] && [ "$same" = "$n" ]
	odp_check "gpu-vs-cpu knn $name: queries=$nq rows=$rows dims=$dims k=$k $metric limit=${limit}MB" $? \
		"$same of $n rows (expected $expect) identical, chunks=$chunks; $(sed -n 's/.*\(compute=[0-9.]* ms\).*/\1/p' <<<"$out" | tr '\n' ' ')"
	grep -q '^ERROR' <<<"$out" && grep '^ERROR' <<<"$out" | head -3
}
odp_compare_knn batch 2000 50000 32 10 euclidean
odp_compare_knn batch 2000 50000 32 10 sqeuclidean
odp_compare_knn batch 2000 50000 32 10 cosine
odp_compare_knn batch 2000 50000 32 10 inner_product
odp_compare_knn wide 500 20000 128 10 manhattan
odp_compare_knn wide 500 20000 128 10 chebyshev
odp_compare_knn self 20000 20000 16 10 euclidean
odp_compare_knn self-join 0 30000 16 10 euclidean
odp_compare_knn one-query 1 200000 128 10 euclidean
odp_compare_knn few-queries 40 200000 64 10 inner_product
odp_compare_knn bigk 100 20000 8 1024 euclidean
odp_compare_knn chunked 0 50000 8 10 euclidean 4
odp_compare_knn chunked-join 3000 60000 8 7 manhattan 4
# integer data (the integer path's lists: every distance below 256)
odp_compare_knn binary-self 0 30000 39 10 euclidean 0 "floor(random() * 2)"
odp_compare_knn binary-join 2000 50000 39 64 manhattan 0 "floor(random() * 2)"
odp_compare_knn small-ints 0 30000 3 10 sqeuclidean 0 "floor(random() * 6)"

odp_log "concurrent sessions on the GPU, integer data"
# odp_int_sessions N: N sessions at once take the top 25 outliers and a
# k-NN join of 0/1 rows (the integer path) on the GPU; each must print the
# CPU path's rows.
odp_int_sessions() {
	local n=$1 ref i bad=0
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT setseed(0.375);
DROP TABLE IF EXISTS sess_int;
CREATE TABLE sess_int AS SELECT i::bigint AS id,
	array(SELECT floor(random() * 2)::real FROM generate_series(1, 39) WHERE i > 0) AS f
	FROM generate_series(1, 20000) i;
SQL
	local q="SELECT (SELECT string_agg(id || ':' || score, ',' ORDER BY rank) FROM odp_top_outliers('sess_int', k => 10, n => 25))
		|| ' ' || (SELECT sum(id * rank) || ':' || sum(distance) FROM odp_knn_join('(SELECT * FROM sess_int WHERE id <= 3000)', 'sess_int', k => 10))"
	ref=$(psql -X -At -q -c "SET odp_gpu.device = cpu" -c "SET odp_gpu.cpu_threads = 16" -c "$q" 2>&1)
	for i in $(seq 1 "$n"); do
		psql -X -At -q -c "SET odp_gpu.device = gpu" -c "$q" >"$log/sess_int.$i" 2>&1 &
	done
	wait
	for i in $(seq 1 "$n"); do
		[ "$(cat "$log/sess_int.$i")" = "$ref" ] || bad=$((bad + 1))
	done
	[ -n "$ref" ] && [ "$bad" = 0 ]
	odp_check "$n concurrent GPU sessions on 0/1 rows get the CPU path's top outliers and k-NN join" $? \
		"$bad of $n differ; $(head -c 120 "$log/sess_int.1" | tr '\n' ' ')"
	psql -X -q -c "DROP TABLE sess_int" >/dev/null
}
odp_int_sessions 24

fi

if odp_wants pearson; then
odp_log "correlation: GPU vs CPU"
# odp_compare_pearson NAME ROWS LEN MIN_ABS_R K NULL_SHARE METHOD [MEMORY_LIMIT_MB [OTHER_ROWS]]:
# random-walk series (NULL_SHARE of the values NULL, then nulls => pairwise);
# the pairs over MIN_ABS_R and the top-K lists must be the same on both
# paths, coefficients within 1e-12.  OTHER_ROWS > 0 correlates a second
# table of that many series against the first.
odp_compare_pearson() {
	local name=$1 rows=$2 len=$3 t=$4 k=$5 nulls=$6 method=$7 limit=${8:-0} other=${9:-0}
	local opts="method => '$method'" src="'pearson_a'" out
	[ "$nulls" != 0 ] && opts="$opts, nulls => 'pairwise'"
	[ "$other" != 0 ] && src="'pearson_a', 'pearson_b'"
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
SELECT setseed(0.125);
DROP TABLE IF EXISTS pearson_a, pearson_b, pearson_cpu, pearson_gpu, pearson_cpu_top, pearson_gpu_top;
CREATE TABLE pearson_a AS SELECT s::bigint AS id, array(
	SELECT CASE WHEN random() < $nulls THEN NULL ELSE w END FROM (
		SELECT 100 * exp(sum(ln(1 + 0.02 * (random() - 0.5))) OVER (ORDER BY t)) AS w
		FROM generate_series(1, $len) t WHERE s > 0) x) AS v
	FROM generate_series(1, $rows) s;
CREATE TABLE pearson_b AS SELECT s::bigint AS id, array(
	SELECT 100 * exp(sum(ln(1 + 0.02 * (random() - 0.5))) OVER (ORDER BY t))
	FROM generate_series(1, $len) t WHERE s > 0) AS v
	FROM generate_series(1, greatest($other, 1)) s;
SET odp_gpu.device = cpu;
SET odp_gpu.cpu_threads = 16;
CREATE TABLE pearson_cpu AS SELECT * FROM odp_pearson($src, min_abs_r => $t, $opts);
CREATE TABLE pearson_cpu_top AS SELECT * FROM odp_pearson_top($src, k => $k, $opts);
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_memory_limit = $limit;
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
CREATE TABLE pearson_gpu AS SELECT * FROM odp_pearson($src, min_abs_r => $t, $opts);
CREATE TABLE pearson_gpu_top AS SELECT * FROM odp_pearson_top($src, k => $k, $opts);
SET client_min_messages = warning;
SELECT 'cmp=' || count(*) || ' ' || count(*) FILTER (WHERE abs(g.r - c.r) <= 1e-12) || ' '
	|| coalesce(max(abs(g.r - c.r)), 0)
	FROM pearson_cpu c FULL JOIN pearson_gpu g USING (id_a, id_b);
SELECT 'top=' || count(*) || ' ' || count(*) FILTER (WHERE g.other_id = c.other_id AND abs(g.r - c.r) <= 1e-12)
	FROM pearson_cpu_top c FULL JOIN pearson_gpu_top g USING (id, rank);
DROP TABLE pearson_a, pearson_b, pearson_cpu, pearson_gpu, pearson_cpu_top, pearson_gpu_top;
SQL
)
	local cmp=$(sed -n 's/^cmp=//p' <<<"$out") top=$(sed -n 's/^top=//p' <<<"$out")
	local chunks=$(sed -n 's/.*chunks=\([0-9]*\).*/\1/p' <<<"$out" | tr '\n' ' ')
	local n=$(cut -d' ' -f1 <<<"$cmp") same=$(cut -d' ' -f2 <<<"$cmp") maxd=$(cut -d' ' -f3 <<<"$cmp")
	local tn=$(cut -d' ' -f1 <<<"$top") tsame=$(cut -d' ' -f2 <<<"$top")
	[ -n "$n" ] && [ "$n" -gt 0 ] && [ "$same" = "$n" ] && [ -n "$tn" ] && [ "$tn" -gt 0 ] && [ "$tsame" = "$tn" ]
	odp_check "gpu-vs-cpu pearson $name: rows=$rows len=$len |r|>=$t k=$k nulls=$nulls $method limit=${limit}MB other=$other" $? \
		"$same of $n pairs within 1e-12 (max diff $maxd), $tsame of $tn top rows identical, chunks=$chunks"
	grep -q '^ERROR' <<<"$out" && grep '^ERROR' <<<"$out" | head -3
}
odp_compare_pearson walks 3000 500 0.8 10 0 pearson
odp_compare_pearson short 8000 40 0.95 5 0 pearson
odp_compare_pearson staged 1500 3000 0.5 7 0 pearson 40
odp_compare_pearson pairwise 1500 300 0.3 10 0.2 pearson
odp_compare_pearson pairwise-staged 800 2000 0.3 10 0.1 pearson 40
odp_compare_pearson spearman 1500 400 0.3 10 0 spearman
odp_compare_pearson two-sources 3000 500 0.8 3 0 pearson 0 40
odp_compare_pearson two-sources-pairwise 1000 300 0.3 3 0.1 pearson 0 40
fi

if odp_wants skyline; then
odp_log "skyline: GPU vs CPU"
# odp_compare_skyline NAME ROWS DIMS BAND KIND DIRECTIONS [MEMORY_LIMIT_MB]: KIND
# independent (uniform), anti (points scattered about the plane sum = 1),
# or ties (integers 0 .. 4); every (id, dominated_by) row must be the same.
odp_compare_skyline() {
	local name=$1 rows=$2 dims=$3 band=$4 kind=$5 dirs=$6 limit=${7:-0} out gen
	case $kind in
		independent) gen="random()" ;;
		ties) gen="floor(random() * 5)" ;;
		anti) gen="random()" ;;
	esac
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
SELECT setseed(0.375);
DROP TABLE IF EXISTS sky_data, sky_cpu, sky_gpu;
CREATE TABLE sky_data AS SELECT i::bigint AS id,
	array(SELECT ($gen)::float8 FROM generate_series(1, $dims) WHERE i > 0) AS v
	FROM generate_series(1, $rows) i;
$([ "$kind" = anti ] && echo "UPDATE sky_data SET v = (SELECT array_agg(x / s * (0.95 + 0.1 * random()) ORDER BY o) FROM unnest(v) WITH ORDINALITY u(x, o), (SELECT sum(y) AS s FROM unnest(v) y) t);")
SET odp_gpu.device = cpu;
SET odp_gpu.cpu_threads = 16;
CREATE TABLE sky_cpu AS SELECT * FROM odp_skyline('sky_data', $dirs, band => $band);
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_memory_limit = $limit;
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
CREATE TABLE sky_gpu AS SELECT * FROM odp_skyline('sky_data', $dirs, band => $band);
SET client_min_messages = warning;
SELECT 'cmp=' || count(*) || ' ' || count(*) FILTER (WHERE c.dominated_by = g.dominated_by)
	FROM sky_cpu c FULL JOIN sky_gpu g USING (id);
SELECT 'agg=' || ((SELECT array_agg(id ORDER BY id) FROM sky_cpu WHERE dominated_by = 0)
	= (SELECT odp_skyline_agg(id, v, $dirs) FROM sky_data));
DROP TABLE sky_data, sky_cpu, sky_gpu;
SQL
)
	local cmp=$(sed -n 's/^cmp=//p' <<<"$out") agg=$(sed -n 's/^agg=//p' <<<"$out")
	local chunks=$(sed -n 's/.*chunks=\([0-9]*\).*/\1/p' <<<"$out" | tr '\n' ' ')
	local n=$(cut -d' ' -f1 <<<"$cmp") same=$(cut -d' ' -f2 <<<"$cmp")
	[ -n "$n" ] && [ "$n" -gt 0 ] && [ "$same" = "$n" ] && [ "$agg" = true ]
	odp_check "gpu-vs-cpu skyline $name: rows=$rows dims=$dims band=$band $kind limit=${limit}MB" $? \
		"$same of $n rows identical, aggregate $agg, chunks=$chunks; $(sed -n 's/.*\(compute=[0-9.]* ms\).*\(members=[0-9]*\).*/\1 \2/p' <<<"$out" | head -1)"
	grep -q '^ERROR' <<<"$out" && grep '^ERROR' <<<"$out" | head -3
}
odp_compare_skyline independent 50000 4 1 independent NULL
odp_compare_skyline anti 60000 6 1 anti NULL
odp_compare_skyline anti-band 60000 6 5 anti "'{min,max,min,max,min,max}'"
odp_compare_skyline ties 40000 3 3 ties "'{max,min,max}'"
odp_compare_skyline one-feature 30000 1 2 ties "'{max}'"
odp_compare_skyline wide 20000 200 1 independent NULL
odp_compare_skyline staged 100000 8 1 anti NULL 4
odp_compare_skyline staged-band 50000 5 4 anti NULL 2
fi

if odp_wants intervals; then
odp_log "region matching: GPU vs CPU"
# odp_compare_intervals NAME ROWS KIND [MEMORY_LIMIT_MB]: two sources of ROWS
# regions (and the first as one set) of KIND: int8 (int8range, widths 0 ..
# 40 in a space of 20 * ROWS), ts (tsrange, bounds of every inclusivity,
# microseconds apart), box (two dimensions, coordinates 1e-6 apart), cube
# (three), pairs (float8 columns, '[)', with an int4range: two); the pairs
# and the counts must be the same on both paths.
odp_compare_intervals() {
	local name=$1 rows=$2 kind=$3 limit=${4:-0} out cols
	case $kind in
		int8) cols="int8range(lo, lo + w, '[]') AS r" ;;
		ts) cols="tsrange(timestamp '2025-01-01' + lo * interval '1 microsecond', timestamp '2025-01-01' + (lo + w) * interval '1 microsecond', (ARRAY['[]','[)','(]','()'])[1 + (lo % 4)::int]) AS r" ;;
		box) cols="box(point(lo * 1e-6, (lo * 7919 % ($rows * 20)) * 1e-6), point((lo + w) * 1e-6, (lo * 7919 % ($rows * 20) + w) * 1e-6)) AS b" ;;
		cube) cols="cube(array[lo, lo * 7919 % ($rows * 20), lo * 104729 % ($rows * 20)]::float8[], array[lo + w, lo * 7919 % ($rows * 20) + w, lo * 104729 % ($rows * 20) + 2 * w]::float8[]) AS c" ;;
		pairs) cols="lo::float8 / 3 AS x0, (lo + w)::float8 / 3 AS x1, int4range((lo % 1000)::int, (lo % 1000)::int + 900) AS r" ;;
	esac
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS cube;
SELECT setseed(0.625);
DROP TABLE IF EXISTS iv_a, iv_b, iv_cpu, iv_gpu, iv_cpu1, iv_gpu1;
CREATE TABLE iv_a AS SELECT i::bigint AS id, $cols FROM (SELECT i, (random() * $rows * 20)::bigint AS lo, (random() * 40)::bigint AS w FROM generate_series(1, $rows) i) s;
CREATE TABLE iv_b AS SELECT i::bigint AS id, $cols FROM (SELECT i, (random() * $rows * 20)::bigint AS lo, (random() * 40)::bigint AS w FROM generate_series(1, $rows) i) s;
SET odp_gpu.device = cpu;
SET odp_gpu.cpu_threads = 16;
CREATE TABLE iv_cpu AS SELECT * FROM odp_interval_match('iv_a', 'iv_b', $([ "$kind" = pairs ] && echo "dims => '{x0,x1,r}', bounds => '[)'" || echo "bounds => '[]'"));
CREATE TABLE iv_cpu1 AS SELECT * FROM odp_interval_match('iv_a', $([ "$kind" = pairs ] && echo "dims => '{x0,x1,r}', bounds => '[)'" || echo "bounds => '[]'"));
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_memory_limit = $limit;
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
CREATE TABLE iv_gpu AS SELECT * FROM odp_interval_match('iv_a', 'iv_b', $([ "$kind" = pairs ] && echo "dims => '{x0,x1,r}', bounds => '[)'" || echo "bounds => '[]'"));
CREATE TABLE iv_gpu1 AS SELECT * FROM odp_interval_match('iv_a', $([ "$kind" = pairs ] && echo "dims => '{x0,x1,r}', bounds => '[)'" || echo "bounds => '[]'"));
SELECT 'gcount=' || odp_interval_match_count('iv_a', 'iv_b', $([ "$kind" = pairs ] && echo "dims => '{x0,x1,r}', bounds => '[)'" || echo "bounds => '[]'"));
SET client_min_messages = warning;
SELECT 'cmp=' || count(*) || ' ' || count(*) FILTER (WHERE c.subscription_id IS NOT NULL AND g.subscription_id IS NOT NULL)
	FROM iv_cpu c FULL JOIN iv_gpu g USING (subscription_id, update_id);
SELECT 'cmp1=' || count(*) || ' ' || count(*) FILTER (WHERE c.id_a IS NOT NULL AND g.id_a IS NOT NULL)
	FROM iv_cpu1 c FULL JOIN iv_gpu1 g USING (id_a, id_b);
DROP TABLE iv_a, iv_b, iv_cpu, iv_gpu, iv_cpu1, iv_gpu1;
SQL
)
	local cmp=$(sed -n 's/^cmp=//p' <<<"$out") cmp1=$(sed -n 's/^cmp1=//p' <<<"$out") gcount=$(sed -n 's/^gcount=//p' <<<"$out")
	local chunks=$(sed -n 's/.*chunks=\([0-9]*\).*/\1/p' <<<"$out" | tr '\n' ' ')
	local n=$(cut -d' ' -f1 <<<"$cmp") same=$(cut -d' ' -f2 <<<"$cmp") n1=$(cut -d' ' -f1 <<<"$cmp1") same1=$(cut -d' ' -f2 <<<"$cmp1")
	[ -n "$n" ] && [ "$n" -gt 0 ] && [ "$same" = "$n" ] && [ "$gcount" = "$n" ] && [ -n "$n1" ] && [ "$same1" = "$n1" ]
	odp_check "gpu-vs-cpu intervals $name: rows=$rows $kind limit=${limit}MB" $? \
		"$same of $n pairs and $same1 of $n1 within one set identical, GPU count $gcount, chunks=$chunks; $(sed -n 's/.*\(compute=[0-9.]* ms\).*/\1/p' <<<"$out" | head -1)"
	grep -q '^ERROR' <<<"$out" && grep '^ERROR' <<<"$out" | head -3
}
odp_compare_intervals int8 100000 int8
odp_compare_intervals ts 50000 ts
odp_compare_intervals box 60000 box
odp_compare_intervals cube 60000 cube
odp_compare_intervals pairs 40000 pairs
odp_compare_intervals chunked 200000 int8 3
odp_compare_intervals chunked-cube 100000 cube 3
fi

fi

# two GPUs where the host has them, else two parts on one GPU (each with
# its own stream and half the budget)
split_devs=0,0
[ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ] && split_devs=0,1
odp_log "two device parts (odp_gpu.devices = '$split_devs') against one device"
# odp_compare_split NAME SETUP CALL [PARTS]: runs CALL (a function in FROM)
# on odp_gpu.devices = '0' and on $split_devs and wants the same rows in
# the same order, every value equal, and the second run spread over PARTS
# (default 2) parts.
odp_compare_split() {
	local name=$1 setup=$2 call=$3 want=${4:-2} out
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS cube;
SELECT setseed(0.875);
DROP TABLE IF EXISTS sp_a, sp_b, sp_one, sp_two;
$setup
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_min_rows = 0;
SET odp_gpu.devices = '0';
CREATE TABLE sp_one AS SELECT * FROM $call WITH ORDINALITY;
SET odp_gpu.devices = '$split_devs';
SET odp_gpu.split_min_ms = 0;
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
CREATE TABLE sp_two AS SELECT * FROM $call WITH ORDINALITY;
SET client_min_messages = warning;
SELECT 'cmp=' || (SELECT count(*) FROM sp_one) || ' ' || (SELECT count(*) FROM sp_two) || ' '
	|| (SELECT count(*) FROM (SELECT * FROM sp_one EXCEPT ALL SELECT * FROM sp_two) d) || ' '
	|| (SELECT count(*) FROM (SELECT * FROM sp_two EXCEPT ALL SELECT * FROM sp_one) d);
DROP TABLE IF EXISTS sp_a, sp_b, sp_one, sp_two;
SQL
)
	local cmp=$(sed -n 's/^cmp=//p' <<<"$out") parts=$(sed -n 's/.*devices=\([0-9]*\).*/\1/p' <<<"$out" | head -1)
	local n1=$(cut -d' ' -f1 <<<"$cmp") n2=$(cut -d' ' -f2 <<<"$cmp") d1=$(cut -d' ' -f3 <<<"$cmp") d2=$(cut -d' ' -f4 <<<"$cmp")
	[ -n "$n1" ] && [ "$n1" -gt 0 ] && [ "$n1" = "$n2" ] && [ "$d1" = 0 ] && [ "$d2" = 0 ] && [ "$parts" = "$want" ]
	odp_check "devices '$split_devs' = '0': $name" $? \
		"$n2 of $n1 rows, $d1 + $d2 differ (values or order), parts=$parts; $(sed -n 's/.*\(compute=[0-9.]* ms\).*/\1/p' <<<"$out" | head -1)"
	grep -q '^ERROR' <<<"$out" && grep '^ERROR' <<<"$out" | head -3
}
sp_vec="CREATE TABLE sp_a AS SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, 16) WHERE i > 0) AS f FROM generate_series(1, 40000) i;
CREATE TABLE sp_b AS SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, 16) WHERE i > 0) AS f FROM generate_series(1, 3000) i;"
sp_series="CREATE TABLE sp_a AS SELECT s::bigint AS id, array(SELECT 100 * exp(sum(ln(1 + 0.02 * (random() - 0.5))) OVER (ORDER BY t)) FROM generate_series(1, 200) t WHERE s > 0) AS v FROM generate_series(1, 3000) s;
CREATE TABLE sp_b AS SELECT s::bigint AS id, array(SELECT 100 * exp(sum(ln(1 + 0.02 * (random() - 0.5))) OVER (ORDER BY t)) FROM generate_series(1, 200) t WHERE s > 0) AS v FROM generate_series(1, 500) s;"
sp_sky="CREATE TABLE sp_a AS SELECT i::bigint AS id, array(SELECT random()::float8 FROM generate_series(1, 5) WHERE i > 0) AS v FROM generate_series(1, 100000) i;
UPDATE sp_a SET v = (SELECT array_agg(x / s * (0.95 + 0.1 * random()) ORDER BY o) FROM unnest(v) WITH ORDINALITY u(x, o), (SELECT sum(y) AS s FROM unnest(v) y) t);"
sp_iv="CREATE TABLE sp_a AS SELECT i::bigint AS id, int8range(lo, lo + w, '[]') AS r FROM (SELECT i, (random() * 2000000)::bigint AS lo, (random() * 40)::bigint AS w FROM generate_series(1, 100000) i) s;
CREATE TABLE sp_b AS SELECT i::bigint AS id, int8range(lo, lo + w, '[]') AS r FROM (SELECT i, (random() * 2000000)::bigint AS lo, (random() * 40)::bigint AS w FROM generate_series(1, 100000) i) s;"
if odp_wants outliers; then
odp_compare_split "outlier scores 40000 x 16 k=20" "$sp_vec" "odp_outlier_scores('sp_a', k => 20)"
odp_compare_split "top outliers (brute force) 40000 x 16 k=20 n=50" "$sp_vec" "odp_top_outliers('sp_a', k => 20, n => 50, method => 'bruteforce')"
odp_compare_split "top outliers (SolvingSet, a node per part) 40000 x 16 k=20 n=50" "$sp_vec" "odp_top_outliers('sp_a', k => 20, n => 50, method => 'solvingset')"
odp_compare_split "solving set (a node per part) 40000 x 16 k=20 n=10 batch 300" "$sp_vec" "odp_solving_set('sp_a', k => 20, n => 10, batch_size => 300)"
fi
if odp_wants knn; then
odp_compare_split "k-NN join 3000 x 40000 k=10 cosine" "$sp_vec" "odp_knn_join('sp_b', 'sp_a', k => 10, metric => 'cosine')"
odp_compare_split "k-NN self join 40000 k=10" "$sp_vec" "odp_knn_join('sp_a', 'sp_a', k => 10)"
fi
if odp_wants pearson; then
odp_compare_split "correlation pairs 3000 x 200 |r| >= 0.6" "$sp_series" "odp_pearson('sp_a', min_abs_r => 0.6)"
odp_compare_split "correlation top-5 3000 x 200" "$sp_series" "odp_pearson_top('sp_a', k => 5)"
odp_compare_split "correlation pairs, two sources 3000 x 500" "$sp_series" "odp_pearson('sp_a', 'sp_b', min_abs_r => 0.5)"
odp_compare_split "correlation top-3, two sources" "$sp_series" "odp_pearson_top('sp_a', 'sp_b', k => 3)"
fi
if odp_wants skyline; then
odp_compare_split "skyline 100000 x 5 anti-correlated" "$sp_sky" "odp_skyline('sp_a')"
odp_compare_split "3-skyband 100000 x 5" "$sp_sky" "odp_skyline('sp_a', '{min,max,min,max,min}', band => 3)"
fi
if odp_wants knn; then
# at odp_gpu.split_min_ms's default a call estimated to compute for less
# runs on the first device of the list
out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS sp_a, sp_b;
$sp_vec
SET odp_gpu.device = gpu;
SET odp_gpu.gpu_min_rows = 0;
SET odp_gpu.devices = '$split_devs';
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
SELECT 'n=' || count(*) FROM odp_knn_join('sp_b', 'sp_a', k => 10);
SET odp_gpu.split_min_ms = 0;
SELECT 'n=' || count(*) FROM odp_knn_join('sp_b', 'sp_a', k => 10);
SET client_min_messages = warning;
DROP TABLE sp_a, sp_b;
SQL
)
notes=$(grep 'odp_gpu timing' <<<"$out")
[ "$(grep -c '^n=30000$' <<<"$out")" = 2 ] && [ "$(wc -l <<<"$notes")" = 2 ] &&
	head -1 <<<"$notes" | grep -q 'devices=1' && tail -1 <<<"$notes" | grep -q 'devices=2'
odp_check "devices '$split_devs': a k-NN join estimated below odp_gpu.split_min_ms runs on one device, split with 0" $? \
	"$(sed -n 's/.*\(path=[a-z]*\).*\(compute=[0-9.]* ms\).*/\1 \2/p; s/.*\(devices=[0-9]*\).*/\1/p' <<<"$notes" | tr '\n' ' ')"
fi
if odp_wants intervals; then
odp_compare_split "region matching 100000 x 100000" "$sp_iv" "odp_interval_match('sp_a', 'sp_b', bounds => '[]')"
odp_compare_split "region matching, one set of 100000" "$sp_iv" "odp_interval_match('sp_a', bounds => '[]')"
odp_compare_split "region count 100000 x 100000" "$sp_iv" "odp_interval_match_count('sp_a', 'sp_b', bounds => '[]')"
fi

if [ "${ODP_SKIP_COMPARE:-0}" != 1 ]; then
if odp_wants outliers; then
odp_log "an input over 1 GB"
# 16,500 rows x 16,384 dims = 1.08 GB of float32: every value of row i is i,
# so each row's nearest neighbour is at 128 * |i - j| = 128 (k = 1).
out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<'SQL'
DROP TABLE IF EXISTS odp_huge;
CREATE TABLE odp_huge AS SELECT i::bigint AS id, array_fill(i::real, ARRAY[16384]) AS f FROM generate_series(1, 16500) i;
SET odp_gpu.device = gpu;
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
SELECT 'huge=' || count(*) || ' ' || min(score) || ' ' || max(score) FROM odp_outlier_scores('odp_huge', k => 1);
DROP TABLE odp_huge;
SQL
)
grep -q '^huge=16500 128 128$' <<<"$out"
odp_check "input of 1.08 GB (16500 x 16384) loads and scores exactly" $? "$(grep -E '^huge=|timing' <<<"$out" | tr '\n' ' ')"

fi

odp_log "cancellation on the GPU"
if odp_wants outliers; then
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT setseed(0.75);
DROP TABLE IF EXISTS odp_cancel_gpu;
CREATE TABLE odp_cancel_gpu AS
	SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, 32) WHERE i > 0) AS features
	FROM generate_series(1, 1500000) i;
SQL
odp_cancel_checks gpu odp_cancel_gpu 50
psql -X -q -c "DROP TABLE odp_cancel_gpu" >/dev/null
# integer rows: the integer path's count sweep (5,000,000 x 10 values
# 1 .. 13, k = 50: about 6 s on an H100)
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT setseed(0.625);
DROP TABLE IF EXISTS odp_cancel_int;
CREATE TABLE odp_cancel_int AS
	SELECT i::bigint AS id, array(SELECT 1 + floor(random() * 13)::real FROM generate_series(1, 10) WHERE i > 0) AS features
	FROM generate_series(1, 5000000) i;
SQL
odp_cancel_checks gpu odp_cancel_int 50
psql -X -q -c "DROP TABLE odp_cancel_int" >/dev/null
fi
if odp_wants pearson; then
odp_cancel_series_checks gpu 100000 32
fi
if odp_wants skyline; then
odp_cancel_sky_checks gpu 3000000
fi
if odp_wants intervals; then
odp_cancel_interval_checks gpu 3000000
fi
fi

if odp_wants sharded; then
odp_log "sharded table: the nodes' steps on the GPU"
# the mid-call faults need a call that lasts: the CPU run of the test
# command checks them
ODP_SHARD_LONG=0 odp_distributed_checks "-c odp_gpu.device=gpu -c odp_gpu.gpu_min_rows=0${service_opts:+ $service_opts}"
fi

if [ -n "$service_opts" ] && odp_wants knn; then
	# the test command's shared k-NN passes, here on the GPU: 64 sessions
	# of single queries on a cached table, a writer changing it, answers
	# against the SQL oracle in each snapshot
	odp_log "shared k-NN passes on the GPU"
	odp_tc_batch_checks
fi

if [ -n "$service_opts" ]; then
	# inputs that find no room in the staging area (here: none at all)
	# and are read by the backend alone stream through the page-locked
	# ring and go on to the GPU as they arrive; the calls read that copy,
	# with the CPU path's rows
	odp_log "inputs streamed onto the GPU as they arrive (odp_gpu.staging_size = 0)"
	odp_server_restart "$service_opts -c odp_gpu.staging_size=0" >>"$log/restart.log" && odp_service_wait
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT setseed(0.375);
DROP TABLE IF EXISTS odp_pieces_t, odp_pieces_s;
CREATE TABLE odp_pieces_t AS SELECT i::bigint AS id,
	array(SELECT random()::real FROM generate_series(1, 32) WHERE i > 0) AS f FROM generate_series(1, 200000) i;
CREATE TABLE odp_pieces_s AS SELECT i::bigint AS id,
	array(SELECT random() + (i % 7) * g FROM generate_series(1, 2048) g WHERE i > 0) AS v FROM generate_series(1, 600) i;
SQL
	pieces_knn="SELECT 'r=' || md5(string_agg(query_id || ':' || rank || ':' || id || ':' || distance, ',' ORDER BY query_id, rank))
		FROM odp_knn_join('(SELECT * FROM odp_pieces_t WHERE id % 100 = 0)', 'odp_pieces_t', k => 10)"
	pieces_corr="SELECT 'r=' || count(*) || ':' || md5(string_agg(id_a || ':' || id_b || ':' || round(r::numeric, 6), ',' ORDER BY id_a, id_b))
		FROM odp_pearson('odp_pieces_s', min_abs_r => 0.5)"
	for q in knn corr; do
		eval "sql=\$pieces_$q"
		want=$(PGOPTIONS="-c odp_gpu.device=cpu" psql -X -At -c "$sql" 2>&1)
		got=$(PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.gpu_min_rows=0 -c odp_gpu.report_timing=on -c max_parallel_workers_per_gather=0" \
			psql -X -At -c "$sql" -c "$sql" 2>&1)
		[ "$(grep -c "^$want\$" <<<"$got")" = 2 ] && [ "$(grep -c 'path=gpu .*streamed_to_gpu=[1-9][0-9.]* MB' <<<"$got")" = 2 ]
		odp_check "$q: inputs streamed onto the GPU as they arrive give the CPU path's rows" $? \
			"want $want; $(grep -o 'r=.*\|transfer=[0-9.]* ms\|stream=[0-9.]* ms\|streamed[_a-z]*=[0-9.]* MB\|ERROR.*' <<<"$got" | tr '\n' ' ')"
	done
	psql -X -q -c "DROP TABLE odp_pieces_t, odp_pieces_s" >/dev/null
	odp_server_restart "$service_opts" >>"$log/restart.log" && odp_service_wait

	# a CUDA fault poisons the service's context: the faulty call fails
	# with a GPU error, the service rebuilds the context (or restarts),
	# a call queued meanwhile and the next one work, the server does not
	# restart
	odp_log "a CUDA fault in the GPU service"
	pm_start=$(psql -X -At -c "SELECT pg_postmaster_start_time()")
	psql -X -q -c "DROP TABLE IF EXISTS odp_fault_t" \
		-c "CREATE TABLE odp_fault_t AS SELECT i AS id, ARRAY[i % 7, i % 11]::real[] AS f FROM generate_series(1, 20000) i" \
		-c "VACUUM odp_fault_t" >/dev/null
	want=$(PGOPTIONS="-c odp_gpu.device=cpu" psql -X -At -c "SELECT string_agg(id::text, ',') FROM odp_top_outliers('odp_fault_t', k => 5, n => 5)")
	# the table cache's copy of the table on the device, made by a call
	copies=$(PGOPTIONS="-c odp_gpu.device=gpu" psql -X -At -c "SELECT count(*) FROM odp_top_outliers('odp_fault_t', k => 5, n => 5)" \
		-c "SELECT count(device) FROM odp_gpu_table_cache WHERE relation = 'odp_fault_t'::regclass" | tail -1)
	log_pos=$(stat -c %s "${ODP_SERVER_LOG:-/tmp/pg-server.log}" 2>/dev/null || echo 0)
	out=$(PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.service_fault_test=on" \
		psql -X -At -c "SELECT count(*) FROM odp_top_outliers('odp_fault_t', k => 5, n => 5)" 2>&1)
	grep -q "GPU failure" <<<"$out" && ! grep -q "XX000" <<<"$out"
	odp_check "a call whose device faults fails with a GPU error" $? "$out"
	for _ in $(seq 1 100); do
		tail -c +"$((log_pos + 1))" "${ODP_SERVER_LOG:-/tmp/pg-server.log}" 2>/dev/null |
			grep -qE 'rebuilt the context|restarting the engine process' && break
		sleep 0.1
	done
	gone=$(psql -X -At -c "SELECT count(device) || '/' || count(*) FROM odp_gpu_table_cache WHERE relation = 'odp_fault_t'::regclass")
	got=
	for _ in $(seq 1 60); do
		got=$(PGOPTIONS="-c odp_gpu.device=gpu" psql -X -At -c "SELECT string_agg(id::text, ',') FROM odp_top_outliers('odp_fault_t', k => 5, n => 5)" 2>/dev/null) && break
		sleep 0.5
	done
	[ "$got" = "$want" ]
	odp_check "after the fault the service computes on the GPU again" $? "got '$got', want '$want'"
	# the table cache keeps its entries in the staging area: none without one
	if [ "$(psql -X -At -c "SELECT size FROM odp_gpu_staging()")" != 0 ]; then
	[ "$copies" = 1 ] && [ "$gone" = 0/1 ] &&
		[ "$(psql -X -At -c "SELECT count(device) FROM odp_gpu_table_cache WHERE relation = 'odp_fault_t'::regclass")" = 1 ]
	odp_check "the table cache's copy on the device goes with the rebuilt context (the entry stays), and the next call makes it again" $? \
		"copies before $copies, after the fault $gone"
	fi
	[ "$(psql -X -At -c "SELECT pg_postmaster_start_time()")" = "$pm_start" ]
	odp_check "the server did not restart" $? "$(grep -E 'rebuilt the context|restarting to rebuild|terminated by signal' "${ODP_SERVER_LOG:-/tmp/pg-server.log}" 2>/dev/null | tail -3)"
	grep -E 'rebuilt the context|restarting to rebuild' "${ODP_SERVER_LOG:-/tmp/pg-server.log}" 2>/dev/null | tail -2
	psql -X -q -c "DROP TABLE odp_fault_t" >/dev/null

	if [ "$split_devs" = 0,1 ]; then
		# two devices: concurrent calls too small to split spread over both
		odp_log "the GPU service on two devices: calls spread, a fault on one leaves the other serving"
		psql -X -q -c "DROP TABLE IF EXISTS odp_two_q, odp_two_t" -c "SELECT setseed(0.4)" \
			-c "CREATE TABLE odp_two_t AS SELECT i AS id, array(SELECT random()::real FROM generate_series(1, 32) WHERE i > 0) AS f FROM generate_series(1, 200000) i" \
			-c "CREATE TABLE odp_two_q AS SELECT id, f FROM odp_two_t WHERE id <= 20000" \
			-c "VACUUM ANALYZE odp_two_q, odp_two_t" >/dev/null
		two_call="SELECT 'r=' || count(*) || ':' || sum(hashtext(t::text)::numeric) FROM odp_knn_join('odp_two_q', 'odp_two_t', k => 5) t"
		want=$(PGOPTIONS="-c odp_gpu.device=cpu" psql -X -At -c "$two_call" | grep '^r=')
		pids=()
		for c in $(seq 16); do
			PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.report_timing=on -c client_min_messages=notice" \
				psql -X -At -c "$two_call" >"$log/two_$c.out" 2>&1 &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p"; done
		ok=1
		for c in $(seq 16); do grep -q "^$want\$" "$log/two_$c.out" || ok=0; done
		used=$(cat "$log"/two_*.out | sed -n 's/.* first_device=\([0-9]*\).*/\1/p' | sort | uniq -c | tr -s ' \n' ' ')
		[ $ok = 1 ] && [ "$(cat "$log"/two_*.out | grep -c ' devices=1 first_device=0')" -ge 1 ] &&
			[ "$(cat "$log"/two_*.out | grep -c ' devices=1 first_device=1')" -ge 1 ]
		odp_check "16 concurrent k-NN joins through the service on two GPUs: each the CPU path's rows, on one device each, both devices used" $? \
			"calls per device: $used; $(grep -h -m1 ERROR "$log"/two_*.out | head -1)"

		# a call on device 1 runs while device 0 faults, rebuilds and serves again
		PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.devices=1" \
			psql -X -At -c "$two_call" -c "$two_call" -c "$two_call" >"$log/two_busy.out" 2>&1 &
		busy=$!
		out=$(PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.devices=0 -c odp_gpu.service_fault_test=on" \
			psql -X -At -c "$two_call" 2>&1)
		wait "$busy"
		grep -q "GPU failure" <<<"$out" && [ "$(grep -c "^$want\$" "$log/two_busy.out")" = 3 ]
		odp_check "a fault on device 0 fails its call; device 1's calls meanwhile return the CPU path's rows" $? \
			"$(head -c 200 <<<"$out"); device 1: $(grep -c "^$want\$" "$log/two_busy.out") of 3 $(grep -m1 ERROR "$log/two_busy.out")"
		got=
		for _ in $(seq 60); do
			got=$(PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.devices=0" psql -X -At -c "$two_call" 2>/dev/null | grep '^r=') && break
			sleep 0.5
		done
		[ "$got" = "$want" ]
		odp_check "after the fault device 0 serves again" $? "got '$got', want '$want'"
		psql -X -q -c "DROP TABLE odp_two_q, odp_two_t" >/dev/null
	fi

	# the engine process killed with a GPU kernel in flight: the call fails
	# with 58000 naming it, a new engine process starts, the device's
	# memory is back (the new process's budget, 90% of the memory free at
	# its start, is what its predecessor's was; nvidia-smi where there is
	# one), the next call computes on the GPU with the CPU path's result
	odp_log "a crash of the GPU service's engine process with a GPU kernel in flight"
	psql -X -q -c "DROP TABLE IF EXISTS odp_crash_t" -c "SELECT setseed(0.3)" \
		-c "CREATE TABLE odp_crash_t AS SELECT i AS id, ARRAY[random(), random(), random(), random(), random(), random(), random(), random()]::real[] AS f FROM generate_series(1, 2000000) i" >/dev/null
	budget0=$(psql -X -At -c "SELECT sum(budget) FROM odp_gpu_info()")
	gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | awk '{ s += $1 } END { if (NR) print s }'; }
	used0=$(gpu_used)
	for sig in SEGV KILL; do
		eng=$(psql -X -At -c "SELECT engine_pid FROM odp_gpu_info() LIMIT 1")
		PGOPTIONS="-c odp_gpu.device=gpu" psql -X -At -c "SELECT count(*) FROM odp_outlier_scores('odp_crash_t', k => 20)" \
			>"$log/crash_$sig.out" 2>&1 &
		call=$!
		for _ in $(seq 500); do
			[ "$(psql -X -At -c "SELECT count(*) FROM odp_gpu_activity WHERE state = 'running'")" = 1 ] && break
			sleep 0.02
		done
		sleep 0.3	# past the copy: its kernels run
		used_mid=$(gpu_used)
		kill "-$sig" "$eng"
		wait "$call"
		grep -q "GPU failure: the odp_gpu engine process (pid $eng) was killed by signal" "$log/crash_$sig.out"
		odp_check "SIG$sig to the engine process mid-kernel: the call fails naming it" $? "$(head -c 250 "$log/crash_$sig.out")"
		budget1=
		for _ in $(seq 100); do
			budget1=$(psql -X -At -c "SELECT sum(budget) FROM odp_gpu_info() WHERE engine_pid IS NOT NULL AND engine_pid <> $eng")
			[ -n "$budget1" ] && break
			sleep 0.05
		done
		sleep 0.5
		used1=$(gpu_used)
		[ -n "$budget1" ] && awk -v a="$budget0" -v b="$budget1" 'BEGIN { exit !(b >= 0.98 * a) }' &&
			{ [ -z "$used0" ] || awk -v a="$used0" -v b="$used1" 'BEGIN { exit !(b <= a + 256) }'; }
		odp_check "SIG$sig: a new engine process holds the device, its memory back" $? \
			"budget $budget0 then ${budget1:-none}; nvidia-smi MiB used: ${used0:-n/a} idle, ${used_mid:-n/a} mid-call, ${used1:-n/a} after"
	done
	want=$(PGOPTIONS="-c odp_gpu.device=cpu" psql -X -At -c "SELECT string_agg(id::text, ',') FROM odp_top_outliers('(SELECT * FROM odp_crash_t WHERE id <= 20000)', k => 5, n => 5)")
	got=$(PGOPTIONS="-c odp_gpu.device=gpu -c odp_gpu.report_timing=on" psql -X -At -c "SELECT string_agg(id::text, ',') FROM odp_top_outliers('(SELECT * FROM odp_crash_t WHERE id <= 20000)', k => 5, n => 5)" 2>&1)
	grep -q "^$want\$" <<<"$got" && grep -q 'path=gpu' <<<"$got"
	odp_check "after the crashes the next call computes on the GPU with the CPU path's result" $? "$(grep -o 'path=[a-z]*' <<<"$got") want $want"
	psql -X -q -c "DROP TABLE odp_crash_t" >/dev/null
fi

if [ "${ODP_SKIP_BENCH:-0}" != 1 ]; then
	odp_log "benchmark"
	odp_wants outliers && ODP_BENCH_CPU_THREADS=${ODP_BENCH_CPU_THREADS:-16} bash test/bench/outliers_bench.sh
	odp_wants pearson && ODP_BENCH_CPU_THREADS=${ODP_BENCH_CPU_THREADS:-16} bash test/bench/pearson_bench.sh
	odp_wants skyline && ODP_BENCH_CPU_THREADS=${ODP_BENCH_CPU_THREADS:-16} bash test/bench/skyline_bench.sh
	odp_wants intervals && ODP_BENCH_CPU_THREADS=${ODP_BENCH_CPU_THREADS:-16} bash test/bench/intervals_bench.sh
	odp_wants precision && bash test/bench/precision_bench.sh
fi
if [ -n "$service_opts" ] && [ "${ODP_USE_RUNNING_SERVER:-0}" = 1 ]; then
	odp_log "restarting the server with its own options"
	odp_server_restart "" >>"$log/restart.log" || tail -3 "$log/restart.log"
fi
odp_stop_server
odp_failure_recap
odp_run_dir_end "$ODP_FAILED"
echo "$ODP_PASSED passed, $ODP_FAILED failed"
[ "$ODP_FAILED" -eq 0 ]
