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
#include "CudaTimeline.h"

#include "tessel/runtime/PeakFlops.h"
#include "tessel/support/CustomCalls.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
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

void tessel::rt::finishDeviceTrace() {
  if (DeviceTimeline *spans = cuda::timeline())
    spans->collect(currentRank(), /*wait=*/true);
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

double tessel::rt::devicePeakFlops(bool half) {
  int device = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    return 0;
  const char *tf32 = std::getenv("TESSEL_ALLOW_TF32"); // CublasGemm.cpp
  MatmulPrecision p = half                     ? MatmulPrecision::Half
                      : tf32 && tf32[0] == '1' ? MatmulPrecision::TF32
                                               : MatmulPrecision::F32;
  return gpuPeakFlops(prop.name, p);
}

/// The kernel's GPU entry on this rank's stream (the one compiled kernels
/// use), waited for before the outputs are read: a failed launch or fault
/// in it is reported as the custom call's.
std::string tessel::rt::runCustomKernel(const std::string &name,
                                        const std::vector<TesselBuffer> &buffers,
                                        int32_t numInputs,
                                        const std::string &config) {
  namespace cc = tessel::customcalls;
  llvm::Expected<void *> entry = cc::lookupEntry(name, cc::Entry::Cuda);
  if (!entry)
    return llvm::toString(entry.takeError());
  auto kernel = reinterpret_cast<TesselCudaKernel>(*entry);
  cudaStream_t stream = cudaStreamPerThread;
  int32_t rc = kernel(buffers.data(), numInputs, buffers.data() + numInputs,
                      int32_t(buffers.size()) - numInputs, config.c_str(),
                      static_cast<void *>(stream));
  if (rc != 0)
    return "custom call @" + name + " failed (its GPU kernel returned " +
           std::to_string(rc) + ")";
  cudaError_t status = cudaStreamSynchronize(stream);
  if (status == cudaSuccess)
    status = cudaGetLastError();
  if (status != cudaSuccess)
    return "custom call @" + name + " failed on the GPU: " +
           cudaGetErrorString(status);
  return "";
}
