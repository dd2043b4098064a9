//===- tessel-plan.cpp - choose a parallel layout for a model -------------===//
//
//   tessel-plan MODEL.mlir --devices 64 --gpu h100 --global-batch 1024
//       [--gpus-per-node 8] [--top 10] [--verify 3] [--emit plan.json]
//
// Profiles the model's training step, screens every dp x tp x pp layout
// with its ZeRO stage, microbatches, recomputation and pipeline schedule by
// the cost model (tessel/planning/CostModel.h), re-estimates the best ones
// from the programs tessel-compile partitions for them, prints the ranking
// and why the first wins, and writes what tessel-compile --plan reads.
// docs/planning.md.
//
//===----------------------------------------------------------------------===//

#include "Plan.h"

#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/passes/Passes.h"
#include "tessel/planning/PlanFile.h"
#include "tessel/planning/Profile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <optional>

using namespace mlir;
using namespace mlir::tessel::planning;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("tessel-plan options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<int64_t> devices("devices", cl::desc("Devices to plan for"),
                         cl::Required, cl::cat(category));
cl::opt<int64_t> globalBatch(
    "global-batch", cl::desc("Samples (sequences) per optimizer step"),
    cl::Required, cl::cat(category));
cl::opt<std::string> gpu(
    "gpu",
    cl::desc("Hardware description: a name (h100, h200, a100, or a file "
             "NAME.json in --hardware-dir) or a path to a JSON file"),
    cl::init("h100"), cl::cat(category));
cl::opt<std::string> hardwareDir(
    "hardware-dir", cl::desc("Another directory of hardware descriptions"),
    cl::cat(category));
cl::opt<int64_t> gpusPerNode(
    "gpus-per-node",
    cl::desc("Devices per node (default: the hardware description's)"),
    cl::init(0), cl::cat(category));
cl::opt<std::string> funcName("func", cl::desc("Forward function"),
                              cl::init("forward"), cl::cat(category));
cl::opt<std::string> optimizer(
    "optimizer",
    cl::desc("The training step's optimizer and options, as tessel-compile "
             "--optimizer (e.g. \"adamw compute-type=bf16\")"),
    cl::init("adamw"), cl::cat(category));
cl::opt<unsigned> top("top", cl::desc("Plans to list"), cl::init(10),
                      cl::cat(category));
cl::opt<unsigned> verifyCount(
    "verify",
    cl::desc("Re-estimate the first N plans from the programs tessel-compile "
             "partitions for them (0: the screen only)"),
    cl::init(2), cl::cat(category));
cl::opt<std::string> zeroStages(
    "zero", cl::desc("ZeRO stages to consider (comma-separated)"),
    cl::init("0,1,2,3"), cl::cat(category));
cl::opt<int64_t> maxTp("max-tp",
                       cl::desc("Largest tp degree (default: a node)"),
                       cl::init(0), cl::cat(category));
cl::list<std::string> compare(
    "compare",
    cl::desc("Also show the best plan with these degrees (\"dp=8,tp=8,pp=8\"; "
             "repeatable) and how much slower it is than the first, verified "
             "like the first"),
    cl::cat(category));
cl::opt<std::string> evaluateSpec(
    "evaluate",
    cl::desc("Estimate only this plan: \"dp=2,tp=2,pp=1,ep=1,sp=1,zero=1,mb=4x2,"
             "recompute=none,schedule=1f1b,virtual=1\" (what is not named: "
             "degree 1, no sp, ZeRO-0, one microbatch, no recomputation, "
             "1f1b)"),
    cl::cat(category));
