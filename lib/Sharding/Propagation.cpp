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

#include "Propagator.h"

#include "llvm/ADT/SetVector.h"

#include <deque>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::propagation;

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
  OpView view{op, rule, {}, {}, {}, op->getNumOperands(), false};
  SmallVector<Value, 8> &tensors = view.tensors;
  for (auto [v, m] : llvm::zip(op->getOperands(), rule.getOperands()))
    tensors.push_back(v), view.mappings.push_back(m);
  for (auto [v, m] : llvm::zip(op->getResults(), rule.getResults()))
    tensors.push_back(v), view.mappings.push_back(m);

  FlatSymbolRefAttr mesh;
  for (Value v : tensors)
    if (auto it = states.find(v); it != states.end() && it->second.mesh) {
      if (mesh && mesh != it->second.mesh)
        return; // mixed meshes: reported by the partitioner (a reshard)
      mesh = it->second.mesh;
    }
  if (!mesh || !meshOp(mesh))
    return;
  view.mesh = mesh;
  // Before the last stage a broadcast only passes its result's sharding
  // back to its operand.
  view.backwardOnly = stage != Stage::All && isa<BroadcastInDimOp>(op);
  SmallVector<Candidates, 4> candidates = collectCandidates(view);
  SmallVector<Axes, 8> chosen(rule.getNumFactors());
  SmallVector<const Candidate *, 8> winner(rule.getNumFactors(), nullptr);
  chooseFactorAxes(view, candidates, chosen, winner);
  projectBack(view, chosen, winner, changed);
}

SmallVector<Propagator::Candidates, 4>
Propagator::collectCandidates(const OpView &view) {
  OpShardingRuleAttr rule = view.rule;
  FlatSymbolRefAttr mesh = view.mesh;
  const SmallVector<Value, 8> &tensors = view.tensors;
  const SmallVector<TensorMappingAttr, 8> &mappings = view.mappings;
  int64_t numFactors = rule.getNumFactors();
  SmallVector<Candidates, 4> candidates(numFactors);
  ArrayRef<int64_t> sizes = rule.getFactorSizes();
  bool backwardOnly = view.backwardOnly;
  unsigned numOperands = view.numOperands;
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
  return candidates;
}

void Propagator::chooseFactorAxes(const OpView &view,
                                  MutableArrayRef<Candidates> candidates,
                                  MutableArrayRef<Axes> chosen,
                                  MutableArrayRef<const Candidate *> winner) {
  OpShardingRuleAttr rule = view.rule;
  Operation *op = view.op;
  int64_t numFactors = rule.getNumFactors();
  // Choose per factor. (A mesh axis chosen for two factors reaches no
  // tensor twice: projection below keeps each tensor's axes distinct.)
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
}

void Propagator::projectBack(const OpView &view, ArrayRef<Axes> chosen,
                             ArrayRef<const Candidate *> winner,
                             SmallVectorImpl<Value> &changed) {
  ArrayRef<int64_t> sizes = view.rule.getFactorSizes();
  FlatSymbolRefAttr mesh = view.mesh;
  const SmallVector<Value, 8> &tensors = view.tensors;
  // Project back: extend open dimensions whose sharding is a prefix.
  for (auto [t, v] : llvm::enumerate(tensors)) {
    if (view.backwardOnly && t >= view.numOperands)
      continue;
    ArrayRef<DimMappingAttr> dims = view.mappings[t].getDims();
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
        if (conflictsWithAny(a, elsewhere))
          break;
        fit.push_back(a);
      }
      if (fit.size() <= cur.axes.size())
        continue;
      cur.axes = std::move(fit);
      cur.priority = source->priority;
      const Origin *root = source->origin;
      cur.origin = newOrigin({root ? root->root : "propagation",
                              tensors[source->tensor], view.op});
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

LogicalResult mlir::tessel::propagateShardings(ModuleOp module,
                                               const PropagationOptions &options) {
  return Propagator(module, options).run();
}
