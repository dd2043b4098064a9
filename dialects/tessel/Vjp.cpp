//===- Vjp.cpp - the vector-Jacobian product of every tessel op -----------===//
//
// VjpOpInterface: one rule per differentiable op, in TesselOps.td order,
// beside the sharding rules (ShardingRules.cpp); the elementwise ones are in
// VjpElementwise.cpp. `g` is the result's cotangent, `x(i)` operand i, `y`
// result 0; each rule emits the operands' cotangents into `out` with tessel
// ops, so gradients are ordinary programs: they propagate, partition and
// lower like the forward.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/Emit.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::autodiff;

namespace {

/// Sums `g` (of `resultType`) down to `operandType` for a broadcast_in_dim
/// with `dims`.
Value unbroadcast(Emit &e, Value g, RankedTensorType operandType,
                  ArrayRef<int64_t> dims) {
  RankedTensorType rt = typeOf(g);
  SmallVector<int64_t> reduced;
  for (int64_t d = 0; d < rt.getRank(); ++d) {
    auto pos = llvm::find(dims, d);
    if (pos == dims.end() ||
        operandType.getDimSize(pos - dims.begin()) != rt.getDimSize(d))
      reduced.push_back(d);
  }
  Value s = reduced.empty()
                ? g
                : ReduceOp::create(e.b, e.loc, ReduceKind::sum, g, reduced)
                      .getResult();
  return ReshapeOp::create(e.b, e.loc, operandType, s);
}

/// The cotangent of a dot_general operand: contract `g` with the other
/// operand over the other operand's free dimensions, then permute into the
/// operand's dimension order.
Value dotOperandGrad(Emit &e, Value g, Value other, bool forLhs,
                     DotGeneralOp dot) {
  ArrayRef<int64_t> myBatch =
      forLhs ? dot.getLhsBatchingDims() : dot.getRhsBatchingDims();
  ArrayRef<int64_t> myContract =
      forLhs ? dot.getLhsContractingDims() : dot.getRhsContractingDims();
  ArrayRef<int64_t> otherBatch =
      forLhs ? dot.getRhsBatchingDims() : dot.getLhsBatchingDims();
  ArrayRef<int64_t> otherContract =
      forLhs ? dot.getRhsContractingDims() : dot.getLhsContractingDims();
  int64_t myRank = typeOf(forLhs ? dot.getLhs() : dot.getRhs()).getRank();
  int64_t otherRank = typeOf(other).getRank();
  int64_t nb = myBatch.size();
  int64_t lhsFree =
      typeOf(dot.getLhs()).getRank() - nb - dot.getLhsContractingDims().size();
  // g's dimensions: [batch, lhs free, rhs free].
  SmallVector<int64_t> otherFree;
  for (int64_t d = 0; d < otherRank; ++d)
    if (!llvm::is_contained(otherBatch, d) &&
        !llvm::is_contained(otherContract, d))
      otherFree.push_back(d);
  SmallVector<int64_t> gBatch, gContract;
  for (int64_t i = 0; i < nb; ++i)
    gBatch.push_back(i);
  int64_t otherFreeStart = forLhs ? nb + lhsFree : nb;
  for (size_t i = 0; i < otherFree.size(); ++i)
    gContract.push_back(otherFreeStart + i);
  SmallVector<int64_t> myFree;
  for (int64_t d = 0; d < myRank; ++d)
    if (!llvm::is_contained(myBatch, d) && !llvm::is_contained(myContract, d))
      myFree.push_back(d);
  SmallVector<int64_t> otherContractSorted;
  for (int64_t d = 0; d < otherRank; ++d)
    if (llvm::is_contained(otherContract, d))
      otherContractSorted.push_back(d);
  auto pairedWithMine = [&](int64_t od) { // my dimension contracted with od
    return myContract[llvm::find(otherContract, od) - otherContract.begin()];
  };
  // Where each of my dimensions lands in dot(g, other): [batch, my free,
  // other's contracting dims in other's order] ...
  SmallVector<int64_t> whereGFirst(myRank), whereOtherFirst(myRank);
  for (int64_t i = 0; i < nb; ++i)
    whereGFirst[myBatch[i]] = whereOtherFirst[myBatch[i]] = i;
  for (size_t i = 0; i < myFree.size(); ++i)
    whereGFirst[myFree[i]] = nb + i;
  for (size_t i = 0; i < otherContractSorted.size(); ++i)
    whereGFirst[pairedWithMine(otherContractSorted[i])] =
        nb + myFree.size() + i;
  // ... and in dot(other, g): [batch, other's contracting dims, my free].
  for (size_t i = 0; i < otherContractSorted.size(); ++i)
    whereOtherFirst[pairedWithMine(otherContractSorted[i])] = nb + i;
  for (size_t i = 0; i < myFree.size(); ++i)
    whereOtherFirst[myFree[i]] = nb + otherContractSorted.size() + i;
  auto isIdentity = [](ArrayRef<int64_t> perm) {
    for (auto [i, p] : llvm::enumerate(perm))
      if (static_cast<int64_t>(i) != p)
        return false;
    return true;
  };
  // Prefer the order that needs no transpose: a weight gradient
  // dot(activation, g) comes out in the weight's own layout, so it is
  // sharded like the weight without an all-to-all.
  if (!isIdentity(whereGFirst) && isIdentity(whereOtherFirst))
    return DotGeneralOp::create(e.b, e.loc, other, g,
                                SmallVector<int64_t>(otherBatch), gBatch,
                                otherFree, gContract);
  Value r = DotGeneralOp::create(e.b, e.loc, g, other, gBatch,
                                 SmallVector<int64_t>(otherBatch), gContract,
                                 otherFree);
  if (isIdentity(whereGFirst))
    return r;
  SmallVector<int64_t> where = whereGFirst;
  return TransposeOp::create(e.b, e.loc, r, where);
}

} // namespace

