# test/checks/upgrade.sh: sourced by test/run_tests.sh (needs odp_check, the
# run's directory and a running server: test/lib.sh).
# odp_upgrade_checks: installs the first released version in one database,
# creates objects that depend on the extension (a view over
# odp_top_outliers, a table of odp_outlier), updates step by step to the
# newest version, checking those objects after every step; then every
# function must give the same results as in a fresh install, and the
# catalog (signatures, markings, row estimates, comments, views and their
# privileges) must be the same.  odp_released_scripts_check: the released
# install and upgrade scripts are the ones listed in
# test/checks/released_scripts.sha256, unchanged, and every script is
# listed but the one of the version under way (the control file's, while
# CHANGELOG.md has no section for it).

odp_upgrade_data() {	# the tables every function reads, the same in both databases
	cat <<'SQL'
SET client_min_messages = warning;
CREATE TABLE pts (id bigint PRIMARY KEY, f real[]);
INSERT INTO pts SELECT i, array[(i * 37 % 101)::real / 7, (i * 53 % 89)::real / 5, (i % 13)::real] FROM generate_series(1, 300) i;
CREATE TABLE series (id bigint PRIMARY KEY, v float8[]);
INSERT INTO series SELECT s, array(SELECT sin(s * t / 17.0) + (s * t % 7) / 10.0 FROM generate_series(1, 40) t) FROM generate_series(1, 30) s;
CREATE TABLE regs (id bigint PRIMARY KEY, r int8range);
INSERT INTO regs SELECT i, int8range(i * 7 % 500, i * 7 % 500 + i % 9, '[]') FROM generate_series(1, 200) i;
CREATE TABLE regs2 (id bigint PRIMARY KEY, r int8range);
INSERT INTO regs2 SELECT i, int8range(i * 11 % 500, i * 11 % 500 + i % 5) FROM generate_series(1, 150) i;
SQL
}

odp_upgrade_battery() {	# every function, as psql -At prints it
	cat <<'SQL'
SET extra_float_digits = 3;
SELECT 'outlier_scores', * FROM odp_outlier_scores('pts', k => 3) ORDER BY id;
SELECT 'top_outliers', * FROM odp_top_outliers('pts', k => 3, n => 5);
SELECT 'top_outliers ss', * FROM odp_top_outliers('pts', k => 3, n => 5, method => 'solvingset');
SELECT 'solving_set', * FROM odp_solving_set('pts', k => 3, n => 5);
SELECT 'solving_set batch', * FROM odp_solving_set('pts', k => 3, n => 5, batch_size => 10);
SELECT 'predict', * FROM odp_outlier_predict('SELECT * FROM pts WHERE id % 3 = 0', 'pts', k => 3, threshold => 10) WHERE id <= 30;
SELECT 'knn', * FROM odp_knn('pts', '{1,2,3}', k => 4, metric => 'manhattan');
SELECT 'knn_join', * FROM odp_knn_join('pts', 'pts', k => 2) WHERE query_id <= 20;
SELECT 'top_agg', (unnest(odp_top_outliers_agg(id, f, 3, 2))).* FROM pts;
SELECT 'pearson', * FROM odp_pearson('series', min_abs_r => 0.5);
SELECT 'pearson_top', * FROM odp_pearson_top('series', 'series', k => 2, sign => 'negative');
SELECT 'skyline', * FROM odp_skyline('pts', '{min,max,min}', band => 2);
SELECT 'skyline_agg', odp_skyline_agg(id, f, '{max,max,min}') FROM pts;
SELECT 'match', * FROM odp_interval_match('regs', 'regs2');
SELECT 'match one set', * FROM odp_interval_match('regs');
SELECT 'match count', odp_interval_match_count('regs', 'regs2'), odp_interval_match_count('regs');
SELECT 'gpu_info', device, usable, mode FROM odp_gpu_info();
SELECT 'activity', count(*) FROM odp_gpu_activity;
SQL
}

odp_upgrade_catalog() {	# what the extension installed, as psql -At prints it
	cat <<'SQL'
SELECT 'function', p.oid::regprocedure::text, pg_get_function_result(p.oid), p.provolatile,
	p.proisstrict, p.proparallel, p.prosecdef, p.prorows, p.prosupport::text,
	obj_description(p.oid, 'pg_proc')
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'odp_gpu' ORDER BY 2;
SELECT 'aggregate', a.aggfnoid::regprocedure::text, a.aggtransfn::text, a.aggfinalfn::text,
	a.aggfinalmodify, obj_description(a.aggfnoid, 'pg_proc')
FROM pg_aggregate a JOIN pg_depend d ON d.objid = a.aggfnoid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'odp_gpu' ORDER BY 2;
SELECT 'type', t.typname, format_type(a.atttypid, a.atttypmod), a.attname, obj_description(t.oid, 'pg_type')
FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0
JOIN pg_depend d ON d.objid = t.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'odp_gpu' ORDER BY 2, a.attnum;
SELECT 'view', c.relname, pg_get_viewdef(c.oid), c.relacl::text, obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN pg_depend d ON d.objid = c.oid AND d.classid = 'pg_class'::regclass AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'odp_gpu' WHERE c.relkind = 'v' ORDER BY 2;
SQL
}

