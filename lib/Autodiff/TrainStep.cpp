//===- TrainStep.cpp - forward function to training step -----------------===//
//
// The training step is one function: the forward and backward (from
// buildGradient), the global gradient norm and clipping, the learning-rate
// schedule and the optimizer update (Optimizer.h). Written in tessel ops
// only, it is propagated and partitioned as a whole (GSPMD-style), so
// gradient all-reduces and the norm's cross-shard reduction come out of
// partitioning. StepBuilder builds it in stages, one method each.
//
//===----------------------------------------------------------------------===//

#include "Optimizer.h"
#include "tessel/autodiff/Autodiff.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"

#include <cmath>

#include <cstdio>

using namespace mlir;
using namespace mlir::tessel;

using autodiff::Emitter;

namespace {

/// Learning rate at update `t` (1-based, master-precision scalar): linear warm-up, then
/// cosine decay to lr * minLrRatio at totalSteps.
Value learningRate(Emitter &e, Value t, const TrainStepOptions &o,
                   Value peak) {
  Value lr = peak ? peak : e.cst(o.lr);
  if (o.warmupSteps > 0)
    lr = e.mul(lr, e.min(e.cst(1.0), e.div(t, e.cst(o.warmupSteps))));
  if (o.totalSteps > o.warmupSteps) {
    Value progress =
        e.div(e.sub(t, e.cst(o.warmupSteps)),
              e.cst(static_cast<double>(o.totalSteps - o.warmupSteps)));
    progress = e.max(e.cst(0.0), e.min(e.cst(1.0), progress));
    Value cosine = CosOp::create(e.b, e.loc, e.mul(progress, e.cst(M_PI)));
    // minRatio + (1 - minRatio) * (1 + cos) / 2
    Value factor = e.add(e.cst(o.minLrRatio),
                         e.mul(e.cst((1.0 - o.minLrRatio) * 0.5),
                               e.add(e.cst(1.0), cosine)));
    lr = e.mul(lr, factor);
  }
  return lr;
}

/// The parameters (trained: float arguments without a "batch" logical
/// axis and not named in batch=) and the data arguments of `forward`.
struct Arguments {
  SmallVector<bool> isParam;
  SmallVector<unsigned> params, data;
};

FailureOr<Arguments> classify(func::FuncOp forward,
                              const TrainStepOptions &options) {
  Arguments out;
  unsigned numArgs = forward.getNumArguments();
  out.isParam.assign(numArgs, false);
  for (unsigned a = 0; a < numArgs; ++a) {
    if (!autodiff::isDifferentiable(forward.getArgumentTypes()[a]))
      continue;
    auto argName =
        forward.getArgAttrOfType<StringAttr>(a, TesselDialect::kNameAttrName);
    if (argName && llvm::is_contained(options.batchNames, argName.str()))
      continue;
    auto axes = forward.getArgAttrOfType<ArrayAttr>(
        a, TesselDialect::kLogicalAxesAttrName);
    bool batchAxis = axes && llvm::any_of(axes, [](Attribute x) {
                       auto s = dyn_cast<StringAttr>(x);
                       return s && s.getValue() == "batch";
                     });
    out.isParam[a] = !batchAxis;
  }
  for (unsigned a = 0; a < numArgs; ++a)
    (out.isParam[a] ? out.params : out.data).push_back(a);
  if (out.params.empty())
    return forward.emitError()
           << "has no parameters to train; hint: parameters are the float "
              "arguments without a \"batch\" logical axis that are not "
              "named in batch=";
  return out;
}

/// Builds `@name(params, state per slot, data, [apply, grad_scale], [lr],
/// step) -> (new params, new state, loss, grad_norm)`.
class StepBuilder {
public:
  StepBuilder(func::FuncOp forward, const TrainStepOptions &options,
              Arguments args)
      : forward(forward), options(options), args(std::move(args)),
        optimizer(autodiff::createOptimizer(options)),
        b(forward.getContext()), e{{b, forward.getLoc()}, masterScalar()} {
    slots = optimizer->slots();
    optimizerSlots = slots.size();
    // Gradient accumulation keeps the running gradient sum as one more slot.
    if (options.accumulate)
      slots.push_back("accum");
  }

