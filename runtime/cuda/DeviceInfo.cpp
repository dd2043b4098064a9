//===- DeviceInfo.cpp - CUDA device discovery -----------------------------===//

#include "tessel/runtime/CudaDeviceInfo.h"

#include <cuda_runtime_api.h>
#ifdef TESSEL_HAVE_NCCL
#include <nccl.h>
#endif

namespace tessel::rt::cuda {

Versions queryVersions() {
  Versions v;
  cudaRuntimeGetVersion(&v.runtime);
  if (cudaDriverGetVersion(&v.driver) != cudaSuccess)
    v.driver = 0;
#ifdef TESSEL_HAVE_NCCL
  ncclGetVersion(&v.nccl);
#endif
  return v;
}

std::vector<DeviceInfo> listDevices(std::string &error) {
  std::vector<DeviceInfo> devices;
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    error = cudaGetErrorString(status);
    return devices;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
      continue;
    devices.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem,
                       prop.multiProcessorCount});
  }
  return devices;
}

} // namespace tessel::rt::cuda