LogicalResult BroadcastInDimOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                         SmallVectorImpl<Value> &out) {
  BroadcastInDimOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = unbroadcast(e, g, typeOf(x(0)), o.getDims());
  });
}

LogicalResult ReshapeOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                  SmallVectorImpl<Value> &out) {
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = ReshapeOp::create(builder, e.loc, x(0).getType(), g);
  });
}

LogicalResult TransposeOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                    SmallVectorImpl<Value> &out) {
  TransposeOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    SmallVector<int64_t> inverse(o.getPermutation().size());
    for (auto [i, p] : llvm::enumerate(o.getPermutation()))
      inverse[p] = i;
    out[0] = TransposeOp::create(builder, e.loc, g, inverse);
  });
}

LogicalResult SliceOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                SmallVectorImpl<Value> &out) {
  SliceOp o = *this;
  if (!llvm::all_of(o.getStrides(), [](int64_t s) { return s == 1; }))
    return emitError()
           << "no VJP rule for 'tessel.slice' with strides other than 1; hint: "
              "take the strided elements with tessel.gather, which has one";
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    RankedTensorType in = typeOf(x(0));
    SmallVector<int64_t> low, high;
    for (int64_t d = 0; d < in.getRank(); ++d) {
      low.push_back(o.getStart()[d]);
      high.push_back(in.getDimSize(d) - o.getLimit()[d]);
    }
    out[0] = PadOp::create(builder, e.loc, g, low, high, APFloat(0.0));
  });
}

LogicalResult ConcatenateOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                      SmallVectorImpl<Value> &out) {
  ConcatenateOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    int64_t offset = 0, dim = o.getDim();
    RankedTensorType gt = typeOf(g);
    for (auto [i, v] : llvm::enumerate(o.getInputs())) {
      SmallVector<int64_t> start(gt.getRank(), 0), limit(gt.getShape()),
          strides(gt.getRank(), 1);
      start[dim] = offset;
      limit[dim] = offset + typeOf(v).getDimSize(dim);
      out[i] = SliceOp::create(builder, e.loc, g, start, limit, strides);
      offset = limit[dim];
    }
  });
}

LogicalResult PadOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                              SmallVectorImpl<Value> &out) {
  PadOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    RankedTensorType in = typeOf(x(0));
    SmallVector<int64_t> start, limit, strides(in.getRank(), 1);
    for (int64_t d = 0; d < in.getRank(); ++d) {
      start.push_back(o.getLow()[d]);
      limit.push_back(o.getLow()[d] + in.getDimSize(d));
    }
    out[0] = SliceOp::create(builder, e.loc, g, start, limit, strides);
  });
}

LogicalResult DotGeneralOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                     SmallVectorImpl<Value> &out) {
  DotGeneralOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = dotOperandGrad(e, g, x(1), true, o);
    out[1] = dotOperandGrad(e, g, x(0), false, o);
  });
}

