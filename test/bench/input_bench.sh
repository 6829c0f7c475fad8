#!/usr/bin/env bash
#
# input_bench.sh
#	  Measures how fast odp_gpu's input layer (src/input_*.c) turns a table
#	  into a float32 matrix: the direct heap scan and the SPI paths.
#
# Builds a throwaway module from src/input_*.c plus a small SQL-callable
# wrapper, odp_input_bench(source), that runs OdpReadInput and returns the
# rows, dims, read time and path.  The module is loaded by absolute path
# (superuser needed) in sessions that never load odp_gpu itself, so the two
# copies of OdpReadInput cannot clash.  Then it creates a table
# (id bigint primary key, f real[DIMS]) with generate_series, plus a copy
# stored in random order (so the reader has to sort), and reads them REPS
# times through each path, printing one line per path.  Every read must
# return the same matrix (position-weighted checksum), else it fails.
#
# Usage: test/bench/input_bench.sh [ROWS [DIMS [REPS]]]
#   connection through the usual PGHOST, PGPORT, PGUSER, PGDATABASE, as a
#   superuser, to a server on this host (it loads the module from /tmp);
#   PG_CONFIG picks the server's build (default: pg_config in PATH).
#   KEEP_TABLE=1 keeps the table for a later run (same ROWS and DIMS).
#
# Copyright (c) 2026, odp_gpu developers
#
# IDENTIFICATION
#	  test/bench/input_bench.sh
#
set -euo pipefail

ROWS=${1:-1000000}
DIMS=${2:-10}
REPS=${3:-5}
PG_CONFIG=${PG_CONFIG:-pg_config}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
TABLE=odp_bench_load_${ROWS}_${DIMS}
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -At)

# ---- build the throwaway module ----
BUILD=$(mktemp -d /tmp/odp_input_bench.XXXXXX)
trap 'rm -rf "$BUILD"' EXIT
cp "$REPO"/src/input*.[ch] "$REPO"/kernels/include/*.h "$BUILD/"
INPUT_OBJS=$(cd "$BUILD" && ls input_*.c | sed 's/\.c$/.o/' | tr '\n' ' ')
cat > "$BUILD/bench.c" <<'EOF'
/* odp_input_bench(source text, id_column text, features text[]) */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "input.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;
PG_FUNCTION_INFO_V1(odp_input_bench);

Datum
odp_input_bench(PG_FUNCTION_ARGS)
{
	OdpInputSpec spec;
	OdpInput	in;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	double		checksum = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(&spec, 0, sizeof(spec));
	spec.source = PG_GETARG_TEXT_PP(0);
	spec.id_column = PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1);
	spec.features = PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2);
	OdpReadInput(&spec, &in);

	/*
	 * Check the order and touch every value: the checksum weights each row
	 * by its position, so it matches between two reads of the same data
	 * only if both put every row in the same place.
	 */
	for (int64 i = 0; i < in.rows; i++)
	{
		double		rowsum = 0;

		if (i > 0 && in.ids[i] <= in.ids[i - 1])
			elog(ERROR, "ids are not strictly ascending at row %lld",
				 (long long) i);
		for (int32 d = 0; d < in.dims; d++)
			rowsum += in.data[i * in.dims + d];
		checksum += (double) (i + 1) * rowsum;
	}

	values[0] = Int64GetDatum(in.rows);
	values[1] = Int32GetDatum(in.dims);
	values[2] = Float8GetDatum(in.read_ms);
	values[3] = CStringGetTextDatum(in.heap_scan ? "heap" : "spi");
	values[4] = Float8GetDatum(checksum);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
EOF
cat > "$BUILD/Makefile" <<EOF
MODULE_big = odp_input_bench
OBJS = bench.o $INPUT_OBJS
PG_CONFIG ?= pg_config
PGXS := \$(shell \$(PG_CONFIG) --pgxs)
override with_llvm = no
include \$(PGXS)
EOF
make -s -C "$BUILD" PG_CONFIG="$PG_CONFIG" >/dev/null
chmod -R a+rX "$BUILD"
LIB="$BUILD/odp_input_bench.so"

# ---- the data ----
"${PSQL[@]}" <<EOF
SET client_min_messages = warning;
DROP VIEW IF EXISTS ${TABLE}_view;
CREATE TABLE IF NOT EXISTS $TABLE (id bigint PRIMARY KEY, f real[]);
INSERT INTO $TABLE
	SELECT i, (SELECT array_agg(((i::bigint * 7919 + j * 104729) % 1000003) / 1000.0)::real[]
			   FROM generate_series(1, $DIMS) j)
	FROM generate_series(1, $ROWS) i
	WHERE NOT EXISTS (SELECT 1 FROM $TABLE);
VACUUM ANALYZE $TABLE;
CREATE VIEW ${TABLE}_view AS SELECT id, f FROM $TABLE;
DROP TABLE IF EXISTS ${TABLE}_shuffled;
CREATE TABLE ${TABLE}_shuffled AS SELECT * FROM $TABLE ORDER BY random();
ALTER TABLE ${TABLE}_shuffled ADD PRIMARY KEY (id);
VACUUM ANALYZE ${TABLE}_shuffled;
EOF

# ---- the runs: each path in its own session, best and median of REPS ----
# (left('', g) makes every repetition a new call instead of a rescan)
run_path() {
	local label=$1 source=$2
	"${PSQL[@]}" <<EOF
CREATE FUNCTION pg_temp.odp_input_bench(source text, id_column text DEFAULT NULL,
	features text[] DEFAULT NULL,
	OUT rows bigint, OUT dims int, OUT read_ms float8, OUT path text,
	OUT checksum float8)
AS '$LIB', 'odp_input_bench' LANGUAGE C;
CREATE TEMP TABLE runs AS
	SELECT r.* FROM generate_series(1, $REPS) g,
		LATERAL pg_temp.odp_input_bench(\$src\$$source\$src\$ || left('', g)) r;
SELECT format('%-30s %-4s rows=%s dims=%s best=%s ms median=%s ms  %s rows/s (best)',
		\$lbl\$$label\$lbl\$, min(path), min(rows), min(dims),
		round(min(read_ms)::numeric, 1),
		round((percentile_cont(0.5) WITHIN GROUP (ORDER BY read_ms))::numeric, 1),
		to_char(min(rows) / (min(read_ms) / 1000.0), 'FM999,999,999,999')),
	count(DISTINCT checksum), min(checksum)
FROM runs;
EOF
}

# Prints one path's line; checks that every read returned the same matrix.
FIRST_SUM=
report() {
	local line nsums sum
	IFS='|' read -r line nsums sum < <(run_path "$@")
	echo "$line"
	if [ "$nsums" != 1 ] || { [ -n "$FIRST_SUM" ] && [ "$sum" != "$FIRST_SUM" ]; }; then
		echo "error: $1 returned a different matrix (checksum $sum, first $FIRST_SUM)" >&2
		exit 1
	fi
	FIRST_SUM=$sum
}

echo "odp_gpu input layer: $ROWS rows x real[$DIMS], $REPS reads per path"
report "table (heap scan)" "$TABLE"
report "table, shuffled (heap + sort)" "${TABLE}_shuffled"
report "view (SPI)" "${TABLE}_view"
report "query (SPI)" "SELECT id, f FROM $TABLE"
report "query, shuffled (SPI + sort)" "SELECT id, f FROM ${TABLE}_shuffled"

if [ "${KEEP_TABLE:-0}" != 1 ]; then
	"${PSQL[@]}" -c "DROP VIEW ${TABLE}_view; DROP TABLE $TABLE, ${TABLE}_shuffled;"
fi
