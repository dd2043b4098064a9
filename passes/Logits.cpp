//===- Logits.cpp - a forward's logits as a function ----------------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELLOGITSPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselLogitsPass
    : tessel::impl::TesselLogitsPassBase<TesselLogitsPass> {
  using TesselLogitsPassBase::TesselLogitsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(func);
    if (!forward || forward.isExternal()) {
      module.emitError() << "tessel-logits: no function @" << func;
      return signalPassFailure();
    }
    SmallVector<SoftmaxCrossEntropyOp> losses;
    forward.walk([&](SoftmaxCrossEntropyOp op) { losses.push_back(op); });
    if (losses.size() != 1) {
      forward.emitError() << "tessel-logits: @" << func << " has "
                          << losses.size()
                          << " cross-entropy ops; the logits are the operand "
                             "of exactly one";
      return signalPassFailure();
    }
    std::string name = func + "_logits";
    if (module.lookupSymbol(name)) {
      module.emitError() << "tessel-logits: @" << name << " exists already";
      return signalPassFailure();
    }
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(forward);
    // The loss is found again in the clone by a mark.
    StringRef mark = "tessel.logits_of";
    losses.front()->setAttr(mark, b.getUnitAttr());
    auto clone = cast<func::FuncOp>(b.clone(*forward));
    losses.front()->removeAttr(mark);
    clone.setSymName(name);
    clone.setPublic();
    SoftmaxCrossEntropyOp loss;
    clone.walk([&](SoftmaxCrossEntropyOp op) {
      if (op->removeAttr(mark))
        loss = op;
    });
    returnLogits(clone, loss);
  }

  /// Makes `f` return the logits of `loss` and removes what no longer
  /// contributes.
  static void returnLogits(func::FuncOp f, SoftmaxCrossEntropyOp loss) {
    Value logits = loss.getLogits();
    Block &body = f.getBody().front();
    Operation *ret = body.getTerminator();
    OpBuilder b(ret);
    func::ReturnOp::create(b, ret->getLoc(), logits);
    ret->erase();
    MLIRContext *ctx = f.getContext();
    f.setType(FunctionType::get(ctx, f.getArgumentTypes(), {logits.getType()}));
    f.setAllResultAttrs(ArrayRef<DictionaryAttr>{DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, TesselDialect::kNameAttrName),
                             StringAttr::get(ctx, "logits"))})});
    // Dead code, last to first: an op goes when nothing reads its results
    // and it has no effects.
    for (Operation *op = body.getTerminator()->getPrevNode(); op;) {
      Operation *prev = op->getPrevNode();
      if (op->use_empty() && isMemoryEffectFree(op))
        op->erase();
      op = prev;
    }
  }
};
} // namespace
