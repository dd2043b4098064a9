//===- AutoShard.cpp - every op's sharding chosen by an ILP ---------------===//
//
// Sites (arguments and ops), their strategies (mesh axes on the factors of
// each op's sharding rule), user annotations as constraints, and the
// choice written back as annotations. Costs: AutoShardCosts.cpp.
//
//===----------------------------------------------------------------------===//

#include "AutoShardImpl.h"

#include "tessel/dialects/tessel/Emit.h"
#include "tessel/planning/ProgramCosts.h"
#include "tessel/program/Signature.h"

#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::planning;
using namespace mlir::tessel::planning::autoshard;

AutoSharder::AutoSharder(func::FuncOp func, MeshOp mesh,
                         const AutoShardOptions &o)
    : func(func), mesh(mesh), options(o) {
  for (auto [name, size] :
       llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes())) {
    axisNames.push_back(cast<StringAttr>(name));
    axisSizes.push_back(size);
  }
}

namespace {

/// Every way to give each mesh axis (in mesh order) to one of `slots`
/// (sizes) or to none, where each slot's axes divide it: calls `fn` with
/// the axes of each slot.
void assignAxes(ArrayRef<int64_t> axisSizes, ArrayRef<int64_t> slotSizes,
                ArrayRef<bool> allowed,
                function_ref<void(ArrayRef<SmallVector<int, 2>>)> fn) {
  SmallVector<SmallVector<int, 2>, 4> slots(slotSizes.size());
  SmallVector<int64_t, 4> used(slotSizes.size(), 1);
  std::function<void(int)> next = [&](int axis) {
    if (axis == int(axisSizes.size()))
      return fn(slots);
    next(axis + 1); // the axis replicates
    for (size_t s = 0; s < slotSizes.size(); ++s) {
      int64_t n = used[s] * axisSizes[axis];
      if (!allowed[s] || slotSizes[s] % n != 0)
        continue;
      slots[s].push_back(axis);
      used[s] = n;
      next(axis + 1);
      used[s] /= axisSizes[axis];
      slots[s].pop_back();
    }
  };
  next(0);
}

/// The axes of a dimension made of `factors` (major to minor), or failure
/// where the layout has no single list of axes: a minor factor is split
/// while a more major one is not fully split.
FailureOr<SmallVector<int, 2>>
joinFactors(ArrayRef<int64_t> factors, ArrayRef<int64_t> factorSizes,
            ArrayRef<SmallVector<int, 2>> factorAxes,
            ArrayRef<int64_t> axisSizes) {
  SmallVector<int, 2> axes;
  bool open = true; // every factor so far fully split
  for (int64_t f : factors) {
    int64_t n = 1;
    for (int a : factorAxes[f])
      n *= axisSizes[a];
    if (!factorAxes[f].empty() && !open)
      return failure();
    llvm::append_range(axes, factorAxes[f]);
    open = open && n == factorSizes[f];
  }
  return axes;
}

/// Per axis, the slot holding it, or -1.
SmallVector<int8_t, 4> placementOf(ArrayRef<SmallVector<int, 2>> slots,
                                   size_t numAxes) {
  SmallVector<int8_t, 4> out(numAxes, -1);
  for (auto [slot, axes] : llvm::enumerate(slots))
    for (int a : axes)
      out[a] = int8_t(slot);
  return out;
}

} // namespace

std::vector<AxisDims> AutoSharder::layoutsOf(RankedTensorType type) const {
  std::vector<AxisDims> out;
  SmallVector<bool> allowed(type.getRank(), true);
  assignAxes(axisSizes, type.getShape(), allowed,
             [&](ArrayRef<SmallVector<int, 2>> dims) {
               out.emplace_back(dims.begin(), dims.end());
             });
  return out;
}

