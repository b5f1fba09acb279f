#!/usr/bin/env bash
# src/ folders depend one way (docs/architecture.md): each may include only the folders below it,
# the same order the CMake components link in. A new include that points up fails here with the
# file and the line. The public headers (framelift/) may be included from anywhere.
#   tests/layering/check-includes.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}/src
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
  [api]="arch pipeline infer models media weights jobs lifecycle library net util plan deploy"
  [server]="net util"
  [cli]="server arch api pipeline infer models media weights jobs lifecycle library net util plan deploy"
)
bad=0
for dir in "$src"/*/; do
  folder=$(basename "$dir")
  [ -n "${allowed[$folder]+set}" ] || { echo "layering: src/$folder is not in the table of $0" >&2; bad=1; continue; }
  while IFS=: read -r file line text; do
    target=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$text")
    [ "$target" = "$folder" ] || [ "$target" = framelift ] && continue
    if ! grep -qw "$target" <<<"${allowed[$folder]}"; then
      echo "layering: ${file#"$src"/}:$line includes $target/, above or beside $folder/" >&2
      bad=1
    fi
  done < <(grep -rnE '^#include "[a-z_]+/' "$dir")
done
[ "$bad" = 0 ] && echo "layering: every include in src/ points down ($(ls -d "$src"/*/ | wc -l) folders)"
exit "$bad"
