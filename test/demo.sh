#!/usr/bin/env bash
# Shows odp_gpu's main job on sample data: installs what is missing,
# builds, installs, starts a throwaway server, loads a table of 20,000
# points with 5 planted outliers, prints the top 10 outliers, and stops
# the server.  Usage: bash test/demo.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
odp_install_deps
odp_build
odp_start_server
psql -X -q -v ON_ERROR_STOP=1 -f "$ODP_ROOT/test/demo.sql"
