//===- FreeAfterLastUse.cpp - free each temporary after its last use ------===//
//
// The ownership-based deallocation pipeline frees every buffer at the end of
// the block that owns it. A training step is one long block, so every
// temporary of the step -- each microbatch's activations in an unrolled
// pipeline schedule, each backward temporary -- would stay allocated until
// the step returns, and a rank's peak memory would be the sum of all of them.
// This pass moves each `memref.dealloc` of a `memref.alloc` up to just after
// the last operation of its block that uses the buffer or any view of it, so
// the peak is what is live at once (1F1B then keeps p microbatches of
// activations on the first stage, as its schedule promises).
//
// A function's argument the caller handed over (a dealloc marked
// tessel_owned_argument: the pieces of a long function free the buffers
// whose last reader they are, OutlineSegments.cpp) moves the same way.
//
// It moves only what it can prove: the allocation and the dealloc in one
// block, every use of every alias (BufferViewFlowAnalysis) inside that block
// and before the dealloc, and no use that turns the buffer into a raw pointer
// or an untracked memref (those could be read later without a use of the
// buffer). Runtime calls read and write their operands before returning
// (sends copy), so a call is the buffer's last use like any other op. On
// the cuda target a freed buffer may now be reused within the step: that is
// safe while every launch synchronizes (runtime/cuda/Launch.cpp) or frees
// are stream-ordered; asynchronous launches must keep one of the two.
//
//===----------------------------------------------------------------------===//

#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

/// The operation of `block` after which `dealloc` may go, or null when it
/// must stay where it is.
Operation *lastUse(memref::DeallocOp dealloc,
                   const BufferViewFlowAnalysis &aliases) {
  Block *block = dealloc->getBlock();
  Value buffer = dealloc.getMemref();
  // An allocation of this block, or an argument of it handed over by the
  // caller (OutlineSegments.cpp).
  Operation *def = buffer.getDefiningOp<memref::AllocOp>();
  auto arg = dyn_cast<BlockArgument>(buffer);
  bool owned = arg && arg.getOwner() == block &&
               dealloc->hasAttr(tessel::kOwnedArgument);
  if (!owned && (!def || def->getBlock() != block))
    return nullptr;
  BufferViewFlowAnalysis::ValueSetT all = aliases.resolve(buffer);
  Operation *last = def; // null for an argument: not yet used
  for (Value alias : all) {
    for (Operation *user : alias.getUsers()) {
      if (user == dealloc)
        continue;
      // Raw pointers and memrefs the analysis does not follow escape it.
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(user))
        return nullptr;
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) && !all.contains(result))
          return nullptr;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || ancestor == dealloc ||
          dealloc->isBeforeInBlock(ancestor))
        return nullptr;
      if (!last || last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

struct FreeAfterLastUsePass
    : PassWrapper<FreeAfterLastUsePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FreeAfterLastUsePass)
  StringRef getArgument() const override {
    return "tessel-free-after-last-use";
  }
  StringRef getDescription() const override {
    return "Move each memref.dealloc of a memref.alloc to just after the last "
           "use of the buffer or its views in the same block (after "
           "buffer-deallocation-pipeline, which frees at the block's end)";
  }
  void runOnOperation() override {
    BufferViewFlowAnalysis aliases(getOperation());
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    // Find every place first: moving invalidates the block's op order.
    SmallVector<std::pair<memref::DeallocOp, Operation *>> moves;
    for (memref::DeallocOp dealloc : deallocs)
      if (Operation *last = lastUse(dealloc, aliases))
        moves.emplace_back(dealloc, last);
    for (auto [dealloc, last] : moves)
      dealloc->moveAfter(last);
  }
};

} // namespace

std::unique_ptr<Pass> mlir::tessel::createFreeAfterLastUsePass() {
  return std::make_unique<FreeAfterLastUsePass>();
}
