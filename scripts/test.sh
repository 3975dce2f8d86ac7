#!/usr/bin/env bash
# Builds everything (scripts/setup.sh) and runs the C++ and Python tests. Without a GPU the GPU
# tests are skipped and say why; the CPU tests (validation, naming, cache, nvcc compile tests of
# emitted kernels, bad inputs) run everywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${TILECRAFT_BUILD_DIR:-build}
PY=${PYTHON:-python3}
bash scripts/setup.sh

# Tests use a private cache and signing key so they neither read nor fill the user's.
export TILECRAFT_CACHE_DIR=${TILECRAFT_TEST_CACHE_DIR:-$(pwd)/$BUILD_DIR/test-cache}
export TILECRAFT_SIGNING_KEY_FILE=${TILECRAFT_TEST_SIGNING_KEY_FILE:-$(pwd)/$BUILD_DIR/test-state/signing-key}
# Without a GPU the nvcc compiles of CUTLASS modules are most of the run's time: compile the seed's
# SIMT GEMM module and the SIMT kernel the artifact tests load (TILECRAFT_COMPILE_TESTS=few);
# with one, a module of every family (standard). scripts/gpu_run.sh compiles the full set.
if "$PY" -c "import sys, tilecraft._core as c; r = c.cuda_device_available(); print('GPU: ' + (c.device_name() if r is None else 'none (' + r + '): GPU tests will be skipped')); sys.exit(0 if r is None else 3)"; then
  export TILECRAFT_COMPILE_TESTS=${TILECRAFT_COMPILE_TESTS:-standard}
else
  export TILECRAFT_COMPILE_TESTS=${TILECRAFT_COMPILE_TESTS:-few}
fi
echo "nvcc compile tests: TILECRAFT_COMPILE_TESTS=$TILECRAFT_COMPILE_TESTS (few, standard or full)"

echo "== C++ tests (ctest)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${TILECRAFT_TEST_JOBS:-2}"

echo "== Python tests (pytest)"
set +e
# A tilecraft object that outlives the session fails it (tests/python/live_objects.py says what holds it).
TILECRAFT_TEST_CHECK_LIVE=1 "$PY" -m pytest tests/python -rs -q "$@"
rc=$?
set -e
# Exit code 5 means pytest collected nothing: that must not pass silently.
if [ $rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi
exit $rc
