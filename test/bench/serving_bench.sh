#!/usr/bin/env bash
#
# serving_bench.sh
#	  k-NN serving (issue 44): many clients, each sending random single
#	  queries (k = 10, the query vector read by id) over one table, with
#	  pgbench, for odp_knn on each path and for pgvector's exact search and
#	  its HNSW index on the same values.  One table: per mode and clients,
#	  queries a second, p50 and p99 latency (ms, from pgbench's
#	  per-transaction log), and for HNSW its build time and recall@10
#	  against the exact lists of RECALL_QUERIES queries.  Not a test: it
#	  never fails on speed.
#
# Modes (MODES):
#   odp_cpu      odp_knn under odp_gpu.device = cpu: the CPU path in the
#                backend (the table cache serves it where the service
#                runs), with odp_gpu.cpu_threads at its default, as many
#                threads as a parallel query has processes (1 +
#                max_parallel_workers_per_gather, as pgvector's exact
#                scan has);
#   odp_auto     odp_knn under auto: the path the cost model picks;
#   odp_gpu      odp_knn on the GPU through the service, table cache off:
#                every query reads the table;
#   odp_cached   the same with the table cache on: the table's copy on the
#                GPU, passes shared by concurrent queries;
#   odp_vec_cached
#                odp_cached on the pgvector vector(DIMS) column;
#   pgv_exact    pgvector's ORDER BY e <-> q LIMIT 10, index scans off;
#   pgv_hnsw40, pgv_hnsw200
#                the same through an HNSW index (vector_l2_ops, m = 16,
#                ef_construction = 64), hnsw.ef_search = 40 and 200.
# pgvector's modes need its extension installed; odp_gpu's GPU modes need
# the service (shared_preload_libraries = 'odp_gpu') on a GPU host.
#
# Needs a running server (PGHOST, PGPORT, PGUSER as for psql) and pgbench
# on PATH or beside psql.  The rows are generated integers / 100 with
# repeats (ties); the same values in real[] (table srv_f) and vector
# (srv_v).
#
#   ROWS=1000000 DIMS=128 CLIENTS="1 8 32 128" SECONDS_EACH=10
#   MODES="odp_cpu odp_auto odp_gpu odp_cached odp_vec_cached pgv_exact pgv_hnsw40 pgv_hnsw200"
#   RECALL_QUERIES=100 KEEP=1 (keep the tables)
#   REUSE=1 (use the tables a run with KEEP=1 left)
set -uo pipefail
ROWS=${ROWS:-1000000}
DIMS=${DIMS:-128}
CLIENTS=${CLIENTS:-1 8 32 128}
SECONDS_EACH=${SECONDS_EACH:-10}
MODES=${MODES:-odp_cpu odp_auto odp_gpu odp_cached odp_vec_cached pgv_exact pgv_hnsw40 pgv_hnsw200}
RECALL_QUERIES=${RECALL_QUERIES:-100}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
PGBENCH=$(command -v pgbench || echo "$(dirname "$(command -v psql)")/pgbench")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say() { echo "$*" >&2; }
q1() { "${PSQL[@]}" -c "$1" 2>/dev/null | tail -1; }

say "== k-NN serving benchmark, $(date -u '+%F %H:%M UTC'): $ROWS x $DIMS"
has_vector=$(q1 "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")
made=$(q1 "SELECT count(*) FROM pg_class WHERE relname IN ('srv_f', 'srv_v')")
if [ "${REUSE:-0}" = 1 ] && [ "$made" -ge 1 ]; then
	say "-- reusing the tables"
else
"${PSQL[@]}" <<SQL >/dev/null || exit 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS srv_f;
CREATE TABLE srv_f (id bigint PRIMARY KEY, f real[]);
INSERT INTO srv_f SELECT i, (SELECT array_agg(((i::bigint * 7919 + j * 104729 + (i / 10007) * 31) % 10009)::real / 100)
	FROM generate_series(1, $DIMS) j) FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE srv_f;
SQL
made=0
fi
hnsw_ms=- recall40=- recall200=-
if [ "$has_vector" = 1 ] && [ "$made" = 0 ]; then
	"${PSQL[@]}" <<SQL >/dev/null || exit 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS vector;
