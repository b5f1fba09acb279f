#!/usr/bin/env bash
# framelift's defaults against eager PyTorch on the CPU (issue 17): the same .pth weights, end to
# end from a real clip to x264, each side a whole process, measured alternately in one run.
#
# The peer (bench/pytorch_peer.py, Debian's python3-torch: the same libtorch 1.13) runs the way
# Real-ESRGAN's video script does (ffmpeg pipe in, one frame at a time, ffmpeg pipe out) in two
# configurations: "default" (fp32, NCHW) and "expert" (channels-last + bf16). framelift runs
# `upscale` with its defaults (--precision auto) and, as the reference, --precision fp32.
# A last row compares the catalog's realesr-animevideov3-x2 (an ncnn export, run natively) with the
# native Compact .pth of the same size.
#   bench/pytorch.sh [BUILD_DIR] [ROUNDS] [JSON_OUT]
# Environment: FRAMELIFT_BENCH_FRAMES (default 48 for Compact, a quarter of it for ESRGAN, whose
# eager fp32 peer takes seconds a frame), FRAMELIFT_BENCH_SIZE (default 320x236),
# FRAMELIFT_BENCH_CPU: "no-bf16" runs both sides as on a CPU without bf16 (FRAMELIFT_CPU_BF16=0;
# the expert peer in channels-last fp32, its fastest there: issue 36), "avx2" also limits oneDNN,
# ATen and framelift's Winograd kernel to AVX2, as on an AVX2-only EPYC; empty: this CPU as it is.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
rounds=${2:-3}
json_out=${3:-$build/bench-pytorch.json}
frames=${FRAMELIFT_BENCH_FRAMES:-48}
size=${FRAMELIFT_BENCH_SIZE:-320x236}
models=$here/.deps/npm/waifu2x/package/models
src=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
[ -x "$build/framelift" ] || { echo "bench/pytorch.sh: $build/framelift not built (run scripts/setup.sh)" >&2; exit 1; }
[ -f "$models/2x-AniScale.pth" ] || { echo "bench/pytorch.sh: npm packages missing (run scripts/setup.sh --deps)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "bench/pytorch.sh: python3-torch missing (apt-get install python3-torch)" >&2; exit 1; }
expert=expert
case ${FRAMELIFT_BENCH_CPU:-} in
  '') ;;
  no-bf16) export FRAMELIFT_CPU_BF16=0; expert=expert-fp32 ;;
  avx2) export FRAMELIFT_CPU_BF16=0 ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 FRAMELIFT_WINOGRAD_ISA=avx2; expert=expert-fp32 ;;
  *) echo "bench/pytorch.sh: FRAMELIFT_BENCH_CPU: expected no-bf16 or avx2, got '$FRAMELIFT_BENCH_CPU'" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_clip() { ffmpeg -nostdin -v error -y -i "$src" -an -vf "scale=${size/x/:}" -frames:v "$2" -c:v ffv1 "$1"; }
make_clip "$work/compact-2x.clip.mkv" "$frames"
make_clip "$work/esrgan-4x.clip.mkv" $((frames / 4))
make_clip "$work/catalog.clip.mkv" "$frames"

# shellcheck source=bench/bench_lib.sh
. "$here/bench/bench_lib.sh"

fl() { "$build/framelift" upscale -i "$clip" -o "$1" -m "$2" -c libx264 --no-job -y --progress none "${@:3}"; }
# The expert peer also keeps glibc from returning freed memory to the kernel: eager PyTorch
# allocates every layer's output afresh, and where page faults are dear (the VMs these numbers
# come from: a conv + PReLU took 103 ms against 15 ms for the conv alone) each 20 MB map would
# otherwise be faulted in again. An expert tunes that away; the default peer runs as it comes.
expert_malloc=(MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 MALLOC_TOP_PAD_=1073741824)
py() {
  case $3 in
    expert*) env "${expert_malloc[@]}" /usr/bin/python3 "$here/bench/pytorch_peer.py" "$2" "$clip" "$1" "$3" ;;
    *) /usr/bin/python3 "$here/bench/pytorch_peer.py" "$2" "$clip" "$1" "$3" ;;
  esac
}
clip=''
nframes() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1"; }