LogicalResult ReduceOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                 SmallVectorImpl<Value> &out) {
  ReduceOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    Value back = e.unreduce(g, x(0), o.getDims());
    switch (o.getKind()) {
    case ReduceKind::sum:
      out[0] = back;
      break;
    case ReduceKind::mean: {
      int64_t count = 1;
      for (int64_t d : o.getDims())
        count *= typeOf(x(0)).getDimSize(d);
      out[0] = e.scale(back, 1.0 / count);
      break;
    }
    case ReduceKind::max:
    case ReduceKind::min: {
      // Split evenly among the positions equal to the extreme (as JAX
      // does), so the gradient still sums to the cotangent at ties.
      Value hit =
          e.cmp(CompareDirection::eq, x(0), e.unreduce(y, x(0), o.getDims()));
      Value ones = e.select(hit, e.splat(x(0), 1.0), e.zerosLike(x(0)));
      Value ties = e.unreduce(ReduceOp::create(builder, e.loc, ReduceKind::sum,
                                               ones, o.getDims()),
                              x(0), o.getDims());
      out[0] = e.select(hit, e.div(back, ties), e.zerosLike(back));
      break;
    }
    }
  });
}

LogicalResult CumsumOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                 SmallVectorImpl<Value> &out) {
  CumsumOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    // Reverse cumulative sum: total - cumsum + g.
    int64_t dim = o.getDim();
    Value total = e.unreduce(ReduceOp::create(builder, e.loc, ReduceKind::sum,
                                              g, ArrayRef<int64_t>{dim}),
                             g, {dim});
    Value running = CumsumOp::create(builder, e.loc, g, dim);
    out[0] = e.add(e.sub(total, running), g);
  });
}

LogicalResult SoftmaxOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                  SmallVectorImpl<Value> &out) {
  SoftmaxOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    int64_t dim = o.getDim();
    Value dot =
        e.unreduce(ReduceOp::create(builder, e.loc, ReduceKind::sum,
                                    e.mul(g, y), ArrayRef<int64_t>{dim}),
                   y, {dim});
    out[0] = e.mul(y, e.sub(g, dot));
  });
}

LogicalResult LayerNormOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                    SmallVectorImpl<Value> &out) {
  LayerNormOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    Value v = x(0);
    int64_t last = typeOf(v).getRank() - 1;
    Value mean = e.lastDimMean(v);
    Value centered = e.sub(v, mean);
    Value var = e.lastDimMean(e.mul(centered, centered));
    Value inv = RsqrtOp::create(
        builder, e.loc,
        e.add(var, e.splat(var, o.getEpsilon().convertToDouble())));
    Value xhat = e.mul(centered, inv);
    Value dxhat = e.mul(
        g, e.unreduce(x(1), v, llvm::to_vector(llvm::seq<int64_t>(0, last))));
    out[0] = e.mul(inv, e.sub(e.sub(dxhat, e.lastDimMean(dxhat)),
                              e.mul(xhat, e.lastDimMean(e.mul(dxhat, xhat)))));
    SmallVector<int64_t> lead = llvm::to_vector(llvm::seq<int64_t>(0, last));
    out[1] = lead.empty() ? e.mul(g, xhat)
                          : ReduceOp::create(builder, e.loc, ReduceKind::sum,
                                             e.mul(g, xhat), lead)
                                .getResult();
    out[2] = lead.empty()
                 ? g
                 : ReduceOp::create(builder, e.loc, ReduceKind::sum, g, lead)
                       .getResult();
  });
}

LogicalResult RmsNormOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                  SmallVectorImpl<Value> &out) {
  RmsNormOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    Value v = x(0);
    int64_t last = typeOf(v).getRank() - 1;
    SmallVector<int64_t> lead = llvm::to_vector(llvm::seq<int64_t>(0, last));
    Value ms = e.lastDimMean(e.mul(v, v));
    Value r = RsqrtOp::create(
        builder, e.loc,
        e.add(ms, e.splat(ms, o.getEpsilon().convertToDouble())));
    Value gs = e.mul(g, e.unreduce(x(1), v, lead));
    // dx = r * gs - x * r^3 * mean(gs * x)
    out[0] = e.sub(e.mul(r, gs), e.mul(e.mul(v, e.mul(r, e.mul(r, r))),
                                       e.lastDimMean(e.mul(gs, v))));
    Value gx = e.mul(g, e.mul(v, r));
    out[1] = lead.empty()
                 ? gx
                 : ReduceOp::create(builder, e.loc, ReduceKind::sum, gx, lead)
                       .getResult();
  });
}

