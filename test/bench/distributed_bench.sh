#!/usr/bin/env bash
# Benchmark of the distributed top-n outliers (issue 18): one local table
# against the same rows hash-partitioned over 1, 2 and 4 node servers
# (postgres_fdw foreign partitions; each node a PostgreSQL server of its
# own with odp_gpu, started here), and, as the peer a user would otherwise
# have, the same sharded table read through postgres_fdw
# (odp_gpu.distributed = off).  Prints one table: workload, layout, the
# whole SQL call, speed-up over the local table, SolvingSet iterations,
# the supervisor's time and share of the call (seed 001, Fig. 21), bytes
# sent and received per iteration, and whether the top n equal the local
# table's.  Not a test: it never fails on speed.
#
# Needs a running coordinator (PGHOST etc.) with odp_gpu and postgres_fdw
# available; runs as root or as a user who may run initdb.
#
#   ODP_BENCH_SETS="poker gauss"      Poker stand-in (uniformly random
#                                     5-card hands, 10 values) and a
#                                     Gaussian mixture (16 dims, 8 clusters,
#                                     0.01% uniform outliers)
#   ODP_BENCH_ROWS_POKER=200000  ODP_BENCH_ROWS_GAUSS=200000
#   ODP_BENCH_NODES="1 2 4"           node counts
#   ODP_BENCH_K=50  ODP_BENCH_N=10  ODP_BENCH_METHOD=solvingset (every
#                                     layout runs it; auto would pick brute
#                                     force for a small local table)
#   ODP_BENCH_NODE_OPTS="-c odp_gpu.device=cpu"   every node's server options;
#                                     %i is replaced by the node's number
#                                     minus one (e.g. "-c odp_gpu.device_id=%i")
#   ODP_BENCH_LOCAL_OPTS="SET odp_gpu.device = cpu"   the coordinator's session
#   ODP_BENCH_PULLED=1                also time the pulled reads (2 nodes)
#   ODP_BENCH_GEN=sql                 fast: the Gaussian mixture from hashes
#                                     of (id, dimension) instead of random(),
#                                     the same rows wherever made, loaded by
#                                     ODP_BENCH_JOBS sessions at once, and
#                                     each node makes its own shard: the
#                                     sharded tables are partitioned by
#                                     ranges of id, not hashed through
#                                     postgres_fdw (minutes for 10^7 rows)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
ODP_PORT=${ODP_BENCH_NODE_PORT:-54450}
sets=${ODP_BENCH_SETS:-"poker gauss"}
node_counts=${ODP_BENCH_NODES:-"1 2 4"}
k=${ODP_BENCH_K:-50}
n=${ODP_BENCH_N:-10}
method=${ODP_BENCH_METHOD:-solvingset}
node_opts=${ODP_BENCH_NODE_OPTS:-"-c odp_gpu.device=cpu"}
local_opts=${ODP_BENCH_LOCAL_OPTS:-"SET odp_gpu.device = cpu"}
pulled=${ODP_BENCH_PULLED:-1}
gen=${ODP_BENCH_GEN:-sql}
jobs=${ODP_BENCH_JOBS:-$(n=$(nproc); echo $((n > 16 ? 16 : n)))}
export PG_CONFIG=${PG_CONFIG:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}
ODP_PGBIN=$("$PG_CONFIG" --bindir)
max_nodes=0
for c in $node_counts; do [ "$c" -gt "$max_nodes" ] && max_nodes=$c; done
trap odp_nodes_remove EXIT

for i in $(seq "$max_nodes"); do
	odp_node_create "$i" "${node_opts//%i/$((i - 1))}" || { echo "node $i did not start"; exit 1; }
