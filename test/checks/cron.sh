# test/checks/cron.sh: sourced by test/run_tests.sh (needs odp_check and the
# throwaway server of test/lib.sh).
# A nightly job under pg_cron, with pg_cron and odp_gpu both preloaded and
# the job's calls in the GPU service (on its CPU engine).
# odp_cron_schedule schedules the README's nightly job (the top outliers
# of a table into a results table with the run's date and time) to run
# every minute, the finest schedule of Debian 12's pg_cron 1.4, beside a
# second job of the same recipe whose source table is dropped after a
# first run by hand.  Both run at the next minute boundary, which
# test/run_tests.sh spends running the regress suites through the service;
# then odp_cron_results checks that
#   - the first job's run succeeds, its call ran in the service, and the
#     results table holds exactly what odp_top_outliers returns;
#   - the job is idempotent: run twice more the same day, it adds nothing;
#   - the second job's run is recorded as failed in cron.job_run_details
#     with odp_gpu's error, and its results table is untouched (not a row
#     written, changed or removed).

ODP_CRON_DB=odp_cron

# The nightly job's statement, as the README's recipe gives it (source
# table $1, results table $2: points and outlier_runs by default).
odp_cron_job_sql() {
	cat <<SQL
INSERT INTO ${2:-outlier_runs} (run_date, ran_at, rank, id, score)
SELECT current_date, now(), rank, id, score
FROM odp_top_outliers('public.${1:-points}'::regclass, k => 5, n => 10)
ON CONFLICT (run_date, rank) DO NOTHING
SQL
}

