//===- Gradient.cpp - reverse-mode differentiation of a function ----------===//
//
// The gradient function is the forward's ops followed by their VJPs in
// reverse. A VJP rule reads its forward op's operands and results through a
// "view": the forward op itself, or a copy of it when the backward must not
// reuse the forward's values (recomputed regions, regathered parameters).
// Afterwards every op gets a role, so that pipeline schedules can split the
// backward into its input part (B) and its weight part (W).
//
//===----------------------------------------------------------------------===//

#include "tessel/autodiff/Autodiff.h"

#include "tessel/dialects/tessel/Emit.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/StringSwitch.h"

#include <map>
#include <set>
#include <optional>

using namespace mlir;
using namespace mlir::tessel;

using mlir::tessel::autodiff::isDifferentiable;

namespace {

using RegionKey = std::pair<int64_t, std::string>;

/// The recomputation region of `op` under `policy`, if any.
std::optional<RegionKey> regionOf(Operation *op, Recompute policy) {
  auto layer = op->getAttrOfType<IntegerAttr>(TesselDialect::kLayerAttrName);
  switch (policy) {
  case Recompute::None:
    return std::nullopt;
  case Recompute::Layers:
    if (!layer)
      return std::nullopt;
    return RegionKey{layer.getInt(), ""};
  case Recompute::Tagged: {
    auto group =
        op->getAttrOfType<StringAttr>(TesselDialect::kRecomputeAttrName);
    if (!group)
      return std::nullopt;
    return RegionKey{layer ? layer.getInt() : -1, group.str()};
  }
  }
  return std::nullopt;
}

void setRole(Operation *op, StringRef role) {
  op->setAttr(TesselDialect::kRoleAttrName,
              StringAttr::get(op->getContext(), role));
}

/// Builds the gradient function's body: the forward, then the backward.
class GradientBuilder {
public:
  GradientBuilder(OpBuilder &builder, func::FuncOp grad,
                  const GradientOptions &options)
      : b(builder), grad(grad), options(options) {}

  /// Runs the backward from `loss` over the forward `ops`; fills `cot`.
  LogicalResult run(ArrayRef<Operation *> ops, Value loss);
  /// Tags the backward ops backward_input or backward_weight.
  void assignBackwardRoles();

  llvm::DenseMap<Value, Value> cot;

private:
  void accumulate(Value v, Value c) {
    if (!c || !isDifferentiable(v.getType()))
      return;
    auto [it, inserted] = cot.try_emplace(v, c);
    if (!inserted)
      it->second = AddOp::create(b, v.getLoc(), it->second, c);
  }
  /// The value the backward (of an op in pipeline stage `stage`) reads for
  /// the forward value `v`.
  Value backwardValue(Value v, Attribute stage);
  /// A split parameter argument, whose backward reads get a fresh copy.
  bool isSplitParameter(Value v);
  void recomputeRegion(const RegionKey &key, Attribute stage);

  OpBuilder &b;
  func::FuncOp grad;
  const GradientOptions &options;
  std::map<RegionKey, SmallVector<Operation *>> regions;
  std::set<RegionKey> recomputedRegions;
  /// Forward value -> the value the backward reads instead.
  llvm::DenseMap<Value, Value> recomputed;
  llvm::DenseMap<std::pair<Value, Attribute>, Value> parameterCopies;
  /// Cotangents of forward op results: the backward-input chain.
  SmallVector<Value> activationCotangents;
};

bool GradientBuilder::isSplitParameter(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || !isDifferentiable(v.getType()))
    return false;
  auto sharding = grad.getArgAttrOfType<ShardingAttr>(
      arg.getArgNumber(), TesselDialect::kShardingAttrName);
  return sharding && !sharding.isFullyReplicated();
}

Value GradientBuilder::backwardValue(Value v, Attribute stage) {
  if (Value r = recomputed.lookup(v))
    return r;
  if (!options.reshardAfterForward)
    return v;
  // A split parameter, or a cast of one (mixed precision), is read again
  // from the parameter's own shards: one copy per pipeline stage.
  Operation *castOp = v.getDefiningOp();
  bool isCast = isa_and_nonnull<ConvertOp>(castOp) &&
                isSplitParameter(castOp->getOperand(0));
  if (!isCast && !isSplitParameter(v))
    return v;
  if (Value copy = parameterCopies.lookup({v, stage}))
    return copy;
  Value copy;
  if (isCast) {
    Value source = backwardValue(castOp->getOperand(0), stage);
    IRMapping map;
    map.map(castOp->getOperand(0), source);
    Operation *clone = b.clone(*castOp, map);
    setRole(clone, "recompute");
    copy = clone->getResult(0);
  } else {
    auto sharding = grad.getArgAttrOfType<ShardingAttr>(
        cast<BlockArgument>(v).getArgNumber(),
        TesselDialect::kShardingAttrName);
    auto constraint = ShardingConstraintOp::create(b, v.getLoc(), v, sharding);
    setRole(constraint, "recompute");
    copy = constraint.getResult();
  }
  if (stage)
    copy.getDefiningOp()->setAttr(TesselDialect::kStageAttrName, stage);
  // Not through an iterator taken before: the recursion above may have
  // grown the map (a cast's parameter copy), which moves its entries.
  parameterCopies[{v, stage}] = copy;
  return copy;
}

