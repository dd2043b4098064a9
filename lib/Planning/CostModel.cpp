//===- CostModel.cpp - memory and step time of a parallel layout ----------===//
//
// docs/planning.md writes these equations out with their sources (ZeRO,
// Megatron-LM's activation and bubble formulas, alpha-beta links).
//
//===----------------------------------------------------------------------===//

#include "tessel/planning/CostModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mlir::tessel::planning;

namespace {

/// Of a layer's kept activations without sequence parallelism, the share
/// every tensor-parallel device holds whole (norm and dropout inputs, the
/// residual stream): Megatron-LM's 10 of 34 bytes per token and hidden
/// unit. Verification replaces it with the partitioned program's bytes.
constexpr double kReplicatedShare = 10.0 / 34.0;

/// Backward matmuls are twice the forward's.
constexpr double kBackwardShare = 2.0 / 3.0;

double layersOn(const ModelProfile &model, const Plan &plan) {
  return std::max<double>(1, double(model.layers)) / double(plan.pp);
}

/// The parameters a device holds once ep devices split the experts' (the
/// load is measured, or estimated, with every expert on each device).
double parametersOn(const ModelProfile &model, const DeviceLoad &load,
                    const Plan &plan) {
  if (plan.ep <= 1)
    return load.parameters;
  double experts = model.expertParameters / double(plan.tp * plan.pp);
  return std::max(0.0, load.parameters - experts * (1 - 1.0 / plan.ep));
}

/// The devices ZeRO shards over: the data-parallel ones that hold the same
/// experts (the mesh's dp axis).
double zeroGroup(const Plan &plan) { return double(plan.dp / plan.ep); }

/// Microbatches without a pipeline are accumulated: each one is a call of
/// the whole step.
bool accumulates(const Plan &plan) {
  return plan.pp == 1 && plan.microbatches > 1;
}

} // namespace

std::string Plan::describe() const {
  std::string s = llvm::formatv("dp={0} tp={1} pp={2}", dp, tp, pp).str();
  if (ep > 1)
    s += llvm::formatv(" ep={0}", ep).str();
  if (sequenceParallel)
    s += " sp";
  if (zero)
    s += llvm::formatv(" zero={0}", zero).str();
  s += llvm::formatv(" mb={0}x{1}", microbatches, microBatchSize).str();
  if (pp > 1)
    s += " " + schedule +
         (virtualStages > 1 ? llvm::formatv("/{0}", virtualStages).str()
                            : std::string());
  if (recompute != "none")
    s += " recompute=" + recompute;
  return s;
}

int64_t mlir::tessel::planning::gradientBuckets(
    llvm::ArrayRef<double> tensorBytes, double bucketBytes) {
  int64_t buckets = 0;
  double open = 0; // bytes in the open bucket
  for (double bytes : tensorBytes) {
    if (bytes > bucketBytes) {
      ++buckets;
      continue;
    }
    if (open > 0 && open + bytes > bucketBytes) {
      ++buckets;
      open = 0;
    }
    open += bytes;
  }
  return buckets + (open > 0 ? 1 : 0);
}

