#!/usr/bin/env bash
# Includes point one way (docs/architecture.md). Each include that breaks a rule fails here with
# the file and the line:
#   src/X             the folders below X in the table (the order the CMake components link in),
#                     and the public headers framelift/
#   include/framelift framelift/ and standard or third-party headers only: an embedder compiles
#                     them with no src/ on its include path
#   tests/X           what src/X may include, plus framelift/ and tests/support; a few test folders
#                     need more, listed with the reason; the test folders with no src/ folder, and
#                     tests/api (the public API alone), have a list of their own
# An include is judged by its first path component, in quotes or angle brackets alike: a src/
# folder's name in <...> is no third-party header.
#   tests/layering/check-includes.sh [SOURCE_DIR]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
src=$root/src
declare -A allowed=(
  [util]=""
  [net]="util"
  [media]="util"
  [weights]="util"
  [library]="net util"
  [jobs]="media net util"
  [lifecycle]="net util"
  [deploy]="util"
  [arch]="util"
  [plan]="arch library net util"
  [infer]="media weights util"
  [models]="arch infer media weights library net util"
  [pipeline]="arch infer models media weights jobs lifecycle library net util"
  # One run over a video (reader, stage chain, writer), jobs, batches, profile samples: the stages
  # below it know nothing of runs.
  [run]="pipeline arch infer models media weights jobs lifecycle library net util"
  [api]="run arch pipeline infer models media weights jobs lifecycle library net util plan deploy"
  # The server is a client of the public API (framelift/) like any embedder; net and util are
  # what it shares with the library.
  [server]="net util"
  # The CLI is a client of the public API: parsing, printing and exit codes, the work behind
  # framelift/. util/ for its messages (log.h) and text (str.h). server/ is the one exception:
  # `framelift serve` and `serve token` start the server and edit its token store, and the server
  # sits beside the CLI, on top of the API; routing it through framelift/ would put an HTTP
  # server, SQLite and OpenSSL into libframelift.so, which every embedder links.
  [cli]="server util"
)
# tests/X may include what src/X may, and these.
declare -A test_extra=(
  # job_workers_test plays a cloud's metadata service with tests/net's local HTTP server.
  [cli]="net"
  # tiler_geometry_test checks the planner's tile arithmetic against the real tiler.
  [infer]="plan"
  # These run the framelift binary on what they made (tests/cli/cli_runner.h).
  [media]="cli"
  [models]="cli"
  [server]="cli"
)
# Test folders whose list replaces src/'s: those with no src/ folder, and tests/api, which links
# libframelift.so as an embedder does and so may include the public headers alone.
declare -A test_own=(
  [api]=""
  [support]=""
  [data]=""
  [demo]=""
  [examples]=""
  [package]=""
  [layering]=""
  [slurm]=""
  # Shell scripts around bench/speed_grid (issue 37): no sources.
  [speed]=""
  # The catalog's files checked against their SHA-256 with net/sha256.h.
  [catalog]="net"
  # Against the binary, with tests/cli's runner and profile helpers.
  [accuracy]="cli"
  [hostile]="cli"
)
include_pattern='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][A-Za-z0-9_]+/'
# The same line taken apart by bash itself: a process per include made this check take a minute.
include_parts='^[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([A-Za-z0-9_]+)/'
is_src_folder() { [ -d "$src/$1" ]; }
# Whether word $1 is in the space-separated list $2.
listed() { [[ " $2 " == *" $1 "* ]]; }
bad=0
fail() { echo "layering: $*" >&2; bad=1; }

# Fails on each include under DIR whose folder `OK FOLDER` refuses; framelift/ always passes, and
# so do third-party headers in <...>.   check_dir DIR LABEL OK
check_dir() {
  local dir=$1 label=$2 ok=$3
  while IFS=: read -r file line text; do
    [[ $text =~ $include_parts ]] || continue
    local quote=${BASH_REMATCH[1]} target=${BASH_REMATCH[2]}
    [ "$target" = framelift ] && continue
    # <nlohmann/...>, <CLI/...>, <ATen/...>: third-party headers.
    if [ "$quote" != '"' ] && ! is_src_folder "$target"; then continue; fi
    "$ok" "$target" && continue
    fail "${file#"$root"/}:$line includes $target/, which $label/ may not (see $0)"
  done < <(grep -rnE "$include_pattern" "$dir" || true)
}

for dir in "$src"/*/; do
  folder=$(basename "$dir")
  [ -n "${allowed[$folder]+set}" ] || { fail "src/$folder is not in the table of $0"; continue; }
  src_ok() { [ "$1" = "$folder" ] || listed "$1" "${allowed[$folder]}"; }
  check_dir "$dir" "src/$folder" src_ok
done

public_ok() { false; }  # framelift/ is accepted before this is asked
check_dir "$root/include" "include" public_ok
for entry in "$root"/include/*; do
  [ "$(basename "$entry")" = framelift ] || fail "include/$(basename "$entry") is outside include/framelift/"
done

for dir in "$root"/tests/*/; do
  folder=$(basename "$dir")
  if [ -n "${test_own[$folder]+set}" ]; then
    test_allowed=${test_own[$folder]}
  elif [ -n "${allowed[$folder]+set}" ]; then
    test_allowed="${allowed[$folder]} ${test_extra[$folder]:-}"
  else
    fail "tests/$folder is in no table of $0"
    continue
  fi
  test_ok() { [ "$1" = "$folder" ] || [ "$1" = support ] || listed "$1" "$test_allowed"; }
  check_dir "$dir" "tests/$folder" test_ok
done

[ "$bad" = 0 ] && echo "layering: every include points down ($(ls -d "$src"/*/ | wc -l) src folders, include/framelift, $(ls -d "$root"/tests/*/ | wc -l) test folders)"
exit "$bad"
