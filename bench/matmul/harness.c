//===- harness.c - MLIR matmul vs OpenBLAS side-by-side benchmark -*- C -*-===//
//
// Verifies MLIR-compiled f32 matmul kernels against OpenBLAS sgemm on random
// inputs and times both in the same process, interleaved, reporting medians.
//
// The kernels are the `_mlir_ciface_<name>` entry points of functions that
// took tensors and were bufferized with identity layouts; the result, which
// bufferizes in place into the destination C, was dropped by
// `drop-equivalent-buffer-results`. Every argument arrives as a pointer to a
// ranked memref descriptor:
//
//   void _mlir_ciface_<name>(desc *A, desc *B, desc *C);
//
// The same harness is driven by two front ends: `main_aot.c` (the kernels are
// an object compiled ahead of time) and `jit_main.cpp` (the kernels are
// JIT-compiled with mlir::ExecutionEngine). Both fill a `kernel_case` table.
//
//===----------------------------------------------------------------------===//

#include "harness.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/// Ranked memref descriptors as laid out by the MLIR LLVM lowering.
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} memref2d_t;
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
} memref3d_t;

typedef void (*kernel2d_fn)(memref2d_t *, memref2d_t *, memref2d_t *);
typedef void (*kernel3d_fn)(memref3d_t *, memref3d_t *, memref3d_t *);

/// Monotonic wall clock in seconds.
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/// 64-byte aligned allocation, aborting on failure.
static float *alloc_f32(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n * sizeof(float) + 64) != 0) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return (float *)p;
}

/// Deterministic uniform [-1, 1) fill (xorshift), independent of libc rand.
static void fill_random(float *p, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    p[i] = (float)((double)(s >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
  }
}

static memref2d_t desc2d(float *p, int64_t rows, int64_t cols) {
  memref2d_t d = {p, p, 0, {rows, cols}, {cols, 1}};
  return d;
}
static memref3d_t desc3d(float *p, int64_t b, int64_t rows, int64_t cols) {
  memref3d_t d = {p, p, 0, {b, rows, cols}, {rows * cols, cols, 1}};
  return d;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// State of one benchmark case: operands and both results.
typedef struct {
  const kernel_case *kc;
  float *a, *b, *c_mlir, *c_blas;
  size_t a_n, b_n, c_n;
} case_state;

/// Runs the MLIR kernel once on the case's operands.
static void run_mlir(case_state *s) {
  const kernel_case *kc = s->kc;
  if (kc->kind == KIND_BATCH) {
    int64_t bt = kc->batch, m = kc->m, n = kc->n, k = kc->k;
    memref3d_t a = desc3d(s->a, bt, m, k), b = desc3d(s->b, bt, k, n),
               c = desc3d(s->c_mlir, bt, m, n);
    ((kernel3d_fn)kc->fn)(&a, &b, &c);
    return;
  }
  int64_t m = kc->m, n = kc->n, k = kc->k;
  memref2d_t a =
      kc->kind == KIND_TRANS_A ? desc2d(s->a, k, m) : desc2d(s->a, m, k);
  memref2d_t b =
      kc->kind == KIND_TRANS_B ? desc2d(s->b, n, k) : desc2d(s->b, k, n);
  memref2d_t c = desc2d(s->c_mlir, m, n);
  ((kernel2d_fn)kc->fn)(&a, &b, &c);
}

/// Runs the OpenBLAS reference once on the case's operands (beta = 0).
static void run_blas(case_state *s) {
  const kernel_case *kc = s->kc;
  int m = (int)kc->m, n = (int)kc->n, k = (int)kc->k;
  switch (kc->kind) {
  case KIND_PLAIN:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, s->a,
                k, s->b, n, 0.0f, s->c_blas, n);
    break;
  case KIND_TRANS_B:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, s->a, k,
                s->b, k, 0.0f, s->c_blas, n);
    break;
  case KIND_TRANS_A:
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f, s->a, m,
                s->b, n, 0.0f, s->c_blas, n);
    break;
  case KIND_BATCH:
    for (int64_t i = 0; i < kc->batch; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                  s->a + i * m * k, k, s->b + i * k * n, n, 0.0f,
                  s->c_blas + i * m * n, n);
    break;
  }
}

void harness_print_blas_info(void) {
  const char *env = getenv("OPENBLAS_CORETYPE");
  printf("OpenBLAS: config=\"%s\" core=%s OPENBLAS_CORETYPE=%s threads=%d\n",
         openblas_get_config(), openblas_get_corename(), env ? env : "(unset)",
         openblas_get_num_threads());
}

double harness_blas_probe(int64_t n, int reps) {
  kernel_case kc = {"probe", KIND_PLAIN, 1, n, n, n, NULL, 0};
  case_state s;
  memset(&s, 0, sizeof(s));
  s.kc = &kc;
  s.a_n = s.b_n = s.c_n = (size_t)(n * n);
  s.a = alloc_f32(s.a_n);
  s.b = alloc_f32(s.b_n);
  s.c_blas = alloc_f32(s.c_n);
  fill_random(s.a, s.a_n, 1);
  fill_random(s.b, s.b_n, 2);
  run_blas(&s);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    run_blas(&s);
    double t = now() - t0;
    if (t < best)
      best = t;
  }
  free(s.a);
  free(s.b);
  free(s.c_blas);
  return 2.0 * (double)n * n * n / best * 1e-9;
}

