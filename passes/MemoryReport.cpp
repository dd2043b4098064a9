//===- MemoryReport.cpp - --tessel-memory-report --------------------------===//
//
// A liveness estimate, not an allocator: every value an op computes is live
// from its op to its last use in program order (results nobody uses die at
// once); arguments live throughout. It is what the runtime's buffers would
// hold with perfect reuse and no fusion, and it is enough to compare
// strategies, recomputation policies and ZeRO stages.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELMEMORYREPORTPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

int64_t bytesOf(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor)
    return 0;
  int64_t bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
}

struct Estimate {
  int64_t arguments = 0, peak = 0, keptForBackward = -1;
  std::string peakAt;
};

Estimate estimate(func::FuncOp func) {
  Estimate e;
  Block &block = func.getBody().front();
  for (BlockArgument arg : block.getArguments())
    e.arguments += bytesOf(arg.getType());
  // Position of each op, and where each computed value dies.
  llvm::DenseMap<Operation *, unsigned> position;
  SmallVector<Operation *> ops;
  for (Operation &op : block) {
    position[&op] = ops.size();
    ops.push_back(&op);
  }
  SmallVector<int64_t> freed(ops.size() + 1, 0);
  // The forward ends before the first backward op: what was computed up to
  // there, ops without a role included (those partitioning makes for a
  // forward op, such as a vocabulary-parallel cross-entropy's), is the
  // forward's. Without backward ops, after the last forward op.
  Operation *forwardEnd = nullptr, *firstBackward = nullptr;
  for (Operation *op : ops) {
    auto role = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
    if (role && role.getValue() == "forward")
      forwardEnd = op;
    if (role && !firstBackward &&
        llvm::is_contained({"backward_input", "backward_weight", "recompute"},
                           role.getValue()))
      firstBackward = op;
    for (Value r : op->getResults()) {
      unsigned last = position[op];
      for (Operation *user : r.getUsers())
        last = std::max(last, position[block.findAncestorOpInBlock(*user)]);
      freed[last] += bytesOf(r.getType());
    }
  }
  if (firstBackward && forwardEnd && position[firstBackward] > 0)
    forwardEnd = ops[position[firstBackward] - 1];
  int64_t live = 0;
  for (auto [i, op] : llvm::enumerate(ops)) {
    for (Value r : op->getResults())
      live += bytesOf(r.getType());
    if (live > e.peak) {
      e.peak = live;
      auto role = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
      e.peakAt = llvm::formatv("op {0} ({1}{2})", i, op->getName(),
                               role ? ", " + role.str() : std::string())
                     .str();
    }
    live -= freed[i];
    if (op == forwardEnd)
      e.keptForBackward = live;
  }
  return e;
}

std::string human(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30))
    return llvm::formatv("{0:f2} GiB", bytes / double(int64_t(1) << 30));
  if (bytes >= (1 << 20))
    return llvm::formatv("{0:f2} MiB", bytes / double(1 << 20));
  if (bytes >= (1 << 10))
    return llvm::formatv("{0:f2} KiB", bytes / double(1 << 10));
  return llvm::formatv("{0} B", bytes);
}

struct TesselMemoryReportPass
    : tessel::impl::TesselMemoryReportPassBase<TesselMemoryReportPass> {
  using TesselMemoryReportPassBase::TesselMemoryReportPassBase;

  void runOnOperation() override {
    if (format != "text" && format != "json") {
      getOperation().emitError() << "format must be text or json";
      return signalPassFailure();
    }
    llvm::json::Array functions;
    bool found = false;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || (!funcName.empty() && func.getName() != funcName))
        continue;
      found = true;
      Estimate e = estimate(func);
      bool spmd = func->hasAttr(TesselDialect::kSpmdAttrName);
      if (format == "json") {
        llvm::json::Object o{{"function", func.getName()},
                             {"per_device", spmd},
                             {"argument_bytes", e.arguments},
                             {"peak_bytes", e.peak},
                             {"peak_at", e.peakAt}};
        if (e.keptForBackward >= 0)
          o["kept_for_backward_bytes"] = e.keptForBackward;
        functions.push_back(std::move(o));
        continue;
      }
      llvm::outs() << "Memory of @" << func.getName()
                   << (spmd ? " per device" : "") << ":\n"
                   << "  arguments:         " << e.arguments << " bytes ("
                   << human(e.arguments) << ")\n"
                   << "  peak of computed:  " << e.peak << " bytes ("
                   << human(e.peak) << ") at " << e.peakAt << "\n";
      if (e.keptForBackward >= 0)
        llvm::outs() << "  kept for backward: " << e.keptForBackward
                     << " bytes (" << human(e.keptForBackward) << ")\n";
    }
    if (!found && !funcName.empty()) {
      getOperation().emitError()
          << "no function @" << funcName << " to report on";
      return signalPassFailure();
    }
    if (format == "json")
      llvm::outs() << llvm::formatv("{0:2}",
                                    llvm::json::Value(std::move(functions)))
                   << "\n";
  }
};

} // namespace
