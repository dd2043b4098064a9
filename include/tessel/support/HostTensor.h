//===- HostTensor.h - a tensor in host memory -------------------*- C++ -*-===//
//
// The interpreter's and the file formats' tensor: a shape, an element type and
// values. Float values are stored as doubles that are exactly representable in
// the element type; integer values as int64 wrapped to the element type.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_HOSTTENSOR_H
#define TESSEL_SUPPORT_HOSTTENSOR_H

#include "tessel/support/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace tessel {

using Shape = llvm::SmallVector<int64_t, 4>;

/// Number of elements of `shape`.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// "f32[4, 8]".
std::string typeString(DType dtype, llvm::ArrayRef<int64_t> shape);

/// Row-major strides of `shape`.
Shape stridesOf(llvm::ArrayRef<int64_t> shape);

struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> f;  ///< values when isFloat(dtype)
  std::vector<int64_t> i; ///< values otherwise

  HostTensor() = default;
  HostTensor(DType dtype, llvm::ArrayRef<int64_t> shape);

  int64_t size() const { return numElements(shape); }
  int64_t rank() const { return shape.size(); }
  bool isFloat() const { return tessel::isFloat(dtype); }

  /// The element at linear index `k` as a double / an integer.
  double getF(int64_t k) const { return isFloat() ? f[k] : double(i[k]); }
  int64_t getI(int64_t k) const {
    return isFloat() ? floatToInt(DType::I64, f[k]) : i[k];
  }
  /// Stores `v` at `k`, converted as `tessel.convert` converts.
  void setF(int64_t k, double v) {
    if (isFloat())
      f[k] = roundToFloat(dtype, v);
    else
      i[k] = floatToInt(dtype, v);
  }
  void setI(int64_t k, int64_t v) {
    if (isFloat())
      f[k] = intToFloat(dtype, v);
    else
      i[k] = wrapToInt(dtype, v);
  }

  /// "f32[4, 8]".
  std::string typeString() const;
};

} // namespace tessel

#endif // TESSEL_SUPPORT_HOSTTENSOR_H