std::vector<Strategy>
AutoSharder::strategiesOf(Operation *op, OpShardingRuleAttr rule) const {
  ArrayRef<int64_t> sizes = rule.getFactorSizes();
  SmallVector<bool> allowed;
  for (int64_t f = 0; f < rule.getNumFactors(); ++f)
    allowed.push_back(!rule.isNeedReplication(f) && !rule.isPermutation(f));
  std::vector<Strategy> out;
  auto layout = [&](TensorMappingAttr t, ArrayRef<SmallVector<int, 2>> fa,
                    AxisDims &dims) {
    for (DimMappingAttr d : t.getDims()) {
      FailureOr<SmallVector<int, 2>> axes =
          joinFactors(d.getFactors(), sizes, fa, axisSizes);
      if (failed(axes))
        return false;
      dims.push_back(*axes);
    }
    return true;
  };
  assignAxes(axisSizes, sizes, allowed,
             [&](ArrayRef<SmallVector<int, 2>> fa) {
               Strategy s;
               s.factorAxes.assign(fa.begin(), fa.end());
               s.placement = placementOf(fa, axisSizes.size());
               for (TensorMappingAttr t : rule.getOperands())
                 if (!layout(t, fa, s.operands.emplace_back()))
                   return;
               for (TensorMappingAttr t : rule.getResults())
                 if (!layout(t, fa, s.results.emplace_back()))
                   return;
               for (auto [f, axes] : llvm::enumerate(fa))
                 for (int a : axes) {
                   s.split *= axisSizes[a];
                   if (rule.isReduction(int64_t(f)))
                     s.partial.push_back(a);
                 }
               for (TensorMappingAttr t : rule.getOperands()) {
                 llvm::SmallDenseSet<int64_t> has;
                 for (DimMappingAttr d : t.getDims())
                   has.insert(d.getFactors().begin(), d.getFactors().end());
                 auto &lacks = s.gradientPartial.emplace_back();
                 for (auto [f, axes] : llvm::enumerate(fa))
                   if (!has.contains(int64_t(f)))
                     llvm::append_range(lacks, axes);
                 llvm::sort(lacks);
               }
               out.push_back(std::move(s));
             });
  return out;
}

LogicalResult AutoSharder::collectSites() {
  if (!func.getBody().hasOneBlock())
    return func.emitError("auto-shard takes a function of one block");
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return func.emitError() << "argument #" << arg.getArgNumber()
                              << " is not a statically shaped tensor";
    Site site;
    site.arg = arg.getArgNumber();
    site.label = ::tessel::program::argName(func, arg.getArgNumber());
    for (AxisDims &dims : layoutsOf(type)) {
      Strategy s;
      s.placement = placementOf(dims, axisSizes.size());
      s.results.push_back(std::move(dims));
      site.strategies.push_back(std::move(s));
    }
    sites.push_back(std::move(site));
  }
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto iface = dyn_cast<ShardingRuleOpInterface>(&op);
    if (!iface || op.getNumRegions() != 0)
      return op.emitError()
             << "'" << op.getName()
             << "' has no sharding rule, so auto-shard cannot place it; "
                "hint: inline calls (--inline) and rewrite other dialects' "
                "ops into tessel ops first";
    for (Type t : op.getResultTypes())
      if (auto type = dyn_cast<RankedTensorType>(t);
          !type || !type.hasStaticShape())
        return op.emitError("auto-shard needs statically shaped tensors");
    Site site;
    site.op = &op;
    std::string loc;
    llvm::raw_string_ostream os(loc);
    op.getLoc().print(os);
    site.label = (op.getName().getStringRef() + " at " + loc).str();
    site.strategies = strategiesOf(&op, iface.getShardingRule());
    siteOfOp[&op] = int(sites.size());
    sites.push_back(std::move(site));
  }
  return success();
}

FailureOr<AxisDims> AutoSharder::indicesOf(ShardingAttr sharding,
                                           Location loc) const {
  if (sharding.getMesh().getValue() != mesh.getSymName())
    return emitError(loc) << "the annotation names mesh "
                          << sharding.getMesh() << ", but auto-shard plans on @"
                          << mesh.getSymName();
  AxisDims dims;
  for (DimShardingAttr d : sharding.getDims()) {
    auto &axes = dims.emplace_back();
    for (StringAttr a : d.getAxes()) {
      auto it = llvm::find(axisNames, a);
      if (it == axisNames.end())
        return emitError(loc) << "auto-shard takes annotations of whole mesh "
                                 "axes, not '"
                              << a.getValue() << "'";
      axes.push_back(int(it - axisNames.begin()));
    }
  }
  return dims;
}

