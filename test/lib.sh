# test/lib.sh: shared by test/run_tests.sh, test/demo.sh, test/gpu_suite.sh
# and the checks they source (test/checks/*.sh).
# Installs what is missing (Debian 12, as root), builds and installs the
# extension, starts / stops a throwaway PostgreSQL server owned by an
# unprivileged user (PostgreSQL refuses to run as root), gives a run its own
# directory for logs and scratch files, and counts checks.
#
# Settings (environment): PG_CONFIG (default: Debian's PostgreSQL 15),
# ODP_TEST_PORT (default 54329), ODP_TEST_OS_USER (default odptest),
# ODP_USE_RUNNING_SERVER=1 to use the server PGHOST/PGPORT already point at.

ODP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ODP_PORT=${ODP_TEST_PORT:-54329}
ODP_OS_USER=${ODP_TEST_OS_USER:-odptest}

# A section's title, with the seconds since the script started (where
# the run's time goes).
odp_log() { printf '== %s (at %d s)\n' "$*" "$SECONDS"; }

# The suites that repeat one analytic over many shapes, metrics and
# settings: hundreds of calls on small tables each.  The passes that read
# every table with parallel workers run them serially read: on two cores
# each call there costs 30-40 ms of worker starts, 60-80 s for these
# seven, and how a table is read is what the other suites' parallel passes
# check (parallel_read compares every analytic's parallel and serial
# reads, of every kind of region too).
ODP_REGRESS_EXHAUSTIVE="catalog integer_ties intervals intervals_multirange intervals_numeric knn outliers_solvingset"

