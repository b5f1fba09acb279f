#!/usr/bin/env bash
# Runs one libFuzzer target for FRAMELIFT_FUZZ_SECONDS (default 600: the issue's 10 minutes) on
# one core, with a fresh corpus folder seeded from fuzz/corpus/NAME when that exists, and fails
# on the first crash, leak, sanitizer report or timeout (the reproducer is left in the work
# folder and named in the output). Prints the runs made, for the soak report.
#   fuzz/soak.sh build-fuzz/fuzz/fuzz_ncnn_bin
set -euo pipefail
fuzzer=${1:?usage: soak.sh FUZZER [libFuzzer flags...]}
shift
name=$(basename "$fuzzer"); name=${name#fuzz_}
seconds=${FRAMELIFT_FUZZ_SECONDS:-600}
here=$(cd "$(dirname "$0")" && pwd)
work=${FRAMELIFT_FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/framelift-soak-$name.XXXXXX")}
mkdir -p "$work/corpus" "$work/artifacts"
[ -d "$here/corpus/$name" ] && cp -n "$here/corpus/$name"/* "$work/corpus/" 2>/dev/null || true
# -rss_limit_mb: a reader that allocates what a hostile size claims is a bug, not a slow input.
set +e
"$fuzzer" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" 2>&1 | tee "$work/log" | grep -E "^(#[0-9]+ +(DONE|pulse)|stat::|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)" | tail -n 40
rc=${PIPESTATUS[0]}
set -e
runs=$(grep -E '^stat::number_of_executed_units' "$work/log" | awk '{print $2}' | tail -n 1)
crashes=$(find "$work/artifacts" -type f | wc -l)
echo "soak $name: ${seconds}s, ${runs:-?} runs, $crashes crash/leak/timeout artifact(s), exit $rc; log $work/log"
exit "$rc"