DeviceLoad mlir::tessel::planning::analyticLoad(const ModelProfile &model,
                                                const Plan &plan) {
  DeviceLoad l;
  double t = double(plan.tp), p = double(plan.pp);
  auto tpShare = [&](double bytes) {
    return plan.sequenceParallel
               ? bytes / t
               : bytes * (kReplicatedShare + (1 - kReplicatedShare) / t);
  };
  double inLayers = model.parameters - model.outsideLayerParameters;
  // The first stage also holds what is outside the layers (the embedding).
  l.parameters = (inLayers / p + model.outsideLayerParameters) / t;
  l.layers = layersOn(model, plan);
  l.keptBytesPerSample = tpShare(model.keptBytesPerSample / p);
  l.keptSelectiveBytesPerSample =
      tpShare(model.keptSelectiveBytesPerSample / p);
  l.selectiveFlopsPerSample = model.selectiveFlopsPerSample / (t * p);
  // The largest temporaries (logits, their softmax) are split over the
  // vocabulary; they are on the last stage whatever pp is.
  l.workingBytesPerSample = model.workingBytesPerSample / t;
  l.boundaryBytesPerSample =
      plan.sequenceParallel ? model.boundaryBytesPerSample / t
                            : model.boundaryBytesPerSample;
  // Megatron: two all-reduces of the residual stream per layer forward, two
  // backward (with sp: all-gathers and reduce-scatters of the same bytes).
  if (plan.tp > 1) {
    l.tpBytesPerSample =
        4 * 2 * (t - 1) / t * model.boundaryBytesPerSample * l.layers;
    l.tpCollectives = 4 * l.layers;
  }
  // A stage's share of the parameter tensors, and of the gradient buckets
  // (every tensor taken as split by tp).
  l.parameterTensors =
      std::max(1.0, double(model.parameterTensorElements.size()) / p);
  std::vector<double> gradientBytes;
  for (double n : model.parameterTensorElements)
    gradientBytes.push_back(n * model.perParameter.gradients / t);
  l.gradientBuckets = std::max(1.0, gradientBuckets(gradientBytes) / p);
  if (plan.pp > 1)
    l.ppBytesPerSample = 2 * l.boundaryBytesPerSample;
  // The most loaded stage: its share of the layers and what is outside
  // them (the head; Tessel's splitter balances by whole layers).
  double outside = p > 1 ? model.outsideLayerFlopsPerSample : 0;
  l.flopsPerSample = ((model.trainFlopsPerSample - outside) / p + outside) / t;
  l.forwardFlopsPerSample =
      model.forwardFlopsPerSample /
      std::max(1.0, model.trainFlopsPerSample) * l.flopsPerSample;
  l.balance = model.trainFlopsPerSample / (p * t) /
              std::max(1.0, l.flopsPerSample);
  // Norms, residual adds and dropout run on the whole hidden state on every
  // tp device unless sequence parallelism splits them too (as activations).
  l.trafficBytesPerSample = tpShare(model.trafficBytesPerSample / p);
  l.forwardTrafficBytesPerSample =
      tpShare(model.forwardTrafficBytesPerSample / p);
  return l;
}

double mlir::tessel::planning::inFlightMicrobatches(const Plan &plan) {
  double m = double(plan.microbatches), p = double(plan.pp);
  if (plan.pp == 1)
    return 1;
  if (plan.schedule == "gpipe")
    return m;
  double f = std::min(p, m);
  if (plan.schedule == "interleaved")
    return f * (1 + (p - 1) / (p * double(plan.virtualStages)));
  return f;
}

Memory mlir::tessel::planning::estimateMemory(const ModelProfile &model,
                                              const DeviceLoad &load,
                                              const Plan &plan) {
  Memory m;
  double d = zeroGroup(plan), psi = parametersOn(model, load, plan);
  const StateBytes &s = model.perParameter;
  m.weights = psi * (s.weights + s.computeCopies) / (plan.zero >= 3 ? d : 1);
  m.gradients = psi * s.gradients / (plan.zero >= 2 ? d : 1);
  m.optimizer = psi * s.optimizer / (plan.zero >= 1 ? d : 1);
  double b = double(plan.microBatchSize), inFlight = inFlightMicrobatches(plan);
  if (plan.recompute == "layers")
    m.activations =
        inFlight * b * load.boundaryBytesPerSample * load.layers +
        b * load.keptBytesPerSample / std::max(1.0, load.layers);
  else if (plan.recompute == "selective")
    m.activations = inFlight * b * load.keptSelectiveBytesPerSample;
  else
    m.activations = inFlight * b * load.keptBytesPerSample;
  m.working = b * load.workingBytesPerSample;
  // ZeRO-3 gathers a layer's weights before it runs, the next one early.
  if (plan.zero >= 3 && plan.dp > 1)
    m.working += 2 * psi / std::max(1.0, load.layers) * s.weights;
  return m;
}

