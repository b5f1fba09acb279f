#!/usr/bin/env bash
# A CPU rehearsal of scripts/gpu-check.sh's offline build, as the lent H200 would run it, on the
# Debian 12 development machine: libtorch found through a python3 `torch` laid out as PyTorch's pip
# package lays it out (torch.utils.cmake_prefix_path), FFmpeg and the other build dependencies
# from .gpu-carry only (PKG_CONFIG_LIBDIR hides the system's .pc files), nothing fetched.
#
#   scripts/gpu-rehearse.sh [TARGETS...]   (default: fl_util fl_media)
#
# Debian's python3-torch cannot be used as it is: its torch.utils.cmake_prefix_path
# (/usr/lib/python3/dist-packages/torch/share/cmake) does not exist, Debian keeps the CMake config in
# libtorch-dev under /usr/lib/x86_64-linux-gnu/cmake. So this makes a stand-in package in
# $GPU_REHEARSAL_TORCH (/tmp/gpu-rehearsal-torch): torch/{include,lib,share/cmake/{Torch,Caffe2}}
# pointing at Debian's libtorch 1.13 (CPU), its CMake files rewritten for that layout, and a
# torch/__init__.py answering what gpu-check.sh asks (__file__, utils.cmake_prefix_path,
# __version__, version.cuda = None).
#
# The build folder is $GPU_REHEARSAL_BUILD (/tmp/gpu-rehearsal-build, outside the checkout); the
# compiles run at nice 19 with FRAMELIFT_BUILD_JOBS (1): the development machine has 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
stand_in=${GPU_REHEARSAL_TORCH:-/tmp/gpu-rehearsal-torch}
build=${GPU_REHEARSAL_BUILD:-/tmp/gpu-rehearsal-build}
carry=${GPU_CHECK_CARRY:-$here/.gpu-carry}
targets=${*:-fl_util fl_media}
die() { echo "gpu-rehearse: $*" >&2; exit 1; }

deb_cmake=/usr/lib/x86_64-linux-gnu/cmake
[ -f "$deb_cmake/Torch/TorchConfig.cmake" ] || die "Debian's libtorch-dev is not installed"
[ -d "$carry" ] || die "no $carry: run scripts/gpu-carry.sh first"

echo "gpu-rehearse: Debian's python3-torch says:"
/usr/bin/python3 -c 'import os, torch, torch.utils
p = torch.utils.cmake_prefix_path
print("  torch", torch.__version__, "CUDA", torch.version.cuda, "cmake_prefix_path", p,
      "(exists)" if os.path.isdir(p) else "(does not exist)")' || echo "  (python3-torch is not installed)"

# The stand-in, made fresh each time (small: links and a few rewritten CMake files).
t=$stand_in/torch
rm -rf "$stand_in" && mkdir -p "$t/lib" "$t/share/cmake"
ln -s /usr/lib/python3/dist-packages/torch/include "$t/include" 2>/dev/null ||
  die "no /usr/lib/python3/dist-packages/torch/include (apt-get install python3-torch)"
for f in /usr/lib/x86_64-linux-gnu/lib{c10,torch,torch_cpu,shm}.so.1.13*; do
  ln -s "$f" "$t/lib/$(basename "$f")"
done
for n in c10 torch torch_cpu shm; do ln -s "lib$n.so.1.13" "$t/lib/lib$n.so"; done
cp -r "$deb_cmake/Torch" "$deb_cmake/Caffe2" "$t/share/cmake/"
# Debian's configs sit four levels below their prefix (lib/x86_64-linux-gnu/cmake/X); the pip
# package's three (share/cmake/X), with the libraries in lib/ and the headers in include/.
sed -i 's|"${CMAKE_CURRENT_LIST_DIR}/../../../../"|"${CMAKE_CURRENT_LIST_DIR}/../../../"|' \
  "$t/share/cmake/Torch/TorchConfig.cmake" "$t/share/cmake/Caffe2/Caffe2Config.cmake"
sed -i 's|"${_IMPORT_PREFIX}/../include"|"${_IMPORT_PREFIX}/include"|g' "$t/share/cmake/Caffe2/Caffe2Targets.cmake"
sed -i 's|${_IMPORT_PREFIX}/x86_64-linux-gnu/|${_IMPORT_PREFIX}/lib/|g' "$t/share/cmake/Caffe2/Caffe2Targets-"*.cmake
cat >"$t/__init__.py" <<'PY'
# A stand-in for PyTorch's pip package (scripts/gpu-rehearse.sh): Debian's libtorch 1.13, CPU only.
import os
__version__ = "1.13.1 (Debian's libtorch, pip-shaped stand-in)"
class version:
    cuda = None
PY
cat >"$t/utils.py" <<'PY'
import os
cmake_prefix_path = os.path.join(os.path.dirname(__file__), "share", "cmake")
PY

export PYTHONPATH=$stand_in${PYTHONPATH:+:$PYTHONPATH}
echo "gpu-rehearse: the stand-in says: $(python3 -c 'import torch, torch.utils; print(torch.__file__, torch.utils.cmake_prefix_path)')"

# Only the carry's .pc files: a libav*, libcurl or libarchive found must be the carried one.
# (gpu-check.sh unpacks .gpu-carry/usr.tar.xz there, or takes an unpacked .gpu-carry/usr.)
carry_usr=$carry/usr
[ -d "$carry_usr" ] || carry_usr=${GPU_CHECK_CARRY_UNPACK:-${TMPDIR:-/tmp}/framelift-gpu-carry}/usr
export PKG_CONFIG_LIBDIR=$carry_usr/lib/x86_64-linux-gnu/pkgconfig:$carry_usr/share/pkgconfig
export GPU_CHECK_BUILD_DIR=$build GPU_CHECK_TARGETS=$targets GPU_CHECK_ALLOW_CPU_TORCH=1 GPU_CHECK_VERBOSE=1
export FRAMELIFT_BUILD_JOBS=${FRAMELIFT_BUILD_JOBS:-1}

echo "gpu-rehearse: == the dry run of the whole offline check"
"$here/scripts/gpu-check.sh" --offline --dry-run
echo "gpu-rehearse: == deps, libtorch, build (${targets}) for real, offline"
nice -n 19 "$here/scripts/gpu-check.sh" --offline --steps deps,libtorch,build

echo "gpu-rehearse: == where the build's dependencies came from"
sed -n -e 's/^\(Torch_DIR\|Caffe2_DIR\|CLI11_DIR\|nlohmann_json_DIR\|GTest_DIR\|PKG_CONFIG_EXECUTABLE\):[A-Z]*=/  \1 = /p' \
  -e 's/^\(pkgcfg_lib_LIBAV_avcodec\|pkgcfg_lib_LIBCURL_curl\|pkgcfg_lib_LIBARCHIVE_archive\):[A-Z]*=/  \1 = /p' "$build/CMakeCache.txt"
# The libav* headers the compiler read (ninja's dependency log).
if [ -f "$build/.ninja_deps" ]; then
  echo "  libavcodec headers read: $(ninja -C "$build" -t deps 2>/dev/null | grep -o '[^ ]*libavcodec/avcodec.h' | sort -u | tr '\n' ' ')"
fi
