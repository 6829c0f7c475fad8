#!/usr/bin/env bash
# Benchmark of float64 rows against float32 rows (issue 39): the same
# values computed in float64 (features stored as float8, numeric, integer
# or bigint) and in float32 (real, real[], pgvector), on the GPU.
#
# 1. The engine alone (test/bench/knn_engine_bench and
#    outliers_engine_bench, no server): the k-NN workloads of the k-NN
#    tensor-core filter (all-kNN N x 32 and N x 45, k = 10; a batch of Q
#    queries against N x 128, k = 10; standard Gaussian rows) and every
#    row's outlier score (N x 10 uniform, k = 50), each in float32 and
#    float64, with the engine's transfer and compute phases.
# 2. Whole SQL calls at server defaults (needs a running server with
#    odp_gpu installed: PGHOST etc.), odp_outlier_scores and a batch
#    odp_knn_join on a real[] table and on float8 columns holding the same
#    values, with the phases of the odp_gpu.report_timing NOTICE (read,
#    transfer, compute, output) beside PostgreSQL's own scan of the table
#    (SELECT count(*) and a plain SRF of as many rows).
# Prints one table per part.  Not a test: it never fails on speed.
#
#   ODP_PREC_N=1000000  rows (part 1)   ODP_PREC_Q=10000  batch queries
#   ODP_PREC_SQL_N=100000  rows of part 2 (0 skips it)
#   ODP_PREC_REPS=3     runs of each engine workload (the best is shown;
#   the first also pays for the CUDA context and is dropped)
set -uo pipefail
cd "$(dirname "$0")/../.."
N=${ODP_PREC_N:-1000000}
Q=${ODP_PREC_Q:-10000}
SN=${ODP_PREC_SQL_N:-100000}
REPS=${ODP_PREC_REPS:-3}
make -s test/bench/knn_engine_bench test/bench/outliers_engine_bench >/dev/null || exit 1

# best "transfer compute" of a knn_engine_bench run's GPU lines, skipping the first
knn_best() {
	test/bench/knn_engine_bench "$@" --reps $((REPS + 1)) 2>&1 |
		awk '/^gpu: ok/ { n++; if (n == 1) next; gsub(/,/, "");
			for (i = 1; i <= NF; i++) { if ($i == "transfer") t = $(i + 1); if ($i == "compute") c = $(i + 1) }
			if (best == "" || c + 0 < best + 0) { best = c; bt = t } }
			END { if (best == "") print "failed failed"; else print bt, best }'
}
scores_best() {
	test/bench/outliers_engine_bench unif --scores --rows "$1" --dims 10 --k 50 --reps $((REPS + 1)) $2 2>&1 |
		awk '/^gpu-scores/ { n++; if (n == 1) next; gsub(/[(),]/, "");
			for (i = 1; i <= NF; i++) { if ($i == "transfer") t = $(i + 1); if ($i == "compute") c = $(i + 1) }
			if (best == "" || c + 0 < best + 0) { best = c; bt = t } }
			END { if (best == "") print "failed failed"; else print bt, best }'
}

echo "== engine, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(date -u +%F)"
printf '%-34s %14s %14s %14s %14s %8s\n' workload "f32 transfer" "f32 compute" "f64 transfer" "f64 compute" "f64/f32"
row() {
	local name=$1 a b
	shift
	read -r at ac <<<"$("$@")"
	read -r bt bc <<<"$("$@" --float64)"
	printf '%-34s %11s ms %11s ms %11s ms %11s ms %8s\n' "$name" "$at" "$ac" "$bt" "$bc" \
		"$(awk -v a="$ac" -v b="$bc" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')"
}
row "all-kNN ${N} x 32, k=10" knn_best --rows "$N" --dims 32 --k 10
row "all-kNN ${N} x 45, k=10" knn_best --rows "$N" --dims 45 --k 10
row "batch ${Q} x ${N} x 128, k=10" knn_best --rows "$N" --queries "$Q" --dims 128 --k 10
row "all-kNN 100000 x 32, k=10" knn_best --rows 100000 --dims 32 --k 10
scores_row() {
	read -r at ac <<<"$(scores_best "$1" "")"
	read -r bt bc <<<"$(scores_best "$1" --float64)"
	printf '%-34s %11s ms %11s ms %11s ms %11s ms %8s\n' "scores $1 x 10, k=50" "$at" "$ac" "$bt" "$bc" \
		"$(awk -v a="$ac" -v b="$bc" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')"
}
scores_row 100000

