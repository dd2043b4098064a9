//===- Propagation.cpp - sharding propagation over factor rules -----------===//
//
// State: for every tensor value, per dimension, an ordered list of mesh axes,
// whether it is closed, whether a user set it, and its priority. An op
// propagates by projecting its tensors' dimension shardings onto the factors
// of its rule, choosing per factor the best candidate (compatible candidates
// merge into the longest; conflicts go to the higher priority, then to the
// larger tensor, then to the earlier operand), and projecting back: a
// dimension only ever grows by extension, closed dimensions never change.
//
//===----------------------------------------------------------------------===//

#include "tessel/sharding/Propagation.h"

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/sharding/Projection.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <deque>
#include <set>
#include <limits>

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr int64_t kNoPriority = std::numeric_limits<int64_t>::max();

using Axes = SmallVector<StringAttr, 2>;

/// Where a dimension's sharding came from: the root user annotation and the
/// last hop (the value it was copied from and the op it went through).
struct Origin {
  std::string root; ///< "argument #0 of @f (file:1:2)", ...
  Value from;
  Operation *via = nullptr;
};

struct DimState {
  Axes axes;
  bool closed = false;
  bool user = false;
  /// For ranking: the user's, or inherited from the source; a dimension
  /// without a priority ranks as p0.
  int64_t priority = 0;
  int64_t userPriority = kNoPriority; ///< as annotated (what is printed)
  const Origin *origin = nullptr;
};

struct TensorState {
  FlatSymbolRefAttr mesh;
  SmallVector<DimState, 4> dims;
};

struct Conflict {
  Operation *op;
  int64_t factor;
  std::string kept, dropped, reason;
};

bool isPrefix(ArrayRef<StringAttr> a, ArrayRef<StringAttr> b) {
  return a.size() <= b.size() && a == b.take_front(a.size());
}

class Propagator {
public:
  Propagator(ModuleOp module, const PropagationOptions &options)
      : module(module), options(options) {}

  LogicalResult run();

private:
  LogicalResult seedFunction(func::FuncOp func);
  /// Seeds `v` with a user's sharding; `soft` ones (function results) give
  /// way where they would split two dimensions over one axis.
  LogicalResult seed(Value v, ShardingAttr sharding, Location loc,
                     const std::string &what, bool soft = false);
  LogicalResult checkOp(Operation *op);
  OpShardingRuleAttr ruleOf(Operation *op);
  /// Propagates through `op`; appends the values that changed.
  void propagate(Operation *op, SmallVectorImpl<Value> &changed);
  /// Which ops propagate, and how, in one worklist run (see run()).
  enum class Stage {
    Pointwise,          ///< element-wise ops only, both ways
    BroadcastsBackward, ///< every op; broadcasts only result -> operand
    All,                ///< every op both ways
  };
  bool runWorklist(func::FuncOp func, Stage stage);
  void writeBack(func::FuncOp func);
  void printExplanation(func::FuncOp func);

  TensorState &stateOf(Value v) {
    auto [it, inserted] = states.try_emplace(v);
    if (inserted)
      it->second.dims.resize(cast<RankedTensorType>(v.getType()).getRank());
    return it->second;
  }
  MeshOp meshOp(FlatSymbolRefAttr mesh) {
    return meshes.lookup(mesh.getAttr());
  }
  std::string name(Value v) {
    // Naming values walks the whole module: only for messages.
    if (!asmState)
      asmState = std::make_unique<AsmState>(module);
    std::string s;
    llvm::raw_string_ostream os(s);
    v.printAsOperand(os, *asmState);
    return s;
  }
  const Origin *newOrigin(Origin o) {
    origins.push_back(std::move(o));
    return &origins.back();
  }

  ModuleOp module;
  const PropagationOptions &options;
  std::unique_ptr<AsmState> asmState;
  llvm::DenseMap<Attribute, MeshOp> meshes;
  llvm::DenseMap<Value, TensorState> states;
  llvm::DenseMap<Operation *, OpShardingRuleAttr> rules;
  std::deque<Origin> origins;
  std::vector<Conflict> conflicts;
  std::set<std::string> conflictKeys;
  int64_t phase = 0;
  Stage stage = Stage::All;
};

