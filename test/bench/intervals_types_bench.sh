#!/usr/bin/env bash
# Benchmark of odp_interval_match_count on the column types of regions,
# the same regions stored each way: int8range (the integer baseline),
# numrange of decimals that double precision cannot hold (their bounds
# ranked exactly, input_exact.c), numrange of values it holds (ranked too:
# every numeric is), double precision pairs, and multiranges of one to
# three ranges a row (int8multirange, nummultirange: a piece per range).
# N regions per side (half the rows of intervals_bench's 1-D workloads),
# lower bounds uniform in [0, 1e9), lengths up to 2000 (about N pairs).
# Per type it prints the pieces, the phases of the second of two calls in
# a warm session (read of both sources, ranking included; transfer;
# compute; the whole call), and PostgreSQL's own count of the && join with
# a GiST index on the updates (built first, not timed), as planned, with
# statement_timeout PEER_LIMIT_S.  Needs a running server with odp_gpu.
# Not a test: it never fails on speed.
#
#   ODP_TYPES_N=500000   ODP_BENCH_PATH=gpu   PEER_LIMIT_S=120
set -uo pipefail
n=${ODP_TYPES_N:-500000}
path=${ODP_BENCH_PATH:-gpu}
limit=${PEER_LIMIT_S:-120}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
key() { sed -n "s/.*[ (]$1=\\([^ )]*\\).*/\\1/p" <<<"$2" | head -1; }
ms_of() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$1" | tail -1; }

echo "== odp_gpu region types benchmark, $(date -u '+%F %H:%M UTC')"
echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) threads; path $path; N = $n per side"
echo
"${PSQL[@]}" <<SQL || exit 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS odp_gpu;
DROP TABLE IF EXISTS ty_s, ty_u;
SELECT setseed(0.125) \\gset
CREATE TABLE ty_s AS SELECT i AS id, (random() * 1e9)::bigint AS lo, (random() * 2000)::int AS len,
	(random() * 1e9)::bigint AS lo2, i % 3 AS extra FROM generate_series(1, $n) i;
CREATE TABLE ty_u AS SELECT i AS id, (random() * 1e9)::bigint AS lo, (random() * 2000)::int AS len,
	(random() * 1e9)::bigint AS lo2, i % 3 AS extra FROM generate_series(1, $n) i;
DO \$\$
DECLARE t text;
BEGIN
	FOREACH t IN ARRAY array['ty_s', 'ty_u'] LOOP
		EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (id),
			ADD i8 int8range, ADD dec numrange, ADD exact numrange, ADD f0 float8, ADD f1 float8,
			ADD i8m int8multirange, ADD decm nummultirange', t);
		EXECUTE format('UPDATE %I SET i8 = int8range(lo, lo + len),
			dec = numrange(lo / 10.0 + 0.01, (lo + len) / 10.0 + 0.01),
			exact = numrange(lo / 4.0, (lo + len) / 4.0),
			f0 = lo / 4.0, f1 = (lo + len) / 4.0,
			i8m = CASE extra WHEN 0 THEN int8multirange(int8range(lo, lo + len))
				WHEN 1 THEN int8multirange(int8range(lo, lo + len), int8range(lo2, lo2 + len))
				ELSE int8multirange(int8range(lo, lo + len), int8range(lo2, lo2 + len), int8range(lo2 + 5000, lo2 + 5000 + len)) END,
			decm = CASE extra WHEN 0 THEN nummultirange(numrange(lo / 10.0 + 0.01, (lo + len) / 10.0 + 0.01))
				ELSE nummultirange(numrange(lo / 10.0 + 0.01, (lo + len) / 10.0 + 0.01), numrange(lo2 / 10.0 + 0.01, (lo2 + len) / 10.0 + 0.01)) END', t);
	END LOOP;
END \$\$;
VACUUM ANALYZE ty_s;
VACUUM ANALYZE ty_u;
SQL

printf '| type | regions per side | pieces (both) | pairs | read ms (both, ranking included) | transfer ms | compute ms | whole call ms | PostgreSQL && with GiST ms |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for t in i8 dec exact f i8m decm; do
	case $t in
		f) dims="'{f0,f1}'"; oracle="numrange(s.f0::numeric, s.f1::numeric, '[]') && numrange(u.f0::numeric, u.f1::numeric, '[]')"; idx="" ;;
		*) dims="'{$t}'"; oracle="s.$t && u.$t"; idx="CREATE INDEX ty_u_gist ON ty_u USING gist ($t);" ;;
	esac
	call="SELECT odp_interval_match_count('ty_s', 'ty_u', dims => $dims)"
	out=$("${PSQL[@]}" 2>&1 <<SQL
SET odp_gpu.device = $path;
SET odp_gpu.report_timing = on;
$call;
$call;
SQL
)
	notice=$(grep 'odp_gpu timing' <<<"$out" | tail -1)
	pairs=$(grep -E '^ *[0-9]+ *$' <<<"$out" | tail -1 | tr -d ' ')
	read=$(key read "$notice"); oread=$(key other_read "$notice")
	case $t in
		i8m|decm) pieces=$("${PSQL[@]}" -At -c "SELECT sum((SELECT count(*) FROM unnest(m))) FROM (SELECT $t AS m FROM ty_s UNION ALL SELECT $t FROM ty_u) x") ;;
		*) pieces=$((2 * n)) ;;
	esac
	peer=$("${PSQL[@]}" 2>&1 <<SQL
DROP INDEX IF EXISTS ty_u_gist;
$idx
SET statement_timeout = '${limit}s';
\\timing on
SELECT count(*) FROM ty_s s JOIN ty_u u ON $oracle;
SQL
)
	grep -q "statement timeout" <<<"$peer" && pms=">${limit}000" || pms=$(ms_of "$peer")
	printf '| %s | %s | %s | %s | %.1f | %s | %s | %s | %s |\n' "$t" "$n" "${pieces:-?}" "${pairs:-?}" \
		"$(awk -v a="${read:-0}" -v b="${oread:-0}" 'BEGIN { print a + b }')" \
		"$(key transfer "$notice")" "$(key compute "$notice")" "$(key total "$notice")" "$pms"
done
"${PSQL[@]}" -c "DROP TABLE ty_s, ty_u" >/dev/null
