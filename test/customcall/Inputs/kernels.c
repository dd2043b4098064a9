/* Custom-call kernels for test/customcall: a 2-D matmul and a kernel that
 * fails. The tests link them with examples/extending/FusedGelu.c (GELU and
 * its gradient, computed in double and rounded once, as the interpreter's
 * tessel.gelu), which declares the library's ABI version. */
#include "tessel/runtime/CustomCall.h"

#include <string.h>

/* C[m, n] = A[m, k] B[k, n], summed in double. */
int32_t my_matmul(const TesselBuffer *in, int32_t nin, const TesselBuffer *out,
                  int32_t nout, const char *config) {
  if (nin != 2 || nout != 1 || in[0].rank != 2 || in[1].rank != 2)
    return 1;
  int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const float *a = (const float *)in[0].data, *b = (const float *)in[1].data;
  float *c = (float *)out[0].data;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l)
        s += (double)a[i * k + l] * b[l * n + j];
      c[i * n + j] = (float)s;
    }
  return 0;
}

/* Fails on purpose. */
int32_t my_failing(const TesselBuffer *in, int32_t nin,
                   const TesselBuffer *out, int32_t nout, const char *config) {
  return strcmp(config, "fail") == 0 ? 7 : 0;
}
