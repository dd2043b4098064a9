//===- CustomCall.cpp - tessel.custom_call in compiled programs -----------===//
//
// tessel_rt_custom_call (tessel/runtime/Abi.h): the descriptor the lowering
// wrote, decoded into the kernel ABI's buffers (tessel/runtime/CustomCall.h)
// and run by the device (its CPU or GPU entry, from the --custom-calls
// libraries).
//
//===----------------------------------------------------------------------===//

#include "tessel/runtime/Abi.h"
#include "Device.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// Ends the program from whichever rank thread finds the problem: _Exit,
/// since the other ranks are still running (exit's destructors would pull
/// their state away under them).
[[noreturn]] void fail(const std::string &message) {
  // One write, so another rank's output cannot cut into it.
  llvm::errs() << ("error: " + message + "\n");
  llvm::errs().flush();
  std::_Exit(1);
}

std::string readString(const int64_t *&at) {
  int64_t n = *at++;
  std::string s;
  for (int64_t k = 0; k < n; ++k)
    s.push_back(char(*at++));
  return s;
}

} // namespace

extern "C" void tessel_rt_custom_call(TESSEL_RT_MEMREF(int64_t, buffers),
                                      TESSEL_RT_MEMREF(int64_t, desc)) {
  const int64_t *addresses = buffers + buffers_offset;
  const int64_t *at = desc + desc_offset;
  int64_t numInputs = *at++, numOutputs = *at++;
  std::vector<TesselBuffer> all;
  for (int64_t k = 0; k < numInputs + numOutputs; ++k) {
    TesselBuffer b;
    b.data = reinterpret_cast<void *>(addresses[k]);
    b.dtype = int32_t(*at++);
    b.rank = int32_t(*at++);
    b.shape = at;
    at += b.rank;
    all.push_back(b);
  }
  std::string name = readString(at);
  std::string config = readString(at);
  std::string error =
      tessel::rt::runCustomKernel(name, all, int32_t(numInputs), config);
  if (!error.empty())
    fail(error);
}
