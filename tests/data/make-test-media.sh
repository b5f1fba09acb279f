#!/usr/bin/env bash
# Generates the clips the test suite reads. Test inputs only: the ffmpeg CLI is used here to make
# inputs with known properties, never by framelift itself. Idempotent: existing clips are kept.
set -euo pipefail
out=${1:?usage: make-test-media.sh OUTDIR}
mkdir -p "$out"
cd "$out"
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
make() {  # make NAME CMD...: runs CMD writing to a temp name, then renames, so a cut run is redone
  local name=$1; shift
  [ -s "$name" ] && return 0
  local tmp="tmp.$name"
  "$@" "$tmp"
  mv "$tmp" "$name"
}

cat > subs.srt <<'SRT'
1
00:00:00,200 --> 00:00:01,000
first line

2
00:00:01,200 --> 00:00:01,800
second line
SRT
cat > chapters.txt <<'META'
;FFMETADATA1
title=framelift test clip
[CHAPTER]
TIMEBASE=1/1000
START=0
END=1000
title=Opening
[CHAPTER]
TIMEBASE=1/1000
START=1000
END=2000
title=Ending
META
font=$(ls /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf 2>/dev/null || true)

# 8-bit CFR h264 with AAC audio, SRT subtitles, chapters, metadata and a font attachment.
full_clip() {
  local attach=()
  [ -n "$font" ] && attach=(-attach "$font" -metadata:s:t mimetype=application/x-truetype-font)
  ff -f lavfi -i testsrc2=size=320x240:rate=25:duration=2 -f lavfi -i sine=frequency=440:duration=2 \
     -i subs.srt -i chapters.txt -map 0:v -map 1:a -map 2:s -map_metadata 3 -map_chapters 3 \
     "${attach[@]}" -c:v libx264 -preset veryfast -g 25 -pix_fmt yuv420p -c:a aac -b:a 96k -c:s srt \
     -metadata:s:a language=eng -metadata:s:s language=eng \
     -color_primaries bt709 -color_trc bt709 -colorspace bt709 -color_range tv -f matroska "$1"
}
make cfr_8bit.mkv full_clip

# Variable frame rate: irregular gaps (every third frame is 13 ms late, frame 20 is dropped).
vfr_clip() {
  ff -f lavfi -i testsrc2=size=320x240:rate=25:duration=2 -f lavfi -i sine=frequency=330:duration=2 \
     -vf "settb=1/1000,setpts=N*40+if(eq(mod(N\,3)\,0)\,13\,0),select=not(eq(n\,20))" \
     -fps_mode vfr -enc_time_base:v 1:1000 -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -f matroska "$1"
}
make vfr.mkv vfr_clip

# 10-bit HEVC with HDR10 signalling (PQ, BT.2020) and a rotation flag in MP4.
ten_bit_clip() {
  ff -f lavfi -i testsrc2=size=320x240:rate=24:duration=1 -c:v libx265 -preset ultrafast \
     -x265-params "log-level=error:hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400" \
     -pix_fmt yuv420p10le -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc \
     -tag:v hvc1 -f mp4 "$1.noro.mp4"
  # FFmpeg 5.1 turns the rotate tag into a display matrix only on a stream copy.
  ff -i "$1.noro.mp4" -c copy -metadata:s:v rotate=90 -f mp4 "$1"
  rm -f "$1.noro.mp4"
}
make hdr10_10bit.mp4 ten_bit_clip

# Lossless sources for bit-exact pass-through checks.
ffv1_clip() {
  ff -f lavfi -i testsrc2=size=320x240:rate=30:duration=1 -f lavfi -i sine=duration=1 \
     -c:v ffv1 -pix_fmt yuv420p -c:a flac -f matroska "$1"
}
make ffv1_8bit.mkv ffv1_clip
ffv1_10_clip() {
  ff -f lavfi -i testsrc2=size=160x120:rate=30:duration=1 -c:v ffv1 -pix_fmt yuv444p10le -f matroska "$1"
}
make ffv1_10bit.mkv ffv1_10_clip

# Real footage from Debian's opencv-doc package, trimmed to keep the tests quick.
real_clip() {
  ff -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi -frames:v 48 -c:v ffv1 -pix_fmt yuv420p \
     -an -f matroska "$1"
}
make real_megamind.mkv real_clip

# Bad inputs.
[ -s not_media.mkv ] || printf 'this is a text file, not a video\n%.0s' {1..200} > not_media.mkv
# Cut at 60%: the header promises 48 frames, the file holds about 28.
[ -s truncated.mkv ] || head -c $(( $(stat -c %s real_megamind.mkv) * 6 / 10 )) real_megamind.mkv > truncated.mkv
corrupt_clip() {
  ff -f lavfi -i testsrc2=size=320x240:rate=25:duration=2 -c:v libx264 -preset veryfast -f mpegts "$1"
  # Overwrite bytes inside the video payload (past the header) with garbage.
  local size; size=$(stat -c %s "$1")
  for off in $((size / 3)) $((size / 2)) $((size * 2 / 3)); do
    printf '\xff\x00\x13\x37\xde\xad\xbe\xef%.0s' {1..64} | dd of="$1" bs=1 seek="$off" conv=notrunc status=none
  done
}
make corrupt.ts corrupt_clip
# A video stream with no frames at all (select=0 drops every one), next to a normal audio stream.
zero_clip() {
  ff -f lavfi -i testsrc2=size=320x240:rate=25:duration=1 -f lavfi -i sine=duration=1 -map 0:v -map 1:a \
     -vf "select=0" -c:v libx264 -c:a aac -f matroska "$1"
}
make zero_frames.mkv zero_clip
# 20 frames at 64x48 with a little audio: the early-stop tests (tests/*/early_stops_test.cpp)
# stop and resume a job of it dozens of times, which must take seconds. FFV1 is all keyframes,
# so segments of 4 frames cut exactly.
tiny_clip() {
  ff -f lavfi -i testsrc2=size=64x48:rate=25 -f lavfi -i sine=frequency=440:duration=0.8 -map 0:v -map 1:a \
     -frames:v 20 -c:v ffv1 -c:a flac -f matroska "$1"
}
make tiny_20f.mkv tiny_clip
echo "test media ready in $out"
