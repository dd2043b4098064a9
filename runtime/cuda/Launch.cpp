//===- Launch.cpp - the kernel-launch calls of compiled GPU programs ------===//
//
// MLIR's gpu-to-llvm lowering and the GPU translation make host code call
// these (the ABI of MLIR's CUDA runtime wrappers): a global constructor
// loads each embedded fatbin, and every gpu.launch_func looks its kernel up,
// launches it on a stream and synchronizes. Tessel implements them on the
// CUDA runtime's library management (context-independent loading), so:
//
//  * loading is lazy: a constructor runs before main, before the rank has
//    chosen its GPU, and must not fail there (--help needs no GPU);
//  * kernels are looked up once per name, and every launch of a thread goes
//    to one stream (cudaStreamPerThread): the stream the kernels ask for is
//    not created and destroyed per launch;
//  * a launch or kernel failure ends the run naming the kernel;
//  * with --trace, each kernel is a span of the rank's GPU compute track,
//    timed by CUDA events around it (category "kernel", named after the
//    kernel; runtime/cpu/DeviceTimeline.h).
//
//===----------------------------------------------------------------------===//

#include "../cpu/RankContext.h"
#include "CudaCheck.h"
#include "CudaTimeline.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

using tessel::rt::cuda::check;

namespace {

struct LazyModule {
  const void *image;
  std::once_flag loaded;
  cudaLibrary_t library = nullptr;
  std::mutex mutex;
  std::unordered_map<std::string, cudaKernel_t> kernels;
};

void load(LazyModule &m) {
  cudaError_t status = cudaLibraryLoadData(&m.library, m.image, nullptr,
                                           nullptr, 0, nullptr, nullptr, 0);
  if (status == cudaSuccess)
    return;
  int device = 0, major = 0, minor = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  std::fprintf(stderr,
               "error: cannot load this program's GPU kernels on GPU %d "
               "(sm_%d%d): %s; the kernels were compiled for another "
               "architecture or a newer driver: recompile with "
               "tessel-compile --gpu-arch sm_%d%d\n",
               device, major, minor, cudaGetErrorString(status), major,
               minor);
  std::exit(1);
}

/// Kernel handles' names, for trace spans.
std::mutex namesMutex;
std::unordered_map<void *, std::string> &kernelNames() {
  static std::unordered_map<void *, std::string> names;
  return names;
}

std::string kernelName(void *kernel) {
  std::lock_guard<std::mutex> names(namesMutex);
  return kernelNames()[kernel];
}

} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t /*size*/) {
  auto *m = new LazyModule;
  m->image = data;
  return m;
}

extern "C" void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return mgpuModuleLoad(data, 0);
}

// Modules live as long as the process (the destructors run after the CUDA
// runtime may have shut down).
extern "C" void mgpuModuleUnload(void *) {}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  auto &m = *static_cast<LazyModule *>(module);
  std::call_once(m.loaded, [&] { load(m); });
  std::lock_guard<std::mutex> lock(m.mutex);
  auto [it, fresh] = m.kernels.try_emplace(name, nullptr);
  if (fresh) {
    check(cudaLibraryGetKernel(&it->second, m.library, name),
          ("the kernel " + std::string(name)).c_str());
    std::lock_guard<std::mutex> names(namesMutex);
    kernelNames()[reinterpret_cast<void *>(it->second)] = name;
  }
  return reinterpret_cast<void *>(it->second);
}

extern "C" void *mgpuStreamCreate() {
  return reinterpret_cast<void *>(cudaStreamPerThread);
}

extern "C" void mgpuStreamDestroy(void *) {}

extern "C" void mgpuStreamSynchronize(void *stream) {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
        "a GPU kernel failed");
  if (tessel::rt::DeviceTimeline *spans = tessel::rt::cuda::timeline())
    spans->collect(tessel::rt::currentRank(), /*wait=*/false);
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX,
                                 intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY,
                                 intptr_t blockZ, int32_t smem, void *stream,
                                 void **params, void ** /*extra*/,
                                 size_t /*paramsCount*/) {
  tessel::rt::DeviceTimeline *spans = tessel::rt::cuda::timeline();
  if (spans)
    spans->begin(tessel::rt::currentRank(), stream, kernelName(function),
                 "kernel", tessel::rt::TraceEvent::kDeviceCompute);
  dim3 grid{unsigned(gridX), unsigned(gridY), unsigned(gridZ)};
  dim3 block{unsigned(blockX), unsigned(blockY), unsigned(blockZ)};
  check(cudaLaunchKernel(function, grid, block, params, size_t(smem),
                         static_cast<cudaStream_t>(stream)),
        "launching a GPU kernel");
  if (spans)
    spans->end();
}
