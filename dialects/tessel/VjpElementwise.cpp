//===- VjpElementwise.cpp - VJP rules of the elementwise ops --------------===//
//
// VjpOpInterface rules of sharding_constraint and the elementwise ops, in
// TesselOps.td order; the others are in Vjp.cpp. `g` is the result's
// cotangent, `x(i)` operand i, `y` result 0; each rule emits the operands'
// cotangents into `out` with tessel ops, so gradients are ordinary
// programs: they propagate, partition and lower like the forward.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/Emit.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::autodiff;

LogicalResult ShardingConstraintOp::buildVjp(OpBuilder &builder,
                                             ArrayRef<Value> gs,
                                             SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out,
              [&](Emit &e, Value g, auto x, Value y) { out[0] = g; });
}

LogicalResult NegOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out,
              [&](Emit &e, Value g, auto x, Value y) { out[0] = e.neg(g); });
}

LogicalResult AbsOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.select(e.cmp(CompareDirection::lt, x(0), e.zerosLike(x(0))),
                      e.neg(g), g);
  });
}

LogicalResult ReluOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                               SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.select(e.cmp(CompareDirection::gt, x(0), e.zerosLike(x(0))), g,
                      e.zerosLike(g));
  });
}

LogicalResult ExpOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out,
              [&](Emit &e, Value g, auto x, Value y) { out[0] = e.mul(g, y); });
}

LogicalResult LogOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.div(g, x(0));
  });
}

LogicalResult SqrtOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                               SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.div(e.scale(g, 0.5), y);
  });
}

LogicalResult RsqrtOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.mul(e.scale(g, -0.5), e.mul(y, e.mul(y, y)));
  });
}

LogicalResult TanhOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                               SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.mul(g, e.sub(e.splat(y, 1.0), e.mul(y, y)));
  });
}

LogicalResult LogisticOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                   SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.mul(g, e.mul(y, e.sub(e.splat(y, 1.0), y)));
  });
}

LogicalResult SiluOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                               SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    Value s = LogisticOp::create(builder, e.loc, x(0));
    Value one = e.splat(s, 1.0);
    out[0] = e.mul(g, e.mul(s, e.add(one, e.mul(x(0), e.sub(one, s)))));
  });
}

LogicalResult SinOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.mul(g, CosOp::create(builder, e.loc, x(0)));
  });
}

LogicalResult CosOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.neg(e.mul(g, SinOp::create(builder, e.loc, x(0))));
  });
}

LogicalResult GeluOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                               SmallVectorImpl<Value> &out) {
  GeluOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    Value v = x(0), one = e.splat(v, 1.0);
    if (o.getApproximation() == GeluApproximation::tanh) {
      double c = std::sqrt(2.0 / M_PI);
      Value v2 = e.mul(v, v);
      Value u = e.scale(e.add(v, e.scale(e.mul(v2, v), 0.044715)), c);
      Value t = TanhOp::create(builder, e.loc, u);
      Value du = e.scale(e.add(one, e.scale(v2, 3 * 0.044715)), c);
      Value d =
          e.add(e.scale(e.add(one, t), 0.5),
                e.mul(e.scale(v, 0.5), e.mul(e.sub(one, e.mul(t, t)), du)));
      out[0] = e.mul(g, d);
    } else {
      // d/dx x Phi(x) = Phi(x) + x phi(x); Phi(x) = gelu(x) / x.
      Value zero = e.zerosLike(v);
      Value isZero = e.cmp(CompareDirection::eq, v, zero);
      Value safe = e.select(isZero, one, v);
      Value phiCdf = e.select(isZero, e.splat(v, 0.5), e.div(y, safe));
      Value pdf =
          e.scale(ExpOp::create(builder, e.loc, e.scale(e.mul(v, v), -0.5)),
                  1.0 / std::sqrt(2.0 * M_PI));
      out[0] = e.mul(g, e.add(phiCdf, e.mul(v, pdf)));
    }
  });
}

LogicalResult ConvertOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                  SmallVectorImpl<Value> &out) {
  ConvertOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    if (isa<FloatType>(typeOf(x(0)).getElementType()))
      out[0] = ConvertOp::create(builder, e.loc, x(0).getType(), g);
  });
}

LogicalResult AddOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = g, out[1] = g;
  });
}

LogicalResult SubOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = g, out[1] = e.neg(g);
  });
}

LogicalResult MulOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.mul(g, x(1)), out[1] = e.mul(g, x(0));
  });
}

LogicalResult DivOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = e.div(g, x(1));
    out[1] = e.neg(e.div(e.mul(g, y), x(1)));
  });
}

LogicalResult MaxOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  Operation *o = getOperation();
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    // Ties go to the lhs.
    Value lhsWins =
        e.cmp(isa<MaxOp>(o) ? CompareDirection::ge : CompareDirection::le, x(0),
              x(1));
    Value zero = e.zerosLike(g);
    out[0] = e.select(lhsWins, g, zero);
    out[1] = e.select(lhsWins, zero, g);
  });
}

LogicalResult MinOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  Operation *o = getOperation();
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    // Ties go to the lhs.
    Value lhsWins =
        e.cmp(isa<MaxOp>(o) ? CompareDirection::ge : CompareDirection::le, x(0),
              x(1));
    Value zero = e.zerosLike(g);
    out[0] = e.select(lhsWins, g, zero);
    out[1] = e.select(lhsWins, zero, g);
  });
}

LogicalResult PowOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    // d x^p / dx = p x^(p-1); d x^p / dp = x^p ln x.
    Value pm1 = e.sub(x(1), e.splat(x(1), 1.0));
    out[0] = e.mul(g, e.mul(x(1), PowOp::create(builder, e.loc, x(0), pm1)));
    out[1] = e.mul(g, e.mul(y, LogOp::create(builder, e.loc, x(0))));
  });
}

LogicalResult SelectOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                 SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    Value zero = e.zerosLike(g);
    out[1] = e.select(x(0), g, zero);
    out[2] = e.select(x(0), zero, g);
  });
}
