//===- DType.h - element types of host tensors ------------------*- C++ -*-===//
//
// The element types Tessel tensors use, independent of MLIR so that the
// runtime can share them, with rounding to each type's precision.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_DTYPE_H
#define TESSEL_SUPPORT_DTYPE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace tessel {

enum class DType { F16, BF16, F32, F64, I1, I32, I64 };

inline bool isFloat(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 ||
         t == DType::F64;
}

/// Bytes per element in memory and in safetensors files.
int64_t byteSize(DType t);

/// MLIR spelling: "f32", "bf16", "i1", ...
llvm::StringRef name(DType t);

/// safetensors spelling: "F32", "BF16", "BOOL", ...
llvm::StringRef safetensorsName(DType t);
std::optional<DType> fromSafetensorsName(llvm::StringRef name);

/// Rounds `x` to the nearest value of float type `t` (ties to even), as the
/// hardware does when it stores an f32 result as bf16 or f16.
double roundToFloat(DType t, double x);

/// Wraps `x` to integer type `t` (two's complement; i1 is 0 or 1).
int64_t wrapToInt(DType t, int64_t x);

/// Converts float `x` to integer type `t` as `tessel.convert` does: toward
/// zero, saturating, NaN to 0; i1 is `x != 0`.
int64_t floatToInt(DType t, double x);

/// Converts integer `x` to float type `t`, rounding once to nearest even.
double intToFloat(DType t, int64_t x);

/// Encodes/decodes one element in little-endian storage of type `t`.
void storeElement(DType t, double f, int64_t i, uint8_t *dst);
void loadElement(DType t, const uint8_t *src, double &f, int64_t &i);

} // namespace tessel

#endif // TESSEL_SUPPORT_DTYPE_H
