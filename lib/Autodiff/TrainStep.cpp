//===- TrainStep.cpp - forward function to training step -----------------===//
//
// The training step is one function: the forward and backward (from
// buildGradient), the global gradient norm and clipping, the learning-rate
// schedule and the optimizer update. Written in tessel ops only, it is
// propagated and partitioned as a whole (GSPMD-style), so gradient
// all-reduces and the norm's cross-shard reduction come out of partitioning.
//
//===----------------------------------------------------------------------===//

#include "tessel/autodiff/Autodiff.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include "tessel/dialects/tessel/Emit.h"

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

namespace {

/// The update's arithmetic on top of Emit: scalars are rank 0 in the master
/// precision (f32, or f64 when a parameter is f64).
struct Emitter : autodiff::Emit {
  RankedTensorType scalar;

  Value cst(double v) { return createSplat(b, loc, scalar, v); }
  /// `s` (rank 0) converted and broadcast to `like`'s type.
  Value broadcast(Value s, Value like) {
    RankedTensorType t = autodiff::typeOf(like);
    RankedTensorType st = autodiff::typeOf(s);
    if (st.getElementType() != t.getElementType())
      s = ConvertOp::create(b, loc, st.clone(t.getElementType()), s);
    return BroadcastInDimOp::create(b, loc, t, s, ArrayRef<int64_t>{});
  }
  using Emit::scale;
  Value scale(Value x, Value s) { return mul(x, broadcast(s, x)); }
  Value toMaster(Value x) {
    RankedTensorType t = autodiff::typeOf(x);
    if (t.getElementType() == scalar.getElementType())
      return x;
    return ConvertOp::create(b, loc, t.clone(scalar.getElementType()), x);
  }
  Value sumAll(Value x) {
    if (autodiff::typeOf(x).getRank() == 0) // a scalar parameter
      return x;
    return ReduceOp::create(
        b, loc, ReduceKind::sum, x,
        llvm::to_vector(llvm::seq<int64_t>(0, autodiff::typeOf(x).getRank())));
  }
};

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

} // namespace

