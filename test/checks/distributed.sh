# test/checks/distributed.sh: sourced by test/run_tests.sh and
# test/gpu_suite.sh (needs odp_check, the run's directory and the throwaway
# server of test/lib.sh, which acts as the coordinator).
# odp_distributed_checks starts two node servers (local sockets, odp_gpu
# installed, password authentication for every role but their superuser),
# shards a table by hash of its id over them with postgres_fdw plus one
# local partition, and checks
#   - every distributed function against the same rows in one local table
#     (odp_top_outliers with each method and metric, odp_solving_set,
#     odp_knn, odp_knn_join, odp_skyline with bands), and that it ran on
#     the nodes; odp_gpu.distributed = off pulls the rows and agrees;
#     float8 features (epoch seconds with centimes, t) run on the nodes in
#     float64 and agree with the local table bit for bit;
#   - faults: a node down, a shard dropped, a node backend killed mid-call,
#     statement_timeout and cancel, each ending the call with an error that
#     names the node, no connection left on any node, the next call right;
#   - security: postgres_fdw's password rules for non-superusers, the
#     mapped role's privileges and row-level security on a node, and no
#     password in any error or server log.
# An argument gives the node servers extra options (the GPU suite runs the
# nodes' steps on the GPU with "-c odp_gpu.device=gpu"); ODP_SHARD_LONG=0
# leaves out the faults in the middle of a long call.

ODP_SHARD_PW='n0de-Secret-pw'
ODP_SHARD_NODES=2

# Backends of the coordinator's calls on node $1.
odp_node_sessions() {
	odp_node_psql "$1" -At -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'odp_gpu'"
}

# Waits up to $2 seconds for node $1 to have no odp_gpu backend; prints the count.
odp_node_wait_idle() {
	local n
	for _ in $(seq $((${2:-2} * 10))); do
		n=$(odp_node_sessions "$1")
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	echo "$n"
}

# Same output of two queries on the coordinator (as $3, default postgres)?
odp_same() {
	local a b
	a=$(psql -X -At -U "${3:-postgres}" -c "$1" 2>&1 | grep -v '^SET$')
	b=$(psql -X -At -U "${3:-postgres}" -c "$2" 2>&1 | grep -v '^SET$')
	[ -n "$a" ] && [ "$a" = "$b" ] && ! grep -q ERROR <<<"$a"
}

odp_distributed_checks() {	# [node server options, e.g. "-c odp_gpu.device=gpu"]
	local i out rc t0 t1 el pid n sql

	for i in $(seq "$ODP_SHARD_NODES"); do
		odp_node_create "$i" "${1:-}"
		odp_check "node $i starts with odp_gpu" $? "port ${ODP_NODE_PORT[$i]}"
		odp_node_psql "$i" -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<SQL
SET client_min_messages = warning;
CREATE ROLE analyst LOGIN PASSWORD '$ODP_SHARD_PW';
CREATE TABLE pts_node (id bigint, f real[], x float8, y float8, t float8);
GRANT SELECT ON pts_node TO analyst;
SQL
		odp_check "node $i: a role with a password, the shard table" $? ""
	done

	# the coordinator: a hash-partitioned table over two nodes and itself
	psql -X -q -v ON_ERROR_STOP=1 >"$ODP_RUN_DIR/distributed_setup.log" 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
CREATE EXTENSION postgres_fdw;
CREATE SERVER node1 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '${ODP_NODE_SOCK[1]}', port '${ODP_NODE_PORT[1]}', dbname 'postgres');
CREATE SERVER node2 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '${ODP_NODE_SOCK[2]}', port '${ODP_NODE_PORT[2]}', dbname 'postgres', connect_timeout '3');
CREATE USER MAPPING FOR postgres SERVER node1 OPTIONS (user 'postgres');
CREATE USER MAPPING FOR postgres SERVER node2 OPTIONS (user 'postgres');
CREATE TABLE pts (id bigint, f real[], x float8, y float8, t float8) PARTITION BY HASH (id);
CREATE FOREIGN TABLE pts_p0 PARTITION OF pts FOR VALUES WITH (MODULUS 3, REMAINDER 0)
	SERVER node1 OPTIONS (table_name 'pts_node');
CREATE FOREIGN TABLE pts_p1 PARTITION OF pts FOR VALUES WITH (MODULUS 3, REMAINDER 1)
	SERVER node2 OPTIONS (table_name 'pts_node');
