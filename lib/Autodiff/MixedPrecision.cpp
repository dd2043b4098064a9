//===- MixedPrecision.cpp - f32 compute moved to bf16 or f16 --------------===//
//
// Autocast on the forward function, before it is differentiated: each op
// that computes in f32 either runs in the low type (matmuls, elementwise
// math, data movement) or stays in f32 (softmax, norms, the loss, sums and
// means, exp/log/pow, comparisons, and values that encode positions). Values
// are converted where a consumer wants the other type, once per value and
// type. Differentiating the result gives the usual mixed-precision backward:
// the VJP of each cast is the opposite cast, so parameter gradients arrive
// in f32 while activation gradients stay in the low type.
//
//===----------------------------------------------------------------------===//

#include "tessel/autodiff/Autodiff.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// Ops that stay in f32 under mixed precision (and any op the model marks
/// tessel.full_precision).
bool keepsF32(Operation *op) {
  if (op->hasAttr(TesselDialect::kFullPrecisionAttrName))
    return true;
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return reduce.getKind() == ReduceKind::sum ||
           reduce.getKind() == ReduceKind::mean;
  return isa<SoftmaxOp, LayerNormOp, RmsNormOp, SoftmaxCrossEntropyOp,
             CumsumOp, ExpOp, LogOp, PowOp, CompareOp, TopKOp, IotaOp,
             ConstantOp, DropoutMaskOp>(op);
}

class Caster {
public:
  Caster(OpBuilder &b, Type low) : b(b), low(low), f32(b.getF32Type()) {}

  /// The new value for `old`, in the low type or in f32 (other element
  /// types are returned as they are). A cast belongs to the layer, stage
  /// and recomputation group of the op it is made for (`user`), so that
  /// recomputing a layer recomputes its casts instead of keeping them.
  Value get(Value old, bool wantLow, Operation *user = nullptr) {
    Value v = values.lookup(old);
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return v;
    Type want = wantLow ? low : f32;
    Type have = t.getElementType();
    if (have == want || (have != low && have != f32))
      return v;
    auto [it, inserted] = casts[wantLow].try_emplace(v, Value());
    if (inserted && (it->second = convertedSplat(v, t.clone(want))))
      return it->second;
    if (inserted) {
      auto cast = ConvertOp::create(b, old.getLoc(), t.clone(want), v);
      if (user)
        for (StringRef name :
             {TesselDialect::kLayerAttrName, TesselDialect::kStageAttrName,
              TesselDialect::kRecomputeAttrName})
          if (Attribute a = user->getAttr(name))
            cast->setAttr(name, a);
      it->second = cast;
    }
    return it->second;
  }

  void cast(Operation *op) {
    bool lowOp = !keepsF32(op);
    IRMapping map;
    for (Value operand : op->getOperands())
      map.map(operand, get(operand, lowOp, op));
    Operation *clone = b.clone(*op, map);
    for (auto [from, to] : llvm::zip(op->getResults(), clone->getResults())) {
      auto t = dyn_cast<RankedTensorType>(to.getType());
      if (lowOp && t && t.getElementType() == f32)
        to.setType(t.clone(low));
      values[from] = to;
    }
  }

  llvm::DenseMap<Value, Value> values;

private:
  /// A splat constant in the other type (a scale, a mask fill): a constant,
  /// not a conversion, so nothing of its size is computed or kept.
  Value convertedSplat(Value v, RankedTensorType type) {
    auto constant = v.getDefiningOp<ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                          : DenseElementsAttr();
    if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
      return {};
    // Through double, which holds every f32/bf16/f16 value exactly.
    Value splat = createSplat(b, v.getLoc(), type,
                              dense.getSplatValue<APFloat>().convertToDouble());
    splat.getDefiningOp()->setDiscardableAttrs(
        constant->getDiscardableAttrDictionary());
    return splat;
  }

  OpBuilder &b;
  Type low, f32;
  /// Converts to f32 [0] and to the low type [1], per value.
  llvm::DenseMap<Value, Value> casts[2];
};

} // namespace

FailureOr<func::FuncOp> mlir::tessel::castCompute(func::FuncOp forward,
                                                  StringRef name,
                                                  Type computeType) {
  if (!computeType.isBF16() && !computeType.isF16())
    return forward.emitError()
           << "mixed precision computes in bf16 or f16, not " << computeType;
  if (!forward.getBody().hasOneBlock())
    return forward.emitError() << "cannot cast several blocks";
  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto cast = func::FuncOp::create(b, forward.getLoc(), name,
                                   forward.getFunctionType());
  cast.setAllArgAttrs(forward.getAllArgAttrs());
  cast.setAllResultAttrs(forward.getAllResultAttrs());
  Block *body = cast.addEntryBlock();
  b.setInsertionPointToStart(body);

  Caster caster(b, computeType);
  for (auto [from, to] :
       llvm::zip(forward.getArguments(), body->getArguments()))
    caster.values[from] = to;
  for (Operation &op : forward.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // Results keep their types; the loss is computed in f32.
      SmallVector<Value> results;
      for (Value r : ret.getOperands()) {
        auto t = dyn_cast<RankedTensorType>(r.getType());
        results.push_back(
            caster.get(r, t && t.getElementType() == computeType));
      }
      func::ReturnOp::create(b, ret.getLoc(), results);
      break;
    }
    caster.cast(&op);
  }
  if (failed(verify(cast))) {
    cast->erase();
    return forward.emitError()
           << "cannot run this function in " << computeType
           << "; hint: leave compute-type unset to train in full precision";
  }
  return cast;
}