cl::opt<bool> modelBatchOnly(
    "model-batch-only",
    cl::desc("Only plans whose compiled batch (dp x microbatch size) is "
             "the model's own, so tessel-compile --plan compiles the file "
             "as it is (tessel-compile --plan auto asks for this)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> emitFile(
    "emit", cl::desc("Write the first plan as JSON for tessel-compile --plan"),
    cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::errs() << "tessel-plan: error: " << message << "\n";
  return 1;
}

llvm::Expected<Hardware> loadTarget(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&loadTarget));
  llvm::SmallString<256> installed(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(installed, "..", "share", "tessel", "hardware");
  std::vector<std::string> dirs;
  if (!hardwareDir.empty())
    dirs.push_back(hardwareDir);
  dirs.push_back(installed.str().str());
  dirs.push_back(TESSEL_HARDWARE_SOURCE_DIR);
  llvm::Expected<Hardware> hw = loadHardware(gpu, dirs);
  if (hw && gpusPerNode > 0)
    hw->devicesPerNode = gpusPerNode;
  return hw;
}

SearchSpace searchSpace() {
  SearchSpace space;
  space.devices = devices;
  space.globalBatch = globalBatch;
  space.maxTp = maxTp;
  space.zeroStages.clear();
  for (llvm::StringRef z : llvm::split(zeroStages.getValue(), ','))
    if (int stage; !z.trim().getAsInteger(10, stage) && stage >= 0 &&
                   stage <= 3)
      space.zeroStages.push_back(stage);
  return space;
}


/// Re-estimates the plans not verified yet with what verification taught:
/// each one's FLOPs and traffic scaled as in the verified layout nearest
/// to it (the same pp first, then the nearest tp), so that the screen's
/// ranking moves toward the verified one and fewer layouts need compiling.
void calibrateScreen(std::vector<Estimate> &ranked, const ModelProfile &model,
                     const Hardware &hw) {
  struct Ratios {
    Plan plan;
    double flops = 1, tp = 1, pp = 1, traffic = 1;
  };
  std::vector<Ratios> learned;
  auto ratio = [](double measured, double analytic) {
    return analytic > 0 && measured > 0 ? measured / analytic : 1.0;
  };
  for (const Estimate &e : ranked)
    if (e.load.measured) {
      DeviceLoad a = analyticLoad(model, e.plan);
      learned.push_back({e.plan, ratio(e.load.flopsPerSample, a.flopsPerSample),
                         ratio(e.load.tpBytesPerSample, a.tpBytesPerSample),
                         ratio(e.load.ppBytesPerSample, a.ppBytesPerSample),
                         ratio(e.load.trafficBytesPerSample,
                               a.trafficBytesPerSample)});
    }
  if (learned.empty())
    return;
  auto distance = [](const Plan &a, const Plan &b) {
    return 4 * std::abs(std::log2(double(a.pp) / double(b.pp))) +
           std::abs(std::log2(double(a.tp) / double(b.tp)));
  };
  for (Estimate &e : ranked) {
    if (e.load.measured)
      continue;
    const Ratios &r = *std::min_element(
        learned.begin(), learned.end(), [&](const Ratios &x, const Ratios &y) {
          return distance(x.plan, e.plan) < distance(y.plan, e.plan);
        });
    DeviceLoad l = analyticLoad(model, e.plan);
    l.flopsPerSample *= r.flops;
    l.forwardFlopsPerSample *= r.flops;
    l.selectiveFlopsPerSample *= r.flops;
    l.tpBytesPerSample *= r.tp;
    l.ppBytesPerSample *= r.pp;
    l.trafficBytesPerSample *= r.traffic;
    l.forwardTrafficBytesPerSample *= r.traffic;
    e = estimate(model, l, e.plan, hw);
  }
}

/// Replaces the estimates of every plan of layout `key` by ones from
/// `load`, or drops them when the layout did not compile.
void applyLayout(std::vector<Estimate> &ranked, const std::string &key,
                 const std::optional<DeviceLoad> &load,
                 const ModelProfile &model, const Hardware &hw) {
  std::vector<Estimate> kept;
  for (Estimate &e : ranked) {
    if (tessel_plan::layoutKey(e.plan) != key)
      kept.push_back(e);
    else if (load)
      kept.push_back(estimate(model, *load, e.plan, hw));
  }
  ranked = std::move(kept);
  calibrateScreen(ranked, model, hw);
  std::stable_sort(ranked.begin(), ranked.end(), betterPlan);
}

