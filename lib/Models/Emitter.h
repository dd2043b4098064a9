//===- Emitter.h - helpers for building model IR ----------------*- C++ -*-===//
//
// Builds one function body op by op. Parameters become function arguments
// in order of first use, always before the data arguments.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_MODELS_EMITTER_H
#define TESSEL_LIB_MODELS_EMITTER_H

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel::models {

class Emitter {
public:
  Emitter(ModuleOp module, StringRef name, Type elementType);

  /// A parameter argument.
  Value param(StringRef name, ArrayRef<int64_t> shape,
              ArrayRef<StringRef> logicalAxes, StringRef init);
  /// A data argument (after all parameters).
  Value data(StringRef name, ArrayRef<int64_t> shape, Type elementType,
             ArrayRef<StringRef> logicalAxes, StringRef init);
  /// Finishes the function with `results` (named by `names`).
  func::FuncOp finish(ArrayRef<Value> results, ArrayRef<StringRef> names);

  OpBuilder &b() { return builder; }
  Location loc() const { return location; }
  Type elementType() const { return elemType; }

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type elt = {}) {
    return RankedTensorType::get(shape, elt ? elt : elemType);
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }

  Value splat(ArrayRef<int64_t> shape, double value, Type elt = {});
  /// x @ w contracting x's last dimension with w's dimension `wDim`.
  Value matmul(Value x, Value w, int64_t wDim);
  /// x + broadcast(bias) over the last dimension.
  Value addBias(Value x, Value bias);
  Value broadcast(Value x, ArrayRef<int64_t> shape, ArrayRef<int64_t> dims);
  Value reshape(Value x, ArrayRef<int64_t> shape);
  Value transpose(Value x, ArrayRef<int64_t> perm);
  Value scale(Value x, double factor);
  /// Dropout at `rate` (0: none) for every later dropout().
  void setDropout(double rate) { dropoutRate = rate; }
  /// x times a dropout mask, or x when the rate is 0. The first call adds
  /// the `seed` argument (the runtime's per-call seed); mask k uses seed +
  /// k, so every mask of a call differs.
  Value dropout(Value x);

  /// Tags `v`'s defining op with logical axes (for rules on activations).
  Value tag(Value v, ArrayRef<StringRef> logicalAxes);

  /// The last op emitted so far: a mark for tagSince.
  Operation *mark() { return body->empty() ? nullptr : &body->back(); }
  /// Sets `name = value` on every op emitted after `mark`, keeping values
  /// already set (the layer of an op, its recomputation group).
  void tagSince(Operation *mark, StringRef name, Attribute value);

  template <typename OpTy, typename... Args>
  Value op(Args &&...args) {
    return OpTy::create(builder, location, std::forward<Args>(args)...)
        .getResult();
  }

private:
  ArrayAttr strings(ArrayRef<StringRef> values);

  OpBuilder builder;
  Location location;
  Type elemType;
  func::FuncOp func;
  Block *body;
  unsigned numParams = 0;
  double dropoutRate = 0;
  Value seed;
  int64_t numMasks = 0;
  SmallVector<DictionaryAttr> argAttrs;
};

/// Marks every op emitted while it lives (or until done()) as
/// tessel.full_precision: it keeps computing in f32 under mixed precision.
/// For values that must be exact or accurate beyond bf16's 8 bits: token
/// positions and counts (bf16 holds integers exactly only to 256), router
/// logits and their losses, rotary angles.
class FullPrecision {
public:
  explicit FullPrecision(Emitter &e) : e(e), start(e.mark()) {}
  FullPrecision(const FullPrecision &) = delete;
  FullPrecision &operator=(const FullPrecision &) = delete;
  ~FullPrecision() { done(); }
  void done() {
    if (!active)
      return;
    active = false;
    e.tagSince(start, TesselDialect::kFullPrecisionAttrName,
               e.b().getUnitAttr());
  }

private:
  Emitter &e;
  Operation *start;
  bool active = true;
};

} // namespace mlir::tessel::models

#endif // TESSEL_LIB_MODELS_EMITTER_H
