#!/usr/bin/env bash
# framelift on an ONNX file against ONNX Runtime's CPU library (issue 31): the same model (the
# waifu2x package's 2x-AniScale Compact, exported from its .pth with Debian's python3-torch), the
# same frames of real footage, end to end to x264, each side a whole process, alternately in one
# run. Rows: ONNX Runtime (bench/onnx_peer.js, onnxruntime-node 1.30), framelift on the .onnx
# (defaults: --precision auto, and --precision fp32), framelift on the .pth twin (native).
#   bench/onnx.sh [BUILD_DIR] [ROUNDS] [JSON_OUT]
# Environment: FRAMELIFT_BENCH_FRAMES (default 24), FRAMELIFT_BENCH_SIZE (default 320x236).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
rounds=${2:-3}
json_out=${3:-$build/bench-onnx.json}
frames=${FRAMELIFT_BENCH_FRAMES:-24}
size=${FRAMELIFT_BENCH_SIZE:-320x236}
pth=$here/.deps/npm/waifu2x/package/models/2x-AniScale.pth
ort=$here/.deps/npm/onnxruntime-node/package
src=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
[ -x "$build/framelift" ] || { echo "bench/onnx.sh: $build/framelift not built (run scripts/setup.sh)" >&2; exit 1; }
[ -f "$pth" ] && [ -f "$ort/package.json" ] || { echo "bench/onnx.sh: npm packages missing (run scripts/setup.sh --tests)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ffmpeg -nostdin -v error -y -i "$src" -an -vf "scale=${size/x/:}" -frames:v "$frames" -c:v ffv1 "$work/clip.mkv"
# The .pth as ONNX, by the same network definition the PyTorch peer uses (dynamic H and W, opset 17).
/usr/bin/python3 -W ignore - "$here/bench" "$pth" "$work/compact-2x.onnx" <<'PY' 2>/dev/null
import sys
sys.path.insert(0, sys.argv[1])
import torch
from pytorch_peer import load
net, scale = load(sys.argv[2])
torch.onnx.export(net.eval(), torch.rand(1, 3, 64, 64), sys.argv[3], opset_version=17, input_names=["input"],
                  output_names=["output"], dynamic_axes={"input": {2: "h", 3: "w"}, "output": {2: "H", 3: "W"}})
PY
w=${size%x*}; h=${size#*x}

# shellcheck source=bench/bench_lib.sh
. "$here/bench/bench_lib.sh"

fl() { "$build/framelift" upscale -i "$work/clip.mkv" -o "$1" -m "$2" -c libx264 --no-job -y --progress none "${@:3}"; }
run_config() {
  case $1 in
    ort) node "$here/bench/onnx_peer.js" "$ort" "$work/compact-2x.onnx" "$work/clip.mkv" "$w" "$h" 2 "$2" ;;
    onnx) fl "$2" "$work/compact-2x.onnx" ;;
    onnx32) fl "$2" "$work/compact-2x.onnx" --precision fp32 ;;
    pth) fl "$2" "$pth" ;;
  esac
}
declare -A t
configs=(ort onnx onnx32 pth)
for r in $(seq "$rounds"); do
  for c in "${configs[@]}"; do t[$c]+="$(timed run_config "$c" "$work/$c.mkv") "; done
done
med() { tr ' ' '\n' <<<"${t[$1]}" | grep . | median; }
fps() { echo "$frames / $1" | bc -l; }
a=$(med ort); b=$(med onnx); c=$(med onnx32); d=$(med pth)
printf 'Megamind at %s, %s frames, 2x-AniScale (Compact), libx264, median of %s alternating rounds (whole processes)\n\n' "$size" "$frames" "$rounds"
printf '| model | ONNX Runtime fps | framelift .onnx fps | framelift .onnx fp32 fps | framelift .pth fps | ORT time / framelift .onnx | .onnx / .pth | PSNR .onnx fp32 vs ORT dB |\n'
printf '|---|---|---|---|---|---|---|---|\n'
printf '| compact-2x | %.3f | %.3f | %.3f | %.3f | **%.2f** | %.2f | %s |\n' "$(fps "$a")" "$(fps "$b")" "$(fps "$c")" "$(fps "$d")" \
  "$(echo "$a / $b" | bc -l)" "$(echo "$b / $d" | bc -l)" "$(psnr "$work/onnx32.mkv" "$work/ort.mkv")"
echo "{\"frames\": $frames, \"size\": \"$size\", \"rounds\": $rounds, \"ort_s\": $a, \"framelift_onnx_s\": $b, \"framelift_onnx_fp32_s\": $c, \"framelift_pth_s\": $d}" >"$json_out"
echo "(json: $json_out)"