FailureOr<func::FuncOp>
mlir::tessel::buildTrainStep(func::FuncOp forward, StringRef name,
                             const TrainStepOptions &options) {
  if (options.lr <= 0 || options.clipNorm < 0 || options.weightDecay < 0 ||
      options.warmupSteps < 0 || options.totalSteps < 0)
    return forward.emitError()
           << "train step options out of range: lr must be > 0; clip-norm, "
              "weight-decay, warmup and total-steps must be >= 0";
  MLIRContext *ctx = forward.getContext();
  Location loc = forward.getLoc();
  unsigned numArgs = forward.getNumArguments();

  // Which arguments are parameters.
  SmallVector<bool> isParam(numArgs, false);
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
    isParam[a] = !batchAxis;
  }
  SmallVector<unsigned> params, data;
  for (unsigned a = 0; a < numArgs; ++a)
    (isParam[a] ? params : data).push_back(a);
  if (params.empty())
    return forward.emitError()
           << "has no parameters to train; hint: parameters are the float "
              "arguments without a \"batch\" logical axis that are not "
              "named in batch=";

  // The function to differentiate: `forward`, or its mixed-precision copy.
  func::FuncOp source = forward;
  if (options.computeType) {
    FailureOr<func::FuncOp> cast =
        castCompute(forward, (name + ".__cast").str(), options.computeType);
    if (failed(cast))
      return failure();
    source = *cast;
  }
  auto eraseCast = llvm::make_scope_exit([&] {
    if (source != forward)
      source->erase();
  });
  // The gradient function, built beside `forward` and inlined below.
  std::string gradName = (name + ".__grad").str();
  FailureOr<func::FuncOp> grad =
      buildGradient(source, gradName, options.gradient);
  if (failed(grad))
    return failure();
  auto eraseGrad = llvm::make_scope_exit([&] { (*grad)->erase(); });

  bool adam = options.optimizer == TrainStepOptions::Optimizer::AdamW;
  SmallVector<StringRef> slots =
      adam ? SmallVector<StringRef>{"m", "v"} : SmallVector<StringRef>{"mom"};
  unsigned optimizerSlots = slots.size();
  // Gradient accumulation keeps the running gradient sum as one more slot.
  if (options.accumulate)
    slots.push_back("accum");
  StringRef optName = adam ? "adamw" : "sgd";

  // Signature: params, opt state (per slot, per param), data, step.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  auto attrsOf = [&](unsigned a) { return forward.getArgAttrDict(a); };
  auto paramName = [&](unsigned a) -> std::string {
    auto n =
        forward.getArgAttrOfType<StringAttr>(a, TesselDialect::kNameAttrName);
    return n ? n.str() : "arg" + std::to_string(a);
  };
  OpBuilder b(ctx);
  bool anyF64 = llvm::any_of(params, [&](unsigned a) {
    return cast<RankedTensorType>(forward.getArgumentTypes()[a])
        .getElementType()
        .isF64();
  });
  Type master = anyF64 ? Type(b.getF64Type()) : Type(b.getF32Type());
  Emitter e{{b, loc}, RankedTensorType::get({}, master)};
  // What the runtime does with each argument and result.
  auto role = [&](StringRef r) {
    return b.getNamedAttr(TesselDialect::kRuntimeRoleAttrName,
                          b.getStringAttr(r));
  };
  auto slotRole = [&](StringRef slot) {
    return slot == "accum" ? "accumulator" : "optimizer_state";
  };
  for (unsigned a : params) {
    argTypes.push_back(forward.getArgumentTypes()[a]);
    NamedAttrList attrs(attrsOf(a));
    attrs.set(TesselDialect::kRuntimeRoleAttrName,
              b.getStringAttr("parameter"));
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  for (StringRef slot : slots)
    for (unsigned a : params) {
      // Optimizer state is in master precision with its parameter's
      // sharding and logical axes.
      auto t = cast<RankedTensorType>(forward.getArgumentTypes()[a]);
      argTypes.push_back(t.clone(master));
      NamedAttrList attrs(attrsOf(a));
      // ZeRO: the state may be laid out differently from the parameter.
      if (Attribute stateSharding =
              attrs.erase(TesselDialect::kStateShardingAttrName))
        attrs.set(TesselDialect::kShardingAttrName, stateSharding);
      attrs.set(TesselDialect::kNameAttrName,
                b.getStringAttr(optName + "." + slot + "." + paramName(a)));
      attrs.set(TesselDialect::kInitAttrName, b.getStringAttr("zeros"));
      attrs.set(TesselDialect::kRuntimeRoleAttrName,
                b.getStringAttr(slotRole(slot)));
      argAttrs.push_back(attrs.getDictionary(ctx));
    }
  for (unsigned a : data) {
    argTypes.push_back(forward.getArgumentTypes()[a]);
    argAttrs.push_back(attrsOf(a));
  }
  auto scalarArg = [&](Type type, StringRef argName, StringRef init,
                       StringRef argRole) {
    argTypes.push_back(RankedTensorType::get({}, type));
    argAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(TesselDialect::kNameAttrName,
                        b.getStringAttr(argName)),
         b.getNamedAttr(TesselDialect::kInitAttrName, b.getStringAttr(init)),
         role(argRole)}));
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

  SmallVector<Type> resultTypes;
  SmallVector<std::string> resultNames;
  SmallVector<StringRef> resultRoles;
  for (unsigned a : params) {
    resultTypes.push_back(forward.getArgumentTypes()[a]);
    resultNames.push_back(paramName(a));
    resultRoles.push_back("parameter");
  }
  for (StringRef slot : slots)
    for (unsigned a : params) {
      resultTypes.push_back(
          cast<RankedTensorType>(forward.getArgumentTypes()[a])
              .clone(master));
      resultNames.push_back((optName + "." + slot + "." + paramName(a)).str());
      resultRoles.push_back(slotRole(slot));
    }
  auto lossType = cast<RankedTensorType>(forward.getResultTypes()[0]);
  resultTypes.push_back(lossType);
  resultNames.push_back("loss");
  resultRoles.push_back("loss");
  resultTypes.push_back(e.scalar);
  resultNames.push_back("grad_norm");
  resultRoles.push_back("grad_norm");

  b.setInsertionPointAfter(forward);
  auto step = func::FuncOp::create(b, loc, name,
                                   b.getFunctionType(argTypes, resultTypes));
  step.setAllArgAttrs(argAttrs);
  for (auto [i, n] : llvm::enumerate(resultNames)) {
    step.setResultAttr(i, TesselDialect::kNameAttrName, b.getStringAttr(n));
    step.setResultAttr(i, TesselDialect::kRuntimeRoleAttrName,
                       b.getStringAttr(resultRoles[i]));
    // New parameters and state are laid out as their arguments, so that a
    // step's results feed the next step as they are.
    if (i < params.size() * (1 + slots.size()))
      if (Attribute sharding = argAttrs[i].get(TesselDialect::kShardingAttrName))
        step.setResultAttr(i, TesselDialect::kShardingAttrName, sharding);
  }
  Block *body = step.addEntryBlock();
  b.setInsertionPointToStart(body);

  // Where each forward argument lives in the train step.
  SmallVector<Value> forwardArg(numArgs);
  for (auto [i, a] : llvm::enumerate(params))
    forwardArg[a] = body->getArgument(i);
  unsigned dataStart = params.size() * (1 + slots.size());
  for (auto [i, a] : llvm::enumerate(data))
    forwardArg[a] = body->getArgument(dataStart + i);
  auto state = [&](unsigned slot, unsigned p) {
    return body->getArgument(params.size() * (1 + slot) + p);
  };
  Value stepArg = body->getArgument(body->getNumArguments() - 1);
  unsigned scalarsEnd = body->getNumArguments() - 1; // before step
  Value lrArg;
  if (options.lrArgument)
    lrArg = body->getArgument(--scalarsEnd);
  Value applyArg, gradScaleArg;
  if (options.accumulate) {
    gradScaleArg = body->getArgument(--scalarsEnd);
    applyArg = body->getArgument(--scalarsEnd);
  }

  // Inline the gradient function.
  IRMapping map;
  Block &gradBody = grad->getBody().front();
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
  Operation *lastGradientOp = &body->back();
  Value loss = gradResults[0];
  // buildGradient returns a gradient per float argument, in order.
  SmallVector<Value> grads;
  {
    unsigned r = 1;
    for (unsigned a = 0; a < numArgs; ++a) {
      if (!autodiff::isDifferentiable(forward.getArgumentTypes()[a]))
        continue;
      if (isParam[a])
        grads.push_back(gradResults[r]);
      ++r;
    }
  }

  // Accumulation: the step's gradient is (running sum + this micro-step's
  // gradient) * grad_scale; the new running sum is kept unless applied.
  SmallVector<Value> gradSums;
  if (options.accumulate) {
    Value gradScale = ConvertOp::create(b, loc, e.scalar, gradScaleArg);
    for (unsigned i = 0; i < grads.size(); ++i) {
      Value sum = e.add(state(optimizerSlots, i), e.toMaster(grads[i]));
      gradSums.push_back(sum);
      grads[i] = e.scale(sum, gradScale);
    }
  }

  // Global gradient norm and clipping. The squares are summed in f64: a
  // sum of millions of f32 squares drifts (3.7e-6 relative on a tiny GPT,
  // growing with size); the norm is then used in master precision.
  Value sq;
  for (Value g : grads) {
    RankedTensorType t = autodiff::typeOf(g);
    Value g64 = t.getElementType().isF64()
                    ? g
                    : ConvertOp::create(b, loc, t.clone(b.getF64Type()), g)
                          .getResult();
    Value s = e.sumAll(e.mul(g64, g64));
    sq = sq ? e.add(sq, s) : s;
  }
  Value norm = e.sqrt(sq);
  if (!e.scalar.getElementType().isF64())
    norm = ConvertOp::create(b, loc, e.scalar, norm);
  if (options.clipNorm > 0) {
    Value clip = e.min(e.cst(1.0), e.div(e.cst(options.clipNorm),
                                         e.add(norm, e.cst(1e-6))));
    for (Value &g : grads)
      g = e.scale(g, clip);
  }

  // Schedule: t is the 1-based update number.
  Value t = e.add(ConvertOp::create(b, loc, e.scalar, stepArg), e.cst(1.0));
  Value lr = learningRate(
      e, t, options,
      lrArg ? ConvertOp::create(b, loc, e.scalar, lrArg).getResult() : Value());

  SmallVector<Value> newParams;
  SmallVector<SmallVector<Value>> newState(slots.size());
  for (auto [i, a] : llvm::enumerate(params)) {
    Value p = forwardArg[a];
    // The update runs in the pipeline stage of the parameter's first user.
    Attribute stage;
    for (Operation &op : forward.getBody().front())
      if (llvm::is_contained(op.getOperands(), forward.getArgument(a)))
        if ((stage = op.getAttr(TesselDialect::kStageAttrName)))
          break;
    Operation *beforeUpdate = &body->back();
    auto tagStage = llvm::make_scope_exit([&] {
      if (stage)
        for (Operation *o = beforeUpdate->getNextNode(); o;
             o = o->getNextNode())
          o->setAttr(TesselDialect::kStageAttrName, stage);
    });
    Value p32 = e.toMaster(p);
    Value g = e.toMaster(grads[i]);
    bool decay =
        options.weightDecay > 0 &&
        cast<RankedTensorType>(p.getType()).getRank() >= 2;
    Value update;
    if (adam) {
      Value m = e.add(e.scale(state(0, i), e.cst(options.beta1)),
                      e.scale(g, e.cst(1.0 - options.beta1)));
      Value v = e.add(e.scale(state(1, i), e.cst(options.beta2)),
                      e.scale(e.mul(g, g), e.cst(1.0 - options.beta2)));
      newState[0].push_back(m);
      newState[1].push_back(v);
      // Bias corrections 1 - beta^t.
      Value bc1 = e.sub(e.cst(1.0), PowOp::create(b, loc, e.cst(options.beta1), t));
      Value bc2 = e.sub(e.cst(1.0), PowOp::create(b, loc, e.cst(options.beta2), t));
      Value denom = e.add(e.scale(e.sqrt(v), e.div(e.cst(1.0), e.sqrt(bc2))),
                          e.broadcast(e.cst(options.epsilon), v));
      update = e.scale(e.div(m, denom), e.div(lr, bc1));
    } else {
      Value mom = e.add(e.scale(state(0, i), e.cst(options.momentum)), g);
      newState[0].push_back(mom);
      update = e.scale(mom, lr);
    }
    if (decay)
      update = e.add(update, e.scale(p32, e.mul(lr, e.cst(options.weightDecay))));
    Value np = e.sub(p32, update);
    if (np.getType() != p.getType())
      np = ConvertOp::create(b, loc, p.getType(), np);
    if (options.accumulate) {
      // Parameters and optimizer state change only when applied; the sum
      // restarts from zero then.
      Value applied = CompareOp::create(
          b, loc, CompareDirection::ne, applyArg,
          createSplat(b, loc, autodiff::typeOf(applyArg), 0.0));
      auto choose = [&](Value updated, Value old) -> Value {
        RankedTensorType t = autodiff::typeOf(updated);
        Value pred = BroadcastInDimOp::create(
            b, loc, t.clone(b.getI1Type()), applied, ArrayRef<int64_t>{});
        return SelectOp::create(b, loc, pred, updated, old);
      };
      np = choose(np, p);
      for (unsigned sl = 0; sl < optimizerSlots; ++sl)
        newState[sl].back() = choose(newState[sl].back(), state(sl, i));
      Value sum = gradSums[i];
      newState[optimizerSlots].push_back(
          choose(e.broadcast(e.cst(0.0), sum), sum));
    }
    newParams.push_back(np);
  }

  SmallVector<Value> results(newParams);
  for (unsigned s = 0; s < slots.size(); ++s)
    llvm::append_range(results, newState[s]);
  results.push_back(loss);
  results.push_back(norm);
  for (Operation *o = lastGradientOp->getNextNode(); o; o = o->getNextNode())
    o->setAttr(TesselDialect::kRoleAttrName, b.getStringAttr("optimizer"));
  func::ReturnOp::create(b, loc, results);

  // Gradients of data arguments and repeated masks are not needed: drop
  // unused and duplicate pure ops so partitioning never sees them.
  IRRewriter rewriter(ctx);
  DominanceInfo dominance(step);
  eliminateCommonSubExpressions(rewriter, dominance, step);
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  // A splat CSE shared between unrelated tensors (a scalar broadcast to the
  // shape of two parameters' updates) would tie their layouts together in
  // propagation: ZeRO's optimizer state of one parameter would take the
  // layout of another's. Splats are free to materialize, so each user gets
  // its own.
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
  return step;
}
