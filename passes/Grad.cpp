//===- Grad.cpp - --tessel-grad -------------------------------------------===//

#include "tessel/autodiff/Autodiff.h"
#include "tessel/passes/Passes.h"

#define DEBUG_TYPE "tessel-grad"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGRADPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselGradPass : tessel::impl::TesselGradPassBase<TesselGradPass> {
  using TesselGradPassBase::TesselGradPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(funcName);
    if (!forward) {
      module.emitError() << "no function @" << funcName << " to differentiate";
      return signalPassFailure();
    }
    GradientOptions o;
    std::optional<Recompute> policy = parseRecompute(recompute);
    if (!policy) {
      forward.emitError() << "unknown recompute policy '" << recompute
                          << "'; expected none, layers or tagged";
      return signalPassFailure();
    }
    o.recompute = *policy;
    o.reshardAfterForward = reshardAfterForward;
    if (failed(buildGradient(forward, funcName + "_grad", o)))
      signalPassFailure();
  }
};
} // namespace
