//===- CustomCallKernel.cpp - tessel.custom_call in the interpreter -------===//
//
// The interpreter calls the same kernel a compiled program calls
// (tessel/runtime/CustomCall.h): its operands are stored in their element
// types, the kernel writes the results, which are read back. So a
// partitioned program with custom calls equals the unpartitioned one as for
// any op, with each device's kernel seeing its blocks.
//
//===----------------------------------------------------------------------===//

#include "tessel/interpreter/Kernels.h"
#include "tessel/support/CustomCalls.h"

#include <cstdint>
#include <vector>

using namespace tessel;

namespace {

/// A tensor's values in memory as the ABI lays them out.
struct Stored {
  std::vector<uint8_t> bytes;
  Shape shape;
  DType dtype;

  Stored(DType dtype, llvm::ArrayRef<int64_t> shape)
      : bytes(numElements(shape) * byteSize(dtype)), shape(shape),
        dtype(dtype) {}

  static Stored of(const HostTensor &t) {
    Stored s(t.dtype, t.shape);
    int64_t width = byteSize(t.dtype);
    for (int64_t k = 0; k < t.size(); ++k)
      storeElement(t.dtype, t.isFloat() ? t.f[k] : 0.0,
                   t.isFloat() ? 0 : t.i[k], s.bytes.data() + k * width);
    return s;
  }

  HostTensor read() const {
    HostTensor t(dtype, shape);
    int64_t width = byteSize(dtype);
    for (int64_t k = 0; k < t.size(); ++k) {
      double f = 0;
      int64_t i = 0;
      loadElement(dtype, bytes.data() + k * width, f, i);
      if (t.isFloat())
        t.f[k] = f;
      else
        t.i[k] = i;
    }
    return t;
  }

  TesselBuffer buffer() {
    return {bytes.data(), int32_t(dtype), int32_t(shape.size()),
            shape.data()};
  }
};

} // namespace

llvm::Expected<std::vector<HostTensor>> kernels::customCall(
    llvm::StringRef name, llvm::ArrayRef<const HostTensor *> inputs,
    llvm::ArrayRef<std::pair<DType, Shape>> outputs, llvm::StringRef config) {
  llvm::Expected<TesselCpuKernel> kernel = customcalls::lookup(name);
  if (!kernel)
    return kernel.takeError();
  std::vector<Stored> in, out;
  for (const HostTensor *t : inputs)
    in.push_back(Stored::of(*t));
  for (const auto &[dtype, shape] : outputs)
    out.emplace_back(dtype, shape);
  std::vector<TesselBuffer> inBuffers, outBuffers;
  for (Stored &s : in)
    inBuffers.push_back(s.buffer());
  for (Stored &s : out)
    outBuffers.push_back(s.buffer());
  std::string configText = config.str();
  int32_t rc = (*kernel)(inBuffers.data(), int32_t(inBuffers.size()),
                         outBuffers.data(), int32_t(outBuffers.size()),
                         configText.c_str());
  if (rc != 0)
    return llvm::createStringError("custom call @" + name.str() +
                                   " failed (its kernel returned " +
                                   std::to_string(rc) + ")");
  std::vector<HostTensor> results;
  for (const Stored &s : out)
    results.push_back(s.read());
  return results;
}
