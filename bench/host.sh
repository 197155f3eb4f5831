# Sourced by the benchmarks: what the figures were measured on, and which
# vector extensions the host's CPU has (from /proc/cpuinfo, Linux x86-64).

# The vector extensions a benchmark's kernels may use, in the order printed.
BENCH_VECTOR_FLAGS=(sse4_2 avx fma avx2 avx512f avx512bw avx512vl avx512_bf16
                    avx512_fp16 amx_bf16)

# host_has_flag FLAG: whether /proc/cpuinfo lists FLAG for the first CPU.
host_has_flag() {
  grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -qx "$1"
}

# print_host: one line naming the CPU model and its vector extensions.
print_host() {
  local model flags=() flag
  model="$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')"
  for flag in "${BENCH_VECTOR_FLAGS[@]}"; do
    host_has_flag "$flag" && flags+=("$flag")
  done
  echo "== host: ${model:-unknown CPU}, $(nproc) CPUs; vector extensions:" \
       "${flags[*]:-none of ${BENCH_VECTOR_FLAGS[*]}}"
}