/// Verifies plans from the top until the first `count` of the ranking are
/// all verified: each layout is compiled once (two at a time) and every
/// plan sharing it is re-estimated from it; the plans of a layout Tessel
/// cannot compile are dropped with a note.
void verifyTop(std::vector<Estimate> &ranked, const ModelProfile &model,
               const Hardware &hw, const tessel_plan::VerifyContext &ctx,
               unsigned count) {
  std::set<std::string> tried;
  // Each round verifies up to two layouts; a verified plan that got worse
  // lets an unverified one up, so a few rounds may be needed.
  for (unsigned round = 0; round < 2 * count + 2; ++round) {
    std::vector<tessel_plan::PendingLayout> pending;
    for (size_t i = 0; i < std::min<size_t>(count, ranked.size()); ++i) {
      const Estimate &e = ranked[i];
      std::string key = tessel_plan::layoutKey(e.plan), why;
      if (!e.fits || e.load.measured || !tried.insert(key).second)
        continue;
      if (auto p = tessel_plan::startLayout(ctx, e.plan, why))
        pending.push_back(std::move(*p));
      else
        llvm::errs() << "note: " << why << "\n";
      if (pending.size() == 2)
        break;
    }
    if (pending.empty())
      return;
    for (tessel_plan::PendingLayout &p : pending) {
      std::string why;
      std::optional<DeviceLoad> load = tessel_plan::finishLayout(model, p, why);
      if (!load)
        llvm::errs() << "note: dropped the plans of layout " << p.key << ": "
                     << why << "\n";
      applyLayout(ranked, p.key, load, model, hw);
    }
  }
}

/// Plans whose degrees are those of `spec` ("dp=8,tp=8,pp=8"; an axis not
/// named is 1).
llvm::Expected<std::function<bool(const Plan &)>>
degreesMatcher(llvm::StringRef spec) {
  int64_t want[4] = {1, 1, 1, 1};
  for (llvm::StringRef part : llvm::split(spec, ',')) {
    auto [axis, value] = part.trim().split('=');
    int64_t n = 0;
    int index = axis == "dp"   ? 0
                : axis == "tp" ? 1
                : axis == "pp" ? 2
                : axis == "ep" ? 3
                               : -1;
    if (index < 0 || value.getAsInteger(10, n) || n < 1)
      return llvm::createStringError(
          "--compare " + spec.str() +
          ": give degrees as dp=N,tp=N,pp=N[,ep=N]");
    want[index] = n;
  }
  return std::function<bool(const Plan &)>([=](const Plan &p) {
    return p.dp == want[0] && p.tp == want[1] && p.pp == want[2] &&
           p.ep == want[3];
  });
}

