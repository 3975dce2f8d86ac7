#!/usr/bin/env bash
# On a bare GPU machine (no registry): build from scratch with every core, then run the C++ and
# Python test suites with the GPU tests, the examples and the benchmarks. Logs go to $1.
#   bash scripts/gpu_run.sh OUTDIR [tests|tests90|sanitizer|examples|bench|bench90|tune|suite|grouped|conv|evtbench|evt|evtsanitizer|multigpu|all]...
# Needs the CUTLASS headers in .deps/cutlass (carry it) or CUTLASS_DIR.
# Kernels compiled on an earlier machine of the same kind come back as OUTDIR/kernel-cache.tgz;
# carry it as .gpu-cache/kernel-cache.tgz and they are not compiled again (SAVE_KERNEL_CACHE=0:
# not saved).
#   TESTS90_K=expr        tests90 runs only the SM90 GPU tests matching pytest -k expr
#   BENCH90="gemm fused"  bench90 runs only these bench/bench_sm90_<name>.py scripts
#   EVT_K=expr            evt / evtsanitizer run only the epilogue-graph GPU tests matching -k expr
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_run.sh OUTDIR [parts...]}
shift
PARTS=${*:-all}
mkdir -p "$OUT"
export TILECRAFT_OFFLINE=1 PYTHONUNBUFFERED=1
# The cache and the key that signs it travel together in kernel-cache.tgz (both under /tmp).
export TILECRAFT_CACHE_DIR=/tmp/tilecraft-gpu-cache
export TILECRAFT_SIGNING_KEY_FILE=/tmp/tilecraft-gpu-state/signing-key
export TILECRAFT_COMPILE_JOBS=${TILECRAFT_COMPILE_JOBS:-$(nproc)}
export TILECRAFT_BUILD_DIR=${TILECRAFT_BUILD_DIR:-build-gpu}
PY=${PYTHON:-python3}
want() { [[ " $PARTS " == *" all "* || " $PARTS " == *" $1 "* ]]; }
status=0
LOGS=$(mktemp -d)
# step NAME command...: runs it, keeps its log, appends it to $OUT/all.log (one file, so that the
# device tool's limit on returned files is never hit), remembers failure.
# The step's log is written to $OUT/running.log as it goes, so that a run stopped by the device's
# time limit still brings back what the step in flight had printed.
step() {
  local name=$1; shift
  local t0=$(date +%s)
  echo "== $name: $*"
  "$@" 2>&1 | tee "$OUT/running.log" >"$LOGS/$name.log"
  local rc=${PIPESTATUS[0]}
  rm -f "$OUT/running.log"
  echo "== $name: rc=$rc in $(( $(date +%s) - t0 )) s"
  tail -n 25 "$LOGS/$name.log"
  { echo "===== $name (rc=$rc): $*"; cat "$LOGS/$name.log"; } >>"$OUT/all.log"
  [ $rc -eq 0 ] || status=1
  return $rc
}

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; $PY --version; } 2>&1 | tee -a "$OUT/all.log"
if [ -f .gpu-cache/kernel-cache.tgz ]; then
  tar -xzf .gpu-cache/kernel-cache.tgz -C /tmp &&
    echo "seeded the kernel cache with $(find "$TILECRAFT_CACHE_DIR" -name module.so | wc -l) modules"
fi
# The device tool returns files of at most 16 MiB: a larger archive is dropped with a note.
save_cache() {
  [ -d "$TILECRAFT_CACHE_DIR" ] && [ "${SAVE_KERNEL_CACHE:-1}" != 0 ] || return 0
  tar -czf "$OUT/kernel-cache.tgz" -C /tmp tilecraft-gpu-cache tilecraft-gpu-state || return 0
  local bytes=$(stat -c %s "$OUT/kernel-cache.tgz")
  if [ "$bytes" -gt $((16 * 1024 * 1024)) ]; then
    rm -f "$OUT/kernel-cache.tgz"
    echo "kernel cache is $((bytes / 1048576)) MiB compressed, over the 16 MiB a returned file may" \
      "have: not saved (clear .gpu-cache or carry fewer kernels)"
  else
    echo "saved $(find "$TILECRAFT_CACHE_DIR" -name module.so | wc -l) modules to kernel-cache.tgz"
  fi
}
trap save_cache EXIT
trap 'exit 124' TERM
step setup bash scripts/setup.sh || { echo "setup failed"; exit 1; }

