//===- Profile.cpp - a model's costs, read off Tessel's own passes --------===//

#include "tessel/planning/Profile.h"

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/planning/ProgramCosts.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::planning;

std::string planning::trainStepPipeline(StringRef funcName,
                                        StringRef optimizer) {
  auto [name, rest] = optimizer.trim().split(' ');
  return ("tessel-train-step{func=" + funcName + " optimizer=" +
          (name.empty() ? StringRef("adamw") : name) + " " + rest.trim() + "}")
      .str();
}

namespace {

StringRef argName(func::FuncOp f, unsigned i) {
  if (auto name = f.getArgAttrOfType<StringAttr>(i, TesselDialect::kNameAttrName))
    return name.getValue();
  return "";
}

/// Data: integer arguments and those with a "batch" logical axis (the
/// training step's rule, docs/autodiff.md); the batch dimension's index,
/// or -1 for a parameter.
int64_t batchDim(func::FuncOp f, unsigned i) {
  auto type = dyn_cast<RankedTensorType>(f.getArgument(i).getType());
  if (!type)
    return -1;
  if (auto axes = f.getArgAttrOfType<ArrayAttr>(
          i, TesselDialect::kLogicalAxesAttrName))
    for (auto [d, axis] : llvm::enumerate(axes))
      if (auto s = dyn_cast<StringAttr>(axis); s && s.getValue() == "batch")
        return int64_t(d);
  return isa<FloatType>(type.getElementType()) ? -1 : 0;
}

bool hasRole(Operation *op, StringRef role) {
  auto r = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
  return r && r.getValue() == role;
}

double elements(Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  return type && type.hasStaticShape() ? double(type.getNumElements()) : 0;
}

/// Parameters, those outside every layer, the layer count, the batch and
/// tokens per sample, read off the forward.
LogicalResult readForward(func::FuncOp f, ModelProfile &p,
                          std::string &error) {
  bool sawData = false;
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    Value arg = f.getArgument(i);
    int64_t dim = batchDim(f, i);
    if (dim >= 0) {
      auto type = cast<RankedTensorType>(arg.getType());
      if (!sawData && type.getRank() > dim) {
        sawData = true;
        p.programBatch = type.getDimSize(dim);
        p.tokensPerSample = elements(type) / double(p.programBatch);
      }
      continue;
    }
    double n = elements(arg.getType());
    p.parameters += n;
    p.parameterTensorElements.push_back(n);
    if (auto axes = f.getArgAttrOfType<ArrayAttr>(
            i, TesselDialect::kLogicalAxesAttrName))
      for (auto [d, axis] : llvm::enumerate(axes))
        if (auto name = dyn_cast<StringAttr>(axis);
            name && name.getValue() == "expert") {
          p.expertParameters += n;
          p.experts = std::max(
              p.experts, cast<RankedTensorType>(arg.getType()).getDimSize(d));
        }
    if (llvm::none_of(arg.getUsers(), [](Operation *user) {
          return user->hasAttr(TesselDialect::kLayerAttrName);
        }))
      p.outsideLayerParameters += n;
  }
  if (!sawData) {
    error = "@" + f.getName().str() +
            " has no data argument (an integer one, or one with a \"batch\" "
            "logical axis): the planner needs the batch to scale by";
    return failure();
  }
  int64_t layers = 0;
  f.walk([&](Operation *op) {
    if (auto l = op->getAttrOfType<IntegerAttr>(TesselDialect::kLayerAttrName))
      layers = std::max(layers, l.getInt() + 1);
  });
  p.layers = layers;
  return success();
}

/// The largest value one layer hands the next (the residual stream), in
/// the training step's forward (so in its compute type).
int64_t boundaryBytes(func::FuncOp step) {
  int64_t best = 0;
  step.walk([&](Operation *op) {
    auto layer = op->getAttrOfType<IntegerAttr>(TesselDialect::kLayerAttrName);
    if (!layer)
      return;
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers()) {
        auto next =
            user->getAttrOfType<IntegerAttr>(TesselDialect::kLayerAttrName);
        if (next && next.getInt() == layer.getInt() + 1)
          best = std::max(best, tensorBytes(r.getType()));
      }
  });
  return best;
}

