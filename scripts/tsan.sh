#!/usr/bin/env bash
# The runtime's unit tests (both transports' threads, link emulation,
# timeouts) under ThreadSanitizer. The runtime needs no MLIR, so only its
# tests are built, in a build directory of their own. The JIT-compiled
# programs of overlap-run are not instrumented and Open MPI's progress
# threads report inside Open MPI itself, so the rest of the suite is not
# run under TSan (docs/Layout.md).
# Usage: scripts/tsan.sh [build-dir]   (default: build-tsan)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-tsan}
"$root/scripts/setup.sh" libclang-rt-22-dev
llvm=/usr/lib/llvm-22
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld -DOVERLAP_ENABLE_WERROR=ON \
    -DMLIR_DIR=$llvm/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=$llvm/bin/lit \
    -DOVERLAP_SANITIZE=thread >/dev/null
fi
ninja -C "$build" OvlRuntimeTests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  "$build/runtime/OvlRuntimeTests" --gtest_brief=1
