//===- CostModel.h - memory and step time of a parallel layout --*- C++ -*-===//
//
// The planner's cost model (docs/planning.md has the equations): for a
// model profiled off its own training step, a hardware description and a
// plan (dp x tp x pp degrees, sequence parallelism, ZeRO stage,
// microbatches, recomputation, pipeline schedule), the memory per device
// by category and the step time split into compute, exposed communication
// and the pipeline bubble.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PLANNING_COSTMODEL_H
#define TESSEL_PLANNING_COSTMODEL_H

#include "tessel/passes/Buckets.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::tessel::planning {

/// A class of links: time = latency + bytes / bandwidth.
struct Link {
  std::string name;
  double bandwidth = 0; // bytes per second one device sends
  double latency = 0;   // seconds per collective
};

/// A device and how devices connect (a data file: data/hardware/*.json).
struct Hardware {
  std::string name;
  double memoryBytes = 0;
  /// The fraction of memoryBytes a plan may fill (the rest: the runtime,
  /// fragmentation, communication buffers).
  double usableFraction = 0.9;
  /// Dense matmul peak per compute type ("bf16", "f32", ...), FLOP/s.
  std::map<std::string, double> peakFlops;
  /// The fraction of the peak large matmuls reach in a training step.
  double efficiency = 0.5;
  /// The fraction of a data-parallel collective that overlaps the compute
  /// it may run beside.
  double overlap = 0.9;
  int64_t devicesPerNode = 8;
  /// Compute units the devices of a node share, or 0 when each device has
  /// its own (GPUs). A CPU running more ranks than it has cores: the peak
  /// is then a rank's rate while every rank of the node computes, and a
  /// rank idle in a pipeline bubble lends its core to the others.
  int64_t computeUnitsPerNode = 0;
  /// Bytes per second the element-wise kernels move through a device's
  /// memory (HBM; a CPU rank's share of DRAM), or 0 to leave memory-bound
  /// ops out of the step time (matmuls only).
  double memoryBandwidth = 0;
  Link intraNode, interNode;

  /// The peak for `computeType`; the largest for an unknown type.
  double peak(llvm::StringRef computeType) const;
  double usableBytes() const { return memoryBytes * usableFraction; }
};

llvm::Expected<Hardware> parseHardware(const llvm::json::Value &value,
                                       llvm::StringRef source);
/// A name (h100: <dir>/h100.json in the first of `dirs` that has it) or a
/// path to a JSON file.
llvm::Expected<Hardware> loadHardware(llvm::StringRef nameOrPath,
                                      llvm::ArrayRef<std::string> dirs);

/// Bytes per parameter of each kind of training state.
struct StateBytes {
  double weights = 0, gradients = 0, optimizer = 0;
  /// Copies of the weights in the compute type, converted in the forward
  /// and kept for the backward (mixed precision: 2 bytes).
  double computeCopies = 0;
  double total() const { return weights + gradients + optimizer; }
};

/// A model's costs on one device, read off its unpartitioned training step
/// (Profile.h); per sample where they grow with the batch.
struct ModelProfile {
  std::string name;
  double parameters = 0;
  /// Parameters outside every tessel.layer (embeddings, final norm, head).
  double outsideLayerParameters = 0;
  /// Each parameter tensor's elements, in argument order: ZeRO scatters
  /// and gathers each apart; gradient buckets pack them.
  std::vector<double> parameterTensorElements;
  StateBytes perParameter;
  int64_t layers = 0;
  int64_t programBatch = 1;
  double tokensPerSample = 1;
  std::string computeType = "f32";
  /// Matmul FLOPs of the training step (forward and backward) and of the
  /// forward's layers alone (what layer recomputation runs again).
  double trainFlopsPerSample = 0, forwardFlopsPerSample = 0;
  /// Of the training step's, those outside every layer (the head): a
  /// pipeline's last stage runs them beside its layers.
  double outsideLayerFlopsPerSample = 0;
  /// Bytes the step's other ops (element-wise, reductions, softmax, norms:
  /// ProgramCosts.h's memoryTrafficBytes) move, forward and backward, and
  /// the forward's layers alone; and per parameter, the optimizer update's.
  double trafficBytesPerSample = 0, forwardTrafficBytesPerSample = 0;
  double updateTrafficPerParameter = 0;
  /// Activations live between forward and backward; with selective
  /// recomputation (recompute=tagged: the attention core's S x S tensors
  /// recomputed), and the matmul FLOPs that adds.
  double keptBytesPerSample = 0;
  double keptSelectiveBytesPerSample = 0, selectiveFlopsPerSample = 0;
  /// Temporaries beyond those at the step's peak (gradients excluded).
  double workingBytesPerSample = 0;
  /// A layer's input (the residual stream), what recomputation keeps.
  double boundaryBytesPerSample = 0;
  /// Mixture of experts: the parameters of the experts (arguments with an
  /// "expert" logical axis), how many experts a layer has, its MoE layers,
  /// and the bytes per sample the forward sends to the experts and back
  /// (the dispatched and combined [expert, capacity, embed] tensors).
  double expertParameters = 0;
  int64_t experts = 0;
  double moeLayers = 0;
  double expertExchangeBytesPerSample = 0;
};