/// The plan --evaluate names, checked against --devices and
/// --global-batch.
llvm::Expected<Plan> parsePlan(llvm::StringRef spec) {
  Plan p;
  p.microbatches = 0;
  for (llvm::StringRef part : llvm::split(spec, ',')) {
    auto [key, value] = part.trim().split('=');
    int64_t n = 0;
    bool number = !value.getAsInteger(10, n);
    if (key == "dp" && number) p.dp = n;
    else if (key == "tp" && number) p.tp = n;
    else if (key == "pp" && number) p.pp = n;
    else if (key == "ep" && number && n >= 1) p.ep = n;
    else if (key == "sp" && number) p.sequenceParallel = n != 0;
    else if (key == "zero" && number && n >= 0 && n <= 3) p.zero = int(n);
    else if (key == "virtual" && number) p.virtualStages = n;
    else if (key == "schedule") p.schedule = value.str();
    else if (key == "recompute" &&
             llvm::is_contained({"none", "selective", "layers"}, value))
      p.recompute = value.str();
    else if (key == "mb" && !value.split('x').first.getAsInteger(
                                10, p.microbatches) &&
             !value.split('x').second.getAsInteger(10, p.microBatchSize)) {
    } else
      return llvm::createStringError("--evaluate " + spec.str() + ": cannot "
                                     "read '" + part.str() + "'");
  }
  if (p.microbatches == 0)
    p.microbatches = 1, p.microBatchSize = globalBatch / p.dp;
  if (p.devices() != devices ||
      p.dp * p.microbatches * p.microBatchSize != globalBatch)
    return llvm::createStringError(llvm::formatv(
        "--evaluate {0}: dp x tp x pp must be --devices ({1}) and dp x "
        "microbatches x their size --global-batch ({2})",
        spec, int64_t(devices), int64_t(globalBatch)));
  if (p.dp % p.ep)
    return llvm::createStringError(llvm::formatv(
        "--evaluate {0}: ep must divide dp (the expert-parallel devices are "
        "data-parallel ones)",
        spec));
  return p;
}