LogicalResult AutoSharder::constrain(Site &site, int64_t result,
                                     ShardingAttr sharding, Location loc) {
  FailureOr<AxisDims> want = indicesOf(sharding, loc);
  if (failed(want))
    return failure();
  ArrayRef<DimShardingAttr> given = sharding.getDims();
  auto matches = [&](const Strategy &s) {
    const AxisDims &have = s.results[result];
    if (have.size() != want->size())
      return false;
    for (auto [d, axes] : llvm::enumerate(*want)) {
      bool prefix = have[d].size() >= axes.size() &&
                    llvm::equal(axes, ArrayRef(have[d]).take_front(axes.size()));
      if (given[d].isClosed() ? have[d] != axes : !prefix)
        return false;
    }
    return true;
  };
  llvm::erase_if(site.strategies, [&](const Strategy &s) { return !matches(s); });
  if (site.strategies.empty())
    return emitError(loc) << "no strategy of " << site.label
                          << " gives it the annotated sharding " << sharding
                          << "; hint: auto-shard places even splits only, "
                             "and its sharding rule and sizes must allow "
                             "that one";
  return success();
}

LogicalResult AutoSharder::applyAnnotations() {
  StringRef attrName = TesselDialect::kShardingAttrName;
  for (Site &site : sites) {
    if (!site.op) {
      if (auto s = func.getArgAttrOfType<ShardingAttr>(site.arg, attrName))
        if (failed(constrain(site, 0, s, func.getArgument(site.arg).getLoc())))
          return failure();
      continue;
    }
    if (auto c = dyn_cast<ShardingConstraintOp>(site.op))
      if (failed(constrain(site, 0, c.getSharding(), c.getLoc())))
        return failure();
    Attribute attr = site.op->getAttr(attrName);
    if (!attr)
      continue;
    SmallVector<Attribute> perResult;
    if (auto array = dyn_cast<ArrayAttr>(attr))
      llvm::append_range(perResult, array);
    else
      perResult.push_back(attr);
    for (auto [r, s] : llvm::enumerate(perResult))
      if (auto sharding = dyn_cast<ShardingAttr>(s))
        if (failed(constrain(site, int64_t(r), sharding, site.op->getLoc())))
          return failure();
  }
  Operation *ret = func.getBody().front().getTerminator();
  for (OpOperand &operand : ret->getOpOperands())
    if (auto s = func.getResultAttrOfType<ShardingAttr>(
            operand.getOperandNumber(), attrName)) {
      FailureOr<AxisDims> dims = indicesOf(s, func.getLoc());
      if (failed(dims))
        return failure();
      fixedResults.push_back({operand.getOperandNumber(), *dims});
    }
  return success();
}

void AutoSharder::classify(Site &site) {
  size_t numResults = site.strategies.front().results.size();
  site.resultClass.assign(numResults, {});
  site.resultLayout.assign(numResults, {});
  for (size_t r = 0; r < numResults; ++r)
    for (const Strategy &s : site.strategies) {
      auto &layouts = site.resultLayout[r];
      auto it = llvm::find(layouts, s.results[r]);
      site.resultClass[r].push_back(int(it - layouts.begin()));
      if (it == layouts.end())
        layouts.push_back(s.results[r]);
    }
}

void AutoSharder::markGradients() {
  for (BlockArgument arg : func.getArguments())
    if (::mlir::tessel::autodiff::isDifferentiable(arg.getType()) &&
        !isDataArgument(func, arg)) {
      parameters.insert(arg.getArgNumber());
      needsGradient.insert(arg);
    }
  for (Operation &op : func.getBody().front().without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return needsGradient.contains(v); }))
      for (Value r : op.getResults())
        if (::mlir::tessel::autodiff::isDifferentiable(r.getType()))
          needsGradient.insert(r);
}

