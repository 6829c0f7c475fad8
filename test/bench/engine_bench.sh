#!/usr/bin/env bash
# What the GPU service's engine process costs a call (issue 42: a warm call
# within 3% of the service without it, a new session's first call within
# 1 ms): the same calls through the service of two builds on one server,
# alternated (base, this tree, base, this tree) so that drift on the host
# hits both.  Prints one table: per workload and build, the best and the
# median warm call (REPS calls in one session) and the median of the
# first calls of FIRSTS new sessions, then the ratios.
#
# Usage: bash test/bench/engine_bench.sh BASE_TREE
#   BASE_TREE: a built tree of the version to compare with (make done there
#   with the same flags); this tree must be built too.  Both are installed
#   in turn with make install.  Needs the server PGHOST etc. reach, as a
#   superuser, which it restarts with odp_gpu preloaded (and at the end as
#   it was started; SERVER_OPTS adds options).  REPS (7), FIRSTS (5),
#   SCALE (1) size the run.
#
# Workloads (SCALE 1): a single k-NN query over 10^5 x 64 real[] (a call of
# a few ms, where a fixed cost shows most), a k-NN join of 10^4 x 10^5 x 32
# (10^5 rows out), the top outliers of 10^5 x 16, Pearson of 1,024 x 4,096
# float8[], the skyline of 10^6 x 4 float8[].
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/lib.sh
BASE=${1:?usage: engine_bench.sh BASE_TREE}
REPS=${REPS:-7}
ROUNDS=${ROUNDS:-2}
FIRSTS=${FIRSTS:-5}
SCALE=${SCALE:-1}
PG_CONFIG=${PG_CONFIG:-$(command -v pg_config)}
odp_server_save || exit 1

n() { awk -v s="$SCALE" -v n="$1" 'BEGIN { printf "%d", n * s }'; }
P="psql -X -q -v ON_ERROR_STOP=1"
make -s install PG_CONFIG="$PG_CONFIG" >/dev/null || exit 1
$P >/dev/null <<SQL || exit 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS eb_small, eb_q, eb_pts, eb_walks, eb_sky;
SELECT setseed(0.42);
CREATE TABLE eb_small AS SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, 64) WHERE i > 0) AS f
	FROM generate_series(1, $(n 100000)) i;
CREATE TABLE eb_pts AS SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, 32) WHERE i > 0) AS f
	FROM generate_series(1, $(n 100000)) i;
CREATE TABLE eb_q AS SELECT id, f FROM eb_pts WHERE id % 10 = 0;
CREATE TABLE eb_walks AS SELECT i::bigint AS id, array(SELECT random() FROM generate_series(1, 4096) WHERE i > 0) AS v
	FROM generate_series(1, 1024) i;
CREATE TABLE eb_sky AS SELECT i::bigint AS id, ARRAY[random(), random(), random(), random()] AS v
	FROM generate_series(1, $(n 1000000)) i;
VACUUM ANALYZE eb_small, eb_pts, eb_q, eb_walks, eb_sky;
SQL

WORKLOADS=(knn1 join top pearson skyline)
declare -A CALL=(
	[knn1]="SELECT count(*) FROM odp_knn('eb_small', (SELECT f FROM eb_small WHERE id = 7), k => 10)"
	[join]="SELECT count(*) FROM odp_knn_join('eb_q', 'eb_pts', k => 10)"
	[top]="SELECT count(*) FROM odp_top_outliers('(SELECT id, f[1:16] AS f FROM eb_pts)', k => 10, n => 10)"
	[pearson]="SELECT count(*) FROM odp_pearson('eb_walks', min_abs_r => 0.2)"
	[skyline]="SELECT count(*) FROM odp_skyline('eb_sky')"
)
declare -A WARM_BEST WARM_MED FIRST_MED QUEUED_MED

# The "Time: N ms" lines of psql's \timing in $1, one per line.
times() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
best() { sort -n | head -1; }

