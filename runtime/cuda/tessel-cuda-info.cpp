//===- tessel-cuda-info.cpp - print what the CUDA backend sees ------------===//
//
// Exits 0 and lists devices when a GPU is visible; exits 0 with "no CUDA
// device" otherwise, so that it can run in CPU-only CI as a link check.

#include "tessel/runtime/CudaDeviceInfo.h"

#ifdef TESSEL_HAVE_NCCL
#include "NcclLibrary.h"
#endif

#include <cstdio>

int main() {
  using namespace tessel::rt::cuda;
  Versions v = queryVersions();
  std::printf("CUDA runtime %d, driver %d, NCCL %d\n", v.runtime, v.driver,
              v.nccl);
#ifdef TESSEL_HAVE_NCCL
  // What a compiled executable would load for one process per GPU.
  llvm::Expected<const tessel::rt::Nccl *> nccl = tessel::rt::loadNccl();
  if (nccl)
    std::printf("NCCL for executables: %s (%d.%d.%d)\n", (*nccl)->path.c_str(),
                (*nccl)->version / 10000, (*nccl)->version / 100 % 100,
                (*nccl)->version % 100);
  else
    std::printf("NCCL for executables: %s\n",
                llvm::toString(nccl.takeError()).c_str());
#endif
  std::string error;
  std::vector<DeviceInfo> devices = listDevices(error);
  if (devices.empty()) {
    std::printf("no CUDA device (%s)\n", error.c_str());
    return 0;
  }
  for (const DeviceInfo &d : devices)
    std::printf("device %d: %s, sm_%d%d, %.1f GiB, %d SMs\n", d.index,
                d.name.c_str(), d.computeMajor, d.computeMinor,
                d.totalMemory / double(1 << 30), d.multiprocessors);
  return 0;
}