# The Python steps fail when a tilecraft object outlives its session (a leak). Under
# compute-sanitizer, frames of functions that launched CUDA work are kept alive outside Python
# (tests/python/gpu90/frame_retention_repro.py): their locals are cleared first.
if want tests; then
  step ctest ctest --test-dir "$TILECRAFT_BUILD_DIR" --output-on-failure -j "${CTEST_JOBS:-4}"
  TILECRAFT_TEST_CHECK_LIVE=1 step pytest $PY -X faulthandler -m pytest tests/python -rs -v --durations=15 \
    --ignore=tests/python/gpu90 --ignore=tests/python/gpu_grouped --ignore=tests/python/gpu_conv \
    --ignore=tests/python/gpu_evt
fi
if want tests90; then
  TILECRAFT_TEST_CHECK_LIVE=1 step pytest90 $PY -X faulthandler -m pytest tests/python/gpu90 -rs -v --durations=15 \
    ${TESTS90_K:+-k "$TESTS90_K"}
fi
if want sanitizer; then
  TILECRAFT_TEST_CHECK_LIVE=1 TILECRAFT_TEST_RELEASE_HELD_FRAMES=1 step sanitizer compute-sanitizer --tool memcheck --error-exitcode 1 \
    $PY -m pytest tests/python/gpu90 -m sanitizer -rs -q
fi
if want examples; then
  step example_cpp "$TILECRAFT_BUILD_DIR/examples/cpp/gemm_seed004"
  step example_cpp_sm90 "$TILECRAFT_BUILD_DIR/examples/cpp/gemm_sm90_bias_gelu"
  step example_cpp_api "$TILECRAFT_BUILD_DIR/examples/cpp/api_gemm"
  step example_cpp_grouped "$TILECRAFT_BUILD_DIR/examples/cpp/grouped_gemm"
  step example_quickstart $PY examples/python/quickstart.py
  step example_seed004 $PY -W always examples/python/seed004_readme.py
  step example_seed003 $PY examples/python/seed003_api.py
  step example_seed002_evt $PY examples/python/seed002_evt.py
fi
if want tune; then
  step tune_cpp "$TILECRAFT_BUILD_DIR/tests/cpp/tilecraft_tests" \
    --gtest_filter='TunerGpu*:KernelFacts*:FactsIndex*:KernelCacheAdmin*:Tuning*:ShapeBucket*'
  TILECRAFT_TEST_CHECK_LIVE=1 step pytest_ops $PY -X faulthandler -m pytest tests/python/gpu_ops \
    tests/python/test_ops_cli.py -rs -v
  step profile_cli tilecraft profile --shape 4096x4096x4096 --shape 2048x8192x2048 --dtype bf16 \
    --dtype e4m3 --max-candidates 4 --out "$OUT/profile"
fi
# SUITE_ARGS: arguments of bench/bench_tuned_suite.py (e.g. "--set gemm --dtype bf16").
# Its log goes straight to $OUT/suite.log, so that a run cut off by the time limit still tells.
if want suite; then
  echo "== suite: bench/bench_tuned_suite.py ${SUITE_ARGS:-}"
  $PY bench/bench_tuned_suite.py --out "$OUT/suite" ${SUITE_ARGS:-} >"$OUT/suite.log" 2>&1 || status=1
  grep -v "^tilecraft: \[\|compiled \|(background)" "$OUT/suite.log" | tail -n 60
