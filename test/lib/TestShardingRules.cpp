//===- TestShardingRules.cpp - print every op's sharding rule -------------===//
//
// --tessel-test-print-sharding-rules emits each op's rule as a remark, so
// that lit tests check rules with -verify-diagnostics.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TestPrintShardingRulesPass
    : PassWrapper<TestPrintShardingRulesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintShardingRulesPass)

  StringRef getArgument() const final {
    return "tessel-test-print-sharding-rules";
  }
  StringRef getDescription() const final {
    return "Emits every tessel op's sharding rule as a remark";
  }

  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (!isa<TesselDialect>(op->getDialect()) || isa<MeshOp>(op))
        return;
      if (auto rule = dyn_cast<ShardingRuleOpInterface>(op))
        op->emitRemark() << rule.getShardingRule();
      else
        op->emitRemark() << "no sharding rule";
    });
  }
};
} // namespace

namespace mlir::tessel {
void registerTesselTestPasses() {
  PassRegistration<TestPrintShardingRulesPass>();
}
} // namespace mlir::tessel
