//===- Propagate.cpp - --tessel-propagate ---------------------------------===//

#include "tessel/passes/Passes.h"
#include "tessel/sharding/Propagation.h"

#define DEBUG_TYPE "tessel-propagate"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELPROPAGATEPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselPropagatePass
    : tessel::impl::TesselPropagatePassBase<TesselPropagatePass> {
  using TesselPropagatePassBase::TesselPropagatePassBase;

  void runOnOperation() override {
    PropagationOptions options;
    if (explain)
      options.explain = &llvm::errs();
    if (failed(propagateShardings(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
