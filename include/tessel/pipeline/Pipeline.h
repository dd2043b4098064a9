//===- Pipeline.h - Pipeline stages and the split of a train step -*- C++ -*-===//
//
// Pipeline parallelism in two steps (docs/pipelines.md):
//  * assignStages tags the ops of a forward function with `tessel.stage`
//    (from layer boundaries, from a balanced cost estimate, or checking the
//    user's tags); the train step's backward and update inherit the tags;
//  * splitPipeline turns a partitioned train step whose mesh has a
//    pipeline axis into one per-device function per rank of that axis, the
//    schedule's microbatch loop unrolled into it, with the values that cross
//    stages sent and received over the axis.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PIPELINE_PIPELINE_H
#define TESSEL_PIPELINE_PIPELINE_H

#include "tessel/pipeline/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::tessel {

/// How assignStages chooses stages: `stages` stages; `boundaries` is
/// "auto" (contiguous layers balanced by estimated FLOPs), "tags" (the ops'
/// own `tessel.stage`, checked) or the first layer of each stage ("0,3,6").
struct StageAssignment {
  int64_t stages = 1;
  std::string boundaries = "auto";
};

/// Tags `forward`'s ops with their stage; prints one line per stage (its
/// layers and estimated cost) to `report` when given.
LogicalResult assignStages(func::FuncOp forward, const StageAssignment &how,
                           llvm::raw_ostream *report = nullptr);

struct PipelineSplitOptions {
  std::string func = "train_step";
  std::string axis = "pp";
  ::tessel::pipeline::ScheduleOptions schedule;
};

/// The attribute splitPipeline leaves on the module: the schedule's kind,
/// ranks, virtual stages, microbatches, axis, mesh and stage functions.
inline constexpr llvm::StringLiteral kPipelineAttrName = "tessel.pipeline";
/// On each stage function: its rank along the axis, and the names of its
/// regions (tessel.region): its actions in order, then "optimizer".
inline constexpr llvm::StringLiteral kPipelineRankAttrName =
    "tessel.pipeline_rank";
inline constexpr llvm::StringLiteral kRegionsAttrName = "tessel.regions";

/// Replaces the per-device function `options.func` by `<func>_<axis><r>`
/// for each rank r of the pipeline axis, each on a sub-mesh
/// `@<mesh>_<axis><r>` (the mesh without the axis, at that coordinate).
LogicalResult splitPipeline(ModuleOp module, const PipelineSplitOptions &options);

/// The schedule a split module runs (from its kPipelineAttrName).
FailureOr<::tessel::pipeline::ScheduleOptions>
pipelineScheduleOf(ModuleOp module);

} // namespace mlir::tessel

#endif // TESSEL_PIPELINE_PIPELINE_H
