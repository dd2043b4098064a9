//===- Partition.cpp - global programs to per-device programs -------------===//
//
// Walks a propagated function op by op. For each op it fixes one sharding
// per factor of its rule (results first: they decide what the op produces;
// reduction factors from the operands), reshards every operand to the
// layout those factors imply, and emits the local op on local shapes. A
// sharded reduction factor leaves the result partial; the partial is
// resolved (all-reduce or reduce-scatter) only where a user needs it.
//
//===----------------------------------------------------------------------===//

#include "tessel/sharding/Partition.h"

#include "FunctionPartitioner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::tessel;

Layout FunctionPartitioner::wanted(Value v) {
  int64_t rank = typeOf(v).getRank();
  ShardingAttr s;
  if (auto arg = dyn_cast<BlockArgument>(v))
    s = func.getArgAttrOfType<ShardingAttr>(arg.getArgNumber(),
                                            TesselDialect::kShardingAttrName);
  else if (Operation *def = v.getDefiningOp()) {
    Attribute attr = def->getAttr(TesselDialect::kShardingAttrName);
    if (auto array = dyn_cast_or_null<ArrayAttr>(attr))
      attr = array[cast<OpResult>(v).getResultNumber()];
    s = dyn_cast_or_null<ShardingAttr>(attr);
  }
  if (!s || s.getMesh().getValue() != meshInfo.op().getSymName())
    return Layout::replicated(rank);
  return Layout::of(s);
}

FailureOr<Value> FunctionPartitioner::operandAs(Location loc, Value global,
                                                const Layout &to) {
  const Local &l = localOf(global);
  if (l.layout == to)
    return l.value;
  // One reshard per value and layout: later users reuse it.
  std::string key;
  llvm::raw_string_ostream os(key);
  for (const AxisList &d : to.dims) {
    os << '[';
    for (StringAttr a : d)
      os << a.getValue() << ',';
    os << ']';
  }
  auto [it, inserted] =
      reshards.try_emplace({global.getAsOpaquePointer(), key}, Value());
  if (!inserted)
    return it->second;
  FailureOr<Value> v =
      reshaper.reshard(loc, l.value, l.layout, to, typeOf(global));
  if (failed(v))
    return failure();
  it->second = *v;
  return *v;
}