CREATE TABLE pts_p2 PARTITION OF pts FOR VALUES WITH (MODULUS 3, REMAINDER 2);
-- clusters, a few planted outliers, duplicates and ties (integer grid)
INSERT INTO pts
SELECT i,
	ARRAY[((i * 7919) % 97)::real, ((i * 104729) % 89)::real, (i % 13)::real,
		  CASE WHEN i % 997 = 0 THEN 500 ELSE (i % 7) END::real],
	((i * 31) % 101)::float8, ((i * 57) % 103)::float8 + (i % 3) * 0.5,
	-- epoch seconds with centimes: float32 would round them to 128 s
	1.7e9 + ((i * 7919) % 5003) * 0.01 + CASE WHEN i % 1499 = 0 THEN 40 ELSE 0 END
FROM generate_series(1, 6000) i;
CREATE TABLE pts_local AS SELECT * FROM pts;
ALTER TABLE pts_local ADD PRIMARY KEY (id);
CREATE TABLE knn_queries (id bigint PRIMARY KEY, f real[]);
INSERT INTO knn_queries SELECT i, ARRAY[(i * 3 % 97)::real, (i * 5 % 89)::real, (i % 13)::real, (i % 7)::real]
FROM generate_series(1, 40) i;
CREATE TABLE knn_q64 (id bigint PRIMARY KEY, t float8, x float8);
INSERT INTO knn_q64 SELECT i, 1.7e9 + i * 1.37, (i * 7 % 101)::float8 FROM generate_series(1, 30) i;
CREATE TABLE knn_q32 (id bigint PRIMARY KEY, a real, b real);
INSERT INTO knn_q32 SELECT i, 1.7e9 + i * 128, (i * 7 % 101) FROM generate_series(1, 30) i;
CREATE ROLE analyst LOGIN;
GRANT SELECT ON pts, pts_local, knn_queries TO analyst;
GRANT USAGE ON FOREIGN SERVER node1, node2 TO analyst;
CREATE USER MAPPING FOR analyst SERVER node1 OPTIONS (user 'analyst', password '$ODP_SHARD_PW');
CREATE USER MAPPING FOR analyst SERVER node2 OPTIONS (user 'analyst', password '$ODP_SHARD_PW');
CREATE ROLE nopass LOGIN;
GRANT SELECT ON pts TO nopass;
GRANT USAGE ON FOREIGN SERVER node1, node2 TO nopass;
CREATE USER MAPPING FOR nopass SERVER node1 OPTIONS (user 'analyst');
CREATE USER MAPPING FOR nopass SERVER node2 OPTIONS (user 'analyst');
CREATE ROLE trusted LOGIN;
GRANT SELECT ON pts TO trusted;
GRANT USAGE ON FOREIGN SERVER node1, node2 TO trusted;
CREATE USER MAPPING FOR trusted SERVER node1 OPTIONS (user 'postgres', password 'unused-but-given');
CREATE USER MAPPING FOR trusted SERVER node2 OPTIONS (user 'postgres', password 'unused-but-given');
SQL
	rc=$?
	odp_check "coordinator: pts hash-partitioned over node1, node2 and a local partition" $rc \
		"$(tail -3 "$ODP_RUN_DIR/distributed_setup.log" | tr '\n' ' ')"
	n=$(odp_node_psql 1 -At -c "SELECT count(*) FROM pts_node")
	[ "$n" -gt 1000 ]
	odp_check "rows went to node1 through postgres_fdw" $? "$n rows there"

	# --- exactness against one local table ---
	local cases=(
		"odp_top_outliers('%s', k => 10, n => 10)"
		"odp_top_outliers('%s', k => 5, n => 25, method => 'solvingset')"
		"odp_top_outliers('%s', k => 7, n => 8, method => 'bruteforce')"
		"odp_top_outliers('%s', k => 20, n => 6, metric => 'manhattan')"
		"odp_top_outliers('%s', k => 4, n => 9, id_column => 'id', features => '{x,y}', metric => 'chebyshev')"
		"odp_top_outliers('%s', k => 6, n => 5, metric => 'cosine', features => '{x,y}')"
		"odp_solving_set('%s', k => 10, n => 5, batch_size => 40)"
		"odp_solving_set('%s', k => 3, n => 12)"
		"odp_knn('%s', '{50,40,6,3}', k => 12)"
		"odp_knn('%s', '{1,2,3,4}', k => 9, metric => 'inner_product')"
		"odp_knn('%s', '{10,20,1,1}', k => 3000)"
		"odp_knn_join('knn_queries', '%s', k => 7)"
		"odp_knn_join('knn_queries', '%s', k => 5, metric => 'sqeuclidean')"
		"odp_skyline('%s', features => '{x,y}')"
		"odp_skyline('%s', '{min,max}', band => 3, features => '{x,y}')"
		"odp_skyline('%s', '{max,max,min,min}', band => 2, features => '{f}')"
		"odp_top_outliers('%s', k => 5, n => 12, features => '{t,x}')"
		"odp_top_outliers('%s', k => 8, n => 6, features => '{t,y}', method => 'bruteforce', metric => 'manhattan')"
		"odp_solving_set('%s', k => 6, n => 7, features => '{t,x}', batch_size => 50)"
		"odp_knn('%s', '{1700000025.37,50}', k => 15, features => '{t,x}')"
		"odp_knn_join('knn_q64', '%s', k => 6, features => '{t,x}')"
		"odp_knn_join('knn_q32', '%s', k => 4, features => '{t,x}', query_features => '{a,b}')"
	)
	for c in "${cases[@]}"; do
		# shellcheck disable=SC2059
		local dq lq
		dq="SELECT * FROM $(printf "$c" pts)"
		lq="SELECT * FROM $(printf "$c" pts_local)"
		odp_same "$dq" "$lq"
		rc=$?
		odp_check "sharded = local: $(printf "$c" pts)" $rc "$(psql -X -At -c "SELECT count(*) FROM ($dq) r" 2>&1 | head -c 200) rows"
	done
	out=$(psql -X -At -c "SET odp_gpu.report_timing = on" -c "SELECT count(*) FROM odp_top_outliers('pts', k => 10, n => 10)" 2>&1)
	grep -q "distributed nodes=3 remote=2" <<<"$out"
	odp_check "odp_top_outliers on pts ran on the nodes (timing NOTICE)" $? "$(grep -o 'distributed.*' <<<"$out" | head -c 300)"
	out=$(psql -X -At -c "SET odp_gpu.report_timing = on" -c "SET odp_gpu.distributed = off" \
		-c "SELECT count(*) FROM odp_top_outliers('pts', k => 10, n => 10)" 2>&1)
	! grep -q "distributed" <<<"$out" && grep -q "read=" <<<"$out"
	odp_check "odp_gpu.distributed = off reads the rows instead" $? "$(grep -o 'path=.*read=[^)]*)' <<<"$out" | head -c 200)"
	odp_same "SET odp_gpu.distributed = off; SELECT * FROM odp_top_outliers('pts', k => 10, n => 10)" \
		"SELECT * FROM odp_top_outliers('pts', k => 10, n => 10)"
	odp_check "pulled and distributed give the same top 10" $? ""
	odp_same "SELECT * FROM odp_outlier_scores('pts', k => 5)" "SELECT * FROM odp_outlier_scores('pts_local', k => 5)"
	odp_check "a function without a distributed form reads pts, as before" $? ""
	# float8 features are float64: the nodes compute in it too
	sql="SELECT count(*) FROM odp_top_outliers('pts', k => 4, n => 9, features => '{t,x}')"
	out=$(psql -X -At -c "SET odp_gpu.report_timing = on" -c "$sql" 2>&1)
	grep -q "distributed nodes=3 remote=2.*precision=float64" <<<"$out"
	odp_check "float8 features run on the nodes in float64" $? "$(grep -o 'distributed.*' <<<"$out" | head -c 300)"
	out=$(psql -X -At -c "SET odp_gpu.report_timing = on" -c "SET odp_gpu.distance_precision = float32" \
		-c "$sql" 2>&1)
	grep -q "distributed nodes=3 remote=2.*precision=float32" <<<"$out"
	odp_check "distance_precision = float32: float8 features run on the nodes in float32" $? "$(grep -o 'distributed.*' <<<"$out" | head -c 300)"
	! odp_same "SET odp_gpu.distance_precision = float32; SELECT * FROM odp_top_outliers('pts', k => 5, n => 12, features => '{t,x}')" \
		"SELECT * FROM odp_top_outliers('pts_local', k => 5, n => 12, features => '{t,x}')"
	odp_check "float32 on the nodes differs from float64 on these features (the float64 cases mean something)" $? ""
	for i in 1 2; do
		n=$(odp_node_wait_idle "$i" 2)
		[ "$n" = 0 ]
		odp_check "node $i: no connection left after the calls" $? "$n"
	done

	# --- faults ---
	sql="SELECT count(*) FROM odp_top_outliers('pts', k => 10, n => 10)"
	odp_node_stop 2
	t0=$(date +%s.%N)
	out=$(psql -X -At -c "$sql" 2>&1)
	t1=$(date +%s.%N)
	el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	grep -q 'could not connect to node "node2"' <<<"$out" && awk -v e="$el" 'BEGIN { exit !(e < 5) }'
	odp_check "node down: clear error naming it, within the connect timeout" $? "$(head -1 <<<"$out" | head -c 200); ${el}s"
	n=$(odp_node_wait_idle 1 2)
	[ "$n" = 0 ]
	odp_check "node down: nothing left on the other node" $? "$n"
	odp_node_start 2
	out=$(psql -X -At -c "$sql" 2>&1)
	[ "$out" = 10 ]
	odp_check "node back: the next call works" $? "$out"

	odp_node_psql 1 -c "ALTER TABLE pts_node RENAME TO pts_node_moved" >/dev/null
	out=$(psql -X -At -c "$sql" 2>&1)
	grep -q 'node "node1".*pts_node' <<<"$out"
	odp_check "shard dropped: error naming the node and the table" $? "$(head -1 <<<"$out" | head -c 200)"
	n=$(odp_node_wait_idle 2 2)
	[ "$n" = 0 ]
	odp_check "shard dropped: the other node's work is cancelled and its connection gone" $? "$n"
	odp_node_psql 1 -c "ALTER TABLE pts_node_moved RENAME TO pts_node" >/dev/null
	out=$(psql -X -At -c "$sql" 2>&1)
	[ "$out" = 10 ]
	odp_check "shard back: the next call works" $? "$out"

	if [ "${ODP_SHARD_LONG:-1}" = 1 ]; then
	# a call long enough to interrupt: brute force over every pair
	local long="SELECT count(*) FROM odp_top_outliers('pts', k => 50, n => 10, method => 'bruteforce')"
	psql -X -q -c "CREATE TABLE pts_big (LIKE pts) PARTITION BY HASH (id)" \
		-c "CREATE FOREIGN TABLE pts_big_p0 PARTITION OF pts_big FOR VALUES WITH (MODULUS 2, REMAINDER 0) SERVER node1 OPTIONS (table_name 'big_node')" \
		-c "CREATE FOREIGN TABLE pts_big_p1 PARTITION OF pts_big FOR VALUES WITH (MODULUS 2, REMAINDER 1) SERVER node2 OPTIONS (table_name 'big_node')" >/dev/null
	for i in 1 2; do
		odp_node_psql "$i" -c "CREATE TABLE big_node AS SELECT i::bigint AS id,
			array(SELECT random()::real FROM generate_series(1, 32) WHERE i > 0) AS f, 0::float8 AS x, 0::float8 AS y,
			0::float8 AS t
			FROM generate_series($i, 120000, 2) i" -c "LOAD 'odp_gpu'" -c "ALTER SYSTEM SET odp_gpu.cpu_threads = 1" \
			-c "SELECT pg_reload_conf()" >/dev/null
	done
	long="SELECT count(*) FROM odp_top_outliers('pts_big', k => 50, n => 10, method => 'bruteforce')"

	psql -X -At -c "$long" >"$ODP_RUN_DIR/distributed_kill.out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		n=$(odp_node_psql 1 -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'odp_gpu' AND state = 'active' LIMIT 1")
		[ -n "$n" ] && break
		sleep 0.1
	done
	sleep 0.5
	[ -n "$n" ] && kill -KILL "$n"
	wait $pid
	out=$(cat "$ODP_RUN_DIR/distributed_kill.out")
	grep -q 'node "node1"' <<<"$out" && grep -q ERROR <<<"$out"
	odp_check "node backend killed mid-call: error naming the node, no partial result" $? "$(head -1 <<<"$out" | head -c 200)"
	n=$(odp_node_wait_idle 2 2)
	[ "$n" = 0 ]
	odp_check "node killed: the other node's work stopped within 2 s" $? "$n"
	for _ in $(seq 60); do odp_node_psql 1 -At -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done
	psql -X -q -c "SELECT 1" >/dev/null 2>&1
	odp_check "the coordinator survived the node's crash" $? ""
	out=$(psql -X -At -c "$sql" 2>&1)
	[ "$out" = 10 ]
	odp_check "node recovered: the next call works" $? "$out"

	t0=$(date +%s.%N)
	out=$(psql -X -At -c "SET statement_timeout = '1s'" -c "$long" 2>&1)
	t1=$(date +%s.%N)
	el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	grep -q "statement timeout" <<<"$out" && awk -v e="$el" 'BEGIN { exit !(e < 3) }'
	odp_check "statement_timeout = 1s stops a distributed call" $? "$(head -1 <<<"$out" | head -c 120); ${el}s"
	for i in 1 2; do
		n=$(odp_node_wait_idle "$i" 1)
		[ "$n" = 0 ]
		odp_check "statement_timeout: node $i's work ended within a second" $? "$n"
	done
	psql -X -At -c "$long" >"$ODP_RUN_DIR/distributed_cancel.out" 2>&1 &
	pid=$!
	sleep 1.5
	psql -X -q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pts_big%' AND pid <> pg_backend_pid()" >/dev/null
	wait $pid
	grep -q "canceling statement due to user request" "$ODP_RUN_DIR/distributed_cancel.out"
	odp_check "cancel stops a distributed call" $? "$(head -1 "$ODP_RUN_DIR/distributed_cancel.out" | head -c 120)"
	for i in 1 2; do
		n=$(odp_node_wait_idle "$i" 1)
		[ "$n" = 0 ]
		odp_check "cancel: node $i's work ended within a second" $? "$n"
		odp_node_psql "$i" -c "LOAD 'odp_gpu'" -c "ALTER SYSTEM RESET odp_gpu.cpu_threads" -c "SELECT pg_reload_conf()" >/dev/null
	done
	fi

	# --- security ---
	odp_same "SELECT * FROM odp_top_outliers('pts', k => 10, n => 10)" \
		"SELECT * FROM odp_top_outliers('pts_local', k => 10, n => 10)" analyst
	odp_check "a non-superuser with a password in the mapping gets the results" $? ""
	out=$(psql -X -At -U nopass -c "$sql" 2>&1)
	grep -q "password is required" <<<"$out"
	odp_check "no password in the mapping: refused as postgres_fdw refuses" $? "$(head -1 <<<"$out" | head -c 200)"
	out=$(psql -X -At -U trusted -c "$sql" 2>&1)
	grep -q "password is required" <<<"$out" && grep -qi "does not request a password" <<<"$out"
	odp_check "a node that asks no password: refused for a non-superuser" $? "$(head -2 <<<"$out" | tr '\n' ' ' | head -c 200)"
	odp_node_psql 1 -q <<'SQL'
