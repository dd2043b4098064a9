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
//===----------------------------------------------------------------------===//

#include "tessel/lowering/Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

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
    for (func::FuncOp f : funcs)
      outline(f);
  }

  /// Cuts `f`'s body into pieces, last to first (the earlier ops stay
  /// where they are while a later piece moves).
  void outline(func::FuncOp f) {
    Block &body = f.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    int64_t pieces = (int64_t(ops.size()) + maxOps - 1) / maxOps;
    for (int64_t k = pieces - 1; k >= 0; --k) {
      auto begin = ops.begin() + k * maxOps;
      auto end = ops.begin() + std::min<size_t>(ops.size(), (k + 1) * maxOps);
      outlinePiece(f, ArrayRef<Operation *>(begin, end), k);
    }
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

} // namespace

std::unique_ptr<Pass> mlir::tessel::createOutlineSegmentsPass() {
  return std::make_unique<OutlineSegmentsPass>();
}