LogicalResult Propagator::seed(Value v, ShardingAttr sharding, Location loc,
                               const std::string &what, bool soft) {
  TensorState &t = stateOf(v);
  if (t.mesh && t.mesh != sharding.getMesh())
    return emitError(loc) << what << " puts " << name(v) << " on mesh "
                          << sharding.getMesh() << " but it is already on "
                          << t.mesh;
  // The merged axes of every dimension, checked before any is changed.
  SmallVector<Axes> merged;
  for (auto [d, ds] : llvm::enumerate(sharding.getDims())) {
    const DimState &cur = t.dims[d];
    Axes axes(ds.getAxes().begin(), ds.getAxes().end());
    if (cur.user) {
      bool compatible = isPrefix(cur.axes, axes) || isPrefix(axes, cur.axes);
      bool exact = cur.axes == axes;
      if (!exact && (!compatible || (cur.closed && !isPrefix(axes, cur.axes)) ||
                     (ds.isClosed() && !isPrefix(cur.axes, axes)))) {
        InFlightDiagnostic diag = emitError(loc);
        diag << what << " shards dimension " << d << " of " << name(v) << " as "
             << formatAxes(axes) << (ds.isClosed() ? " (closed)" : "")
             << ", but " << cur.origin->root << " already requires "
             << formatAxes(cur.axes) << (cur.closed ? " (closed)" : "")
             << "; both cannot hold";
        return diag;
      }
      merged.push_back(axes.size() > cur.axes.size() ? axes : cur.axes);
    } else {
      merged.push_back(axes);
    }
  }
  // Two requirements may each be valid and together use an axis twice.
  llvm::SmallDenseMap<StringAttr, int64_t, 8> dimOf;
  for (auto [d, axes] : llvm::enumerate(merged))
    for (StringAttr a : axes) {
      auto [it, fresh] = dimOf.try_emplace(a, d);
      if (fresh)
        continue;
      // A function result's annotation is met by resharding at the return.
      if (soft)
        return success();
      return emitError(loc)
             << what << " and the shardings already required of " << name(v)
             << " together split its dimensions " << it->second << " and "
             << d << " over mesh axis \"" << a.getValue()
             << "\"; a tensor can be split over an axis once";
    }
  t.mesh = sharding.getMesh();
  const Origin *origin = newOrigin({what + " (" + locationString(loc) + ")", {},
                                    nullptr});
  for (auto [d, ds] : llvm::enumerate(sharding.getDims())) {
    DimState &cur = t.dims[d];
    if (cur.user) {
      cur.axes = merged[d];
      cur.closed |= ds.isClosed();
      cur.priority = std::min(cur.priority, ds.getPriority().value_or(0));
      if (ds.getPriority())
        cur.userPriority = std::min(cur.userPriority, *ds.getPriority());
      continue;
    }
    cur.axes = merged[d];
    cur.closed = ds.isClosed();
    cur.user = true;
    cur.priority = ds.getPriority().value_or(0);
    cur.userPriority = ds.getPriority().value_or(kNoPriority);
    cur.origin = origin;
  }
  return success();
}

LogicalResult Propagator::seedFunction(func::FuncOp func) {
  StringRef attrName = TesselDialect::kShardingAttrName;
  std::string fname = ("@" + func.getSymName()).str();
  for (BlockArgument arg : func.getArguments())
    if (auto s = func.getArgAttrOfType<ShardingAttr>(arg.getArgNumber(),
                                                     attrName))
      if (failed(seed(arg, s, arg.getLoc(),
                      "argument #" + std::to_string(arg.getArgNumber()) +
                          " of " + fname)))
        return failure();
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (auto c = dyn_cast<ShardingConstraintOp>(op))
      if (failed(seed(c.getResult(), c.getSharding(), op->getLoc(),
                      "the sharding_constraint")))
        return failure();
    // A sharding already on an op (a user's, or an earlier run's) is where
    // its results start.
    Attribute attr = op->getAttr(attrName);
    if (!attr || op->getNumResults() == 0)
      return success();
    SmallVector<Attribute> perResult;
    if (auto array = dyn_cast<ArrayAttr>(attr))
      llvm::append_range(perResult, array);
    else
      perResult.push_back(attr);
    for (auto [r, s] : llvm::zip(op->getResults(), perResult))
      if (failed(seed(r, cast<ShardingAttr>(s), op->getLoc(),
                      "the sharding of '" +
                          op->getName().getStringRef().str() + "'")))
        return failure();
    return success();
  });
  if (walk.wasInterrupted())
    return failure();
  // Result annotations are requirements on the returned values.
  for (Block &block : func.getBody())
    if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
      for (OpOperand &operand : ret->getOpOperands())
        if (auto s = func.getResultAttrOfType<ShardingAttr>(
                operand.getOperandNumber(), attrName))
          if (failed(seed(operand.get(), s, func.getLoc(),
                          "result #" +
                              std::to_string(operand.getOperandNumber()) +
                              " of " + fname,
                          /*soft=*/true)))
            return failure();
  return success();
}

