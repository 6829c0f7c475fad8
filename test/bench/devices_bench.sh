#!/usr/bin/env bash
# Benchmark of one call spread over several GPUs (odp_gpu.devices, issue
# 16): each workload runs through SQL with one device (ODP_BENCH_ONE) and
# with the set under test (ODP_BENCH_MANY, default every device) in the
# same session, and the table gives both runs' phases (read, transfer,
# compute, output; from the odp_gpu.report_timing NOTICE), the whole SQL
# call (the second of two calls in a warm session), the device parts the
# call ran on, the speed-up of compute and of the whole call, and whether
# both runs returned the same rows in the same order (an order-sensitive
# hash of the output, taken by a separate statement).
#
# Workloads (the issue's, ODP_BENCH_SCALE times their rows; 1 = full):
#   poker     1,000,000 random 5-card hands in the UCI encoding (10 integer
#             features, suit and rank of each card), odp_top_outliers
#             k = 50, n = 10 by brute force;
#   solvingset  the same hands, by SolvingSet (each device a node);
#   knn       odp_knn_join of 1,000,000 x 32 uniform rows with itself, k = 10;
#   knnbatch  odp_knn_join of 10,000 queries against 1,000,000 x 128 uniform
#             rows, k = 10;
#   pearson   odp_pearson of 16,384 independent series of 4,096 values,
#             |r| >= 0.1 (almost no pair: the products are the work);
#   skyline   odp_skyline of 10^7 x 8 anti-correlated rows (points about
#             the plane sum = 1);
#   intervals odp_interval_match_count of 10^7 extents of one dimension in
#             [0, 10^12), half subscriptions, half updates, each of length
#             10^12 * alpha / N with alpha = 100 (about alpha * N / 4 pairs).
# The data are generated in SQL (generate_series, setseed), in ranges of
# ids loaded by ODP_BENCH_JOBS sessions at once, so the script needs only a
# server with odp_gpu (full-scale loads take about a minute on 16 cores).
# Not a test: it fails only when a run fails or the two runs differ.
#
#   ODP_BENCH_ONE=0   ODP_BENCH_MANY=all   ODP_BENCH_SCALE=1
#   ODP_BENCH_JOBS=(CPUs, at most 16)
#   ODP_BENCH_WORKLOADS="poker solvingset knn knnbatch pearson skyline intervals"
#   ODP_BENCH_SPLIT_MIN_MS (unset: the server's odp_gpu.split_min_ms; 0
#   splits every call, to time splits the default would not make)
#   ODP_BENCH_CHECK=1 (0: skip the output comparison)
#   ODP_BENCH_PATH=gpu (cpu: a dry run of the script where no GPU is)
#
# On a host with one GPU, ODP_BENCH_MANY='0,0' runs the split machinery
# (two parts, each with its own stream and half the budget) on that GPU:
# the same work in two halves, which shows the split's overhead, not a
# speed-up.
set -uo pipefail
one=${ODP_BENCH_ONE:-0}
many=${ODP_BENCH_MANY:-all}
scale=${ODP_BENCH_SCALE:-1}
workloads=${ODP_BENCH_WORKLOADS:-"poker solvingset knn knnbatch pearson skyline intervals"}
split_min=${ODP_BENCH_SPLIT_MIN_MS:+SET odp_gpu.split_min_ms = $ODP_BENCH_SPLIT_MIN_MS;}
do_check=${ODP_BENCH_CHECK:-1}
path=${ODP_BENCH_PATH:-gpu}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
key() { sed -n "s/.*[ (]$1=\\([^ )]*\\).*/\\1/p" <<<"$2" | head -1; }
ms_of() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$1" | tail -1; }
rows_of() { awk -v n="$1" -v s="$scale" 'BEGIN { r = int(n * s); print (r < 100 ? 100 : r) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }'; }
jobs=${ODP_BENCH_JOBS:-$(n=$(nproc); echo $((n > 16 ? 16 : n)))}
failed=0

# load TABLE ROWS SELECT: TABLE gets SELECT's rows for ids @LO@ .. @HI@,
# 1 .. ROWS split over $jobs sessions, each with its own seed.
load() {
	local t=$1 n=$2 sel=$3 pids=() lo hi rc=0
	"${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $t" \
		-c "CREATE TABLE $t AS $(sed 's/@LO@/1/g; s/@HI@/0/g' <<<"$sel") WITH NO DATA" >/dev/null || return 1
	for ((j = 0; j < jobs; j++)); do
		lo=$((n * j / jobs + 1)) hi=$((n * (j + 1) / jobs))
		[ "$lo" -le "$hi" ] || continue
		"${PSQL[@]}" -c "SELECT setseed($j.0 / $((2 * jobs)))" \
			-c "INSERT INTO $t $(sed "s/@LO@/$lo/g; s/@HI@/$hi/g" <<<"$sel")" >/dev/null &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	[ $rc = 0 ] && "${PSQL[@]}" -c "VACUUM ANALYZE $t" >/dev/null
}

echo "== odp_gpu multi-device benchmark, $(date -u '+%F %H:%M UTC')"
echo "gpus: $(nvidia-smi --query-gpu=index,name --format=csv,noheader 2>/dev/null | tr '\n' ';')"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) threads"
echo "one device: odp_gpu.devices = '$one'; many: odp_gpu.devices = '$many'; scale $scale"
echo
printf '| workload | size | devices | parts | read ms | transfer ms | compute ms | output ms | whole call ms | compute speed-up | whole speed-up | same rows |\n'
printf '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'

"${PSQL[@]}" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS odp_gpu" >/dev/null

