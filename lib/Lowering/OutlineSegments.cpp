//===- OutlineSegments.cpp - long host functions in pieces ----------------===//
//
// One-shot bufferization and the deallocation simplification cost more than
// linearly in the ops of one function, and a training step of many layers is
// one function of tens of thousands of ops (96 layers took over a minute in
// those two passes). Before bufferization, a function with more than
// `max-ops` top-level ops is cut into runs of `max-ops` ops, each moved into
// a private function of the values it reads from before (arguments) to the
// values read after it (results), and called in its place: the passes then
// see many small functions, and the program computes the same, in the same
// order. Constants are cloned into each piece that reads them.
//
// The calling function then holds, after bufferization and out-parameters,
// one buffer for every value that crosses pieces (thousands: the forward's
// activations that the backward reads), and only calls and copies. The
// ownership-based deallocation's simplification compares the buffers of a
// block pairwise (20 s for 7,700 buffers), so such buffers are hidden from
// it as tagged allocas (`--tessel-hide-caller-buffers`) and come back as
// allocations (`--tessel-free-caller-buffers`): freed by the piece that
// reads them last (called once, it owns the buffer from then on), else at
// the end of the caller's block; FreeAfterLastUse then moves each free to
// just after its last use. A call reads and writes its operands before
// returning, so that is exact.
//
//===----------------------------------------------------------------------===//

#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

/// Marks a function whose body became calls of pieces.
constexpr llvm::StringLiteral kCallsPieces = "tessel_calls_pieces";
/// Marks an alloca that stands for a heap buffer of such a function.
constexpr llvm::StringLiteral kHiddenBuffer = "tessel_hidden_buffer";