fi
# Grouped GEMM: the compile test of both emitters (parameter layouts checked on the GPU), the GPU
# suite, its sanitizer subset, the seed's grouped example and the MoE benchmark (GROUPED_BENCH:
# its arguments).
if want grouped; then
  TILECRAFT_COMPILE_TESTS=full TILECRAFT_COMPILE_JOBS=$(nproc) step grouped_compile \
    "$TILECRAFT_BUILD_DIR/tests/cpp/tilecraft_tests" --gtest_filter='Grouped*'
  [ -f grouped_smoke.py ] && step grouped_smoke $PY -X faulthandler grouped_smoke.py
  [ -d tests/python/gpu_grouped ] && [ -z "${GROUPED_SKIP_PYTEST:-}" ] && TILECRAFT_TEST_CHECK_LIVE=1 step pytest_grouped \
    $PY -X faulthandler -m pytest tests/python/gpu_grouped -rs -v --durations=15 ${GROUPED_K:+-k "$GROUPED_K"}
  [ -f examples/python/seed002_grouped.py ] && step example_grouped $PY examples/python/seed002_grouped.py
  [ -n "${GROUPED_SANITIZER:-}" ] && TILECRAFT_TEST_CHECK_LIVE=1 TILECRAFT_TEST_RELEASE_HELD_FRAMES=1 \
    step sanitizer_grouped compute-sanitizer --tool memcheck --error-exitcode 1 \
    $PY -m pytest tests/python/gpu_grouped -m sanitizer -rs -q
  if [ -f bench/bench_grouped.py ] && [ -n "${GROUPED_BENCH+x}" ]; then
    echo "== bench_grouped: ${GROUPED_BENCH}"
    $PY bench/bench_grouped.py ${GROUPED_BENCH} >"$OUT/bench_grouped.log" 2>&1 || status=1
    tail -n 60 "$OUT/bench_grouped.log"
  fi
fi
# conv: the convolution compile tests (every kind; CONV_COMPILE_TEST=0 skips them), the api
# tests' kernels compiled at once (CONV_PREWARM=1), the GPU suite
# (CONV_K: pytest -k; CONV_SKIP_PYTEST=1 skips it), its sanitizer subset (CONV_SANITIZER=1), the
# seed's conv example (a crash gets a native backtrace from cuda-gdb) and the C++ one
# (CONV_SKIP_EXAMPLES=1 skips both) and the conv benchmark (CONV_BENCH: its arguments; unset:
# not run; its log and JSON go straight to $OUT).
if want conv; then
  [ "${CONV_COMPILE_TEST:-1}" != 0 ] && TILECRAFT_COMPILE_TESTS=full step conv_compile \
    "$TILECRAFT_BUILD_DIR/tests/cpp/tilecraft_tests" --gtest_filter='ConvModuleCompile.*'
  # CONV_PREWARM=1: the first-ranked kernels of the api tests are compiled in one parallel batch
  # first (each test would compile its own in turn).
  [ -n "${CONV_PREWARM:-}" ] && step conv_prewarm $PY tests/python/gpu_conv/prewarm_api_kernels.py
  # CONV_TIMEOUT (seconds): the suite is stopped with SIGABRT after it, and faulthandler prints
  # where every thread was (a hung kernel shows as the test waiting in sync).
  [ -d tests/python/gpu_conv ] && [ -z "${CONV_SKIP_PYTEST:-}" ] && TILECRAFT_TEST_CHECK_LIVE=1 step pytest_conv \
    timeout -s ABRT "${CONV_TIMEOUT:-3600}" $PY -X faulthandler -m pytest tests/python/gpu_conv -rs -v \
    --durations=15 ${CONV_K:+-k "$CONV_K"} ${CONV_PYTEST_ARGS:-}
  if [ -z "${CONV_SKIP_EXAMPLES:-}" ] && [ -f examples/python/seed002_conv.py ] && ! step example_conv $PY -X faulthandler examples/python/seed002_conv.py &&
     command -v cuda-gdb >/dev/null; then
    step example_conv_backtrace cuda-gdb -batch -ex run -ex bt -ex "info sharedlibrary" \
      --args $PY examples/python/seed002_conv.py
  fi
  [ -z "${CONV_SKIP_EXAMPLES:-}" ] && step example_cpp_conv "$TILECRAFT_BUILD_DIR/examples/cpp/conv2d"
  [ -d tests/python/gpu_conv ] && [ -n "${CONV_SANITIZER:-}" ] &&
    TILECRAFT_TEST_CHECK_LIVE=1 TILECRAFT_TEST_RELEASE_HELD_FRAMES=1 \
    step sanitizer_conv compute-sanitizer --tool memcheck --error-exitcode 1 \
    $PY -m pytest tests/python/gpu_conv -m sanitizer -rs -q
  if [ -f bench/bench_conv.py ] && [ -n "${CONV_BENCH+x}" ]; then
    echo "== bench_conv: ${CONV_BENCH}"
    timeout -s ABRT "${CONV_BENCH_TIMEOUT:-3600}" $PY -X faulthandler bench/bench_conv.py ${CONV_BENCH} \
      --json "$OUT/bench_conv.json" >"$OUT/bench_conv.log" 2>&1 || status=1
    grep -v "^tilecraft: \[" "$OUT/bench_conv.log" | tail -n 90
  fi
  # CONV_BENCH_EXTRA: arguments of bench/bench_conv_extra.py (grouped, depthwise, 3-D); unset: not run.
  if [ -f bench/bench_conv_extra.py ] && [ -n "${CONV_BENCH_EXTRA+x}" ]; then
    echo "== bench_conv_extra: ${CONV_BENCH_EXTRA}"
    timeout -s ABRT "${CONV_BENCH_TIMEOUT:-3600}" $PY -X faulthandler bench/bench_conv_extra.py \
      ${CONV_BENCH_EXTRA} --json "$OUT/bench_conv_extra.json" >"$OUT/bench_conv_extra.log" 2>&1 || status=1
    grep -v "^tilecraft: \[" "$OUT/bench_conv_extra.log" | tail -n 40
  fi
