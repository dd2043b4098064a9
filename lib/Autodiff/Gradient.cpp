//===- Gradient.cpp - reverse-mode differentiation of a function ----------===//

#include "tessel/autodiff/Autodiff.h"

#include "Emit.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tessel;

using mlir::tessel::autodiff::isDifferentiable;

FailureOr<func::FuncOp> mlir::tessel::buildGradient(func::FuncOp forward,
                                                    StringRef name) {
  if (forward.isExternal() || forward.getNumResults() < 1)
    return forward.emitError() << "needs a body and a loss result";
  auto lossType = dyn_cast<RankedTensorType>(forward.getResultTypes()[0]);
  if (!lossType || lossType.getRank() != 0 || !isDifferentiable(lossType))
    return forward.emitError()
           << "result #0 must be a scalar float loss to differentiate, got "
           << forward.getResultTypes()[0]
           << "; hint: reduce the loss to a scalar (tessel.reduce sum, or "
              "softmax_cross_entropy with reduction = mean)";
  if (!forward.getBody().hasOneBlock())
    return forward.emitError() << "cannot differentiate several blocks";

  OpBuilder builder(forward);
  builder.setInsertionPointAfter(forward);
  SmallVector<Type> resultTypes = {lossType};
  for (Type t : forward.getArgumentTypes())
    if (isDifferentiable(t))
      resultTypes.push_back(t);
  auto grad = func::FuncOp::create(
      builder, forward.getLoc(), name,
      builder.getFunctionType(forward.getArgumentTypes(), resultTypes));
  grad.setAllArgAttrs(forward.getAllArgAttrs());
  Block *body = grad.addEntryBlock();
  builder.setInsertionPointToStart(body);

  // Forward: a copy of the body.
  IRMapping map;
  for (auto [from, to] :
       llvm::zip(forward.getArguments(), body->getArguments()))
    map.map(from, to);
  Block &fwd = forward.getBody().front();
  func::ReturnOp ret;
  SmallVector<Operation *> ops;
  for (Operation &op : fwd) {
    if (auto r = dyn_cast<func::ReturnOp>(op)) {
      ret = r;
      break;
    }
    Operation *clone = builder.clone(op, map);
    clone->removeAttr(TesselDialect::kShardingAttrName);
    ops.push_back(clone);
  }
  Value loss = map.lookup(ret.getOperand(0));

  // Backward: cotangents accumulate over uses.
  llvm::DenseMap<Value, Value> cot;
  auto accumulate = [&](Value v, Value c) {
    if (!c || !isDifferentiable(v.getType()))
      return;
    auto [it, inserted] = cot.try_emplace(v, c);
    if (!inserted)
      it->second = AddOp::create(builder, v.getLoc(), it->second, c);
  };
  accumulate(loss, createSplat(builder, forward.getLoc(), lossType, 1.0));
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> gs;
    bool any = false;
    for (Value r : op->getResults()) {
      gs.push_back(cot.lookup(r));
      any |= static_cast<bool>(gs.back());
    }
    if (!any)
      continue;
    SmallVector<Value> operandCots;
    if (failed(buildVjp(builder, op, gs, operandCots)))
      return failure();
    for (auto [v, c] : llvm::zip(op->getOperands(), operandCots))
      accumulate(v, c);
  }
  SmallVector<Value> results = {loss};
  for (BlockArgument arg : body->getArguments())
    if (isDifferentiable(arg.getType())) {
      Value c = cot.lookup(arg);
      results.push_back(c ? c
                          : createSplat(builder, forward.getLoc(),
                                        cast<RankedTensorType>(arg.getType()),
                                        0.0));
    }
  func::ReturnOp::create(builder, forward.getLoc(), results);
  // Names: loss, then d_<argument name>.
  grad.setResultAttr(0, TesselDialect::kNameAttrName,
                     builder.getStringAttr("loss"));
  unsigned r = 1;
  for (unsigned a = 0; a < forward.getNumArguments(); ++a) {
    if (!isDifferentiable(forward.getArgumentTypes()[a]))
      continue;
    auto argName = forward.getArgAttrOfType<StringAttr>(
        a, TesselDialect::kNameAttrName);
    grad.setResultAttr(
        r++, TesselDialect::kNameAttrName,
        builder.getStringAttr(
            "grad." + (argName ? argName.getValue().str()
                               : "arg" + std::to_string(a))));
  }
  return grad;
}
