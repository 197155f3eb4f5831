//===- blas_time.c - OpenBLAS sgemm timings for bench/einsum ------*- C -*-===//
//
// The OpenBLAS side of bench/einsum/run.sh: times C = A * B (row-major f32,
// beta = 0) with cblas_sgemm and prints the median and the least seconds
// of the calls.
// The core-type probe and the build info come from bench/matmul's harness.
//
//   blas_time M N K REPS    median and least seconds of REPS calls, after
//                           one warm-up
//   blas_time --probe       GFLOP/s of the best of 5 1024^3 calls
//   blas_time --info        OpenBLAS build, core and thread count
//
//===----------------------------------------------------------------------===//

#include "harness.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/// Monotonic wall clock in seconds.
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/// 64-byte aligned, filled with values in [-1, 1) (the timings do not depend
/// on them as long as they are normal numbers).
static float *make_operand(size_t n, unsigned seed) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n * sizeof(float) + 64) != 0) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  float *f = (float *)p;
  for (size_t i = 0; i < n; ++i)
    f[i] = (float)((i * 2654435761u + seed) % 2001u) / 1000.0f - 1.0f;
  return f;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--probe")) {
    printf("%.2f\n", harness_blas_probe(1024, 5));
    return 0;
  }
  if (argc == 2 && !strcmp(argv[1], "--info")) {
    harness_print_blas_info();
    return 0;
  }
  if (argc != 5) {
    fprintf(stderr, "usage: %s M N K REPS | --probe | --info\n", argv[0]);
    return 2;
  }
  int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
  int reps = atoi(argv[4]);
  if (m <= 0 || n <= 0 || k <= 0 || reps <= 0) {
    fprintf(stderr, "sizes and REPS must be positive\n");
    return 2;
  }
  float *a = make_operand((size_t)m * k, 1);
  float *b = make_operand((size_t)k * n, 2);
  float *c = make_operand((size_t)m * n, 3);
  double *seconds = malloc((size_t)reps * sizeof(double));
  for (int r = -1; r < reps; ++r) {
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k,
                b, n, 0.0f, c, n);
    if (r >= 0)
      seconds[r] = now() - t0;
  }
  qsort(seconds, (size_t)reps, sizeof(double), cmp_double);
  printf("%.9f %.9f\n", seconds[reps / 2], seconds[0]);
  free(seconds);
  free(a);
  free(b);
  free(c);
  return 0;
}
