//===- CudaCheck.h - CUDA errors end the run with a message -----*- C++ -*-===//

#ifndef TESSEL_RUNTIME_CUDA_CUDACHECK_H
#define TESSEL_RUNTIME_CUDA_CUDACHECK_H

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace tessel::rt::cuda {

/// Ends the process with "error: WHAT: <the CUDA error>" unless `status` is
/// success. A failed kernel leaves the context unusable, so there is nothing
/// to go on with.
inline void check(cudaError_t status, const char *what) {
  if (status == cudaSuccess)
    return;
  std::fprintf(stderr, "error: %s: %s (%s)\n", what,
               cudaGetErrorString(status), cudaGetErrorName(status));
  std::exit(1);
}

} // namespace tessel::rt::cuda

#endif // TESSEL_RUNTIME_CUDA_CUDACHECK_H