LogicalResult Propagator::checkOp(Operation *op) {
  if (isa<func::ReturnOp, MeshOp>(op) || op->getNumResults() == 0 ||
      llvm::none_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>))
    return success();
  if (isa<func::CallOp>(op))
    return op->emitError() << "tessel-propagate does not cross function "
                              "calls; inline them first (--inline)";
  if (isa<CollectiveOpInterface>(op))
    return op->emitError() << "'" << op->getName()
                           << "' is a per-device collective; propagation "
                              "runs on global programs, before partitioning";
  if (!isa<ShardingRuleOpInterface>(op))
    return op->emitError() << "'" << op->getName()
                           << "' has no sharding rule, so its results cannot "
                              "be sharded; give it a ShardingRuleOpInterface "
                              "implementation";
  return success();
}

OpShardingRuleAttr Propagator::ruleOf(Operation *op) {
  auto [it, inserted] = rules.try_emplace(op);
  if (inserted)
    if (auto iface = dyn_cast<ShardingRuleOpInterface>(op))
      it->second = iface.getShardingRule();
  return it->second;
}

void Propagator::propagate(Operation *op, SmallVectorImpl<Value> &changed) {
  OpShardingRuleAttr rule = ruleOf(op);
  if (!rule)
    return;
  // The op's tensors, in rule order (operands, then results).
  SmallVector<Value, 8> tensors;
  SmallVector<TensorMappingAttr, 8> mappings;
  for (auto [v, m] : llvm::zip(op->getOperands(), rule.getOperands()))
    tensors.push_back(v), mappings.push_back(m);
  for (auto [v, m] : llvm::zip(op->getResults(), rule.getResults()))
    tensors.push_back(v), mappings.push_back(m);

  FlatSymbolRefAttr mesh;
  for (Value v : tensors)
    if (auto it = states.find(v); it != states.end() && it->second.mesh) {
      if (mesh && mesh != it->second.mesh)
        return; // mixed meshes: reported by the partitioner (a reshard)
      mesh = it->second.mesh;
    }
  if (!mesh || !meshOp(mesh))
    return;

  struct Candidate {
    Axes axes;
    int64_t priority;
    int64_t size;
    unsigned tensor;
    const Origin *origin;
  };
  int64_t numFactors = rule.getNumFactors();
  SmallVector<SmallVector<Candidate, 4>, 4> candidates(numFactors);
  ArrayRef<int64_t> sizes = rule.getFactorSizes();
  // Before the last stage a broadcast only passes its result's sharding
  // back to its operand.
  unsigned numOperands = op->getNumOperands();
  bool backwardOnly =
      stage != Stage::All && isa<BroadcastInDimOp>(op);
  for (auto [t, v] : llvm::enumerate(tensors)) {
    auto it = states.find(v);
    if (it == states.end() || (backwardOnly && t < numOperands))
      continue;
    int64_t elements = cast<RankedTensorType>(v.getType()).getNumElements();
    for (auto [d, dim] : llvm::enumerate(mappings[t].getDims())) {
      const DimState &ds = it->second.dims[d];
      if (ds.axes.empty() || (ds.user && ds.priority > phase))
        continue; // nothing to offer, or a later priority's annotation
      ArrayRef<int64_t> factors = dim.getFactors();
      if (factors.empty())
        continue;
      // Split the dimension's axes over its factors, major to minor.
      SmallVector<int64_t, 2> factorSizes;
      for (int64_t f : factors)
        factorSizes.push_back(sizes[f]);
      SmallVector<AxisList, 2> split =
          splitAxesOverFactors(meshOp(mesh), factorSizes, ds.axes);
      for (auto [k, f] : llvm::enumerate(factors))
        if (!split[k].empty())
          candidates[f].push_back({split[k], ds.priority, elements,
                                   unsigned(t), ds.origin});
    }
  }

  // Choose per factor. (A mesh axis chosen for two factors reaches no
  // tensor twice: projection below keeps each tensor's axes distinct.)
  SmallVector<Axes, 8> chosen(numFactors);
  SmallVector<const Candidate *, 8> winner(numFactors, nullptr);
  for (int64_t f = 0; f < numFactors; ++f) {
    auto &cands = candidates[f];
    if (cands.empty() || rule.isNeedReplication(f))
      continue;
    llvm::stable_sort(cands, [](const Candidate &a, const Candidate &b) {
      if (a.priority != b.priority)
        return a.priority < b.priority;
      if (a.size != b.size)
        return a.size > b.size;
      return a.tensor < b.tensor;
    });
    const Candidate *best = &cands.front();
    Axes axes = best->axes;
    for (const Candidate &c : ArrayRef(cands).drop_front()) {
      if (isPrefix(axes, c.axes)) {
        axes = c.axes;
        continue;
      }
      if (isPrefix(c.axes, axes))
        continue;
      if (options.explain) {
        std::string reason =
            best->priority != c.priority
                ? "higher priority"
                : best->size != c.size ? "larger tensor (" +
                                             std::to_string(best->size) +
                                             " vs " + std::to_string(c.size) +
                                             " elements)"
                                       : "earlier operand";
        auto side = [&](const Candidate &x) {
          unsigned nOperands = op->getNumOperands();
          return formatAxes(x.axes) + " of " +
                 (x.tensor < nOperands
                      ? "operand #" + std::to_string(x.tensor)
                      : "result #" + std::to_string(x.tensor - nOperands)) +
                 (x.priority == 0 ? ""
                                  : " (p" + std::to_string(x.priority) + ")");
        };
        Conflict conflict{op, f, side(*best), side(c), reason};
        std::string key = std::to_string(reinterpret_cast<uintptr_t>(op)) +
                          "/" + conflict.kept + "/" + conflict.dropped;
        if (conflictKeys.insert(key).second) // once per op and pair
          conflicts.push_back(std::move(conflict));
      }
    }
    chosen[f] = std::move(axes);
    winner[f] = best;
  }

  // Project back: extend open dimensions whose sharding is a prefix.
  for (auto [t, v] : llvm::enumerate(tensors)) {
    if (backwardOnly && t >= numOperands)
      continue;
    ArrayRef<DimMappingAttr> dims = mappings[t].getDims();
    TensorState *state = nullptr;
    bool updated = false;
    for (auto [d, dim] : llvm::enumerate(dims)) {
      // A dimension made of several factors is split major to minor
      // (tessel/sharding/Projection.h).
      SmallVector<int64_t, 2> factorSizes;
      SmallVector<AxisList, 2> perFactor;
      const Candidate *source = nullptr;
      for (int64_t f : dim.getFactors()) {
        factorSizes.push_back(sizes[f]);
        perFactor.emplace_back(chosen[f].begin(), chosen[f].end());
        if (!source && !chosen[f].empty())
          source = winner[f];
      }
      Axes want = joinFactorAxes(meshOp(mesh), factorSizes, perFactor);
      if (want.empty())
        continue;
      if (!state)
        state = &stateOf(v);
      DimState &cur = state->dims[d];
      if (cur.closed || want.size() <= cur.axes.size() ||
          !isPrefix(cur.axes, want))
        continue;
      // Never use an axis twice in one tensor.
      SmallVector<StringAttr, 8> elsewhere;
      for (auto [e, other] : llvm::enumerate(state->dims))
        if (e != d)
          elsewhere.append(other.axes.begin(), other.axes.end());
      Axes fit;
      for (StringAttr a : want) {
        if (overlapsAny(a, elsewhere))
          break;
        fit.push_back(a);
      }
      if (fit.size() <= cur.axes.size())
        continue;
      cur.axes = std::move(fit);
      cur.priority = source->priority;
      const Origin *root = source->origin;
      cur.origin = newOrigin({root ? root->root : "propagation",
                              tensors[source->tensor], op});
      state->mesh = mesh;
      updated = true;
    }
    if (updated)
      changed.push_back(v);
  }
}