[ "$SN" -gt 0 ] || exit 0
pg_isready -q 2>/dev/null || { echo "no server: SQL part skipped"; exit 0; }
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
"${PSQL[@]}" <<EOF >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS odp_prec_r4, odp_prec_f8, odp_prec_q4, odp_prec_q8;
SELECT setseed(0.39);
CREATE TABLE odp_prec_f8 AS
	SELECT i AS id, random() AS a, random() AS b, random() AS c, random() AS d, random() AS e,
		   random() AS f, random() AS g, random() AS h, random() AS j, random() AS l
	FROM generate_series(1, $SN) i;
ALTER TABLE odp_prec_f8 ADD PRIMARY KEY (id);
CREATE TABLE odp_prec_r4 AS
	SELECT id, ARRAY[a, b, c, d, e, f, g, h, j, l]::real[] AS v FROM odp_prec_f8;
ALTER TABLE odp_prec_r4 ADD PRIMARY KEY (id);
-- the float8 table holds the real[] table's values, so both compute on the same numbers
UPDATE odp_prec_f8 t SET a = v[1], b = v[2], c = v[3], d = v[4], e = v[5], f = v[6], g = v[7],
	h = v[8], j = v[9], l = v[10] FROM odp_prec_r4 r WHERE r.id = t.id;
CREATE TABLE odp_prec_q8 AS SELECT * FROM odp_prec_f8 WHERE id <= 1000;
CREATE TABLE odp_prec_q4 AS SELECT * FROM odp_prec_r4 WHERE id <= 1000;
VACUUM ANALYZE odp_prec_f8, odp_prec_r4, odp_prec_q8, odp_prec_q4;
EOF
echo
echo "== SQL at server defaults, ${SN} rows x 10 dims, odp_gpu.device = gpu (warm session; ms)"
# one session: a tiny call makes the CUDA context, then each call twice, the second counted
sql_run() {
	"${PSQL[@]}" -c "SET odp_gpu.device = gpu" -c "SET odp_gpu.report_timing = on" \
		-c "SELECT count(*) FROM odp_outlier_scores('odp_prec_q4', k => 5)" \
		-c "\\timing on" -c "$1" -c "$1" 2>&1
}
phases() {
	awk '/NOTICE/ && /read/ { last = $0 } /^Time:/ { t = $2 }
		END { r = tr = c = o = "-"; p = "-"
			n = split(last, w, /[ ,=]+/)
			for (i = 1; i < n; i++) { if (w[i] == "read") r = w[i + 1]; if (w[i] == "transfer") tr = w[i + 1];
				if (w[i] == "compute") c = w[i + 1]; if (w[i] == "output") o = w[i + 1]; if (w[i] == "precision") p = w[i + 1] }
			printf "%-8s %9s %9s %9s %9s %9s\n", p, r, tr, c, o, t }'
}
printf '%-44s %-8s %9s %9s %9s %9s %9s\n' call precision read transfer compute output whole
for spec in "scores real[]|SELECT count(*) FROM odp_outlier_scores('odp_prec_r4', k => 50)" \
	"scores float8|SELECT count(*) FROM odp_outlier_scores('odp_prec_f8', k => 50)" \
	"knn_join 1000 x real[], k=10|SELECT count(*) FROM odp_knn_join('odp_prec_q4', 'odp_prec_r4', k => 10)" \
	"knn_join 1000 x float8, k=10|SELECT count(*) FROM odp_knn_join('odp_prec_q8', 'odp_prec_f8', k => 10)"; do
	printf '%-44s %s\n' "${spec%%|*}" "$(sql_run "${spec#*|}" | phases)"
done
scan() { "${PSQL[@]}" -c "\\timing on" -c "$1" -c "$1" 2>&1 | awk '/^Time:/ { t = $2 } END { print t }'; }
printf '%-44s %-8s %49s\n' "PostgreSQL: SELECT count(*) FROM real[] table" - "$(scan 'SELECT count(*) FROM odp_prec_r4')"
printf '%-44s %-8s %49s\n' "PostgreSQL: SELECT count(*) FROM float8 table" - "$(scan 'SELECT count(*) FROM odp_prec_f8')"
printf '%-44s %-8s %49s\n' "PostgreSQL: an SRF of ${SN} rows" - "$(scan "SELECT count(*) FROM generate_series(1, $SN)")"
"${PSQL[@]}" -c "DROP TABLE odp_prec_r4, odp_prec_f8, odp_prec_q4, odp_prec_q8" >/dev/null
