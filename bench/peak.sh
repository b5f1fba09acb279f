#!/usr/bin/env bash
# The CPU's FMA peaks and the heavy layers' fraction of them (issue 36 item 1): builds the fma_peak
# target and runs it; the table goes to stdout (paste it into docs/performance.md under a heading
# with the CPU's name and the date), the JSON to JSON_OUT.
#   bench/peak.sh [BUILD_DIR] [RUNS] [JSON_OUT]
# On a shared machine note the load (uptime, printed first): the figures are medians of RUNS
# runs, and a busy core shows as a lower figure, never a higher one.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
runs=${2:-5}
json_out=${3:-$build/bench-peak.json}
cmake --build "$build" --target fma_peak >&2
echo "load: $(uptime)"
echo "date: $(date -u +%Y-%m-%d)"
"$build/fma_peak" --runs "$runs" --json "$json_out"
echo "JSON: $json_out" >&2