ALTER TABLE pts_node ENABLE ROW LEVEL SECURITY;
CREATE POLICY even ON pts_node FOR SELECT TO analyst USING (id % 2 = 0);
SQL
	odp_same "SET odp_gpu.distributed = off; SELECT * FROM odp_top_outliers('pts', k => 10, n => 10)" \
		"SELECT * FROM odp_top_outliers('pts', k => 10, n => 10)" analyst
	odp_check "row-level security on a node: the mapped role's rows, as postgres_fdw reads them" $? ""
	! odp_same "SELECT * FROM odp_solving_set('pts', k => 10, n => 5)" \
		"SELECT * FROM odp_solving_set('pts_local', k => 10, n => 5)" analyst
	odp_check "row-level security on a node: the hidden rows are not scored" $? ""
	odp_node_psql 2 -c "REVOKE SELECT ON pts_node FROM analyst" >/dev/null
	out=$(psql -X -At -U analyst -c "$sql" 2>&1)
	grep -q 'node "node2": permission denied for table pts_node' <<<"$out"
	odp_check "the mapped role's privileges on a node apply" $? "$(head -1 <<<"$out" | head -c 200)"
	odp_node_psql 2 -c "GRANT SELECT ON pts_node TO analyst" >/dev/null
	out=$(psql -X -At -U analyst -c "$sql" 2>&1)
	odp_check "privilege back: the call works" "$([ "$out" = 10 ]; echo $?)" "$out"
	out=$(psql -X -At -U analyst -c "SELECT * FROM odp_top_outliers('pts_p2', k => 3, n => 1)" 2>&1)
	grep -q "permission denied" <<<"$out"
	odp_check "the local partition itself stays closed to a role granted only the parent" $? "$(head -1 <<<"$out" | head -c 120)"

	out=$(cat "$ODP_RUN_DIR"/distributed_*.out 2>/dev/null; odp_server_log_tail 100000; cat "${ODP_NODE_DATA[1]}/server.log" "${ODP_NODE_DATA[2]}/server.log")
	! grep -q -- "$ODP_SHARD_PW" <<<"$out" && ! grep -q "unused-but-given" <<<"$out" && ! grep -qi "password=" <<<"$out"
	odp_check "no password or connection string in any error or server log" $? \
		"$(grep -c ERROR <<<"$out") errors looked at"
	odp_nodes_remove
	psql -X -q >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS pts, pts_local, pts_big, knn_queries, knn_q64, knn_q32 CASCADE;
DROP SERVER IF EXISTS node1, node2 CASCADE;
DROP OWNED BY analyst, nopass, trusted;
DROP ROLE IF EXISTS analyst, nopass, trusted;
SQL
}