  func::FuncOp build(StringRef name, func::FuncOp grad) {
    createFunction(name);
    inlineGradient(grad);
    accumulate();
    Value norm = clipByGlobalNorm();
    // Schedule: t is the 1-based update number.
    Value t = e.add(ConvertOp::create(b, e.loc, e.scalar, stepArg), e.cst(1.0));
    Value lr = learningRate(
        e, t, options,
        lrArg ? ConvertOp::create(b, e.loc, e.scalar, lrArg).getResult()
              : Value());
    SmallVector<Value> results = update(t, lr);
    results.push_back(loss);
    results.push_back(norm);
    llvm::append_range(results, metrics);
    for (Operation *o = lastGradientOp->getNextNode(); o; o = o->getNextNode())
      o->setAttr(TesselDialect::kRoleAttrName, b.getStringAttr("optimizer"));
    func::ReturnOp::create(b, e.loc, results);
    cleanUp();
    return step;
  }

private:
  RankedTensorType masterScalar() {
    bool anyF64 = llvm::any_of(args.params, [&](unsigned a) {
      return cast<RankedTensorType>(forward.getArgumentTypes()[a])
          .getElementType()
          .isF64();
    });
    return RankedTensorType::get(
        {}, anyF64 ? Type(b.getF64Type()) : Type(b.getF32Type()));
  }
  Type master() { return e.scalar.getElementType(); }
  std::string paramName(unsigned a) {
    auto n =
        forward.getArgAttrOfType<StringAttr>(a, TesselDialect::kNameAttrName);
    return n ? n.str() : "arg" + std::to_string(a);
  }
  std::string stateName(StringRef slot, unsigned a) {
    return (optimizer->name() + "." + slot + "." + paramName(a)).str();
  }
  static StringRef slotRole(StringRef slot) {
    return slot == "accum" ? "accumulator" : "optimizer_state";
  }
  Value state(unsigned slot, unsigned p) {
    return body->getArgument(args.params.size() * (1 + slot) + p);
  }

  void signature(SmallVectorImpl<Type> &types,
                 SmallVectorImpl<DictionaryAttr> &attrs);
  void layOutGradients();
  void createFunction(StringRef name);
  void inlineGradient(func::FuncOp grad);
  void accumulate();
  Value clipByGlobalNorm();
  SmallVector<Value> update(Value t, Value lr);
  bool isEmbeddingTable(unsigned a);
  Value applyIfAccumulated(Value updated, Value old);
  void cleanUp();

  func::FuncOp forward;
  const TrainStepOptions &options;
  Arguments args;
  std::unique_ptr<autodiff::Optimizer> optimizer;
  SmallVector<StringRef> slots;
  unsigned optimizerSlots = 0;
  OpBuilder b;
  Emitter e;

