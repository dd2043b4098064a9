//===- CudaDeviceInfo.h - CUDA device discovery -----------------*- C++ -*-===//

#ifndef TESSEL_RUNTIME_CUDADEVICEINFO_H
#define TESSEL_RUNTIME_CUDADEVICEINFO_H

#include <string>
#include <vector>

namespace tessel::rt::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int computeMajor = 0, computeMinor = 0;
  size_t totalMemory = 0;
  int multiprocessors = 0;
};

/// Versions of the CUDA runtime and driver, and of NCCL where linked.
struct Versions {
  int runtime = 0, driver = 0, nccl = 0;
};

Versions queryVersions();

/// The visible devices. Returns an empty list (and sets `error`) when there
/// is no driver or no device; never aborts.
std::vector<DeviceInfo> listDevices(std::string &error);

} // namespace tessel::rt::cuda

#endif // TESSEL_RUNTIME_CUDADEVICEINFO_H