struct OutlineSegmentsPass
    : PassWrapper<OutlineSegmentsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineSegmentsPass)
  OutlineSegmentsPass() = default;
  OutlineSegmentsPass(const OutlineSegmentsPass &other) : PassWrapper(other) {}
  StringRef getArgument() const override { return "tessel-outline-segments"; }
  StringRef getDescription() const override {
    return "Cuts functions of many ops into calls of private functions of "
           "max-ops ops each (before bufferization, whose cost grows faster "
           "than the ops of one function)";
  }
  Option<unsigned> maxOps{*this, "max-ops",
                          llvm::cl::desc("Top-level ops per piece (0: none)"),
                          llvm::cl::init(400)};

  void runOnOperation() override {
    if (maxOps == 0)
      return;
    SmallVector<func::FuncOp> funcs;
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (!f.isExternal() && f.getBody().hasOneBlock() &&
          f.getBody().front().getOperations().size() > maxOps + 1)
        funcs.push_back(f);
    for (func::FuncOp f : funcs) {
      outline(f);
      f->setAttr(kCallsPieces, UnitAttr::get(f.getContext()));
    }
  }

  static bool isRegionMark(Operation *op) {
    auto call = dyn_cast<func::CallOp>(op);
    return call && call.getCallee() == tessel::kRegionFunction;
  }

  /// Where the pieces of `ops` start: every max-ops ops (or just after, past
  /// a collective in flight), or, in a pipeline
  /// stage's function (its schedule actions begin at tessel_rt_region
  /// marks), at every action. A piece's outputs are allocated before its
  /// call and its inputs freed after it, so a piece of several actions
  /// would keep one microbatch's activations from its first action to its
  /// last; with one action per piece, activations live as long as the
  /// schedule keeps them, whatever the microbatch count.
  SmallVector<size_t> pieceStarts(ArrayRef<Operation *> ops) {
    SmallVector<size_t> starts = {0};
    if (!llvm::any_of(ops, isRegionMark)) {
      // Never between a split collective's start and its wait: the start's
      // input must stay alive until then (ShareCollectiveInputsPass).
      llvm::SmallPtrSet<Value, 4> inFlight;
      size_t next = maxOps;
      for (size_t i = 0; i < ops.size(); ++i) {
        if (i >= next && inFlight.empty()) {
          starts.push_back(i);
          next = i + maxOps;
        }
        auto call = dyn_cast<func::CallOp>(ops[i]);
        if (call && call.getCallee().starts_with(tessel::kCollectiveStartWrapper))
          inFlight.insert(call.getResult(0));
        if (call && call.getCallee().starts_with(tessel::kCollectiveWaitWrapper))
          inFlight.erase(call.getOperand(1));
      }
      return starts;
    }
    for (size_t i = 1; i < ops.size(); ++i)
      if (isRegionMark(ops[i]))
        starts.push_back(i);
    return starts;
  }

  /// Cuts `f`'s body into pieces, last to first (the earlier ops stay
  /// where they are while a later piece moves).
  void outline(func::FuncOp f) {
    Block &body = f.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    SmallVector<size_t> starts = pieceStarts(ops);
    starts.push_back(ops.size());
    for (int64_t k = int64_t(starts.size()) - 2; k >= 0; --k)
      outlinePiece(f, ArrayRef<Operation *>(ops).slice(
                          starts[k], starts[k + 1] - starts[k]),
                   k);
  }

  static bool isCheapConstant(Operation *op) {
    return op->getNumRegions() == 0 && op->getNumOperands() == 0 &&
           op->getNumResults() == 1 && matchPattern(op, m_Constant());
  }

  void outlinePiece(func::FuncOp f, ArrayRef<Operation *> piece, int64_t k) {
    llvm::SmallPtrSet<Operation *, 32> inside(piece.begin(), piece.end());
    auto isInside = [&](Operation *op) {
      for (; op; op = op->getParentOp())
        if (inside.contains(op))
          return true;
      return false;
    };
    // Values read from before the piece; constants are cloned instead.
    llvm::SetVector<Value> ins;
    SmallVector<Operation *> constants;
    for (Operation *op : piece)
      op->walk([&](Operation *nested) {
        for (Value v : nested->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (def ? isInside(def) : isInside(v.getParentBlock()->getParentOp()))
            continue;
          if (def && isCheapConstant(def)) {
            if (!llvm::is_contained(constants, def))
              constants.push_back(def);
            continue;
          }
          ins.insert(v);
        }
      });
    // Values read after it.
    SmallVector<Value> outs;
    for (Operation *op : piece)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(),
                         [&](Operation *u) { return !isInside(u); }))
          outs.push_back(r);
    OpBuilder b(f);
    b.setInsertionPointAfter(f);
    SmallVector<Type> inTypes, outTypes;
    for (Value v : ins)
      inTypes.push_back(v.getType());
    for (Value v : outs)
      outTypes.push_back(v.getType());
    auto callee = func::FuncOp::create(
        b, f.getLoc(), (f.getSymName() + "_piece" + Twine(k)).str(),
        b.getFunctionType(inTypes, outTypes));
    callee.setPrivate();
    // Buffers cross as bare pointers (static shapes, identity layouts at
    // function boundaries): -O0 code would otherwise spill every field of
    // every memref descriptor at each call.
    callee->setAttr("llvm.bareptr", b.getBoolAttr(true));
    Block *entry = callee.addEntryBlock();
    // The call takes the piece's place; the piece moves into the callee.
    b.setInsertionPoint(piece.front());
    auto call = func::CallOp::create(b, f.getLoc(), callee, ins.getArrayRef());
    b.setInsertionPointToStart(entry);
    IRMapping cloned;
    for (Operation *c : constants)
      cloned.map(c->getResult(0), b.clone(*c)->getResult(0));
    for (Operation *op : piece)
      op->moveBefore(entry, entry->end());
    for (auto [in, arg] : llvm::zip(ins, entry->getArguments()))
      Value(in).replaceUsesWithIf(arg, [&](OpOperand &use) {
        return use.getOwner()->getParentOfType<func::FuncOp>() == callee;
      });
    for (auto [from, to] : cloned.getValueMap())
      Value(from).replaceUsesWithIf(to, [&](OpOperand &use) {
        return use.getOwner()->getParentOfType<func::FuncOp>() == callee;
      });
    for (auto [out, result] : llvm::zip(outs, call.getResults()))
      Value(out).replaceUsesWithIf(result, [&](OpOperand &use) {
        return use.getOwner()->getParentOfType<func::FuncOp>() != callee;
      });
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, f.getLoc(), outs);
  }
};

