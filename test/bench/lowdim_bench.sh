#!/bin/bash
# Low-dimensional rows: the spatial path (odp_gpu.spatial = on) against
# today's brute force and SolvingSet (odp_gpu.spatial = off), whole SQL
# calls in a warm session on a running server with odp_gpu installed
# (preload it to go through the GPU service).  Prints one table: data,
# rows, k, path, the method that ran, the distances it computed, and
# read, transfer, compute, output and whole-call times (best of REPS),
# beside PostgreSQL's own parallel scan of the table's columns and its
# own set-returning function of as many rows of the result's columns
# (same session settings, best of REPS); PyTorch's brute force on skin
# where python3 has it; then rows against compute time for each path as
# an SVG plot.
#
#   SIZES="1000000 4000000 16000000"   2-D Gaussian tables, top-10, k = 5
#   OFF_MAX=16000000    largest size today's path runs at
#   N_U3=1000000 (0: no all-kNN)  REPS=3  DEVICE=gpu  PLOT=lowdim.svg  DATASETS=../shared/datasets
#
# Workloads: top-10 outliers of 2-D Gaussian rows (k = 5: seed 001's G2d
# and its 100G2d scale-up); ADBench skin (245,057 x 3, float8), k = 50;
# all-kNN of 10^6 x 3 uniform rows, k = 10 (a self join, counted).  Data
# made in SQL with fixed seeds (setseed), so every run reads the same rows,
# stored in id order.
set -u
SIZES=${SIZES:-1000000 4000000 16000000}
OFF_MAX=${OFF_MAX:-16000000}
N_U3=${N_U3:-1000000}
REPS=${REPS:-3}
DEVICE=${DEVICE:-gpu}
PLOT=${PLOT:-}
DATASETS=${DATASETS:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/datasets}
SKIN=$DATASETS/adbench_classical/csv/33_skin.csv.gz

q1() { psql -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
# shellcheck source=test/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"

# have TABLE: whether TABLE exists (made by an earlier run)
have() { [ "$(q1 "SELECT to_regclass('$1') IS NOT NULL")" = t ]; }

# make_table TABLE N SEED COLUMNS: TABLE of N rows, id 1 .. N and the
# expressions COLUMNS of random(), after setseed(SEED); in id order (one
# statement: rows inserted by concurrent sessions would lie out of id
# order, which the read must then reorder)
make_table() {
	have "$1" && return 0
	psql -XAtq -v ON_ERROR_STOP=1 >/dev/null <<-EOF
		SELECT setseed($3);
		CREATE UNLOGGED TABLE $1 AS SELECT i::bigint AS id, $4 FROM generate_series(1, $2) i;
		VACUUM ANALYZE $1;
	EOF
}

# gauss2 N: table lb_g2_N of N rows of two independent N(0, 1) reals
gauss2() {
	make_table "lb_g2_$1" "$1" 0.45 \
		"(sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))::real AS x,
		 (sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))::real AS y"
}

# uniform3 N: table lb_u3_N of N rows of three uniform reals in [0, 1)
uniform3() {
	make_table "lb_u3_$1" "$1" 0.3 "random()::real AS x, random()::real AS y, random()::real AS z"
}

skin() {
	have lb_skin && return 0
	[ -r "$SKIN" ] || return 1
	q1 "CREATE UNLOGGED TABLE lb_skin (id bigint PRIMARY KEY, x float8, y float8, z float8)"
	zcat "$SKIN" | awk -F, '{ print NR "," $1 "," $2 "," $3 }' |
		psql -XAtq -v ON_ERROR_STOP=1 -c "COPY lb_skin FROM STDIN (FORMAT csv)"
	q1 "VACUUM ANALYZE lb_skin" >/dev/null
}

# best_ms SQL [SETUP]: the best of REPS runs of SQL after a first, in one
# session with the calls' settings (SETUP first, untimed)
best_ms() {
	{
		echo "SET max_parallel_workers_per_gather = 8; SET work_mem = '1GB';"
		[ -n "${2:-}" ] && echo "$2;"
		printf '%s\n' '\timing on'
		for i in $(seq 0 "$REPS"); do echo "$1;"; done
	} | psql -XAtq -v ON_ERROR_STOP=1 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n +2 | sort -n | head -1
}

