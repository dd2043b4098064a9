//===- SavedActivations.cpp - What the backward keeps from the forward -----===//
//
// Rewrites of a gradient function (buildGradient's result, ops tagged with
// tessel.role) that shrink the values live between forward and backward
// without changing what is computed: the backward reads a cheap copy made
// afresh instead of keeping a large forward value.
//
//===----------------------------------------------------------------------===//

#include "tessel/autodiff/Autodiff.h"

#include "tessel/dialects/tessel/TesselOps.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isBackward(Operation *op) {
  auto role = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
  return role && role.getValue() != "forward" && role.getValue() != "optimizer";
}

bool isForward(Operation *op) {
  auto role = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
  return role && role.getValue() == "forward";
}

/// The low-type value the backward can read `v` from: `u` where v is
/// convert(u) (exact), or the forward's own low-type copy of v (v rounded,
/// as a trainer that stores activations in bf16 has it).
Value lowTypeSource(Value v, Type low) {
  auto elementType = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getElementType();
  };
  if (auto convert = v.getDefiningOp<ConvertOp>())
    if (elementType(convert.getOperand()) == low)
      return convert.getOperand();
  for (Operation *user : v.getUsers())
    if (auto convert = dyn_cast<ConvertOp>(user))
      if (isForward(user) && elementType(convert.getResult()) == low)
        return convert.getResult();
  return {};
}

/// The uses of `v` by backward ops, and the first of them in program order.
Operation *backwardUses(Value v, SmallVectorImpl<OpOperand *> &uses) {
  Operation *first = nullptr;
  for (OpOperand &use : v.getUses()) {
    Operation *owner = use.getOwner();
    if (!isBackward(owner))
      continue;
    uses.push_back(&use);
    if (!first || owner->isBeforeInBlock(first))
      first = owner;
  }
  return first;
}

/// Marks `op`, made for the backward op `user`, as recomputation in its
/// stage and layer.
void tagLike(Operation *op, Operation *user) {
  op->setAttr(TesselDialect::kRoleAttrName,
              StringAttr::get(op->getContext(), "recompute"));
  for (StringRef name :
       {TesselDialect::kLayerAttrName, TesselDialect::kStageAttrName})
    if (Attribute a = user->getAttr(name))
      op->setAttr(name, a);
}

int64_t elements(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : -1;
}

} // namespace

void mlir::tessel::narrowSavedActivations(func::FuncOp grad, Type low) {
  SmallVector<Value> candidates;
  for (Operation &op : grad.getBody().front())
    if (isForward(&op))
      for (Value v : op.getResults())
        if (auto t = dyn_cast<RankedTensorType>(v.getType());
            t && t.getElementType().isF32())
          candidates.push_back(v);
  for (Value v : candidates) {
    SmallVector<OpOperand *> uses;
    Operation *first = backwardUses(v, uses);
    Value source = first ? lowTypeSource(v, low) : Value();
    if (!source)
      continue;
    OpBuilder b(first);
    auto widen = ConvertOp::create(b, v.getLoc(), v.getType(), source);
    tagLike(widen, first);
    for (OpOperand *use : uses)
      use->set(widen);
  }
}

namespace {

/// Ops the backward makes again rather than keeping their result: a
/// broadcast of an operand at most a quarter of its size, a splat constant,
/// an iota.
bool cheapToRemake(Operation *op) {
  if (auto broadcast = dyn_cast<BroadcastInDimOp>(op)) {
    int64_t n = elements(broadcast.getOperand());
    return n >= 0 && n * 4 <= elements(broadcast);
  }
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    return dense && dense.isSplat();
  }
  return isa<IotaOp>(op);
}

} // namespace

void mlir::tessel::rematerializeCheapValues(func::FuncOp grad) {
  SmallVector<Operation *> cheap;
  for (Operation &op : grad.getBody().front())
    if (isForward(&op) && op.getNumResults() == 1 && cheapToRemake(&op))
      cheap.push_back(&op);
  for (Operation *op : cheap) {
    SmallVector<OpOperand *> uses;
    Operation *first = backwardUses(op->getResult(0), uses);
    if (!first)
      continue;
    OpBuilder b(first);
    Operation *clone = b.clone(*op);
    tagLike(clone, first);
    for (OpOperand *use : uses)
      use->set(clone->getResult(0));
  }
}
