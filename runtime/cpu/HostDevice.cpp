//===- HostDevice.cpp - the CPU as the device compiled code runs on -------===//
//
// Device.h for the cpu target: host memory, and OpenBLAS threads sharing
// the cores with the ranks of this machine.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

extern "C" {
// OpenBLAS's thread-count control (not in every cblas.h).
void openblas_set_num_threads(int);
}

std::string tessel::rt::prepareDevices(int64_t localRanks) {
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

std::string tessel::rt::deviceDescription() { return ""; }