SmallVector<AxisList>
FunctionPartitioner::chooseFactors(Operation *op, OpShardingRuleAttr rule) {
  int64_t n = rule.getNumFactors();
  ArrayRef<int64_t> sizes = rule.getFactorSizes();
  SmallVector<AxisList> factors(n);
  SmallVector<bool> assigned(n, false);
  AxisList used;
  // Splits a tensor dimension's axes over its factors, major to minor
  // (tessel/sharding/Projection.h), and takes those of unassigned factors
  // (skipping axes already in use).
  auto take = [&](ArrayRef<int64_t> dimFactors, const AxisList &axes,
                  bool reductionOnly) {
    SmallVector<int64_t, 2> dimSizes;
    for (int64_t f : dimFactors)
      dimSizes.push_back(sizes[f]);
    SmallVector<AxisList, 2> split =
        splitAxesOverFactors(meshInfo.op(), dimSizes, axes);
    for (auto [k, f] : llvm::enumerate(dimFactors)) {
      if (assigned[f] || rule.isNeedReplication(f) ||
          (reductionOnly && !rule.isReduction(f)))
        continue;
      AxisList fit;
      for (StringAttr a : split[k]) {
        if (conflictsWithAny(a, used))
          break;
        fit.push_back(a);
      }
      used.append(fit.begin(), fit.end());
      factors[f] = fit;
      assigned[f] = !fit.empty();
      // A minor factor of a multi-factor dimension counts only if the major
      // ones are fully split.
      if (dimFactors.size() > 1 && meshInfo.size(fit) != sizes[f])
        break;
    }
  };
  // Factors only results have (a strided slice's dimension, one_hot's
  // depth, top_k's k) are produced whole: their position in the global
  // tensor depends on the device. Broadcasts are the exception: any block
  // of a broadcast dimension is the same.
  llvm::SmallDenseSet<int64_t, 8> inOperands;
  for (TensorMappingAttr m : rule.getOperands())
    for (DimMappingAttr dim : m.getDims())
      inOperands.insert(dim.getFactors().begin(), dim.getFactors().end());
  bool positionFree = isa<BroadcastInDimOp, ConstantOp>(op);
  for (int64_t f = 0; f < n; ++f)
    if (!inOperands.contains(f) && !positionFree)
      assigned[f] = true; // stays unsplit
  // A reduction factor every operand already splits the same way keeps that
  // split: the result is left partial and resolved where used (a row-
  // parallel matmul's reduce-scatter into a sequence-parallel region)
  // rather than regathering the operands.
  for (int64_t f = 0; f < n; ++f) {
    if (!rule.isReduction(f) || assigned[f])
      continue;
    std::optional<AxisList> agreed;
    bool consensus = true;
    for (auto [v, m] : llvm::zip(op->getOperands(), rule.getOperands()))
      for (auto [d, dim] : llvm::enumerate(m.getDims())) {
        if (!llvm::is_contained(dim.getFactors(), f))
          continue;
        const AxisList &axes = localOf(v).layout.dims[d];
        if (dim.getFactors().size() != 1 || axes.empty() ||
            (agreed && *agreed != axes))
          consensus = false;
        agreed = axes;
      }
    if (!consensus || !agreed || llvm::any_of(*agreed, [&](StringAttr a) {
          return conflictsWithAny(a, used);
        }))
      continue;
    factors[f] = *agreed;
    assigned[f] = true;
    used.append(agreed->begin(), agreed->end());
  }
  for (auto [r, m] : llvm::zip(op->getResults(), rule.getResults())) {
    Layout l = wanted(r);
    for (auto [d, dim] : llvm::enumerate(m.getDims()))
      take(dim.getFactors(), l.dims[d], false);
  }
  for (auto [v, m] : llvm::zip(op->getOperands(), rule.getOperands())) {
    if (!isa<RankedTensorType>(v.getType()))
      continue;
    const Layout &l = localOf(v).layout;
    for (auto [d, dim] : llvm::enumerate(m.getDims()))
      take(dim.getFactors(), l.dims[d], true);
  }
  // Every tensor must be able to express the choice: in a dimension made of
  // several factors, a factor is split evenly, and only if all more major
  // ones are fully split. Drop what some tensor cannot express.
  SmallVector<TensorMappingAttr> all(rule.getOperands());
  llvm::append_range(all, rule.getResults());
  for (bool changed = true; changed;) {
    changed = false;
    for (TensorMappingAttr m : all)
      for (DimMappingAttr dim : m.getDims()) {
        if (dim.getFactors().size() < 2)
          continue;
        bool majorFull = true;
        for (int64_t f : dim.getFactors()) {
          int64_t product = meshInfo.size(factors[f]);
          if (!factors[f].empty() && (!majorFull || sizes[f] % product != 0)) {
            factors[f].clear();
            changed = true;
            product = 1;
          }
          majorFull &= product == sizes[f];
        }
      }
  }
  return factors;
}

Layout FunctionPartitioner::layoutFor(OpShardingRuleAttr rule,
                                      TensorMappingAttr mapping,
                                      ArrayRef<AxisList> factors,
                                      RankedTensorType global) {
  Layout l = Layout::replicated(global.getRank());
  for (auto [d, dim] : llvm::enumerate(mapping.getDims())) {
    SmallVector<int64_t, 2> dimSizes;
    SmallVector<AxisList, 2> perFactor;
    for (int64_t f : dim.getFactors()) {
      dimSizes.push_back(rule.getFactorSizes()[f]);
      perFactor.push_back(factors[f]);
    }
    l.dims[d] = joinFactorAxes(meshInfo.op(), dimSizes, perFactor);
  }
  return l;
}