DROP TABLE IF EXISTS srv_v;
CREATE TABLE srv_v AS SELECT id, f::vector($DIMS) AS e FROM srv_f;
ALTER TABLE srv_v ADD PRIMARY KEY (id);
VACUUM ANALYZE srv_v;
SQL
	q1 "SELECT odp_gpu_table_cache_load('srv_v')" >/dev/null
	if [[ " $MODES " == *" pgv_hnsw"* ]]; then
		say "-- building the HNSW index"
		hnsw_ms=$( { echo '\timing on'; echo "CREATE INDEX srv_v_hnsw ON srv_v USING hnsw (e vector_l2_ops);"; } |
			"${PSQL[@]}" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
		# recall@10: the index's rows within the exact 10th distance (a
		# row tied with the 10th is as right as the one the exact list
		# kept), the same queries
		for ef in 40 200; do
			r=$("${PSQL[@]}" <<SQL | tail -1
SET hnsw.ef_search = $ef;
SELECT round(avg(hit)::numeric, 4) FROM (
	SELECT q.id, (SELECT count(*) FROM
		(SELECT e <-> q.e AS d FROM srv_v ORDER BY e <-> q.e LIMIT 10) a
		WHERE a.d <= (SELECT max(d) FROM (SELECT (e <-> q.e) + 0 AS d FROM srv_v ORDER BY 1 LIMIT 10) b)) / 10.0 AS hit
	FROM (SELECT id, e FROM srv_v WHERE id % ($ROWS / $RECALL_QUERIES) = 1 LIMIT $RECALL_QUERIES) q) s;
SQL
)
			[ "$ef" = 40 ] && recall40=$r || recall200=$r
		done
	fi
fi

# the pgbench scripts: the query vector by a random id
cat >"$work/odp.sql" <<SQL
\\set q random(1, $ROWS)
SELECT count(*) FROM odp_knn('srv_f', (SELECT f FROM srv_f WHERE id = :q), k => 10);
SQL
cat >"$work/odp_vec.sql" <<SQL
\\set q random(1, $ROWS)
SELECT count(*) FROM odp_knn('srv_v', (SELECT e FROM srv_v WHERE id = :q), k => 10);
SQL
cat >"$work/pgv.sql" <<SQL
\\set q random(1, $ROWS)
SELECT count(*) FROM (SELECT id FROM srv_v ORDER BY e <-> (SELECT e FROM srv_v WHERE id = :q) LIMIT 10) s;
SQL
chmod 644 "$work"/*.sql

# mode -> its pgbench script and PGOPTIONS; empty where it cannot run here
mode_setup() {
	case $1 in
		odp_cpu) echo "odp.sql|-c odp_gpu.device=cpu" ;;
		odp_auto) echo "odp.sql|-c odp_gpu.device=auto" ;;
		odp_gpu) echo "odp.sql|-c odp_gpu.device=gpu -c odp_gpu.table_cache=off" ;;
		odp_cached) echo "odp.sql|-c odp_gpu.device=gpu" ;;
		odp_vec_cached) [ "$has_vector" = 1 ] && echo "odp_vec.sql|-c odp_gpu.device=gpu" ;;
		pgv_exact) [ "$has_vector" = 1 ] && echo "pgv.sql|-c enable_indexscan=off -c enable_bitmapscan=off" ;;
		pgv_hnsw40) [ "$has_vector" = 1 ] && echo "pgv.sql|-c hnsw.ef_search=40" ;;
		pgv_hnsw200) [ "$has_vector" = 1 ] && echo "pgv.sql|-c hnsw.ef_search=200" ;;
	esac
}

echo "# k-NN serving, $(date -u '+%F %H:%M UTC')"
echo
echo "- host: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep . || echo "no GPU"); $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs"
echo "- server: $(q1 "SELECT split_part(version(), ' on ', 1)"); preloaded: '$(q1 "SHOW shared_preload_libraries")'"
echo "- $ROWS x $DIMS rows, k = 10, random single queries, ${SECONDS_EACH} s a run; max_parallel_workers_per_gather = $(q1 "SHOW max_parallel_workers_per_gather") (odp_cpu's threads: 1 + it)"
echo "- odp_auto's choice for one query on the cached table: $(q1 "SELECT path || ' (est. cpu ' || round(cpu_ms::numeric, 2) || ' ms, gpu ' || round(gpu_ms::numeric, 2) || ' ms)' FROM odp_knn_path(1, $ROWS, $DIMS, on_device => true)")"
echo "- pgvector: $( [ "$has_vector" = 1 ] && q1 "SELECT extversion FROM pg_extension WHERE extname = 'vector'" || echo "not installed")"
echo "- HNSW (m = 16, ef_construction = 64): built in $hnsw_ms ms; recall@10 over $RECALL_QUERIES queries (rows within the exact 10th distance): $recall40 at ef_search 40, $recall200 at 200"
echo
echo "| mode | clients | queries/s | p50 ms | p99 ms |"
echo "|---|---:|---:|---:|---:|"
for mode in $MODES; do
	setup=$(mode_setup "$mode")
	[ -n "$setup" ] || { say "-- $mode: cannot run here"; continue; }
	script=${setup%%|*} opts=${setup#*|}
	# a warm call first: the session's start, the table kept
	PGOPTIONS="$opts" "$PGBENCH" -n -f "$work/$script" -c 1 -t 3 >/dev/null 2>&1
	for c in $CLIENTS; do
		say "-- $mode, $c clients"
		rm -f "$work"/log.*
		out=$(cd "$work" && PGOPTIONS="$opts" "$PGBENCH" -n -f "$work/$script" -c "$c" -j "$(( c < $(nproc) ? c : $(nproc) ))" \
			-T "$SECONDS_EACH" -l --log-prefix="$work/log" 2>&1)
		tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
		pct=$(cat "$work"/log.* 2>/dev/null | awk '{ print $3 / 1000 }' | sort -n |
			awk '{ v[NR] = $1 } END { if (NR) { a = int((NR + 1) / 2); b = int(NR * 0.99); if (b < 1) b = 1; printf "%.2f %.2f", v[a], v[b] } }')
		[ -n "$tps" ] && tps=$(printf '%.0f' "$tps")
		printf '| %s | %s | %s | %s | %s |\n' "$mode" "$c" "${tps:-failed}" "${pct% *}" "${pct#* }"
	done
done
[ "${KEEP:-0}" = 1 ] || "${PSQL[@]}" -c "DROP TABLE IF EXISTS srv_f, srv_v" >/dev/null