# The regress suites (sql/*.sql less the install and upgrade scripts) but
# those named in $1, and those named in $2 when given: one line.
odp_regress_suites() {
	local name out=()
	for name in $(cd "$ODP_ROOT" && ls sql/*.sql | sed 's|sql/||; s|\.sql$||' | grep -v '^odp_gpu--'); do
		[[ " $1 " == *" $name "* ]] && continue
		[ -n "${2:-}" ] && [[ " $2 " != *" $name "* ]] && continue
		out+=("$name")
	done
	echo "${out[*]}"
}

# Records one check: name, exit status of its condition, detail; prints
# "ok"/"FAILED" and adds to ODP_PASSED or ODP_FAILED.
odp_check() {
	if [ "$2" -eq 0 ]; then
		ODP_PASSED=$((ODP_PASSED + 1)); echo "ok     $1 ($3)"
	else
		ODP_FAILED=$((ODP_FAILED + 1)); echo "FAILED $1 ($3)"
		odp_note_failure "$1 ($3)"
	fi
}

# Keeps a failure's line for the recap at the end of the run (a long
# run's first failures scroll far out of a log's tail).
odp_note_failure() {
	[ -n "${ODP_RUN_DIR:-}" ] || return 0
	{ printf '%s' "${1:0:400}" | tr '\n' ' '; echo; } >>"$ODP_RUN_DIR/failures.txt"
}

# Adds an engine test log's "N passed, M failed" line to ODP_PASSED and
# ODP_FAILED and notes its failed checks; sets ODP_ENGINE_LINE to that
# line, empty when the log has none (the binary did not build or crashed).
odp_engine_log_counts() {
	grep '^FAIL - ' "$1" | while read -r _ _ line; do odp_note_failure "engine: $line"; done
	ODP_ENGINE_LINE=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	[ -n "$ODP_ENGINE_LINE" ] || return 0
	ODP_PASSED=$((ODP_PASSED + $(cut -d' ' -f1 <<<"$ODP_ENGINE_LINE")))
	ODP_FAILED=$((ODP_FAILED + $(cut -d' ' -f3 <<<"$ODP_ENGINE_LINE")))
}

# Prints the failures noted in this run, if any, before its summary line.
odp_failure_recap() {
	[ -s "$ODP_RUN_DIR/failures.txt" ] || return 0
	local diffs
	echo "== what failed in this run"
	sed 's/^/FAILED /' "$ODP_RUN_DIR/failures.txt"
	find "$ODP_RUN_DIR" -name regression.diffs -size +0 2>/dev/null | head -3 | while read -r diffs; do
		echo "-- the start of $diffs"
		head -60 "$diffs" | cut -c1-300
	done
}

# Makes this run's directory, ODP_RUN_DIR, for every log and scratch file
# of the run (so that two runs on one machine never share one); call
# odp_run_dir_end at the end.  If the script exits before that, the
# directory is kept and its path printed.
odp_run_dir_create() {
	ODP_RUN_DIR=$(mktemp -d /tmp/odp_run.XXXXXX)
	trap odp_on_exit EXIT
}

# Removes the run's directory when $1 (the failures) is 0; else keeps it
# and prints where it is.
odp_run_dir_end() {
	if [ "$1" -eq 0 ]; then
		rm -rf "$ODP_RUN_DIR"
	else
		echo "logs kept in $ODP_RUN_DIR"
	fi
	ODP_RUN_DIR=
}

# The EXIT trap: stops the throwaway server; a run's directory still there
# (the script ended early) is kept and named.
odp_on_exit() {
	odp_stop_server
	if [ -n "${ODP_RUN_DIR:-}" ] && [ -d "$ODP_RUN_DIR" ]; then
		echo "logs kept in $ODP_RUN_DIR" >&2
	fi
}

# Installs PostgreSQL 15, its server headers and pg_cron (for the scheduled-job
# checks) with apt-get when missing.
odp_install_deps() {
	local need=""
	if [ -z "${PG_CONFIG:-}" ]; then
		[ -x /usr/lib/postgresql/15/bin/postgres ] || need="$need postgresql-15"
		[ -f /usr/include/postgresql/15/server/postgres.h ] || need="$need postgresql-server-dev-15"
		[ -f /usr/share/postgresql/15/extension/pg_cron.control ] || need="$need postgresql-15-cron"
		command -v make >/dev/null && command -v gcc >/dev/null || need="$need build-essential"
		if [ -n "$need" ]; then
			if [ "$(id -u)" -ne 0 ]; then
				echo "missing:$need; run as root or install them first" >&2
				return 1
			fi
			odp_log "installing$need"
			apt-get update -qq
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
		fi
		export PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
	fi
	ODP_PGBIN=$("$PG_CONFIG" --bindir)
	export PATH="$ODP_PGBIN:$PATH"
	if [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
		echo "no CUDA toolkit at ${CUDA_HOME:-/usr/local/cuda}; set CUDA_HOME" >&2
		return 1
	fi
}

# Builds with warnings as errors, and fails where the build prints anything
# at all; installs into the server's directories.
odp_build() {
	local log
	odp_log "building odp_gpu"
	# Without a GPU to run it, the CUDA code is compiled to be checked, in
	# half the time: machine code for Hopper (sm_90a, every kernel's
	# fullest form) and Ampere's PTX (its own code paths, which any GPU
	# from Ampere on compiles when it loads them).  CUDA_ARCH_FLAGS set
	# by the caller is kept.  Exported, so that every later make of the run
	# builds alike.
	if [ -z "${CUDA_ARCH_FLAGS:-}" ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
		export CUDA_ARCH_FLAGS="-gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=compute_80"
		echo "no GPU here: CUDA code built as sm_90a machine code and compute_80 PTX only"
	fi
	log=$(mktemp)
	if ! make -C "$ODP_ROOT" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" PG_CFLAGS=-Werror >/dev/null 2>"$log"; then
		cat "$log" >&2
		rm -f "$log"
		return 1
	fi
	# a quiet build: no compiler or ptxas warning, no ptxas info line
	if [ -s "$log" ]; then
		echo "the build printed what it must not (a warning or a ptxas info line):" >&2
		cat "$log" >&2
		rm -f "$log"
		return 1
	fi
	rm -f "$log"
	make -C "$ODP_ROOT" -s install PG_CONFIG="$PG_CONFIG" >/dev/null
}

# Installs the library already built in the tree (odp_gpu.so), the GPU
# service's engine program and the SQL files without building: for a GPU host that runs what a machine with the
# same compiler built (make leaves the objects there).
odp_install_prebuilt() {
	[ -f "$ODP_ROOT/odp_gpu.so" ] || { echo "no odp_gpu.so in $ODP_ROOT: run make first" >&2; return 1; }
	odp_log "installing the prebuilt odp_gpu.so"
	install -m 755 "$ODP_ROOT/odp_gpu.so" "$("$PG_CONFIG" --pkglibdir)/odp_gpu.so"
	install -m 755 "$ODP_ROOT/src/service/odp_gpu_engine" "$("$PG_CONFIG" --pkglibdir)/odp_gpu_engine"
	install -m 644 "$ODP_ROOT/odp_gpu.control" "$ODP_ROOT"/sql/odp_gpu--*.sql \
		"$("$PG_CONFIG" --sharedir)/extension/"
}

# Starts a throwaway server on a Unix socket; exports PGHOST/PGPORT/PGUSER.
odp_start_server() {
	if [ "${ODP_USE_RUNNING_SERVER:-0}" = 1 ]; then
		pg_isready -q || { echo "no server at PGHOST=$PGHOST" >&2; return 1; }
		return 0
	fi
	local runas=()
	if [ "$(id -u)" -eq 0 ]; then
		id "$ODP_OS_USER" >/dev/null 2>&1 || useradd -m "$ODP_OS_USER"
		runas=(runuser -u "$ODP_OS_USER" --)
	fi
	ODP_PGDATA=$(mktemp -d /tmp/odp_gpu_data.XXXXXX)
	ODP_SOCKDIR=$(mktemp -d /tmp/odp_gpu_sock.XXXXXX)
	[ "$(id -u)" -eq 0 ] && chown "$ODP_OS_USER" "$ODP_PGDATA" "$ODP_SOCKDIR"
	chmod 755 "$ODP_SOCKDIR"
	"${runas[@]}" "$ODP_PGBIN/initdb" -D "$ODP_PGDATA" -A trust -U postgres >"$ODP_PGDATA.initdb.log" 2>&1 \
		|| { cat "$ODP_PGDATA.initdb.log"; return 1; }
	# No JIT: the suites' oracle queries cost enough to be compiled, and a
	# leader that has loaded LLVM makes each parallel worker load it too
	# (60 ms a worker on two cores, most of the parallel passes' time).
	echo "jit = off" >>"$ODP_PGDATA/postgresql.conf"
	"${runas[@]}" "$ODP_PGBIN/pg_ctl" -D "$ODP_PGDATA" -l "$ODP_PGDATA/server.log" -w \
		-o "-k $ODP_SOCKDIR -p $ODP_PORT -c listen_addresses=''" start >/dev/null \
		|| { tail -20 "$ODP_PGDATA/server.log"; return 1; }
	ODP_SERVER_RUNAS=("${runas[@]}")
	export PGHOST=$ODP_SOCKDIR PGPORT=$ODP_PORT PGUSER=postgres PGDATABASE=postgres
	trap odp_on_exit EXIT
}

# Restarts the throwaway server with the extra server options $1 (e.g.
# "-c shared_preload_libraries=pg_cron"; "" for none).
odp_restart_server() {
	"${ODP_SERVER_RUNAS[@]}" "$ODP_PGBIN/pg_ctl" -D "$ODP_PGDATA" -l "$ODP_PGDATA/server.log" -w \
		-o "-k $ODP_SOCKDIR -p $ODP_PORT -c listen_addresses='' $1" restart >/dev/null
}

# Stops the throwaway server and removes its files.
odp_stop_server() {
	if [ -n "${ODP_PGDATA:-}" ] && [ -d "$ODP_PGDATA" ]; then
		"${ODP_SERVER_RUNAS[@]}" "$ODP_PGBIN/pg_ctl" -D "$ODP_PGDATA" -m fast -w stop >/dev/null 2>&1 || true
		rm -rf "$ODP_PGDATA" "$ODP_PGDATA.initdb.log" "$ODP_SOCKDIR"
		ODP_PGDATA=
	fi
}

# Node servers of the sharded-table checks and benchmark: node $1 (1-based)
# gets its own data directory and socket directory, port ODP_PORT + $1, no
# TCP, odp_gpu installed, trust for its superuser postgres and passwords
# (scram) for every other role.  $2: extra server options.
odp_node_create() {
	local i=$1
	ODP_NODE_RUNAS=()
	if [ "$(id -u)" -eq 0 ]; then
		id "$ODP_OS_USER" >/dev/null 2>&1 || useradd -m "$ODP_OS_USER"
		ODP_NODE_RUNAS=(runuser -u "$ODP_OS_USER" --)
	fi
	ODP_NODE_DATA[$i]=$(mktemp -d /tmp/odp_gpu_node$i.XXXXXX)
	ODP_NODE_SOCK[$i]=$(mktemp -d /tmp/odp_gpu_nsock$i.XXXXXX)
	ODP_NODE_PORT[$i]=$((ODP_PORT + i))
	ODP_NODE_OPTS[$i]=${2:-}
	[ "$(id -u)" -eq 0 ] && chown "$ODP_OS_USER" "${ODP_NODE_DATA[$i]}" "${ODP_NODE_SOCK[$i]}"
	chmod 755 "${ODP_NODE_SOCK[$i]}"
	"${ODP_NODE_RUNAS[@]}" "$ODP_PGBIN/initdb" -D "${ODP_NODE_DATA[$i]}" -A trust -U postgres \
		>"${ODP_NODE_DATA[$i]}.initdb.log" 2>&1 || { cat "${ODP_NODE_DATA[$i]}.initdb.log"; return 1; }
	printf 'local all postgres trust\nlocal all all scram-sha-256\n' |
		"${ODP_NODE_RUNAS[@]}" tee "${ODP_NODE_DATA[$i]}/pg_hba.conf" >/dev/null
	odp_node_start "$i" || return 1
	odp_node_psql "$i" -c "SET client_min_messages = warning" -c "CREATE EXTENSION odp_gpu" >/dev/null || return 1
	odp_node_service_wait "$i"
}

# psql on node $1 as its superuser; further arguments are psql's.
odp_node_psql() {
	local i=$1
	shift
	psql -X -q -h "${ODP_NODE_SOCK[$i]}" -p "${ODP_NODE_PORT[$i]}" -U postgres -d postgres "$@"
}

odp_node_start() {
	"${ODP_NODE_RUNAS[@]}" "$ODP_PGBIN/pg_ctl" -D "${ODP_NODE_DATA[$1]}" -l "${ODP_NODE_DATA[$1]}/server.log" -w \
		-o "-k ${ODP_NODE_SOCK[$1]} -p ${ODP_NODE_PORT[$1]} -c listen_addresses='' ${ODP_NODE_OPTS[$1]}" start >/dev/null &&
		odp_node_service_wait "$1"
}

# With odp_gpu preloaded on node $1 (its options), waits for its GPU service.
odp_node_service_wait() {
	[[ ${ODP_NODE_OPTS[$1]} == *shared_preload_libraries=*odp_gpu* ]] || return 0
	odp_service_wait -h "${ODP_NODE_SOCK[$1]}" -p "${ODP_NODE_PORT[$1]}" -U postgres -d postgres
}

odp_node_stop() {
	"${ODP_NODE_RUNAS[@]}" "$ODP_PGBIN/pg_ctl" -D "${ODP_NODE_DATA[$1]}" -m fast -w stop >/dev/null 2>&1
}

# Stops and removes every node server created.
odp_nodes_remove() {
	local i
	for i in "${!ODP_NODE_DATA[@]}"; do
		odp_node_stop "$i"
		rm -rf "${ODP_NODE_DATA[$i]}" "${ODP_NODE_DATA[$i]}.initdb.log" "${ODP_NODE_SOCK[$i]}"
		unset "ODP_NODE_DATA[$i]"
	done
}

# Prints the server log's tail (for failures).
odp_server_log_tail() {
	[ -n "${ODP_PGDATA:-}" ] && tail -n "${1:-30}" "$ODP_PGDATA/server.log" || true
}

# Saves how the server PGHOST etc. reach was started, for
# odp_server_restart: its command-line options (postmaster.opts, -D apart)
# in ODP_SRV_OPTS, its configuration directory, the pg_ctl beside its
# postgres, its log file (where its stderr goes) and who runs pg_ctl (the
# data directory's owner, through runuser when root).  Needs a superuser
# connection; works for the throwaway server and for a running one.
odp_server_save() {
	local line datadir pid owner
	line=$(psql -X -At -c "SELECT pg_read_file('postmaster.opts')" 2>&1) ||
		{ echo "cannot read postmaster.opts (a superuser connection is needed): $line" >&2; return 1; }
	datadir=$(psql -X -At -c "SHOW data_directory" 2>&1) || { echo "$datadir" >&2; return 1; }
	pid=$(psql -X -At -c "SELECT split_part(pg_read_file('postmaster.pid'), E'\\n', 1)" 2>/dev/null)
	ODP_SRV_BIN=$(dirname "${line%% \"*}")
	ODP_SRV_CONF=$(sed -n 's/.*"-D" "\([^"]*\)".*/\1/p' <<<"$line")
	ODP_SRV_CONF=${ODP_SRV_CONF:-$datadir}
	ODP_SRV_OPTS=$(sed -e 's/^[^"]*//' -e 's/"-D" "[^"]*" *//' <<<"$line")
	ODP_SRV_LOG=$(readlink "/proc/$pid/fd/2" 2>/dev/null)
	case $ODP_SRV_LOG in
		*" (deleted)") ODP_SRV_LOG=$datadir/server.log ;;
		/*) ;;
		*) ODP_SRV_LOG=$datadir/server.log ;;
	esac
	owner=$(stat -c %U "$datadir" 2>/dev/null)
	ODP_SRV_RUNAS=()
	if [ "$(id -u)" -eq 0 ] && [ "$owner" != root ]; then
		ODP_SRV_RUNAS=(runuser -u "$owner" --)
	elif [ "$(id -un)" != "$owner" ]; then
		echo "the data directory $datadir belongs to ${owner:-?}: run as root or as that user" >&2
		return 1
	fi
	[ -x "$ODP_SRV_BIN/pg_ctl" ] || { echo "no pg_ctl in $ODP_SRV_BIN" >&2; return 1; }
}

# Restarts the server saved by odp_server_save with its own options
# followed by the extra options $1 (a later -c wins; "" restarts it as it
# was started); pg_ctl's messages on stdout.
odp_server_restart() {
	(cd / && "${ODP_SRV_RUNAS[@]}" env "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" "$ODP_SRV_BIN/pg_ctl" \
		-D "$ODP_SRV_CONF" -l "$ODP_SRV_LOG" -w -t 180 -m fast -o "$ODP_SRV_OPTS $1" restart) 2>&1
}

# Waits (up to 60 s) until a GPU call works on the server psql reaches with
# the arguments given (none: PGHOST etc.): with odp_gpu preloaded, the GPU
# service takes calls once it has initialised the GPUs.  Returns at once
# where the database has no odp_gpu.
odp_service_wait() {
	local i out
	[ "$(psql -X -At "$@" -c "SELECT count(*) FROM pg_extension WHERE extname = 'odp_gpu'" 2>/dev/null)" = 1 ] || return 0
	for ((i = 0; i < 120; i++)); do
		out=$(psql -X -At "$@" -c "SET odp_gpu.device = gpu" -c "SET odp_gpu.gpu_min_rows = 0" \
			-c "SELECT count(*) FROM odp_skyline('SELECT 1::bigint AS id, ARRAY[1.0::float8] AS v')" 2>&1) && return 0
		sleep 0.5
	done
	echo "no GPU call works after 60 s: $out" >&2
	return 1
}
