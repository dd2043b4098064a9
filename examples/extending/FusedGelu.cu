/* The GPU entries of FusedGelu.c's kernels (docs/extending.md), for
 * programs compiled with --target cuda: the same formulas, in double and
 * rounded once, one thread per element, enqueued on the stream Tessel
 * passes. Built with nvcc against the installed
 * tessel/runtime/CustomCall.h only. */
#include "tessel/runtime/CustomCall.h"

#include <cuda_runtime.h>

extern "C" {
TESSEL_CUSTOM_CALL_LIBRARY
}

namespace {

const double kC = 0.7978845608028654; /* sqrt(2 / pi) */

int64_t count(const TesselBuffer *b) {
  int64_t n = 1;
  for (int32_t d = 0; d < b->rank; ++d)
    n *= b->shape[d];
  return n;
}

__global__ void gelu(const float *x, float *y, int64_t n) {
  int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n)
    return;
  double v = x[k];
  y[k] = float(0.5 * v * (1 + tanh(kC * (v + 0.044715 * v * v * v))));
}

__global__ void geluGrad(const float *x, const float *dy, float *dx,
                         int64_t n) {
  int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n)
    return;
  double v = x[k], t = tanh(kC * (v + 0.044715 * v * v * v));
  double d = 0.5 * (1 + t) +
             0.5 * v * (1 - t * t) * kC * (1 + 3 * 0.044715 * v * v);
  dx[k] = float(dy[k] * d);
}

unsigned blocks(int64_t n) { return unsigned((n + 255) / 256); }

/* 0, or the launch's error (Tessel stops the program naming the kernel). */
int32_t launched() { return cudaPeekAtLastError() == cudaSuccess ? 0 : 2; }

} // namespace

extern "C" int32_t TESSEL_CUDA_KERNEL(ext_gelu)(const TesselBuffer *in,
                                                int32_t nin,
                                                const TesselBuffer *out,
                                                int32_t nout,
                                                const char *config,
                                                void *stream) {
  if (nin != 1 || nout != 1 || in[0].dtype != TESSEL_DTYPE_F32)
    return 1;
  int64_t n = count(&in[0]);
  if (n > 0)
    gelu<<<blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const float *>(in[0].data),
        static_cast<float *>(out[0].data), n);
  return launched();
}

extern "C" int32_t TESSEL_CUDA_KERNEL(ext_gelu_grad)(const TesselBuffer *in,
                                                     int32_t nin,
                                                     const TesselBuffer *out,
                                                     int32_t nout,
                                                     const char *config,
                                                     void *stream) {
  if (nin != 2 || nout != 1 || in[0].dtype != TESSEL_DTYPE_F32)
    return 1;
  int64_t n = count(&in[0]);
  if (n > 0)
    geluGrad<<<blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const float *>(in[0].data),
        static_cast<const float *>(in[1].data),
        static_cast<float *>(out[0].data), n);
  return launched();
}
