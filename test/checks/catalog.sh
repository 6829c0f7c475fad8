# test/checks/catalog.sh: sourced by test/run_tests.sh (needs odp_check, the
# run's directory and a running server: test/lib.sh).
# odp_catalog_checks: a database holding odp_gpu, tables in a schema of
# their own and, for every analytic (top outliers, k-NN join, Pearson,
# skyline, region matching) in both forms (the text form with
# schema-qualified names, the regclass form), a view, a materialized view,
# an SQL function and a PL/pgSQL function over its call, is dumped with
# pg_dump -Fc and restored with pg_restore, and dumped plain and restored
# with psql, each into a fresh database, with no error; every restored
# object returns the rows the original does, and the regclass view still
# depends on its table there.  A materialized view over an unqualified
# name fails to restore (pg_restore runs with an empty search_path) with
# the hint that names the fix.  With pg_cron (and a server these checks
# may restart), a pg_cron job per analytic and form comes along: the
# server restarts with cron.database_name set to each database in turn
# (pg_cron lives in one database), and every restored job's command
# returns the original's rows.  About 20 s.

ODP_CAT_ANALYTICS=(outliers knn pearson skyline intervals)

# The call of analytic $1 with its tables in form $2 (text or regclass).
odp_cat_call() {
	local t=$1 r="'" e="'"
	[ "$2" = regclass ] && e="'::regclass"
	case $t in
		outliers) echo "SELECT * FROM odp_top_outliers(${r}app.pts${e}, k => 3, n => 5)" ;;
		knn) echo "SELECT * FROM odp_knn_join(${r}app.q${e}, ${r}app.pts${e}, k => 2)" ;;
		pearson) echo "SELECT * FROM odp_pearson(${r}app.series${e}, min_abs_r => 0.5)" ;;
		skyline) echo "SELECT * FROM odp_skyline(${r}app.pts${e}, '{min,max,min}')" ;;
		intervals) echo "SELECT * FROM odp_interval_match(${r}app.regs${e}, ${r}app.regs2${e})" ;;
	esac
}

# The objects' rows, one line each: "name md5", as database $1 gives them
# (with pg_cron, its jobs' commands' too).
odp_cat_rows() {
	local t f sql="" name cmd
	for t in "${ODP_CAT_ANALYTICS[@]}"; do
		for f in text regclass; do
			sql+="SELECT 'v_${t}_$f ' || md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM app.v_${t}_$f x;"
			sql+="SELECT 'mv_${t}_$f ' || md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM app.mv_${t}_$f x;"
			sql+="SELECT 'sql_${t}_$f ' || md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM app.sql_${t}_$f() x;"
			sql+="SELECT 'plpgsql_${t}_$f ' || md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM app.plpgsql_${t}_$f() x;"
		done
	done
	psql -X -At -d "$1" -c "SET odp_gpu.device = cpu" -c "$sql" 2>&1 | grep -v '^SET$'
	[ "$ODP_CAT_CRON" = 1 ] || return 0
	psql -X -At -F $'\t' -d "$1" -c "SELECT jobname, command FROM cron.job ORDER BY jobname" 2>&1 |
		while IFS=$'\t' read -r name cmd; do
			echo "$name $(psql -X -At -d "$1" -c "SET odp_gpu.device = cpu" \
				-c "SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM ($cmd) x" 2>&1 | grep -v '^SET$')"
		done
}

# With pg_cron: restarts the server with pg_cron's database $1.
odp_cat_cron_db() {
	[ "$ODP_CAT_CRON" = 1 ] || return 0
	odp_restart_server "-c shared_preload_libraries=pg_cron -c cron.database_name=$1 -c cron.use_background_workers=on"
}

# Database $1's objects return the original's rows (ODP_CAT_SRC_ROWS):
# the check labelled $2.
odp_cat_same_rows() {
	local out
	out=$(odp_cat_rows "$1")
	[ "$out" = "$ODP_CAT_SRC_ROWS" ]
	odp_check "$2" $? "$(diff <(echo "$ODP_CAT_SRC_ROWS") <(echo "$out") | head -4 | tr '\n' ' ')"
}