# scan_ms TABLE COLUMNS: PostgreSQL's own parallel scan of the columns
scan_ms() { best_ms "SELECT count(*), $(sed 's/\([a-z]\+\)/sum(\1)/g' <<<"$2") FROM $1"; }

# srf_ms ROWS EXPRS: PostgreSQL's own SRF of ROWS rows (bench_srf_ms)
srf_ms() { bench_srf_ms "$1" "$2" 1GB; }

# the results' columns: top outliers (rank, id, score), a join (query_id,
# rank, id, distance)
TOP_COLS="i::integer, i::bigint, i::float8"
JOIN_COLS="i::bigint, i::integer, i::bigint, i::float8"

# field KEY NOTICE: the value of key= in a timing NOTICE
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2" | head -1; }

# run LABEL ROWS K SPATIAL SQL SCAN SRF: REPS warm calls after one; the
# best whole call's phases, beside PostgreSQL's scan and SRF (ms)
run() {
	local label=$1 rows=$2 k=$3 sp=$4 sql=$5 scan=$6 srf=$7 best="" line=""
	local out whole notice
	for i in $(seq 0 "$REPS"); do
		out=$(psql -Xq -v ON_ERROR_STOP=1 2>&1 <<-EOF
			SET odp_gpu.device = $DEVICE; SET odp_gpu.spatial = $sp;
			SET odp_gpu.report_timing = on; SET max_parallel_workers_per_gather = 8;
			\timing on
			$sql;
		EOF
		) || { echo "| $label | $rows | $k | $sp | failed: $(tail -1 <<<"$out") |"; return; }
		[ "$i" = 0 ] && continue
		whole=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -1)
		notice=$(grep "odp_gpu timing" <<<"$out" | tail -1)
		if [ -z "$best" ] || awk "BEGIN { exit !($whole < $best) }"; then
			best=$whole
			line="| $label | $rows | $k | $sp | $(field method "$notice") | $(field distances "$notice") | $(field read "$notice") | $(field transfer "$notice") | $(field compute "$notice") | $(field output "$notice") | $whole | $scan | $srf |"
		fi
	done
	echo "$line"
	[ -n "$PLOT" ] && [[ $label == gauss2* ]] &&
		echo "$sp $rows $(sed 's/.*| \([0-9.]*\) | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |$/\1/' <<<"$line")" >>"$PLOT.data"
}

echo "# odp_gpu low-dimensional rows, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- host: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) CPUs; server: $(q1 'SHOW server_version'); preloaded: '$(q1 'SHOW shared_preload_libraries')'; odp_gpu.device = $DEVICE; best of $REPS warm calls"
echo
echo "| data | rows | k | odp_gpu.spatial | method | distances | read ms | transfer ms | compute ms | output ms | whole ms | PG scan ms | PG SRF ms |"
echo "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
[ -n "$PLOT" ] && : >"$PLOT.data"
SRF10=$(srf_ms 10 "$TOP_COLS")
PEER_LINE=""
if skin; then
	scan=$(scan_ms lb_skin "x, y, z")
	for sp in on off; do
		run "skin 3-D top-10" 245057 50 "$sp" "SELECT count(*) FROM odp_top_outliers('lb_skin', k => 50, n => 10)" "$scan" "$SRF10"
	done
	# PyTorch's brute force on the same rows, where python3 has it
	peer_dir=$(mktemp -d /tmp/lowdim_peer.XXXXXX)
	if zcat "$SKIN" | python3 -c "
