//===- ProgramCosts.cpp - what a program costs, read off its ops ----------===//

#include "tessel/planning/ProgramCosts.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
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

bool planning::isDataArgument(func::FuncOp func, BlockArgument arg) {
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (type && !isa<FloatType>(type.getElementType()))
    return true;
  auto axes = func.getArgAttrOfType<ArrayAttr>(
      arg.getArgNumber(), TesselDialect::kLogicalAxesAttrName);
  return axes && llvm::any_of(axes, [](Attribute a) {
           auto s = dyn_cast<StringAttr>(a);
           return s && s.getValue() == "batch";
         });
}

namespace {

/// Bytes of the values live after op `at` that no data flows into.
int64_t keptWithoutData(func::FuncOp func, ArrayRef<Operation *> ops,
                        size_t at,
                        const llvm::DenseMap<Operation *, unsigned> &position);

/// The values of `ops` computed (transitively) from data.
llvm::DenseSet<Value> dataDependent(func::FuncOp func,
                                    ArrayRef<Operation *> ops) {
  llvm::DenseSet<Value> out;
  for (BlockArgument arg : func.getArguments())
    if (planning::isDataArgument(func, arg))
      out.insert(arg);
  for (Operation *op : ops) {
    bool depends = false;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        depends |= out.contains(v);
    });
    if (depends)
      for (Value r : op->getResults())
        out.insert(r);
  }
  return out;
}

int64_t keptWithoutData(func::FuncOp func, ArrayRef<Operation *> ops,
                        size_t at,
                        const llvm::DenseMap<Operation *, unsigned> &position) {
  llvm::DenseSet<Value> fromData = dataDependent(func, ops.take_front(at + 1));
  Block &block = func.getBody().front();
  int64_t bytes = 0;
  for (Operation *op : ops.take_front(at + 1))
    for (Value r : op->getResults()) {
      if (fromData.contains(r))
        continue;
      bool usedLater = llvm::any_of(r.getUsers(), [&](Operation *user) {
        return position.lookup(block.findAncestorOpInBlock(*user)) > at;
      });
      if (usedLater)
        bytes += planning::tensorBytes(r.getType());
    }
  return bytes;
}

} // namespace

namespace {

/// The most bytes `call`'s callee computes and holds at once (its
/// temporaries and results; its arguments are the caller's values), 0 for
/// an external callee; `depth` bounds recursion.
int64_t calleePeak(func::CallOp call, int depth);

} // namespace

planning::MemoryEstimate planning::estimateMemory(func::FuncOp func) {
  return estimateMemory(func, 0);
}

planning::MemoryEstimate planning::estimateMemory(func::FuncOp func,
                                                  int depth) {
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
    // A call holds its callee's peak on top of what is live around it
    // (a pipeline stage's schedule calls its forward and backward).
    int64_t during = live;
    if (auto call = dyn_cast<func::CallOp>(op))
      during += calleePeak(call, depth);
    for (Value r : op->getResults())
      live += tensorBytes(r.getType());
    during = std::max(during, live);
    auto role = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
    updating |= role && role.getValue() == "optimizer";
    if (!updating)
      e.peakBeforeUpdate = std::max(e.peakBeforeUpdate, during);
    if (during > e.peak) {
      e.peak = during;
      e.peakAt = llvm::formatv("op {0} ({1}{2})", i, op->getName(),
                               role ? ", " + role.str() : std::string())
                     .str();
    }
    live -= freed[i];
    if (op == end) {
      e.keptForBackward = live;
      e.keptWithoutData = keptWithoutData(func, ops, i, position);
    }
  }
  return e;
}

namespace {

int64_t calleePeak(func::CallOp call, int depth) {
  if (depth > 16)
    return 0;
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal())
    return 0;
  return planning::estimateMemory(callee, depth + 1).peak;
}

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

namespace {

/// Element-wise ops and broadcasts: the CPU and CUDA pipelines fuse chains
/// of them into one kernel (--tessel-fuse-elementwise).
bool fusible(Operation *op) {
  return op && (op->hasTrait<OpTrait::Elementwise>() ||
                isa<BroadcastInDimOp>(op));
}

} // namespace

double planning::memoryTrafficBytes(func::FuncOp func,
                                    function_ref<bool(Operation *)> filter) {
  double bytes = 0;
  walkWithCalls(func, [&](Operation *op, double times) {
    if (!isa_and_nonnull<TesselDialect>(op->getDialect()) ||
        isa<DotGeneralOp, ConstantOp, CollectiveOpInterface>(op) ||
        (filter && !filter(op)))
      return;
    bool fused = fusible(op);
    double moved = 0;
    // Inside a fused chain a value never reaches memory: it is read where
    // the chain starts and written where something else uses it.
    for (Value v : op->getOperands())
      if (!fused || !fusible(v.getDefiningOp()))
        moved += double(tensorBytes(v.getType()));
    for (Value v : op->getResults())
      if (!fused || v.use_empty() ||
          llvm::any_of(v.getUsers(),
                       [](Operation *user) { return !fusible(user); }))
        moved += double(tensorBytes(v.getType()));
    bytes += times * moved;
  });
  return bytes;
}

namespace {

/// Calls `visit` with every collective of `func` (calls included), its
/// axes joined with ",", the devices of its group and how often it runs.
void walkCollectives(
    func::FuncOp func,
    function_ref<void(CollectiveOpInterface, StringRef, int64_t, double)>
        visit) {
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
    visit(collective, llvm::join(names, ","), group, times);
  });
}

} // namespace

std::map<std::string, double> planning::sentBytesByAxes(func::FuncOp func) {
  std::map<std::string, double> sent;
  walkCollectives(func, [&](CollectiveOpInterface collective, StringRef axes,
                            int64_t group, double times) {
    double bytes = collectiveSentBytes(collective.getTraffic(), group,
                                       collective.getTrafficBytes());
    if (bytes > 0)
      sent[axes.str()] += times * bytes;
  });
  return sent;
}

std::map<std::string, double>
planning::collectiveCountsByAxes(func::FuncOp func) {
  std::map<std::string, double> count;
  walkCollectives(func, [&](CollectiveOpInterface, StringRef axes, int64_t,
                            double times) { count[axes.str()] += times; });
  return count;
}
