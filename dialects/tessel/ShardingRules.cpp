//===- ShardingRules.cpp - the sharding rule of every tessel op -----------===//
//
// One rule per op, in TesselOps.td order. Dimensions that an op moves data
// across (slice, pad, concatenate windows; cumsum, softmax, norm and top_k
// along their dimension) are need-replication factors: the partitioner
// gathers them. Factors summed over (contractions, reductions, the gathered
// table axis, cross-entropy classes) are reduction factors: sharding them
// leaves the result partial.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/ShardingRule.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tessel;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Factors of `shape` except dimension `skip` (-1: none), in order.
static SmallVector<int64_t> pick(ArrayRef<int64_t> factors,
                                 ArrayRef<int64_t> dims) {
  SmallVector<int64_t> out;
  for (int64_t d : dims)
    out.push_back(factors[d]);
  return out;
}

OpShardingRuleAttr mlir::tessel::elementwiseShardingRule(Operation *op) {
  ShardingRuleBuilder b(op->getContext());
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  SmallVector<int64_t> factors = b.factors(shape);
  auto map = [&](Value v, bool isOperand) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<int64_t> dims =
        s.size() == shape.size()
            ? factors
            : b.factors(s, FactorKind::NeedReplication);
    isOperand ? b.operandOf(dims) : b.resultOf(dims);
  };
  for (Value v : op->getOperands())
    map(v, true);
  for (Value v : op->getResults())
    map(v, false);
  return b.build();
}

OpShardingRuleAttr BroadcastInDimOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> in = getInput().getType().getShape();
  SmallVector<int64_t> out = b.factors(getType().getShape());
  SmallVector<SmallVector<int64_t>> dims;
  for (auto [i, d] : llvm::enumerate(getDims())) {
    if (in[i] == getType().getDimSize(d))
      dims.push_back({out[d]});
    else
      dims.push_back({}); // size 1 broadcast: no factor
  }
  b.operand(dims);
  b.resultOf(out);
  return b.build();
}

OpShardingRuleAttr ReshapeOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  SmallVector<SmallVector<int64_t>> inDims(in.size()), outDims(out.size());
  // Refine both shapes into one sequence of factors, major to minor.
  size_t i = 0, j = 0;
  int64_t ri = in.empty() ? 1 : in[0], ro = out.empty() ? 1 : out[0];
  // An empty tensor refines into nothing (and gcd(0, 0) would divide by 0).
  bool ok = !llvm::is_contained(in, 0) && !llvm::is_contained(out, 0);
  while (ok) {
    while (i < in.size() && ri == 1) { // exhausted or size-1 dimensions
      if (++i < in.size())
        ri = in[i];
    }
    while (j < out.size() && ro == 1) {
      if (++j < out.size())
        ro = out[j];
    }
    if (i == in.size() || j == out.size())
      break;
    int64_t g = std::gcd(ri, ro);
    if (g == 1) {
      ok = false;
      break;
    }
    int64_t f = b.factor(g);
    inDims[i].push_back(f);
    outDims[j].push_back(f);
    ri /= g;
    ro /= g;
  }
  ok &= i == in.size() && j == out.size();
  if (!ok) {
    // Not a refinement (e.g. [2, 3] -> [3, 2]): nothing passes through.
    ShardingRuleBuilder fallback(getContext());
    fallback.operandOf(fallback.factors(in, FactorKind::NeedReplication));
    fallback.resultOf(fallback.factors(out, FactorKind::NeedReplication));
    return fallback.build();
  }
  b.operand(inDims);
  b.result(outDims);
  return b.build();
}

OpShardingRuleAttr TransposeOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  SmallVector<int64_t> in = b.factors(getInput().getType().getShape());
  b.operandOf(in);
  b.resultOf(pick(in, getPermutation()));
  return b.build();
}

