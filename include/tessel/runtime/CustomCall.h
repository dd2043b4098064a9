/*===- CustomCall.h - the C ABI of custom-call kernels -------------------===*\
|*                                                                            *|
|* A `tessel.custom_call @NAME(...)` runs the C function NAME of a shared     *|
|* library given at run time (`--custom-calls LIB.so`, several separated by  *|
|* commas), in the interpreter and in compiled programs alike. The library   *|
|* declares the ABI it was built for with TESSEL_CUSTOM_CALL_LIBRARY once;   *|
|* a library of another ABI version is refused. docs/extending.md.           *|
|*                                                                            *|
|*   #include "tessel/runtime/CustomCall.h"                                   *|
|*   TESSEL_CUSTOM_CALL_LIBRARY                                               *|
|*   int32_t my_gelu(const TesselBuffer *in, int32_t nin,                     *|
|*                   const TesselBuffer *out, int32_t nout,                   *|
|*                   const char *config) { ... return 0; }                   *|
|*                                                                            *|
|* A program compiled for CUDA GPUs runs the kernel's GPU entry instead,      *|
|* TESSEL_CUDA_KERNEL(my_gelu) (the symbol tessel_cuda_my_gelu), which also   *|
|* takes the stream to enqueue its work on; one library may hold both.        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TESSEL_RUNTIME_CUSTOMCALL_H
#define TESSEL_RUNTIME_CUSTOMCALL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Changes when TesselBuffer or the kernel's signature change. */
#define TESSEL_CUSTOM_CALL_ABI_VERSION 1

/* Element types. bf16 and f16 are their 16 bits (uint16_t), i1 one byte. */
enum TesselDType {
  TESSEL_DTYPE_F16 = 0,
  TESSEL_DTYPE_BF16 = 1,
  TESSEL_DTYPE_F32 = 2,
  TESSEL_DTYPE_F64 = 3,
  TESSEL_DTYPE_I1 = 4,
  TESSEL_DTYPE_I32 = 5,
  TESSEL_DTYPE_I64 = 6
};

/* A dense row-major tensor: on this device, its block (the shapes the op
 * has after partitioning). */
typedef struct TesselBuffer {
  void *data;
  int32_t dtype; /* enum TesselDType */
  int32_t rank;
  const int64_t *shape;
} TesselBuffer;

/* A CPU kernel: reads `inputs`, writes every element of `outputs` (buffers
 * the caller owns, of the result types); `config` is the op's config
 * string. Returns 0, or nonzero to stop the program with an error naming
 * the kernel. */
typedef int32_t (*TesselCpuKernel)(const TesselBuffer *inputs,
                                   int32_t numInputs,
                                   const TesselBuffer *outputs,
                                   int32_t numOutputs, const char *config);

/* A GPU kernel (programs compiled with --target cuda): the same buffers, in
 * memory the GPU addresses; it enqueues its work on `stream` (a
 * cudaStream_t) and may return before the work is done: the runtime waits
 * on the stream before anything reads the outputs. Returns 0, or nonzero
 * (also for a launch that failed) to stop the program with an error naming
 * the kernel. */
typedef int32_t (*TesselCudaKernel)(const TesselBuffer *inputs,
                                    int32_t numInputs,
                                    const TesselBuffer *outputs,
                                    int32_t numOutputs, const char *config,
                                    void *stream);

/* The name of kernel NAME's GPU entry: define it as
 *   int32_t TESSEL_CUDA_KERNEL(my_gelu)(const TesselBuffer *in, ...,
 *                                       void *stream) { ... }          */
#define TESSEL_CUDA_KERNEL(name) tessel_cuda_##name

/* Once per library: the ABI version it was built for. */
#define TESSEL_CUSTOM_CALL_LIBRARY                                            \
  int32_t tessel_custom_call_abi_version(void) {                              \
    return TESSEL_CUSTOM_CALL_ABI_VERSION;                                    \
  }

#ifdef __cplusplus
}
#endif

#endif /* TESSEL_RUNTIME_CUSTOMCALL_H */