bool Propagator::runWorklist(func::FuncOp func, Stage runStage) {
  stage = runStage;
  bool pointwiseOnly = stage == Stage::Pointwise;
  // First in, first out, starting in program order: shardings flow forward
  // from the arguments before they flow back from later constraints.
  std::deque<Operation *> worklist;
  llvm::DenseSet<Operation *> queued;
  auto enqueue = [&](Operation *op) {
    if (OpShardingRuleAttr rule = ruleOf(op))
      if ((!pointwiseOnly || rule.isPointwise()) && queued.insert(op).second)
        worklist.push_back(op);
  };
  func.walk([&](Operation *op) { enqueue(op); });
  bool any = false;
  SmallVector<Value, 8> changed;
  while (!worklist.empty()) {
    Operation *op = worklist.front();
    worklist.pop_front();
    queued.erase(op);
    changed.clear();
    propagate(op, changed);
    for (Value v : changed) {
      any = true;
      if (Operation *def = v.getDefiningOp())
        enqueue(def);
      for (Operation *user : v.getUsers())
        enqueue(user);
    }
  }
  return any;
}

ShardingAttr toAttr(MLIRContext *ctx, FlatSymbolRefAttr mesh,
                    const TensorState *state, int64_t rank) {
  SmallVector<DimShardingAttr> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!state) {
      dims.push_back(DimShardingAttr::get(ctx, {}, true, std::nullopt));
      continue;
    }
    const DimState &ds = state->dims[d];
    // The user's priority, or the one a propagated dimension inherited: a
    // second run then ranks conflicts exactly as the first (idempotence).
    std::optional<int64_t> priority;
    if (ds.user && ds.userPriority != kNoPriority)
      priority = ds.userPriority;
    else if (!ds.axes.empty() && ds.priority != 0)
      priority = ds.priority;
    dims.push_back(DimShardingAttr::get(ctx, ds.axes, !ds.closed, priority));
  }
  return ShardingAttr::get(ctx, mesh, dims);
}

