# test/checks/cancel.sh: sourced by test/run_tests.sh and test/gpu_suite.sh
# (needs odp_check, the run's directory and a running server: test/lib.sh).
# odp_cancel_checks DEVICE TABLE K [LONG NEXT EXPECT]: a long run (by
# default odp_outlier_scores on TABLE with K; else the statement LONG, which
# must take well over 3 s on DEVICE) must stop within a second of
# statement_timeout and of pg_cancel_backend, and the next call in the same
# session (NEXT, printing EXPECT; by default 100 scores of TABLE) must
# work; on the GPU, device memory must be back.
# odp_cancel_series_checks DEVICE ROWS LEN does the same for a correlation.
# Prints one "ok"/"FAILED" line per check and adds to ODP_PASSED/ODP_FAILED.

odp_now() { date +%s.%N; }

odp_cancel_checks() {
	local dev=$1 table=$2 k=$3 out t0 t1 el pid free_before free_after
	local q=${4:-"SELECT count(*) FROM odp_outlier_scores('$table', k => $k)"}
	local next=${5:-"SELECT count(*) FROM odp_outlier_scores('(SELECT id, features FROM $table WHERE id <= 100)', k => 3)"}
	local expect=${6:-100}

	# statement_timeout, then a working call and the memory check in the same session
	out=$(psql -X -At -v ON_ERROR_STOP=0 2>&1 <<SQL
SET odp_gpu.device = $dev;
-- what a first call keeps for the session (cuBLAS, loaded at run time, and
-- the handle kept between calls: 70 MB on the H200 host) is there first
SELECT 'warm=' || ($next);
SELECT 'free_before=' || coalesce(max(free_memory), 0) FROM odp_gpu_info() WHERE selected;
SELECT 't0=' || extract(epoch FROM clock_timestamp());
SET statement_timeout = '1s';
$q;
RESET statement_timeout;
SELECT 't1=' || extract(epoch FROM clock_timestamp());
-- the GPU service frees a stopped request's memory within 1 s
DO \$\$ BEGIN FOR i IN 1..20 LOOP
	EXIT WHEN coalesce((SELECT sum(reserved) FROM odp_gpu_info()), 0) = 0;
	PERFORM pg_sleep(0.05);
END LOOP; END \$\$;
SELECT 'free_after=' || coalesce(max(free_memory), 0) FROM odp_gpu_info() WHERE selected;
SELECT 'next=' || ($next);
SQL
)
	t0=$(sed -n 's/^t0=//p' <<<"$out"); t1=$(sed -n 's/^t1=//p' <<<"$out")
	el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	grep -q "canceling statement due to statement timeout" <<<"$out" \
		&& awk -v e="$el" 'BEGIN { exit !(e < 2.0) }'
	odp_check "$dev $table: statement_timeout = 1s stops the run" $? "stopped after $el s"
	grep -q "^next=$expect\$" <<<"$out"

	odp_check "$dev $table: next call after a timeout works" $? "$(grep '^next=' <<<"$out" || echo "$out" | tail -3)"
	free_before=$(sed -n 's/^free_before=//p' <<<"$out"); free_after=$(sed -n 's/^free_after=//p' <<<"$out")
	if [ "$dev" = gpu ]; then
		# the same backend's context stays; only the run's buffers must be gone
		awk -v a="$free_before" -v b="$free_after" 'BEGIN { exit !(a - b < 64 * 1048576) }'
		odp_check "$dev $table: GPU memory is back after the timeout" $? \
			"free before $((free_before / 1048576)) MB, after $((free_after / 1048576)) MB"
	fi

	# DROP DATABASE elsewhere waits for every backend to absorb a barrier:
	# a long run must not block it; then pg_cancel_backend from another session
	psql -X -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS odp_barrier_check" \
		-c "CREATE DATABASE odp_barrier_check" >/dev/null
	psql -X -At -c "SET application_name = 'odp_cancel_me'" -c "SET odp_gpu.device = $dev" -c "$q" \
		>"$ODP_RUN_DIR/cancel.out" 2>&1 &
	pid=$!
	sleep 1
	t0=$(odp_now)
	psql -X -q -c "DROP DATABASE odp_barrier_check" >/dev/null
	t1=$(odp_now)
	el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	awk -v e="$el" 'BEGIN { exit !(e < 2.0) }'
	odp_check "$dev $table: DROP DATABASE elsewhere is not blocked by a run" $? "took $el s"
	t0=$(odp_now)
	psql -X -At -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'odp_cancel_me' AND state = 'active'" >/dev/null
	wait $pid || true
	t1=$(odp_now)
	el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	grep -q "canceling statement due to user request" "$ODP_RUN_DIR/cancel.out" \
		&& awk -v e="$el" 'BEGIN { exit !(e < 1.0) }'
	odp_check "$dev $table: pg_cancel_backend stops the run" $? "stopped $el s after the cancel; $(head -c 200 "$ODP_RUN_DIR/cancel.out" | tr '\n' ' ')"
}