done
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || exit 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
DROP TABLE IF EXISTS odp_bench_warm;
CREATE TABLE odp_bench_warm AS SELECT i::bigint AS id, ARRAY[i % 7, i % 5]::real[] AS f FROM generate_series(1, 100) i;
SQL
for i in $(seq "$max_nodes"); do
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL || exit 1
SET client_min_messages = warning;
DROP SERVER IF EXISTS odp_bench_node$i CASCADE;
CREATE SERVER odp_bench_node$i FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '${ODP_NODE_SOCK[$i]}', port '${ODP_NODE_PORT[$i]}', dbname 'postgres', batch_size '1000', fetch_size '10000');
CREATE USER MAPPING FOR CURRENT_USER SERVER odp_bench_node$i OPTIONS (user 'postgres');
SQL
done

# the data set $1 as the local table odp_bench_sh_$1 (id, f real[])
make_set() {
	local rows
	case $1 in
	poker)
		rows=${ODP_BENCH_ROWS_POKER:-200000}
		psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
SELECT setseed(0.18);
DROP TABLE IF EXISTS odp_bench_sh_poker CASCADE;
CREATE TABLE odp_bench_sh_poker AS
SELECT i::bigint AS id,
	(SELECT array_agg(v ORDER BY o) FROM (
		SELECT u.o, u.v FROM (SELECT row_number() OVER () AS o, card
			FROM (SELECT card FROM generate_series(0, 51) card WHERE i > 0 ORDER BY random() LIMIT 5) h) c,
		LATERAL (VALUES (2 * c.o - 1, (c.card / 13 + 1)::real), (2 * c.o, (c.card % 13 + 1)::real)) u(o, v)) x) AS f
FROM generate_series(1, $rows) i;
ALTER TABLE odp_bench_sh_poker ADD PRIMARY KEY (id);
SQL
		;;
	gauss)
		rows=${ODP_BENCH_ROWS_GAUSS:-200000}
		if [ "$gen" = fast ]; then
			psql -X -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS odp_bench_sh_gauss CASCADE" \
				-c "CREATE TABLE odp_bench_sh_gauss (id bigint, f real[])" >/dev/null &&
				fast_load "psql -X -q" odp_bench_sh_gauss 1 "$rows" &&
				psql -X -q -c "ALTER TABLE odp_bench_sh_gauss ADD PRIMARY KEY (id)" -c "VACUUM ANALYZE odp_bench_sh_gauss" >/dev/null
			return
		fi
		psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
SELECT setseed(0.1618);
DROP TABLE IF EXISTS odp_bench_sh_centres, odp_bench_sh_gauss CASCADE;
CREATE TABLE odp_bench_sh_centres AS
SELECT c, array_agg((random() * 20 - 10)::real ORDER BY d) AS mu
FROM generate_series(0, 7) c, generate_series(1, 16) d GROUP BY c;
CREATE TABLE odp_bench_sh_gauss AS
SELECT i::bigint AS id,
	CASE WHEN i % 10000 = 0
		THEN (SELECT array_agg((random() * 60 - 30)::real) FROM generate_series(1, 16) d WHERE i > 0)
		ELSE (SELECT array_agg((m.mu[d] + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))::real ORDER BY d)
			FROM generate_series(1, 16) d WHERE i > 0)
	END AS f
FROM generate_series(1, $rows) i
JOIN odp_bench_sh_centres m ON m.c = i % 8;
ALTER TABLE odp_bench_sh_gauss ADD PRIMARY KEY (id);
SQL
		;;
	esac
}

# The fast Gaussian mixture's rows with ids @LO@ .. @HI@: 16 dimensions, 8
# clusters about centres in [-10, 10), every 10,000th row uniform in
# [-30, 30); each value from 53-bit hashes of (id, dimension).
u53() { echo "((hashint8extended($1, $2) & 9007199254740991)::float8 + 0.5) / 9007199254740992.0"; }
fast_gauss_sql="SELECT i::bigint AS id, CASE WHEN i % 10000 = 0
	THEN array(SELECT ($(u53 'i * 64 + d' 3) * 60 - 30)::real FROM generate_series(1, 16) d)
	ELSE array(SELECT (($(u53 '(i % 8) * 64 + d' 7) * 20 - 10)
		+ sqrt(-2 * ln($(u53 'i * 64 + d' 1))) * cos(2 * pi() * $(u53 'i * 64 + d' 2)))::real
		FROM generate_series(1, 16) d) END AS f
	FROM generate_series(@LO@, @HI@) i"

