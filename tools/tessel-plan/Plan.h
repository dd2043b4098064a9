//===- Plan.h - tessel-plan's parts ---------------------------------------===//

#ifndef TESSEL_TOOLS_TESSEL_PLAN_PLAN_H
#define TESSEL_TOOLS_TESSEL_PLAN_PLAN_H

#include "tessel/planning/CostModel.h"

#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel_plan {

using mlir::tessel::planning::Estimate;
using mlir::tessel::planning::Hardware;
using mlir::tessel::planning::ModelProfile;

/// How to run tessel-compile on one plan.
struct VerifyContext {
  std::string compiler;  // the tessel-compile beside tessel-plan
  std::string model;     // the model file
  std::string func, optimizer;
  std::string scratch;   // a directory for the partitioned programs
};

/// Plans with the same key compile to the same per-device program with
/// dp=1: tp, pp, sp, the schedule and the microbatches verified.
std::string layoutKey(const mlir::tessel::planning::Plan &plan);

/// A layout being compiled by tessel-compile (in the background).
struct PendingLayout {
  std::string key;
  mlir::tessel::planning::Plan layout;
  std::string local, log;
  llvm::sys::ProcessInfo process;
};

/// Starts compiling `plan`'s layout; nullopt (with `why`) when it cannot.
std::optional<PendingLayout> startLayout(const VerifyContext &ctx,
                                         const mlir::tessel::planning::Plan &plan,
                                         std::string &why);
/// Waits for it and reads the most loaded device's load off the program.
std::optional<mlir::tessel::planning::DeviceLoad>
finishLayout(const ModelProfile &model, PendingLayout &pending,
             std::string &why);

/// Compiles the plan's tp x pp layout (dp=1) with tessel-compile --emit
/// local and reads the most loaded device's load off the per-device
/// program; nullopt (with `why`) when Tessel cannot compile it.
std::optional<mlir::tessel::planning::DeviceLoad>
measureLayout(const VerifyContext &ctx, const ModelProfile &model,
              const mlir::tessel::planning::Plan &plan, std::string &why);

/// Compiles `e`'s plan exactly (tessel-compile --plan, the model's batch
/// being one microbatch of every replica) and reads each stage's memory per
/// device off the program; nullopt (with `why`) when it cannot.
std::optional<std::vector<double>> compiledMemory(const VerifyContext &ctx,
                                     const ModelProfile &model,
                                     const Estimate &e, llvm::StringRef gpu,
                                     std::string &why);

/// The header (model, hardware, search), the table of the first `top`
/// plans, and why the first wins against the best of each alternative.
void printReport(llvm::raw_ostream &os, const ModelProfile &model,
                 const Hardware &hw, llvm::StringRef hardwareName,
                 const std::vector<Estimate> &ranked, size_t searched,
                 size_t top);

} // namespace tessel_plan

#endif // TESSEL_TOOLS_TESSEL_PLAN_PLAN_H
