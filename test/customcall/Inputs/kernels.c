/* Custom-call kernels for test/customcall: GELU (tanh form) and its
 * gradient, computed in double and rounded once (as the interpreter's
 * tessel.gelu), and a 2-D matmul. */
#include "tessel/runtime/CustomCall.h"

#include <math.h>
#include <string.h>

TESSEL_CUSTOM_CALL_LIBRARY

static int64_t count(const TesselBuffer *b) {
  int64_t n = 1;
  for (int32_t d = 0; d < b->rank; ++d)
    n *= b->shape[d];
  return n;
}

static const double kC = 0.7978845608028654; /* sqrt(2 / pi) */

int32_t my_gelu(const TesselBuffer *in, int32_t nin, const TesselBuffer *out,
                int32_t nout, const char *config) {
  if (nin != 1 || nout != 1 || in[0].dtype != TESSEL_DTYPE_F32)
    return 1;
  const float *x = (const float *)in[0].data;
  float *y = (float *)out[0].data;
  for (int64_t k = 0, n = count(&in[0]); k < n; ++k) {
    double v = x[k];
    y[k] = (float)(0.5 * v * (1 + tanh(kC * (v + 0.044715 * v * v * v))));
  }
  return 0;
}

/* dx = dy * d gelu(x) / dx */
int32_t my_gelu_grad(const TesselBuffer *in, int32_t nin,
                     const TesselBuffer *out, int32_t nout,
                     const char *config) {
  if (nin != 2 || nout != 1)
    return 1;
  const float *x = (const float *)in[0].data, *dy = (const float *)in[1].data;
  float *dx = (float *)out[0].data;
  for (int64_t k = 0, n = count(&in[0]); k < n; ++k) {
    double v = x[k], u = kC * (v + 0.044715 * v * v * v);
    double t = tanh(u);
    double d = 0.5 * (1 + t) +
               0.5 * v * (1 - t * t) * kC * (1 + 3 * 0.044715 * v * v);
    dx[k] = (float)(dy[k] * d);
  }
  return 0;
}

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