import sys, numpy as np
x = np.loadtxt(sys.stdin, delimiter=',', usecols=(0, 1, 2), dtype=np.float64)
np.save('$peer_dir/skin.npy', x)" 2>/dev/null; then
		peer=$(PEERS=torch KS=50 N=10 python3 "$(dirname "$0")/outliers_peers.py" "$peer_dir" skin 2>&1 | grep '^peer' | head -1)
		ours=$(q1 "SET odp_gpu.device = $DEVICE; SELECT string_agg(id::text, ',' ORDER BY rank) FROM odp_top_outliers('lb_skin', k => 50, n => 10)" | tail -1)
		if grep -qE '^peer skin torch 50 [0-9.]+ ' <<<"$peer"; then
			PEER_LINE="PyTorch's brute force (torch.cdist + topk on the GPU, outliers_peers.py) on skin, k = 50: $(awk '{ print $5 }' <<<"$peer") ms, its top 10 ids $(awk '{ print $6 }' <<<"$peer"); odp_gpu's $ours"
		else
			PEER_LINE="PyTorch's brute force on skin: ${peer:-no output}"
		fi
	fi
	rm -rf "$peer_dir"
fi
if [ "$N_U3" -gt 0 ]; then
	uniform3 "$N_U3" || exit 1
	scan=$(scan_ms "lb_u3_$N_U3" "x, y, z")
	srf=$(srf_ms $((N_U3 * 10)) "$JOIN_COLS")
	for sp in on off; do
		run "uniform3 all-kNN" "$N_U3" 10 "$sp" "SELECT count(*) FROM odp_knn_join('lb_u3_$N_U3', 'lb_u3_$N_U3', k => 10)" "$scan" "$srf"
	done
fi

for n in $SIZES; do
	gauss2 "$n" || exit 1
	scan=$(scan_ms "lb_g2_$n" "x, y")
	for sp in on off; do
		[ "$sp" = off ] && [ "$n" -gt "$OFF_MAX" ] && continue
		run "gauss2 top-10" "$n" 5 "$sp" "SELECT count(*) FROM odp_top_outliers('lb_g2_$n', k => 5, n => 10)" "$scan" "$SRF10"
	done
done

[ -n "$PEER_LINE" ] && { echo; echo "$PEER_LINE"; }

# rows against compute ms, log-log, one line per path
if [ -n "$PLOT" ] && [ -s "$PLOT.data" ]; then
	awk 'BEGIN { W = 640; H = 400; L = 70; B = 50 }
	{ sp[NR] = $1; n[NR] = log($2) / log(10); t[NR] = log($3 > 0 ? $3 : 0.01) / log(10)
	  if (NR == 1 || n[NR] < n0) n0 = n[NR]; if (NR == 1 || n[NR] > n1) n1 = n[NR]
	  if (NR == 1 || t[NR] < t0) t0 = t[NR]; if (NR == 1 || t[NR] > t1) t1 = t[NR] }
	END {
	  n0 -= 0.1; n1 += 0.1; t0 = int(t0) - 1; t1 = int(t1) + 1
	  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
	  printf "<text x=\"%d\" y=\"20\">top-10 outliers of 2-D Gaussian rows, k = 5: compute ms against rows (log-log)</text>\n", L
	  for (e = t0; e <= t1; e++) { y = H - B - (e - t0) / (t1 - t0) * (H - B - 40)
	    printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"5\" y=\"%.1f\">%g ms</text>\n", L, W - 20, y, y, y + 4, 10 ^ e }
	  for (i = 1; i <= NR; i++) { x = L + (n[i] - n0) / (n1 - n0) * (W - L - 40); y = H - B - (t[i] - t0) / (t1 - t0) * (H - B - 40)
	    c = sp[i] == "on" ? "#d62728" : "#1f77b4"
	    printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">%.3g</text>\n", x, y, c, x - 15, H - 20, 10 ^ n[i]
	    if (prev[sp[i]] != "") printf "<line %s x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", prev[sp[i]], x, y, c
	    prev[sp[i]] = sprintf("x1=\"%.1f\" y1=\"%.1f\"", x, y) }
	  printf "<text x=\"%d\" y=\"40\" fill=\"#d62728\">spatial (on)</text><text x=\"%d\" y=\"55\" fill=\"#1f77b4\">brute force / SolvingSet (off)</text>\n", W - 220, W - 220
	  print "</svg>" }' "$PLOT.data" >"$PLOT"
	rm -f "$PLOT.data"
	echo
	echo "Plot: $PLOT"
fi
