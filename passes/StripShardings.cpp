//===- StripShardings.cpp - drop sharding annotations ---------------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/passes/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#define DEBUG_TYPE "tessel-strip-shardings"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSTRIPSHARDINGSPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselStripShardingsPass
    : tessel::impl::TesselStripShardingsPassBase<TesselStripShardingsPass> {
  using TesselStripShardingsPassBase::TesselStripShardingsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef name = TesselDialect::kShardingAttrName;
    module.walk([&](Operation *op) {
      op->removeAttr(name);
      if (auto func = dyn_cast<FunctionOpInterface>(op)) {
        for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
          func.removeArgAttr(i, name);
        for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
          func.removeResultAttr(i, StringAttr::get(op->getContext(), name));
      }
    });
    module.walk([](ShardingConstraintOp op) {
      op.getResult().replaceAllUsesWith(op.getInput());
      op.erase();
    });
    if (!removeMeshes)
      return;
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      if (SymbolTable::symbolKnownUseEmpty(mesh, module))
        mesh.erase();
  }
};
} // namespace