void Propagator::writeBack(func::FuncOp func) {
  MLIRContext *ctx = module.getContext();
  // The function's mesh: the one its values use, else the module's only one.
  FlatSymbolRefAttr mesh;
  auto consider = [&](Value v) {
    if (auto it = states.find(v); !mesh && it != states.end())
      mesh = it->second.mesh;
  };
  for (Value a : func.getArguments())
    consider(a);
  func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      consider(r);
  });
  if (!mesh && meshes.size() == 1)
    mesh = FlatSymbolRefAttr::get(
        cast<StringAttr>(meshes.begin()->first));
  if (!mesh)
    return;
  auto shardingOf = [&](Value v) -> ShardingAttr {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return {};
    auto it = states.find(v);
    const TensorState *state =
        it != states.end() && it->second.mesh ? &it->second : nullptr;
    return toAttr(ctx, state ? state->mesh : mesh, state, type.getRank());
  };
  StringRef attrName = TesselDialect::kShardingAttrName;
  // Set all argument attributes at once: setArgAttr per argument rebuilds
  // the whole array each time (quadratic in the number of arguments).
  SmallVector<DictionaryAttr> argAttrs;
  for (BlockArgument arg : func.getArguments()) {
    NamedAttrList attrs(func.getArgAttrDict(arg.getArgNumber()));
    if (ShardingAttr s = shardingOf(arg))
      attrs.set(attrName, s);
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  func.setAllArgAttrs(argAttrs);
  func.walk([&](Operation *op) {
    if (op->getNumResults() == 0 || isa<func::CallOp>(op))
      return;
    SmallVector<Attribute> perResult;
    for (Value r : op->getResults())
      if (ShardingAttr s = shardingOf(r))
        perResult.push_back(s);
    if (perResult.size() != op->getNumResults())
      return;
    if (perResult.size() == 1)
      op->setAttr(attrName, perResult.front());
    else
      op->setAttr(attrName, ArrayAttr::get(ctx, perResult));
  });
  for (Block &block : func.getBody())
    if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
      for (OpOperand &operand : ret->getOpOperands())
        if (!func.getResultAttr(operand.getOperandNumber(), attrName))
          if (ShardingAttr s = shardingOf(operand.get()))
            func.setResultAttr(operand.getOperandNumber(), attrName, s);
}

