#!/usr/bin/env bash
# Times `overlap-run` on single-device programs holding one ovl.einsum of f32
# inputs, and one of bf16 inputs, into f32 (lowered by ovl-to-llvm with its
# default vectorize=true, JIT-compiled) against OpenBLAS sgemm on one thread,
# interleaved in one run, and prints GFLOP/s of both and their ratio. Both
# dtypes are compared with f32 sgemm of the same shape: Debian's OpenBLAS has
# no bf16 GEMM. Exits non-zero if `einsum_1024` (either dtype) is more than
# MAX_RATIO times slower than OpenBLAS, or a result is wrong.
#
#   ./run.sh
#
# Environment: ROUNDS (interleaved rounds per case, default 5), REPEAT (steps
# per overlap-run and calls per OpenBLAS timing, default 20), MAX_RATIO
# (default 1.5), TARGET_CPU (overlap-run --target-cpu, default native; e.g.
# haswell with BENCH_OPENBLAS_CORETYPE=Haswell compares AVX2 code with
# OpenBLAS's AVX2 kernel), OVERLAP_BUILD (default ../../build), BUILD_DIR (default
# ./build), LLVM_DIR (default /usr/lib/llvm-22), BENCH_OPENBLAS_CORETYPE
# (default: the faster of SkylakeX and Haswell, probed as in bench/matmul;
# an OPENBLAS_CORETYPE inherited from the environment is ignored).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
LLVM_DIR="${LLVM_DIR:-/usr/lib/llvm-22}"
OVERLAP_BUILD="${OVERLAP_BUILD:-$ROOT/build}"
BUILD_DIR="${BUILD_DIR:-$HERE/build}"
ROUNDS="${ROUNDS:-5}"
REPEAT="${REPEAT:-20}"
TARGET_CPU="${TARGET_CPU:-native}"
MAX_RATIO="${MAX_RATIO:-1.5}"
OVERLAP_RUN="$OVERLAP_BUILD/bin/overlap-run"

# OpenBLAS (libopenblas-dev), installed if missing.
"$ROOT/scripts/setup.sh" libopenblas-dev

echo "== building overlap-run ($OVERLAP_BUILD)"
ninja -C "$OVERLAP_BUILD" -j2 overlap-run >/dev/null

mkdir -p "$BUILD_DIR"
cd "$BUILD_DIR"

echo "== building the OpenBLAS timer (bench/matmul/harness.c for the probe)"
"$LLVM_DIR/bin/clang-22" -O2 -march=native -std=c11 -D_POSIX_C_SOURCE=200809L \
  -Wall -Wextra -I"$ROOT/bench/matmul" "$HERE/blas_time.c" \
  "$ROOT/bench/matmul/harness.c" -lopenblas -lm -o blas_time

# Input dtypes: each case runs with f32 and with bf16 inputs (f32 result).
DTYPES=(f32 bf16)

# Cases: name M N K. The MLP cases are one device's einsum of a 2048x1024 @
# 1024x4096 layer of the figure 2 MLP (as in bench/matmul): rows split 8
# ways and columns 4 ways, or columns 8 ways.
CASES=(
  "einsum_1024 1024 1024 1024"
  "mlp_256x1024x1024 256 1024 1024"
  "mlp_2048x512x1024 2048 512 1024"
)

# The program: C[m, n] = sum_k A[m, k] B[k, n] as one ovl.einsum, A and B of
# element type $4, C f32.
write_program() {
  local m=$1 n=$2 k=$3 t=$4
  cat <<EOF
func.func @main(%a: tensor<${m}x${k}x${t}>, %b: tensor<${k}x${n}x${t}>)
    -> tensor<${m}x${n}xf32> {
  %c = ovl.einsum "mk,kn->mn" %a, %b
      : tensor<${m}x${k}x${t}>, tensor<${k}x${n}x${t}> -> tensor<${m}x${n}xf32>
  return %c : tensor<${m}x${n}xf32>
}
EOF
}

# Its reference for `overlap-run --reference`: the same sums with explicit
# loops over scalars, which the contraction schedule does not match (so the
# check does not compare the schedule with itself). bf16 elements are
# extended to f32 before the product.
write_reference() {
  local m=$1 n=$2 k=$3 t=$4 x=%x y=%y
  local extend=""
  if [[ $t != f32 ]]; then
    extend="        %xf = arith.extf %x : $t to f32
        %yf = arith.extf %y : $t to f32"
    x=%xf y=%yf
  fi
  cat <<EOF
func.func @main(%a: tensor<${m}x${k}x${t}>, %b: tensor<${k}x${n}x${t}>)
    -> tensor<${m}x${n}xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant ${m} : index
  %n = arith.constant ${n} : index
  %k = arith.constant ${k} : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<${m}x${n}xf32>
  %c = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %init)
      -> tensor<${m}x${n}xf32> {
    %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci)
        -> tensor<${m}x${n}xf32> {
      %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
        %x = tensor.extract %a[%i, %l] : tensor<${m}x${k}x${t}>
        %y = tensor.extract %b[%l, %j] : tensor<${k}x${n}x${t}>
$extend
        %p = arith.mulf $x, $y : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %next = tensor.insert %sum into %cj[%i, %j] : tensor<${m}x${n}xf32>
      scf.yield %next : tensor<${m}x${n}xf32>
    }
    scf.yield %row : tensor<${m}x${n}xf32>
  }
  return %c : tensor<${m}x${n}xf32>
}
EOF
}

