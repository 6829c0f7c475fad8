#!/usr/bin/env bash
# Benchmark of odp_interval_match inside PostgreSQL, with the peers measured
# in the same run on the same regions.  Workloads: the DDM papers' (Marzolla
# and D'Angelo's convention, test/bench/intervals_engine_bench gen): N extents,
# half subscriptions and half updates, lower corners uniform in a space of side
# L, sides L * (alpha / N)^(1/d), about 2^(d-2) * alpha * N pairs; stored as
# int8range for d = 1, box for d = 2, cube for d = 3 (heap tables iv_subs,
# iv_upds (id bigint, region), loaded by COPY).
# Per workload it prints the pairs, odp_gpu's phases for the count
# (odp_interval_match_count: read both tables, transfer, compute) and for
# the pairs (SELECT count(*) FROM odp_interval_match(...): compute and
# output, the rows stored in the result), each the second of two calls in a
# warm session, the engine's own GPU time for counting and for ordering
# every pair (intervals_engine_bench on the same regions: match, no reading or
# output), then the peers: odp_gpu's CPU path (ODP_BENCH_CPU_THREADS threads,
# compute), and the && join with a GiST index on the updates (range types,
# box, cube), as PostgreSQL plans it (parallel workers allowed) and in one
# process (max_parallel_workers_per_gather = 0, as on a small machine),
# and, for d = 1, with an SP-GiST one (index build, then the count of the
# join, statement_timeout PEER_LIMIT_S each).  Where odp_gpu returns the
# pairs, PostgreSQL's own floor for as many rows through a function scan
# (SELECT count(*) FROM generate_series(1, pairs)) is measured beside the
# output phase.  Needs a running
# server with odp_gpu and contrib cube, test/bench/intervals_engine_bench
# built.  Not a test: it never fails on speed.
#
#   ODP_IV_WORKLOADS="1:1000000:1 ..." (d:N:alpha; default below)
#   ODP_BENCH_PATH=gpu   ODP_BENCH_CPU_THREADS=<nproc>   ODP_BENCH_PEERS=1
#   PEER_LIMIT_S=60   ODP_IV_SQL_PAIRS_MAX=120000000 (larger outputs: count only)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
WORKLOADS=${ODP_IV_WORKLOADS:-"1:1000000:0.01 1:1000000:1 1:1000000:100 2:1000000:0.01 2:1000000:1 2:1000000:100 3:1000000:0.01 3:1000000:1 3:1000000:100 1:10000000:0.01 1:10000000:1 1:10000000:100 2:10000000:1 3:10000000:1"}
path=${ODP_BENCH_PATH:-gpu}
cpu_threads=${ODP_BENCH_CPU_THREADS:-$(nproc)}
peers=${ODP_BENCH_PEERS:-1}
limit=${PEER_LIMIT_S:-60}
pairs_max=${ODP_IV_SQL_PAIRS_MAX:-120000000}
work=$(mktemp -d /tmp/odp_bench_iv.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
key() { sed -n "s/.*[ (]$1=\\([^ )]*\\).*/\\1/p" <<<"$2" | head -1; }
ms_of() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$1" | tail -1; }
# the time of a peer's statement, or ">limit" when it timed out
peer_ms() { grep -q "statement timeout" <<<"$1" && echo ">${limit}000" || ms_of "$1"; }

echo "== odp_gpu region matching benchmark, $(date -u '+%F %H:%M UTC')"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) threads; odp cpu path at $cpu_threads threads; peers' limit ${limit} s"
echo
printf '| d | N | alpha | type | pairs | read ms (both) | transfer ms | count: compute ms | count: whole call ms | pairs: compute ms | pairs: output ms | pairs: whole call ms | generate_series of as many rows ms | engine count ms | engine pairs ms (sort) | engine pairs/s | odp CPU path ms | GiST && ms (index build) | GiST && ms, one process | SP-GiST && ms (index build) | whole count vs GiST (one process) |\n'
printf '|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'

"${PSQL[@]}" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu" \
	-c "CREATE EXTENSION IF NOT EXISTS cube" || exit 1

