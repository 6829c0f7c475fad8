#!/usr/bin/env bash
# Benchmark of k-NN over pgvector's columns: one query, k = 10, N rows of
# D dimensions stored as vector, halfvec and real[] (the same values), each
# read by odp_knn from the column itself; the same through a query source
# with a cast to real[] (what a pgvector user had to write before); and
# pgvector's own exact search, ORDER BY embedding <-> q LIMIT 10 without
# an index, as PostgreSQL plans it (parallel workers allowed).  Prints the
# phases of the second of two calls in a warm session.  Needs a running
# server with odp_gpu and pgvector installed.  Not a test: it never fails
# on speed.
#
#   ODP_PGV_N=1000000   ODP_PGV_DIMS=128   ODP_BENCH_PATH=gpu
set -uo pipefail
n=${ODP_PGV_N:-1000000}
d=${ODP_PGV_DIMS:-128}
path=${ODP_BENCH_PATH:-gpu}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
key() { sed -n "s/.*[ (]$1=\\([^ )]*\\).*/\\1/p" <<<"$2" | head -1; }
ms_of() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$1" | tail -1; }

echo "== odp_gpu k-NN over pgvector columns, $(date -u '+%F %H:%M UTC')"
echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) threads; path $path; N = $n, D = $d, k = 10"
echo
"${PSQL[@]}" <<SQL || exit 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS pgv_emb;
SELECT setseed(0.5) \\gset
CREATE TABLE pgv_emb AS
SELECT i AS id, f::vector AS v, f::halfvec AS h, f AS r
FROM (SELECT i, array(SELECT (random() * 2 - 1)::real FROM generate_series(1, $d) WHERE i > 0) AS f
	  FROM generate_series(1, $n) i) x;
ALTER TABLE pgv_emb ADD PRIMARY KEY (id);
VACUUM ANALYZE pgv_emb;
SQL
q="(SELECT v FROM pgv_emb WHERE id = 7)"
printf '| column | how | rows | read ms | transfer ms | compute ms | whole call ms | read workers |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|\n'
run() {	# label, how, SQL of the call
	local out notice
	out=$("${PSQL[@]}" 2>&1 <<SQL
SET odp_gpu.device = $path;
SET odp_gpu.report_timing = on;
SELECT count(*) FROM $3;
SELECT count(*) FROM $3;
SQL
)
	notice=$(grep 'odp_gpu timing' <<<"$out" | tail -1)
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$(key rows "$notice")" \
		"$(key read "$notice")" "$(key transfer "$notice")" "$(key compute "$notice")" \
		"$(key total "$notice")" "$(key read_workers "$notice")"
}
run vector "the column" "odp_knn('pgv_emb', $q, k => 10, features => '{v}')"
run halfvec "the column" "odp_knn('pgv_emb', $q::halfvec, k => 10, features => '{h}')"
run "real[]" "the column" "odp_knn('pgv_emb', $q, k => 10, features => '{r}')"
run vector "query source, v::real[]" "odp_knn('SELECT id, v::real[] AS f FROM pgv_emb', $q, k => 10)"
out=$("${PSQL[@]}" 2>&1 <<SQL
\\timing on
SELECT count(*) FROM (SELECT id FROM pgv_emb ORDER BY v <-> $q LIMIT 10) x;
SELECT count(*) FROM (SELECT id FROM pgv_emb ORDER BY v <-> $q LIMIT 10) x;
SELECT count(*) FROM (SELECT id FROM pgv_emb ORDER BY h <-> $q::halfvec LIMIT 10) x;
SQL
)
times=($(grep -o 'Time: [0-9.]*' <<<"$out" | cut -d' ' -f2))
echo
echo "pgvector's exact search (ORDER BY <-> LIMIT 10, no index): vector ${times[1]:-?} ms (first call ${times[0]:-?}), halfvec ${times[2]:-?} ms"
"${PSQL[@]}" -c "DROP TABLE pgv_emb" >/dev/null