for w in $workloads; do
	T=odp_bench_dev_$w
	U=
	nu=
	case $w in
		poker|solvingset)
			n=$(rows_of 1000000); size="$n x 10, k=50, n=10"
			sel="SELECT i::bigint AS id, (SELECT array_agg(v ORDER BY p, j) FROM (
				SELECT row_number() OVER () AS p, c FROM (SELECT c FROM generate_series(0, 51) c
					WHERE i > 0 ORDER BY random() LIMIT 5) d) h
				CROSS JOIN LATERAL (VALUES (1, (1 + c / 13)::real), (2, (1 + c % 13)::real)) x(j, v)) AS f
				FROM generate_series(@LO@, @HI@) i"
			method=bruteforce
			[ "$w" = solvingset ] && method=solvingset
			call="odp_top_outliers('$T', k => 50, n => 10, method => '$method')" ;;
		knn)
			n=$(rows_of 1000000); size="$n x 32 self join, k=10"
			sel="SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, 32) WHERE i > 0) AS f FROM generate_series(@LO@, @HI@) i"
			call="odp_knn_join('$T', '$T', k => 10)" ;;
		knnbatch)
			n=$(rows_of 1000000); nu=$(rows_of 10000); size="$nu x $n x 128, k=10"
			U=${T}_q
			sel="SELECT i::bigint AS id, array(SELECT random()::real FROM generate_series(1, 128) WHERE i > 0) AS f FROM generate_series(@LO@, @HI@) i"
			call="odp_knn_join('$U', '$T', k => 10)" ;;
		pearson)
			n=$(rows_of 16384); size="$n series x 4096, abs(r) >= 0.1"
			sel="SELECT i::bigint AS id, array(SELECT random() FROM generate_series(1, 4096) WHERE i > 0) AS v FROM generate_series(@LO@, @HI@) i"
			call="odp_pearson('$T', min_abs_r => 0.1)" ;;
		skyline)
			n=$(rows_of 10000000); size="$n x 8 anti-correlated"
			sel="SELECT i::bigint AS id, (SELECT array_agg(x / s ORDER BY o) FROM unnest(a) WITH ORDINALITY u(x, o), (SELECT sum(y) AS s FROM unnest(a) y) t) AS v
				FROM (SELECT i, array[random(), random(), random(), random(), random(), random(), random(), random()] AS a FROM generate_series(@LO@, @HI@) i) r"
			call="odp_skyline('$T')" ;;
		intervals)
			n=$(rows_of 10000000); size="$n extents, alpha=100"
			U=${T}_u
			len=$(awk -v n="$n" 'BEGIN { printf "%.0f", 1e12 * 100 / n }')
			sel="SELECT i::bigint AS id, int8range(lo, lo + $len) AS r FROM (SELECT i, (random() * 1e12)::bigint AS lo FROM generate_series(@LO@, @HI@) i) s"
			call="odp_interval_match_count('$T', '$U')" ;;
		*) echo "| $w | unknown workload |"; failed=1; continue ;;
	esac
	if [ -n "$nu" ]; then
		load "$T" "$n" "$sel" && load "$U" "$nu" "$sel"
	elif [ -n "$U" ]; then
		load "$T" $((n / 2)) "$sel" && load "$U" $((n / 2)) "$sel"
	else
		load "$T" "$n" "$sel"
	fi || { echo "| $w | $size | data generation failed |"; failed=1; continue; }

	declare -A compute=() whole=() hash=()
	for devs in "$one" "$many"; do
		out=$("${PSQL[@]}" 2>&1 <<SQL
SET odp_gpu.device = $path;
SET odp_gpu.devices = '$devs';
$split_min
SELECT count(*) FROM odp_skyline('SELECT 1::bigint AS id, ARRAY[1.0::float8] AS v');
SET odp_gpu.report_timing = on;
\timing on
SELECT count(*) FROM $call;
SELECT count(*) FROM $call;
SQL
)
		note=$(grep 'odp_gpu timing' <<<"$out" | tail -1)
		if [ -z "$note" ] || grep -q '^ERROR' <<<"$out"; then
			echo "| $w | $size | $devs | failed: $(grep -m1 ERROR <<<"$out") |"
			failed=1
			continue
		fi
		compute[$devs]=$(key compute "$note")
		whole[$devs]=$(ms_of "$out")
		same=-
		if [ "$do_check" = 1 ]; then
			hash[$devs]=$("${PSQL[@]}" -At -c "SET odp_gpu.device = $path" -c "SET odp_gpu.devices = '$devs'" -c "${split_min:-SELECT 1}" \
				-c "SELECT count(*) || ':' || coalesce(sum(hashtext(t::text)::numeric), 0) FROM $call WITH ORDINALITY t" 2>&1 | tail -1)
		fi
		if [ "$devs" = "$many" ]; then
			if [ "$do_check" = 1 ]; then
				if [ -n "${hash[$one]:-}" ] && [ "${hash[$one]}" = "${hash[$many]}" ]; then same=yes; else same="NO (${hash[$one]:-?} / ${hash[$many]})"; failed=1; fi
			fi
			sc=$(ratio "${compute[$one]:-0}" "${compute[$many]}")
			sw=$(ratio "${whole[$one]:-0}" "${whole[$many]}")
		else
			sc=- sw=-
		fi
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
			"$w" "$size" "$devs" "$(key devices "$note")" \
			"$(sed -n 's/.* read=\([0-9.]*\) ms.*/\1/p' <<<"$note")" "$(key transfer "$note")" \
			"${compute[$devs]}" "$(key output "$note")" "${whole[$devs]}" "$sc" "$sw" "$same"
	done
	unset compute whole hash
	"${PSQL[@]}" -c "DROP TABLE IF EXISTS $T${U:+, $U}" >/dev/null
done
exit $failed