for w in $WORKLOADS; do
	IFS=: read -r d n alpha <<<"$w"
	case $d in 1) type=int8range; col=r ;; 2) type=box; col=b ;; *) type=cube; col=c ;; esac
	"$here/intervals_engine_bench" gen "$d" "$n" "$alpha" 7 "$work/subs.txt" "$work/upds.txt" || { echo "| $d | $n | $alpha | generation failed |"; continue; }
	"${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS iv_subs, iv_upds" \
		-c "CREATE TABLE iv_subs (id bigint, $col $type)" -c "CREATE TABLE iv_upds (id bigint, $col $type)" \
		-c "COPY iv_subs FROM '$work/subs.txt'" -c "COPY iv_upds FROM '$work/upds.txt'" \
		-c "VACUUM ANALYZE iv_subs" -c "VACUUM ANALYZE iv_upds" || continue

	# odp_gpu: a tiny call creates the CUDA context, then two calls of each; the second counts
	out=$("${PSQL[@]}" 2>&1 <<SQL
SET odp_gpu.device = $path;
SET odp_gpu.cpu_threads = $cpu_threads;
SELECT odp_interval_match_count('SELECT * FROM iv_subs WHERE id <= 10', 'iv_upds');
SET odp_gpu.report_timing = on;
\timing on
SELECT odp_interval_match_count('iv_subs', 'iv_upds');
SELECT odp_interval_match_count('iv_subs', 'iv_upds');
SQL
)
	note=$(grep 'odp_gpu timing' <<<"$out" | tail -1)
	pairs=$(key pairs "$note")
	[ -z "$pairs" ] && { echo "| $d | $n | $alpha | $type | odp_interval_match_count failed: $(grep ERROR <<<"$out" | head -1) |"; continue; }
	count_whole=$(ms_of "$out")
	read_ms=$(awk -v a="$(key read "$note")" -v b="$(key other_read "$note")" 'BEGIN { printf "%.1f", a + b }')
	transfer=$(key transfer "$note")
	count_compute=$(key compute "$note")
	p_compute=- p_output=- p_whole=- floor=-
	if [ "$pairs" -le "$pairs_max" ]; then
		pout=$("${PSQL[@]}" 2>&1 <<SQL
SET odp_gpu.device = $path;
SET odp_gpu.cpu_threads = $cpu_threads;
SET odp_gpu.report_timing = on;
SET work_mem = '1GB';
\timing on
SELECT count(*) FROM odp_interval_match('iv_subs', 'iv_upds');
SELECT count(*) FROM odp_interval_match('iv_subs', 'iv_upds');
SQL
)
		pnote=$(grep 'odp_gpu timing' <<<"$pout" | tail -1)
		p_compute=$(key compute "$pnote")
		p_output=$(key output "$pnote")
		p_whole=$(ms_of "$pout")
		fout=$("${PSQL[@]}" 2>&1 <<SQL
SET work_mem = '1GB';
\timing on
SELECT count(*) FROM generate_series(1, $pairs);
SQL
)
		floor=$(ms_of "$fout")
	fi

	# the engine alone on the same regions
	eng=$("$here/intervals_engine_bench" run "$d" "$n" "$alpha" 7 --$path --threads "$cpu_threads" --reps 3 2>&1)
	ecount=$(grep 'task=count' <<<"$eng" | sed -n 's/.*match_ms=\([0-9.]*\).*/\1/p')
	epairs=$(grep 'task=pairs' <<<"$eng" | sed -n 's/.*match_ms=\([0-9.]*\).*sort_ms=\([0-9.]*\).*/\1 (\2)/p')
	epps=$(grep 'task=pairs' <<<"$eng" | sed -n 's/.*match_ms=\([0-9.]*\).*/\1/p' | awk -v p="$pairs" '{ if ($1 > 0) printf "%.2e", p / ($1 / 1000) }')

	cpu_ms=- gist=- gist1=- spgist=- ratio=- ratio1=-
	if [ "$peers" = 1 ]; then
		cout=$("${PSQL[@]}" 2>&1 <<SQL
SET odp_gpu.device = cpu;
SET odp_gpu.cpu_threads = $cpu_threads;
SET odp_gpu.report_timing = on;
SET statement_timeout = '${limit}s';
SELECT odp_interval_match_count('iv_subs', 'iv_upds');
SQL
)
		cpu_ms=$(key compute "$(grep 'odp_gpu timing' <<<"$cout" | tail -1)")
		[ -z "$cpu_ms" ] && cpu_ms=">${limit}000"
		for am in gist spgist; do
			[ "$am" = spgist ] && [ "$d" != 1 ] && continue
			gout=$("${PSQL[@]}" 2>&1 <<SQL
SET statement_timeout = '${limit}s';
SET maintenance_work_mem = '4GB';
\timing on
CREATE INDEX iv_upds_idx ON iv_upds USING $am ($col);
SQL
)
			build=$(peer_ms "$gout")
			for procs in all one; do
				[ "$procs" = one ] && [ "$am" = spgist ] && continue
				jout=$("${PSQL[@]}" 2>&1 <<SQL
SET statement_timeout = '${limit}s';
$([ "$procs" = one ] && echo "SET max_parallel_workers_per_gather = 0;")
\timing on
SELECT count(*) FROM iv_subs s JOIN iv_upds u ON s.$col && u.$col;
SQL
)
				jms=$(peer_ms "$jout")
				jcount=$(grep -E '^ *[0-9]+$' <<<"$jout" | tr -d ' ' | head -1)
				[ -n "$jcount" ] && [ "$jcount" != "$pairs" ] && jms="$jms (DIFFERENT: $jcount)"
				r=$(awk -v g="${jms#>}" -v o="$count_whole" 'BEGIN { g += 0; if (o > 0 && g > 0) printf "%.0fx", g / o }')
				[[ $jms == ">"* ]] && r=">$r"
				case $am-$procs in
					gist-all) gist="$jms ($build)"; ratio=$r ;;
					gist-one) gist1=$jms; ratio1=$r ;;
					spgist-all) spgist="$jms ($build)" ;;
				esac
			done
			"${PSQL[@]}" -c "DROP INDEX IF EXISTS iv_upds_idx" >/dev/null 2>&1
		done
	fi
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) |\n' \
		"$d" "$n" "$alpha" "$type" "$pairs" "$read_ms" "$transfer" "$count_compute" "$count_whole" \
		"$p_compute" "$p_output" "$p_whole" "$floor" "$ecount" "$epairs" "$epps" "$cpu_ms" "$gist" "$gist1" \
		"$spgist" "$ratio" "$ratio1"
	rm -f "$work/subs.txt" "$work/upds.txt"
done
"${PSQL[@]}" -c "DROP TABLE IF EXISTS iv_subs, iv_upds" >/dev/null
