#!/usr/bin/env bash
# Pass-through transcode: framelift vs the ffmpeg CLI with the same encoder settings on the same
# clip, measured alternately in one run. Prints a table and the throughput ratio (goal >= 0.95).
#   bench/transcode.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Real footage, lengthened to ~10 s so the fixed start-up cost does not dominate.
src=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
clip=$work/clip.mkv
ffmpeg -nostdin -v error -stream_loop 3 -i "$src" -c:v ffv1 -an "$clip"
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$clip")
enc=(-c libx264 --preset veryfast --crf 23)

time_of() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
peak_kib() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
fl=() ff=()
for ((i = 0; i < rounds; i++)); do
  fl+=("$(time_of "$build/framelift" run -i "$clip" -o "$work/fl.mkv" -y "${enc[@]}" --progress none)")
  ff+=("$(time_of ffmpeg -nostdin -y -i "$clip" -c:v libx264 -preset veryfast -crf 23 "$work/ff.mkv")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
fl_t=$(median "${fl[@]}")
ff_t=$(median "${ff[@]}")
printf '%-34s %8s %10s\n' "pass-through transcode ($frames frames)" "median s" "frames/s"
printf '%-34s %8.2f %10.1f\n' "framelift run (libx264 veryfast)" "$fl_t" "$(echo "$frames / $fl_t" | bc -l)"
printf '%-34s %8.2f %10.1f\n' "ffmpeg CLI (libx264 veryfast)" "$ff_t" "$(echo "$frames / $ff_t" | bc -l)"
printf 'ratio framelift/ffmpeg throughput: %.3f (goal >= 0.95)\n' "$(echo "$ff_t / $fl_t" | bc -l)"

# Back-pressure: peak memory must not grow with the length of the video.
long=$work/long.mkv
ffmpeg -nostdin -v error -stream_loop 11 -i "$src" -c:v ffv1 -an "$long"
short_kib=$(peak_kib "$build/framelift" run -i "$clip" -o "$work/m1.mkv" -y "${enc[@]}" --progress none)
long_kib=$(peak_kib "$build/framelift" run -i "$long" -o "$work/m2.mkv" -y "${enc[@]}" --progress none)
printf 'peak memory: %d MiB for %s frames, %d MiB for 3x as many (ratio %.2f; flat is ~1.0)\n' \
  $((short_kib / 1024)) "$frames" $((long_kib / 1024)) "$(echo "$long_kib / $short_kib" | bc -l)"
