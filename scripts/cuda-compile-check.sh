#!/usr/bin/env bash
# Compiles framelift's CUDA-only code (everything behind FRAMELIFT_WITH_CUDA) on a machine without
# a GPU or a CUDA libtorch: each source that has such code is compiled with its own flags from the
# build's compile_commands.json, plus -DFRAMELIFT_WITH_CUDA=1 and the CUDA toolkit's headers,
# against the libtorch headers the build uses (Debian's ship ATen/cuda and c10/cuda). Syntax and
# types only (-fsyntax-only): nothing is linked or run.
#
#   scripts/cuda-compile-check.sh BUILD_DIR [CUDA_INCLUDE_DIR]
#
# CUDA_INCLUDE_DIR defaults to $CUDA_HOME/include, then /usr/local/cuda/include. Exit 0: every
# such source compiled; 1: one did not (its errors are printed); 2: usage, or no CUDA headers.
set -euo pipefail

build=${1:?usage: cuda-compile-check.sh BUILD_DIR [CUDA_INCLUDE_DIR]}
cuda_include=${2:-${CUDA_HOME:+$CUDA_HOME/include}}
cuda_include=${cuda_include:-/usr/local/cuda/include}
root=$(cd "$(dirname "$0")/.." && pwd)

if [ ! -f "$build/compile_commands.json" ]; then
  echo "cuda-compile-check: $build/compile_commands.json: not found (configure with CMake first)" >&2
  exit 2
fi
if [ ! -f "$cuda_include/cuda_runtime_api.h" ]; then
  echo "cuda-compile-check: $cuda_include/cuda_runtime_api.h: not found (no CUDA toolkit headers)" >&2
  exit 2
fi

mapfile -t sources < <(grep -rl --include='*.cpp' 'FRAMELIFT_WITH_CUDA' "$root/src" | sort)
if [ "${#sources[@]}" -eq 0 ]; then
  echo "cuda-compile-check: no source under $root/src uses FRAMELIFT_WITH_CUDA" >&2
  exit 2
fi

# Debian's libtorch ships the c10/cuda headers but not the one CMake generates for them in a CUDA
# build; for a shared libtorch it defines this one macro.
generated="$build/cuda-check-include"
mkdir -p "$generated/c10/cuda/impl"
printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' > "$generated/c10/cuda/impl/cuda_cmake_macros.h"

failed=0
for src in "${sources[@]}"; do
  # The compile command CMake wrote for this file, with its output replaced by a syntax check.
  cmd=$(python3 - "$build/compile_commands.json" "$src" <<'EOF'
import json, shlex, sys
for entry in json.load(open(sys.argv[1])):
    if entry["file"] == sys.argv[2]:
        args = shlex.split(entry["command"])
        out = [a for i, a in enumerate(args) if a != "-o" and (i == 0 or args[i - 1] != "-o")]
        out = [a for a in out if a != "-c"]
        print(shlex.join(out))
        break
EOF
)
  if [ -z "$cmd" ]; then
    echo "cuda-compile-check: $src: not in $build/compile_commands.json" >&2
    failed=1
    continue
  fi
  # shellcheck disable=SC2086  # the command is a shell-quoted word list
  if eval "$cmd -fsyntax-only -DFRAMELIFT_WITH_CUDA=1 -isystem '$cuda_include' -isystem '$generated'" 2>"$build/cuda-check.err"; then
    echo "ok   ${src#"$root"/}"
  else
    echo "FAIL ${src#"$root"/}"
    cat "$build/cuda-check.err"
    failed=1
  fi
done
exit "$failed"