void GradientBuilder::recomputeRegion(const RegionKey &key, Attribute stage) {
  if (!recomputedRegions.insert(key).second)
    return;
  for (Operation *op : regions[key]) {
    IRMapping map;
    for (Value operand : op->getOperands())
      map.map(operand, backwardValue(operand, stage));
    Operation *clone = b.clone(*op, map);
    setRole(clone, "recompute");
    for (auto [from, to] : llvm::zip(op->getResults(), clone->getResults()))
      recomputed[from] = to;
  }
}

LogicalResult GradientBuilder::run(ArrayRef<Operation *> ops, Value loss) {
  for (Operation *op : ops)
    if (std::optional<RegionKey> key = regionOf(op, options.recompute))
      regions[*key].push_back(op);

  Block *body = &grad.getBody().front();
  Value seed = createSplat(b, loss.getLoc(),
                           cast<RankedTensorType>(loss.getType()), 1.0);
  if (Operation *def = loss.getDefiningOp())
    if (Attribute stage = def->getAttr(TesselDialect::kStageAttrName))
      seed.getDefiningOp()->setAttr(TesselDialect::kStageAttrName, stage);
  accumulate(loss, seed);
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> gs;
    bool any = false;
    for (Value r : op->getResults()) {
      gs.push_back(cot.lookup(r));
      any |= static_cast<bool>(gs.back());
      if (gs.back())
        activationCotangents.push_back(gs.back());
    }
    if (!any)
      continue;
    Operation *last = &body->back();
    Attribute stage = op->getAttr(TesselDialect::kStageAttrName);
    Attribute layer = op->getAttr(TesselDialect::kLayerAttrName);

    // The view the rule reads.
    if (std::optional<RegionKey> key = regionOf(op, options.recompute))
      recomputeRegion(*key, stage);
    Operation *view = op;
    bool temporary = false;
    if (Value r = recomputed.lookup(op->getResult(0))) {
      view = r.getDefiningOp();
    } else {
      IRMapping map;
      bool changed = false;
      for (Value operand : op->getOperands()) {
        Value v = backwardValue(operand, stage);
        changed |= v != operand;
        map.map(operand, v);
      }
      if (changed) {
        view = b.clone(*op, map);
        setRole(view, "recompute");
        temporary = true;
      }
    }

    SmallVector<Value> operandCots;
    if (failed(buildVjp(b, view, gs, operandCots)))
      return failure();
    if (temporary && view->use_empty())
      view->erase();
    for (auto [v, c] : llvm::zip(op->getOperands(), operandCots))
      accumulate(v, c);
    // Everything this VJP emitted belongs to the forward op's stage and
    // layer.
    for (Operation *o = last->getNextNode(); o; o = o->getNextNode()) {
      if (stage && !o->hasAttr(TesselDialect::kStageAttrName))
        o->setAttr(TesselDialect::kStageAttrName, stage);
      if (layer && !o->hasAttr(TesselDialect::kLayerAttrName))
        o->setAttr(TesselDialect::kLayerAttrName, layer);
    }
  }
  return success();
}

void GradientBuilder::assignBackwardRoles() {
  // Backward-input: what the cotangents of activations are computed from;
  // backward-weight: the rest (parameter gradients only).
  llvm::DenseSet<Operation *> input;
  SmallVector<Operation *> worklist;
  auto visit = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && !def->hasAttr(TesselDialect::kRoleAttrName) &&
        input.insert(def).second)
      worklist.push_back(def);
  };
  for (Value c : activationCotangents)
    visit(c);
  while (!worklist.empty())
    for (Value operand : worklist.pop_back_val()->getOperands())
      visit(operand);
  // Recomputation feeding only weight gradients is weight work too, but it
  // keeps its role: it is recomputation either way.
  for (Operation &op : grad.getBody().front()) {
    if (op.hasAttr(TesselDialect::kRoleAttrName) || isa<func::ReturnOp>(op))
      continue;
    setRole(&op, input.contains(&op) ? "backward_input" : "backward_weight");
  }
}

} // namespace

LogicalResult mlir::tessel::buildVjp(OpBuilder &builder, Operation *op,
                                     ArrayRef<Value> resultCotangents,
                                     SmallVectorImpl<Value> &operandCotangents) {
  auto vjp = dyn_cast<VjpOpInterface>(op);
  if (!vjp)
    return op->emitError() << "no VJP rule for '" << op->getName()
                           << "'; hint: differentiate the program before "
                              "partitioning it (collectives have no rule)";
  return vjp.buildVjp(builder, resultCotangents, operandCotangents);
}