# Waits (at most 150 s) for a run of job $1 with runid above $2 to end;
# prints "runid|status|return_message".
odp_cron_wait_run() {
	local job=$1 after=$2 out
	for _ in $(seq 75); do
		out=$(psql -X -At -d $ODP_CRON_DB -c "SELECT runid || '|' || status || '|' || coalesce(return_message, '')
			FROM cron.job_run_details WHERE jobid = $job AND runid > $after
			AND status IN ('succeeded', 'failed') ORDER BY runid LIMIT 1" 2>&1)
		[ -n "$out" ] && { echo "$out"; return 0; }
		sleep 2
	done
	echo "0|no run ended within 150 s|$(psql -X -At -d $ODP_CRON_DB -c "SELECT string_agg(status, ',') FROM cron.job_run_details" 2>&1)"
	return 1
}

# The server options of the checks, after the service's own: pg_cron and
# odp_gpu preloaded, pg_cron's jobs in their own database (made by
# odp_cron_database before the server restarts with them), where pg_cron
# is installed.
ODP_CRON_OPTS="-c shared_preload_libraries=pg_cron,odp_gpu -c cron.database_name=$ODP_CRON_DB -c cron.use_background_workers=on"

odp_cron_installed() { [ -f "$("$PG_CONFIG" --sharedir)/extension/pg_cron.control" ]; }

odp_cron_database() {
	psql -X -q -c "DROP DATABASE IF EXISTS $ODP_CRON_DB" -c "CREATE DATABASE $ODP_CRON_DB" >/dev/null 2>&1
}

# On a server started with ODP_CRON_OPTS and the service's options: makes
# the tables, sets the database to run every call on the GPU path (so in
# the GPU service; the timing report of the job's call goes to the server
# log), schedules both jobs and runs the second one's statement by hand
# before its source goes.  Sets ODP_CRON_JOB, ODP_CRON_JOB_B,
# ODP_CRON_BEFORE (the second job's results, as a snapshot) and
# ODP_CRON_POS (where the server log was).
odp_cron_schedule() {
	local out before
	ODP_CRON_JOB="" ODP_CRON_JOB_B="" ODP_CRON_BEFORE=""
	odp_cron_installed
	odp_check "pg_cron is installed (postgresql-15-cron)" $? "$("$PG_CONFIG" --sharedir)/extension/pg_cron.control"
	odp_cron_installed || return 0
	ODP_CRON_POS=$(stat -c %s "$ODP_PGDATA/server.log")
	out=$( { cat <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION pg_cron;
CREATE EXTENSION odp_gpu;
CREATE TABLE points (id bigint PRIMARY KEY, x float8, y float8);
INSERT INTO points SELECT i, (i * 7919) % 211, (i * 104729) % 199 FROM generate_series(1, 3000) i;
INSERT INTO points VALUES (5001, 900, 900), (5002, -600, 100), (5003, 100, -700);
CREATE TABLE outlier_runs (
	run_date date NOT NULL,
	ran_at timestamptz NOT NULL,
	rank integer NOT NULL,
	id bigint NOT NULL,
	score double precision NOT NULL,
	PRIMARY KEY (run_date, rank));
CREATE TABLE points_gone AS SELECT * FROM points;
CREATE TABLE outlier_runs_gone (LIKE outlier_runs INCLUDING ALL);
SQL
		echo "ALTER DATABASE $ODP_CRON_DB SET odp_gpu.device = gpu;
ALTER DATABASE $ODP_CRON_DB SET odp_gpu.gpu_min_rows = 0;
ALTER DATABASE $ODP_CRON_DB SET odp_gpu.report_timing = on;
ALTER DATABASE $ODP_CRON_DB SET log_min_messages = notice;"
		echo "$(odp_cron_job_sql points_gone outlier_runs_gone);"
		echo "SELECT 'job=' || cron.schedule('nightly-outliers', '* * * * *', \$job\$$(odp_cron_job_sql)\$job\$);"
	} | psql -X -At -d $ODP_CRON_DB -v ON_ERROR_STOP=1 2>&1)
	ODP_CRON_JOB=$(sed -n 's/^job=//p' <<<"$out")
	[ -n "$ODP_CRON_JOB" ]
	odp_check "pg_cron with the odp_gpu service: the nightly job is scheduled every minute" $? "$(tr '\n' ' ' <<<"$out" | head -c 300)"
	[ -n "$ODP_CRON_JOB" ] || return 0

	# the second job: its source dropped after a first run by hand
	before=$(psql -X -At -d $ODP_CRON_DB -c "$ODP_CRON_SNAPSHOT" -c "DROP TABLE points_gone" \
		-c "SELECT 'job=' || cron.schedule('nightly-outliers-gone', '* * * * *', \$job\$$(odp_cron_job_sql points_gone outlier_runs_gone)\$job\$)" 2>&1)
	ODP_CRON_JOB_B=$(sed -n 's/^job=//p' <<<"$before")
	ODP_CRON_BEFORE=$(head -1 <<<"$before")
}

# The second job's results table, as a snapshot of every row and its place.
ODP_CRON_SNAPSHOT="SELECT md5(string_agg(ctid::text || xmin::text || (o.*)::text, ',' ORDER BY run_date, rank)) FROM outlier_runs_gone o"

# Waits for both jobs' runs (both come at the first minute boundary after
# odp_cron_schedule), checks them, and unschedules the jobs.  The caller
# restarts the server without pg_cron and drops the database
# (odp_cron_drop).
odp_cron_results() {
	local out job=$ODP_CRON_JOB run status msg direct after label="pg_cron with the odp_gpu service"
	[ -n "$job" ] || return 0

	# a run that succeeds: the results table holds the top 10
	out=$(odp_cron_wait_run "$job" 0)
	IFS='|' read -r run status msg <<<"$out"
	[ "$status" = succeeded ]
	odp_check "$label: the job's run succeeds" $? "run $run: $status $msg"
	# the job's call, not the regress suites' ones beside it
	out=$(tail -c +"$((ODP_CRON_POS + 1))" "$ODP_PGDATA/server.log" | grep -m1 -o 'odp_top_outliers path=gpu rows=3003 .*')
	grep -q 'queued=[0-9.]* ms' <<<"$out"
	odp_check "$label: the job's call ran in the service" $? "$(head -c 200 <<<"${out:-no timing report in the log}")"
	out=$(psql -X -At -d $ODP_CRON_DB 2>&1 <<'SQL'
SELECT 'rows=' || count(*) FROM outlier_runs;
SELECT 'same=' || ((SELECT array_agg((rank, id, score) ORDER BY rank) FROM outlier_runs
					WHERE run_date = (SELECT max(run_date) FROM outlier_runs))
				   = (SELECT array_agg((rank, id, score) ORDER BY rank)
					  FROM odp_top_outliers('points', k => 5, n => 10)));
SELECT 'planted=' || count(*) FROM outlier_runs WHERE id > 5000;
SQL
)
	grep -q '^rows=10$' <<<"$out" && grep -q '^same=true$' <<<"$out" && grep -q '^planted=3$' <<<"$out"
	odp_check "$label: the results table holds exactly what odp_top_outliers returns" $? "$(grep -v '^NOTICE' <<<"$out" | tr '\n' ' ')"

	# idempotent: the same statement twice more today adds nothing
	out=$( { odp_cron_job_sql; echo ";"; odp_cron_job_sql; echo ";"
			 echo "SELECT 'today=' || count(*) FROM outlier_runs WHERE run_date = current_date;"; } |
		   psql -X -At -d $ODP_CRON_DB 2>&1)
	grep -q '^today=10$' <<<"$out"
	odp_check "$label: the job run twice the same day adds nothing" $? "$(grep -v '^NOTICE' <<<"$out" | tr '\n' ' ')"

	# the second job, its source dropped: its run fails with odp_gpu's
	# error, its results untouched
	out=$(odp_cron_wait_run "${ODP_CRON_JOB_B:-0}" 0)
	IFS='|' read -r run status msg <<<"$out"
	direct=$(psql -X -At -d $ODP_CRON_DB -c "$(odp_cron_job_sql points_gone outlier_runs_gone)" 2>&1 | sed -n 's/^ERROR: *//p' | head -1)
	[ "$status" = failed ] && [ -n "$direct" ] && [ "$(sed 's/^ERROR: *//' <<<"$msg")" = "$direct" ]
	odp_check "$label: with the table dropped the run is recorded failed, with the error the statement raises" $? \
		"run $run: $status: $msg; run by hand: $direct"
	after=$(psql -X -At -d $ODP_CRON_DB -c "$ODP_CRON_SNAPSHOT" 2>&1)
	[ -n "$ODP_CRON_BEFORE" ] && [ "$ODP_CRON_BEFORE" = "$after" ] &&
		[ "$(psql -X -At -d $ODP_CRON_DB -c "SELECT count(*) FROM outlier_runs_gone")" = 10 ]
	odp_check "$label: the failed run leaves the results table untouched" $? "$ODP_CRON_BEFORE / $after"

	psql -X -q -d $ODP_CRON_DB -c "SELECT cron.unschedule($job)" -c "SELECT cron.unschedule(${ODP_CRON_JOB_B:-0})" >/dev/null 2>&1
}

# Drops the jobs' database, once the server runs without pg_cron.
odp_cron_drop() {
	psql -X -q -c "DROP DATABASE IF EXISTS $ODP_CRON_DB" >/dev/null 2>&1
}
