#!/usr/bin/env bash
# Configures (once) and builds overlap with clang-22, lld and Ninja; warnings
# in overlap's own code are errors.
# Usage: scripts/build.sh [build-dir [cmake-args...]]   (default: build)
# The CMake arguments configure a new build directory, or are set again on
# an existing one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift $(( $# > 0 ? 1 : 0 ))
llvm=/usr/lib/llvm-22

if [ -f "$build/build.ninja" ] && [ $# -gt 0 ]; then
  cmake -B "$build" "$@" >/dev/null
elif [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DOVERLAP_ENABLE_WERROR=ON \
    -DMLIR_DIR=$llvm/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=$llvm/bin/lit "$@" >/dev/null
fi
ninja -C "$build"