namespace {

double transfer(const Link &link, double bytes, double collectives) {
  return bytes / link.bandwidth + collectives * link.latency;
}

/// Exposed data-parallel time: gradients reduced and weights gathered per
/// ZeRO stage, overlapping what the stage lets them overlap.
double dataParallelTime(const ModelProfile &model, const DeviceLoad &load,
                        const Plan &plan, const Hardware &hw,
                        double compute) {
  if (plan.dp == 1)
    return 0;
  int64_t perNode = hw.devicesPerNode;
  const Link &link =
      plan.tp * plan.dp <= perNode ? hw.intraNode : hw.interNode;
  double d = double(plan.dp), frac = (d - 1) / d, m = double(plan.microbatches);
  // Accumulating micro-steps (no pipeline) reduce their gradients each, as
  // Tessel compiles them (docs/autodiff.md); a pipeline once per step.
  double reductions = accumulates(plan) ? m : 1;
  double psi = parametersOn(model, load, plan);
  double w = psi * model.perParameter.weights;
  double g = psi * model.perParameter.gradients;
  // An all-reduce of the gradients (ZeRO-0 and 1) is bucketed; ZeRO's
  // reduce-scatters and gathers take each parameter tensor apart.
  double buckets = std::max(1.0, load.parameterTensors);
  double reduceBuckets = std::max(1.0, load.gradientBuckets);
  double backward = compute * kBackwardShare;
  switch (plan.zero) {
  case 0: // an all-reduce of the gradients beside the (last) backward
    return std::max(0.0, transfer(link, reductions * 2 * frac * g,
                                  reductions * reduceBuckets) -
                             hw.overlap * backward * reductions / m);
  case 1: // the same; the updated weights gathered after
    return std::max(0.0, transfer(link, reductions * 2 * frac * g,
                                  reductions * reduceBuckets) -
                             hw.overlap * backward * reductions / m) +
           transfer(link, frac * w, buckets);
  case 2: // a reduce-scatter per microbatch, beside every backward
    return std::max(0.0, transfer(link, m * frac * g, m * buckets) -
                             hw.overlap * backward) +
           transfer(link, frac * w, buckets);
  default: // weights gathered forward and backward, gradients scattered
    return std::max(0.0, transfer(link, m * frac * (2 * w + g),
                                  3 * m * buckets) -
                             hw.overlap * compute);
  }
}

/// Seconds of the memory-bound ops: the step's non-matmul traffic (the
/// forward's again where layers are recomputed) and the optimizer update,
/// which accumulating micro-steps each compute (and discard but the last's).
double memoryBoundTime(const ModelProfile &model, const DeviceLoad &load,
                       const Plan &plan, const Hardware &hw) {
  if (hw.memoryBandwidth <= 0)
    return 0;
  double samples = double(plan.microBatchSize * plan.microbatches);
  double bytes = load.trafficBytesPerSample * samples;
  if (plan.recompute == "layers")
    bytes += load.forwardTrafficBytesPerSample * samples;
  double update = parametersOn(model, load, plan) *
                  model.updateTrafficPerParameter /
                  (plan.zero >= 1 ? zeroGroup(plan) : 1);
  bytes += update * (accumulates(plan) ? double(plan.microbatches) : 1);
  return bytes / hw.memoryBandwidth;
}

/// Where the devices of a node share fewer compute units than they are,
/// a device waiting for a busier one lends it its unit: the step takes the
/// average device's work at the all-busy rate, or the busiest's at the
/// rate of a unit of its own, whichever is longer.
double sharedCompute(const Plan &plan, const Hardware &hw, double busiest,
                     double balance) {
  if (hw.computeUnitsPerNode <= 0)
    return busiest;
  double ranks = double(std::min(hw.devicesPerNode, plan.devices()));
  double alone = double(hw.computeUnitsPerNode) / ranks;
  return busiest * std::max(std::min(1.0, balance), std::min(1.0, alone));
}

/// The time a pipeline of `p` stages takes for `m` microbatches of `f`
/// forward and `b` backward work each (at the rate a device computes while
/// all compute) when its `ranks` devices, `ranks / p` per stage, share
/// `units` compute units: an event simulation of the schedule (1F1B, or
/// GPipe's all-forwards-first), in which the stages with work ready divide
/// the units between their devices, at most one unit a device.
double sharedPipelineTime(int64_t p, int64_t m, double f, double b,
                          double ranks, double units, bool gpipe) {
  struct Action {
    bool forward;
    int64_t mb;
  };
  std::vector<std::vector<Action>> order(p);
  for (int64_t s = 0; s < p; ++s) {
    int64_t warmup = gpipe ? m : std::min(m, p - s - 1);
    for (int64_t i = 0; i < warmup; ++i)
      order[s].push_back({true, i});
    for (int64_t i = warmup; i < m; ++i) {
      order[s].push_back({true, i});
      order[s].push_back({false, i - warmup});
    }
    for (int64_t i = m - warmup; i < m; ++i)
      order[s].push_back({false, i});
  }
  std::vector<char> doneF(p * m), doneB(p * m);
  std::vector<size_t> next(p, 0);
  std::vector<double> left(p);
  for (int64_t s = 0; s < p; ++s)
    left[s] = order[s][0].forward ? f : b;
  auto ready = [&](int64_t s) {
    if (next[s] == order[s].size())
      return false;
    Action a = order[s][next[s]];
    if (a.forward)
      return s == 0 || doneF[(s - 1) * m + a.mb];
    return s == p - 1 ? doneF[s * m + a.mb] != 0 : doneB[(s + 1) * m + a.mb] != 0;
  };
  double perStage = ranks / double(p), time = 0;
  for (;;) {
    std::vector<int64_t> running;
    for (int64_t s = 0; s < p; ++s)
      if (ready(s))
        running.push_back(s);
    if (running.empty())
      break;
    double share = std::min(1.0, units / (perStage * double(running.size())));
    double speed = share * ranks / units, step = HUGE_VAL;
    for (int64_t s : running)
      step = std::min(step, left[s] / speed);
    time += step;
    for (int64_t s : running) {
      left[s] -= step * speed;
      if (left[s] > 1e-12 * (f + b))
        continue;
      Action a = order[s][next[s]++];
      (a.forward ? doneF : doneB)[s * m + a.mb] = 1;
      if (next[s] < order[s].size())
        left[s] = order[s][next[s]].forward ? f : b;
    }
  }
  return time;
}

/// The bubble where the devices of a node share fewer compute units than
/// they are: a device idle in the bubble lends its unit to the stages that
/// have work, which the schedule's simulation follows (`busy`: a device's
/// work at the all-busy rate; `bubble`: the bubble of separate devices).
double sharedBubble(const Plan &plan, const Hardware &hw, double busy,
                    double bubble) {
  if (hw.computeUnitsPerNode <= 0)
    return bubble;
  double ranks = double(std::min(hw.devicesPerNode, plan.devices()));
  double units = double(hw.computeUnitsPerNode);
  if (ranks <= units || bubble <= 0)
    return bubble;
  double m = double(plan.microbatches);
  double separate = double(plan.pp - 1) * busy / m;
  double time = sharedPipelineTime(plan.pp, plan.microbatches,
                                   busy / m / 3, 2 * busy / m / 3, ranks,
                                   units, plan.schedule == "gpipe");
  // Schedules that shrink the bubble (interleaving, zero-bubble) shrink
  // the shared one alike.
  return std::max(0.0, time - busy) * bubble / separate;
}

} // namespace

