#!/usr/bin/env bash
# test/checks/layout.sh: checks that the tree keeps the layout DESIGN.md and
# kernels/include/odp_engine.h describe, on a built tree (it reads the
# object files):
#   - includes run one way between kernels/'s folders (analytics -> devices
#     -> gpu -> common -> include; outliers/ may include knn/), src/ includes
#     only kernels/include/, the engine includes no PostgreSQL header and
#     src/ no CUDA header;
#   - src/'s files include each other by their path from src/
#     ("input/input.h", "args.h"), and between src/'s folders includes run
#     one way: distributed/ -> input/ -> service/; every folder may use the
#     files at src/'s top (settings, arguments, engine calls, the analytics'
#     SQL functions), which may use every folder;
#   - no two object files call each other, directly or through a ring, and
#     calls between kernels/'s folders and between src/'s follow the same
#     arrows;
#   - no two functions of src/ and kernels/ have names a letter apart
#     (cpu_ and gpu_ twins excepted);
#   - no file of src/ or kernels/ passes 1,000 lines unless its opening
#     comment has a "Map of this file" paragraph;
#   - no two headers share an include guard.
# Prints "ok"/"FAILED" lines and exits non-zero on a failure.
#   bash test/checks/layout.sh [ROOT]   (ROOT: the project root, built)
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
failed=0
report() {	# name, status, detail
	if [ "$2" -eq 0 ]; then
		echo "ok     $1${3:+ ($3)}"
	else
		echo "FAILED $1"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/       /'
		failed=1
	fi
}

# Which folders a folder of kernels/ may include or call (besides itself).
allowed() {
	case $1 in
	include) echo "include" ;;
	common) echo "common include" ;;
	gpu) echo "gpu common include" ;;
	devices) echo "devices gpu common include" ;;
	outliers) echo "outliers knn devices gpu common include" ;;
	knn | pearson | skyline | intervals) echo "$1 devices gpu common include" ;;
	*) echo "" ;;
	esac
}
folders="include common gpu devices knn outliers pearson skyline intervals"

