#!/usr/bin/env bash
# Builds the MLIR matmul kernels (the transform script
# lib/Pipelines/ContractionSchedule.mlir, which the ovl-to-llvm pipeline
# embeds, + pipeline.txt), verifies them against OpenBLAS and times both side
# by side. Exits non-zero if a result is wrong or if matmul_1024 is more than
# MAX_RATIO times slower than OpenBLAS.
#
#   ./run.sh            ahead-of-time build and JIT (ExecutionEngine) build
#   ./run.sh --no-jit   ahead-of-time build only
#
# Environment: REPS (repetitions per case, default 15), MAX_RATIO (default 2.0),
# BUILD_DIR (default ./build), LLVM_DIR (default /usr/lib/llvm-22),
# BENCH_OPENBLAS_CORETYPE (default: the faster of SkylakeX and Haswell, probed
# here; an OPENBLAS_CORETYPE inherited from the environment is ignored, since
# it may name the slower kernel).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The one copy of the schedule, shared with the ovl-to-llvm pipeline.
SCHEDULE="$(cd "$HERE/../.." && pwd)/lib/Pipelines/ContractionSchedule.mlir"
LLVM_DIR="${LLVM_DIR:-/usr/lib/llvm-22}"
BIN="$LLVM_DIR/bin"
BUILD_DIR="${BUILD_DIR:-$HERE/build}"
REPS="${REPS:-15}"
MAX_RATIO="${MAX_RATIO:-2.0}"
JIT=1
for arg in "$@"; do
  case "$arg" in
    --no-jit) JIT=0 ;;
    *) echo "usage: $0 [--no-jit]" >&2; exit 2 ;;
  esac
done

# OpenBLAS (libopenblas-dev), installed if missing.
"$HERE/../../scripts/setup.sh" libopenblas-dev

mkdir -p "$BUILD_DIR"
cd "$BUILD_DIR"

# The pass pipeline, with the transform library preloaded for mlir-opt.
PIPELINE="$(grep -v '^#' "$HERE/pipeline.txt" | sed 's/^ *//' | tr -d '\n')"
PRELOAD="transform-preload-library{transform-library-paths=$SCHEDULE}"
MLIR_OPT_PIPELINE="builtin.module(${PRELOAD},${PIPELINE#builtin.module(}"

# Code generation: the host CPU (znver5 here: AVX-512), -O3.
CODEGEN_FLAGS=(-O3 -march=native)

echo "== lowering matmul.mlir"
"$BIN/mlir-opt" "$HERE/matmul.mlir" --pass-pipeline="$MLIR_OPT_PIPELINE" \
  -o matmul.llvm.mlir
"$BIN/mlir-translate" --mlir-to-llvmir matmul.llvm.mlir -o matmul.ll
"$BIN/clang-22" "${CODEGEN_FLAGS[@]}" -Wno-override-module -c matmul.ll \
  -o matmul.o

echo "== correctness checks (misc.mlir: chained / fused / unmatched contractions)"
"$BIN/mlir-opt" "$HERE/misc.mlir" --pass-pipeline="$MLIR_OPT_PIPELINE" \
  -o misc.llvm.mlir
"$BIN/mlir-translate" --mlir-to-llvmir misc.llvm.mlir -o misc.ll
"$BIN/clang-22" "${CODEGEN_FLAGS[@]}" -Wno-override-module -c misc.ll -o misc.o
"$BIN/clang-22" -O2 -std=c11 -Wall -Wextra "$HERE/check_misc.c" misc.o -lm \
  -o check_misc
status=0
./check_misc || status=1

echo "== building the ahead-of-time driver"
"$BIN/clang-22" -O2 -march=native -std=c11 -D_POSIX_C_SOURCE=200809L \
  -Wall -Wextra -I"$HERE" -c "$HERE/harness.c" -o harness.o
"$BIN/clang-22" -O2 -march=native -std=c11 -Wall -Wextra -I"$HERE" \
  "$HERE/main_aot.c" harness.o matmul.o -lopenblas -lm -o bench_aot

source "$HERE/../openblas-coretype.sh"
print_host
select_openblas_coretype ./bench_aot

echo "== ahead-of-time ($(date -u +%Y-%m-%dT%H:%MZ), $REPS repetitions," \
     "ratio = MLIR time / OpenBLAS time, median of per-repetition ratios)"
./bench_aot --reps "$REPS" --max-ratio "$MAX_RATIO" || status=1
# The kernels malloc their packing buffers on every call; whether glibc hands
# back fresh pages (page faults on every call) depends on the process's
# allocation history, see README.md. Hence the odd sizes once more, each in a
# fresh process, with glibc's defaults and with freed memory kept.
echo "== ahead-of-time, odd_1000 alone in a fresh process, default malloc"
./bench_aot --reps "$REPS" --only odd_1000 | tail -n 1 || status=1
echo "== ahead-of-time, odd_1000 alone in a fresh process, --keep-heap"
./bench_aot --reps "$REPS" --only odd_1000 --keep-heap | tail -n 1 || status=1

if [[ "$JIT" == 1 ]]; then
  echo "== building the JIT driver (mlir::ExecutionEngine, libMLIR.so)"
  "$BIN/clang++" -O2 -std=c++17 -fno-rtti -Wall -I"$HERE" \
    $("$BIN/llvm-config" --cppflags) "$HERE/jit_main.cpp" harness.o \
    -L"$LLVM_DIR/lib" -Wl,-rpath,"$LLVM_DIR/lib" -lMLIR -lLLVM \
    -lopenblas -lm -o bench_jit
  echo "== JIT: same matmul.mlir, schedule and pipeline.txt, compiled" \
       "in-process"
  ./bench_jit "$HERE/matmul.mlir" "$SCHEDULE" "$HERE/pipeline.txt" \
    --reps "$REPS" --max-ratio "$MAX_RATIO" || status=1
  echo "== JIT with ExecutionEngine::create(module) defaults (no LLVM IR" \
       "optimization, default TargetMachine), for comparison"
  ./bench_jit "$HERE/matmul.mlir" "$SCHEDULE" "$HERE/pipeline.txt" \
    --reps "$REPS" --only matmul_ --engine-defaults || status=1
fi

if [[ $status != 0 ]]; then
  echo "FAILED" >&2
fi
exit $status
