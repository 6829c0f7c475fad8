# shellcheck shell=bash
# test/bench/bench_lib.sh: shared by the SQL benchmarks that time an
# odp_gpu call beside PostgreSQL's own scan of the same table
# (read_bench.sh, datapath_bench.sh): the tables' generation, the timing
# NOTICE's keys, PostgreSQL's scan with W workers.
#
# The sourcing script sets SCALE (rows are multiplied by it) and REPS (the
# timed repetitions after a first, warming one), and may set PSQL (an
# array: psql and its options).

if [ -z "${PSQL+x}" ]; then
	PSQL=(psql -X -q -v ON_ERROR_STOP=1 -At)
fi

# N rows at SCALE, at least 100.
bench_rows() { awk -v n="$1" -v s="$SCALE" 'BEGIN { r = int(n * s); print (r < 100 ? 100 : r) }'; }

# The value of KEY in an odp_gpu timing NOTICE ("read=12.3 ms" gives
# 12.3), empty when the NOTICE has no such key.  The blank before KEY keeps
# "read" from matching "query_read" or "other_read".
bench_key() { sed -n "s/.* $1=\([0-9.-]*\).*/\1/p" <<<"$2"; }

# The settings that make a scan take exactly W workers where the table's
# parallel_workers is W: no parallel costs, no size threshold.
bench_parallel_settings() {
	echo "SET max_parallel_workers_per_gather = $1; SET parallel_setup_cost = 0;" \
		"SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
}

# PostgreSQL's own scan: the best of REPS runs of SQL after a first, in one
# session, with W workers (the caller sets the table's parallel_workers).
bench_scan_ms() {
	local W=$1 sql=$2 i
	{
		bench_parallel_settings "$W"
		printf '%s\n' '\timing on'
		for ((i = 0; i <= REPS; i++)); do echo "$sql;"; done
	} | "${PSQL[@]}" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n +2 | sort -n | head -1
}

# PostgreSQL's own set-returning function of ROWS rows whose columns are
# the expressions EXPRS of i (e.g. "i::bigint, i::float8"): the best of
# REPS runs after a first, ms, at work_mem WORK_MEM (empty: the server's).
# A SQL function returning them as a table, STRICT so that the planner
# does not inline it (inlined, it would drop the columns the count does
# not read): it fills a tuplestore with every column, and the executor
# reads them back, as from the calls.
bench_srf_ms() {
	local i cols
	cols=$(tr ',' '\n' <<<"$2" | sed 's/.*:://; s/[ )]*$//' | awk '{ printf "%sc%d %s", (NR > 1 ? ", " : ""), NR, $1 }')
	{
		[ -n "${3:-}" ] && echo "SET work_mem = '$3';"
		echo "CREATE FUNCTION pg_temp.bench_srf(n bigint) RETURNS TABLE ($cols) LANGUAGE sql STRICT"
		echo "  AS 'SELECT $2 FROM generate_series(1, n) i';"
		printf '%s\n' '\timing on'
		for ((i = 0; i <= REPS; i++)); do
			echo "SELECT count(*) FROM pg_temp.bench_srf($1);"
		done
	} | "${PSQL[@]}" 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n +2 | sort -n | head -1
}

# Of the timing NOTICEs in OUT, the warm call's with the smallest total
# (the first call warms up).
bench_best_notice() {
	grep 'odp_gpu timing' <<<"$1" | tail -n +2 |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^total=/) { split($i, a, "="); print a[2] "\t" $0 } }' |
		sort -n | head -1 | cut -f2-
}

# bench_gen TABLE COLUMNS ROWS BODY [SEED]: creates TABLE (COLUMNS) and
# fills it with BODY, an INSERT's SELECT over generate_series(@LO@, @HI@)
# i, in one chunk per CPU at once (setseed per chunk and SEED: the same
# rows every run; tables of one BODY need different SEEDs, or their
# chunks repeat each other's rows); then VACUUM ANALYZE.  A table of that
# name that already has ROWS rows is kept as it is (KEEP_TABLES=1 runs
# reuse it; one an interrupted run left part-filled is made again).
bench_gen() {
	local t=$1 cols=$2 n=$3 body=$4 seed=${5:-0} chunks c lo hi b pids=() p err=0 dir
	if [ "$("${PSQL[@]}" -c "SELECT to_regclass('$t') IS NOT NULL")" = t ] &&
		[ "$("${PSQL[@]}" -c "SELECT count(*) FROM $t")" = "$n" ]; then
		return 0
	fi
	"${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $t" \
		-c "CREATE TABLE $t ($cols)" || return 1
	chunks=$(nproc)
	[ "$chunks" -gt "$n" ] && chunks=$n
	dir=$(mktemp -d /tmp/odp_bench_gen.XXXXXX)
	for ((c = 0; c < chunks; c++)); do
		lo=$((n * c / chunks + 1)); hi=$((n * (c + 1) / chunks))
		b=${body//@LO@/$lo}
		"${PSQL[@]}" -c "SELECT setseed($(((seed * 128 + c + 1) % 1000)) / 1000.0)" -c "INSERT INTO $t ${b//@HI@/$hi}" \
			>/dev/null 2>"$dir/$c.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || err=1; done
	if [ "$err" = 1 ]; then
		echo "generating $t failed: $(cat "$dir"/*.err | head -3)" >&2
		rm -rf "$dir"
		return 1
	fi
	rm -rf "$dir"
	"${PSQL[@]}" -c "VACUUM ANALYZE $t"
}
