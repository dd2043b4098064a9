//===- Partition.cpp - --tessel-partition ---------------------------------===//

#include "tessel/passes/Passes.h"
#include "tessel/sharding/Partition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "tessel-partition"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELPARTITIONPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselPartitionPass
    : tessel::impl::TesselPartitionPassBase<TesselPartitionPass> {
  using TesselPartitionPassBase::TesselPartitionPassBase;

  void runOnOperation() override {
    PartitionOptions options;
    options.strict = strict;
    if (failed(partitionModule(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
