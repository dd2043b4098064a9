//===- Profile.h - a model's costs, read off Tessel's own passes -*- C++ -*-===//
//
// The planner gets its numbers from the program, not from a formula of a
// model family: the training step Tessel builds (parameters, optimizer
// state, matmul FLOPs, the activations the backward keeps) and, for the
// plans it verifies, the partitioned per-device program (what each device
// holds and sends).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PLANNING_PROFILE_H
#define TESSEL_PLANNING_PROFILE_H

#include "tessel/planning/CostModel.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::tessel::planning {

/// Builds the training step of `module`'s forward `funcName` with
/// `optimizer` (tessel-compile's --optimizer: "adamw compute-type=bf16")
/// on a copy, and profiles it. Needs Tessel's passes registered.
llvm::Expected<ModelProfile> profileModel(ModuleOp module,
                                          llvm::StringRef funcName,
                                          llvm::StringRef optimizer);

/// The most loaded device of `local`, the per-device program tessel-compile
/// --emit local makes of `plan` with dp=1 (its tp, pp, sp and schedule),
/// `microbatches` microbatches of the program's batch per step.
llvm::Expected<DeviceLoad> measureLoad(ModuleOp local,
                                       const ModelProfile &model,
                                       const Plan &plan,
                                       int64_t microbatches);

/// The bytes each rank function of `local` (a plan compiled exactly, by
/// tessel-compile --plan --emit local) holds before its update: its step's
/// arguments plus the liveness peak (--tessel-memory-report, calls counted
/// with their callees' peaks); one per pipeline stage (the stage's ranks
/// run the same function), a single one without a pipeline.
llvm::Expected<std::vector<double>> compiledPeakBytes(ModuleOp local);

/// "adamw compute-type=bf16" -> the tessel-train-step pipeline element.
std::string trainStepPipeline(llvm::StringRef funcName,
                              llvm::StringRef optimizer);

} // namespace mlir::tessel::planning

#endif // TESSEL_PLANNING_PROFILE_H
