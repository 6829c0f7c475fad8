#!/usr/bin/env bash
# Shows what odp_gpu does, on small sample data: installs what is missing,
# builds, installs, starts a throwaway server, and runs test/demo.sql,
# which loads deterministic sample data and calls each analytic once:
#   - the top 10 outliers of 20,005 points with 5 planted outliers;
#   - the 5 nearest neighbours of one point (odp_knn) and of 99 new points
#     (the k-NN join, odp_knn_join);
#   - the pairs of 12 stocks whose daily returns move together (odp_pearson);
#   - the skyline of 1,000 hotels on price, distance and rating (odp_skyline);
#   - the bookings (tstzrange) that overlap maintenance windows
#     (odp_interval_match);
#   - and odp_gpu_info(): whether a GPU is usable.
# After each call's rows, a line "found: ..." says what the call found,
# computed from its result and, where plain SQL can tell, checked against
# it; a line "path=gpu" or "path=cpu" before them says which path ran
# (odp_gpu.report_timing's NOTICE, shortened).  Works without a GPU (every
# call then runs on the CPU path).  After the build it takes well under a
# minute on two cores; the last line gives its seconds.  It then stops the
# server.  Usage: bash test/demo.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
odp_install_deps
odp_build
odp_start_server
odp_log "loading the sample data and calling each analytic"
start=$SECONDS
# psql's NOTICE "odp_gpu timing: FUNCTION path=P rows=N dims=D read=...
# compute=... total=..." becomes "   path=P  (FUNCTION: N rows x D, total ...)".
psql -X -q -v ON_ERROR_STOP=1 -f "$ODP_ROOT/test/demo.sql" 2>&1 |
	sed -E 's/^(psql:[^ ]*: )?NOTICE: +odp_gpu timing: ([a-z_]+) (path=[a-z]+) rows=([0-9]+) dims=([0-9]+) .* total=([0-9.]+ ms).*$/   \3  (\2: \4 rows x \5, total \6)/'
odp_log "demo done in $((SECONDS - start)) s after the build"
