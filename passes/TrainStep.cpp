//===- TrainStep.cpp - --tessel-train-step --------------------------------===//

#include "tessel/autodiff/Autodiff.h"
#include "tessel/passes/Passes.h"
#include "tessel/planning/ProgramCosts.h"
#include "tessel/program/Program.h"

#define DEBUG_TYPE "tessel-train-step"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELTRAINSTEPPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselTrainStepPass
    : mlir::tessel::impl::TesselTrainStepPassBase<TesselTrainStepPass> {
  using TesselTrainStepPassBase::TesselTrainStepPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(funcName);
    if (!forward) {
      module.emitError() << "no function @" << funcName
                         << " to build a train step from; hint: name the "
                            "loss function with func=";
      return signalPassFailure();
    }
    if (module.lookupSymbol(stepName)) {
      forward.emitError() << "a symbol @" << stepName
                          << " already exists; hint: choose name=";
      return signalPassFailure();
    }
    TrainStepOptions o;
    if (optimizer == "adamw") {
      o.optimizer = TrainStepOptions::Optimizer::AdamW;
    } else if (optimizer == "sgd") {
      o.optimizer = TrainStepOptions::Optimizer::SGD;
    } else {
      forward.emitError() << "unknown optimizer '" << optimizer
                          << "'; expected adamw or sgd";
      return signalPassFailure();
    }
    o.lr = lr;
    o.warmupSteps = warmup;
    o.totalSteps = totalSteps;
    o.minLrRatio = minLrRatio;
    o.momentum = momentum;
    o.beta1 = beta1;
    o.beta2 = beta2;
    o.epsilon = epsilon;
    o.weightDecay = weightDecay;
    o.decayEmbeddings = decayEmbeddings;
    o.clipNorm = clipNorm;
    o.lrArgument = lrArgument;
    o.accumulate = accumulate;
    o.batchNames.assign(batchNames.begin(), batchNames.end());
    std::optional<Recompute> policy = parseRecompute(recompute);
    if (!policy) {
      forward.emitError() << "unknown recompute policy '" << recompute
                          << "'; expected none, layers or tagged";
      return signalPassFailure();
    }
    o.gradient.recompute = *policy;
    o.gradient.reshardAfterForward = reshardAfterForward;
    o.narrowSaved = !saveF32Activations;
    if (computeType == "bf16") {
      o.computeType = BFloat16Type::get(&getContext());
    } else if (computeType == "f16") {
      o.computeType = Float16Type::get(&getContext());
    } else if (!computeType.empty() && computeType != "f32") {
      forward.emitError() << "unknown compute-type '" << computeType
                          << "'; expected bf16, f16 or f32";
      return signalPassFailure();
    }
    // The model's FLOPs per step for the runtime's MFU, PaLM's convention:
    // the backward is twice the forward; recomputation does not count.
    double modelFlops = 3 * planning::matmulFlops(forward);
    if (failed(buildTrainStep(forward, stepName, o)))
      return signalPassFailure();
    module->setAttr(::tessel::program::kModelFlopsAttrName,
                    FloatAttr::get(Float64Type::get(&getContext()),
                                   modelFlops));
  }
};
} // namespace
