//===- CudaDevice.cpp - an NVIDIA GPU as the device compiled code runs on -===//
//
// Device.h for the cuda target. One GPU per rank: local rank i uses GPU i.
// Buffers are managed memory, which kernels, cuBLASLt and the host-side
// runtime (initialization, checkpoints, host collectives) all address.
//
// The CUDA runtime is linked statically (libcudart_static): an executable
// needs the driver (libcuda.so.1) and, for matmuls, cuBLASLt (loaded on
// first use, CublasGemm.cpp).
//
//===----------------------------------------------------------------------===//

#include "../cpu/Device.h"
#include "CudaCheck.h"

#include <cuda_runtime_api.h>

#include <string>

using namespace tessel::rt;

std::string tessel::rt::prepareDevices(int64_t localRanks, int64_t) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    return std::string("this program was compiled for CUDA GPUs "
                       "(tessel-compile --target cuda), but no GPU is "
                       "visible") +
           (status != cudaSuccess
                ? std::string(": ") + cudaGetErrorString(status)
                : std::string()) +
           "; check nvidia-smi and CUDA_VISIBLE_DEVICES";
  if (count < localRanks)
    return std::to_string(localRanks) + " ranks run on this machine but it "
           "has " + std::to_string(count) + " visible GPU" +
           (count == 1 ? "" : "s") + "; one rank needs one GPU (start fewer "
           "ranks per node, or recompile with a smaller --mesh)";
  return "";
}

std::string tessel::rt::bindRankDevice(int64_t localRank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || localRank >= count)
    return "local rank " + std::to_string(localRank) + " has no GPU (" +
           std::to_string(count) + " visible)";
  cudaError_t status = cudaSetDevice(int(localRank));
  if (status != cudaSuccess)
    return "cannot use GPU " + std::to_string(localRank) + ": " +
           cudaGetErrorString(status);
  return "";
}

void *tessel::rt::allocateDeviceMemory(size_t bytes) {
  void *p = nullptr;
  if (cudaMallocManaged(&p, bytes ? bytes : 1) != cudaSuccess) {
    cudaGetLastError(); // clear the sticky-free error for the caller
    return nullptr;
  }
  return p;
}

void tessel::rt::freeDeviceMemory(void *p) {
  if (p)
    cudaFree(p);
}

std::string tessel::rt::deviceDescription() {
  int device = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    return "GPU";
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ")";
}
