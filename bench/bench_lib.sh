# Shell helpers the whole-process benchmarks share (bench/pytorch.sh, bench/onnx.sh); sourced after
# they set `work` (a scratch folder).

# seconds of one run of a command (wall clock, whole process: start-up and model load included)
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/last.err" || { cat "$work/last.err" >&2; return 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# RGB PSNR of two videos frame by frame (by index: the two sides stamp frames differently).
psnr() {
  ffmpeg -nostdin -i "$1" -i "$2" -lavfi "[0:v]setpts=N,format=rgb24[a];[1:v]setpts=N,format=rgb24[b];[a][b]psnr" -f null - 2>&1 |
    sed -n 's/.*average:\([0-9.inf]*\).*/\1/p' | tail -1
}