void Propagator::printExplanation(func::FuncOp func) {
  llvm::raw_ostream &os = *options.explain;
  os << "// Sharding propagation for @" << func.getSymName() << "\n";
  auto describe = [&](Value v, StringRef what) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return;
    auto it = states.find(v);
    os << name(v) << " (" << what << "): ";
    if (it == states.end() || !it->second.mesh) {
      os << "replicated (nothing reached it)\n";
      return;
    }
    const TensorState &state = it->second;
    os << toAttr(module.getContext(), state.mesh, &state, type.getRank())
       << "\n";
    for (auto [d, ds] : llvm::enumerate(state.dims)) {
      if (ds.axes.empty() || !ds.origin)
        continue;
      os << "    dim " << d << " " << formatAxes(ds.axes) << ": ";
      if (!ds.origin->via) {
        os << "user annotation, " << ds.origin->root << "\n";
        continue;
      }
      os << "from " << name(ds.origin->from) << " through '"
         << ds.origin->via->getName() << "' ("
         << locationString(ds.origin->via->getLoc()) << "); origin: "
         << ds.origin->root << "\n";
    }
  };
  for (BlockArgument arg : func.getArguments())
    describe(arg, "argument #" + std::to_string(arg.getArgNumber()));
  func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      describe(r, op->getName().getStringRef());
    // A sharded reduction factor leaves the results partial.
    OpShardingRuleAttr rule = ruleOf(op);
    if (!rule)
      return;
    // A reduction factor every operand splits the same way stays split in
    // partitioning (the result is partial); one the operands disagree on is
    // gathered instead.
    Axes partial;
    for (int64_t f = 0; f < rule.getNumFactors(); ++f) {
      if (!rule.isReduction(f))
        continue;
      std::optional<Axes> agreed;
      bool consensus = true;
      for (auto [t, m] : llvm::enumerate(rule.getOperands()))
        for (auto [d, dim] : llvm::enumerate(m.getDims())) {
          if (!llvm::is_contained(dim.getFactors(), f))
            continue;
          auto it = states.find(op->getOperand(t));
          Axes axes = it == states.end() ? Axes() : it->second.dims[d].axes;
          if (dim.getFactors().size() != 1 || axes.empty() ||
              (agreed && *agreed != axes))
            consensus = false;
          agreed = axes;
        }
      if (consensus && agreed)
        for (StringAttr a : *agreed)
          if (!llvm::is_contained(partial, a))
            partial.push_back(a);
    }
    if (!partial.empty())
      os << "    partial: the results of '" << op->getName()
         << "' are unreduced sums over " << formatAxes(partial)
         << " (a sharded reduction factor)\n";
  });
  for (const Conflict &c : conflicts) {
    if (c.op->getParentOfType<func::FuncOp>() != func)
      continue;
    os << "conflict at '" << c.op->getName() << "' ("
       << locationString(c.op->getLoc()) << "), factor " << c.factor << ": kept "
       << c.kept << " over " << c.dropped << ": " << c.reason << "\n";
  }
}

LogicalResult Propagator::run() {
  for (MeshOp mesh : module.getOps<MeshOp>())
    meshes[mesh.getSymNameAttr()] = mesh;
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || func->hasAttr(TesselDialect::kSpmdAttrName))
      continue;
    WalkResult check = func.walk([&](Operation *op) {
      return failed(checkOp(op)) ? WalkResult::interrupt()
                                 : WalkResult::advance();
    });
    if (check.wasInterrupted() || failed(seedFunction(func)))
      return failure();
    // Priorities in order; annotations without one rank as p0.
    std::set<int64_t> priorities = {0};
    for (auto &[v, state] : states)
      for (const DimState &d : state.dims)
        if (d.user)
          priorities.insert(d.priority);
    for (int64_t p : priorities) {
      phase = p;
      bool changed = true;
      while (changed) {
        // Broadcasts propagate forward last: a small operand's sharding
        // then never decides the layout of the large result before the
        // result's other users have had their say (it would make them
        // reshard the large tensor instead of the small one).
        changed = false;
        while (runWorklist(func, Stage::Pointwise) |
               runWorklist(func, Stage::BroadcastsBackward))
          changed = true;
        changed |= runWorklist(func, Stage::All);
      }
    }
    writeBack(func);
    if (options.explain)
      printExplanation(func);
  }
  return success();
}

} // namespace

LogicalResult mlir::tessel::propagateShardings(ModuleOp module,
                                               const PropagationOptions &options) {
  return Propagator(module, options).run();
}
