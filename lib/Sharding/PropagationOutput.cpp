//===- PropagationOutput.cpp - propagated shardings written back, explain -===//

#include "Propagator.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::propagation;

namespace {
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

} // namespace

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