/// Before the deallocation pipeline: in a function that calls pieces, each
/// buffer only calls and copies use becomes a tagged alloca.
struct HideCallerBuffersPass
    : PassWrapper<HideCallerBuffersPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HideCallerBuffersPass)
  StringRef getArgument() const override {
    return "tessel-hide-caller-buffers";
  }
  StringRef getDescription() const override {
    return "In functions cut into pieces, buffers used only by calls and "
           "copies become tagged allocas, which the deallocation pipeline "
           "leaves alone (see tessel-free-caller-buffers)";
  }
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (!f->hasAttr(kCallsPieces) || !f.getBody().hasOneBlock())
      return;
    SmallVector<memref::AllocOp> allocs;
    for (auto alloc : f.getBody().front().getOps<memref::AllocOp>())
      if (alloc.getType().hasStaticShape() &&
          llvm::all_of(alloc->getUsers(), [](Operation *user) {
            return isa<func::CallOp, memref::CopyOp>(user);
          }))
        allocs.push_back(alloc);
    for (memref::AllocOp alloc : allocs) {
      OpBuilder b(alloc);
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(),
                                             alloc.getType(), ValueRange{},
                                             alloc.getAlignmentAttr());
      alloca->setAttr(kHiddenBuffer, b.getUnitAttr());
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
  }
};

/// After the deallocation pipeline: tagged allocas are heap buffers again.
/// A buffer whose last use is a piece (called once) is freed by that piece,
/// after its own last use there; any other is freed at the end of the
/// caller's block. FreeAfterLastUse then moves each free up to just after
/// the last use.
struct FreeCallerBuffersPass
    : PassWrapper<FreeCallerBuffersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FreeCallerBuffersPass)
  StringRef getArgument() const override {
    return "tessel-free-caller-buffers";
  }
  StringRef getDescription() const override {
    return "Buffers hidden by tessel-hide-caller-buffers become allocations "
           "again, freed by the piece that reads them last or at the end of "
           "their block";
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<StringAttr, int> calls;
    module.walk([&](func::CallOp call) {
      ++calls[call.getCalleeAttr().getAttr()];
    });
    for (auto f : module.getOps<func::FuncOp>()) {
      f->removeAttr(kCallsPieces);
      SmallVector<memref::AllocaOp> hidden;
      f.walk([&](memref::AllocaOp alloca) {
        if (alloca->hasAttr(kHiddenBuffer))
          hidden.push_back(alloca);
      });
      for (memref::AllocaOp alloca : hidden)
        restore(module, alloca, calls);
    }
  }

  /// The piece `call` calls, when it may free its argument `operand`: a
  /// private function with a body, called only here, that takes the buffer
  /// once.
  static func::FuncOp freeingPiece(ModuleOp module, func::CallOp call,
                                   Value operand,
                                   const llvm::DenseMap<StringAttr, int> &calls) {
    auto piece = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
    if (!piece || piece.isExternal() || !piece.isPrivate() ||
        !piece->hasAttr("llvm.bareptr") || !piece.getBody().hasOneBlock() ||
        calls.lookup(call.getCalleeAttr().getAttr()) != 1 ||
        llvm::count(call.getOperands(), operand) != 1)
      return {};
    return piece;
  }

  static void restore(ModuleOp module, memref::AllocaOp alloca,
                      const llvm::DenseMap<StringAttr, int> &calls) {
    OpBuilder b(alloca);
    auto alloc = memref::AllocOp::create(b, alloca.getLoc(), alloca.getType(),
                                         ValueRange{},
                                         alloca.getAlignmentAttr());
    alloca.replaceAllUsesWith(alloc.getResult());
    alloca.erase();
    Operation *last = nullptr;
    for (Operation *user : alloc->getUsers())
      if (!last || last->isBeforeInBlock(user))
        last = user;
    auto call = dyn_cast_or_null<func::CallOp>(last);
    func::FuncOp piece =
        call ? freeingPiece(module, call, alloc, calls) : func::FuncOp();
    if (!piece) {
      b.setInsertionPoint(alloc->getBlock()->getTerminator());
      memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
      return;
    }
    unsigned index = llvm::find(call.getOperands(), alloc.getResult()) -
                     call.getOperands().begin();
    Block &body = piece.getBody().front();
    b.setInsertionPoint(body.getTerminator());
    auto dealloc =
        memref::DeallocOp::create(b, alloc.getLoc(), body.getArgument(index));
    dealloc->setAttr(tessel::kOwnedArgument, b.getUnitAttr());
  }
};

} // namespace

std::unique_ptr<Pass> mlir::tessel::createOutlineSegmentsPass() {
  return std::make_unique<OutlineSegmentsPass>();
}

std::unique_ptr<Pass> mlir::tessel::createHideCallerBuffersPass() {
  return std::make_unique<HideCallerBuffersPass>();
}

std::unique_ptr<Pass> mlir::tessel::createFreeCallerBuffersPass() {
  return std::make_unique<FreeCallerBuffersPass>();
}