std::optional<Recompute> mlir::tessel::parseRecompute(StringRef name) {
  return llvm::StringSwitch<std::optional<Recompute>>(name)
      .Case("none", Recompute::None)
      .Case("layers", Recompute::Layers)
      .Case("tagged", Recompute::Tagged)
      .Default(std::nullopt);
}

FailureOr<func::FuncOp>
mlir::tessel::buildGradient(func::FuncOp forward, StringRef name,
                            const GradientOptions &options) {
  if (forward.isExternal() || forward.getNumResults() < 1)
    return forward.emitError() << "needs a body and a loss result";
  auto lossType = dyn_cast<RankedTensorType>(forward.getResultTypes()[0]);
  if (!lossType || lossType.getRank() != 0 || !isDifferentiable(lossType))
    return forward.emitError()
           << "result #0 must be a scalar float loss to differentiate, got "
           << forward.getResultTypes()[0]
           << "; hint: reduce the loss to a scalar (tessel.reduce sum, or "
              "softmax_cross_entropy with reduction = mean)";
  if (!forward.getBody().hasOneBlock())
    return forward.emitError() << "cannot differentiate several blocks";

  OpBuilder builder(forward);
  builder.setInsertionPointAfter(forward);
  SmallVector<Type> resultTypes = {lossType};
  for (Type t : forward.getArgumentTypes())
    if (isDifferentiable(t))
      resultTypes.push_back(t);
  // The forward's other results (auxiliary losses, counts) come last, as
  // they are (JAX's has_aux).
  llvm::append_range(resultTypes, forward.getResultTypes().drop_front());
  auto grad = func::FuncOp::create(
      builder, forward.getLoc(), name,
      builder.getFunctionType(forward.getArgumentTypes(), resultTypes));
  grad.setAllArgAttrs(forward.getAllArgAttrs());
  Block *body = grad.addEntryBlock();
  builder.setInsertionPointToStart(body);

  // Forward: a copy of the body.
  IRMapping map;
  for (auto [from, to] :
       llvm::zip(forward.getArguments(), body->getArguments()))
    map.map(from, to);
  Block &fwd = forward.getBody().front();
  func::ReturnOp ret;
  SmallVector<Operation *> ops;
  for (Operation &op : fwd) {
    if (auto r = dyn_cast<func::ReturnOp>(op)) {
      ret = r;
      break;
    }
    Operation *clone = builder.clone(op, map);
    clone->removeAttr(TesselDialect::kShardingAttrName);
    clone->removeAttr(TesselDialect::kRoleAttrName);
    setRole(clone, "forward");
    ops.push_back(clone);
  }
  Value loss = map.lookup(ret.getOperand(0));

  GradientBuilder backward(builder, grad, options);
  if (failed(backward.run(ops, loss))) {
    grad->erase();
    return failure();
  }
  SmallVector<Value> results = {loss};
  for (BlockArgument arg : body->getArguments())
    if (isDifferentiable(arg.getType())) {
      Value c = backward.cot.lookup(arg);
      results.push_back(c ? c
                          : createSplat(builder, forward.getLoc(),
                                        cast<RankedTensorType>(arg.getType()),
                                        0.0));
    }
  for (Value aux : ret.getOperands().drop_front())
    results.push_back(map.lookup(aux));
  func::ReturnOp::create(builder, forward.getLoc(), results);
  backward.assignBackwardRoles();
  rematerializeCheapValues(grad);
  // Recomputed values the rules did not read.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();

  // Names: loss, then d_<argument name>; set all at once (one result at a
  // time rebuilds every result's attributes each time).
  SmallVector<Attribute> names = {builder.getStringAttr("loss")};
  for (unsigned a = 0; a < forward.getNumArguments(); ++a) {
    if (!isDifferentiable(forward.getArgumentTypes()[a]))
      continue;
    auto argName = forward.getArgAttrOfType<StringAttr>(
        a, TesselDialect::kNameAttrName);
    names.push_back(builder.getStringAttr(
        "grad." + (argName ? argName.getValue().str()
                           : "arg" + std::to_string(a))));
  }
  for (unsigned i = 1; i < forward.getNumResults(); ++i) {
    auto auxName = forward.getResultAttrOfType<StringAttr>(
        i, TesselDialect::kNameAttrName);
    names.push_back(auxName ? auxName
                            : builder.getStringAttr("result" +
                                                    std::to_string(i)));
  }
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [r, name] : llvm::enumerate(names)) {
    NamedAttrList attrs(grad.getResultAttrDict(r));
    attrs.set(TesselDialect::kNameAttrName, name);
    resultAttrs.push_back(attrs.getDictionary(builder.getContext()));
  }
  grad.setAllResultAttrs(resultAttrs);
  return grad;
}
