#!/usr/bin/env bash
# The README's main command end to end (scripts/demo.sh, setup included: idempotent after the
# test setup), on 6 frames of the bundled clip: the output must be full size (720x528), twice the
# frame count, and the before/after picture must exist.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
FRAMELIFT_DEMO_OUT=$out "$here/scripts/demo.sh" 6
video=$out/demo-upscaled.mkv
size=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0 "$video")
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$video")
pic=$(ffprobe -v error -show_entries stream=width,height -of csv=p=0 "$out/demo-before-after.png")
echo "demo output: $size, $frames frames; before/after $pic"
[ "$size" = "720,528" ] || { echo "expected 720x528, got $size" >&2; exit 1; }
[ "$frames" = "12" ] || { echo "expected 12 frames (6 at twice the rate), got $frames" >&2; exit 1; }
[ "$pic" = "640,240" ] || { echo "expected a 640x240 before/after image, got $pic" >&2; exit 1; }
