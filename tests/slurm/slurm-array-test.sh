#!/usr/bin/env bash
# A prepared job, sharded over a real one-node Slurm cluster with the files `framelift deploy slurm`
# writes: 4 array tasks, then the assembly (afterok). The output must decode to the same frames,
# audio packets and frame count as a single-process `framelift run` with the same options.
#   tests/slurm/slurm-array-test.sh [FRAMELIFT]      (default: build/framelift)
# Needs root (munged runs as munge, slurmd as root). Exit 77 (skip) when Slurm or munge is not
# installed (scripts/setup.sh installs them); any other problem fails.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
framelift=$(realpath "${1:-$here/build/framelift}")
shards=4

# shellcheck source=tests/slurm/slurm-cluster.sh
source "$here/tests/slurm/slurm-cluster.sh"

fail() {
  echo "slurm-array-test: $*" >&2
  exit 1
}

if [ "$(id -u)" -ne 0 ]; then
  echo "slurm-array-test: skipped, needs root to start munged and slurmd" >&2
  exit 77
fi
[ -x "$framelift" ] || fail "no framelift binary at $framelift"
for cmd in resume assemble deploy; do
  "$framelift" "$cmd" --help >/dev/null 2>&1 || fail "$framelift has no '$cmd' command (rebuild it)"
done

work=$(mktemp -d /tmp/framelift-slurm.XXXXXX)
cleanup() {
  # Jobs still queued or running would outlive the daemons and keep writing into $work.
  if [ -n "${SLURM_CONF:-}" ]; then scancel --partition=debug >/dev/null 2>&1 || true; fi
  slurm_cluster_stop
  if [ -z "${FRAMELIFT_KEEP_TEST_FILES:-}" ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
}
trap cleanup EXIT

rc=0
slurm_cluster_start "$work/cluster" || rc=$?
if [ "$rc" -eq 77 ]; then
  echo "slurm-array-test: skipped, Slurm is not installed" >&2
  exit 77
fi
[ "$rc" -eq 0 ] || fail "the test cluster did not start (logs in $work/cluster)"

# 48 frames with keyframes every 12: four segments, one per task. A tone, so that the assembly's
# audio from the source is checked too.
clip=$work/clip.mkv
ffmpeg -v error -f lavfi -i testsrc2=size=160x120:rate=24:duration=2 -f lavfi -i sine=frequency=440:duration=2 \
  -c:v libx264 -g 12 -pix_fmt yuv420p -c:a aac -shortest "$clip"

# Lossless ffv1: the check is that sharding changes nothing, bit for bit. x264 (crf 20, default
# preset) is not repeatable from run to run here even with -e threads=1 (2 of 6 identical runs
# differed; ffv1 6 of 6 identical), which would make this test flaky for the encoder's sake.
options=(--pipeline resize:scale=0.5 --segment-frames 12 -c ffv1 --progress none)
"$framelift" --log-level warn run -i "$clip" -o "$work/ref.mkv" "${options[@]}" --job-dir "$work/ref-job"

# Spaces in the job folder and the output: the generated scripts must quote them.
job_dir="$work/shared job"
output="$work/out put/sharded.mkv"
mkdir -p "$work/out put"
"$framelift" --log-level warn run -i "$clip" -o "$output" "${options[@]}" --job-dir "$job_dir" --prepare
[ ! -e "$output" ] || fail "--prepare wrote the output"
"$framelift" deploy slurm --job-dir "$job_dir" -n "$shards" --gpus 0 --time 10 --framelift "$framelift"

submitted=$("$job_dir/deploy/slurm/submit.sh")
echo "$submitted"
array_id=$(sed -n 's/^array job: //p' <<<"$submitted")
assemble_id=$(sed -n 's/^assemble job: //p' <<<"$submitted")
if [ -z "$array_id" ] || [ -z "$assemble_id" ]; then fail "submit.sh did not print both job ids"; fi

# No accounting on this cluster, so no sacct: wait until both jobs have left the queue.
for _ in $(seq 300); do
  [ -z "$(squeue -h -j "$array_id,$assemble_id" 2>/dev/null)" ] && break
  sleep 1
done
logs=$job_dir/deploy/slurm/logs
[ -z "$(squeue -h -j "$array_id,$assemble_id" 2>/dev/null)" ] || {
  squeue
  tail -n 20 "$logs"/* || true
  fail "jobs still queued after 300 s"
}

for ((k = 0; k < shards; k++)); do
  [ -f "$logs/worker-${array_id}_$k.out" ] || fail "no log for array task $k"
done
[ -f "$logs/assemble-$assemble_id.out" ] || fail "the assembly never ran (a task failed and --kill-on-invalid-dep cancelled it?); logs: $(tail -n 5 "$logs"/*)"
[ -f "$output" ] || fail "no output after the assembly; its log: $(cat "$logs/assemble-$assemble_id.out")"

video_md5() { ffmpeg -v error -i "$1" -map 0:v -f framemd5 - | grep -v '^#'; }
audio_md5() { ffmpeg -v error -i "$1" -map 0:a -c copy -f md5 -; }
frames() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1"; }

ref_frames=$(frames "$work/ref.mkv")
out_frames=$(frames "$output")
echo "frames: reference $ref_frames, sharded $out_frames"
[ "$ref_frames" = 48 ] || fail "reference has $ref_frames frames, expected 48"
[ "$out_frames" = "$ref_frames" ] || fail "sharded output has $out_frames frames, the reference $ref_frames"
if ! diff <(video_md5 "$work/ref.mkv") <(video_md5 "$output") >"$work/video.diff"; then
  head -n 20 "$work/video.diff" >&2
  fail "decoded frames differ from the single-process reference"
fi
ref_audio=$(audio_md5 "$work/ref.mkv")
out_audio=$(audio_md5 "$output")
[ "$ref_audio" = "$out_audio" ] || fail "audio packets differ: reference $ref_audio, sharded $out_audio"
echo "slurm-array-test: $shards array tasks and the assembly match the single-process run ($out_frames frames, audio $out_audio)"
