//===- ApplyRules.cpp - logical axis names to shardings -------------------===//

#include "tessel/passes/Passes.h"
#include "tessel/sharding/LogicalRules.h"

#define DEBUG_TYPE "tessel-apply-rules"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELAPPLYRULESPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselApplyRulesPass
    : tessel::impl::TesselApplyRulesPassBase<TesselApplyRulesPass> {
  using TesselApplyRulesPassBase::TesselApplyRulesPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (rulesFile.empty() == strategy.empty()) {
      module.emitError() << "tessel-apply-rules needs exactly one of "
                            "rules=FILE and strategy=NAME";
      return signalPassFailure();
    }
    llvm::Expected<LogicalRules> rules = rulesFile.empty()
                                             ? builtinStrategy(strategy)
                                             : readLogicalRules(rulesFile);
    if (!rules) {
      module.emitError() << llvm::toString(rules.takeError());
      return signalPassFailure();
    }
    MeshOp mesh;
    for (MeshOp candidate : module.getOps<MeshOp>()) {
      if (!meshName.empty() && candidate.getSymName() != meshName)
        continue;
      if (mesh) {
        module.emitError() << "the module has several meshes; choose one with "
                              "mesh=NAME";
        return signalPassFailure();
      }
      mesh = candidate;
    }
    if (!mesh) {
      module.emitError() << (meshName.empty()
                                 ? Twine("the module has no tessel.mesh")
                                 : "the module has no tessel.mesh @" +
                                       meshName);
      return signalPassFailure();
    }
    if (failed(applyLogicalRules(module, mesh, *rules)))
      return signalPassFailure();
  }
};
} // namespace
