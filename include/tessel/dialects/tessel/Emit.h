//===- Emit.h - small op builders for VJP rules and optimizers --*- C++ -*-===//
//
// Keeps the VJP rules (dialects/tessel/Vjp.cpp) and the train-step builder
// (lib/Autodiff) one line per formula.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECTS_TESSEL_EMIT_H
#define TESSEL_DIALECTS_TESSEL_EMIT_H

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::tessel::autodiff {

/// Float tensors get cotangents; integers and predicates do not. The
/// gradient function returns one gradient per such argument, in order.
inline bool isDifferentiable(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && isa<FloatType>(tensor.getElementType());
}

inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Small helpers that keep the rules one line each.
struct Emit {
  OpBuilder &b;
  Location loc;

  Value splat(Value like, double v) {
    return createSplat(b, loc, typeOf(like), v);
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value min(Value x, Value y) { return MinOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return MaxOp::create(b, loc, x, y); }
  Value sqrt(Value x) { return SqrtOp::create(b, loc, x); }
  Value scale(Value x, double s) { return mul(x, splat(x, s)); }
  Value cmp(CompareDirection d, Value x, Value y) {
    return CompareOp::create(b, loc, d, x, y);
  }
  Value select(Value p, Value x, Value y) {
    return SelectOp::create(b, loc, p, x, y);
  }
  Value zerosLike(Value x) { return splat(x, 0.0); }
  /// Broadcasts `x` (the result of reducing `like` over `dims`) back.
  Value unreduce(Value x, Value like, ArrayRef<int64_t> dims) {
    SmallVector<int64_t> keep;
    for (int64_t d = 0, r = typeOf(like).getRank(); d < r; ++d)
      if (!llvm::is_contained(dims, d))
        keep.push_back(d);
    return BroadcastInDimOp::create(
        b, loc, typeOf(like).clone(typeOf(x).getElementType()), x, keep);
  }
  Value lastDimMean(Value x) { // [..., n] -> [...] mean, broadcast back
    int64_t last = typeOf(x).getRank() - 1;
    Value m =
        ReduceOp::create(b, loc, ReduceKind::mean, x, ArrayRef<int64_t>{last});
    return unreduce(m, x, {last});
  }
};

/// Runs a rule body with the op's cotangent `g`, operands `x(i)` and first
/// result `y`; `out` gets one (possibly null) entry per operand.
template <typename Body>
LogicalResult rule(Operation *op, OpBuilder &builder, ArrayRef<Value> gs,
                   SmallVectorImpl<Value> &out, Body body) {
  Emit e{builder, op->getLoc()};
  out.assign(op->getNumOperands(), Value());
  Value g = gs.empty() ? Value() : gs[0];
  auto x = [op](unsigned i) { return op->getOperand(i); };
  Value y = op->getNumResults() ? op->getResult(0) : Value();
  body(e, g, x, y);
  return success();
}

} // namespace mlir::tessel::autodiff

#endif // TESSEL_DIALECTS_TESSEL_EMIT_H
