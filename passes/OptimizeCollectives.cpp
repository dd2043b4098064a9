//===- OptimizeCollectives.cpp - --tessel-optimize-collectives ------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "tessel-optimize-collectives"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELOPTIMIZECOLLECTIVESPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

struct TesselOptimizeCollectivesPass
    : tessel::impl::TesselOptimizeCollectivesPassBase<
          TesselOptimizeCollectivesPass> {
  using TesselOptimizeCollectivesPassBase::TesselOptimizeCollectivesPassBase;

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(TesselDialect::kSpmdAttrName) || func.isExternal())
        continue;
      foldBlocks(func);
      bucket(func);
      removeDead(func);
    }
  }

  /// all_gather + shard_slice of the same group and dimension -> the
  /// gather's operand; all_reduce + shard_slice -> reduce_scatter.
  void foldBlocks(func::FuncOp func) {
    SmallVector<ShardSliceOp> slices;
    func.walk([&](ShardSliceOp s) { slices.push_back(s); });
    for (ShardSliceOp s : slices) {
      Operation *def = s.getInput().getDefiningOp();
      auto sameGroup = [&](CollectiveOpInterface c) {
        return c.getMeshAttr() == s.getMeshAttr() && c.getAxes() == s.getAxes();
      };
      if (auto ag = dyn_cast_or_null<AllGatherOp>(def)) {
        if (sameGroup(ag) && ag.getDim() == s.getDim() &&
            ag.getInput().getType() == s.getType()) {
          s.getResult().replaceAllUsesWith(ag.getInput());
          s.erase();
        }
        continue;
      }
      auto ar = dyn_cast_or_null<AllReduceOp>(def);
      if (!ar || !ar->hasOneUse() || !sameGroup(ar))
        continue;
      OpBuilder b(s);
      Value rs = ReduceScatterOp::create(
          b, s.getLoc(), s.getType(), ar.getKind(), ar.getInput(),
          ar.getMeshAttr().getValue(), ar.getAxes(), s.getDim());
      s.getResult().replaceAllUsesWith(rs);
      s.erase();
      ar.erase();
    }
  }

  /// Combines small all-reduces into buckets.
  void bucket(func::FuncOp func) {
    mlir::Block *body = &func.getBody().front();
    SmallVector<AllReduceOp> current;
    int64_t bytes = 0;
    auto flush = [&]() {
      if (current.size() > 1)
        combine(current);
      current.clear();
      bytes = 0;
    };
    auto sizeOf = [](AllReduceOp op) {
      RankedTensorType t = typeOf(op.getInput());
      return t.getNumElements() *
             std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
    };
    for (Operation &op : llvm::make_early_inc_range(*body)) {
      // A use of a bucket member before the bucket is complete ends it.
      for (Value operand : op.getOperands())
        if (auto def = operand.getDefiningOp<AllReduceOp>())
          if (llvm::is_contained(current, def)) {
            flush();
            break;
          }
      auto ar = dyn_cast<AllReduceOp>(op);
      if (!ar || ar.getKind() != CollectiveKind::sum ||
          sizeOf(ar) > bucketBytes)
        continue;
      if (!current.empty() &&
          (current.front().getMeshAttr() != ar.getMeshAttr() ||
           current.front().getAxes() != ar.getAxes() ||
           typeOf(current.front().getInput()).getElementType() !=
               typeOf(ar.getInput()).getElementType() ||
           bytes + sizeOf(ar) > bucketBytes))
        flush();
      current.push_back(ar);
      bytes += sizeOf(ar);
    }
    flush();
  }

  /// One all-reduce of the flattened, concatenated inputs, placed at the
  /// last member; results sliced back out.
  void combine(ArrayRef<AllReduceOp> members) {
    AllReduceOp last = members.back();
    OpBuilder b(last);
    Location loc = last.getLoc();
    Type elt = typeOf(last.getInput()).getElementType();
    SmallVector<Value> flat;
    int64_t total = 0;
    for (AllReduceOp m : members) {
      int64_t n = typeOf(m.getInput()).getNumElements();
      flat.push_back(ReshapeOp::create(
          b, loc, RankedTensorType::get({n}, elt), m.getInput()));
      total += n;
    }
    auto flatType = RankedTensorType::get({total}, elt);
    Value joined = ConcatenateOp::create(b, loc, flat, int64_t(0));
    Value reduced = AllReduceOp::create(
        b, loc, flatType, CollectiveKind::sum, joined,
        last.getMeshAttr().getValue(), last.getAxes());
    int64_t offset = 0;
    for (AllReduceOp m : members) {
      RankedTensorType t = typeOf(m.getInput());
      int64_t n = t.getNumElements();
      Value piece = SliceOp::create(b, loc, reduced, ArrayRef<int64_t>{offset},
                                    ArrayRef<int64_t>{offset + n},
                                    ArrayRef<int64_t>{1});
      m.getResult().replaceAllUsesWith(
          ReshapeOp::create(b, loc, t, piece).getResult());
      offset += n;
    }
    for (AllReduceOp m : members)
      m.erase();
  }

  /// Removes unused collectives and the side-effect-free ops left dead
  /// (index arithmetic of folded blocks). Every device runs the same
  /// program, so a collective no device uses can go from all of them.
  void removeDead(func::FuncOp func) {
    mlir::Block &body = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
      auto collective = dyn_cast<CollectiveOpInterface>(op);
      bool unusedCollective = collective && !collective.isPointToPoint() &&
                              op.getNumResults() && op.use_empty();
      if (unusedCollective || isOpTriviallyDead(&op))
        op.erase();
    }
  }
};
} // namespace