# odp_cancel_series_checks DEVICE ROWS LEN: the checks above on a
# correlation of ROWS random series of LEN values at threshold 0, whose
# result (every pair) takes minutes to store on any path.
odp_cancel_series_checks() {
	local dev=$1 rows=$2 len=$3
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_cancel_series;
CREATE TABLE odp_cancel_series AS
	SELECT i AS id, array(SELECT random() FROM generate_series(1, $len) WHERE i > 0) AS v
	FROM generate_series(1, $rows) i;
SQL
	odp_cancel_checks "$dev" odp_cancel_series 0 "SELECT count(*) FROM odp_pearson('odp_cancel_series')" \
		"SELECT count(*) FROM odp_pearson('SELECT * FROM odp_cancel_series WHERE id <= 100')" 4950
	psql -X -q -c "DROP TABLE odp_cancel_series" >/dev/null
}
# odp_cancel_sky_checks DEVICE ROWS: the checks above on the k-skyband of
# ROWS points on the simplex (no point dominates another) with a band
# larger than ROWS, so that every row is compared with every row before it.
odp_cancel_sky_checks() {
	local dev=$1 rows=$2
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_cancel_sky;
CREATE TABLE odp_cancel_sky AS
	SELECT i AS id, a / s AS a, b / s AS b, c / s AS c, d / s AS d, e / s AS e, f / s AS f
	FROM (SELECT i, a, b, c, d, e, f, a + b + c + d + e + f AS s FROM (
		SELECT i, random() AS a, random() AS b, random() AS c, random() AS d, random() AS e,
			random() AS f FROM generate_series(1, $rows) i) x) y;
SQL
	odp_cancel_checks "$dev" odp_cancel_sky 0 "SELECT count(*) FROM odp_skyline('odp_cancel_sky', band => 2000000000)" \
		"SELECT count(*) FROM odp_skyline('SELECT * FROM odp_cancel_sky WHERE id <= 100', band => 1000)" 100
	psql -X -q -c "DROP TABLE odp_cancel_sky" >/dev/null
}
# odp_cancel_interval_checks DEVICE ROWS: the checks above on the pairs of
# ROWS identical ranges (every pair overlaps: ROWS^2 / 2 pairs, which take
# minutes to find and store on any path), and on the count of two sets
# whose regions overlap in each dimension half the time but in both only
# for equal ids (half of the ROWS^2 pairs are candidates, ROWS pairs).
odp_cancel_interval_checks() {
	local dev=$1 rows=$2
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS odp_cancel_iv;
CREATE TABLE odp_cancel_iv AS
	SELECT i AS id, int8range(1, 10) AS r, int8range(i, i, '[]') AS p, int8range(0, i, '[]') AS q,
		int8range(i, $rows, '[]') AS v
	FROM generate_series(1, $rows) i;
SQL
	odp_cancel_checks "$dev" odp_cancel_iv 0 "SELECT count(*) FROM odp_interval_match('odp_cancel_iv', dims => '{r}')" \
		"SELECT count(*) FROM odp_interval_match('SELECT * FROM odp_cancel_iv WHERE id <= 100', dims => '{r}')" 4950
	odp_cancel_checks "$dev" odp_cancel_iv 0 \
		"SELECT odp_interval_match_count('SELECT id, p, p AS u FROM odp_cancel_iv', 'SELECT id, q, v FROM odp_cancel_iv')" \
		"SELECT odp_interval_match_count('SELECT id, p, p AS u FROM odp_cancel_iv WHERE id <= 100', 'SELECT id, q, v FROM odp_cancel_iv WHERE id <= 100')" 100
	psql -X -q -c "DROP TABLE odp_cancel_iv" >/dev/null
}