# fast_load PSQL_PREFIX TABLE LO HI: TABLE (id, f real[]) gets the fast
# rows LO .. HI, over $jobs sessions at once.
fast_load() {
	local -a cmd
	read -r -a cmd <<<"$1"
	local t=$2 lo=$3 hi=$4 pids=() rc=0 a b j
	for ((j = 0; j < jobs; j++)); do
		a=$((lo + (hi - lo + 1) * j / jobs)) b=$((lo + (hi - lo + 1) * (j + 1) / jobs - 1))
		[ "$a" -le "$b" ] || continue
		"${cmd[@]}" -c "INSERT INTO $t $(sed "s/@LO@/$a/g; s/@HI@/$b/g" <<<"$fast_gauss_sql")" >/dev/null &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}

# the local table of set $1 partitioned by ranges of id over nodes 1 .. $2,
# each node making its own rows (ODP_BENCH_GEN=fast)
make_sharded_fast() {
	local s=$1 c=$2 i rows lo hi
	rows=$(psql -X -At -c "SELECT count(*) FROM odp_bench_sh_$s")
	psql -X -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS odp_bench_sh_${s}_$c" \
		-c "CREATE TABLE odp_bench_sh_${s}_$c (id bigint, f real[]) PARTITION BY RANGE (id)" >/dev/null
	for i in $(seq "$c"); do
		lo=$((1 + rows * (i - 1) / c)) hi=$((rows * i / c))
		odp_node_psql "$i" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS sh_${s}_$c" \
			-c "CREATE TABLE sh_${s}_$c (id bigint PRIMARY KEY, f real[])" >/dev/null
		psql -X -q -c "CREATE FOREIGN TABLE odp_bench_sh_${s}_${c}_p$i PARTITION OF odp_bench_sh_${s}_$c
			FOR VALUES FROM ($lo) TO ($((hi + 1))) SERVER odp_bench_node$i OPTIONS (table_name 'sh_${s}_$c')" >/dev/null
		fast_load "psql -X -q -h ${ODP_NODE_SOCK[$i]} -p ${ODP_NODE_PORT[$i]} -U postgres -d postgres" "sh_${s}_$c" "$lo" "$hi" &
	done
	wait
	for i in $(seq "$c"); do
		odp_node_psql "$i" -c "VACUUM ANALYZE sh_${s}_$c" >/dev/null
	done
}

# the local table of set $1 hash-partitioned over nodes 1 .. $2
make_sharded() {
	local s=$1 c=$2 i
	if [ "$gen" = fast ]; then
		make_sharded_fast "$@"
		return
	fi
	psql -X -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS odp_bench_sh_${s}_$c" \
		-c "CREATE TABLE odp_bench_sh_${s}_$c (id bigint, f real[]) PARTITION BY HASH (id)" >/dev/null
	for i in $(seq "$c"); do
		odp_node_psql "$i" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS sh_${s}_$c" -c "CREATE TABLE sh_${s}_$c (id bigint PRIMARY KEY, f real[])" >/dev/null
		psql -X -q -c "CREATE FOREIGN TABLE odp_bench_sh_${s}_${c}_p$i PARTITION OF odp_bench_sh_${s}_$c
			FOR VALUES WITH (MODULUS $c, REMAINDER $((i - 1))) SERVER odp_bench_node$i OPTIONS (table_name 'sh_${s}_$c')" >/dev/null
	done
	psql -X -q -c "INSERT INTO odp_bench_sh_${s}_$c SELECT id, f FROM odp_bench_sh_$s" >/dev/null
	for i in $(seq "$c"); do
		odp_node_psql "$i" -c "VACUUM ANALYZE sh_${s}_$c" -c "SELECT count(*) FROM sh_${s}_$c" >/dev/null
	done
}

