#!/usr/bin/env bash
# Benchmarks of this tree beside an older build, on the same GPU in one call, with the same
# benchmark scripts (this tree's bench/): each BENCH runs on the base build, on this build, and on
# the base build again, so that the base's two runs show the noise. BASE is the other commit's
# tree (e.g. `git archive 97106e3 | tar -x -C .scratch/base`); its Python package is built and
# installed into BASE/.py-base (pip --target), which the base runs put first on PYTHONPATH. This
# tree must be set up already (scripts/setup.sh).
#
#   bash bench/compare_builds.sh BASE OUT BENCH [BENCH ...]
#
# A BENCH is a script of bench/ with its arguments, one word list in quotes, e.g.
# "bench_grouped.py --set moe". Logs go to OUT/<base|new|base-again>-<bench>.log and each run's
# last lines to OUT/compare.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
BASE=$(cd "${1:?usage: compare_builds.sh BASE OUT BENCH...}" && pwd)
OUT=${2:?usage: compare_builds.sh BASE OUT BENCH...}
shift 2
[ $# -gt 0 ] || { echo "compare_builds.sh: name at least one BENCH"; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TARGET=$BASE/.py-base

# The base builds against this tree's CUTLASS headers (the same pinned version), without its tests.
export CUTLASS_DIR=${CUTLASS_DIR:-$(pwd)/.deps/cutlass}
if [ ! -d "$TARGET/tilecraft" ] &&
  ! (cd "$BASE" && python3 -m pip install --disable-pip-version-check --no-build-isolation \
    --no-deps --target "$TARGET" -Cbuild-dir=build-base -Ccmake.build-type=Release \
    -Ccmake.define.CUTLASS_DIR="$CUTLASS_DIR" -Ccmake.define.TILECRAFT_BUILD_TESTS=OFF \
    -Ccmake.define.TILECRAFT_BUILD_EXAMPLES=OFF -Cbuild.tool-args=-j"$(nproc)" .) \
    >"$OUT/base-setup.log" 2>&1; then
  tail -n 30 "$OUT/base-setup.log"
  echo "compare_builds.sh: building $BASE failed ($OUT/base-setup.log)"
  exit 1
fi
echo "base: $BASE ($(PYTHONPATH=$TARGET python3 -c 'import tilecraft, os; print(os.path.dirname(tilecraft.__file__))'))" |
  tee "$OUT/compare.txt"

# run LABEL PYTHONPATH BENCH: one benchmark on one build, from a scratch folder (never this
# tree's python/ on the path), with a kernel cache of that build's own.
run() {
  local label=$1 path=$2 bench=$3 name
  name=$(echo "$bench" | tr -c 'A-Za-z0-9_.-' '_')
  (cd "$OUT" && PYTHONPATH=$path TILECRAFT_CACHE_DIR="$OUT/cache-${label%-again}" \
    TILECRAFT_SIGNING_KEY_FILE="$OUT/state-${label%-again}/signing-key" \
    python3 "$OLDPWD/bench/"$bench) >"$OUT/$label-$name.log" 2>&1
  echo "== $label: $bench (rc=$?)" | tee -a "$OUT/compare.txt"
  tail -n 25 "$OUT/$label-$name.log" >>"$OUT/compare.txt"
}
for bench in "$@"; do
  run base "$TARGET" "$bench"
  run new "" "$bench"
  run base-again "$TARGET" "$bench"
done
