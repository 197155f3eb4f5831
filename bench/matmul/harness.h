//===- harness.h - MLIR matmul vs OpenBLAS benchmark harness ------*- C -*-===//
//
// A table of MLIR-compiled matmul kernels (`_mlir_ciface_*` entry points) and
// the routine that verifies each against OpenBLAS and times both side by side.
// Shared by the ahead-of-time driver (main_aot.c) and the JIT driver
// (jit_main.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef BENCH_MATMUL_HARNESS_H
#define BENCH_MATMUL_HARNESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Operand layouts of a case (all row-major).
typedef enum {
  KIND_PLAIN,   ///< C[m,n] = A[m,k] * B[k,n]
  KIND_TRANS_A, ///< C[m,n] = A[k,m]^T * B[k,n]
  KIND_TRANS_B, ///< C[m,n] = A[m,k] * B[n,k]^T
  KIND_BATCH,   ///< C[b,m,n] = A[b,m,k] * B[b,k,n]
} kernel_kind;

typedef struct {
  const char *name; ///< MLIR function name (without `_mlir_ciface_`)
  kernel_kind kind;
  int64_t batch, m, n, k;
  void *fn; ///< `_mlir_ciface_<name>`
  int gate; ///< 1 if the ratio limit applies to this case
} kernel_case;

/// The kernels this benchmark builds, in the order of matmul.mlir. `fn` is
/// filled in by the driver.
#define HARNESS_CASES(X)                                                       \
  X(matmul_1024, KIND_PLAIN, 1, 1024, 1024, 1024, 1)                           \
  X(matmul_512, KIND_PLAIN, 1, 512, 512, 512, 0)                               \
  X(mlp_256x1024x1024, KIND_PLAIN, 1, 256, 1024, 1024, 0)                      \
  X(mlp_2048x512x1024, KIND_PLAIN, 1, 2048, 512, 1024, 0)                      \
  X(generic_1024, KIND_PLAIN, 1, 1024, 1024, 1024, 0)                          \
  X(matmul_tb_1024, KIND_TRANS_B, 1, 1024, 1024, 1024, 0)                      \
  X(matmul_ta_1024, KIND_TRANS_A, 1, 1024, 1024, 1024, 0)                      \
  X(batch_4x256, KIND_BATCH, 4, 256, 256, 256, 0)                              \
  X(odd_1000, KIND_PLAIN, 1, 1000, 1000, 1000, 0)                              \
  X(odd_1030x1100x1000, KIND_PLAIN, 1, 1030, 1100, 1000, 0)

/// Prints the OpenBLAS build, the core it runs on and the thread count.
void harness_print_blas_info(void);

/// GFLOP/s of the best of `reps` OpenBLAS n^3 sgemm calls (coretype probe).
double harness_blas_probe(int64_t n, int reps);

/// Verifies and times every case; returns the number of failures (wrong
/// results, or a gated case whose median ratio exceeds `max_ratio_fail` when
/// that is positive).
int harness_run(const kernel_case *cases, int num_cases, int reps,
                double max_ratio_fail);

#ifdef __cplusplus
}
#endif

#endif // BENCH_MATMUL_HARNESS_H
