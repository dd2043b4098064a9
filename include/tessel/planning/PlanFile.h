//===- PlanFile.h - a plan as tessel-compile options ------------*- C++ -*-===//
//
// `tessel-plan --emit plan.json` writes the chosen plan; `tessel-compile
// --plan plan.json` reads it back as the options it stands for: the mesh,
// the logical-axis rules (data, tensor and sequence parallelism, the ZeRO
// stage), the pipeline and the training-step options.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PLANNING_PLANFILE_H
#define TESSEL_PLANNING_PLANFILE_H

#include "tessel/planning/CostModel.h"

namespace mlir::tessel::planning {

struct CompileOptions {
  std::string mesh;      // "dp=4,tp=8,pp=2"
  std::string rules;     // logical-axis rules, JSON text
  std::string pipeline;  // --pipeline value, empty without pipeline
  std::string optimizerOptions; // added to --optimizer ("recompute=layers")
  /// The forward's batch the plan compiles: one microbatch of every
  /// data-parallel replica (dp x microBatchSize).
  int64_t modelBatch = 1;
  /// Without a pipeline and with several microbatches: gradient
  /// accumulation, run with --batch-size globalBatch.
  bool accumulate = false;
  int64_t globalBatch = 1;
};

CompileOptions compileOptions(const Plan &plan);

/// The plan file: the options, the plan's degrees and what was predicted.
llvm::json::Value planToJson(const Estimate &e, const ModelProfile &model,
                             llvm::StringRef hardware);
llvm::Expected<CompileOptions> readPlanFile(llvm::StringRef path);

} // namespace mlir::tessel::planning

#endif // TESSEL_PLANNING_PLANFILE_H
