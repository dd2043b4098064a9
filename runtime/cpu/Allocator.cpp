//===- Allocator.cpp - buffers of compiled programs, reused across steps --===//
//
// Compiled programs allocate and free their temporaries through these two
// functions (finalize-memref-to-llvm{use-generic-functions}). Every step
// allocates the same sizes in the same order, so freed blocks are kept per
// exact size and handed out again: after the first step no allocation
// reaches the system allocator, and large buffers are not unmapped and
// page-faulted back in on every step (that cost a 16M-parameter GPT step
// a third of its time). Caches are per thread (one per rank), bounded by
// kMaxCachedBytes. Blocks come from the device's memory (Device.h): host
// memory on CPUs, managed memory on GPUs.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include <cstdint>
#include <cstdlib>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kHeader = 64; // keeps the payload 64-byte aligned
constexpr size_t kMaxCachedBytes = size_t(16) << 30;

struct Cache {
  std::unordered_map<size_t, std::vector<void *>> free;
  size_t cached = 0;
  size_t live = 0, peak = 0; ///< bytes handed out and not released
  void take(size_t size) {
    live += size;
    peak = live > peak ? live : peak;
  }
  ~Cache() {
    for (auto &[size, blocks] : free)
      for (void *b : blocks)
        tessel::rt::freeDeviceMemory(b);
  }
};

thread_local Cache cache;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

void *allocate(size_t bytes) {
  size_t size = roundUp(bytes ? bytes : 1, kHeader);
  auto it = cache.free.find(size);
  if (it != cache.free.end() && !it->second.empty()) {
    void *block = it->second.back();
    it->second.pop_back();
    cache.cached -= size;
    cache.take(size);
    return static_cast<char *>(block) + kHeader;
  }
  void *block = tessel::rt::allocateDeviceMemory(size + kHeader);
  if (!block)
    return nullptr;
  *static_cast<size_t *>(block) = size;
  cache.take(size);
  return static_cast<char *>(block) + kHeader;
}

void release(void *payload) {
  if (!payload)
    return;
  void *block = static_cast<char *>(payload) - kHeader;
  size_t size = *static_cast<size_t *>(block);
  cache.live -= size;
  if (cache.cached + size > kMaxCachedBytes) {
    tessel::rt::freeDeviceMemory(block);
    return;
  }
  cache.free[size].push_back(block);
  cache.cached += size;
}

} // namespace

size_t tessel::rt::peakBufferBytes() { return cache.peak; }

extern "C" void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocate(bytes);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t bytes) {
  // Every block is 64-byte aligned; larger alignments are not requested.
  (void)alignment;
  return allocate(bytes);
}

extern "C" void _mlir_memref_to_llvm_free(void *payload) { release(payload); }
