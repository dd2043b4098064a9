//===- ProgramCosts.cpp - what a program costs, read off its ops ----------===//

#include "tessel/planning/ProgramCosts.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tessel;

int64_t planning::tensorBytes(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  int64_t bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
}

namespace {

/// Where the forward of a training step ends: before its first backward op
/// (ops without a role made for a forward op by partitioning count as
/// forward), else after its last forward op; null without roles.
Operation *forwardEnd(ArrayRef<Operation *> ops) {
  Operation *lastForward = nullptr;
  int64_t firstBackward = -1;
  for (auto [i, op] : llvm::enumerate(ops)) {
    auto role = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
    if (!role)
      continue;
    if (role.getValue() == "forward")
      lastForward = op;
    if (firstBackward < 0 &&
        llvm::is_contained({"backward_input", "backward_weight", "recompute"},
                           role.getValue()))
      firstBackward = int64_t(i);
  }
  if (lastForward && firstBackward > 0)
    return ops[firstBackward - 1];
  return lastForward;
}

} // namespace

planning::MemoryEstimate planning::estimateMemory(func::FuncOp func) {
  MemoryEstimate e;
  Block &block = func.getBody().front();
  for (BlockArgument arg : block.getArguments())
    e.arguments += tensorBytes(arg.getType());
  llvm::DenseMap<Operation *, unsigned> position;
  SmallVector<Operation *> ops;
  for (Operation &op : block) {
    position[&op] = ops.size();
    ops.push_back(&op);
  }
  // Bytes freed after each op: its operands' last use.
  SmallVector<int64_t> freed(ops.size() + 1, 0);
  for (Operation *op : ops)
    for (Value r : op->getResults()) {
      unsigned last = position[op];
      for (Operation *user : r.getUsers())
        last = std::max(last, position[block.findAncestorOpInBlock(*user)]);
      freed[last] += tensorBytes(r.getType());
    }
  Operation *end = forwardEnd(ops);
  int64_t live = 0;
  bool updating = false;
  for (auto [i, op] : llvm::enumerate(ops)) {
    for (Value r : op->getResults())
      live += tensorBytes(r.getType());
    auto role = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
    updating |= role && role.getValue() == "optimizer";
    if (!updating)
      e.peakBeforeUpdate = std::max(e.peakBeforeUpdate, live);
    if (live > e.peak) {
      e.peak = live;
      e.peakAt = llvm::formatv("op {0} ({1}{2})", i, op->getName(),
                               role ? ", " + role.str() : std::string())
                     .str();
    }
    live -= freed[i];
    if (op == end)
      e.keptForBackward = live;
  }
  return e;
}

namespace {

/// Calls `visit` on every op of `func` and of the functions it calls, with
/// how many times it runs per call of `func`.
void walkWithCalls(func::FuncOp func,
                   function_ref<void(Operation *, double)> visit,
                   double times = 1, int depth = 0) {
  if (depth > 16)
    return;
  func.walk([&](Operation *op) {
    visit(op, times);
    auto call = dyn_cast<func::CallOp>(op);
    if (!call)
      return;
    if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr()))
      if (!callee.isExternal())
        walkWithCalls(callee, visit, times, depth + 1);
  });
}

} // namespace

double planning::matmulFlops(func::FuncOp func,
                             function_ref<bool(Operation *)> filter) {
  double flops = 0;
  walkWithCalls(func, [&](Operation *op, double times) {
    auto dot = dyn_cast<DotGeneralOp>(op);
    if (!dot || (filter && !filter(op)))
      return;
    double contracted = 1;
    for (int64_t d : dot.getLhsContractingDims())
      contracted *= double(dot.getLhs().getType().getDimSize(d));
    flops += times * 2 * double(dot.getType().getNumElements()) * contracted;
  });
  return flops;
}

std::map<std::string, double> planning::sentBytesByAxes(func::FuncOp func) {
  std::map<std::string, double> sent;
  walkWithCalls(func, [&](Operation *op, double times) {
    auto collective = dyn_cast<CollectiveOpInterface>(op);
    if (!collective)
      return;
    MeshOp mesh = lookupMesh(op, collective.getMeshAttr());
    int64_t group = 1;
    SmallVector<StringRef> names;
    for (Attribute axis : collective.getAxes()) {
      StringRef name = cast<StringAttr>(axis).getValue();
      names.push_back(name);
      if (mesh)
        group *= mesh.getAxisSize(name);
    }
    double bytes = collectiveSentBytes(collective.getTraffic(), group,
                                       collective.getTrafficBytes());
    if (bytes > 0)
      sent[llvm::join(names, ",")] += times * bytes;
  });
  return sent;
}
