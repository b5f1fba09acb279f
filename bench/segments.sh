#!/usr/bin/env bash
# Warm segments: a 48-frame job in 12 segments against the same job in one segment, with the
# pipeline built once per worker (the default) and afresh for every segment (--cold-segments,
# the reference path). Measured alternately in one run; prints a table and the ratios
# (goal: 12 warm segments within 5% of one segment).
#   bench/segments.sh [BUILD_DIR] [ROUNDS] [PIPELINE]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
rounds=${2:-3}
pipeline=${3:-resize:scale=0.5,upscale:model=realesr-animevideov3-x2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clip=$work/clip.mkv
ffmpeg -nostdin -v error -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi -frames:v 48 -c:v ffv1 -an "$clip"

time_of() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
job() { "$build/framelift" run -i "$clip" -o "$work/out.mkv" -y -c ffv1 --progress none --pipeline "$pipeline" "$@"; }
one=() warm=() cold=()
for ((i = 0; i < rounds; i++)); do
  one+=("$(time_of job --segment-frames 48)")
  warm+=("$(time_of job --segment-frames 4)")
  cold+=("$(time_of job --segment-frames 4 --cold-segments)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
t1=$(median "${one[@]}") tw=$(median "${warm[@]}") tc=$(median "${cold[@]}")
printf '48 frames, %s (%d rounds, medians)\n' "$pipeline" "$rounds"
printf '%-36s %9s %8s\n' "job" "seconds" "vs one"
printf '%-36s %9.2f %8.3f\n' "1 segment" "$t1" 1
printf '%-36s %9.2f %8.3f\n' "12 segments, warm (default)" "$tw" "$(echo "$tw / $t1" | bc -l)"
printf '%-36s %9.2f %8.3f\n' "12 segments, cold (--cold-segments)" "$tc" "$(echo "$tc / $t1" | bc -l)"
printf 'ratio 12 warm / 1 segment: %.3f (goal <= 1.05)\n' "$(echo "$tw / $t1" | bc -l)"