fi
if want bench; then
  for b in bench/bench_*.py; do
    [[ $b == bench/bench_sm90_* || $b == bench/bench_tuned_suite.py || $b == bench/bench_epilogues.py ]] && continue
    step "$(basename "$b" .py)" $PY "$b"
  done
fi
if want bench90; then
  for b in bench/bench_sm90_*.py; do
    name=$(basename "$b" .py)
    [ -z "${BENCH90:-}" ] || [[ " $BENCH90 " == *" ${name#bench_sm90_} "* ]] || continue
    step "$name" $PY "$b"
  done
fi
# evtbench: bench/bench_epilogues.py, issue 15's five fused epilogues against cuBLAS + torch eager
# and torch.compile (EVTBENCH_ARGS: its arguments; EVTBENCH_TIMEOUT: seconds, default 900, then
# SIGABRT and faulthandler's stacks). Its JSON lines go to $OUT/bench_epilogues.jsonl.
if want evtbench; then
  step bench_epilogues timeout -s ABRT "${EVTBENCH_TIMEOUT:-900}" $PY -X faulthandler \
    bench/bench_epilogues.py --out "$OUT/bench_epilogues.jsonl" ${EVTBENCH_ARGS:-}
fi
# evt: the custom epilogue (epilogue graph, issue 15) GPU suite, SM90 and SM80 items (EVT_K:
# pytest -k, e.g. sm90 or sm80); evtsanitizer: its compute-sanitizer subset (-m sanitizer).
if want evt; then
  TILECRAFT_TEST_CHECK_LIVE=1 step pytest_evt $PY -X faulthandler -m pytest tests/python/gpu_evt -rs -v \
    --durations=15 ${EVT_K:+-k "$EVT_K"}
fi
if want evtsanitizer; then
  TILECRAFT_TEST_CHECK_LIVE=1 TILECRAFT_TEST_RELEASE_HELD_FRAMES=1 step sanitizer_evt compute-sanitizer \
    --tool memcheck --error-exitcode 1 $PY -m pytest tests/python/gpu_evt -m sanitizer -rs -q \
    ${EVT_K:+-k "$EVT_K"}
fi
# multigpu: the two-GPU suite (issue 16; skips with its reason on fewer than two devices), then
# its compute-sanitizer subset (MULTIGPU_SANITIZER=0 skips it; MULTIGPU_K: pytest -k).
if want multigpu; then
  nvidia-smi topo -m 2>&1 | head -n 8
  TILECRAFT_TEST_CHECK_LIVE=1 step pytest_multigpu $PY -X faulthandler -m pytest tests/python/gpu_multi \
    -rs -v --durations=15 ${MULTIGPU_K:+-k "$MULTIGPU_K"}
  [ "${MULTIGPU_SANITIZER:-1}" != 0 ] && TILECRAFT_TEST_CHECK_LIVE=1 TILECRAFT_TEST_RELEASE_HELD_FRAMES=1 \
    step sanitizer_multigpu compute-sanitizer --tool memcheck --error-exitcode 1 \
    $PY -m pytest tests/python/gpu_multi -m sanitizer -rs -q ${MULTIGPU_K:+-k "$MULTIGPU_K"}
fi
exit $status