odp_upgrade_checks() {
	local first last versions old=odp_upgrade_old new=odp_upgrade_new out rc dir=$ODP_RUN_DIR
	versions=$(ls "$ODP_ROOT"/sql/odp_gpu--*--*.sql | sed 's/.*--\([0-9.]*\)\.sql$/\1/' | sort -V)
	first=$(ls "$ODP_ROOT"/sql/odp_gpu--*.sql | grep -v -- '--.*--' | sed 's/.*--\([0-9.]*\)\.sql$/\1/' | sort -V | head -1)
	last=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ODP_ROOT/odp_gpu.control")
	for db in $old $new; do
		psql -X -q -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null 2>&1
	done

	# the first release, objects that depend on it, then one step at a time
	out=$( { odp_upgrade_data; cat <<SQL
CREATE EXTENSION odp_gpu VERSION '$first';
CREATE VIEW outlier_view AS SELECT * FROM odp_top_outliers('pts', k => 3, n => 5);
CREATE TABLE flagged (night int, flag odp_outlier);
INSERT INTO flagged SELECT 1, (rank, id, score)::odp_outlier FROM odp_top_outliers('pts', k => 3, n => 5);
SQL
	} | psql -X -q -d $old -v ON_ERROR_STOP=1 2>&1)
	[ -z "$out" ]
	odp_check "upgrade: version $first installs, with a view and a table that depend on it" $? "$(head -c 300 <<<"$out")"
	for v in $versions; do
		out=$(psql -X -At -d $old -v ON_ERROR_STOP=1 2>&1 <<SQL
ALTER EXTENSION odp_gpu UPDATE TO '$v';
SELECT 'version=' || extversion FROM pg_extension WHERE extname = 'odp_gpu';
SELECT 'view=' || (SELECT count(*) FROM outlier_view) || ' '
	|| ((SELECT array_agg(id ORDER BY rank) FROM outlier_view)
		= (SELECT array_agg(id ORDER BY rank) FROM odp_top_outliers('pts', k => 3, n => 5)));
SELECT 'table=' || count(*) || ' ' || bool_and((flag).score > 0) FROM flagged;
SQL
)
		grep -q "^version=$v\$" <<<"$out" && grep -q '^view=5 true$' <<<"$out" && grep -q '^table=5 true$' <<<"$out"
		odp_check "upgrade: to $v, the dependent view and table keep working" $? "$(tr '\n' ' ' <<<"$out" | head -c 300)"
	done

	# a fresh install of the newest version: the same results and catalog
	odp_upgrade_data | psql -X -q -d $new -v ON_ERROR_STOP=1 >/dev/null 2>&1
	psql -X -q -d $new -c "CREATE EXTENSION odp_gpu" >/dev/null
	for db in $old $new; do
		odp_upgrade_battery | psql -X -At -d $db -v ON_ERROR_STOP=1 >"$dir/upgrade_results.$db" 2>&1
		odp_upgrade_catalog | psql -X -At -d $db -v ON_ERROR_STOP=1 >"$dir/upgrade_catalog.$db" 2>&1
	done
	diff "$dir/upgrade_results.$old" "$dir/upgrade_results.$new" >"$dir/upgrade_results.diff"
	rc=$?
	! grep -q ERROR "$dir/upgrade_results.$new"
	odp_check "upgrade: every function gives, after $first -> $last, what a fresh $last install gives" $((rc | $?)) \
		"$(wc -l <"$dir/upgrade_results.$new") result lines compared; $(head -5 "$dir/upgrade_results.diff" | tr '\n' ' ')"
	diff "$dir/upgrade_catalog.$old" "$dir/upgrade_catalog.$new" >"$dir/upgrade_catalog.diff"
	odp_check "upgrade: functions, aggregates, types and views as after a fresh install (markings, row estimates, comments, privileges)" $? \
		"$(wc -l <"$dir/upgrade_catalog.$new") catalog lines compared; $(head -5 "$dir/upgrade_catalog.diff" | tr '\n' ' ')"
	for db in $old $new; do
		psql -X -q -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
	done
}

odp_released_scripts_check() {
	local list="$ODP_ROOT/test/checks/released_scripts.sha256" missing next
	(cd "$ODP_ROOT" && sha256sum --quiet -c "$list") >"$ODP_RUN_DIR/released_scripts.out" 2>&1
	odp_check "released install and upgrade scripts are unchanged" $? "$(head -c 300 "$ODP_RUN_DIR/released_scripts.out")"
	# the control file's version while CHANGELOG.md has no section of its
	# own for it (its changes are under "Unreleased"): its script may still
	# change, and is listed when the version is released
	next=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ODP_ROOT/odp_gpu.control")
	grep -q "^## $next " "$ODP_ROOT/CHANGELOG.md" && next=
	missing=$(cd "$ODP_ROOT" && for f in sql/odp_gpu--*.sql; do
		[ -n "$next" ] && [[ $f == *"--$next.sql" ]] && continue
		grep -q "  $f\$" "$list" || echo "$f"
	done)
	[ -z "$missing" ]
	odp_check "every install and upgrade script is listed as released${next:+, but the unreleased $next version}" $? "not listed: $missing"
}