ShardingAttr AutoSharder::shardingOf(const AxisDims &dims) const {
  MLIRContext *ctx = func.getContext();
  SmallVector<DimShardingAttr> out;
  for (const auto &axes : dims) {
    SmallVector<StringAttr> names;
    for (int a : axes)
      names.push_back(axisNames[a]);
    out.push_back(DimShardingAttr::get(ctx, names, /*isOpen=*/false,
                                       std::nullopt));
  }
  return ShardingAttr::get(ctx, FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
                           out);
}

/// Writes the choice: arguments' and results' shardings, each op result's
/// `tessel.sharding`, and a sharding_constraint before each operand its op
/// takes in another layout than its producer gives.
void AutoSharder::write(const std::vector<int> &choice) {
  StringRef attrName = TesselDialect::kShardingAttrName;
  auto layoutOf = [&](Value v) -> const AxisDims & {
    int site;
    unsigned r = 0;
    if (auto arg = dyn_cast<BlockArgument>(v))
      site = int(arg.getArgNumber());
    else {
      site = siteOfOp.lookup(v.getDefiningOp());
      r = cast<OpResult>(v).getResultNumber();
    }
    return sites[site].strategies[choice[site]].results[r];
  };
  std::map<std::pair<void *, std::string>, Value> constrained;
  for (auto [i, site] : llvm::enumerate(sites)) {
    const Strategy &s = site.strategies[choice[i]];
    if (!site.op) {
      func.setArgAttr(site.arg, attrName, shardingOf(s.results[0]));
      continue;
    }
    for (OpOperand &operand : site.op->getOpOperands()) {
      const AxisDims &want = s.operands[operand.getOperandNumber()];
      Value v = operand.get();
      if (layoutOf(v) == want)
        continue;
      ShardingAttr sharding = shardingOf(want);
      Value &c = constrained[{v.getAsOpaquePointer(), formatDims(want)}];
      if (!c) {
        OpBuilder b(site.op);
        c = ShardingConstraintOp::create(b, site.op->getLoc(), v, sharding);
      }
      operand.set(c);
    }
    if (isa<ShardingConstraintOp>(site.op))
      continue;
    SmallVector<Attribute> perResult;
    for (const AxisDims &dims : s.results)
      perResult.push_back(shardingOf(dims));
    site.op->setAttr(attrName, perResult.size() == 1
                                   ? perResult.front()
                                   : ArrayAttr::get(func.getContext(),
                                                    perResult));
  }
  // An annotated result gets its layout where the value returned has
  // another (the objective counted that reshard); the others are what the
  // value has.
  Operation *ret = func.getBody().front().getTerminator();
  for (auto &[result, dims] : fixedResults) {
    OpOperand &operand = ret->getOpOperand(unsigned(result));
    if (layoutOf(operand.get()) == dims)
      continue;
    OpBuilder b(ret);
    operand.set(ShardingConstraintOp::create(b, ret->getLoc(), operand.get(),
                                             shardingOf(dims)));
  }
  for (OpOperand &operand : ret->getOpOperands())
    if (!func.getResultAttr(operand.getOperandNumber(), attrName))
      func.setResultAttr(operand.getOperandNumber(), attrName,
                         shardingOf(layoutOf(operand.get())));
}

int64_t AutoSharder::countPairs() {
  int64_t pairs = 0;
  for (Site &site : sites) {
    if (!site.op)
      continue;
    for (OpOperand &operand : site.op->getOpOperands()) {
      Value v = operand.get();
      size_t from;
      if (auto arg = dyn_cast<BlockArgument>(v))
        from = sites[arg.getArgNumber()].resultLayout[0].size();
      else
        from = sites[siteOfOp.lookup(v.getDefiningOp())]
                   .resultLayout[cast<OpResult>(v).getResultNumber()]
                   .size();
      size_t to = operandClasses(site, operand.getOperandNumber()).second.size();
      pairs += int64_t(from * to);
    }
  }
  return pairs;
}