  func::FuncOp step;
  Block *body = nullptr;
  SmallVector<Value> forwardArg; ///< where each forward argument lives
  Value stepArg, lrArg, applyArg, gradScaleArg;
  Operation *lastGradientOp = nullptr;
  Value loss;
  SmallVector<Value> metrics; // the forward's other results
  SmallVector<Value> grads, gradSums; ///< per parameter
};

/// The argument types and attributes: what the runtime does with each.
void StepBuilder::signature(SmallVectorImpl<Type> &types,
                            SmallVectorImpl<DictionaryAttr> &attrs) {
  MLIRContext *ctx = forward.getContext();
  for (unsigned a : args.params) {
    types.push_back(forward.getArgumentTypes()[a]);
    NamedAttrList list(forward.getArgAttrDict(a));
    list.set(TesselDialect::kRuntimeRoleAttrName,
             b.getStringAttr("parameter"));
    attrs.push_back(list.getDictionary(ctx));
  }
  for (StringRef slot : slots)
    for (unsigned a : args.params) {
      // Optimizer state is in master precision with its parameter's
      // sharding and logical axes.
      auto t = cast<RankedTensorType>(forward.getArgumentTypes()[a]);
      types.push_back(t.clone(master()));
      NamedAttrList list(forward.getArgAttrDict(a));
      // ZeRO: the state may be laid out differently from the parameter;
      // the gradient sum as the gradient (ZeRO-2: like the state; ZeRO-1:
      // like the parameter).
      Attribute stateSharding =
          list.erase(TesselDialect::kStateShardingAttrName);
      Attribute gradSharding =
          list.erase(TesselDialect::kGradientShardingAttrName);
      if (Attribute s = slot == "accum" ? gradSharding : stateSharding)
        list.set(TesselDialect::kShardingAttrName, s);
      list.set(TesselDialect::kNameAttrName,
               b.getStringAttr(stateName(slot, a)));
      list.set(TesselDialect::kInitAttrName, b.getStringAttr("zeros"));
      list.set(TesselDialect::kRuntimeRoleAttrName,
               b.getStringAttr(slotRole(slot)));
      attrs.push_back(list.getDictionary(ctx));
    }
  for (unsigned a : args.data) {
    types.push_back(forward.getArgumentTypes()[a]);
    attrs.push_back(forward.getArgAttrDict(a));
  }
  auto scalarArg = [&](Type type, StringRef argName, StringRef init,
                       StringRef role) {
    types.push_back(RankedTensorType::get({}, type));
    attrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(TesselDialect::kNameAttrName,
                        b.getStringAttr(argName)),
         b.getNamedAttr(TesselDialect::kInitAttrName, b.getStringAttr(init)),
         b.getNamedAttr(TesselDialect::kRuntimeRoleAttrName,
                        b.getStringAttr(role))}));
  };
  if (options.accumulate) {
    // apply != 0: this micro-step ends an optimizer step; grad_scale: 1 /
    // the number of micro-steps (both set by the runtime).
    scalarArg(b.getI32Type(), "apply", "ones", "apply");
    scalarArg(b.getF32Type(), "grad_scale", "ones", "grad_scale");
  }
  if (options.lrArgument) {
    // The peak learning rate as an argument the runtime may override.
    char init[48];
    std::snprintf(init, sizeof(init), "constant:%.17g", options.lr);
    scalarArg(b.getF32Type(), "lr", init, "learning_rate");
  }
  scalarArg(b.getI32Type(), "step", "zeros", "step");
}

/// The sharding of some argument, if any (for the mesh they name).
static ShardingAttr anySharding(ArrayRef<DictionaryAttr> argAttrs) {
  for (DictionaryAttr attrs : argAttrs)
    if (attrs)
      if (auto s = attrs.getAs<ShardingAttr>(TesselDialect::kShardingAttrName))
        return s;
  return {};
}

/// The closed, replicated sharding of a rank-`rank` tensor on `mesh`.
static ShardingAttr replicatedOn(FlatSymbolRefAttr mesh, int64_t rank) {
  MLIRContext *ctx = mesh.getContext();
  SmallVector<DimShardingAttr> dims(
      rank, DimShardingAttr::get(ctx, {}, false, std::nullopt));
  return ShardingAttr::get(ctx, mesh, dims);
}

