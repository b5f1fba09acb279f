#!/usr/bin/env bash
# The main job on the bundled sample: sets everything up, then enhances a real clip
# (Megamind.avi from Debian's opencv-doc package) and says where the result is.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh
sample=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
mkdir -p out
build/framelift probe -i "$sample" --fast
start=$(date +%s.%N)
build/framelift run -i "$sample" -o out/demo.mkv -y --pipeline "resize:scale=2:algo=lanczos" --preset veryfast --crf 18
end=$(date +%s.%N)
echo "demo: output in $here/out/demo.mkv ($(awk "BEGIN{printf \"%.1f\", $end-$start}") s)"
