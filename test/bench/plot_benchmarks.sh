#!/usr/bin/env bash
# Draws every benchmark table of test/bench/results as a plot and puts the
# tables and plots into README.md's performance section.
#
# A results file (test/bench/results/NAME.md) is one benchmark's table as
# its run printed it (the columns the README shows), after a few header
# lines:
#   # benchmark: the script that measured it
#   # run: machine, server, date
#   # title: the plot's title
#   # label: the columns (1-based) that name a row on the x axis, each
#     alone (3) or after a prefix (alpha=3)
#   # plot: COLUMN LEGEND | COLUMN LEGEND ...   the bars of each row
#   # readme: detail   (optional) the table stays here as the detail of a
#     summary README.md gives in words: README.md need not have its block
#     (where it has one, it must still match)
# Cells are times ("83 ms", "3.51 s", "46 h"; a parenthesised remark is
# ignored, "a / b" draws a, "> 60 s" a lower bound at 60 s, empty or "-" no
# bar).  Each becomes test/bench/plots/NAME.svg (gnuplot, log scale), and
# README.md's block between "<!-- bench: NAME -->" and "<!-- /bench: NAME
# -->" becomes the table and the plot (a "readme: detail" file without
# such a block gets its plot only).  After a new run: update the results
# file, then run this once.
#
# Usage: test/bench/plot_benchmarks.sh           plots and README (needs gnuplot)
#        test/bench/plot_benchmarks.sh --check   only whether README.md's
#                                                blocks match the results files
set -euo pipefail

bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/../.." && pwd)
readme="$root/README.md"
mode=${1:-plot}

meta() { sed -n "s/^# $1: *//p" "$2" | head -1; }

# The README block for results file $1: its table, then its plot.
block() {
	grep '^|' "$1"
	printf '\n![%s](test/bench/plots/%s.svg)\n' "$(meta title "$1")" "$(basename "$1" .md)"
}

# Whether results file $1 is marked "readme: detail" and README.md has no
# block for it.
detail_only() {
	[ "$(meta readme "$1")" = detail ] &&
		! grep -q "^<!-- bench: $(basename "$1" .md) -->\$" "$readme"
}

