//===- check_misc.c - Correctness checks of misc.mlir ------------*- C -*-===//
//
// Calls the functions of misc.mlir (compiled with the same schedule and
// pipeline as the benchmark) on random inputs and compares them with naive
// double-precision loops. Prints the relative error of each and exits
// non-zero if one is too large. Not a benchmark.
//
//===----------------------------------------------------------------------===//

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} desc1;
typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} desc2;
typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
} desc3;

void _mlir_ciface_two_matmuls(desc2 *, desc2 *, desc2 *, desc2 *);
void _mlir_ciface_matmul_bias_relu(desc2 *, desc2 *, desc1 *, desc2 *);
void _mlir_ciface_matmul_f64(desc2 *, desc2 *, desc2 *);
void _mlir_ciface_matmul_nmk(desc2 *, desc2 *, desc2 *);
void _mlir_ciface_batch_odd(desc3 *, desc3 *, desc3 *);
void _mlir_ciface_matmul_dyn(desc2 *, desc2 *, desc2 *);

static desc1 d1(void *p, int64_t n) {
  desc1 d = {p, p, 0, {n}, {1}};
  return d;
}
static desc2 d2(void *p, int64_t r, int64_t c) {
  desc2 d = {p, p, 0, {r, c}, {c, 1}};
  return d;
}
static desc3 d3(void *p, int64_t b, int64_t r, int64_t c) {
  desc3 d = {p, p, 0, {b, r, c}, {r * c, c, 1}};
  return d;
}

static uint64_t rng = 0x12345678;
static double rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}
static float *randf(size_t n) {
  float *p = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    p[i] = (float)rnd();
  return p;
}

/// C[m,n] = sum_k A[m,k] B[k,n] in double, from float inputs.
static void ref_mm(const float *a, const float *b, double *c, int m, int n,
                   int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p)
        s += (double)a[i * k + p] * (double)b[p * n + j];
      c[i * n + j] = s;
    }
}

static int failures = 0;

/// Prints and checks max|got - ref| / max|ref|.
static void report(const char *name, const float *got, const double *ref,
                   size_t n) {
  double err = 0, mag = 0;
  for (size_t i = 0; i < n; ++i) {
    double e = fabs((double)got[i] - ref[i]);
    if (!(e <= err))
      err = isnan(e) ? INFINITY : e;
    if (fabs(ref[i]) > mag)
      mag = fabs(ref[i]);
  }
  double rel = err / (mag > 0 ? mag : 1);
  int ok = rel < 1e-5;
  printf("%-18s max_abs_err %.3g  relative %.3g  %s\n", name, err, rel,
         ok ? "ok" : "WRONG RESULT");
  failures += !ok;
}

int main(void) {
  { // two_matmuls: (A * B) * C
    float *a = randf(200 * 300), *b = randf(300 * 150), *c = randf(150 * 70);
    float *d = randf(200 * 70);
    desc2 da = d2(a, 200, 300), db = d2(b, 300, 150), dc = d2(c, 150, 70),
          dd = d2(d, 200, 70);
    _mlir_ciface_two_matmuls(&da, &db, &dc, &dd);
    double *ab = malloc(sizeof(double) * 200 * 150);
    double *ref = malloc(sizeof(double) * 200 * 70);
    ref_mm(a, b, ab, 200, 150, 300);
    for (int i = 0; i < 200; ++i)
      for (int j = 0; j < 70; ++j) {
        double s = 0;
        for (int p = 0; p < 150; ++p)
          s += (double)(float)ab[i * 150 + p] * (double)c[p * 70 + j];
        ref[i * 70 + j] = s;
      }
    report("two_matmuls", d, ref, 200 * 70);
  }
  { // matmul_bias_relu: relu(X * W + bias)
    float *x = randf(333 * 260), *w = randf(260 * 520), *bias = randf(520);
    float *y = randf(333 * 520);
    desc2 dx = d2(x, 333, 260), dw = d2(w, 260, 520), dy = d2(y, 333, 520);
    desc1 db = d1(bias, 520);
    _mlir_ciface_matmul_bias_relu(&dx, &dw, &db, &dy);
    double *ref = malloc(sizeof(double) * 333 * 520);
    ref_mm(x, w, ref, 333, 520, 260);
    for (int i = 0; i < 333; ++i)
      for (int j = 0; j < 520; ++j) {
        double v = ref[i * 520 + j] + bias[j];
        ref[i * 520 + j] = v > 0 ? v : 0;
      }
    report("matmul_bias_relu", y, ref, 333 * 520);
  }
  { // matmul_f64 (not matched by the schedule)
    double *a = malloc(sizeof(double) * 64 * 48), *b = malloc(8 * 48 * 40);
    double *c = malloc(sizeof(double) * 64 * 40);
    for (int i = 0; i < 64 * 48; ++i)
      a[i] = rnd();
    for (int i = 0; i < 48 * 40; ++i)
      b[i] = rnd();
    desc2 da = d2(a, 64, 48), db = d2(b, 48, 40), dc = d2(c, 64, 40);
    _mlir_ciface_matmul_f64(&da, &db, &dc);
    double err = 0;
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 40; ++j) {
        double s = 0;
        for (int p = 0; p < 48; ++p)
          s += a[i * 48 + p] * b[p * 40 + j];
        err = fmax(err, fabs(s - c[i * 40 + j]));
      }
    int ok = err < 1e-12;
    printf("%-18s max_abs_err %.3g  %s\n", "matmul_f64", err,
           ok ? "ok" : "WRONG RESULT");
    failures += !ok;
  }
  { // matmul_nmk (not matched by the schedule)
    float *a = randf(96 * 80), *b = randf(80 * 72), *c = randf(96 * 72);
    desc2 da = d2(a, 96, 80), db = d2(b, 80, 72), dc = d2(c, 96, 72);
    _mlir_ciface_matmul_nmk(&da, &db, &dc);
    double *ref = malloc(sizeof(double) * 96 * 72);
    ref_mm(a, b, ref, 96, 72, 80);
    report("matmul_nmk", c, ref, 96 * 72);
  }
  { // batch_odd
    float *a = randf(3 * 100 * 70), *b = randf(3 * 70 * 45);
    float *c = randf(3 * 100 * 45);
    desc3 da = d3(a, 3, 100, 70), db = d3(b, 3, 70, 45), dc = d3(c, 3, 100, 45);
    _mlir_ciface_batch_odd(&da, &db, &dc);
    double *ref = malloc(sizeof(double) * 3 * 100 * 45);
    for (int t = 0; t < 3; ++t)
      ref_mm(a + t * 100 * 70, b + t * 70 * 45, ref + t * 100 * 45, 100, 45,
             70);
    report("batch_odd", c, ref, 3 * 100 * 45);
  }
  { // matmul_dyn (dynamic sizes, not matched by the schedule)
    float *a = randf(37 * 23), *b = randf(23 * 29), *c = randf(37 * 29);
    desc2 da = d2(a, 37, 23), db = d2(b, 23, 29), dc = d2(c, 37, 29);
    _mlir_ciface_matmul_dyn(&da, &db, &dc);
    double *ref = malloc(sizeof(double) * 37 * 29);
    ref_mm(a, b, ref, 37, 29, 23);
    report("matmul_dyn", c, ref, 37 * 29);
  }
  return failures ? 1 : 0;
}
