#!/usr/bin/env bash
# The library as an embedder gets it: `cmake --install` into a fresh prefix, every public header
# compiled alone against that prefix (and free of libtorch and FFmpeg includes), the SONAME, the
# examples configured and built out of tree with find_package(framelift), a program built with
# pkg-config, and each run on real input.
#   tests/examples/check-examples.sh BUILD_DIR MEDIA_DIR
set -euo pipefail
build=$1
media=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "check-examples: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
# No `producer | grep -q` or `| head` here: under pipefail the producer's SIGPIPE, when the reader
# stops early, fails the step at random. Whole outputs are searched (<<<) instead.
lib=$(find "$prefix" -name 'libframelift.so' -print -quit)
[ -n "$lib" ] || fail "no libframelift.so under $prefix"
grep -q 'SONAME.*\[libframelift\.so\.0\]' <<<"$(readelf -d "$lib")" || fail "$lib: SONAME is not libframelift.so.0"
[ -x "$prefix/bin/framelift" ] || fail "the CLI was not installed"
for h in "$prefix"/include/framelift/*.h; do
  printf '#include <framelift/%s>\n' "$(basename "$h")" | g++ -std=c++20 -Wall -Wextra -fsyntax-only -I"$prefix/include" -x c++ - ||
    fail "$h does not compile on its own"
done
if grep -rqE '#include *[<"](torch|ATen|c10|libav[a-z]*|libsw[a-z]*)/' "$prefix/include"; then
  fail "an installed header includes libtorch or FFmpeg"
fi
echo "installed: $(basename "$lib") ($(grep -o -m 1 'libframelift\.so\.[0-9]*' <<<"$(readelf -d "$lib")")), headers compile alone"

for ex in upscale_file frames_from_memory plan_job; do
  cmake -S "$src/examples/$ex" -B "$work/$ex" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$work/$ex.configure.log" 2>&1 ||
    { cat "$work/$ex.configure.log"; fail "$ex: configure failed"; }
  cmake --build "$work/$ex" >"$work/$ex.build.log" 2>&1 || { cat "$work/$ex.build.log"; fail "$ex: build failed"; }
done
echo "examples built out of tree with find_package(framelift)"

# pkg-config, as a Makefile would use it.
cat >"$work/version.cpp" <<'CPP'
#include <framelift/framelift.h>
#include <cstdio>
int main() { std::printf("%s\n", framelift::version()); }
CPP
pc_dir=$(dirname "$(find "$prefix" -name framelift.pc -print -quit)")
# shellcheck disable=SC2046
g++ "$work/version.cpp" -o "$work/version" $(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs framelift) ||
  fail "a program built with pkg-config --cflags --libs framelift did not link"
got=$(LD_LIBRARY_PATH=$(dirname "$lib") "$work/version")
[ "$got" = "$(PKG_CONFIG_PATH=$pc_dir pkg-config --modversion framelift)" ] || fail "version $got differs from framelift.pc"
echo "pkg-config: built and ran, version $got"

"$work/frames_from_memory/frames_from_memory" "resize:scale=2" >"$work/memory.log" || { cat "$work/memory.log"; fail "frames_from_memory failed"; }
grep -q "out 128x96" "$work/memory.log" || { cat "$work/memory.log"; fail "frames_from_memory: not 128x96 out"; }
grep -q "4 frames out of 4 in" "$work/memory.log" || { cat "$work/memory.log"; fail "frames_from_memory: frames lost"; }
echo "frames_from_memory: 4 frames 64x48 -> 128x96"

out=$work/up.mkv
"$work/upscale_file/upscale_file" "$media/real_megamind.mkv" "$out" realesr-animevideov3-x2 6 >"$work/upscale.log" 2>&1 ||
  { cat "$work/upscale.log"; fail "upscale_file failed"; }
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames,width -of csv=p=0 "$out")
in_width=$(ffprobe -v error -select_streams v:0 -show_entries stream=width -of csv=p=0 "$media/real_megamind.mkv")
[ "$frames" = "$((in_width * 2)),6" ] || { cat "$work/upscale.log"; fail "upscale_file: got '$frames' (width,frames), want $((in_width * 2)),6"; }
grep -q "^progress: " "$work/upscale.log" || fail "upscale_file: no progress callback"
echo "upscale_file: 6 real frames upscaled x2 to ${in_width}x2 wide, progress reported"
"$work/plan_job/plan_job" "$media/real_megamind.mkv" "upscale:model=realesrgan-x4plus" 3600 >"$work/plan.log" 2>&1 ||
  { cat "$work/plan.log"; fail "plan_job failed"; }
grep -q "Recommended" "$work/plan.log" && grep -q "<- recommended" "$work/plan.log" ||
  { cat "$work/plan.log"; fail "plan_job: no recommendation"; }
echo "plan_job: $(head -n 1 "$work/plan.log")"
echo "check-examples: ok"