# The same for src/: which folders a folder of src/ may include or call
# besides itself; "top" stands for the files at src/'s top.
src_allowed() {
	case $1 in
	top) echo "top distributed input service" ;;
	distributed) echo "distributed input service top" ;;
	input) echo "input service top" ;;
	service) echo "service top" ;;
	*) echo "" ;;
	esac
}
src_folders="distributed input service"
# The same, without a subshell (this machine forks slowly): sets $folder
# to a path's folder of src/, or "top".
src_folder() {	# a path under src/
	local p=${1#src/}
	if [[ $p == */* ]]; then folder=${p%%/*}; else folder=top; fi
}
# allowed and src_allowed looked up once, each " a b c " for a match
declare -A may_use src_may_use
for f in $folders; do may_use[$f]=" $(allowed "$f") "; done
for f in top $src_folders; do src_may_use[$f]=" $(src_allowed "$f") "; done

# 1. includes
bad=""
for dir in kernels/*/; do
	f=$(basename "$dir")
	if [[ " $folders " != *" $f "* ]]; then
		bad+="kernels/$f/ is not a folder of the layout"$'\n'
		continue
	fi
	ok=" $(allowed "$f") "
	while IFS=: read -r file inc; do
		target=${inc%%/*}
		if [ "$f" = include ]; then
			[[ "$inc" == */* ]] && bad+="$file includes \"$inc\": the public headers include each other by name"$'\n'
			continue
		fi
		if [[ "$inc" != */* ]]; then
			bad+="$file includes \"$inc\" without its folder"$'\n'
		elif [[ "$ok" != *" $target "* ]]; then
			bad+="$file ($f/) includes \"$inc\" ($target/)"$'\n'
		fi
	done < <(grep -oE '^#include "[^"]+"' "$dir"*.c "$dir"*.h "$dir"*.cu "$dir"*.cuh 2>/dev/null |
		sed 's/#include "\(.*\)"/\1/')
done
for dir in src/*/; do
	f=$(basename "$dir")
	[[ " $src_folders " == *" $f "* ]] || bad+="src/$f/ is not a folder of the layout"$'\n'
done
while IFS=: read -r file inc; do
	src_folder "$file"
	f=$folder
	if [ -f "src/$inc" ]; then
		src_folder "src/$inc"
		[[ "${src_may_use[$f]:-}" == *" $folder "* ]] || bad+="$file ($f) includes \"$inc\" ($folder)"$'\n'
	elif [ "$f" != top ] && [ -f "${file%/*}/$inc" ]; then
		bad+="$file includes \"$inc\" without its folder"$'\n'
	fi
done < <(grep -oE '^#include "[^"]+"' src/*.[ch] src/*/*.[ch] 2>/dev/null | sed 's/#include "\(.*\)"/\1/')
pg=$(grep -nE '^#include [<"](postgres|fmgr|funcapi|miscadmin|pgstat)\.h[>"]|^#include [<"](access|catalog|executor|nodes|storage|utils|commands|parser|lib|port|mb)/' \
	kernels/*/*.c kernels/*/*.h kernels/*/*.cu kernels/*/*.cuh 2>/dev/null)
[ -n "$pg" ] && bad+="PostgreSQL headers in the engine:"$'\n'"$pg"$'\n'
cu=$(grep -nE '^#include [<"](cuda|cub/|thrust/|cublas|nvrtc)' src/*.[ch] src/*/*.[ch] 2>/dev/null)
[ -n "$cu" ] && bad+="CUDA headers in src/:"$'\n'"$cu"$'\n'
while IFS=: read -r file inc; do
	[ -f "kernels/include/$inc" ] || bad+="$file includes \"$inc\", which is not in kernels/include/"$'\n'
done < <(grep -oE '^#include "odp_[^"]+"' src/*.[ch] src/*/*.[ch] 2>/dev/null | sed 's/#include "\(.*\)"/\1/')
report "includes run one way (analytics -> devices -> gpu -> common -> include; src/ -> include/; distributed/ -> input/ -> service/ in src/)" \
	"$([ -z "$bad" ]; echo $?)" "$bad"

guards=$(grep -h '^#ifndef ODP_' src/*.h src/*/*.h kernels/*/*.h kernels/*/*.cuh 2>/dev/null | sort | uniq -d)
report "every header has an include guard of its own" "$([ -z "$guards" ]; echo $?)" "$guards"

# 2. calls between object files
objs=$(ls src/*.o src/*/*.o kernels/*/*.o 2>/dev/null | grep -v '_trace\.o$')
if [ -z "$objs" ]; then
	report "calls run one way (object files)" 1 "no object files: build first (make)"
else
	# one nm for every file: "file.o:value type name" or "file.o: U name"
	# shellcheck disable=SC2086
	calls=$(nm -g -A $objs | awk '
		{ o = substr($1, 1, index($1, ":") - 1) }
		$2 == "U" { print "U", o, $3 }
		NF == 3 && $2 ~ /^[TDBR]$/ { print "D", o, $3 }' |
		awk '
		$1 == "D" { def[$3] = $2 }
		$1 == "U" { use[++n] = $2 " " $3 }
		END {
			for (i = 1; i <= n; i++) {
				split(use[i], u, " ")
				if ((u[2] in def) && def[u[2]] != u[1])
					print u[1], def[u[2]], u[2]
			}
		}' | sort -u)
	# every file that calls a file which (transitively) calls it back
	cycles=$(awk '
		{ e[$1 " " $2] = 1; node[$1]; node[$2]; sym[$1 " " $2] = sym[$1 " " $2] " " $3 }
		END {
			for (k in node) for (i in node) if ((i " " k) in e) for (j in node)
				if ((k " " j) in e) e[i " " j] = 1
			for (a in node) for (b in node)
				if (a < b && ((a " " b) in e) && ((b " " a) in e))
					print a " <-> " b
		}' <<<"$calls")
	report "no two object files call each other, directly or through a ring" \
		"$([ -z "$cycles" ]; echo $?)" "$cycles"
	upward=""
	while read -r from to name; do
		if [[ $from == kernels/* && $to == kernels/* ]]; then
			ff=${from#kernels/} tf=${to#kernels/}
			ff=${ff%%/*} tf=${tf%%/*}
			[[ "${may_use[$ff]:-}" == *" $tf "* ]] || upward+="$from calls $name in $to"$'\n'
		elif [[ $from == src/* && $to == src/* ]]; then
			src_folder "$from"
			ff=$folder
			src_folder "$to"
			[[ "${src_may_use[$ff]:-}" == *" $folder "* ]] || upward+="$from calls $name in $to"$'\n'
		fi
	done <<<"$calls"
	report "calls between kernels/'s folders and between src/'s follow the same arrows" \
		"$([ -z "$upward" ]; echo $?)" "$upward"
fi

# 3. names a letter apart
near=$(grep -hoE '^[A-Za-z_][A-Za-z0-9_]*\(' src/*.c src/*/*.c kernels/*/*.c kernels/*/*.cu 2>/dev/null |
	tr -d '(' | sort -u | awk '
	function near(a, b,   la, lb, i, t) {
		la = length(a); lb = length(b)
		if (la == lb) {
			d = 0
			for (i = 1; i <= la; i++) if (substr(a, i, 1) != substr(b, i, 1)) { d++; p = i }
			if (d != 1) return 0
			# cpu_/gpu_ twins name the two paths of one thing
			if (substr(a, p, 3) ~ /^[cg]pu$/ && substr(b, p, 3) ~ /^[cg]pu$/) return 0
			return 1
		}
		if (la > lb) { t = a; a = b; b = t; t = la; la = lb; lb = t }
		if (lb - la != 1) return 0
		for (i = 1; i <= lb; i++)
			if (substr(b, 1, i - 1) substr(b, i + 1) == a) return 1
		return 0
	}
	length($0) >= 5 { name[++n] = $0 }
	END {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (near(name[i], name[j])) print name[i] " / " name[j]
	}')
report "no two functions of src/ and kernels/ have names a letter apart" \
	"$([ -z "$near" ]; echo $?)" "$near"

# 4. long files carry a map
long=""
for f in src/*.[ch] src/*/*.[ch] kernels/*/*.[ch] kernels/*/*.cu kernels/*/*.cuh; do
	[ -f "$f" ] || continue
	n=$(wc -l <"$f")
	if [ "$n" -gt 1000 ] &&
		! awk 'NR == 1, /^ \*\// { if (/Map of this file/) found = 1 } END { exit !found }' "$f"; then
		long+="$f: $n lines and no \"Map of this file\" in its opening comment"$'\n'
	fi
done
report "files over 1,000 lines open with a map of their sections" \
	"$([ -z "$long" ]; echo $?)" "$long"

exit $failed
