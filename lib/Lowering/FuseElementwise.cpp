//===- FuseElementwise.cpp - element-wise fusion within schedule actions --===//
//
// Upstream's element-wise fusion merges a generic into its single consumer
// wherever the consumer is. In a pipeline stage's function (one long block
// of schedule actions marked by tessel_rt_region calls) that would move work
// across actions: the running sum of a gradient over microbatches, one add
// per backward action, fuses into a single n-ary add at the last action, and
// every microbatch's gradient then stays allocated until then -- memory
// growing with the microbatch count where 1F1B promises a constant. This
// pass runs the same fusion patterns but never fuses a producer into a
// consumer of another action. Functions without regions fuse as upstream.
//
//===----------------------------------------------------------------------===//

#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {

constexpr StringLiteral kActionAttr = "tessel.action";

bool isRegionMark(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == tessel::kRegionFunction;
}

/// The schedule action `op` belongs to: the number of region marks before
/// its ancestor in the function's block. Ops are stamped up front; an op the
/// fusion made takes the stamp of the nearest stamped op before it.
int64_t actionOf(Operation *op, Block *body) {
  Operation *top = body->findAncestorOpInBlock(*op);
  if (!top)
    return -1;
  for (Operation *at = top; at; at = at->getPrevNode())
    if (auto stamp = at->getAttrOfType<IntegerAttr>(kActionAttr))
      return stamp.getInt();
  return 0;
}

void stampActions(Block *body) {
  int64_t action = 0;
  Builder b(body->getParentOp()->getContext());
  for (Operation &op : *body) {
    if (isRegionMark(&op))
      ++action;
    op.setAttr(kActionAttr, b.getI64IntegerAttr(action));
  }
}

struct FuseElementwisePass
    : PassWrapper<FuseElementwisePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwisePass)
  StringRef getArgument() const override { return "tessel-fuse-elementwise"; }
  StringRef getDescription() const override {
    return "Element-wise fusion of linalg ops (upstream's patterns) that "
           "never fuses across the schedule actions of a pipeline stage";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  }
  void runOnOperation() override;
};

void FuseElementwisePass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  Block *body = &func.getBody().front();
  stampActions(body);
  linalg::ControlFusionFn control = [body](OpOperand *operand) {
    Operation *producer = operand->get().getDefiningOp();
    if (!producer || !producer->hasOneUse())
      return false;
    return actionOf(producer, body) == actionOf(operand->getOwner(), body);
  };
  MLIRContext *context = &getContext();
  RewritePatternSet patterns(context);
  linalg::populateElementwiseOpsFusionPatterns(patterns, control);
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
  tensor::populateBubbleUpExpandShapePatterns(patterns);
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
  context->getLoadedDialect<linalg::LinalgDialect>()
      ->getCanonicalizationPatterns(patterns);
  linalg::populateConstantFoldLinalgOperations(patterns, control);
  GreedyRewriteConfig config;
  config.setUseTopDownTraversal(true);
  if (failed(applyPatternsGreedily(func, std::move(patterns), config)))
    signalPassFailure();
  func.walk([](Operation *op) { op->removeAttr(kActionAttr); });
}

} // namespace

std::unique_ptr<Pass> mlir::tessel::createFuseElementwisePass() {
  return std::make_unique<FuseElementwisePass>();
}
