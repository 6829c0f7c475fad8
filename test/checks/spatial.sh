# test/checks/spatial.sh: sourced by test/run_tests.sh and test/gpu_suite.sh
# (needs odp_check, odp_cancel_checks of test/checks/cancel.sh, the run's
# directory and a running server: test/lib.sh).  The spatial path
# (odp_gpu.spatial) under many sessions at once and under cancels.
#
# odp_spatial_data: the table odp_sp_many, 20,000 rows of two float8
# coordinates on a lattice of 97 x 101 points (about two rows on each:
# ties everywhere), a fifth of them moved 1,000 away (two far clusters);
# ODP_SP_REF_TOP and ODP_SP_REF_KNN: the md5 of the top-50 outliers (k = 10)
# and of the k-NN self join (k = 8), computed on the CPU with the spatial
# path off.
#
# odp_spatial_sessions_check DEVICE LABEL [SESSIONS]: SESSIONS (24)
# concurrent sessions each run both calls with odp_gpu.spatial = on on
# DEVICE (on a preloaded server, device gpu goes through the service) and
# must get the references, and their timing NOTICE must name the spatial
# path.
#
# odp_spatial_cancel_checks DEVICE ROWS: odp_cancel_checks on the scores of
# ROWS uniform 3-D rows with k = 128 on the spatial path (seconds on any
# path: about 11 s for 10^6 rows on two cores).

ODP_SP_TOP="SELECT 'top=' || md5(string_agg(rank || ':' || id || ':' || score, ',' ORDER BY rank)) FROM odp_top_outliers('odp_sp_many', k => 10, n => 50)"
ODP_SP_KNN="SELECT 'knn=' || md5(string_agg(query_id || ':' || rank || ':' || id || ':' || distance, ',' ORDER BY query_id, rank)) FROM odp_knn_join('odp_sp_many', 'odp_sp_many', k => 8)"

odp_spatial_data() {
	local out
	out=$(psql -X -q -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_sp_many;
CREATE TABLE odp_sp_many AS
	SELECT i::bigint AS id,
		   (i % 97)::float8 / 7 + CASE WHEN i % 5 = 0 THEN 1000 ELSE 0 END AS x,
		   ((i * 31) % 101)::float8 AS y
	FROM generate_series(1, 20000) i;
ANALYZE odp_sp_many;
SET odp_gpu.device = cpu;
SET odp_gpu.spatial = off;
$ODP_SP_TOP;
$ODP_SP_KNN;
SQL
)
	ODP_SP_REF_TOP=$(sed -n 's/^top=//p' <<<"$out")
	ODP_SP_REF_KNN=$(sed -n 's/^knn=//p' <<<"$out")
	[ -n "$ODP_SP_REF_TOP" ] && [ -n "$ODP_SP_REF_KNN" ]
	odp_check "spatial path: the references, on the CPU with the path off" $? "$(tr '\n' ' ' <<<"$out" | head -c 300)"
}

odp_spatial_sessions_check() {
	local dev=$1 label=$2 sessions=${3:-24} i pids=() ok=0 spatial=0 f
	for i in $(seq "$sessions"); do
		f=$ODP_RUN_DIR/spatial_$i
		{
			echo "SET odp_gpu.device = $dev; SET odp_gpu.gpu_min_rows = 0;"
			echo "SET odp_gpu.spatial = on; SET odp_gpu.report_timing = on;"
			# half the sessions ask in the other order, so both calls overlap
			if [ $((i % 2)) -eq 0 ]; then echo "$ODP_SP_TOP; $ODP_SP_KNN;"; else echo "$ODP_SP_KNN; $ODP_SP_TOP;"; fi
		} >"$f.sql"
		timeout 300 psql -X -At -f "$f.sql" >"$f.out" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || true; done
	for i in $(seq "$sessions"); do
		f=$ODP_RUN_DIR/spatial_$i.out
		grep -q "^top=$ODP_SP_REF_TOP\$" "$f" && grep -q "^knn=$ODP_SP_REF_KNN\$" "$f" && ok=$((ok + 1))
		[ "$(grep -c 'method=spatial' "$f")" -eq 2 ] && spatial=$((spatial + 1))
	done
	[ "$ok" -eq "$sessions" ] && [ "$spatial" -eq "$sessions" ]
	odp_check "spatial path, $label: $sessions concurrent sessions get the rows of the path off" $? \
		"$ok/$sessions same rows, $spatial/$sessions on the spatial path$(
		[ "$ok" -eq "$sessions" ] || grep -h -m1 -E '(ERROR|FATAL)' "$ODP_RUN_DIR"/spatial_*.out | sort | uniq -c | head -3 | tr '\n' ' ')"
}

odp_spatial_cancel_checks() {
	local dev=$1 rows=$2
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_cancel_sp;
CREATE TABLE odp_cancel_sp AS
	SELECT i::bigint AS id, random()::real AS x, random()::real AS y, random()::real AS z
	FROM generate_series(1, $rows) i;
ANALYZE odp_cancel_sp;
SQL
	PGOPTIONS="${PGOPTIONS:-} -c odp_gpu.spatial=on" odp_cancel_checks "$dev" odp_cancel_sp 0 \
		"SELECT count(*) FROM odp_outlier_scores('odp_cancel_sp', k => 128)" \
		"SELECT count(*) FROM odp_outlier_scores('(SELECT * FROM odp_cancel_sp WHERE id <= 1000)', k => 128)" 1000
	psql -X -q -c "DROP TABLE odp_cancel_sp" >/dev/null
}