declare -A t
rows=("compact-2x|$models/2x-AniScale.pth" "esrgan-4x|$models/4x-NMKD-YandereNeo-Superlite.pth")
configs=("framelift|fl" "framelift-fp32|fl32" "pytorch-default|pyd" "pytorch-expert|pye")
run_config() {  # row-name weights config out
  clip=$work/$1.clip.mkv
  case $3 in
    fl) fl "$4" "$2" ;;
    fl32) fl "$4" "$2" --precision fp32 ;;
    pyd) py "$4" "$2" default ;;
    pye) py "$4" "$2" "$expert" ;;
    catalog) fl "$4" realesr-animevideov3-x2 ;;
  esac
}
for r in $(seq "$rounds"); do
  for row in "${rows[@]}"; do
    name=${row%%|*}; weights=${row#*|}
    for c in "${configs[@]}"; do
      key=${c#*|}
      t[$name.$key]+="$(timed run_config "$name" "$weights" "$key" "$work/$name.$key.mkv") "
    done
  done
  t[catalog.fl]+="$(timed run_config catalog "" catalog "$work/catalog.fl.mkv") "
done

fps() { echo "$(nframes "$work/$2.clip.mkv") / $1" | bc -l; }
med() { tr ' ' '\n' <<<"${t[$1]}" | grep . | median; }
printf 'CPU: %s%s; pytorch expert = %s\n' "$(lscpu | sed -n 's/^Model name: *//p')" "${FRAMELIFT_BENCH_CPU:+ as $FRAMELIFT_BENCH_CPU}" "$expert"
printf 'Megamind at %s (Compact and the catalog row: %s frames, ESRGAN: %s), libx264, median of %s alternating rounds (whole processes)\n\n' \
  "$size" "$frames" $((frames / 4)) "$rounds"
printf '| model | framelift fps | framelift fp32 fps | pytorch default fps | pytorch expert fps | vs default | vs expert | auto vs fp32 | PSNR auto/fp32 dB | PSNR expert/fp32 dB |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
json="{\"frames\": $frames, \"size\": \"$size\", \"rounds\": $rounds, \"rows\": ["
sep=""
for row in "${rows[@]}"; do
  name=${row%%|*}
  a=$(med "$name.fl"); b=$(med "$name.fl32"); c=$(med "$name.pyd"); d=$(med "$name.pye")
  q1=$(psnr "$work/$name.fl.mkv" "$work/$name.fl32.mkv"); q2=$(psnr "$work/$name.pye.mkv" "$work/$name.fl32.mkv")
  printf '| %s | %.3f | %.3f | %.3f | %.3f | **%.2f** | **%.2f** | %.2f | %s | %s |\n' "$name" "$(fps "$a" "$name")" \
    "$(fps "$b" "$name")" "$(fps "$c" "$name")" "$(fps "$d" "$name")" "$(echo "$c / $a" | bc -l)" "$(echo "$d / $a" | bc -l)" \
    "$(echo "$b / $a" | bc -l)" "$q1" "$q2"
  json+="$sep{\"model\": \"$name\", \"framelift_s\": $a, \"framelift_fp32_s\": $b, \"pytorch_default_s\": $c, \"pytorch_expert_s\": $d}"
  sep=", "
done
cat_s=$(med catalog.fl); com_s=$(med compact-2x.fl)
printf '\ncatalog realesr-animevideov3-x2 (ncnn export, native): %.3f fps; native Compact 2x .pth: %.3f fps; ratio **%.2f**\n' \
  "$(fps "$cat_s" catalog)" "$(fps "$com_s" compact-2x)" "$(echo "$com_s / $cat_s" | bc -l)"
json+="], \"catalog_animevideov3_x2_s\": $cat_s, \"compact_2x_s\": $com_s}"
echo "$json" >"$json_out"
echo "(json: $json_out)"
