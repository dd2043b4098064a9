//===- Verify.cpp - a plan checked against the partitioned program --------===//
//
// The screen estimates every plan from the model's one-device profile; the
// plans it ranks first are compiled by tessel-compile (--emit local, the
// same flow an executable goes through) with their tp and pp and dp=1, and
// re-estimated from what each device of that program holds, computes and
// sends (planning::measureLoad). Data parallelism and ZeRO only divide
// those numbers and add gradient traffic, which the equations give exactly.
//
//===----------------------------------------------------------------------===//

#include "Plan.h"

#include "tessel/planning/PlanFile.h"
#include "tessel/planning/Profile.h"

#include "tessel/dialects/tessel/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;
using namespace mlir::tessel::planning;

namespace {

/// Microbatches the verification compiles: enough for the schedule's
/// steady state (the first stage keeps pp of them), no more.
int64_t verifyMicrobatches(const Plan &plan) {
  if (plan.pp == 1)
    return 1;
  return std::min(plan.microbatches, plan.pp * plan.virtualStages);
}

std::string lastLines(llvm::StringRef text, size_t n) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.trim().split(lines, '\n');
  size_t from = lines.size() > n ? lines.size() - n : 0;
  std::string out;
  for (size_t i = from; i < lines.size(); ++i)
    out += (out.empty() ? "" : " / ") + lines[i].trim().str();
  return out;
}

/// After tessel-compile ran (`rc`, its output in `log`): parses the
/// per-device program it wrote at `local` and reads it with `read`;
/// nullopt (with `why`) when the compile failed or `read` does.
template <typename T>
std::optional<T>
readCompiled(int rc, const std::string &error, const std::string &log,
             const std::string &local,
             llvm::function_ref<llvm::Expected<T>(ModuleOp)> read,
             std::string &why) {
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    why = "tessel-compile failed" +
          (text ? ": " + lastLines((*text)->getBuffer(), 2) : error);
    return std::nullopt;
  }
  MLIRContext context;
  DialectRegistry registry;
  registry.insert<tessel::TesselDialect, func::FuncDialect,
                  arith::ArithDialect>();
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(local, &context);
  if (!module) {
    why = "cannot read " + local;
    return std::nullopt;
  }
  llvm::Expected<T> value = read(*module);
  if (!value) {
    why = llvm::toString(value.takeError());
    return std::nullopt;
  }
  llvm::sys::fs::remove(local);
  return std::move(*value);
}

} // namespace

/// The schedule does not change what a device computes or sends per
/// sample, only when; interleaving (v stages per rank) does.
std::string tessel_plan::layoutKey(const Plan &plan) {
  return llvm::formatv("tp{0}-pp{1}{2}-v{3}-m{4}", plan.tp, plan.pp,
                       plan.sequenceParallel ? "-sp" : "", plan.virtualStages,
                       verifyMicrobatches(plan))
      .str();
}

namespace {

Plan verifiedLayout(const Plan &plan) {
  Plan layout = plan;
  // Data and expert parallelism divide what one device of this layout
  // holds and sends by equations (CostModel.cpp): compiled without them.
  layout.dp = 1;
  layout.ep = 1;
  layout.zero = 0;
  layout.recompute = "none";
  layout.microbatches = verifyMicrobatches(plan);
  if (layout.pp > 1)
    layout.schedule = layout.virtualStages > 1 ? "interleaved" : "1f1b";
  return layout;
}

} // namespace

std::optional<tessel_plan::PendingLayout>
tessel_plan::startLayout(const VerifyContext &ctx, const Plan &plan,
                         std::string &why) {
  PendingLayout p;
  p.key = layoutKey(plan);
  p.layout = verifiedLayout(plan);
  CompileOptions options = compileOptions(p.layout);
  std::string stem = ctx.scratch + "/" + p.key;
  std::string rules = stem + ".rules.json";
  p.local = stem + ".mlir";
  p.log = stem + ".log";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(rules, ec);
    if (ec) {
      why = "cannot write " + rules + ": " + ec.message();
      return std::nullopt;
    }
    os << options.rules;
  }
  std::vector<std::string> args = {ctx.compiler,  ctx.model,
                                   "--func",      ctx.func,
                                   "--optimizer", ctx.optimizer,
                                   "--mesh",      options.mesh,
                                   "--rules",     rules,
                                   "--emit",      "local",
                                   "-o",          p.local};
  if (!options.pipeline.empty()) {
    args.push_back("--pipeline");
    args.push_back(options.pipeline);
  }
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, p.log, p.log};
  std::string error;
  bool failed = false;
  p.process = llvm::sys::ExecuteNoWait(ctx.compiler, argv, std::nullopt,
                                       redirects, 0, &error, &failed);
  if (failed) {
    why = "cannot run " + ctx.compiler + ": " + error;
    return std::nullopt;
  }
  return p;
}

std::optional<DeviceLoad>
tessel_plan::finishLayout(const ModelProfile &model, PendingLayout &p,
                          std::string &why) {
  std::string error;
  llvm::sys::ProcessInfo done =
      llvm::sys::Wait(p.process, std::nullopt, &error);
  return readCompiled<DeviceLoad>(
      done.ReturnCode, error, p.log, p.local,
      [&](ModuleOp local) {
        return measureLoad(local, model, p.layout, p.layout.microbatches);
      },
      why);
}

std::optional<DeviceLoad>
tessel_plan::measureLayout(const VerifyContext &ctx, const ModelProfile &model,
                           const Plan &plan, std::string &why) {
  std::optional<PendingLayout> pending = startLayout(ctx, plan, why);
  if (!pending)
    return std::nullopt;
  return finishLayout(model, *pending, why);
}

std::optional<std::vector<double>>
tessel_plan::compiledMemory(const VerifyContext &ctx, const ModelProfile &model,
                            const Estimate &e, llvm::StringRef gpu,
                            std::string &why) {
  std::string stem = ctx.scratch + "/exact";
  std::string planFile = stem + ".plan.json", local = stem + ".mlir",
              log = stem + ".log";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(planFile, ec);
    if (ec) {
      why = "cannot write " + planFile + ": " + ec.message();
      return std::nullopt;
    }
    os << llvm::formatv("{0}", planToJson(e, model, gpu));
  }
  llvm::SmallVector<llvm::StringRef> argv = {
      ctx.compiler, ctx.model,     "--func", ctx.func, "--optimizer",
      ctx.optimizer, "--plan",     planFile, "--emit", "local",
      "-o",          local};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(ctx.compiler, argv, std::nullopt,
                                     redirects, 0, 0, &error);
  return readCompiled<std::vector<double>>(
      rc, error, log, local,
      [](ModuleOp module) { return compiledPeakBytes(module); }, why);
}
