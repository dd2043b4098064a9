//===- HostTensor.cpp - a tensor in host memory ---------------------------===//

#include "tessel/support/HostTensor.h"

using namespace tessel;

int64_t tessel::numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape tessel::stridesOf(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

HostTensor::HostTensor(DType dtype, llvm::ArrayRef<int64_t> shape)
    : dtype(dtype), shape(shape) {
  if (tessel::isFloat(dtype))
    f.assign(size(), 0.0);
  else
    i.assign(size(), 0);
}

std::string tessel::typeString(DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string s = name(dtype).str() + "[";
  for (size_t d = 0; d < shape.size(); ++d)
    s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

std::string HostTensor::typeString() const {
  return tessel::typeString(dtype, shape);
}
