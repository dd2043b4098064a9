//===- tessel-opt.cpp - the tessel opt tool -------------------------------===//
//
// Parses, verifies, transforms and prints tessel programs. Registers the
// tessel dialect, the upstream dialects lowering targets, and every tessel
// pass (`tessel-opt --help` lists them).
//
//===----------------------------------------------------------------------===//

#include "tessel/Plugin.h"
#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tessel {
void registerTesselTestPasses();
} // namespace mlir::tessel

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::tessel::TesselDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::tensor::TensorDialect, mlir::linalg::LinalgDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect>();
  mlir::func::registerInlinerExtension(registry);
  mlir::registerTransformsPasses();
  mlir::tessel::registerTesselPasses();
  // The CPU pipeline as tessel-compile runs it (and every dialect it
  // lowers through).
  mlir::tessel::registerCpuPipeline();
  mlir::tessel::registerCpuLoweringDialects(registry);
  mlir::tessel::registerCudaPipeline(registry);
  mlir::tessel::registerTesselTestPasses();
  // MlirOptMain loads --load-pass-plugin / --load-dialect-plugin itself;
  // first refuse a plugin built against another Tessel or that cannot
  // register next to Tessel's own passes.
  if (llvm::Error e = mlir::tessel::checkPlugins(
          mlir::tessel::findPluginArguments(argc, argv))) {
    llvm::errs() << "tessel-opt: error: " << llvm::toString(std::move(e))
                 << "\n";
    return 1;
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tessel optimizer driver\n", registry));
}