/// For each --compare: verifies its best plan's layout and prints it
/// against the first plan.
int printComparisons(std::vector<Estimate> &ranked, const ModelProfile &model,
                     const Hardware &hw,
                     const tessel_plan::VerifyContext *ctx) {
  for (const std::string &spec : compare) {
    auto matches = degreesMatcher(spec);
    if (!matches)
      return fail(llvm::toString(matches.takeError()));
    auto find = [&] {
      return llvm::find_if(ranked, [&](const Estimate &e) {
        return (*matches)(e.plan);
      });
    };
    auto it = find();
    // Verifying one layout may let another of these degrees up.
    for (int round = 0; round < 4 && ctx && it != ranked.end() && it->fits &&
                        !it->load.measured;
         ++round) {
      std::string why;
      std::optional<DeviceLoad> load =
          tessel_plan::measureLayout(*ctx, model, it->plan, why);
      if (!load)
        llvm::errs() << "note: " << spec << ": " << why << "\n";
      applyLayout(ranked, tessel_plan::layoutKey(it->plan), load, model, hw);
      it = find();
    }
    if (it == ranked.end()) {
      llvm::outs() << "compare " << spec << ": no such plan (the degrees must "
                   << "divide the devices, the batch and the layers)\n";
      continue;
    }
    if (!it->fits) {
      llvm::outs() << llvm::formatv(
          "compare {0}: does not fit ({1}: {2:f1} GiB per device)\n", spec,
          it->plan.describe(), it->memory.total() / double(1ull << 30));
      continue;
    }
    llvm::outs() << llvm::formatv(
        "compare {0}: {1}, {2:f3} s per step, {3:f1}% slower than the first "
        "(#{4}{5})\n",
        spec, it->plan.describe(), it->time.total(),
        100 * (it->time.total() / ranked.front().time.total() - 1),
        it - ranked.begin() + 1, it->load.measured ? ", verified" : "");
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tessel::registerTesselPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Chooses how to parallelize a model: dp, tp "
                              "and pp degrees, ZeRO, microbatches, "
                              "recomputation\n");
  if (devices < 1 || globalBatch < 1)
    return fail("--devices and --global-batch must be positive");
  llvm::Expected<Hardware> hw = loadTarget(argv[0]);
  if (!hw)
    return fail("--gpu: " + llvm::toString(hw.takeError()));

  DialectRegistry registry;
  registry.insert<tessel::TesselDialect, func::FuncDialect,
                  arith::ArithDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(inputFile, &context);
  if (!module)
    return 1;
  llvm::Expected<ModelProfile> model =
      profileModel(*module, funcName, optimizer);
  if (!model)
    return fail(llvm::toString(model.takeError()));

  std::vector<Plan> plans;
  if (!evaluateSpec.empty()) {
    llvm::Expected<Plan> plan = parsePlan(evaluateSpec);
    if (!plan)
      return fail(llvm::toString(plan.takeError()));
    plans.push_back(*plan);
  } else {
    SearchSpace space = searchSpace();
    if (modelBatchOnly)
      space.modelBatch = model->programBatch;
    plans = enumeratePlans(*model, space, *hw);
  }
  if (plans.empty())
    return fail(llvm::formatv(
        "no layout of {0} devices divides the global batch {1} and the "
        "model's {2} layers{3}",
        int64_t(devices), int64_t(globalBatch), model->layers,
        modelBatchOnly ? llvm::formatv(" with the model's batch, {0}, as "
                                       "one microbatch of every replica",
                                       model->programBatch)
                             .str()
                       : std::string()));
  std::vector<Estimate> ranked = rankPlans(*model, plans, *hw);
  std::optional<tessel_plan::VerifyContext> verifying;
  llvm::SmallString<128> scratch;
  if (verifyCount > 0 && ranked.front().fits) {
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("tessel-plan", scratch))
      return fail("cannot create a scratch directory: " + ec.message());
    // The tessel-compile beside this tessel-plan.
    llvm::SmallString<256> compiler(llvm::sys::path::parent_path(
        llvm::sys::fs::getMainExecutable(argv[0],
                                         reinterpret_cast<void *>(&fail))));
    llvm::sys::path::append(compiler, "tessel-compile");
    tessel_plan::VerifyContext ctx{compiler.str().str(), inputFile, funcName,
                                   optimizer, scratch.str().str()};
    verifyTop(ranked, *model, *hw, ctx, verifyCount);
    verifying = ctx;
    // Where the model's batch is one microbatch of every replica of the
    // first plan, that plan compiles as it is: its memory is read off it.
    Estimate &first = ranked.front();
    if (first.fits &&
        model->programBatch == first.plan.dp * first.plan.microBatchSize) {
      std::string why;
      if (std::optional<std::vector<double>> bytes =
              tessel_plan::compiledMemory(ctx, *model, first, gpu, why)) {
        first.compiledMemoryByStage = *bytes;
        first.compiledMemory = *std::max_element(bytes->begin(), bytes->end());
      }
      else
        llvm::errs() << "note: " << first.plan.describe() << ": " << why
                     << "\n";
    }
  }
  tessel_plan::printReport(llvm::outs(), *model, *hw, gpu, ranked,
                           plans.size(), top);
  if (const Estimate &first = ranked.front(); first.compiledMemory > 0) {
    std::string stages;
    if (first.compiledMemoryByStage.size() > 1)
      for (auto [i, b] : llvm::enumerate(first.compiledMemoryByStage))
        stages += llvm::formatv("{0}stage {1} {2:f3}", i ? ", " : "; ", i,
                                b / double(1ull << 30))
                      .str();
    llvm::outs() << llvm::formatv(
        "memory of {0}, compiled: {1:f3} GiB per device{2} (liveness of the "
        "program tessel-compile --plan makes; the estimate above: {3:f3} "
        "GiB)\n",
        first.plan.describe(), first.compiledMemory / double(1ull << 30),
        stages, first.memory.total() / double(1ull << 30));
  }
  int rc = printComparisons(ranked, *model, *hw,
                            verifying ? &*verifying : nullptr);
  if (!scratch.empty())
    llvm::sys::fs::remove_directories(scratch);
  if (rc)
    return rc;
  if (!ranked.front().fits)
    return fail(llvm::formatv("no plan fits in {0:f1} GiB per device; the "
                              "smallest needs {1:f1} GiB",
                              hw->usableBytes() / double(1ull << 30),
                              ranked.front().memory.total() /
                                  double(1ull << 30)));
  if (!emitFile.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(emitFile, ec);
    if (ec)
      return fail("cannot write " + emitFile + ": " + ec.message());
    os << llvm::formatv("{0:2}",
                        planToJson(ranked.front(), *model, gpu))
       << "\n";
  }
  return 0;
}