/// The function with its signature, results named and laid out, and the
/// arguments bound to their roles.
void StepBuilder::createFunction(StringRef name) {
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  signature(argTypes, argAttrs);
  SmallVector<Type> resultTypes;
  SmallVector<std::string> resultNames;
  SmallVector<StringRef> resultRoles;
  for (unsigned a : args.params) {
    resultTypes.push_back(forward.getArgumentTypes()[a]);
    resultNames.push_back(paramName(a));
    resultRoles.push_back("parameter");
  }
  for (StringRef slot : slots)
    for (unsigned a : args.params) {
      resultTypes.push_back(
          cast<RankedTensorType>(forward.getArgumentTypes()[a])
              .clone(master()));
      resultNames.push_back(stateName(slot, a));
      resultRoles.push_back(slotRole(slot));
    }
  resultTypes.push_back(forward.getResultTypes()[0]);
  resultNames.push_back("loss");
  resultRoles.push_back("loss");
  resultTypes.push_back(e.scalar);
  resultNames.push_back("grad_norm");
  resultRoles.push_back("grad_norm");
  // The forward's other results, reported with the loss.
  for (unsigned i = 1; i < forward.getNumResults(); ++i) {
    resultTypes.push_back(forward.getResultTypes()[i]);
    auto name = forward.getResultAttrOfType<StringAttr>(
        i, TesselDialect::kNameAttrName);
    resultNames.push_back(name ? name.str() : "result" + std::to_string(i));
    resultRoles.push_back("metric");
  }

  b.setInsertionPointAfter(forward);
  step = func::FuncOp::create(b, e.loc, name,
                              b.getFunctionType(argTypes, resultTypes));
  step.setAllArgAttrs(argAttrs);
  size_t carried = args.params.size() * (1 + slots.size());
  // All at once: setting one result's attribute rebuilds the array of every
  // result's (quadratic in results, and the context keeps every array).
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [i, n] : llvm::enumerate(resultNames)) {
    NamedAttrList attrs;
    attrs.set(TesselDialect::kNameAttrName, b.getStringAttr(n));
    attrs.set(TesselDialect::kRuntimeRoleAttrName,
              b.getStringAttr(resultRoles[i]));
    // New parameters and state are laid out as their arguments, so that a
    // step's results feed the next step as they are.
    if (i < carried)
      if (Attribute sharding = argAttrs[i].get(TesselDialect::kShardingAttrName))
        attrs.set(TesselDialect::kShardingAttrName, sharding);
    // Metrics are replicated: every rank reports the same value.
    if (resultRoles[i] == "metric")
      if (ShardingAttr any = anySharding(argAttrs))
        attrs.set(TesselDialect::kShardingAttrName,
                  replicatedOn(any.getMesh(),
                               cast<RankedTensorType>(resultTypes[i])
                                   .getRank()));
    resultAttrs.push_back(attrs.getDictionary(b.getContext()));
  }
  step.setAllResultAttrs(resultAttrs);
  body = step.addEntryBlock();
  b.setInsertionPointToStart(body);

  forwardArg.assign(forward.getNumArguments(), Value());
  for (auto [i, a] : llvm::enumerate(args.params))
    forwardArg[a] = body->getArgument(i);
  for (auto [i, a] : llvm::enumerate(args.data))
    forwardArg[a] = body->getArgument(carried + i);
  stepArg = body->getArgument(body->getNumArguments() - 1);
  unsigned scalarsEnd = body->getNumArguments() - 1; // before step
  if (options.lrArgument)
    lrArg = body->getArgument(--scalarsEnd);
  if (options.accumulate) {
    gradScaleArg = body->getArgument(--scalarsEnd);
    applyArg = body->getArgument(--scalarsEnd);
  }
}

/// The gradient function's body, inlined: the loss and each parameter's
/// gradient.
void StepBuilder::inlineGradient(func::FuncOp grad) {
  IRMapping map;
  Block &gradBody = grad.getBody().front();
  for (auto [from, to] : llvm::zip(gradBody.getArguments(), forwardArg))
    map.map(from, to);
  SmallVector<Value> gradResults;
  for (Operation &op : gradBody) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        gradResults.push_back(map.lookupOrDefault(v));
      break;
    }
    b.clone(op, map);
  }
  lastGradientOp = &body->back();
  loss = gradResults[0];
  // buildGradient returns a gradient per float argument, in order.
  unsigned r = 1;
  for (unsigned a = 0; a < forward.getNumArguments(); ++a) {
    if (!autodiff::isDifferentiable(forward.getArgumentTypes()[a]))
      continue;
    if (args.isParam[a])
      grads.push_back(gradResults[r]);
    ++r;
  }
  metrics.assign(gradResults.begin() + r, gradResults.end());
  layOutGradients();
}

/// ZeRO: where a parameter's optimizer state is laid out otherwise, its
/// gradient is constrained to its `tessel.gradient_sharding` (ZeRO-2: the
/// state's layout, so partitioning reduce-scatters it) or else to the
/// parameter's own layout (ZeRO-1: all-reduced, every device holds it
/// whole).
void StepBuilder::layOutGradients() {
  for (auto [i, a] : llvm::enumerate(args.params)) {
    auto state = forward.getArgAttrOfType<ShardingAttr>(
        a, TesselDialect::kStateShardingAttrName);
    if (!state)
      continue;
    auto to = forward.getArgAttrOfType<ShardingAttr>(
        a, TesselDialect::kGradientShardingAttrName);
    if (!to)
      to = forward.getArgAttrOfType<ShardingAttr>(
          a, TesselDialect::kShardingAttrName);
    if (!to)
      to = replicatedOn(state.getMesh(), autodiff::typeOf(grads[i]).getRank());
    grads[i] = ShardingConstraintOp::create(b, e.loc, grads[i], to);
  }
}