/// The tensors a mixture-of-experts layer sends to its experts and back in
/// `f`'s forward ([expert, capacity, embed] dispatched and combined, as
/// their logical axes say): their bytes, and how many there are.
std::pair<double, int64_t> expertExchange(func::FuncOp f) {
  double bytes = 0;
  int64_t count = 0;
  f.walk([&](Operation *op) {
    auto role = op->getAttrOfType<StringAttr>(TesselDialect::kRoleAttrName);
    if (role && role.getValue() != "forward")
      return;
    auto axes =
        op->getAttrOfType<ArrayAttr>(TesselDialect::kLogicalAxesAttrName);
    if (!axes || op->getNumResults() != 1)
      return;
    auto has = [&](StringRef name) {
      return llvm::any_of(axes, [&](Attribute a) {
        auto s = dyn_cast<StringAttr>(a);
        return s && s.getValue() == name;
      });
    };
    if ((has("expert") || has("act_expert")) && has("capacity") &&
        has("act_embed")) {
      bytes += double(tensorBytes(op->getResult(0).getType()));
      ++count;
    }
  });
  return {bytes, count};
}

/// The training step of `module`'s `funcName`, on a copy.
llvm::Expected<OwningOpRef<ModuleOp>>
buildStep(ModuleOp module, StringRef funcName, StringRef optimizer) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  PassManager pm(module->getContext());
  std::string pipeline = trainStepPipeline(funcName, optimizer);
  std::string parseError;
  llvm::raw_string_ostream os(parseError);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return llvm::createStringError("--optimizer: " + os.str());
  if (failed(pm.run(*copy)))
    return llvm::createStringError("building the training step failed (" +
                                   pipeline + ")");
  if (!copy->lookupSymbol<func::FuncOp>("train_step"))
    return llvm::createStringError("the training step has no @train_step");
  return copy;
}

} // namespace

