# Sourced by the benchmarks: runs OpenBLAS single-threaded with its fastest
# kernel. OpenBLAS 0.3.21 does not know this CPU and falls back to a slow
# generic kernel, and the environment may preset a slower one; take
# BENCH_OPENBLAS_CORETYPE if given, else the faster of the AVX-512 and AVX2
# kernels, best of 3 interleaved probes each.
#
# Usage: select_openblas_coretype PROBE  (PROBE --probe prints 1024^3 sgemm
# GFLOP/s); exports OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS.
select_openblas_coretype() {
  local probe_binary=$1
  export OPENBLAS_NUM_THREADS=1
  if [[ -n "${OPENBLAS_CORETYPE:-}" ]]; then
    echo "== ignoring OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE from the environment"
  fi
  if [[ -n "${BENCH_OPENBLAS_CORETYPE:-}" ]]; then
    export OPENBLAS_CORETYPE="$BENCH_OPENBLAS_CORETYPE"
    return
  fi
  local best_core="" best_gf=0 gf core round
  declare -A probe
  for round in 1 2 3; do
    for core in SkylakeX Haswell; do
      gf="$(OPENBLAS_CORETYPE=$core "$probe_binary" --probe)"
      probe[$core]="${probe[$core]:-} $gf"
      if awk -v a="$gf" -v b="$best_gf" 'BEGIN{exit !(a>b)}'; then
        best_gf="$gf" best_core="$core"
      fi
    done
  done
  echo "== OpenBLAS probe (1024^3 sgemm GFLOP/s): SkylakeX:${probe[SkylakeX]}" \
       " Haswell:${probe[Haswell]} -> $best_core"
  export OPENBLAS_CORETYPE="$best_core"
}
