//===- SplitCollectives.cpp - collectives in flight while the program computes //
//
// After the target's lowering a collective is a call of a wrapper around
// tessel_rt_collective_<type>, which returns when the collective is done.
// Where the program has compute to do before it needs the result (a
// data-parallel gradient bucket: started as soon as the backward has made
// it, read by the optimizer at the end), the call becomes a start and a wait:
//
//   %s = call @start(%in)        // tessel_rt_collective_start_<type>
//   ... compute ...
//   %r = call @wait(%in, %s)     // tessel_rt_collective_wait_<type>
//
// The wait reads %in, so bufferization keeps the input unchanged and alive
// until then; it returns %s as it is, so %r is the result's buffer and every
// user of the result depends on the wait. The wait goes before the first op
// that reads the result or communicates: one collective is in flight at a
// time, so collectives complete in the order they started on every rank (on
// a GPU they share one NCCL stream anyway) and at most one input is kept
// alive longer than before.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::lowering;

namespace {

constexpr llvm::StringLiteral kCollective = "tessel_rt_collective_";

/// The runtime function the wrapper `call` calls ("" when the callee is
/// not a runtime call wrapper).
StringRef runtimeCallee(func::CallOp call, SymbolTable &symbols) {
  auto wrapper = symbols.lookup<func::FuncOp>(call.getCallee());
  auto key = wrapper ? wrapper->getAttrOfType<ArrayAttr>(kRuntimeCallKey)
                     : ArrayAttr();
  return key ? cast<StringAttr>(key[0]).getValue() : StringRef();
}

bool communicates(StringRef callee) {
  return callee.starts_with("tessel_rt_collective") ||
         callee.starts_with("tessel_rt_send") ||
         callee.starts_with("tessel_rt_recv");
}

/// tessel_rt_collective_<type>, not yet split.
bool isBlockingCollective(StringRef callee) {
  return callee.consume_front(kCollective) && !callee.starts_with("start_") &&
         !callee.starts_with("wait_");
}

/// The first op of `v`'s block that uses it (or holds a use), else the
/// terminator.
Operation *firstUser(Value v) {
  Block *block = v.getParentBlock();
  Operation *first = block->getTerminator();
  for (Operation *user : v.getUsers()) {
    Operation *top = block->findAncestorOpInBlock(*user);
    if (top && top->isBeforeInBlock(first))
      first = top;
  }
  return first;
}

/// Moves the views of `v` (slices, reshapes: a bucket's members cut out of
/// its all-reduce) down to just before their first users, so that the wait
/// can go after the compute in between.
void sinkViews(Value v) {
  for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
    if (!isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp>(user) ||
        user->getBlock() != v.getParentBlock())
      continue;
    sinkViews(user->getResult(0));
    user->moveBefore(firstUser(user->getResult(0)));
  }
}

/// Where the wait of `call` goes: the first op of its block that uses the
/// result (itself or inside its regions), communicates, marks a schedule
/// action (pipeline stages are cut into pieces there before bufferization,
/// OutlineSegments.cpp) or ends the block.
/// Null where no compute (a call or a linalg op) lies before it.
Operation *waitPoint(func::CallOp call, SymbolTable &symbols) {
  Value result = call.getResult(0);
  bool work = false;
  for (Operation *next = call->getNextNode(); next;
       next = next->getNextNode()) {
    bool stop = next->hasTrait<OpTrait::IsTerminator>();
    next->walk([&](Operation *inner) {
      auto innerCall = dyn_cast<func::CallOp>(inner);
      if (llvm::is_contained(inner->getOperands(), result) ||
          (innerCall && (innerCall.getCallee() == kRegionFunction ||
                         communicates(runtimeCallee(innerCall, symbols)))))
        stop = true;
    });
    if (stop)
      return work ? next : nullptr;
    work |= isa<func::CallOp, linalg::LinalgOp>(next) ||
            next->getNumRegions() > 0;
  }
  return nullptr;
}

} // namespace

void mlir::tessel::splitCollectives(ModuleOp module) {
  SymbolTable symbols(module);
  SmallVector<func::CallOp> collectives;
  module.walk([&](func::CallOp call) {
    if (call.getNumResults() == 1 &&
        isBlockingCollective(runtimeCallee(call, symbols)))
      collectives.push_back(call);
  });
  SmallVector<std::pair<func::CallOp, Operation *>> splits;
  for (func::CallOp call : collectives) {
    sinkViews(call.getResult(0));
    if (Operation *at = waitPoint(call, symbols))
      splits.push_back({call, at});
  }
  for (auto [call, at] : splits) {
    auto wrapper = symbols.lookup<func::FuncOp>(call.getCallee());
    auto key = wrapper->getAttrOfType<ArrayAttr>(kRuntimeCallKey);
    StringRef suffix =
        cast<StringAttr>(key[0]).getValue().drop_front(kCollective.size());
    SmallVector<DenseElementsAttr> constants;
    for (Attribute c : cast<ArrayAttr>(key[2]))
      constants.push_back(cast<DenseElementsAttr>(c));
    Value in = call.getOperand(0);
    auto type = cast<RankedTensorType>(call.getResult(0).getType());
    OpBuilder b(call);
    Value started = callRuntime(b, call, (kCollective + "start_" + suffix).str(),
                                {in}, type, constants, {});
    b.setInsertionPoint(at);
    Value done = callRuntime(b, call, (kCollective + "wait_" + suffix).str(),
                             {in, started}, type, constants, {},
                             /*resultIsLastInput=*/true);
    call.getResult(0).replaceAllUsesWith(done);
    call.erase();
    if (SymbolTable::symbolKnownUseEmpty(wrapper, module))
      symbols.erase(wrapper);
  }
}

namespace {

/// After one-shot bufferization each call converts a strided operand into a
/// contiguous copy of its own, so a split collective's start and wait may
/// read different buffers; the start's, which the collective reads until
/// the wait, would be freed after the start. The wait is given the start's
/// buffer (nothing writes it in between: bufferization kept the value the
/// wait reads unchanged), and its own copy, now unused, goes.
struct ShareCollectiveInputsPass
    : PassWrapper<ShareCollectiveInputsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ShareCollectiveInputsPass)
  StringRef getArgument() const override {
    return "tessel-share-collective-inputs";
  }
  StringRef getDescription() const override {
    return "Each split collective's wait reads the buffer its start read";
  }
  void runOnOperation() override {
    getOperation().walk([](func::CallOp wait) {
      if (!wait.getCallee().starts_with(kCollectiveWaitWrapper) ||
          wait.getNumOperands() != 2)
        return;
      auto start = wait.getOperand(1).getDefiningOp<func::CallOp>();
      if (!start || !start.getCallee().starts_with(kCollectiveStartWrapper))
        return;
      Value mine = wait.getOperand(0);
      if (mine == start.getOperand(0))
        return;
      wait->setOperand(0, start.getOperand(0));
      auto copy = mine.getDefiningOp<memref::AllocOp>();
      if (!copy || !llvm::all_of(copy->getUsers(), [&](Operation *u) {
            auto c = dyn_cast<memref::CopyOp>(u);
            return c && c.getTarget() == mine;
          }))
        return;
      for (Operation *u : llvm::make_early_inc_range(copy->getUsers()))
        u->erase();
      copy.erase();
    });
  }
};

} // namespace

std::unique_ptr<Pass> mlir::tessel::createShareCollectiveInputsPass() {
  return std::make_unique<ShareCollectiveInputsPass>();
}
