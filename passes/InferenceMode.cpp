//===- InferenceMode.cpp - the evaluation form of a function --------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELINFERENCEMODEPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselInferenceModePass
    : tessel::impl::TesselInferenceModePassBase<TesselInferenceModePass> {
  using TesselInferenceModePassBase::TesselInferenceModePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs;
    if (functions.empty()) {
      for (auto f : module.getOps<func::FuncOp>())
        if (f.isPublic() && !f.isExternal())
          funcs.push_back(f);
    }
    for (StringRef name : llvm::split(functions, ',')) {
      if (name.trim().empty())
        continue;
      auto f = module.lookupSymbol<func::FuncOp>(name.trim());
      if (!f) {
        module.emitError() << "tessel-inference-mode: no function @"
                           << name.trim();
        return signalPassFailure();
      }
      funcs.push_back(f);
    }
    // Collected first: removing a mask erases its users too.
    SmallVector<DropoutMaskOp> masks;
    for (func::FuncOp f : funcs)
      f.walk([&](DropoutMaskOp op) { masks.push_back(op); });
    for (DropoutMaskOp op : masks)
      removeDropout(op);
  }

  /// x * mask becomes x; other uses of the mask read ones.
  static void removeDropout(DropoutMaskOp op) {
    for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
      auto mul = dyn_cast<MulOp>(use.getOwner());
      if (!mul)
        continue;
      Value other = mul->getOperand(1 - use.getOperandNumber());
      if (other.getType() != mul.getType())
        continue;
      // The product's tags (logical axes of an activation) go to x.
      if (Operation *def = other.getDefiningOp())
        for (NamedAttribute a : mul->getDiscardableAttrs())
          if (!def->hasAttr(a.getName()))
            def->setAttr(a.getName(), a.getValue());
      mul.getResult().replaceAllUsesWith(other);
      mul.erase();
    }
    if (!op->use_empty()) {
      OpBuilder b(op);
      Value ones = createSplat(b, op.getLoc(), op.getType(), 1.0);
      if (Operation *def = ones.getDefiningOp())
        def->setDiscardableAttrs(op->getDiscardableAttrDictionary());
      op.getResult().replaceAllUsesWith(ones);
    }
    op.erase();
  }
};
} // namespace