/// Accumulation: the step's gradient is (running sum + this micro-step's
/// gradient) * grad_scale; the new running sum is kept unless applied.
void StepBuilder::accumulate() {
  if (!options.accumulate)
    return;
  Value gradScale = ConvertOp::create(b, e.loc, e.scalar, gradScaleArg);
  for (unsigned i = 0; i < grads.size(); ++i) {
    Value sum = e.add(state(optimizerSlots, i), e.toMaster(grads[i]));
    // The sum keeps the running sum's layout (ZeRO-1: whole, ZeRO-2:
    // sharded), so that the next sum is not gathered back from the
    // update's shards.
    if (auto s = step.getArgAttrOfType<ShardingAttr>(
            args.params.size() * (1 + optimizerSlots) + i,
            TesselDialect::kShardingAttrName))
      sum = ShardingConstraintOp::create(b, e.loc, sum, s);
    gradSums.push_back(sum);
    grads[i] = e.scale(sum, gradScale);
  }
}

/// The global gradient norm (returned), and clipping. The squares are summed
/// in f64: a sum of millions of f32 squares drifts (3.7e-6 relative on a
/// tiny GPT, growing with size); the norm is then used in master precision.
Value StepBuilder::clipByGlobalNorm() {
  Value sq;
  for (Value g : grads) {
    RankedTensorType t = autodiff::typeOf(g);
    Value g64 = t.getElementType().isF64()
                    ? g
                    : ConvertOp::create(b, e.loc, t.clone(b.getF64Type()), g)
                          .getResult();
    Value s = e.sumAll(e.mul(g64, g64));
    sq = sq ? e.add(sq, s) : s;
  }
  Value norm = e.sqrt(sq);
  if (!e.scalar.getElementType().isF64())
    norm = ConvertOp::create(b, e.loc, e.scalar, norm);
  if (options.clipNorm > 0) {
    Value clip = e.min(e.cst(1.0), e.div(e.cst(options.clipNorm),
                                         e.add(norm, e.cst(1e-6))));
    for (Value &g : grads)
      g = e.scale(g, clip);
  }
  return norm;
}

/// With accumulation, `updated` where this micro-step applies, else `old`.
Value StepBuilder::applyIfAccumulated(Value updated, Value old) {
  Value applied = CompareOp::create(
      b, e.loc, CompareDirection::ne, applyArg,
      createSplat(b, e.loc, autodiff::typeOf(applyArg), 0.0));
  RankedTensorType t = autodiff::typeOf(updated);
  Value pred = BroadcastInDimOp::create(b, e.loc, t.clone(b.getI1Type()),
                                        applied, ArrayRef<int64_t>{});
  return SelectOp::create(b, e.loc, pred, updated, old);
}

/// Whether forward argument `a` is the table of a gather (an embedding).
bool StepBuilder::isEmbeddingTable(unsigned a) {
  bool table = false;
  forward.walk([&](GatherOp g) {
    table |= g.getTable() == forward.getArgument(a);
  });
  return table;
}

