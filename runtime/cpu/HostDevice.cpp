//===- HostDevice.cpp - the CPU as the device compiled code runs on -------===//
//
// Device.h for the cpu target: host memory, and OpenBLAS threads sharing
// the cores with the ranks of this machine (--threads and
// OPENBLAS_NUM_THREADS override the share).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "tessel/support/CustomCalls.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

extern "C" {
// OpenBLAS's thread-count control (not in every cblas.h).
void openblas_set_num_threads(int);
}

/// OpenBLAS threads per rank: --threads, else OPENBLAS_NUM_THREADS (which
/// OpenBLAS read itself), else the cores shared by the ranks of this
/// machine.
std::string tessel::rt::prepareDevices(int64_t localRanks, int64_t threads) {
  if (threads > 0) {
    openblas_set_num_threads(int(threads));
    return "";
  }
  if (std::getenv("OPENBLAS_NUM_THREADS"))
    return "";
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  openblas_set_num_threads(
      std::max<int>(1, int(cores / std::max<int64_t>(1, localRanks))));
  return "";
}

std::string tessel::rt::bindRankDevice(int64_t) { return ""; }

void *tessel::rt::allocateDeviceMemory(size_t bytes) {
  return std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
}

void tessel::rt::freeDeviceMemory(void *p) { std::free(p); }

void tessel::rt::finishDeviceTrace() {}

std::string tessel::rt::deviceDescription() { return ""; }

double tessel::rt::devicePeakFlops(bool) { return 0; }

std::string tessel::rt::runCustomKernel(const std::string &name,
                                        const std::vector<TesselBuffer> &buffers,
                                        int32_t numInputs,
                                        const std::string &config) {
  llvm::Expected<TesselCpuKernel> kernel = tessel::customcalls::lookup(name);
  if (!kernel)
    return llvm::toString(kernel.takeError());
  int32_t rc = (*kernel)(buffers.data(), numInputs, buffers.data() + numInputs,
                         int32_t(buffers.size()) - numInputs, config.c_str());
  if (rc != 0)
    return "custom call @" + name + " failed (its kernel returned " +
           std::to_string(rc) + ")";
  return "";
}

bool tessel::rt::deviceHasCommunicator() { return false; }

int tessel::rt::runProcessRank(const LaunchInfo &, std::chrono::seconds,
                               const std::function<int(Communicator &)> &) {
  std::fprintf(stderr, "error: the cpu target's processes communicate "
                       "through MPI; start them with mpirun\n");
  return 1;
}