/// A parallel layout with its training options.
struct Plan {
  /// dp counts every data-parallel replica; ep of them (ep divides dp)
  /// split the experts between them (DeepSpeed-MoE, Megatron's expert
  /// parallelism): compiled as the mesh dp=dp/ep, ep=ep.
  int64_t dp = 1, tp = 1, pp = 1, ep = 1;
  bool sequenceParallel = false;
  int zero = 0; // ZeRO stage 0-3
  /// Per step and data-parallel replica: microbatches (pipeline
  /// microbatches or gradient accumulation) of microBatchSize samples.
  int64_t microbatches = 1, microBatchSize = 1;
  /// "none", "selective" (recompute=tagged) or "layers".
  std::string recompute = "none";
  std::string schedule = "1f1b"; // with pp > 1: 1f1b, interleaved, zb-h1, gpipe
  int64_t virtualStages = 1;

  int64_t devices() const { return dp * tp * pp; }
  /// "dp=4 tp=8 pp=2 zero=1 mb=1x128 1f1b" and the like.
  std::string describe() const;
};

/// What the most loaded device of a tp x pp layout holds, computes and
/// sends, before data parallelism and ZeRO: the screen's estimate
/// (analyticLoad) or read off the partitioned program (`measured`).
struct DeviceLoad {
  double parameters = 0;
  double keptBytesPerSample = 0, workingBytesPerSample = 0;
  double keptSelectiveBytesPerSample = 0, selectiveFlopsPerSample = 0;
  double boundaryBytesPerSample = 0; // one layer's input on this device
  double layers = 0;                 // layers on this device
  double tpBytesPerSample = 0, ppBytesPerSample = 0;
  /// Tensor-parallel collectives per microbatch; parameter tensors held
  /// (one ZeRO scatter or gather each); the all-reduces of one
  /// data-parallel gradient reduction, bucketed (gradientBuckets).
  double tpCollectives = 0, parameterTensors = 0, gradientBuckets = 0;
  double flopsPerSample = 0, forwardFlopsPerSample = 0;
  /// Bytes the non-matmul ops move (memoryTrafficBytes), all and forward.
  double trafficBytesPerSample = 0, forwardTrafficBytesPerSample = 0;
  /// The average device's work over the most loaded one's (pipeline
  /// stages are not exactly even): 1 without pipelining.
  double balance = 1;
  bool measured = false;
};
DeviceLoad analyticLoad(const ModelProfile &model, const Plan &plan);

/// The all-reduces one data-parallel gradient reduction takes as
/// --tessel-optimize-collectives combines them: a gradient larger than a
/// bucket alone, the others packed in order into buckets of at most
/// `bucketBytes` (docs/partitioning.md).
int64_t gradientBuckets(llvm::ArrayRef<double> tensorBytes,
                        double bucketBytes = double(kGradientBucketBytes));

struct Memory {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0,
         working = 0;
  double total() const {
    return weights + gradients + optimizer + activations + working;
  }
};

struct StepTime {
  /// Matmuls at the calibrated rate and the other ops' bytes at the memory
  /// bandwidth, recomputation and the optimizer update included.
  double compute = 0;
  double tp = 0, pp = 0, dp = 0, ep = 0; // exposed communication
  double bubble = 0;
  double total() const { return compute + tp + pp + dp + ep + bubble; }
};

struct Estimate {
  Plan plan;
  DeviceLoad load;
  Memory memory;
  StepTime time;
  double mfu = 0; // model FLOPs (no recomputation) / (time x devices x peak)
  bool fits = false;
  /// Bytes per device read off the plan compiled exactly (its liveness,
  /// Profile.h's compiledPeakBytes): the most loaded device's, and each
  /// pipeline stage's (stage 0 first); 0 / empty when it was not compiled.
  double compiledMemory = 0;
  std::vector<double> compiledMemoryByStage;
};

/// Microbatches whose activations the most loaded device keeps at once.
double inFlightMicrobatches(const Plan &plan);
Memory estimateMemory(const ModelProfile &model, const DeviceLoad &load,
                      const Plan &plan);
StepTime estimateTime(const ModelProfile &model, const DeviceLoad &load,
                      const Plan &plan, const Hardware &hw);
Estimate estimate(const ModelProfile &model, const DeviceLoad &load,
                  const Plan &plan, const Hardware &hw);

/// What tessel-plan searches.
struct SearchSpace {
  int64_t devices = 1;
  int64_t globalBatch = 1; // samples per optimizer step
  int64_t maxTp = 0;       // 0: the devices of one node
  std::vector<int> zeroStages = {0, 1, 2, 3};
  /// Only plans whose compiled batch, one microbatch of every data-parallel
  /// replica (dp x microbatch size), is this (0: any): the model file's own
  /// batch, which tessel-compile --plan then compiles as it is.
  int64_t modelBatch = 0;
};

/// Every plan of `space` the model admits (degrees dividing the devices,
/// the layers and the batch; a pipeline with at least as many microbatches
/// as stages), in a fixed order.
std::vector<Plan> enumeratePlans(const ModelProfile &model,
                                 const SearchSpace &space,
                                 const Hardware &hw);

/// The ranking: plans that fit first, by step time; as fast, the lower
/// ZeRO stage, then the smaller memory. Plans that do not fit by memory.
bool betterPlan(const Estimate &a, const Estimate &b);

/// Estimates every plan (analytically), ranked by betterPlan.
std::vector<Estimate> rankPlans(const ModelProfile &model,
                                llvm::ArrayRef<Plan> plans,
                                const Hardware &hw);

} // namespace mlir::tessel::planning

#endif // TESSEL_PLANNING_COSTMODEL_H