StepTime mlir::tessel::planning::estimateTime(const ModelProfile &model,
                                              const DeviceLoad &load,
                                              const Plan &plan,
                                              const Hardware &hw) {
  StepTime t;
  double samples = double(plan.microBatchSize * plan.microbatches);
  double m = double(plan.microbatches);
  // Recomputing layers runs the forward (and its tp collectives) twice;
  // selective recomputation only the attention core's matmuls.
  bool layers = plan.recompute == "layers";
  double again = layers ? 1.5 : 1;
  double flops = load.flopsPerSample * samples;
  if (layers)
    flops += load.forwardFlopsPerSample * samples;
  else if (plan.recompute == "selective")
    flops += load.selectiveFlopsPerSample * samples;
  t.compute = sharedCompute(
      plan, hw,
      flops / (hw.peak(model.computeType) * hw.efficiency) +
          memoryBoundTime(model, load, plan, hw),
      load.balance);
  if (plan.tp > 1) {
    const Link &link =
        plan.tp <= hw.devicesPerNode ? hw.intraNode : hw.interNode;
    t.tp = transfer(link, load.tpBytesPerSample * samples * again,
                    load.tpCollectives * m * again);
  }
  if (plan.pp > 1) {
    const Link &link = plan.devices() <= hw.devicesPerNode ? hw.intraNode
                                                            : hw.interNode;
    t.pp = transfer(link, load.ppBytesPerSample * samples, 2 * m);
    double perMicrobatch = (t.compute + t.tp) / m;
    double share = plan.schedule == "interleaved"
                       ? 1.0 / double(plan.virtualStages)
                   : plan.schedule == "zb-h1" ? 1.0 / 3
                                              : 1.0;
    t.bubble = double(plan.pp - 1) * perMicrobatch * share;
    t.bubble = sharedBubble(plan, hw, t.compute + t.tp, t.bubble);
  }
  if (plan.ep > 1) {
    // Tokens to their experts and back, forward and backward: all-to-alls
    // within each group of ep data-parallel devices.
    const Link &link = plan.ep * plan.tp <= hw.devicesPerNode ? hw.intraNode
                                                              : hw.interNode;
    double e = double(plan.ep), p = double(plan.pp);
    double bytes = 2 * model.expertExchangeBytesPerSample / p * (e - 1) / e;
    t.ep = transfer(link, bytes * samples * again,
                    4 * model.moeLayers / p * m * again);
  }
  t.dp = dataParallelTime(model, load, plan, hw, t.compute);
  return t;
}

