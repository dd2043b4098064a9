//===- LowerToLinalg.cpp - tessel ops to linalg and runtime calls ---------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/CommGroups.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/lowering/Target.h"
#include "tessel/passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "tessel-lower-to-linalg"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELLOWERTOLINALGPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselLowerToLinalgPass
    : mlir::tessel::impl::TesselLowerToLinalgPassBase<TesselLowerToLinalgPass> {
  using TesselLowerToLinalgPassBase::TesselLowerToLinalgPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const Target *device = lookupTarget(target);
    if (!device) {
      module.emitError() << "unknown target '" << target
                         << "'; the registered targets are: "
                         << listTargets();
      return signalPassFailure();
    }
    // Collectives name their communicator group (tessel-export-entry has
    // numbered them when it ran first; this numbers the rest).
    assignCommGroups(module);

    replaceEmptyResults(module);

    ConversionTarget target(getContext());
    target.addLegalDialect<
        arith::ArithDialect, bufferization::BufferizationDialect,
        func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
        memref::MemRefDialect, scf::SCFDialect, tensor::TensorDialect>();
    target.addIllegalDialect<TesselDialect>();
    target.addLegalOp<MeshOp>();
    RewritePatternSet patterns(&getContext());
    populateTesselToLinalgPatterns(patterns);
    device->populateDevicePatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    if (overlapCollectives)
      splitCollectives(module);

    // The program no longer refers to meshes; drop them and tessel's
    // attributes (they would name symbols that are gone).
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      mesh.erase();
    module.walk([](Operation *op) {
      // The module keeps what tessel-export-entry recorded for the end of
      // the pipeline.
      for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
        if (attr.getName().getValue().starts_with("tessel.") &&
            !isa<ModuleOp>(op))
          op->removeDiscardableAttr(attr.getName());
      auto func = dyn_cast<func::FuncOp>(op);
      if (!func)
        return;
      auto names = [](DictionaryAttr dict) {
        SmallVector<StringAttr> out;
        if (dict)
          for (NamedAttribute attr : dict)
            if (attr.getName().getValue().starts_with("tessel."))
              out.push_back(attr.getName());
        return out;
      };
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        for (StringAttr name : names(func.getArgAttrDict(i)))
          func.removeArgAttr(i, name);
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        for (StringAttr name : names(func.getResultAttrDict(i)))
          func.removeResultAttr(i, name);
    });
  }

  /// A tessel op whose results all have no elements computes nothing: its
  /// results become tensor.empty (the lowerings of slice, pad and the like
  /// would emit offsets past the end of an empty tensor). Collectives too:
  /// every rank runs the same program, so every rank skips the same ones.
  static void replaceEmptyResults(ModuleOp module) {
    SmallVector<Operation *> empty;
    module.walk([&](Operation *op) {
      // A send of nothing matches a receive of nothing, which goes too.
      if (auto send = dyn_cast<SendOp>(op))
        if (cast<RankedTensorType>(send.getInput().getType())
                .getNumElements() == 0)
          empty.push_back(op);
      if (!isa<TesselDialect>(op->getDialect()) || op->getNumResults() == 0)
        return;
      bool allEmpty = llvm::all_of(op->getResultTypes(), [](Type t) {
        auto tensor = dyn_cast<RankedTensorType>(t);
        return tensor && tensor.hasStaticShape() && tensor.getNumElements() == 0;
      });
      if (allEmpty)
        empty.push_back(op);
    });
    for (Operation *op : empty) {
      OpBuilder b(op);
      for (Value r : op->getResults()) {
        auto type = cast<RankedTensorType>(r.getType());
        r.replaceAllUsesWith(tensor::EmptyOp::create(
            b, op->getLoc(), type.getShape(), type.getElementType()));
      }
      op->erase();
    }
  }
};
} // namespace