/// Solves for the axes in `decided` (fixed to each site's placement in its
/// current strategy) and `axis` (free; -1: every axis free).
FailureOr<ChoiceSolution> AutoSharder::solve(ArrayRef<int> decided, int axis) {
  double undecided = 1;
  for (auto [a, size] : llvm::enumerate(axisSizes))
    if (axis >= 0 && int(a) != axis && !llvm::is_contained(decided, int(a)))
      undecided *= double(size);
  for (Site &site : sites) {
    if (axis < 0) {
      site.strategies = site.all;
    } else {
      SmallVector<int8_t, 4> fixed = site.strategies.front().placement;
      site.strategies.clear();
      for (const Strategy &s : site.all) {
        bool keep = true;
        for (auto [a, slot] : llvm::enumerate(s.placement))
          if (llvm::is_contained(decided, int(a)) ? slot != fixed[a]
                                                  : int(a) != axis && slot >= 0)
            keep = false;
        if (keep)
          site.strategies.push_back(s);
      }
      if (site.strategies.empty()) // the annotations decide this axis
        return emitError(site.op ? site.op->getLoc() : func.getLoc())
               << "auto-shard: no strategy of " << site.label
               << " fits the axes chosen before "
               << axisNames[axis].getValue()
               << "; hint: annotate it, or raise max-pairs";
    }
    classify(site);
  }
  problem = ChoiceProblem();
  buildProblem();
  // Axes still to come split memory further (an optimistic bound).
  problem.memoryLimit *= undecided;
  llvm::Expected<ChoiceSolution> solution = solveChoices(problem);
  if (!solution) {
    InFlightDiagnostic diag = mlir::emitError(func.getLoc())
                              << "auto-shard: "
                              << llvm::toString(solution.takeError());
    if (options.memoryBytes > 0)
      diag << " ("
           << llvm::formatv("{0:f2}", options.memoryBytes / (1 << 20))
           << " MiB per device"
           << (axis >= 0 ? ", choosing axis \"" + axisNames[axis].str() +
                               "\" with those before it fixed"
                         : std::string())
           << "); hint: raise memory= or use a mesh of more devices";
    return diag;
  }
  return *solution;
}

/// Largest axis first, each given the choices of those before it.
FailureOr<ChoiceSolution> AutoSharder::solveByAxis() {
  SmallVector<int> order(axisSizes.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order,
                    [&](int a, int b) { return axisSizes[a] > axisSizes[b]; });
  SmallVector<int> decided;
  FailureOr<ChoiceSolution> last = failure();
  method = "axis by axis:";
  for (int a : order) {
    for (Site &site : sites) // nothing decided yet: every axis unused
      if (decided.empty())
        site.strategies = {site.all.front()};
    if (succeeded(last)) // the next round starts from the choice
      for (auto [v, site] : llvm::enumerate(sites))
        site.strategies = {site.strategies[last->choice[v]]};
    last = solve(decided, a);
    if (failed(last))
      return failure();
    method += " " + axisNames[a].str();
    decided.push_back(a);
  }
  return last;
}

LogicalResult AutoSharder::run(llvm::raw_ostream *report) {
  if (failed(collectSites()) || failed(applyAnnotations()))
    return failure();
  markGradients();
  for (Site &site : sites) {
    site.all = site.strategies;
    classify(site);
  }
  int64_t pairs = countPairs();
  FailureOr<ChoiceSolution> solution = failure();
  if (pairs <= options.maxPairs) {
    method = "jointly";
    solution = solve({}, -1);
  } else {
    solution = solveByAxis();
    method += llvm::formatv(" (the joint problem has {0} edge pairs, "
                            "max-pairs={1})",
                            pairs, options.maxPairs)
                  .str();
  }
  if (failed(solution))
    return failure();
  if (report)
    printReport(*report, *solution);
  write(solution->choice);
  return success();
}

LogicalResult mlir::tessel::planning::autoShard(
    func::FuncOp func, MeshOp mesh, const AutoShardOptions &options,
    llvm::raw_ostream *report) {
  return AutoSharder(func, mesh, options).run(report);
}