LogicalResult FunctionPartitioner::partitionReturn(func::ReturnOp ret) {
  SmallVector<Value> results;
  for (OpOperand &o : ret->getOpOperands()) {
    ShardingAttr s = func.getResultAttrOfType<ShardingAttr>(
        o.getOperandNumber(), TesselDialect::kShardingAttrName);
    Layout to =
        s ? Layout::of(s) : Layout::replicated(typeOf(o.get()).getRank());
    FailureOr<Value> v = operandAs(ret.getLoc(), o.get(), to);
    if (failed(v))
      return failure();
    results.push_back(*v);
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  return success();
}

LogicalResult FunctionPartitioner::partitionOp(Operation *op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return partitionReturn(ret);
  if (auto own = dyn_cast<SpmdPartitionOpInterface>(op))
    return own.partition(*this);
  return partitionByRule(op);
}

FailureOr<Operation *>
FunctionPartitioner::partitionByRule(Operation *op, const RuleScheme &scheme) {
  Location loc = op->getLoc();
  auto iface = dyn_cast<ShardingRuleOpInterface>(op);
  if (!iface)
    return op->emitError() << "cannot partition '" << op->getName()
                           << "': it has no sharding rule";
  OpShardingRuleAttr rule = iface.getShardingRule();
  SmallVector<AxisList> factors = chooseFactors(op, rule);

  // Reshard operands to the layouts the factors imply; mask padding of
  // sharded reduction factors to the identity. Per operand, not per value:
  // an op may use one value twice in two layouts (x . x contracts a
  // dimension of one use and keeps it in the other), which one IRMapping
  // entry per value could not tell apart.
  SmallVector<Value> localOperands;
  for (auto [v, m] : llvm::zip(op->getOperands(), rule.getOperands())) {
    Layout to = layoutFor(rule, m, factors, typeOf(v));
    FailureOr<Value> local = operandAs(loc, v, to);
    if (failed(local))
      return failure();
    Value masked = *local;
    for (auto [d, dim] : llvm::enumerate(m.getDims()))
      if (dim.getFactors().size() == 1 &&
          rule.isReduction(dim.getFactors()[0]) && !to.dims[d].empty())
        masked = reshaper.maskPadding(loc, masked, to, typeOf(v), d,
                                      scheme.padIdentity);
    localOperands.push_back(masked);
  }
  Operation *local = b.clone(*op);
  local->setOperands(localOperands);
  local->removeAttr(TesselDialect::kShardingAttrName);
  local->removeAttr(TesselDialect::kLogicalAxesAttrName);
  AxisList partial;
  for (int64_t f = 0; f < rule.getNumFactors(); ++f)
    if (rule.isReduction(f))
      partial.append(factors[f].begin(), factors[f].end());
  for (auto [r, m] : llvm::zip(op->getResults(), rule.getResults())) {
    Layout l = layoutFor(rule, m, factors, typeOf(r));
    l.partial = partial;
    l.partialKind = scheme.partialKind;
    Value lr = local->getResult(cast<OpResult>(r).getResultNumber());
    lr.setType(meshInfo.localType(typeOf(r), l));
    locals[r] = {lr, l};
  }
  return local;
}

LogicalResult FunctionPartitioner::run() {
  MLIRContext *ctx = func.getContext();
  StringRef shardingName = TesselDialect::kShardingAttrName;
  // The new signature: local argument and result types.
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<Layout> argLayouts;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  for (BlockArgument arg : func.getArguments()) {
    auto global = typeOf(arg);
    Layout l = wanted(arg);
    argLayouts.push_back(l);
    argTypes.push_back(meshInfo.localType(global, l));
    NamedAttrList attrs(func.getArgAttrDict(arg.getArgNumber()));
    // Index inputs keep the range the global program gives them (their
    // local uses shift them, which would hide it).
    if (!attrs.get(TesselDialect::kInitAttrName) &&
        isa<IntegerType>(global.getElementType()) &&
        !global.getElementType().isInteger(1))
      if (int64_t range = indexedRange(arg); range > 0)
        attrs.set(TesselDialect::kInitAttrName,
                  StringAttr::get(ctx, "int:0:" + std::to_string(range)));
    bool padded = false;
    for (auto [d, size] : llvm::enumerate(global.getShape()))
      padded |= size % meshInfo.size(l.dims[d]) != 0;
    if (padded) // the global shape is not local x devices
      attrs.set(TesselDialect::kGlobalTypeAttrName, TypeAttr::get(global));
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    auto global = cast<RankedTensorType>(func.getResultTypes()[r]);
    ShardingAttr s = func.getResultAttrOfType<ShardingAttr>(r, shardingName);
    Layout l = s ? Layout::of(s) : Layout::replicated(global.getRank());
    resultTypes.push_back(meshInfo.localType(global, l));
    NamedAttrList attrs(func.getResultAttrDict(r));
    bool padded = false;
    for (auto [d, size] : llvm::enumerate(global.getShape()))
      padded |= size % meshInfo.size(l.dims[d]) != 0;
    if (padded)
      attrs.set(TesselDialect::kGlobalTypeAttrName, TypeAttr::get(global));
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }

  Block *oldBody = &func.getBody().front();
  auto *newBody = new Block();
  for (auto [t, arg] : llvm::zip(argTypes, func.getArguments()))
    locals[arg] = {newBody->addArgument(t, arg.getLoc()),
                   argLayouts[arg.getArgNumber()]};
  b.setInsertionPointToEnd(newBody);
  for (Operation &op : *oldBody) {
    if (failed(partitionOp(&op))) {
      delete newBody;
      return failure();
    }
    b.setInsertionPointToEnd(newBody);
  }
  // Swap the bodies.
  func.getBody().push_back(newBody);
  oldBody->dropAllDefinedValueUses();
  oldBody->erase();
  func.setType(FunctionType::get(ctx, argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  func->setAttr(TesselDialect::kSpmdAttrName, meshInfo.ref());
  return success();
}

LogicalResult mlir::tessel::partitionModule(ModuleOp module,
                                            const PartitionOptions &options) {
  // Tessel's own schemes (PartitionModels.cpp), wherever the module came
  // from: a tool that registered them already keeps its registration.
  DialectRegistry registry;
  registerSpmdPartitionModels(registry);
  module.getContext()->appendDialectRegistry(registry);
  for (func::FuncOp func :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (func.isExternal() || func->hasAttr(TesselDialect::kSpmdAttrName))
      continue;
    // The function's mesh: the one its shardings name (all of them).
    MeshOp mesh;
    auto consider = [&](ShardingAttr s, Location loc) -> LogicalResult {
      if (!s)
        return success();
      MeshOp m = lookupMesh(func, s.getMesh());
      if (mesh && m != mesh)
        return emitError(loc) << "uses mesh " << s.getMesh() << " where @"
                              << func.getSymName() << " already uses @"
                              << mesh.getSymName()
                              << "; partition one mesh per function";
      mesh = m;
      return success();
    };
    auto considerAttr = [&](Attribute attr, Location loc) -> LogicalResult {
      if (auto array = dyn_cast_or_null<ArrayAttr>(attr)) {
        for (Attribute a : array)
          if (failed(consider(dyn_cast<ShardingAttr>(a), loc)))
            return failure();
        return success();
      }
      return consider(dyn_cast_or_null<ShardingAttr>(attr), loc);
    };
    StringRef name = TesselDialect::kShardingAttrName;
    bool bad = false;
    for (unsigned a = 0; a < func.getNumArguments() && !bad; ++a)
      bad = failed(considerAttr(func.getArgAttr(a, name),
                                func.getArgument(a).getLoc()));
    for (unsigned r = 0; r < func.getNumResults() && !bad; ++r)
      bad = failed(considerAttr(func.getResultAttr(r, name), func.getLoc()));
    func.walk([&](Operation *op) {
      if (bad || op == func)
        return;
      bad = failed(considerAttr(op->getAttr(name), op->getLoc()));
      if (auto c = dyn_cast<ShardingConstraintOp>(op); c && !bad)
        bad = failed(consider(c.getSharding(), op->getLoc()));
    });
    if (bad)
      return failure();
    if (!mesh)
      continue; // nothing sharded: nothing to partition
    WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
      if (op == func)
        return WalkResult::advance();
      if (op->getParentOp() != func)
        return op->emitError() << "cannot partition nested regions";
      for (Type t : op->getResultTypes())
        if (!isa<RankedTensorType>(t))
          return op->emitError() << "cannot partition a non-tensor result";
      if (isa<CollectiveOpInterface, func::CallOp>(op))
        return op->emitError() << "'" << op->getName()
                               << "' cannot appear in a global program being "
                                  "partitioned"
                               << (isa<func::CallOp>(op)
                                       ? " (inline calls first)"
                                       : "");
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    FunctionPartitioner partitioner(func, mesh, options);
    if (failed(partitioner.run()))
      return failure();
  }
  return success();
}
