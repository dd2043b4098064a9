/* OpenBLAS sgemm throughput for square n x n x n products: the reference
 * the CPU backend's step throughput is compared with (bench/cpu/README.md).
 * Usage: sgemm N [THREADS]; prints "sgemm N GFLOP/s". */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  if (argc > 2)
    openblas_set_num_threads(atoi(argv[2]));
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n),
        *c = malloc(sizeof(float) * n * n);
  for (long i = 0; i < (long)n * n; ++i) {
    a[i] = (float)(i % 7) * 0.1f;
    b[i] = (float)(i % 5) * 0.2f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b,
              n, 0, c, n); /* warm up */
  int reps = 0;
  double start = now(), elapsed;
  do {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n,
                b, n, 0, c, n);
    ++reps;
    elapsed = now() - start;
  } while (elapsed < 1.0);
  printf("sgemm %d %.2f GFLOP/s\n", n, 2.0 * n * n * n * reps / elapsed / 1e9);
  free(a);
  free(b);
  free(c);
  return 0;
}
