//===- AutoPlan.cpp - tessel-compile --plan auto --------------------------===//
//
// Plans in place of the user: runs the tessel-plan beside this
// tessel-compile on the model (plans whose compiled batch, dp x microbatch,
// is the model's own, so the file compiles as it is), shows its ranking and
// reasoning, and hands back the plan it wrote. docs/planning.md.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace tessel_compile;

llvm::Expected<std::string>
tessel_compile::planAutomatically(const char *argv0, const AutoPlanRequest &r) {
  llvm::SmallString<256> planner(llvm::sys::path::parent_path(
      llvm::sys::fs::getMainExecutable(argv0,
                                       reinterpret_cast<void *>(&failWith))));
  llvm::sys::path::append(planner, "tessel-plan");
  if (!llvm::sys::fs::can_execute(planner))
    return llvm::createStringError("--plan auto runs tessel-plan, which is "
                                   "not beside this tessel-compile (" +
                                   planner.str() + ")");
  llvm::SmallString<128> plan, report;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tessel-auto", "json", plan))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tessel-auto", "txt", report))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  std::string devices = std::to_string(r.devices);
  std::string batch = std::to_string(r.globalBatch);
  llvm::SmallVector<llvm::StringRef> argv = {
      planner,       r.input,       "--devices",          devices,
      "--global-batch", batch,      "--gpu",              r.hardware,
      "--func",      r.func,        "--optimizer",        r.optimizer,
      "--model-batch-only", "--top", "5",                 "--emit",
      plan};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, report.str(),
                                                report.str()};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(planner, argv, std::nullopt, redirects,
                                     0, 0, &error);
  auto text = llvm::MemoryBuffer::getFile(report);
  std::string output = text ? (*text)->getBuffer().str() : std::string();
  llvm::sys::fs::remove(report);
  if (rc != 0) {
    llvm::sys::fs::remove(plan);
    return llvm::createStringError(
        "--plan auto: tessel-plan could not plan this model: " +
        (output.empty() ? error : output));
  }
  llvm::errs() << "tessel-compile: --plan auto: tessel-plan chose the first "
                  "plan below\n"
               << output;
  return plan.str().str();
}

llvm::Expected<mlir::tessel::planning::CompileOptions>
tessel_compile::loadPlan(const char *argv0, llvm::StringRef planFile,
                         const AutoPlanRequest &request) {
  if (planFile != "auto")
    return mlir::tessel::planning::readPlanFile(planFile);
  if (request.devices < 1 || request.globalBatch < 1)
    return llvm::createStringError(
        "--plan auto needs --devices N and --global-batch B");
  llvm::Expected<std::string> path = planAutomatically(argv0, request);
  if (!path)
    return path.takeError();
  auto plan = mlir::tessel::planning::readPlanFile(*path);
  llvm::sys::fs::remove(*path);
  return plan;
}