# Adds a run of every workload on the build installed now to key $1.
measure() {
	local key=$1 w out warm first i
	for w in "${WORKLOADS[@]}"; do
		out=$({ echo "SET odp_gpu.device = gpu;"; echo "SET odp_gpu.gpu_min_rows = 0;";
			echo "SET odp_gpu.report_timing = on;"; echo '\timing on';
			for ((i = 0; i <= REPS; i++)); do echo "${CALL[$w]};"; done; } | psql -X -q 2>&1)
		# the first call of this session is a first call: left out
		warm=$(times "$out" | tail -n +2)
		[ "$(wc -l <<<"$warm")" -eq "$REPS" ] || { echo "$key $w: $(grep -m1 ERROR <<<"$out")" >&2; continue; }
		WARM_BEST[$key.$w]="${WARM_BEST[$key.$w]:-} $(best <<<"$warm")"
		WARM_MED[$key.$w]="${WARM_MED[$key.$w]:-} $(median <<<"$warm")"
		QUEUED_MED[$key.$w]="${QUEUED_MED[$key.$w]:-} $(sed -n 's/.* queued=\([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -n +2 | median)"
		first=$(for ((i = 0; i < FIRSTS; i++)); do
			times "$(printf 'SET odp_gpu.device = gpu;\nSET odp_gpu.gpu_min_rows = 0;\n\\timing on\n%s;\n' "${CALL[$w]}" | psql -X -q 2>&1)"
		done)
		FIRST_MED[$key.$w]="${FIRST_MED[$key.$w]:-} $(median <<<"$first")"
	done
}

# Installs tree $1 and restarts the server with the service.
install_and_restart() {
	make -C "$1" -s install PG_CONFIG="$PG_CONFIG" >/dev/null || exit 1
	odp_server_restart "-c shared_preload_libraries=odp_gpu ${SERVER_OPTS:-}" >/dev/null || exit 1
	odp_service_wait || exit 1
	# the service's first GPU call (cuBLAS, modules) is not any session's
	for w in "${WORKLOADS[@]}"; do
		psql -X -q -c "SET odp_gpu.device = gpu" -c "SET odp_gpu.gpu_min_rows = 0" -c "${CALL[$w]}" >/dev/null
	done
}

for ((round = 1; round <= ROUNDS; round++)); do
	install_and_restart "$BASE"; measure base
	install_and_restart "."; measure this
done

# The best of the rounds' best, the mean of their medians.
agg_best() { tr ' ' '\n' <<<"$1" | grep . | best; }
agg_mean() { tr ' ' '\n' <<<"$1" | grep . | awk '{ s += $1 } END { if (NR) printf "%.2f", s / NR }'; }
echo "# odp_gpu engine process: calls through the GPU service, base build against this one, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- host: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) CPUs; SCALE $SCALE, REPS $REPS, FIRSTS $FIRSTS, $ROUNDS rounds (base, this, base, this, ...)"
echo
echo "| workload | warm best ms, base | this | this / base | warm median ms, base | this | this / base | first call ms (new session, median), base | this | this - base ms | queued ms (submitted to started, median), base | this |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for w in "${WORKLOADS[@]}"; do
	bb=$(agg_best "${WARM_BEST[base.$w]:-}"); tb=$(agg_best "${WARM_BEST[this.$w]:-}")
	bm=$(agg_mean "${WARM_MED[base.$w]:-}"); tm=$(agg_mean "${WARM_MED[this.$w]:-}")
	bf=$(agg_mean "${FIRST_MED[base.$w]:-}"); tf=$(agg_mean "${FIRST_MED[this.$w]:-}")
	bq=$(agg_mean "${QUEUED_MED[base.$w]:-}"); tq=$(agg_mean "${QUEUED_MED[this.$w]:-}")
	awk -v w="$w" -v bb="$bb" -v tb="$tb" -v bm="$bm" -v tm="$tm" -v bf="$bf" -v tf="$tf" -v bq="$bq" -v tq="$tq" 'BEGIN {
		printf "| %s | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f | %.2f | %.2f | %+.2f | %.3f | %.3f |\n",
			w, bb, tb, (bb > 0 ? tb / bb : 0), bm, tm, (bm > 0 ? tm / bm : 0), bf, tf, tf - bf, bq, tq }'
done
echo
echo "Each round's warm best / warm median / first-call median, ms:"
echo
for w in "${WORKLOADS[@]}"; do
	echo "- $w: base best${WARM_BEST[base.$w]:-}, median${WARM_MED[base.$w]:-}, first${FIRST_MED[base.$w]:-};" \
		"this best${WARM_BEST[this.$w]:-}, median${WARM_MED[this.$w]:-}, first${FIRST_MED[this.$w]:-}"
done
$P -c "DROP TABLE eb_small, eb_q, eb_pts, eb_walks, eb_sky"
odp_server_restart "" >/dev/null
