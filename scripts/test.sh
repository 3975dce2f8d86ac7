#!/usr/bin/env bash
# Builds everything (scripts/setup.sh) and runs the C++ and Python tests. Without a GPU the GPU
# tests are skipped and say why; the CPU tests (validation, naming, cache, nvcc compile tests of
# emitted kernels, bad inputs) run everywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${TILECRAFT_BUILD_DIR:-build}
PY=${PYTHON:-python3}
JOBS=${TILECRAFT_TEST_JOBS:-2}
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "TILECRAFT_TEST_JOBS: expected a positive whole number, got '$JOBS'"; exit 2; }
# The include and import rules of the layers first: a break fails in seconds, not after the build.
echo "== layering (scripts/check_layers.py)"
"$PY" scripts/check_layers.py --known scripts/layering_known.txt | { grep -v "^known: " || true; }
# Without a GPU the host code is built at -O1 (a third of a slow two-core machine's CI run is the
# -O3 build; the kernels themselves are nvcc's, at -O3 either way). scripts/setup.sh builds -O3.
if ! { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }; then
  export TILECRAFT_HOST_OPT=${TILECRAFT_HOST_OPT:--O1}
  echo "no GPU (nvidia-smi): host code at $TILECRAFT_HOST_OPT for this test build (TILECRAFT_HOST_OPT)"
fi
bash scripts/setup.sh

# Tests use a private cache and signing key so they neither read nor fill the user's.
case "$BUILD_DIR" in /*) BUILD_PATH=$BUILD_DIR ;; *) BUILD_PATH=$(pwd)/$BUILD_DIR ;; esac
export TILECRAFT_CACHE_DIR=${TILECRAFT_TEST_CACHE_DIR:-$BUILD_PATH/test-cache}
export TILECRAFT_SIGNING_KEY_FILE=${TILECRAFT_TEST_SIGNING_KEY_FILE:-$BUILD_PATH/test-state/signing-key}
# Without a GPU the nvcc compiles of CUTLASS modules are most of the run's time: compile only the
# seed's SIMT GEMM module (TILECRAFT_COMPILE_TESTS=few);
# with one, a module of every family (standard). scripts/gpu_run.sh compiles the full grouped and
# convolution sets.
if "$PY" -c "import sys, tilecraft._core as c; r = c.cuda_device_available(); print('GPU: ' + (c.device_name() if r is None else 'none (' + r + '): GPU tests will be skipped')); sys.exit(0 if r is None else 3)"; then
  export TILECRAFT_COMPILE_TESTS=${TILECRAFT_COMPILE_TESTS:-standard}
else
  export TILECRAFT_COMPILE_TESTS=${TILECRAFT_COMPILE_TESTS:-few}
fi
echo "nvcc compile tests: TILECRAFT_COMPILE_TESTS=$TILECRAFT_COMPILE_TESTS (few, standard or full)"

echo "== C++ tests (ctest -j $JOBS)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"

echo "== the installed C++ package (scripts/check_install.sh: cmake --install, find_package)"
bash scripts/check_install.sh "$BUILD_DIR"

# pytest runs as $JOBS sessions side by side (TILECRAFT_TEST_SHARD=k/n: every n-th test), each with
# a cache and key of its own; the first prints as it goes, the others when they end. A tilecraft
# object that outlives its session fails it (tests/python/live_objects.py says what holds it).
echo "== Python tests (pytest: $JOBS sessions side by side)"
logs=$(mktemp -d)
pids=()
run_shard() {
  TILECRAFT_TEST_SHARD=$1/$JOBS TILECRAFT_TEST_CHECK_LIVE=1 \
    TILECRAFT_CACHE_DIR="$TILECRAFT_CACHE_DIR-pytest-$1" \
    TILECRAFT_SIGNING_KEY_FILE="$TILECRAFT_SIGNING_KEY_FILE-pytest-$1" \
    "$PY" -m pytest tests/python -rs -q -p no:cacheprovider "${@:2}"
}
for ((k = 1; k < JOBS; k++)); do
  run_shard "$k" "$@" >"$logs/shard-$k.log" 2>&1 &
  pids+=($!)
done
set +e
run_shard 0 "$@"
codes=($?)
for ((k = 1; k < JOBS; k++)); do
  wait "${pids[k - 1]}"
  codes+=($?)
  echo "== pytest session $k of $JOBS"
  cat "$logs/shard-$k.log"
done
set -e
rm -rf "$logs"
# Exit code 5 means a session collected nothing: fine for one of several (a narrow -k), but all
# of them collecting nothing must not pass silently.
status=0
empty=0
for ((k = 0; k < JOBS; k++)); do
  if [ "${codes[k]}" -eq 5 ]; then empty=$((empty + 1)); continue; fi
  if [ "${codes[k]}" -ne 0 ] && [ $status -eq 0 ]; then status=${codes[k]}; fi
done
if [ $empty -eq "$JOBS" ]; then echo "pytest collected no tests"; status=1; fi
echo "pytest sessions' exit codes: ${codes[*]}"
exit $status
