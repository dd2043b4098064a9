//===- DType.cpp - element types of host tensors --------------------------===//

#include "tessel/support/DType.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringSwitch.h"

#include <climits>
#include <cmath>
#include <cstring>

using namespace tessel;

int64_t tessel::byteSize(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::I1:
    return 1;
  }
  return 0;
}

llvm::StringRef tessel::name(DType t) {
  switch (t) {
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::I1: return "i1";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  }
  return "?";
}

llvm::StringRef tessel::safetensorsName(DType t) {
  switch (t) {
  case DType::F16: return "F16";
  case DType::BF16: return "BF16";
  case DType::F32: return "F32";
  case DType::F64: return "F64";
  case DType::I1: return "BOOL";
  case DType::I32: return "I32";
  case DType::I64: return "I64";
  }
  return "?";
}

std::optional<DType> tessel::fromSafetensorsName(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("F16", DType::F16)
      .Case("BF16", DType::BF16)
      .Case("F32", DType::F32)
      .Case("F64", DType::F64)
      .Case("BOOL", DType::I1)
      .Case("I32", DType::I32)
      .Case("I64", DType::I64)
      .Default(std::nullopt);
}

static uint16_t floatToBF16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // quiet NaN
  uint32_t roundingBias = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

static float bf16BitsToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Rounds `x` once, to nearest even, into `semantics`.
static llvm::APFloat roundDouble(double x, const llvm::fltSemantics &semantics) {
  llvm::APFloat v(x);
  bool lost;
  v.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return v;
}

static uint16_t doubleToHalfBits(double x) {
  return static_cast<uint16_t>(
      roundDouble(x, llvm::APFloat::IEEEhalf()).bitcastToAPInt().getZExtValue());
}

static double halfBitsToDouble(uint16_t b) {
  llvm::APFloat v(llvm::APFloat::IEEEhalf(), llvm::APInt(16, b));
  bool lost;
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return v.convertToDouble();
}

static double toDouble(llvm::APFloat v) {
  bool lost;
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return v.convertToDouble();
}

static const llvm::fltSemantics &semanticsOf(DType t) {
  switch (t) {
  case DType::F16: return llvm::APFloat::IEEEhalf();
  case DType::BF16: return llvm::APFloat::BFloat();
  case DType::F32: return llvm::APFloat::IEEEsingle();
  default: return llvm::APFloat::IEEEdouble();
  }
}

double tessel::roundToFloat(DType t, double x) {
  switch (t) {
  case DType::F64:
    return x;
  case DType::F32:
    return static_cast<float>(x); // one rounding, to nearest even
  case DType::BF16:
  case DType::F16:
    // Once, from double: going through float first would round twice.
    return toDouble(roundDouble(x, semanticsOf(t)));
  default:
    return x;
  }
}

int64_t tessel::floatToInt(DType t, double x) {
  if (t == DType::I1)
    return x != 0.0;
  if (std::isnan(x))
    return 0;
  int64_t lo = t == DType::I32 ? INT32_MIN : INT64_MIN;
  int64_t hi = t == DType::I32 ? INT32_MAX : INT64_MAX;
  // Compare in double against exactly representable bounds: -2^31 / -2^63
  // and 2^31 / 2^63 (hi + 1).
  if (x <= static_cast<double>(lo))
    return lo;
  if (x >= -static_cast<double>(lo))
    return hi;
  return static_cast<int64_t>(x);
}

double tessel::intToFloat(DType t, int64_t x) {
  llvm::APFloat v(semanticsOf(t));
  v.convertFromAPInt(llvm::APInt(64, static_cast<uint64_t>(x), true),
                     /*IsSigned=*/true, llvm::APFloat::rmNearestTiesToEven);
  return toDouble(v);
}

int64_t tessel::wrapToInt(DType t, int64_t x) {
  switch (t) {
  case DType::I1:
    return x != 0;
  case DType::I32:
    return static_cast<int32_t>(static_cast<uint32_t>(x));
  default:
    return x;
  }
}

void tessel::storeElement(DType t, double f, int64_t i, uint8_t *dst) {
  switch (t) {
  case DType::F16: {
    uint16_t b = doubleToHalfBits(f);
    std::memcpy(dst, &b, 2);
    return;
  }
  case DType::BF16: {
    uint16_t b = floatToBF16Bits(static_cast<float>(f));
    std::memcpy(dst, &b, 2);
    return;
  }
  case DType::F32: {
    float v = static_cast<float>(f);
    std::memcpy(dst, &v, 4);
    return;
  }
  case DType::F64:
    std::memcpy(dst, &f, 8);
    return;
  case DType::I1:
    *dst = i != 0;
    return;
  case DType::I32: {
    int32_t v = static_cast<int32_t>(i);
    std::memcpy(dst, &v, 4);
    return;
  }
  case DType::I64:
    std::memcpy(dst, &i, 8);
    return;
  }
}

void tessel::loadElement(DType t, const uint8_t *src, double &f, int64_t &i) {
  f = 0;
  i = 0;
  switch (t) {
  case DType::F16: {
    uint16_t b;
    std::memcpy(&b, src, 2);
    f = halfBitsToDouble(b);
    return;
  }
  case DType::BF16: {
    uint16_t b;
    std::memcpy(&b, src, 2);
    f = bf16BitsToFloat(b);
    return;
  }
  case DType::F32: {
    float v;
    std::memcpy(&v, src, 4);
    f = v;
    return;
  }
  case DType::F64:
    std::memcpy(&f, src, 8);
    return;
  case DType::I1:
    i = *src != 0;
    return;
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, src, 4);
    i = v;
    return;
  }
  case DType::I64:
    std::memcpy(&i, src, 8);
    return;
  }
}
