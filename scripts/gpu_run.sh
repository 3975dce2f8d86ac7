#!/usr/bin/env bash
# The whole check on a machine with a GPU, from a bare checkout: set up (build with every core),
# the tests with every GPU suite, the examples, optionally a compute-sanitizer pass, and the kernel
# cache saved for the next machine. Logs and a summary go to OUT. Benchmarks are run from bench/.
#
#   bash scripts/gpu_run.sh OUT [STREAM ...]
#
# A STREAM is parts joined by commas, run one after another; streams run side by side, each with
# a kernel cache of its own (default: one stream of every part but sanitizer). A stream written
# gpuN:PARTS runs on GPU N alone, gpuN,M:PARTS on those two (CUDA_VISIBLE_DEVICES). Parts:
#   tests      ctest, install, then pytest (each a part of its own too): install is
#              scripts/check_install.sh (the C++ package installed, a find_package consumer built
#              and run); pytest runs tests/python without
#              the suite folders below; pytest=K/N runs only its K-th shard of N (0-based)
#   gpu90 grouped evt conv multi torch
#              a GPU suite (tests/python/gpu90, gpu_grouped, gpu_evt, gpu_conv, gpu_multi,
#              gpu_torch); grouped
#              and conv also compile every module their C++ compile tests know
#              (TILECRAFT_COMPILE_TESTS=full) and run their family's seed example; conv is
#              conv_modules (those compiles) then conv_suite (the suite and the examples)
#   examples   the C++ and Python examples (each checks its result against float64)
#   sanitizer  compute-sanitizer memcheck over every suite's `sanitizer` subset;
#              sanitizer=SUITE over one suite's (e.g. sanitizer=gpu_torch)
#   gtest=FILTER
#              the C++ tests whose names match FILTER (gtest's --gtest_filter), in OUT/gtest.log
#   py=PATH    pytest on one path (a file, a folder, or file::test), in OUT/py-<name>.log;
#              py=PATH@K/N runs only its K-th shard of N (0-based: every N-th item, and only
#              the kernels those items use), in OUT/py-<name>-KofN.log
#   script=PATH
#              a Python benchmark script (e.g. bench/bench_first_call.py), in OUT/script-<name>.log,
#              given the arguments in SCRIPT_ARGS
#   profile=FILE
#              `tilecraft profile --file FILE` (e.g. bench/problems/issue29_gemm.txt): each problem
#              tuned (PROFILE_CANDIDATES, default 8) and timed beside cuBLAS, in OUT/profile-<name>
#   bench      bench/compare_builds.sh against the tree in .scratch/base (another commit's,
#              carried), for each benchmark in BENCHES (';'-separated; default: bench_sm90_gemm,
#              the MoE set of bench_grouped, the ResNet-50 fprop set of bench_conv)
# e.g. bash scripts/gpu_run.sh out gpu0:tests gpu1:gpu90,evt gpu2:grouped,examples gpu3:conv \
#        gpu0,1:multi
#
# Settings: GPU_RUN_COMMIT: the commit to print in the summary (the tree may come without its
# history); GPU_RUN_SECONDS (default 3600): a part still running then is stopped with SIGABRT, so
# that faulthandler says where it was; PYTEST_ARGS: more pytest arguments (e.g. "-k sm90").
# A kernel cache from an earlier run (OUT/kernel-cache.tgz) placed at .gpu-cache/kernel-cache.tgz
# seeds every stream's cache.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_run.sh OUT [STREAM ...]}
shift
STREAMS=("$@")
[ ${#STREAMS[@]} -gt 0 ] || STREAMS=("tests,gpu90,grouped,evt,conv,multi,torch,examples")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DEADLINE=$(($(date +%s) + ${GPU_RUN_SECONDS:-3600}))
export TILECRAFT_OFFLINE=1 PYTHONUNBUFFERED=1 TILECRAFT_TEST_CHECK_LIVE=1
export TILECRAFT_COMPILE_JOBS=${TILECRAFT_COMPILE_JOBS:-$(nproc)}
BUILD=${TILECRAFT_BUILD_DIR:-build-gpu}
export TILECRAFT_BUILD_DIR=$BUILD
SUITES="gpu90 gpu_grouped gpu_evt gpu_conv gpu_multi gpu_torch"

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; python3 --version
  echo "commit: ${GPU_RUN_COMMIT:-unknown (GPU_RUN_COMMIT names it)}"; } 2>&1 |
  tee "$OUT/summary.txt"

# run NAME COMMAND...: until the deadline, its output in OUT/NAME.log; a line in the summary.
run() {
  local name=$1 t0=$SECONDS left=$((DEADLINE - $(date +%s)))
  shift
  timeout -s ABRT "$((left > 1 ? left : 1))" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc in $((SECONDS - t0)) s | $(grep -aE '^=+ .*(passed|failed|error)' \
    "$OUT/$name.log" | tail -n 1)" | tee -a "$OUT/summary.txt"
  return $rc
}
suite() { run "$1" python3 -X faulthandler -m pytest "tests/python/$1" -rs -v --durations=10 ${PYTEST_ARGS:-}; }
sanitized() {
  TILECRAFT_TEST_RELEASE_HELD_FRAMES=1 run "sanitizer_$1" compute-sanitizer --tool memcheck \
    --error-exitcode 1 python3 -m pytest "tests/python/$1" -m sanitizer -rs -q ${PYTEST_ARGS:-}
}

part() {
  case $1 in
    tests) part ctest; part install; part pytest ;;
    ctest) run ctest ctest --test-dir "$BUILD" --output-on-failure -j 12 ;;
    install) TILECRAFT_TEST_JOBS=8 run install bash scripts/check_install.sh "$BUILD" ;;
    pytest | pytest=*)
      local shard=${1#pytest}
      shard=${shard#=}
      TILECRAFT_TEST_SHARD=$shard run "pytest${shard:+-${shard/\//of}}" python3 -X faulthandler \
        -m pytest tests/python -rs -v --durations=10 \
        $(for s in $SUITES; do echo "--ignore=tests/python/$s"; done) ${PYTEST_ARGS:-} ;;
    gpu90) suite gpu90 ;;
    evt) suite gpu_evt ;;
    multi) suite gpu_multi ;;
    torch) suite gpu_torch ;;
    grouped)
      TILECRAFT_COMPILE_TESTS=full run grouped_compile "$BUILD/tests/cpp/tilecraft_tests" \
        --gtest_filter='Grouped*'
      suite gpu_grouped
      run example_grouped python3 examples/python/seed002_grouped.py ;;
    conv) part conv_modules; part conv_suite ;;
    conv_modules)
      TILECRAFT_COMPILE_TESTS=full run conv_compile "$BUILD/tests/cpp/tilecraft_tests" \
        --gtest_filter='ConvModuleCompile.*:ConvModuleClasses.*:DirectConvModuleCompile.*' ;;
    conv_suite)
      run conv_prewarm python3 tests/python/gpu_conv/prewarm_api_kernels.py
      suite gpu_conv
      run example_conv python3 -X faulthandler examples/python/seed002_conv.py
      run example_conv_custom_epilogue python3 -X faulthandler \
        examples/python/conv_custom_epilogue.py
      run example_cpp_conv "$BUILD/examples/cpp/conv2d" ;;
    examples)
      for e in gemm_seed004 gemm_sm90_bias_gelu api_gemm grouped_gemm; do
        run "example_cpp_$e" "$BUILD/examples/cpp/$e"
      done
      for e in quickstart seed004_readme seed003_api seed002_evt; do
        run "example_$e" python3 -W always "examples/python/$e.py"
      done ;;
    sanitizer) for s in $SUITES; do sanitized "$s"; done ;;
    sanitizer=*) sanitized "${1#sanitizer=}" ;;
    gtest=*)
      TILECRAFT_COMPILE_TESTS=full run gtest "$BUILD/tests/cpp/tilecraft_tests" \
        --gtest_filter="${1#gtest=}" ;;
    py=*@*/*)  # one shard of a path's items (and of the kernels they compile)
      local path=${1#py=} shard=${1##*@}
      path=${path%@*}
      TILECRAFT_TEST_SHARD=$shard run "py-$(basename "${path%%::*}" .py)-${shard/\//of}" \
        python3 -X faulthandler -m pytest "$path" -rs -v --durations=10 ${PYTEST_ARGS:-} ;;
    py=*)
      local path=${1#py=}
      run "py-$(basename "${path%%::*}" .py)" python3 -X faulthandler -m pytest "$path" -rs -v \
        --durations=10 ${PYTEST_ARGS:-} ;;
    script=*)
      run "script-$(basename "${1#script=}" .py)" python3 "${1#script=}" ${SCRIPT_ARGS:-} ;;
    profile=*)
      local file=${1#profile=} name
      name=$(basename "$file" .txt)
      run "profile-$name" python3 -m tilecraft.cli profile --file "$file" \
        --max-candidates "${PROFILE_CANDIDATES:-8}" --out "$OUT/profile-$name" ;;
    bench)
      local benches
      IFS=';' read -r -a benches <<<"${BENCHES:-bench_sm90_gemm.py --own-only;bench_grouped.py --set moe;bench_conv.py --set resnet50 --kind fprop}"
      run bench bash bench/compare_builds.sh .scratch/base "$OUT/bench" "${benches[@]}" ;;
    *) echo "unknown part '$1': expected tests, ctest, install, pytest[=K/N], gpu90, grouped, evt," \
         "conv, conv_modules, conv_suite, multi, torch, examples, sanitizer[=SUITE], gtest=FILTER, py=PATH[@K/N], script=PATH, profile=FILE or bench" |
      tee -a "$OUT/summary.txt"
      return 2 ;;
  esac
}

# The cache and the key that signs it travel together; each stream has its own pair, in a folder
# of this run's own (mktemp), never one another user of the machine could have made first.
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tilecraft-gpu-run.XXXXXX")
use_cache() {
  export TILECRAFT_CACHE_DIR=$RUN_DIR/cache-$1
  export TILECRAFT_SIGNING_KEY_FILE=$RUN_DIR/state-$1/signing-key
  if [ -f .gpu-cache/kernel-cache.tgz ]; then
    (umask 077 && mkdir -p "$RUN_DIR/seed-$1" "$RUN_DIR/state-$1") &&
      tar -xzf .gpu-cache/kernel-cache.tgz -C "$RUN_DIR/seed-$1" &&
      cp -a "$RUN_DIR/seed-$1/cache/." "$TILECRAFT_CACHE_DIR/" &&
      cp -a "$RUN_DIR/seed-$1/signing-key" "$TILECRAFT_SIGNING_KEY_FILE"
  fi
}

use_cache setup
run setup bash scripts/setup.sh || { tail -n 40 "$OUT/setup.log"; exit 1; }
i=0
for stream in "${STREAMS[@]}"; do
  i=$((i + 1))
  (
    if [[ $stream =~ ^gpu([0-9,]+):(.*)$ ]]; then
      export CUDA_VISIBLE_DEVICES=${BASH_REMATCH[1]}
      stream=${BASH_REMATCH[2]}
    fi
    use_cache "$i"
    for p in ${stream//,/ }; do part "$p"; done
  ) &
done
wait

# The first stream's cache, with its key, for the next machine (a returned file may be 16 MiB).
mkdir -p "$RUN_DIR/out/cache" && cp -a "$RUN_DIR/cache-1/." "$RUN_DIR/out/cache/" 2>/dev/null &&
  cp "$RUN_DIR/state-1/signing-key" "$RUN_DIR/out/" 2>/dev/null &&
  tar -czf "$OUT/kernel-cache.tgz" -C "$RUN_DIR/out" cache signing-key &&
  [ "$(stat -c %s "$OUT/kernel-cache.tgz")" -le $((16 << 20)) ] || rm -f "$OUT/kernel-cache.tgz"
grep -ahE "^(FAILED|ERROR)|mismatch|Traceback" "$OUT"/*.log | head -n 40
! grep -q "rc=[1-9]" "$OUT/summary.txt"