/// Shared by slice and pad: dimensions left whole pass through; a shifted
/// window (`shifted(d)`: a stride-1 slice, a pad) is a permutation factor
/// shared by operand and result (the partitioner moves the halo, see
/// lib/Sharding/PartitionWindow.cpp); other changed dimensions (strided
/// slices) need replication on the operand and are new on the result.
static OpShardingRuleAttr windowRule(MLIRContext *ctx, ArrayRef<int64_t> in,
                                     ArrayRef<int64_t> out,
                                     function_ref<bool(int64_t)> whole,
                                     function_ref<bool(int64_t)> shifted) {
  ShardingRuleBuilder b(ctx);
  SmallVector<int64_t> inF, outF;
  for (size_t d = 0; d < in.size(); ++d) {
    if (whole(d) || shifted(d)) {
      int64_t f = b.factor(out[d], whole(d) ? FactorKind::PassThrough
                                            : FactorKind::Permutation);
      inF.push_back(f);
      outF.push_back(f);
    } else {
      inF.push_back(b.factor(in[d], FactorKind::NeedReplication));
      outF.push_back(b.factor(out[d]));
    }
  }
  b.operandOf(inF);
  b.resultOf(outF);
  return b.build();
}

OpShardingRuleAttr SliceOp::getShardingRule() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  return windowRule(
      getContext(), in, getType().getShape(),
      [&](int64_t d) {
        return getStart()[d] == 0 && getLimit()[d] == in[d] &&
               getStrides()[d] == 1;
      },
      [&](int64_t d) { return getStrides()[d] == 1; });
}

OpShardingRuleAttr PadOp::getShardingRule() {
  return windowRule(
      getContext(), getInput().getType().getShape(), getType().getShape(),
      [&](int64_t d) { return getLow()[d] == 0 && getHigh()[d] == 0; },
      [](int64_t) { return true; });
}

/// The concatenated dimension is one permutation factor of every operand
/// and the result: each operand's rows land shifted by its offset, moved by
/// halo exchange where the dimension is split
/// (lib/Sharding/PartitionWindow.cpp).
OpShardingRuleAttr ConcatenateOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> out = getType().getShape();
  SmallVector<int64_t> shared;
  for (size_t d = 0; d < out.size(); ++d)
    shared.push_back(b.factor(out[d], int64_t(d) == int64_t(getDim())
                                          ? FactorKind::Permutation
                                          : FactorKind::PassThrough));
  for (size_t i = 0; i < getInputs().size(); ++i)
    b.operandOf(shared);
  b.resultOf(shared);
  return b.build();
}

OpShardingRuleAttr DotGeneralOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  SmallVector<int64_t> lhsF(lhs.size(), -1), rhsF(rhs.size(), -1), out;
  for (auto [l, r] : llvm::zip(getLhsBatchingDims(), getRhsBatchingDims())) {
    lhsF[l] = rhsF[r] = b.factor(lhs[l]);
    out.push_back(lhsF[l]);
  }
  for (auto [l, r] :
       llvm::zip(getLhsContractingDims(), getRhsContractingDims()))
    lhsF[l] = rhsF[r] = b.factor(lhs[l], FactorKind::Reduction);
  for (size_t d = 0; d < lhs.size(); ++d)
    if (lhsF[d] < 0)
      out.push_back(lhsF[d] = b.factor(lhs[d]));
  for (size_t d = 0; d < rhs.size(); ++d)
    if (rhsF[d] < 0)
      out.push_back(rhsF[d] = b.factor(rhs[d]));
  b.operandOf(lhsF);
  b.operandOf(rhsF);
  b.resultOf(out);
  return b.build();
}

OpShardingRuleAttr ReduceOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> in = getInput().getType().getShape();
  SmallVector<int64_t> inF, out;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = llvm::is_contained(getDims(), int64_t(d));
    inF.push_back(b.factor(in[d], reduced ? FactorKind::Reduction
                                          : FactorKind::PassThrough));
    if (!reduced)
      out.push_back(inF.back());
  }
  b.operandOf(inF);
  b.resultOf(out);
  return b.build();
}

/// All dimensions pass through except `dim`, which needs replication.
static OpShardingRuleAttr alongDimRule(Operation *op, int64_t dim) {
  ShardingRuleBuilder b(op->getContext());
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  SmallVector<int64_t> f = b.factors(shape);
  b.setKind(f[dim], FactorKind::NeedReplication);
  b.operandOf(f);
  b.resultOf(f);
  return b.build();
}