LogicalResult GatherOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                 SmallVectorImpl<Value> &out) {
  GatherOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = ScatterAddOp::create(builder, e.loc, e.zerosLike(x(0)), x(1), g,
                                  o.getAxis());
  });
}

LogicalResult ScatterAddOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                                     SmallVectorImpl<Value> &out) {
  ScatterAddOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    out[0] = g;
    out[2] = GatherOp::create(builder, e.loc, g, x(1), o.getAxis());
  });
}

LogicalResult TopKOp::buildVjp(OpBuilder &builder, ArrayRef<Value> gs,
                               SmallVectorImpl<Value> &out) {
  TopKOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    // dx[..., i] = sum_k g[..., k] * (indices[..., k] == i)
    Value gv = gs.empty() ? Value() : gs[0];
    if (!gv)
      return;
    RankedTensorType in = typeOf(x(0));
    RankedTensorType gt = typeOf(gv);
    SmallVector<int64_t> hotShape(gt.getShape());
    hotShape.push_back(in.getShape().back());
    Value hot =
        OneHotOp::create(builder, e.loc, gt.clone(hotShape), o.getIndices());
    int64_t r = gt.getRank();
    SmallVector<int64_t> batch = llvm::to_vector(llvm::seq<int64_t>(0, r - 1));
    out[0] = DotGeneralOp::create(builder, e.loc, gv, hot, batch, batch,
                                  ArrayRef<int64_t>{r - 1},
                                  ArrayRef<int64_t>{r - 1});
  });
}

LogicalResult SoftmaxCrossEntropyOp::buildVjp(OpBuilder &builder,
                                              ArrayRef<Value> gs,
                                              SmallVectorImpl<Value> &out) {
  SoftmaxCrossEntropyOp o = *this;
  return rule(*this, builder, gs, out, [&](Emit &e, Value g, auto x, Value y) {
    // dlogits = (softmax(logits) - onehot(label)) * weight, zero where
    // the label is ignored; weight = g (none, sum) or g / count (mean).
    Value logits = x(0), labels = x(1);
    RankedTensorType lt = typeOf(logits);
    int64_t last = lt.getRank() - 1;
    int64_t classes = lt.getShape().back();
    RankedTensorType labelT = typeOf(labels);
    Value ignore = createSplat(builder, e.loc, labelT,
                               static_cast<int64_t>(o.getIgnoreIndex()));
    Value valid =
        e.select(e.cmp(CompareDirection::ne, labels, ignore),
                 e.select(e.cmp(CompareDirection::ge, labels,
                                createSplat(builder, e.loc, labelT, 0)),
                          e.cmp(CompareDirection::lt, labels,
                                createSplat(builder, e.loc, labelT, classes)),
                          e.cmp(CompareDirection::ne, labels, labels)),
                 e.cmp(CompareDirection::ne, labels, labels));
    RankedTensorType posT = labelT.clone(lt.getElementType());
    Value validF = ConvertOp::create(builder, e.loc, posT, valid);
    Value weight;
    SmallVector<int64_t> lead = llvm::to_vector(llvm::seq<int64_t>(0, last));
    if (o.getReduction() == LossReduction::none) {
      weight = e.mul(g, validF);
    } else {
      Value gb = BroadcastInDimOp::create(builder, e.loc, posT, g,
                                          ArrayRef<int64_t>{});
      weight = e.mul(gb, validF);
      if (o.getReduction() == LossReduction::mean) {
        Value count = lead.empty()
                          ? validF
                          : ReduceOp::create(builder, e.loc, ReduceKind::sum,
                                             validF, lead)
                                .getResult();
        Value safe = MaxOp::create(builder, e.loc, count, e.splat(count, 1.0));
        weight =
            e.div(weight, BroadcastInDimOp::create(builder, e.loc, posT, safe,
                                                   ArrayRef<int64_t>{}));
      }
    }
    Value p = SoftmaxOp::create(builder, e.loc, logits, last);
    Value hot = OneHotOp::create(builder, e.loc, lt, labels);
    Value w = BroadcastInDimOp::create(builder, e.loc, lt, weight, lead);
    out[0] = e.mul(e.sub(p, hot), w);
  });
}