# one timed call on table $1 with extra session settings $2: prints
# "ms|ids|notice"
timed() {
	local out
	out=$(psql -X -At -c "$local_opts" -c "$2" \
		-c "SELECT count(*) FROM odp_top_outliers('odp_bench_warm', k => 3, n => 1)" \
		-c "SET odp_gpu.report_timing = on" -c '\timing on' \
		-c "SELECT string_agg(id::text, ',' ORDER BY rank) FROM odp_top_outliers('$1', k => $k, n => $n, method => '$method')" 2>&1)
	printf '%s|%s|%s\n' "$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -1)" \
		"$(grep -E '^[0-9]+(,[0-9]+)*$' <<<"$out" | tail -1)" \
		"$(sed -n 's/^NOTICE:  odp_gpu timing: //p' <<<"$out" | tail -1)$(grep ERROR <<<"$out" | head -1)"
}

get() { sed -n "s/.*[ (]$1=\([^ )]*\).*/\1/p" <<<"$2" | head -1; }

printf '%-6s %8s %4s %3s %3s | %-16s %10s %8s %5s %10s %7s %12s %s\n' set rows dims k n layout "call ms" speedup iters "sup. ms" share "bytes/iter" "same top-$n"
for s in $sets; do
	make_set "$s" || { echo "$s: could not generate"; continue; }
	rows=$(psql -X -At -c "SELECT count(*) FROM odp_bench_sh_$s")
	dims=$(psql -X -At -c "SELECT array_length(f, 1) FROM odp_bench_sh_$s LIMIT 1")
	IFS='|' read -r base_ms base_ids note <<<"$(timed "odp_bench_sh_$s" "")"
	printf '%-6s %8s %4s %3s %3s | %-16s %10s %8s %5s %10s %7s %12s %s\n' "$s" "$rows" "$dims" "$k" "$n" \
		"local table" "$base_ms" "1.00x" "$(get iterations "$note")" "" "" "" "-"
	for c in $node_counts; do
		make_sharded "$s" "$c"
		IFS='|' read -r ms ids note <<<"$(timed "odp_bench_sh_${s}_$c" "")"
		sup=$(sed -n 's/.*supervisor=\([0-9.]*\) ms (\([0-9.]*%\)).*/\1 \2/p' <<<"$note")
		printf '%-6s %8s %4s %3s %3s | %-16s %10s %8s %5s %10s %7s %12s %s\n' "$s" "$rows" "$dims" "$k" "$n" \
			"$c node$([ "$c" -gt 1 ] && echo s)" "$ms" \
			"$(awk -v a="$base_ms" -v b="$ms" 'BEGIN { if (b > 0) printf "%.2fx", a / b }')" \
			"$(get iterations "$note")" "${sup%% *}" "${sup##* }" "$(get bytes_per_iteration "$note")" \
			"$([ "$ids" = "$base_ids" ] && echo yes || echo "NO ${note:0:120}")"
		if [ "$pulled" = 1 ] && [ "$c" = 2 ]; then
			IFS='|' read -r ms ids note <<<"$(timed "odp_bench_sh_${s}_$c" "SET odp_gpu.distributed = off")"
			printf '%-6s %8s %4s %3s %3s | %-16s %10s %8s %5s %10s %7s %12s %s\n' "$s" "$rows" "$dims" "$k" "$n" \
				"2 nodes, pulled" "$ms" \
				"$(awk -v a="$base_ms" -v b="$ms" 'BEGIN { if (b > 0) printf "%.2fx", a / b }')" \
				"$(get iterations "$note")" "" "" "" "$([ "$ids" = "$base_ids" ] && echo yes || echo NO)"
		fi
	done
done
