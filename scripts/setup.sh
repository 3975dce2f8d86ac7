#!/usr/bin/env bash
# Installs what tilecraft needs (pip and apt only), fetches the pinned CUTLASS headers, builds the
# C++ library, tests and examples, and installs the Python package. Safe to run again.
#   CUTLASS_DIR=/path/to/cutlass   use these CUTLASS headers instead of the pinned wheel's
#   TILECRAFT_BUILD_DIR=build      where the CMake build goes
#   TILECRAFT_OFFLINE=1            never reach a package registry (the GPU machine)
#   TILECRAFT_HOST_OPT=-O1         optimization of the host code (default -O3; kernels are always
#                                  compiled by nvcc at -O3): scripts/test.sh asks for -O1 on a
#                                  machine without a GPU, where it halves the build
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CUTLASS_VERSION=4.2.0.0
BUILD_DIR=${TILECRAFT_BUILD_DIR:-build}
PY=${PYTHON:-python3}
JOBS=$(nproc 2>/dev/null || echo 2)
say() { printf 'setup: %s\n' "$*"; }
case "${TILECRAFT_HOST_OPT:--O3}" in
  -O0|-O1|-O2|-O3|-Os|-Og) ;;
  *) say "TILECRAFT_HOST_OPT: expected -O0, -O1, -O2, -O3, -Os or -Og, got '$TILECRAFT_HOST_OPT'"; exit 2 ;;
esac