odp_cat_drop_databases() {
	local db
	for db in odp_dump_src odp_dump_dst odp_dump_plain odp_dump_bad odp_dump_bad_dst; do
		dropdb --if-exists "$db" >/dev/null 2>&1
	done
}

odp_catalog_checks() {
	local dir=$ODP_RUN_DIR out rc t f n
	ODP_CAT_CRON=0
	[ "${ODP_USE_RUNNING_SERVER:-0}" != 1 ] && [ -f "$("$PG_CONFIG" --sharedir)/extension/pg_cron.control" ] &&
		ODP_CAT_CRON=1
	odp_cat_drop_databases
	createdb odp_dump_src
	odp_cat_cron_db odp_dump_src
	{
		cat <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION odp_gpu;
CREATE SCHEMA app;
CREATE TABLE app.pts (id bigint PRIMARY KEY, f real[]);
INSERT INTO app.pts SELECT i, array[(i * 37 % 101)::real / 7, (i * 53 % 89)::real / 5, (i % 13)::real] FROM generate_series(1, 300) i;
CREATE TABLE app.q AS SELECT * FROM app.pts WHERE id % 10 = 0;
CREATE TABLE app.series (id bigint PRIMARY KEY, v float8[]);
INSERT INTO app.series SELECT s, array(SELECT sin(s * t / 17.0) + (s * t % 7) / 10.0 FROM generate_series(1, 40) t) FROM generate_series(1, 30) s;
CREATE TABLE app.regs (id bigint PRIMARY KEY, r int8range);
INSERT INTO app.regs SELECT i, int8range(i * 7 % 500, i * 7 % 500 + i % 9, '[]') FROM generate_series(1, 200) i;
CREATE TABLE app.regs2 (id bigint PRIMARY KEY, r int8range);
INSERT INTO app.regs2 SELECT i, int8range(i * 11 % 500, i * 11 % 500 + i % 5) FROM generate_series(1, 150) i;
SET odp_gpu.device = cpu;
SQL
		[ "$ODP_CAT_CRON" = 1 ] && echo "CREATE EXTENSION pg_cron;"
		for t in "${ODP_CAT_ANALYTICS[@]}"; do
			for f in text regclass; do
				echo "CREATE VIEW app.v_${t}_$f AS $(odp_cat_call "$t" "$f");"
				echo "CREATE MATERIALIZED VIEW app.mv_${t}_$f AS $(odp_cat_call "$t" "$f");"
				echo "CREATE FUNCTION app.sql_${t}_$f() RETURNS SETOF app.v_${t}_$f LANGUAGE sql STABLE AS \$\$ $(odp_cat_call "$t" "$f") \$\$;"
				echo "CREATE FUNCTION app.plpgsql_${t}_$f() RETURNS SETOF app.v_${t}_$f LANGUAGE plpgsql STABLE AS \$\$ BEGIN RETURN QUERY $(odp_cat_call "$t" "$f"); END \$\$;"
				# a yearly job (1 January, 03:00): it never runs during the checks
				[ "$ODP_CAT_CRON" = 1 ] &&
					echo "SELECT cron.schedule('job_${t}_$f', '0 3 1 1 *', \$\$$(odp_cat_call "$t" "$f")\$\$);"
			done
		done
	} | psql -X -q -v ON_ERROR_STOP=1 -d odp_dump_src >"$dir/catalog_src.log" 2>&1
	odp_check "dump and restore: a database with a view, a materialized view, an SQL and a PL/pgSQL function per analytic and form" $? \
		"$(tail -3 "$dir/catalog_src.log" | tr '\n' ' ')"
	ODP_CAT_SRC_ROWS=$(odp_cat_rows odp_dump_src)
	n=$(grep -c ' [0-9a-f]\{32\}$' <<<"$ODP_CAT_SRC_ROWS")
	[ "$n" -eq $((${#ODP_CAT_ANALYTICS[@]} * (8 + 2 * ODP_CAT_CRON))) ]
	odp_check "dump and restore: the $n objects$([ "$ODP_CAT_CRON" = 1 ] && echo ", pg_cron jobs included,") return rows in the original" $? "$(grep -v ' [0-9a-f]\{32\}$' <<<"$ODP_CAT_SRC_ROWS" | head -2)"

	# pg_dump -Fc, pg_restore into a fresh database
	pg_dump -Fc -d odp_dump_src -f "$dir/catalog.dump" 2>"$dir/catalog_dump.log" &&
		createdb odp_dump_dst && odp_cat_cron_db odp_dump_dst &&
		pg_restore --exit-on-error -d odp_dump_dst "$dir/catalog.dump" >"$dir/catalog_restore.log" 2>&1
	odp_check "pg_dump -Fc and pg_restore into a fresh database: no error" $? \
		"$(cat "$dir/catalog_dump.log" "$dir/catalog_restore.log" | head -5 | tr '\n' ' ')"
	odp_cat_same_rows odp_dump_dst \
		"after pg_restore every view, materialized view, function and pg_cron job returns the original's rows"
	out=$(psql -X -At -d odp_dump_dst -c "DROP TABLE app.pts" 2>&1)
	grep -q 'cannot drop table app.pts because other objects depend on it' <<<"$out"
	odp_check "after pg_restore the regclass objects still depend on their tables (DROP TABLE refuses)" $? "$(head -2 <<<"$out" | tr '\n' ' ')"

	# a plain dump restored with psql
	pg_dump -d odp_dump_src -f "$dir/catalog.sql" 2>"$dir/catalog_dump.log" &&
		createdb odp_dump_plain && odp_cat_cron_db odp_dump_plain &&
		psql -X -q -v ON_ERROR_STOP=1 -d odp_dump_plain -f "$dir/catalog.sql" >"$dir/catalog_plain.log" 2>&1
	odp_check "plain pg_dump restored with psql into a fresh database: no error" $? \
		"$(cat "$dir/catalog_dump.log" "$dir/catalog_plain.log" | grep -m3 -e ERROR -e error | tr '\n' ' ')"
	odp_cat_same_rows odp_dump_plain \
		"after the plain restore every object (pg_cron jobs included) returns the original's rows"

	# an unqualified name in the text form: the restore fails, saying how to fix it
	createdb odp_dump_bad
	psql -X -q -v ON_ERROR_STOP=1 -d odp_dump_bad >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION odp_gpu;
SET odp_gpu.device = cpu;
CREATE TABLE pts (id bigint PRIMARY KEY, f real[]);
INSERT INTO pts SELECT i, array[i % 7, i % 11]::real[] FROM generate_series(1, 100) i;
CREATE MATERIALIZED VIEW flags AS SELECT * FROM odp_top_outliers('pts', k => 3, n => 3);
SQL
	pg_dump -Fc -d odp_dump_bad -f "$dir/catalog_bad.dump" 2>/dev/null && createdb odp_dump_bad_dst &&
		pg_restore -d odp_dump_bad_dst "$dir/catalog_bad.dump" >"$dir/catalog_bad.log" 2>&1
	rc=$?
	[ $rc -ne 0 ] && grep -q 'relation "pts" does not exist' "$dir/catalog_bad.log" &&
		grep -q "HINT:  Schema-qualify it, as in 'schema.pts', or pass the relation as regclass" "$dir/catalog_bad.log"
	odp_check "a materialized view over an unqualified name fails to restore with the hint that names the fix" $? \
		"pg_restore exit $rc: $(grep -m2 -e ERROR -e HINT "$dir/catalog_bad.log" | tr '\n' ' ' | cut -c 1-300)"

	[ "$ODP_CAT_CRON" = 1 ] && odp_restart_server ""
	odp_cat_drop_databases
}