/// Every parameter's update: the new parameters, then the new state per
/// slot.
SmallVector<Value> StepBuilder::update(Value t, Value lr) {
  SmallVector<Value> newParams;
  SmallVector<SmallVector<Value>> newState(slots.size());
  for (auto [i, a] : llvm::enumerate(args.params)) {
    Value p = forwardArg[a];
    // The update runs in the pipeline stage of the parameter's first user.
    Attribute stage;
    for (Operation &op : forward.getBody().front())
      if (llvm::is_contained(op.getOperands(), forward.getArgument(a)))
        if ((stage = op.getAttr(TesselDialect::kStageAttrName)))
          break;
    Operation *beforeUpdate = &body->back();
    llvm::scope_exit tagStage([&] {
      if (stage)
        for (Operation *o = beforeUpdate->getNextNode(); o;
             o = o->getNextNode())
          o->setAttr(TesselDialect::kStageAttrName, stage);
    });
    Value p32 = e.toMaster(p);
    Value g = e.toMaster(grads[i]);
    SmallVector<Value> old, updated;
    for (unsigned sl = 0; sl < optimizerSlots; ++sl)
      old.push_back(state(sl, i));
    Value delta = optimizer->update(e, g, t, lr, old, updated);
    // Decoupled weight decay, on parameters of rank >= 2 only (and not on
    // embedding tables unless decay-embeddings).
    if (options.weightDecay > 0 &&
        cast<RankedTensorType>(p.getType()).getRank() >= 2 &&
        (options.decayEmbeddings || !isEmbeddingTable(a)))
      delta = e.add(delta, e.scale(p32, e.mul(lr, e.cst(options.weightDecay))));
    Value np = e.sub(p32, delta);
    if (np.getType() != p.getType())
      np = ConvertOp::create(b, e.loc, p.getType(), np);
    if (options.accumulate) {
      // Parameters and optimizer state change only when applied; the sum
      // restarts from zero then.
      np = applyIfAccumulated(np, p);
      for (unsigned sl = 0; sl < optimizerSlots; ++sl)
        updated[sl] = applyIfAccumulated(updated[sl], old[sl]);
      Value sum = gradSums[i];
      updated.push_back(
          applyIfAccumulated(e.broadcast(e.cst(0.0), sum), sum));
    }
    for (auto [sl, v] : llvm::enumerate(updated))
      newState[sl].push_back(v);
    newParams.push_back(np);
  }
  SmallVector<Value> results(newParams);
  for (const SmallVector<Value> &perSlot : newState)
    llvm::append_range(results, perSlot);
  return results;
}

/// Gradients of data arguments and repeated masks are not needed: drop
/// unused and duplicate pure ops so partitioning never sees them. A splat
/// CSE shared between unrelated tensors (a scalar broadcast to the shape of
/// two parameters' updates) would tie their layouts together in
/// propagation: ZeRO's optimizer state of one parameter would take the
/// layout of another's. Splats are free to materialize, so each user gets
/// its own.
void StepBuilder::cleanUp() {
  IRRewriter rewriter(forward.getContext());
  DominanceInfo dominance(step);
  eliminateCommonSubExpressions(rewriter, dominance, step);
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  for (Operation &op : llvm::make_early_inc_range(*body)) {
    auto splatConstant = dyn_cast<ConstantOp>(op);
    bool splat = (isa<BroadcastInDimOp>(op) &&
                  autodiff::typeOf(op.getOperand(0)).getRank() == 0) ||
                 (splatConstant && splatConstant.getValue().isSplat() &&
                  autodiff::typeOf(op.getResult(0)).getRank() > 0);
    if (!splat)
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op.getResult(0).getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      b.setInsertionPoint(use->getOwner());
      use->set(b.clone(op)->getResult(0));
    }
  }
}

} // namespace

FailureOr<func::FuncOp>
mlir::tessel::buildTrainStep(func::FuncOp forward, StringRef name,
                             const TrainStepOptions &options) {
  if (options.lr <= 0 || options.clipNorm < 0 || options.weightDecay < 0 ||
      options.warmupSteps < 0 || options.totalSteps < 0)
    return forward.emitError()
           << "train step options out of range: lr must be > 0; clip-norm, "
              "weight-decay, warmup and total-steps must be >= 0";
  FailureOr<Arguments> args = classify(forward, options);
  if (failed(args))
    return failure();
  // The function to differentiate: `forward`, or its mixed-precision copy.
  func::FuncOp source = forward;
  if (options.computeType) {
    FailureOr<func::FuncOp> cast =
        castCompute(forward, (name + ".__cast").str(), options.computeType);
    if (failed(cast))
      return failure();
    source = *cast;
  }
  llvm::scope_exit eraseCast([&] {
    if (source != forward)
      source->erase();
  });
  // The gradient function, built beside `forward` and inlined.
  FailureOr<func::FuncOp> grad =
      buildGradient(source, (name + ".__grad").str(), options.gradient);
  if (failed(grad))
    return failure();
  llvm::scope_exit eraseGrad([&] { (*grad)->erase(); });
  if (options.computeType && options.narrowSaved)
    narrowSavedActivations(*grad, options.computeType);
  return StepBuilder(forward, options, std::move(*args)).build(name, *grad);
}