# 1. Tools that must already be there: a C++20 compiler, CMake, the CUDA toolkit.
command -v "${CXX:-g++}" >/dev/null || { say "no C++ compiler (g++) on PATH"; exit 1; }
NVCC=${TILECRAFT_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { say "nvcc not found: install the CUDA toolkit (12.4 or newer) or set TILECRAFT_NVCC"; exit 1; }
export PATH="$(dirname "$NVCC"):$PATH"

pip_install() {
  if [ "${TILECRAFT_OFFLINE:-0}" = 1 ]; then say "offline: cannot install $*"; exit 1; fi
  "$PY" -m pip install --quiet --disable-pip-version-check "$@"
}

# 2. Python build and test dependencies, from PyPI, only where missing.
missing=()
"$PY" -c "import nanobind" 2>/dev/null || missing+=("nanobind>=2.4")
"$PY" -c "import scikit_build_core" 2>/dev/null || missing+=("scikit-build-core>=0.10")
"$PY" -c "import numpy" 2>/dev/null || missing+=("numpy")
"$PY" -c "import pytest" 2>/dev/null || missing+=("pytest")
command -v cmake >/dev/null || missing+=("cmake>=3.22")
command -v ninja >/dev/null || missing+=("ninja")
if [ ${#missing[@]} -gt 0 ]; then say "pip install ${missing[*]}"; pip_install "${missing[@]}"; fi
# Optional: matplotlib draws `tilecraft profile`'s chart (tilecraft[plot]); without it the chart
# tests skip, saying so.
if ! "$PY" -c "import matplotlib" 2>/dev/null && [ "${TILECRAFT_OFFLINE:-0}" != 1 ]; then
  say "pip install matplotlib (optional: profile charts)"
  pip_install matplotlib || say "matplotlib did not install: the chart tests will skip"
fi

# 3. GoogleTest, from Debian/Ubuntu packages, when CMake cannot find it.
if ! ls /usr/lib/*/cmake/GTest/GTestConfig.cmake /usr/lib/cmake/GTest/GTestConfig.cmake >/dev/null 2>&1 \
   && [ ! -f /usr/src/googletest/CMakeLists.txt ] && [ ! -f .deps/googletest/CMakeLists.txt ] \
   && ! ls /usr/lib/*/libgtest_main.* >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ "${TILECRAFT_OFFLINE:-0}" != 1 ]; then
    say "apt-get install libgtest-dev"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev >/dev/null
  else
    say "GoogleTest is missing: install libgtest-dev"; exit 1
  fi
fi

# 3b. OpenSSL's libcrypto headers (SHA-256, HMAC, Ed25519), from Debian/Ubuntu packages when
# missing; a copy of them goes into .deps/openssl for machines without a registry, which have the
# library (libcrypto.so.3) but not always its headers.
if [ ! -f /usr/include/openssl/evp.h ] && [ ! -f .deps/openssl/include/openssl/evp.h ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ "${TILECRAFT_OFFLINE:-0}" != 1 ]; then
    say "apt-get install libssl-dev"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev >/dev/null
  else
    say "OpenSSL's headers are missing: install libssl-dev"; exit 1
  fi
fi
if [ -f /usr/include/openssl/evp.h ] && [ ! -f .deps/openssl/include/openssl/evp.h ]; then
  mkdir -p .deps/openssl/include
  cp -r /usr/include/openssl .deps/openssl/include/
  # Debian keeps the configuration headers in the multiarch folder.
  multiarch=$("${CXX:-g++}" -print-multiarch 2>/dev/null || true)
  if [ -n "$multiarch" ] && [ -d "/usr/include/$multiarch/openssl" ]; then
    cp -r "/usr/include/$multiarch/openssl"/. .deps/openssl/include/openssl/
  fi
fi

# Keep a copy of GoogleTest's sources beside the CUTLASS headers, so that carrying .deps to a
# machine without a registry (the GPU machine) brings everything the build needs.
if [ -f /usr/src/googletest/CMakeLists.txt ] && [ ! -f .deps/googletest/CMakeLists.txt ]; then
  mkdir -p .deps && cp -r /usr/src/googletest .deps/googletest
fi

# 4. CUTLASS headers: CUTLASS_DIR, or the pinned nvidia-cutlass wheel unpacked into .deps/cutlass.
if [ -n "${CUTLASS_DIR:-}" ]; then
  [ -f "$CUTLASS_DIR/include/cutlass/cutlass.h" ] || { say "CUTLASS_DIR=$CUTLASS_DIR has no include/cutlass/cutlass.h"; exit 1; }
elif [ ! -f .deps/cutlass/include/cutlass/cutlass.h ]; then
  say "fetching CUTLASS headers (nvidia-cutlass==$CUTLASS_VERSION, headers only)"
  tmp=$(mktemp -d)
  if [ "${TILECRAFT_OFFLINE:-0}" = 1 ]; then say "offline and no .deps/cutlass: carry it"; exit 1; fi
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" "nvidia-cutlass==$CUTLASS_VERSION"
  "$PY" - "$tmp" <<'PYEOF'
import pathlib, sys, zipfile
tmp = pathlib.Path(sys.argv[1])
wheel = next(tmp.glob("nvidia_cutlass-*.whl"))
out = pathlib.Path(".deps/cutlass")
prefixes = {"cutlass_library/source/include/": out / "include",
            "cutlass_library/source/tools/util/include/": out / "tools/util/include"}
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.endswith(".dist-info/licenses/LICENSE.txt"):  # travels with the headers
            out.mkdir(parents=True, exist_ok=True)
            (out / "LICENSE.txt").write_bytes(z.read(name))
        for prefix, dest in prefixes.items():
            if name.startswith(prefix) and not name.endswith("/"):
                target = dest / name[len(prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(name))
PYEOF
  rm -rf "$tmp"
fi
export CUTLASS_DIR=${CUTLASS_DIR:-$ROOT/.deps/cutlass}
say "CUTLASS headers: $CUTLASS_DIR"

# 5. One build of everything: the C++ library, tests, examples and benchmarks, and the Python
# package (tilecraft._core through scikit-build-core + nanobind), which pip installs from the same
# build folder, so nothing is compiled twice.
say "building into $BUILD_DIR and pip install . (tilecraft Python package; log: $BUILD_DIR/setup-build.log)"
mkdir -p "$BUILD_DIR"
set +e
"$PY" -m pip install --disable-pip-version-check --no-build-isolation --progress-bar off -v \
  -Cbuild-dir="$BUILD_DIR" -Ccmake.build-type=Release \
  "-Ccmake.define.CMAKE_CXX_FLAGS_RELEASE=${TILECRAFT_HOST_OPT:--O3} -DNDEBUG" \
  -Ccmake.define.CUTLASS_DIR="$CUTLASS_DIR" -Ccmake.define.TILECRAFT_BUILD_TESTS=ON \
  -Ccmake.define.TILECRAFT_BUILD_EXAMPLES=ON -Cbuild.tool-args=-j"$JOBS" . 2>&1 |
  tee "$BUILD_DIR/setup-build.log" |
  grep --line-buffered -E '^ *(\[[0-9]+/[0-9]+\] |CMake (Error|Warning)|FAILED:|Successfully installed)'
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" != 0 ]; then
  tail -n 60 "$BUILD_DIR/setup-build.log"
  say "the build or pip install failed (exit $rc): $BUILD_DIR/setup-build.log has all of it"
  exit 1
fi
say "done"
