#!/usr/bin/env bash
# Tries tilecraft as a new user would: a fresh clone of this repository, a fresh venv,
# `pip install .` and nothing else; then describes, compiles and (with a GPU) runs the seed 004
# example. Prints the time of each step.
#   bash scripts/fresh_install_check.sh WORKDIR [--offline WHEELHOUSE] [--wheel]
#   --offline DIR  no registry: the venv sees the system's packages (scikit-build-core, nanobind,
#                  numpy, torch) and DIR holds nvidia_cutlass-4.2.0.0-py3-none-any.whl
#   --wheel        also build a wheel (pip wheel .) and install it into a second fresh venv, from
#                  another working directory
#   --install-wheel FILE  only install this wheel (built elsewhere) into a fresh venv and run
#                  the examples
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:?usage: fresh_install_check.sh WORKDIR [--offline WHEELHOUSE] [--wheel]}
shift
OFFLINE=""
WHEEL=0
GIVEN_WHEEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --offline) OFFLINE=$2; shift 2 ;;
    --wheel) WHEEL=1; shift ;;
    --install-wheel) GIVEN_WHEEL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
rm -rf "$WORK" && mkdir -p "$WORK"
say() { printf 'fresh-install: %s\n' "$*"; }
timed() {
  local t0=$(date +%s%N)
  "$@"
  local tenths=$(( ($(date +%s%N) - t0) / 100000000 ))
  say "$((tenths / 10)).$((tenths % 10)) s: $*"
}

unset TILECRAFT_CUTLASS_DIR CUTLASS_DIR
venv_args=()
pip_args=(--quiet --disable-pip-version-check)
if [ -n "$OFFLINE" ]; then
  venv_args=(--system-site-packages)
  pip_args+=(--no-index --no-build-isolation)
  export PIP_FIND_LINKS=$OFFLINE
fi
# A fresh venv; offline, it also sees the packages of the Python that made it, even when that
# Python is itself a venv (--system-site-packages reaches only the base installation's).
new_venv() {
  timed "$PY" -m venv "${venv_args[@]}" "$1"
  if [ -n "$OFFLINE" ]; then
    local base site
    base=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    site=$("$1/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    echo "$base" > "$site/_base_environment.pth"
  fi
}
# The examples read numpy arrays (tilecraft itself needs no Python package).
examples_need() { "$1" -c "import numpy" 2>/dev/null || "$1" -m pip install "${pip_args[@]}" numpy; }
run_example() {
  local python=$1
  export TILECRAFT_CACHE_DIR=$WORK/cache-$2 TILECRAFT_SIGNING_KEY_FILE=$WORK/state-$2/key
  (cd "$WORK" && timed "$python" -c "import tilecraft; print('cutlass headers:', tilecraft._core.cutlass_dir())")
  (cd "$WORK" && timed "$python" "${EXAMPLES:-$WORK/clone/examples/python}/quickstart.py")
  if "$python" -c "import tilecraft._core as c, sys; sys.exit(c.cuda_device_available() is not None)"; then
    (cd "$WORK" && timed "$python" "${EXAMPLES:-$WORK/clone/examples/python}/seed004_readme.py")
  else
    say "no GPU here: seed 004 example not run (quickstart compiled its kernel)"
  fi
}
if [ -n "$GIVEN_WHEEL" ]; then
  new_venv "$WORK/venv3"
  (cd / && timed "$WORK/venv3/bin/python" -m pip install "${pip_args[@]}" "$GIVEN_WHEEL")
  examples_need "$WORK/venv3/bin/python"
  EXAMPLES=$ROOT/examples/python run_example "$WORK/venv3/bin/python" given-wheel
  say "done"
  exit 0
fi
# What a fresh clone holds: the working tree without what .gitignore keeps out (copied rather
# than cloned, so that it also works where the history is not the working tree's, as on the GPU
# machine).
mkdir -p "$WORK/clone"
tar -C "$ROOT" --exclude=./.git --exclude=./.deps --exclude=./.scratch --exclude=./.gpu-cache \
  --exclude='./build*' --exclude='__pycache__' --exclude='*.egg-info' --exclude='*.so' --exclude=./.pytest_cache -cf - . |
  tar -C "$WORK/clone" -xf -
new_venv "$WORK/venv"
(cd "$WORK/clone" && timed "$WORK/venv/bin/python" -m pip install "${pip_args[@]}" .)
examples_need "$WORK/venv/bin/python"
"$WORK/venv/bin/python" -m pip list 2>/dev/null | grep -i -E "^(tilecraft|nvidia-cutlass|cuda-python|scipy) " || true

run_example "$WORK/venv/bin/python" source

if [ "$WHEEL" = 1 ]; then
  (cd "$WORK/clone" && timed "$WORK/venv/bin/python" -m pip wheel "${pip_args[@]}" --no-deps . -w "$WORK/wheels")
  ls -la "$WORK/wheels"
  new_venv "$WORK/venv2"
  (cd / && timed "$WORK/venv2/bin/python" -m pip install "${pip_args[@]}" "$WORK"/wheels/tilecraft-*.whl)
  examples_need "$WORK/venv2/bin/python"
  run_example "$WORK/venv2/bin/python" wheel
fi
say "done"
