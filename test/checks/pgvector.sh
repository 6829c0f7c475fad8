# test/checks/pgvector.sh: sourced by test/run_tests.sh and test/gpu_suite.sh
# (needs odp_log, odp_check, the run's directory and a running server:
# test/lib.sh).  The suite test/pgvector/ runs against the real pgvector,
# which is not part of odp_gpu: it is built from its source tarball
# (test/../../shared/third_party/, see its README), and where the tarball
# is not at hand the suite says so and is skipped, which is no failure.
# It is not in the Makefile's REGRESS list for that reason.
#   odp_pgvector_install: finds the tarball in $ODP_THIRD_PARTY if set,
#     else in ../shared/third_party/ beside the checkout (or beside the
#     main checkout, for a git worktree), builds it with PGXS for
#     PG_CONFIG's server (portable flags, no LLVM bitcode: the server's
#     PGXS may ask for a clang that is not installed) and installs it;
#     returns 1 after
#     a "skipped: ..." line where there is no tarball.
#   odp_pgvector_suite LABEL DIR [PGOPTIONS]: runs the suite (results and
#     regression.diffs in the run's directory, DIR/) as one check.
#   odp_pgvector_workers_check DEVICE: a table of vector, halfvec and
#     sparsevec columns is read by the backend and parallel workers (the
#     timing NOTICE's read_workers), with the results of the serial read.

ODP_PGVECTOR_TARBALL=pgvector-0.8.6.tar.gz

odp_pgvector_install() {
	local dirs=() d common tarball= src=$ODP_RUN_DIR/pgvector_src log=$ODP_RUN_DIR/pgvector_build.log rc
	if [ -n "${ODP_THIRD_PARTY:-}" ]; then
		dirs=("$ODP_THIRD_PARTY")
	else
		dirs=("$(cd "$ODP_ROOT/.." && pwd)/shared/third_party")
		common=$(git -C "$ODP_ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) &&
			[ "$(dirname "$common")" != "$ODP_ROOT" ] &&
			dirs+=("$(cd "$(dirname "$common")/.." && pwd)/shared/third_party")
	fi
	for d in "${dirs[@]}"; do
		[ -f "$d/$ODP_PGVECTOR_TARBALL" ] && { tarball=$d/$ODP_PGVECTOR_TARBALL; break; }
	done
	if [ -z "$tarball" ]; then
		echo "skipped: pgvector source not found at ${dirs[*]} ($ODP_PGVECTOR_TARBALL; set ODP_THIRD_PARTY to its folder)"
		return 1
	fi
	odp_log "building pgvector from $tarball with PGXS, installing it into $("$PG_CONFIG" --pkglibdir)"
	rm -rf "$src" && mkdir -p "$src" && tar -xzf "$tarball" -C "$src" --strip-components=1 >"$log" 2>&1 &&
		make -C "$src" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" OPTFLAGS= with_llvm=no >>"$log" 2>&1 &&
		make -C "$src" -s install PG_CONFIG="$PG_CONFIG" with_llvm=no >>"$log" 2>&1
	rc=$?
	odp_check "pgvector builds and installs from $(basename "$tarball")" $rc "$(tail -3 "$log" | tr '\n' ' ')"
	return $rc
}

odp_pgvector_suite() {
	local label=$1 dir=$2 out=$ODP_RUN_DIR/$2 rc
	odp_log "the pgvector suite$label"
	PGOPTIONS="${3:-}" make -C "$ODP_ROOT" -s installcheck PG_CONFIG="$PG_CONFIG" REGRESS=pgvector \
		REGRESS_OPTS="--inputdir=test/pgvector --dbname=contrib_regression_pgvector" \
		EXTRA_REGRESS_OPTS="--outputdir=$out" >"$out.log" 2>&1
	grep -qE 'pgvector +\.\.\. ok' "$out.log"
	rc=$?
	odp_check "pgvector suite$label (test/pgvector)" $rc "$(grep -E 'pgvector +\.\.\.' "$out.log" | tr -s ' ')"
	if [ $rc -ne 0 ]; then
		tail -20 "$out.log"
		[ -f "$out/regression.diffs" ] && head -150 "$out/regression.diffs"
	fi
}

odp_pgvector_workers_check() {
	local dev=$1 out created
	# reads by workers, not the table cache
	local PGOPTIONS="${PGOPTIONS:-} -c odp_gpu.table_cache=off"
	export PGOPTIONS
	created=$(psql -X -At -c "SELECT count(*) FROM pg_extension WHERE extname = 'vector'")
	out=$(psql -X -At -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS odp_pgv_data;
CREATE TABLE odp_pgv_data (id bigint PRIMARY KEY, e vector(64), h halfvec(64), s sparsevec(64), r real[]);
INSERT INTO odp_pgv_data SELECT i, a::vector, a::halfvec, a::vector::sparsevec, a
	FROM (SELECT i, array(SELECT CASE WHEN (i + j) % 4 = 0 THEN 0 ELSE ((i * 31 + j * 17) % 61)::real END
						  FROM generate_series(1, 64) j) AS a FROM generate_series(1, 50000) i) x;
SET odp_gpu.device = $dev;
SET max_parallel_workers_per_gather = 2;
SET odp_gpu.parallel_read = force;
SET odp_gpu.report_timing = on;
SET client_min_messages = notice;
SELECT 'knn ' || c || '=' || (SELECT array_agg(id ORDER BY rank)::text
	FROM odp_knn('odp_pgv_data', (SELECT e FROM odp_pgv_data WHERE id = 77), 20, features => ARRAY[c]))
FROM unnest(ARRAY['e', 'h', 's', 'r']) c;
SET odp_gpu.report_timing = off;
SET client_min_messages = warning;
DROP TABLE odp_pgv_data;
SQL
)
	[ "$created" = 0 ] && psql -X -q -c "DROP EXTENSION IF EXISTS vector" >/dev/null 2>&1
	# four calls, each read by workers; one answer for the four columns
	[ "$(grep -c 'odp_knn .*read_workers=[1-9]' <<<"$out")" = 4 ] &&
		[ "$(grep '^knn ' <<<"$out" | sed 's/^knn .=//' | sort -u | wc -l)" = 1 ] &&
		! grep -q ERROR <<<"$out"
	odp_check "$dev: vector, halfvec and sparsevec columns read by parallel workers, the real[] column's neighbours" $? \
		"$(grep -o 'read_workers=[0-9]*' <<<"$out" | tr '\n' ' ')$(grep -m1 ERROR <<<"$out")"
}
