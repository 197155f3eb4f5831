# Sourced by the benchmarks: runs OpenBLAS single-threaded with its fastest
# kernel. OpenBLAS 0.3.21 does not know this CPU and falls back to a slow
# generic kernel, and the environment may preset a slower one; take
# BENCH_OPENBLAS_CORETYPE if given, else the fastest of the AVX-512 and AVX2
# kernels the host can run, best of 3 interleaved probes each (a kernel whose
# instructions the CPU lacks dies with SIGILL, so it is not tried).
#
# Usage: select_openblas_coretype PROBE  (PROBE --probe prints 1024^3 sgemm
# GFLOP/s); exports OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS.
source "$(dirname "${BASH_SOURCE[0]}")/host.sh"

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
  # OpenBLAS's SkylakeX kernel needs AVX-512 F/BW/VL/DQ/CD, Haswell AVX2+FMA.
  local cores=() best_core="" best_gf=0 gf core round
  if host_has_flag avx512f && host_has_flag avx512bw &&
      host_has_flag avx512vl && host_has_flag avx512dq &&
      host_has_flag avx512cd; then
    cores+=(SkylakeX)
  fi
  if host_has_flag avx2 && host_has_flag fma; then
    cores+=(Haswell)
  fi
  if [[ ${#cores[@]} -eq 0 ]]; then
    echo "== OpenBLAS: the host has neither AVX-512 nor AVX2; its own choice"
    unset OPENBLAS_CORETYPE
    return
  fi
  declare -A probe
  for round in 1 2 3; do
    for core in "${cores[@]}"; do
      gf="$(OPENBLAS_CORETYPE=$core "$probe_binary" --probe)"
      probe[$core]="${probe[$core]:-} $gf"
      if awk -v a="$gf" -v b="$best_gf" 'BEGIN{exit !(a>b)}'; then
        best_gf="$gf" best_core="$core"
      fi
    done
  done
  local summary=""
  for core in "${cores[@]}"; do
    summary+=" $core:${probe[$core]}"
  done
  echo "== OpenBLAS probe (1024^3 sgemm GFLOP/s):$summary -> $best_core"
  export OPENBLAS_CORETYPE="$best_core"
}