source "$HERE/../openblas-coretype.sh"
print_host
select_openblas_coretype ./blas_time
./blas_time --info

# overlap-run's median and least step times (seconds) from its --json
# report, on one line.
overlap_times() {
  "$OVERLAP_RUN" "$1" --repeat "$REPEAT" --target-cpu "$TARGET_CPU" --json |
    sed -n 's/.*"step_seconds_\(median\|min\)": *\([0-9.eE+-]*\).*/\2/p' |
    paste -sd' '
}

median() { sort -g | awk '{v[NR]=$1} END{print v[int(NR/2)+1]}'; }
least() { sort -g | head -n1; }

status=0
echo "== overlap-run --target-cpu $TARGET_CPU"
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $ROUNDS interleaved rounds of $REPEAT" \
     "steps/calls each; ms = median over rounds of each round's median," \
     "best = least step/call of all rounds; ratio = overlap-run time /" \
     "OpenBLAS f32 sgemm time on the same shape (also for bf16 inputs: no" \
     "bf16 GEMM in OpenBLAS), median of the per-round ratios; best_ratio =" \
     "ratio of the best times"
printf "%-20s %4s %5s %5s %5s %8s %8s %8s %8s %7s %7s %6s %6s\n" case in \
  M N K ovl_ms blas_ms ovl_best blas_bst ovl_GF blas_GF ratio best
for spec in "${CASES[@]}"; do
  read -r name m n k <<<"$spec"
  for t in "${DTYPES[@]}"; do
    program="${name}_$t"
    write_program "$m" "$n" "$k" "$t" >"$program.mlir"
    write_reference "$m" "$n" "$k" "$t" >"${program}_ref.mlir"
    if ! check="$("$OVERLAP_RUN" "$program.mlir" \
        --reference "${program}_ref.mlir" --target-cpu "$TARGET_CPU")"
    then
      echo "$check" >&2
      status=1
    fi
    ovl_times=() blas_times=() ovl_bests=() blas_bests=() ratios=()
    for ((round = 1; round <= ROUNDS; ++round)); do
      # Alternate which contender goes first.
      if ((round % 2)); then
        read -r o ob <<<"$(overlap_times "$program.mlir")"
        read -r b bb <<<"$(./blas_time "$m" "$n" "$k" "$REPEAT")"
      else
        read -r b bb <<<"$(./blas_time "$m" "$n" "$k" "$REPEAT")"
        read -r o ob <<<"$(overlap_times "$program.mlir")"
      fi
      ovl_times+=("$o") blas_times+=("$b") ovl_bests+=("$ob") blas_bests+=("$bb")
      ratios+=("$(awk -v o="$o" -v b="$b" 'BEGIN{print o / b}')")
    done
    o="$(printf '%s\n' "${ovl_times[@]}" | median)"
    b="$(printf '%s\n' "${blas_times[@]}" | median)"
    ob="$(printf '%s\n' "${ovl_bests[@]}" | least)"
    bb="$(printf '%s\n' "${blas_bests[@]}" | least)"
    r="$(printf '%s\n' "${ratios[@]}" | median)"
    awk -v name="$name" -v t="$t" -v m="$m" -v n="$n" -v k="$k" -v o="$o" \
        -v b="$b" -v ob="$ob" -v bb="$bb" -v r="$r" 'BEGIN{
      f = 2 * m * n * k / 1e9;
      printf "%-20s %4s %5d %5d %5d %8.3f %8.3f %8.3f %8.3f %7.1f %7.1f %6.2f %6.2f\n",
             name, t, m, n, k, o * 1e3, b * 1e3, ob * 1e3, bb * 1e3, f / o,
             f / b, r, ob / bb}'
    echo "   per-round ratios: ${ratios[*]}; $(grep -o 'equal.*' <<<"$check")"
    if [[ "$name" == einsum_1024 ]] &&
        awk -v r="$r" -v x="$MAX_RATIO" 'BEGIN{exit !(r > x)}'; then
      echo "   $program: ratio $r above MAX_RATIO=$MAX_RATIO" >&2
      status=1
    fi
  done
done

if [[ $status != 0 ]]; then
  echo "FAILED" >&2
fi
exit $status
