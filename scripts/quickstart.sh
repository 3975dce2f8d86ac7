#!/usr/bin/env bash
# The main job: build tilecraft, then describe, compile, run and verify a GEMM (seed 004's
# 512x256x128 f32 GEMM) from C++ and from Python. Without a GPU it compiles the kernel and says
# that there is no GPU to run it on.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${TILECRAFT_BUILD_DIR:-build}
bash scripts/setup.sh
echo "== C++: examples/cpp/gemm_seed004.cpp"
"$BUILD_DIR/examples/cpp/gemm_seed004"
echo "== Python: examples/python/quickstart.py"
${PYTHON:-python3} examples/python/quickstart.py
