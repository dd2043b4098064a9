//===- Optimizer.h - the optimizers of the training step --------*- C++ -*-===//
//
// buildTrainStep (TrainStep.cpp) builds the signature, inlines the gradient,
// accumulates, clips and schedules the learning rate; an Optimizer says
// which state it keeps per parameter and how one parameter's update is
// computed from its gradient and state. Adding an optimizer is one class
// here and one case in createOptimizer.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_AUTODIFF_OPTIMIZER_H
#define TESSEL_LIB_AUTODIFF_OPTIMIZER_H

#include "tessel/autodiff/Autodiff.h"
#include "tessel/dialects/tessel/Emit.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include <memory>

namespace mlir::tessel::autodiff {

/// The update's arithmetic on top of Emit: scalars are rank 0 in the master
/// precision (f32, or f64 when a parameter is f64).
struct Emitter : Emit {
  RankedTensorType scalar;

  Value cst(double v) { return createSplat(b, loc, scalar, v); }
  /// `s` (rank 0) converted and broadcast to `like`'s type.
  Value broadcast(Value s, Value like) {
    RankedTensorType t = typeOf(like);
    RankedTensorType st = typeOf(s);
    if (st.getElementType() != t.getElementType())
      s = ConvertOp::create(b, loc, st.clone(t.getElementType()), s);
    return BroadcastInDimOp::create(b, loc, t, s, ArrayRef<int64_t>{});
  }
  using Emit::scale;
  Value scale(Value x, Value s) { return mul(x, broadcast(s, x)); }
  Value toMaster(Value x) {
    RankedTensorType t = typeOf(x);
    if (t.getElementType() == scalar.getElementType())
      return x;
    return ConvertOp::create(b, loc, t.clone(scalar.getElementType()), x);
  }
  Value sumAll(Value x) {
    if (typeOf(x).getRank() == 0) // a scalar parameter
      return x;
    return ReduceOp::create(
        b, loc, ReduceKind::sum, x,
        llvm::to_vector(llvm::seq<int64_t>(0, typeOf(x).getRank())));
  }
};

class Optimizer {
public:
  virtual ~Optimizer();
  /// The prefix of its state's names (`<name>.<slot>.<param>`).
  virtual StringRef name() const = 0;
  /// The state it keeps per parameter (master precision, zeros at first).
  virtual SmallVector<StringRef> slots() const = 0;
  /// The amount to subtract from a parameter (before weight decay) given
  /// its gradient `g` (master precision), the 1-based update number `t`,
  /// the scheduled learning rate `lr` and its `state` per slot; appends the
  /// new state per slot to `newState`.
  virtual Value update(Emitter &e, Value g, Value t, Value lr,
                       ArrayRef<Value> state,
                       SmallVectorImpl<Value> &newState) const = 0;
};

std::unique_ptr<Optimizer> createOptimizer(const TrainStepOptions &options);

} // namespace mlir::tessel::autodiff

#endif // TESSEL_LIB_AUTODIFF_OPTIMIZER_H
