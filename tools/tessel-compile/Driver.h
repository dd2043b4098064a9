//===- Driver.h - what tessel-compile's files share -----------------------===//

#ifndef TESSEL_TOOLS_TESSEL_COMPILE_DRIVER_H
#define TESSEL_TOOLS_TESSEL_COMPILE_DRIVER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "tessel/planning/PlanFile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>
#include <vector>

namespace mlir::tessel {
struct CpuSelection;
} // namespace mlir::tessel

namespace tessel_compile {

/// Prints "tessel-compile: error: MESSAGE" and returns 1.
int failWith(const llvm::Twine &message);

/// What the end of the flow needs of the command line.
struct NativeOptions {
  std::string output; // -o
  std::string emit;   // llvm, obj or exe
  std::string target; // --target
  unsigned optLevel = 2;
  unsigned largeHostFunction = 0;
};

/// The libraries an executable of `target` links after its objects; empty
/// when this Tessel was built without that target's runtime.
std::vector<std::string> runtimeLibraries(llvm::StringRef target);

/// Translates the LLVM-dialect `module` to LLVM IR, optimizes it and writes
/// the object file(s) (or the IR, for --emit llvm); then links. Host code
/// is for `cpu` on every target. Returns the exit code.
int emitNative(mlir::ModuleOp module, const mlir::tessel::CpuSelection &cpu,
               const NativeOptions &options, mlir::TimingScope &root);

/// With --custom-calls LIBS: loads them and checks that every custom
/// call's kernel has the entry `target` runs (NAME on cpu,
/// tessel_cuda_NAME on cuda) in one of them (an error on the op naming the
/// kernel).
llvm::LogicalResult checkCustomCalls(mlir::ModuleOp module,
                                     llvm::StringRef libraries,
                                     llvm::StringRef target);

/// With --plan: the forward's batch must be the plan's (one microbatch of
/// every data-parallel replica); an error naming both otherwise.
llvm::LogicalResult checkPlanBatch(mlir::ModuleOp module,
                                   llvm::StringRef funcName,
                                   int64_t modelBatch);

/// Copies the --custom-calls libraries into OUTPUT.kernels/, where the
/// executable loads them when run without --custom-calls. Returns the exit
/// code.
int copyKernelLibraries(llvm::StringRef libraries, llvm::StringRef output);

/// --pipeline "key=value ...": the stage assignment and the split.
struct PipelineRequest {
  std::string axis = "pp", schedule = "1f1b", stages = "auto";
  int64_t microbatches = 1, virtualStages = 1;
};
llvm::Expected<PipelineRequest> parsePipeline(llvm::StringRef spec);

/// --optimizer "NAME key=value ..." as --tessel-train-step options, in the
/// spellings PyTorch users type too (Options.cpp); an unknown key is an
/// error naming the nearest known one.
llvm::Expected<std::string> optimizerOptions(llvm::StringRef spec);

/// What `--plan auto` plans for.
struct AutoPlanRequest {
  std::string input, func, optimizer, hardware;
  int64_t devices = 0, globalBatch = 0;
};

/// Runs the tessel-plan beside this executable (`argv0`) on the model, for
/// plans that compile its batch as it is, prints its report to stderr and returns
/// the path of the plan it wrote (a temporary file for the caller to
/// remove); an error carries tessel-plan's message.
llvm::Expected<std::string> planAutomatically(const char *argv0,
                                              const AutoPlanRequest &request);

/// The options of --plan `planFile`: a file tessel-plan --emit wrote, or
/// with "auto" one planAutomatically writes (needs request's devices and
/// global batch).
llvm::Expected<mlir::tessel::planning::CompileOptions>
loadPlan(const char *argv0, llvm::StringRef planFile,
         const AutoPlanRequest &request);

} // namespace tessel_compile

#endif // TESSEL_TOOLS_TESSEL_COMPILE_DRIVER_H
