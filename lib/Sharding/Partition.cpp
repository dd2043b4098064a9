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
  if (!s || s.getMesh().getValue() != mesh.op().getSymName())
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
  llvm::SmallDenseSet<StringAttr, 8> used;
  // Splits a tensor dimension's axes over its factors, major to minor, and
  // takes those of unassigned factors (skipping axes already in use).
  auto take = [&](ArrayRef<int64_t> dimFactors, const AxisList &axes,
                  bool reductionOnly) {
    size_t k = 0;
    int64_t remaining = dimFactors.empty() ? 1 : sizes[dimFactors[0]];
    SmallVector<AxisList, 2> split(dimFactors.size());
    for (StringAttr a : axes) {
      while (k < dimFactors.size() && remaining == 1)
        if (++k < dimFactors.size())
          remaining = sizes[dimFactors[k]];
      if (k == dimFactors.size())
        break;
      int64_t s = mesh.size(a);
      bool single = dimFactors.size() == 1;
      if (!single && remaining % s != 0)
        break; // a multi-factor dimension splits evenly or not at all
      split[k].push_back(a);
      remaining = single ? remaining : remaining / s;
    }
    for (auto [k, f] : llvm::enumerate(dimFactors)) {
      if (assigned[f] || rule.isNeedReplication(f) ||
          (reductionOnly && !rule.isReduction(f)))
        continue;
      AxisList fit;
      for (StringAttr a : split[k]) {
        if (used.contains(a))
          break;
        fit.push_back(a);
      }
      for (StringAttr a : fit)
        used.insert(a);
      factors[f] = fit;
      assigned[f] = !fit.empty();
      // A minor factor of a multi-factor dimension counts only if the major
      // ones are fully split.
      if (dimFactors.size() > 1 && mesh.size(fit) != sizes[f])
        break;
    }
  };
  // Factors only results have (a concatenated or sliced dimension, one_hot's
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
    if (!consensus || !agreed ||
        llvm::any_of(*agreed, [&](StringAttr a) { return used.contains(a); }))
      continue;
    factors[f] = *agreed;
    assigned[f] = true;
    used.insert(agreed->begin(), agreed->end());
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
          int64_t product = mesh.size(factors[f]);
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
  for (auto [d, dim] : llvm::enumerate(mapping.getDims()))
    for (int64_t f : dim.getFactors()) {
      l.dims[d].append(factors[f].begin(), factors[f].end());
      if (mesh.size(factors[f]) != rule.getFactorSizes()[f])
        break;
    }
  return l;
}