Estimate mlir::tessel::planning::estimate(const ModelProfile &model,
                                          const DeviceLoad &load,
                                          const Plan &plan,
                                          const Hardware &hw) {
  Estimate e;
  e.plan = plan;
  e.load = load;
  e.memory = estimateMemory(model, load, plan);
  e.time = estimateTime(model, load, plan, hw);
  e.fits = e.memory.total() <= hw.usableBytes();
  double samples =
      double(plan.dp * plan.microbatches * plan.microBatchSize);
  e.mfu = model.trainFlopsPerSample * samples /
          (e.time.total() * double(plan.devices()) *
           hw.peak(model.computeType));
  return e;
}

namespace {

std::vector<int64_t> divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t k = 1; k <= std::min(n, limit); ++k)
    if (n % k == 0)
      out.push_back(k);
  return out;
}

/// Expert-parallel degrees: those dividing both the data-parallel devices
/// and the experts (1 for a model without experts).
std::vector<int64_t> expertDegrees(const ModelProfile &model, int64_t dp) {
  std::vector<int64_t> out;
  for (int64_t ep : divisors(dp, std::max<int64_t>(1, model.experts)))
    if (ep == 1 || (model.experts % ep == 0 && model.expertParameters > 0))
      out.push_back(ep);
  return out;
}

} // namespace

std::vector<Plan>
mlir::tessel::planning::enumeratePlans(const ModelProfile &model,
                                       const SearchSpace &space,
                                       const Hardware &hw) {
  std::vector<Plan> plans;
  int64_t n = space.devices, layers = std::max<int64_t>(1, model.layers);
  int64_t maxTp = space.maxTp ? space.maxTp : hw.devicesPerNode;
  for (int64_t tp : divisors(n, maxTp))
    for (int64_t pp : divisors(n / tp, layers)) {
      if (layers % pp)
        continue;
      int64_t dp = n / (tp * pp);
      if (space.globalBatch % dp)
        continue;
      int64_t perReplica = space.globalBatch / dp;
      std::vector<std::pair<std::string, int64_t>> schedules = {{"1f1b", 1}};
      if (pp > 1) {
        schedules.push_back({"zb-h1", 1});
        if (layers % (2 * pp) == 0)
          schedules.push_back({"interleaved", 2});
      }
      std::vector<int64_t> sizes = divisors(perReplica, 64);
      if (space.modelBatch)
        sizes = {space.modelBatch % dp ? 0 : space.modelBatch / dp};
      for (int64_t b : sizes) {
        if (b < 1 || perReplica % b)
          continue;
        int64_t m = perReplica / b;
        if (pp > 1 && m < pp)
          continue;
        for (auto &[schedule, virtualStages] : schedules)
          for (int zero : space.zeroStages) {
            if (dp == 1 && zero)
              continue;
            for (const char *recompute : {"none", "selective", "layers"}) {
              if (recompute == llvm::StringRef("selective") &&
                  model.keptSelectiveBytesPerSample >=
                      model.keptBytesPerSample)
                continue;
              for (bool sp : {false, true})
                for (int64_t ep : expertDegrees(model, dp)) {
                  if (sp && tp == 1)
                    continue;
                  Plan p;
                  p.dp = dp, p.tp = tp, p.pp = pp, p.ep = ep;
                  p.sequenceParallel = sp;
                  p.zero = zero, p.microbatches = m, p.microBatchSize = b;
                  p.recompute = recompute, p.schedule = schedule;
                  p.virtualStages = virtualStages;
                  plans.push_back(p);
                }
            }
          }
      }
    }
  return plans;
}

std::vector<Estimate>
mlir::tessel::planning::rankPlans(const ModelProfile &model,
                                  llvm::ArrayRef<Plan> plans,
                                  const Hardware &hw) {
  std::vector<Estimate> out;
  out.reserve(plans.size());
  for (const Plan &p : plans)
    out.push_back(estimate(model, analyticLoad(model, p), p, hw));
  std::stable_sort(out.begin(), out.end(), betterPlan);
  return out;
}

bool mlir::tessel::planning::betterPlan(const Estimate &a,
                                        const Estimate &b) {
  if (a.fits != b.fits)
    return a.fits;
  if (!a.fits)
    return a.memory.total() < b.memory.total();
  double ta = a.time.total(), tb = b.time.total();
  if (std::abs(ta - tb) > 1e-9 * std::max(ta, tb))
    return ta < tb;
  // As fast: the lower ZeRO stage (less to go wrong), then less memory.
  if (a.plan.zero != b.plan.zero)
    return a.plan.zero < b.plan.zero;
  return a.memory.total() < b.memory.total();
}
