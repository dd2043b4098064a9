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

#include "llvm/ADT/MapVector.h"

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

/// Makes the backward read `v` from values `make` builds afresh: one copy
/// per pipeline stage and phase of its backward readers (B: recomputation
/// and input gradients; W: weight gradients, which a zero-bubble schedule
/// defers), placed before the first reader of each, so no copy is kept
/// across phases.
void rereadInBackward(Value v, function_ref<Value(OpBuilder &)> make) {
  struct Group {
    Operation *first = nullptr;
    SmallVector<OpOperand *> uses;
  };
  llvm::MapVector<std::pair<unsigned, Attribute>, Group> groups;
  for (OpOperand &use : v.getUses()) {
    Operation *owner = use.getOwner();
    if (!isBackward(owner))
      continue;
    auto role = owner->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
    unsigned weight = role.getValue() == "backward_weight";
    Group &g = groups[{weight, owner->getAttr(TesselDialect::kStageAttrName)}];
    g.uses.push_back(&use);
    if (!g.first || owner->isBeforeInBlock(g.first))
      g.first = owner;
  }
  for (auto &[key, g] : groups) {
    OpBuilder b(g.first);
    Value copy = make(b);
    Operation *op = copy.getDefiningOp();
    op->setAttr(TesselDialect::kRoleAttrName,
                b.getStringAttr(key.first ? "backward_weight" : "recompute"));
    for (StringRef name :
         {TesselDialect::kLayerAttrName, TesselDialect::kStageAttrName})
      if (Attribute a = g.first->getAttr(name))
        op->setAttr(name, a);
    for (OpOperand *use : g.uses)
      use->set(copy);
  }
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
  for (Value v : candidates)
    if (Value source = lowTypeSource(v, low))
      rereadInBackward(v, [&](OpBuilder &b) {
        return ConvertOp::create(b, v.getLoc(), v.getType(), source);
      });
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
  for (Operation *op : cheap)
    rereadInBackward(op->getResult(0), [&](OpBuilder &b) {
      return b.clone(*op)->getResult(0);
    });
}
