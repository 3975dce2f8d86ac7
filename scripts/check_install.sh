#!/usr/bin/env bash
# The installed C++ package, as a C++ program of someone else's uses it: `cmake --install` of the
# build's `cpp` component into a fresh prefix, examples/consumer configured and built against it
# with find_package(tilecraft), and its programs run: installed_paths must find the jit and CUTLASS
# headers inside the prefix, gemm_seed004 compiles its kernel through them (and on a GPU runs and
# verifies it), api_gemm ranks (and on a GPU compiles, runs and verifies) its pick.
#   bash scripts/check_install.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-${TILECRAFT_BUILD_DIR:-build}}
JOBS=${TILECRAFT_TEST_JOBS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$BUILD_DIR" --component cpp --prefix "$prefix" >"$work/install.log"
# The consumer is configured with the tools the build itself used (its generator and make
# program, which pip may have installed off PATH; its compiler and CUDA toolkit).
cached() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD_DIR/CMakeCache.txt" | head -n 1; }
tools=(-G "$(cached CMAKE_GENERATOR)" -DCMAKE_CXX_COMPILER="$(cached CMAKE_CXX_COMPILER)")
[ -n "$(cached CMAKE_MAKE_PROGRAM)" ] && tools+=(-DCMAKE_MAKE_PROGRAM="$(cached CMAKE_MAKE_PROGRAM)")
[ -n "$(cached CUDAToolkit_BIN_DIR)" ] && tools+=(-DCUDAToolkit_ROOT="$(dirname "$(cached CUDAToolkit_BIN_DIR)")")
cmake -S examples/consumer -B "$work/consumer" "${tools[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" -j "$JOBS" >"$work/build.log" || { cat "$work/build.log"; exit 1; }

paths=$("$work/consumer/installed_paths")
echo "$paths" | sed 's/^/  /'
for what in "jit headers" "CUTLASS"; do
  if ! echo "$paths" | grep -q "^$what: $prefix/"; then
    echo "installed_paths: expected the $what inside the prefix $prefix"
    exit 1
  fi
done
"$work/consumer/gemm_seed004"
"$work/consumer/api_gemm"
echo "installed package: find_package(tilecraft) consumer built and ran"
