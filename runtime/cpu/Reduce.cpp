//===- Reduce.cpp - element-wise reduction of raw buffers -----------------===//

#include "tessel/runtime/Communicator.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tessel;
using namespace tessel::rt;

template <typename T>
static void reduceTyped(T *dst, const T *src, int64_t count, ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    for (int64_t k = 0; k < count; ++k)
      dst[k] += src[k];
    return;
  case ReduceOp::Max:
    for (int64_t k = 0; k < count; ++k)
      dst[k] = std::max(dst[k], src[k]);
    return;
  case ReduceOp::Min:
    for (int64_t k = 0; k < count; ++k)
      dst[k] = std::min(dst[k], src[k]);
    return;
  }
}

void rt::reduceInto(void *dst, const void *src, int64_t count, DType type,
                    ReduceOp op) {
  switch (type) {
  case DType::F32:
    return reduceTyped(static_cast<float *>(dst),
                       static_cast<const float *>(src), count, op);
  case DType::F64:
    return reduceTyped(static_cast<double *>(dst),
                       static_cast<const double *>(src), count, op);
  case DType::I32:
    return reduceTyped(static_cast<int32_t *>(dst),
                       static_cast<const int32_t *>(src), count, op);
  case DType::I64:
    return reduceTyped(static_cast<int64_t *>(dst),
                       static_cast<const int64_t *>(src), count, op);
  default:
    break;
  }
  // 16-bit floats and i1: through double, rounded once per element.
  int64_t width = byteSize(type);
  auto *d = static_cast<uint8_t *>(dst);
  auto *s = static_cast<const uint8_t *>(src);
  for (int64_t k = 0; k < count; ++k) {
    double a, b;
    int64_t ia, ib;
    loadElement(type, d + k * width, a, ia);
    loadElement(type, s + k * width, b, ib);
    if (!isFloat(type)) {
      a = double(ia);
      b = double(ib);
    }
    double r = op == ReduceOp::Sum   ? a + b
               : op == ReduceOp::Max ? std::max(a, b)
                                     : std::min(a, b);
    storeElement(type, r, int64_t(r), d + k * width);
  }
}