int harness_run(const kernel_case *cases, int num_cases, int reps,
                double max_ratio_fail) {
  int failures = 0;
  harness_print_blas_info();
  printf("%-22s %-7s %5s %5s %5s %5s %10s %9s %9s %9s %9s %7s %7s\n", "case",
         "kind", "batch", "M", "N", "K", "max_err", "mlir_ms", "blas_ms",
         "mlir_GF", "blas_GF", "ratio", "best_r");
  for (int ci = 0; ci < num_cases; ++ci) {
    const kernel_case *kc = &cases[ci];
    case_state s;
    memset(&s, 0, sizeof(s));
    s.kc = kc;
    s.a_n = (size_t)(kc->batch * kc->m * kc->k);
    s.b_n = (size_t)(kc->batch * kc->k * kc->n);
    s.c_n = (size_t)(kc->batch * kc->m * kc->n);
    s.a = alloc_f32(s.a_n);
    s.b = alloc_f32(s.b_n);
    s.c_mlir = alloc_f32(s.c_n);
    s.c_blas = alloc_f32(s.c_n);
    fill_random(s.a, s.a_n, 11 + (uint64_t)ci);
    fill_random(s.b, s.b_n, 23 + (uint64_t)ci);
    // Garbage in the destinations: the kernels must overwrite, not accumulate.
    fill_random(s.c_mlir, s.c_n, 99);
    fill_random(s.c_blas, s.c_n, 98);

    // Correctness (also the warm-up).
    run_mlir(&s);
    run_blas(&s);
    double max_err = 0.0, max_ref = 0.0;
    for (size_t i = 0; i < s.c_n; ++i) {
      double e = fabs((double)s.c_mlir[i] - (double)s.c_blas[i]);
      if (!(e <= max_err)) // also catches NaN
        max_err = isnan(e) ? INFINITY : e;
      if (fabs(s.c_blas[i]) > max_ref)
        max_ref = fabs(s.c_blas[i]);
    }
    // Inputs are in [-1, 1): a float32 dot product of length K in any order
    // stays far below K * 1e-6; a wrong tile is off by O(1).
    double tol = 1e-6 * (double)kc->k + 1e-5;
    int ok = max_err <= tol;

    // Timing: interleaved, alternating which contender goes first.
    int n = reps > 0 ? reps : 1;
    double *tm = malloc(sizeof(double) * (size_t)n);
    double *tb = malloc(sizeof(double) * (size_t)n);
    double *tr = malloc(sizeof(double) * (size_t)n);
    for (int r = 0; r < n; ++r) {
      double t0, t1, t2;
      if (r % 2 == 0) {
        t0 = now();
        run_mlir(&s);
        t1 = now();
        run_blas(&s);
        t2 = now();
        tm[r] = t1 - t0;
        tb[r] = t2 - t1;
      } else {
        t0 = now();
        run_blas(&s);
        t1 = now();
        run_mlir(&s);
        t2 = now();
        tb[r] = t1 - t0;
        tm[r] = t2 - t1;
      }
      tr[r] = tm[r] / tb[r];
    }
    double best_m = tm[0], best_b = tb[0];
    for (int r = 1; r < n; ++r) {
      if (tm[r] < best_m)
        best_m = tm[r];
      if (tb[r] < best_b)
        best_b = tb[r];
    }
    double med_m = median(tm, n), med_b = median(tb, n);
    double med_r = median(tr, n); // median of the per-repetition ratios
    double flop = 2.0 * (double)kc->batch * kc->m * kc->n * kc->k;
    const char *kind = kc->kind == KIND_PLAIN     ? "plain"
                       : kc->kind == KIND_TRANS_A ? "transA"
                       : kc->kind == KIND_TRANS_B ? "transB"
                                                  : "batch";
    printf("%-22s %-7s %5lld %5lld %5lld %5lld %10.3g %9.3f %9.3f %9.1f %9.1f "
           "%7.2f %7.2f%s\n",
           kc->name, kind, (long long)kc->batch, (long long)kc->m,
           (long long)kc->n, (long long)kc->k, max_err, med_m * 1e3,
           med_b * 1e3, flop / med_m * 1e-9, flop / med_b * 1e-9, med_r,
           best_m / best_b, ok ? "" : "  WRONG RESULT");
    fflush(stdout);
    if (!ok)
      ++failures;
    if (max_ratio_fail > 0 && med_r > max_ratio_fail && kc->gate) {
      printf("  ratio %.2f above the limit %.2f\n", med_r, max_ratio_fail);
      ++failures;
    }
    free(tm);
    free(tb);
    free(tr);
    free(s.a);
    free(s.b);
    free(s.c_mlir);
    free(s.c_blas);
  }
  return failures;
}