OpShardingRuleAttr CumsumOp::getShardingRule() {
  return alongDimRule(*this, getDim());
}

OpShardingRuleAttr SoftmaxOp::getShardingRule() {
  return alongDimRule(*this, getDim());
}

/// layer_norm / rms_norm: statistics over the last dimension.
static OpShardingRuleAttr normRule(Operation *op) {
  ShardingRuleBuilder b(op->getContext());
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  SmallVector<int64_t> f = b.factors(shape);
  b.setKind(f.back(), FactorKind::NeedReplication);
  b.operandOf(f);
  for (size_t k = 1; k < op->getNumOperands(); ++k)
    b.operandOf({f.back()});
  b.resultOf(f);
  return b.build();
}

OpShardingRuleAttr LayerNormOp::getShardingRule() { return normRule(*this); }
OpShardingRuleAttr RmsNormOp::getShardingRule() { return normRule(*this); }

OpShardingRuleAttr GatherOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> table = getTable().getType().getShape();
  int64_t axis = getAxis();
  SmallVector<int64_t> tableF = b.factors(table);
  // Rows outside a shard gather zeros, so a table split on `axis` gives
  // partial results that sum to the whole (vocabulary-parallel embedding).
  b.setKind(tableF[axis], FactorKind::Reduction);
  SmallVector<int64_t> idxF = b.factors(getIndices().getType().getShape());
  SmallVector<int64_t> out(tableF.begin(), tableF.begin() + axis);
  llvm::append_range(out, idxF);
  out.append(tableF.begin() + axis + 1, tableF.end());
  b.operandOf(tableF);
  b.operandOf(idxF);
  b.resultOf(out);
  return b.build();
}

OpShardingRuleAttr ScatterAddOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> base = getBase().getType().getShape();
  int64_t axis = getAxis();
  SmallVector<int64_t> baseF = b.factors(base);
  // Updates split over their index dimensions add into the same rows from
  // several devices: those factors leave the result partial.
  SmallVector<int64_t> idxF = b.factors(getIndices().getType().getShape(),
                                        FactorKind::Reduction);
  SmallVector<int64_t> upd(baseF.begin(), baseF.begin() + axis);
  llvm::append_range(upd, idxF);
  upd.append(baseF.begin() + axis + 1, baseF.end());
  b.operandOf(baseF);
  b.operandOf(idxF);
  b.operandOf(upd);
  b.resultOf(baseF);
  return b.build();
}

OpShardingRuleAttr OneHotOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  SmallVector<int64_t> idx = b.factors(getIndices().getType().getShape());
  SmallVector<int64_t> out = idx;
  out.push_back(b.factor(getType().getShape().back()));
  b.operandOf(idx);
  b.resultOf(out);
  return b.build();
}

OpShardingRuleAttr TopKOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> in = getInput().getType().getShape();
  SmallVector<int64_t> f = b.factors(in.drop_back());
  SmallVector<int64_t> inF = f, outF = f;
  inF.push_back(b.factor(in.back(), FactorKind::NeedReplication));
  outF.push_back(b.factor(getK()));
  b.operandOf(inF);
  b.resultOf(outF);
  b.resultOf(outF);
  return b.build();
}

OpShardingRuleAttr SoftmaxCrossEntropyOp::getShardingRule() {
  ShardingRuleBuilder b(getContext());
  ArrayRef<int64_t> logits = getLogits().getType().getShape();
  bool perPosition = getReduction() == LossReduction::none;
  // Positions summed into a scalar loss are reduction factors; classes are
  // summed over by the log-sum-exp (vocabulary-parallel cross-entropy).
  SmallVector<int64_t> pos =
      b.factors(logits.drop_back(), perPosition ? FactorKind::PassThrough
                                                : FactorKind::Reduction);
  SmallVector<int64_t> logitsF = pos;
  logitsF.push_back(b.factor(logits.back(), FactorKind::Reduction));
  b.operandOf(logitsF);
  b.operandOf(pos);
  b.resultOf(perPosition ? pos : SmallVector<int64_t>{});
  return b.build();
}
