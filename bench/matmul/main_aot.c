//===- main_aot.c - Driver for the ahead-of-time compiled kernels -*- C -*-===//
//
// Links the object produced from matmul.mlir (mlir-opt -> mlir-translate ->
// clang -O3 -march=native) with OpenBLAS and runs the harness.
//
//   bench_aot [--reps N] [--only NAME] [--max-ratio R] [--keep-heap] [--probe]
//
// --probe only times OpenBLAS (used by run.sh to choose OPENBLAS_CORETYPE).
// --keep-heap tells glibc malloc to keep freed memory (no mmap for large
// blocks, no trimming): the kernels malloc their packing buffers on every
// call, and by default large ones are fresh pages each time (see README.md).
//
//===----------------------------------------------------------------------===//

#include "harness.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECLARE(name, kind, b, m, n, k, gate) void _mlir_ciface_##name();
HARNESS_CASES(DECLARE)
#undef DECLARE

int main(int argc, char **argv) {
  int reps = 11;
  const char *only = NULL;
  double max_ratio = 0.0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else if (!strcmp(argv[i], "--max-ratio") && i + 1 < argc) {
      max_ratio = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--keep-heap")) {
      // 32 MiB is the largest mmap threshold glibc accepts.
      if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) ||
          !mallopt(M_TRIM_THRESHOLD, 1 << 30)) {
        fprintf(stderr, "mallopt failed\n");
        return 2;
      }
      printf("malloc: mmap threshold 32 MiB, trim threshold 1 GiB\n");
    } else if (!strcmp(argv[i], "--probe")) {
      printf("%.2f\n", harness_blas_probe(1024, 5));
      return 0;
    } else {
      fprintf(stderr,
              "usage: %s [--reps N] [--only NAME] [--max-ratio R] "
              "[--keep-heap] [--probe]\n",
              argv[0]);
      return 2;
    }
  }
#define ENTRY(name, kind, b, m, n, k, gate)                                    \
  {#name, kind, b, m, n, k, (void *)_mlir_ciface_##name, gate},
  kernel_case all[] = {HARNESS_CASES(ENTRY)};
#undef ENTRY
  int num = (int)(sizeof(all) / sizeof(all[0]));
  kernel_case sel[sizeof(all) / sizeof(all[0])];
  int n = 0;
  for (int i = 0; i < num; ++i)
    if (!only || strstr(all[i].name, only))
      sel[n++] = all[i];
  printf("driver: ahead-of-time object, %d repetitions per case\n", reps);
  int failures = harness_run(sel, n, reps, max_ratio);
  return failures ? 1 : 0;
}
