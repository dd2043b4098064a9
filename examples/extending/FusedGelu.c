/* A custom-call kernel library (docs/extending.md): GELU in its tanh form
 * and its gradient, for f32 tensors of any shape, computed in double and
 * rounded once. Built against the installed tessel/runtime/CustomCall.h
 * only; model.mlir calls both. */
#include "tessel/runtime/CustomCall.h"

#include <math.h>

TESSEL_CUSTOM_CALL_LIBRARY

static const double kC = 0.7978845608028654; /* sqrt(2 / pi) */

static int64_t count(const TesselBuffer *b) {
  int64_t n = 1;
  for (int32_t d = 0; d < b->rank; ++d)
    n *= b->shape[d];
  return n;
}

/* y = x / 2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
int32_t ext_gelu(const TesselBuffer *in, int32_t nin, const TesselBuffer *out,
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

/* dx = dy * gelu'(x) */
int32_t ext_gelu_grad(const TesselBuffer *in, int32_t nin,
                      const TesselBuffer *out, int32_t nout,
                      const char *config) {
  if (nin != 2 || nout != 1 || in[0].dtype != TESSEL_DTYPE_F32)
    return 1;
  const float *x = (const float *)in[0].data, *dy = (const float *)in[1].data;
  float *dx = (float *)out[0].data;
  for (int64_t k = 0, n = count(&in[0]); k < n; ++k) {
    double v = x[k], t = tanh(kC * (v + 0.044715 * v * v * v));
    double d = 0.5 * (1 + t) +
               0.5 * v * (1 - t * t) * kC * (1 + 3 * 0.044715 * v * v);
    dx[k] = (float)(dy[k] * d);
  }
  return 0;
}