llvm::Expected<ModelProfile>
planning::profileModel(ModuleOp module, StringRef funcName,
                       StringRef optimizer) {
  auto forward = module.lookupSymbol<func::FuncOp>(funcName);
  if (!forward || forward.isExternal())
    return llvm::createStringError("the model has no function @" +
                                   funcName.str() + " to plan");
  ModelProfile p;
  p.name = funcName.str();
  std::string error;
  if (failed(readForward(forward, p, error)))
    return llvm::createStringError(error);

  llvm::Expected<OwningOpRef<ModuleOp>> built =
      buildStep(module, funcName, optimizer);
  if (!built)
    return built.takeError();
  OwningOpRef<ModuleOp> copy = std::move(*built);
  auto step = copy->lookupSymbol<func::FuncOp>("train_step");

  auto [optimizerName, rest] = optimizer.trim().split(' ');
  std::string prefix = (optimizerName.empty() ? "adamw" : optimizerName.str()) + ".";
  double weightBytes = 0, stateBytes = 0;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    if (batchDim(step, i) >= 0)
      continue;
    double bytes = double(tensorBytes(step.getArgument(i).getType()));
    (argName(step, i).starts_with(prefix) ? stateBytes
                                                      : weightBytes) += bytes;
  }
  double n = std::max(1.0, p.parameters);
  p.perParameter = {weightBytes / n, weightBytes / n, stateBytes / n};
  // The parameters' type, unless the step computes in another.
  p.computeType = "f32";
  for (BlockArgument arg : forward.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType());
        t && isa<FloatType>(t.getElementType())) {
      llvm::raw_string_ostream os(p.computeType);
      p.computeType.clear();
      os << t.getElementType();
      break;
    }
  for (StringRef option : llvm::split(rest, ' '))
    if (option.consume_front("compute-type="))
      p.computeType = option.str();

  double b = double(p.programBatch);
  MemoryEstimate memory = estimateMemory(step);
  // What the backward keeps that no data flows into (the compute-type
  // copies of the weights) does not grow with the batch.
  double copies = double(memory.keptWithoutData);
  p.perParameter.computeCopies = copies / n;
  double kept = std::max<int64_t>(0, memory.keptForBackward);
  p.keptBytesPerSample = std::max(0.0, kept - copies) / b;
  p.workingBytesPerSample =
      std::max(0.0, double(memory.peakBeforeUpdate) - kept - weightBytes) / b;
  p.trainFlopsPerSample = matmulFlops(step) / b;
  p.outsideLayerFlopsPerSample =
      matmulFlops(step, [](Operation *op) {
        return !op->hasAttr(TesselDialect::kLayerAttrName);
      }) /
      b;
  // Selective recomputation: the same step with recompute=tagged.
  p.keptSelectiveBytesPerSample = p.keptBytesPerSample;
  if (!optimizer.contains("recompute=")) {
    llvm::Expected<OwningOpRef<ModuleOp>> tagged =
        buildStep(module, funcName, (optimizer + " recompute=tagged").str());
    if (!tagged)
      return tagged.takeError();
    auto taggedStep = (*tagged)->lookupSymbol<func::FuncOp>("train_step");
    MemoryEstimate taggedMemory = estimateMemory(taggedStep);
    p.keptSelectiveBytesPerSample =
        std::max(0.0, double(taggedMemory.keptForBackward) -
                          double(taggedMemory.keptWithoutData)) /
        b;
    p.selectiveFlopsPerSample =
        std::max(0.0, matmulFlops(taggedStep) / b - p.trainFlopsPerSample);
  }
  // What layer recomputation runs again: the forward inside the layers.
  auto inLayer = [](Operation *op) {
    return op->hasAttr(TesselDialect::kLayerAttrName);
  };
  p.forwardFlopsPerSample = matmulFlops(forward, inLayer) / b;
  p.trafficBytesPerSample =
      memoryTrafficBytes(step,
                         [](Operation *op) {
                           return !hasRole(op, "optimizer");
                         }) /
      b;
  p.forwardTrafficBytesPerSample =
      memoryTrafficBytes(step,
                         [&](Operation *op) {
                           return hasRole(op, "forward") && inLayer(op);
                         }) /
      b;
  p.updateTrafficPerParameter =
      memoryTrafficBytes(step,
                         [&](Operation *op) {
                           return hasRole(op, "optimizer");
                         }) /
      n;
  p.boundaryBytesPerSample = double(boundaryBytes(step)) / b;
  if (p.expertParameters > 0) {
    // In the step's forward (the compute type), else the model's.
    auto [bytes, count] = expertExchange(step);
    if (count == 0)
      std::tie(bytes, count) = expertExchange(forward);
    p.expertExchangeBytesPerSample = bytes / b;
    p.moeLayers = double(count) / 2;
  }
  return p;
}

namespace {

/// The functions one rank runs: the pipeline's per-rank steps, or the step.
SmallVector<func::FuncOp> rankFunctions(ModuleOp local) {
  SmallVector<func::FuncOp> out;
  if (auto pipeline = local->getAttrOfType<DictionaryAttr>("tessel.pipeline"))
    if (auto functions = pipeline.getAs<ArrayAttr>("functions"))
      for (Attribute f : functions)
        if (auto ref = dyn_cast<FlatSymbolRefAttr>(f))
          if (auto func = local.lookupSymbol<func::FuncOp>(ref.getValue()))
            out.push_back(func);
  if (out.empty())
    if (auto step = local.lookupSymbol<func::FuncOp>("train_step"))
      out.push_back(step);
  return out;
}

} // namespace

