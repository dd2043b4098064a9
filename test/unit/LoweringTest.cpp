//===- LoweringTest.cpp - the shared lowering and the target registry -----===//

#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/lowering/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/DialectConversion.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::tessel;

namespace {

TEST(Targets, RegistryHoldsCpuAndNewTargets) {
  const Target *cpu = lookupTarget("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->loweringPipeline, "tessel-cpu-lowering");
  EXPECT_FALSE(cpu->takesGpuArch);
  const Target *cuda = lookupTarget("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->loweringPipeline, "tessel-cuda-lowering");
  EXPECT_TRUE(cuda->takesGpuArch);
  EXPECT_EQ(lookupTarget("gpu"), nullptr);
  registerTarget({"test-device", "for this test", [](RewritePatternSet &) {},
                  "tessel-cpu-lowering"});
  EXPECT_NE(lookupTarget("test-device"), nullptr);
  EXPECT_EQ(listTargets(), "cpu, cuda, test-device");
}

TEST(Targets, SharedLoweringLeavesMatmulsAndTheirTypesToTheTarget) {
  // The shared patterns lower the element-wise op and leave the bf16
  // dot_general as it is: a GPU target must get it in bf16 (the CPU target
  // widens it to f32 for BLAS).
  DialectRegistry registry;
  registry.insert<TesselDialect, func::FuncDialect, arith::ArithDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    func.func @f(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
      %r = tessel.relu %a : tensor<4x8xbf16>
      %y = tessel.dot_general %r, %b, batching = [] x [], contracting = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
      return %y : tensor<4x2xbf16>
    })",
                                                              &context);
  ASSERT_TRUE(module);
  ConversionTarget target(context);
  target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                         linalg::LinalgDialect, math::MathDialect,
                         tensor::TensorDialect>();
  target.addIllegalOp<ReluOp>();
  RewritePatternSet patterns(&context);
  populateTesselToLinalgPatterns(patterns);
  ASSERT_TRUE(succeeded(
      applyPartialConversion(*module, target, std::move(patterns))));
  int matmuls = 0;
  module->walk([&](DotGeneralOp op) {
    ++matmuls;
    EXPECT_TRUE(op.getLhs().getType().getElementType().isBF16());
    EXPECT_TRUE(op.getResult().getType().getElementType().isBF16());
  });
  EXPECT_EQ(matmuls, 1);
  int relus = 0;
  module->walk([&](ReluOp) { ++relus; });
  EXPECT_EQ(relus, 0);
}

} // namespace
