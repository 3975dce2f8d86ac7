#!/usr/bin/env bash
# Benchmarks of this tree beside an older build, on the same GPU in one call, with the same
# benchmark scripts (this tree's bench/): each BENCH runs on the base build, on this build, and on
# the base build again, so that the base's two runs show the noise. BASE is the other commit's
# tree (e.g. `git worktree add .scratch/base 97106e3`); it is set up (its scripts/setup.sh) into a
# venv of its own that sees this machine's packages. This tree must be set up already.
#
#   bash bench/compare_builds.sh BASE OUT BENCH [BENCH ...]
#
# A BENCH is a script of bench/ with its arguments, one word list in quotes, e.g.
# "bench_grouped.py --set moe". Logs go to OUT/<base|new|base-again>-<bench>.log and each run's
# last lines to OUT/compare.txt. Settings: COMPARE_VENV (default BASE/.venv-base).
set -uo pipefail
cd "$(dirname "$0")/.."
BASE=$(cd "${1:?usage: compare_builds.sh BASE OUT BENCH...}" && pwd)
OUT=${2:?usage: compare_builds.sh BASE OUT BENCH...}
shift 2
[ $# -gt 0 ] || { echo "compare_builds.sh: name at least one BENCH"; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
VENV=${COMPARE_VENV:-$BASE/.venv-base}

[ -x "$VENV/bin/python" ] || python3 -m venv --system-site-packages "$VENV"
# The base builds against this tree's CUTLASS headers (the same pinned version).
export CUTLASS_DIR=${CUTLASS_DIR:-$(pwd)/.deps/cutlass}
if ! (cd "$BASE" && PYTHON=$VENV/bin/python TILECRAFT_BUILD_DIR=build-base \
  bash scripts/setup.sh) >"$OUT/base-setup.log" 2>&1; then
  tail -n 30 "$OUT/base-setup.log"
  echo "compare_builds.sh: setting up $BASE failed ($OUT/base-setup.log)"
  exit 1
fi
echo "base: $BASE ($("$VENV/bin/python" -c 'import tilecraft, os; print(os.path.dirname(tilecraft.__file__))'))" |
  tee "$OUT/compare.txt"

# run LABEL PYTHON BENCH: one benchmark on one build, from a scratch folder (never this tree's
# python/ on the path), with a kernel cache of that build's own.
run() {
  local label=$1 py=$2 bench=$3 name
  name=$(echo "$bench" | tr -c 'A-Za-z0-9_.-' '_')
  (cd "$OUT" && TILECRAFT_CACHE_DIR="$OUT/cache-${label%-again}" \
    TILECRAFT_SIGNING_KEY_FILE="$OUT/state-${label%-again}/signing-key" \
    "$py" "$OLDPWD/bench/"$bench) >"$OUT/$label-$name.log" 2>&1
  echo "== $label: $bench (rc=$?)" | tee -a "$OUT/compare.txt"
  tail -n 25 "$OUT/$label-$name.log" >>"$OUT/compare.txt"
}
for bench in "$@"; do
  run base "$VENV/bin/python" "$bench"
  run new python3 "$bench"
  run base-again "$VENV/bin/python" "$bench"
done