LogicalResult FunctionPartitioner::partitionOp(Operation *op) {
  Location loc = op->getLoc();
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    SmallVector<Value> results;
    for (OpOperand &o : ret->getOpOperands()) {
      ShardingAttr s = func.getResultAttrOfType<ShardingAttr>(
          o.getOperandNumber(), TesselDialect::kShardingAttrName);
      Layout to = s ? Layout::of(s)
                    : Layout::replicated(typeOf(o.get()).getRank());
      FailureOr<Value> v = operandAs(loc, o.get(), to);
      if (failed(v))
        return failure();
      results.push_back(*v);
    }
    func::ReturnOp::create(builder, loc, results);
    return success();
  }
  if (auto c = dyn_cast<ShardingConstraintOp>(op)) {
    Layout to = Layout::of(c.getSharding());
    FailureOr<Value> v = operandAs(loc, c.getInput(), to);
    if (failed(v))
      return failure();
    locals[c.getResult()] = {*v, to};
    return success();
  }
  if (isa<IotaOp, DropoutMaskOp>(op) ||
      (isa<ConstantOp>(op) && !cast<ConstantOp>(op).getValue().isSplat())) {
    // Values that depend on the global position: made whole, then sliced by
    // their users' reshards.
    Operation *clone = builder.clone(*op);
    clone->removeAttr(TesselDialect::kShardingAttrName);
    for (OpOperand &o : clone->getOpOperands())
      o.set(localOf(op->getOperand(o.getOperandNumber())).value);
    locals[op->getResult(0)] = {clone->getResult(0),
                                Layout::replicated(typeOf(op->getResult(0))
                                                       .getRank())};
    return success();
  }
  // Sums and differences of partial sums with the same layout stay partial:
  // every device adds its own terms, and one collective resolves the result
  // where it is used (the global gradient norm adds one partial squared sum
  // per parameter, which then costs one all-reduce instead of one each).
  if (isa<AddOp, SubOp>(op)) {
    const Layout &first = localOf(op->getOperand(0)).layout;
    bool samePartial =
        !first.partial.empty() && first.partialKind == CollectiveKind::sum &&
        isa<FloatType>(typeOf(op->getResult(0)).getElementType()) &&
        llvm::all_of(op->getOperands(), [&](Value v) {
          return localOf(v).layout == first;
        });
    if (samePartial) {
      IRMapping mapping;
      for (Value v : op->getOperands())
        mapping.map(v, localOf(v).value);
      Operation *local = builder.clone(*op, mapping);
      local->removeAttr(TesselDialect::kShardingAttrName);
      local->removeAttr(TesselDialect::kLogicalAxesAttrName);
      Value lr = local->getResult(0);
      lr.setType(localOf(op->getOperand(0)).value.getType());
      locals[op->getResult(0)] = {lr, first};
      return success();
    }
  }
  bool handled = false;
  if (failed(partitionSpecial(op, handled)))
    return failure();
  if (handled)
    return success();

  auto iface = dyn_cast<ShardingRuleOpInterface>(op);
  if (!iface)
    return op->emitError() << "cannot partition '" << op->getName()
                           << "': it has no sharding rule";
  OpShardingRuleAttr rule = iface.getShardingRule();
  SmallVector<AxisList> factors = chooseFactors(op, rule);

  // Reshard operands to the layouts the factors imply; mask padding of
  // sharded reduction factors to the identity.
  double identity = 0.0;
  if (auto reduce = dyn_cast<ReduceOp>(op))
    identity = reduce.getKind() == ReduceKind::max
                   ? -std::numeric_limits<double>::infinity()
               : reduce.getKind() == ReduceKind::min
                   ? std::numeric_limits<double>::infinity()
                   : 0.0;
  // Per operand, not per value: an op may use one value twice in two
  // layouts (x . x contracts a dimension of one use and keeps it in the
  // other), which one IRMapping entry per value could not tell apart.
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
        masked = reshaper.maskPadding(loc, masked, to, typeOf(v), d, identity);
    localOperands.push_back(masked);
  }
  Operation *local = builder.clone(*op);
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
    if (auto reduce = dyn_cast<ReduceOp>(op))
      l.partialKind = reduce.getKind() == ReduceKind::max   ? CollectiveKind::max
                      : reduce.getKind() == ReduceKind::min ? CollectiveKind::min
                                                            : CollectiveKind::sum;
    Value lr = local->getResult(cast<OpResult>(r).getResultNumber());
    lr.setType(mesh.localType(typeOf(r), l));
    locals[r] = {lr, l};
  }
  // Local attributes that depend on local shapes.
  if (auto cst = dyn_cast<ConstantOp>(local)) { // a splat: same value, local
    auto splat = cast<SplatElementsAttr>(cst.getValue());
    cst.setValueAttr(DenseElementsAttr::get(
        cast<ShapedType>(cst.getType()), splat.getSplatValue<Attribute>()));
  }
  if (auto slice = dyn_cast<SliceOp>(local)) {
    SmallVector<int64_t> limit(slice.getLimit());
    RankedTensorType in = typeOf(slice.getInput());
    for (size_t d = 0; d < limit.size(); ++d)
      if (slice.getStart()[d] == 0 && slice.getStrides()[d] == 1 &&
          limit[d] == typeOf(cast<SliceOp>(op).getInput()).getDimSize(d))
        limit[d] = in.getDimSize(d);
    slice.setLimit(limit);
  }
  if (auto reduce = dyn_cast<ReduceOp>(local);
      reduce && reduce.getKind() == ReduceKind::mean && !partial.empty()) {
    // mean = (partial sum) / (global count): scale the local sum.
    reduce.setKind(ReduceKind::sum);
    builder.setInsertionPointAfter(reduce);
    int64_t count = 1;
    for (int64_t d : reduce.getDims())
      count *= typeOf(cast<ReduceOp>(op).getInput()).getDimSize(d);
    Value scaled = MulOp::create(
        builder, loc, reduce.getResult(),
        reshaper.constant(loc, typeOf(reduce.getResult()), 1.0 / count));
    locals[op->getResult(0)].value = scaled;
  }
  if (auto gather = dyn_cast<GatherOp>(local)) {
    // A table split on the gathered axis: shift the indices into this
    // device's rows; rows elsewhere read as zeros (a partial sum).
    int64_t axis = gather.getAxis();
    const AxisList &tableAxes = factors[rule.getOperands()[0]
                                            .getDims()[axis]
                                            .getFactors()[0]];
    if (!tableAxes.empty()) {
      builder.setInsertionPoint(gather);
      Value idx = gather.getIndices();
      RankedTensorType it = typeOf(idx);
      Value block =
          reshaper.axisIndex(loc, tableAxes, it.getElementType());
      Value off = MulOp::create(
          builder, loc, block,
          reshaper.constant(loc, RankedTensorType::get({}, it.getElementType()),
                            typeOf(gather.getTable()).getDimSize(axis)));
      Value offs = BroadcastInDimOp::create(builder, loc, it, off,
                                            ArrayRef<int64_t>{});
      gather.getIndicesMutable().assign(SubOp::create(builder, loc, idx, offs));
    }
  }
  builder.setInsertionPointToEnd(builder.getInsertionBlock());
  return success();
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
    argTypes.push_back(mesh.localType(global, l));
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
      padded |= size % mesh.size(l.dims[d]) != 0;
    if (padded) // the global shape is not local x devices
      attrs.set(TesselDialect::kGlobalTypeAttrName, TypeAttr::get(global));
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    auto global = cast<RankedTensorType>(func.getResultTypes()[r]);
    ShardingAttr s = func.getResultAttrOfType<ShardingAttr>(r, shardingName);
    Layout l = s ? Layout::of(s) : Layout::replicated(global.getRank());
    resultTypes.push_back(mesh.localType(global, l));
    NamedAttrList attrs(func.getResultAttrDict(r));
    bool padded = false;
    for (auto [d, size] : llvm::enumerate(global.getShape()))
      padded |= size % mesh.size(l.dims[d]) != 0;
    if (padded)
      attrs.set(TesselDialect::kGlobalTypeAttrName, TypeAttr::get(global));
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }

  Block *oldBody = &func.getBody().front();
  auto *newBody = new Block();
  for (auto [t, arg] : llvm::zip(argTypes, func.getArguments()))
    locals[arg] = {newBody->addArgument(t, arg.getLoc()),
                   argLayouts[arg.getArgNumber()]};
  builder.setInsertionPointToEnd(newBody);
  for (Operation &op : *oldBody) {
    if (failed(partitionOp(&op))) {
      delete newBody;
      return failure();
    }
    builder.setInsertionPointToEnd(newBody);
  }
  // Swap the bodies.
  func.getBody().push_back(newBody);
  oldBody->dropAllDefinedValueUses();
  oldBody->erase();
  func.setType(FunctionType::get(ctx, argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  func->setAttr(TesselDialect::kSpmdAttrName, mesh.ref());
  return success();
}

LogicalResult mlir::tessel::partitionModule(ModuleOp module,
                                            const PartitionOptions &options) {
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