# Tab-separated data for gnuplot: the row's label, then for each plotted
# column two: its time in ms and, where the time is a lower bound, that
# bound instead ("?" for none).
to_tsv() {
	awk -F'|' -v labels="$(meta label "$1")" -v plots="$(meta plot "$1" | sed 's/ *| */|/g')" '
		function ms(cell,    v, unit, lb) {
			gsub(/\([^)]*\)/, "", cell)
			lb = cell ~ /^ *>/
			if (!match(cell, /[0-9][0-9,]*(\.[0-9]+)?/))
				return "?\t?"
			v = substr(cell, RSTART, RLENGTH)
			gsub(/,/, "", v)
			unit = substr(cell, RSTART + RLENGTH)
			v += 0
			if (unit ~ /^ *(\/ *[0-9.]+ *)?s( |$)/) v *= 1000
			else if (unit ~ /^ *(\/ *[0-9.]+ *)?min( |$)/) v *= 60000
			else if (unit ~ /^ *(\/ *[0-9.]+ *)?h( |$)/) v *= 3600000
			return lb ? "?\t" v : v "\t?"
		}
		# lines of at most 18 characters where words allow, "~" between them
		function wrap(s,    n, w, out, len, i) {
			n = split(s, w, " ")
			out = w[1]; len = length(w[1])
			for (i = 2; i <= n; i++) {
				if (len + 1 + length(w[i]) > 18) { out = out "~" w[i]; len = length(w[i]) }
				else { out = out " " w[i]; len += 1 + length(w[i]) }
			}
			return out
		}
		BEGIN { nl = split(labels, lc, " "); np = split(plots, pc, "|") }
		/^\|/ && !/^\|[-:| ]+$/ {
			if (!header++) next
			gsub(/\\\|/, "¦")
			label = ""
			for (i = 1; i <= nl; i++) {
				prefix = ""
				col = lc[i]
				if (col ~ /=/) { prefix = col; sub(/[0-9]+$/, "", prefix); sub(/.*=/, "", col) }
				c = $(col + 1); gsub(/^ +| +$/, "", c); gsub(/`/, "", c)
				label = label (i > 1 ? ", " : "") prefix c
			}
			gsub(/¦/, "|", label)
			line = wrap(label)
			for (i = 1; i <= np; i++) {
				split(pc[i], p, " ")
				line = line "\t" ms($(p[1] + 1))
			}
			print line
		}' "$1"
}

# Whether column $2 of data $1 has a value.
has_values() { awk -F'\t' -v c="$2" '$c != "?" { found = 1 } END { exit !found }' "$1"; }

# gnuplot for results file $1 with data $2 into $3: per row a cluster of
# bars, one per plotted column, a lower bound hatched.
plot() {
	local f=$1 data=$2 out=$3 n=0 m using="" legend x col lower=""
	m=$(meta plot "$f" | tr '|' '\n' | wc -l)
	for ((col = 3; col <= 2 * m + 1; col += 2)); do
		has_values "$data" $col && lower=' (hatched: a lower bound, the run stopped there)'
	done
	while IFS= read -r spec; do
		legend=${spec#* }
		x="(\$0 - 0.4 + 0.8 * ($n + 0.5) / $m)"
		using+=", '$data' using $x:$((2 * n + 2)):(0.8 / $m) with boxes title '$legend' lc $((n + 1))"
		has_values "$data" $((2 * n + 3)) &&
			using+=", '' using $x:$((2 * n + 3)):(0.8 / $m) with boxes notitle lc $((n + 1)) fs pattern 4 border"
		n=$((n + 1))
	done < <(meta plot "$f" | tr '|' '\n' | sed 's/^ *//; s/ *$//')
	gnuplot <<GP
set terminal svg size 900,500 dynamic font 'sans,11' background rgb 'white'
set output '$out'
set title "$(meta title "$f" | sed 's/[_^{}@&~]/\\\\&/g')$lower\n{/*0.8 $(meta run "$f")}"
set datafile separator '\t'
set datafile missing '?'
set style fill solid 0.85 border -1
set logscale y
set format y '10^{%L}'
set ylabel 'time, ms (log scale)'
set grid ytics
set key outside top center horizontal Left reverse noenhanced maxcols 3
set xtics nomirror scale 0 noenhanced
lines(s) = strstrt(s, '~') > 0 ? s[1:strstrt(s, '~') - 1] . "\\n" . lines(s[strstrt(s, '~') + 1:]) : s
set ytics nomirror
set border 3
set lmargin 10
set bmargin 5
set offsets 0.5, 0.5, 0, 0
plot '$data' using 0:(1/0):xtic(lines(strcol(1))) notitle$using
GP
}

case "$mode" in
	--check)
		bad=0
		for f in "$bench"/results/*.md; do
			name=$(basename "$f" .md)
			detail_only "$f" && continue
			got=$(sed -n "/^<!-- bench: $name -->\$/,/^<!-- \/bench: $name -->\$/p" "$readme" | sed '1d;$d')
			if [ "$got" != "$(block "$f")" ]; then
				echo "README.md's block \"$name\" differs from test/bench/results/$name.md (run test/bench/plot_benchmarks.sh)"
				bad=1
			fi
		done
		exit $bad
		;;
	plot)
		command -v gnuplot >/dev/null || { echo "needs gnuplot (apt-get install gnuplot-nox)" >&2; exit 1; }
		mkdir -p "$bench/plots"
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		for f in "$bench"/results/*.md; do
			name=$(basename "$f" .md)
			to_tsv "$f" >"$tmp/$name.tsv"
			plot "$f" "$tmp/$name.tsv" "$bench/plots/$name.svg"
			if detail_only "$f"; then
				echo "test/bench/plots/$name.svg ($(wc -c <"$bench/plots/$name.svg") bytes; the table is not in README.md)"
				continue
			fi
			block "$f" >"$tmp/$name.block"
			grep -q "^<!-- bench: $name -->\$" "$readme" || {
				echo "README.md has no \"<!-- bench: $name -->\" block" >&2
				exit 1
			}
			awk -v name="$name" -v blockfile="$tmp/$name.block" '
				$0 == "<!-- bench: " name " -->" {
					print; while ((getline l < blockfile) > 0) print l; skip = 1; next }
				$0 == "<!-- /bench: " name " -->" { skip = 0 }
				!skip' "$readme" >"$tmp/README.md"
			cp "$tmp/README.md" "$readme"
			echo "test/bench/plots/$name.svg ($(wc -c <"$bench/plots/$name.svg") bytes)"
		done
		;;
	*)
		echo "usage: $0 [--check]" >&2
		exit 2
		;;
esac