llvm::Expected<DeviceLoad> planning::measureLoad(ModuleOp local,
                                                 const ModelProfile &model,
                                                 const Plan &plan,
                                                 int64_t microbatches) {
  SmallVector<func::FuncOp> ranks = rankFunctions(local);
  if (ranks.empty())
    return llvm::createStringError("the partitioned program has no step");
  // Activations stay the profile's, divided by the layout: the liveness
  // estimate's "kept for backward" of partitioned programs does not yet
  // agree with the unpartitioned step's (docs/planning.md).
  DeviceLoad l = analyticLoad(model, plan);
  l.measured = true;
  l.parameters = l.tpBytesPerSample = l.ppBytesPerSample = 0;
  l.tpCollectives = l.parameterTensors = l.gradientBuckets = 0;
  l.flopsPerSample = l.trafficBytesPerSample = 0;
  double samples = double(model.programBatch * microbatches);
  double flopsSum = 0;
  for (func::FuncOp rank : ranks) {
    double params = 0, tensors = 0;
    std::vector<double> gradientBytes;
    for (unsigned i = 0; i < rank.getNumArguments(); ++i) {
      if (batchDim(rank, i) >= 0)
        continue;
      // Optimizer state is named "<optimizer>.<what>.<parameter>".
      StringRef name = argName(rank, i);
      if (llvm::any_of(ArrayRef<StringRef>{"adamw.", "sgd.", "adam."},
                       [&](StringRef prefix) {
                         return name.starts_with(prefix);
                       }))
        continue;
      double n = elements(rank.getArgument(i).getType());
      params += n;
      tensors += 1;
      gradientBytes.push_back(n * model.perParameter.gradients);
    }
    l.parameters = std::max(l.parameters, params);
    l.parameterTensors = std::max(l.parameterTensors, tensors);
    l.gradientBuckets = std::max(
        l.gradientBuckets, double(gradientBuckets(gradientBytes)));
    l.tpCollectives = std::max(
        l.tpCollectives,
        collectiveCountsByAxes(rank)["tp"] / double(microbatches));
    std::map<std::string, double> sent = sentBytesByAxes(rank);
    l.tpBytesPerSample = std::max(l.tpBytesPerSample, sent["tp"] / samples);
    l.ppBytesPerSample = std::max(l.ppBytesPerSample, sent["pp"] / samples);
    double flops = matmulFlops(rank) / samples;
    flopsSum += flops;
    l.flopsPerSample = std::max(l.flopsPerSample, flops);
    l.trafficBytesPerSample =
        std::max(l.trafficBytesPerSample,
                 memoryTrafficBytes(rank,
                                    [](Operation *op) {
                                      return !hasRole(op, "optimizer");
                                    }) /
                     samples);
  }
  l.balance = flopsSum / double(ranks.size()) / std::max(1.0, l.flopsPerSample);
  // What the program was not compiled with scales as in the profile.
  double perTrainFlop = l.flopsPerSample / std::max(1.0, model.trainFlopsPerSample);
  l.forwardFlopsPerSample = model.forwardFlopsPerSample * perTrainFlop;
  l.selectiveFlopsPerSample = model.selectiveFlopsPerSample * perTrainFlop;
  l.forwardTrafficBytesPerSample =
      model.forwardTrafficBytesPerSample * l.trafficBytesPerSample /
      std::max(1.0, model.trafficBytesPerSample);
  return l;
}

llvm::Expected<std::vector<double>>
planning::compiledPeakBytes(ModuleOp local) {
  SmallVector<func::FuncOp> ranks = rankFunctions(local);
  if (ranks.empty())
    return llvm::createStringError("the partitioned program has no step");
  std::vector<double> out;
  for (func::FuncOp rank : ranks) {
    MemoryEstimate e = estimateMemory(rank);
    out.push_back(double(e.arguments + e.peakBeforeUpdate));
  }
  return out;
}
