#!/usr/bin/env bash
# The ONNX interpreter against ONNX Runtime (issue 31): exports seeded networks with Debian's
# python3-torch (onnx_cases.py), runs them in ONNX Runtime's CPU library from the onnxruntime-node
# npm package (onnx_ort.js), then test_models' OnnxOrt.* compare framelift's outputs with those;
# onnx_builder_cases.cpp adds hand-built graphs of what PyTorch 1.13 cannot export.
# Nothing expected is produced by framelift. Exits 77 (skip) when python3-torch or the package is
# missing (scripts/setup.sh --tests installs both).
#   tests/models/onnx_ort_check.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: onnx_ort_check.sh BUILD_DIR}
ort=$root/.deps/npm/onnxruntime-node/package
# Debian's interpreter: python3-torch is installed for it, not for a pyenv or venv python on PATH.
python=/usr/bin/python3
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "onnx_ort_check: python3-torch is not installed (scripts/setup.sh --tests)"; exit 77
fi
if [ ! -f "$ort/package.json" ]; then
  echo "onnx_ort_check: $ort is missing (scripts/setup.sh --tests)"; exit 77
fi
cases=$build/onnx-cases
rm -rf "$cases"
"$python" -W ignore "$here/onnx_cases.py" "$cases" 2> "$cases.export.log" || { tail -n 20 "$cases.export.log"; exit 1; }
# Graphs PyTorch cannot export, hand-built (tests/models/onnx_builder_cases.cpp), into the same list.
FRAMELIFT_ONNX_WRITE=$cases "$build/tests/test_models" --gtest_filter='OnnxBuilderCases.*' >/dev/null
node "$here/onnx_ort.js" "$ort" "$cases"
FRAMELIFT_ONNX_CASES=$cases "$build/tests/test_models" --gtest_filter='OnnxOrt.*'
