//===- tessel-compile.cpp - a model to an executable in one command -------===//
//
//   tessel-compile MODEL.mlir [--mesh "dp=2,tp=2" [--strategy S | --rules F]]
//       [--optimizer "adamw lr=3e-3 warmup=10 ..."] [-O2] [--timing]
//       [--cpu native|x86-64-v3|...] [--emit=tessel|local|linalg|llvm|obj|exe]
//       -o NAME
//
// Runs the whole flow: train step (when MODEL has @forward and no
// @train_step) -> propagate -> partition -> optimize collectives -> lower to
// linalg -> bufferize -> LLVM -> object -> link with libtessel_rt. Every
// stage's errors carry the source location.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "tessel/planning/PlanFile.h"
#include "Extensions.h"
#include "tessel/Plugin.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/CpuTarget.h"
#include "tessel/lowering/Target.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/passes/Passes.h"
#include "tessel/pipeline/Pipeline.h"
#include "tessel/program/Describe.h"
#include "tessel/runtime/Abi.h"
#include "tessel/sharding/LogicalRules.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::tessel;
namespace cl = llvm::cl;
namespace tp = ::tessel::program;
using tessel_compile::failWith;
using tessel_compile::PipelineRequest;

namespace {
cl::OptionCategory category("tessel-compile options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::init("-"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output executable (or file)"),
                                cl::value_desc("NAME"), cl::cat(category));
cl::opt<std::string> meshSpec("mesh",
                              cl::desc("Device mesh, e.g. \"dp=2,tp=2\" (the "
                                       "model must not declare one)"),
                              cl::cat(category));
cl::opt<std::string>
    strategy("strategy", cl::desc("Built-in sharding rules (rules/*.json)"),
             cl::cat(category));
cl::opt<std::string> rulesFile("rules", cl::desc("Logical-axis rules file"),
                               cl::cat(category));
cl::opt<std::string> planFile(
    "plan",
    cl::desc("A plan from tessel-plan --emit: its mesh, rules, pipeline and "
             "recomputation (instead of --mesh, --strategy/--rules and "
             "--pipeline); 'auto' runs tessel-plan for --devices, "
             "--global-batch and --hardware"),
    cl::value_desc("plan.json|auto"), cl::cat(category));
cl::opt<int64_t> autoDevices("devices", cl::desc("--plan auto: devices"),
                             cl::init(0), cl::cat(category));
cl::opt<int64_t> autoBatch("global-batch",
                           cl::desc("--plan auto: samples per optimizer step"),
                           cl::init(0), cl::cat(category));
cl::opt<std::string> autoHardware(
    "hardware", cl::desc("--plan auto: tessel-plan's --gpu (default h100)"),
    cl::init("h100"), cl::cat(category));
const char *argv0 = nullptr;
/// The rules of --plan (JSON text).
std::optional<std::string> planRules;
cl::opt<std::string>
    optimizer("optimizer",
              cl::desc("Optimizer and --tessel-train-step options, e.g. "
                       "\"adamw lr=3e-3 warmup=10 total-steps=200\""),
              cl::init("adamw"), cl::cat(category));
cl::opt<std::string> funcName("func",
                              cl::desc("Forward function to train (default: "
                                       "forward)"),
                              cl::init("forward"), cl::cat(category));
cl::opt<std::string> entry("entry",
                           cl::desc("Compile this function as it is, without "
                                    "building a training step; several, "
                                    "comma-separated, for programs whose "
                                    "functions run on sub-meshes (pipeline "
                                    "stages): each rank runs the one whose "
                                    "mesh has it"),
                           cl::cat(category));
cl::opt<std::string> pipelineSpec(
    "pipeline",
    cl::desc("Pipeline parallelism over a mesh axis: \"schedule=1f1b "
             "microbatches=8 stages=auto virtual=1 axis=pp\" (schedules "
             "gpipe, 1f1b, interleaved, zb-h1; stages auto, tags or the first "
             "layer of each stage as 0,3,6; virtual: stages per rank, 2 by "
             "default for interleaved). The model's batch is the "
             "microbatch; a step takes microbatches of them"),
    cl::value_desc("options"), cl::cat(category));
cl::opt<std::string> evalFuncs(
    "eval",
    cl::desc("Also compile these functions (comma-separated; e.g. forward) "
             "as evaluations: they run beside the step on its devices every "
             "--eval-every steps, reading the step's current parameters, and "
             "their loss is printed"),
    cl::cat(category));
cl::opt<std::string> initFuncs(
    "init",
    cl::desc("Also compile these functions (comma-separated) as "
             "initializers: run once before the first step (not on "
             "--resume), their results set the step's parameters and state "
             "of the same names"),
    cl::cat(category));
cl::opt<std::string> target("target",
                            cl::desc("The backend (tessel/lowering/Target.h): "
                                     "cpu or cuda"),
                            cl::init("cpu"),
                            cl::cat(category));
cl::opt<std::string> gpuArch(
    "gpu-arch",
    cl::desc("With --target cuda: the GPU architecture the kernels are "
             "compiled for (sm_90 default, sm_80, ...); the executable embeds "
             "its code and PTX, which newer GPUs compile when loading"),
    cl::init("sm_90"), cl::cat(category));
cl::opt<std::string> loweringPipeline(
    "lowering-pipeline",
    cl::desc("Lower with this registered pipeline instead of the target's "
             "(for pass authors; e.g. tessel-gpu-emulation-lowering runs the "
             "cuda target's loop mapping on the CPU)"),
    cl::cat(category));
cl::opt<std::string> emit("emit",
                          cl::desc("Stop after: tessel (propagated), local "
                                   "(partitioned), linalg, llvm (IR), obj, "
                                   "exe (default)"),
                          cl::init("exe"), cl::cat(category));
cl::opt<std::string> cpuName(
    "cpu",
    cl::desc("CPU to generate code for: x86-64-v3 (default on x86-64: AVX2 "
             "and FMA, portable to x86 machines since 2013-2015), "
             "x86-64-v2, x86-64-v4 (AVX-512), native (this machine's CPU and "
             "every feature it has; fastest, may not run elsewhere), or an "
             "LLVM CPU name (e.g. sapphirerapids, znver4, neoverse-v2). The "
             "executable checks at start-up that its machine has the "
             "features"),
    cl::value_desc("NAME"), cl::cat(category));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"), cl::Prefix,
                           cl::init(2), cl::cat(category));
cl::opt<unsigned> largeHostFunction(
    "unoptimized-host-size",
    cl::desc("Host functions (the step's entry code around kernels and "
             "collectives) of at least this many LLVM instructions are "
             "compiled without LLVM optimization, which grows faster than "
             "linearly with their size (0: optimize all)"),
    cl::init(kDefaultLargeHostFunction), cl::cat(category));
cl::opt<bool> accumulate("accumulate",
                         cl::desc("Gradient accumulation: the program's "
                                  "--batch-size may be a multiple of the "
                                  "model's batch"),
                         cl::cat(category));
cl::opt<bool> timing("timing", cl::desc("Print the time of every pass"),
                     cl::cat(category));
cl::list<std::string> passPlugins(
    "load-pass-plugin",
    cl::desc("Load a pass plugin (a shared library built against this "
             "Tessel, docs/extending.md); its passes can run at --extend "
             "points"),
    cl::cat(category));
cl::list<std::string> dialectPlugins(
    "load-dialect-plugin",
    cl::desc("Load a dialect plugin: its dialects may appear in the model"),
    cl::cat(category));
cl::list<std::string> extendSpecs(
    "extend",
    cl::desc("Run a pass pipeline at a point of the flow: "
             "POINT[:TARGET]=PIPELINE, POINT one of after-propagation, "
             "after-partition, before-lowering (may repeat)"),
    cl::cat(category));
cl::opt<std::string> customCallLibraries(
    "custom-calls",
    cl::desc("Shared libraries of the model's custom-call kernels "
             "(comma-separated): every kernel the program calls must be in "
             "one of them, and they are copied beside the executable "
             "(NAME.kernels/), where it finds them at run time"),
    cl::cat(category));
cl::opt<bool> printPipelines(
    "print-pipeline",
    cl::desc("Print each pass pipeline as it runs, and each extension point "
             "with what runs there"),
    cl::cat(category));
cl::opt<bool> printProgramInfo("print-program",
                               cl::desc("Print the program description the "
                                        "runtime reads"),
                               cl::cat(category));


LogicalResult runPipeline(ModuleOp module, StringRef pipeline,
                          DefaultTimingManager &tm, TimingScope &scope) {
  PassManager pm(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm)))
    return failure();
  if (printPipelines) {
    // Flushed: the passes' diagnostics go to stderr.
    llvm::outs() << pipeline << "\n";
    llvm::outs().flush();
  }
  TimingScope nested = scope.nest(pipeline);
  if (timing)
    pm.enableTiming(nested);
  return pm.run(module);
}

std::vector<tessel_compile::Extension> extensions;

/// Runs the --extend pipelines of `point` for this target.
LogicalResult runExtensions(ModuleOp module, StringRef point,
                            DefaultTimingManager &tm, TimingScope &scope) {
  if (printPipelines) {
    llvm::outs() << "// extension point " << point << "\n";
    llvm::outs().flush();
  }
  for (const tessel_compile::Extension &e : extensions)
    if (e.point == point && (e.target.empty() || e.target == target) &&
        failed(runPipeline(module, e.pipeline, tm, scope)))
      return failure();
  return success();
}

/// Loads --load-pass-plugin and --load-dialect-plugin, then parses --extend
/// (which may name the plugins' passes).
LogicalResult loadPlugins(DialectRegistry &registry) {
  for (const std::string &path : passPlugins)
    if (llvm::Error e = loadPassPlugin(path)) {
      failWith(llvm::toString(std::move(e)));
      return failure();
    }
  for (const std::string &path : dialectPlugins)
    if (llvm::Error e = loadDialectPlugin(path, registry)) {
      failWith(llvm::toString(std::move(e)));
      return failure();
    }
  auto parsed = tessel_compile::parseExtensions(extendSpecs);
  if (!parsed) {
    failWith(llvm::toString(parsed.takeError()));
    return failure();
  }
  extensions = std::move(*parsed);
  return success();
}

LogicalResult writeModule(ModuleOp module, StringRef path) {
  std::string error;
  auto out = openOutputFile(path, &error);
  if (!out) {
    failWith(error);
    return failure();
  }
  module.print(out->os());
  out->keep();
  return success();
}

std::optional<tessel_compile::PipelineRequest> pipelineRequest;

/// --mesh, --strategy/--rules, the training step and propagation; returns
/// the step's entry names (empty on failure).
SmallVector<std::string> buildProgram(ModuleOp module, DefaultTimingManager &tm,
                                      TimingScope &root) {
  auto meshes = llvm::to_vector(module.getOps<MeshOp>());
  if (!meshSpec.empty()) {
    if (!meshes.empty()) {
      failWith(inputFile + " already declares mesh @" +
               meshes.front().getSymName() + "; drop --mesh or the model's mesh");
      return {};
    }
    llvm::Expected<MeshOp> mesh = addMeshFromSpec(module, meshSpec);
    if (!mesh) {
      failWith(llvm::toString(mesh.takeError()));
      return {};
    }
    meshes.push_back(*mesh);
  }
  if (planRules) {
    llvm::Expected<LogicalRules> rules =
        parseLogicalRules(*planRules, planFile);
    if (!rules) {
      failWith(llvm::toString(rules.takeError()));
      return {};
    }
    if (failed(applyLogicalRules(module, meshes.front(), *rules)))
      return {};
  }
  if (!strategy.empty() || !rulesFile.empty()) {
    if (meshes.size() != 1) {
      failWith("--strategy/--rules need exactly one mesh (give --mesh)");
      return {};
    }
    llvm::Expected<LogicalRules> rules =
        !strategy.empty() ? builtinStrategy(strategy)
                          : readLogicalRules(rulesFile);
    if (!rules) {
      failWith(llvm::toString(rules.takeError()));
      return {};
    }
    if (failed(applyLogicalRules(module, meshes.front(), *rules)))
      return {};
  }
  std::string stepName =
      entry.empty() ? std::string("train_step") : entry.getValue();
  SmallVector<StringRef> names;
  StringRef(stepName).split(names, ',', -1, false);
  for (StringRef name : names)
    if (!entry.empty() && !module.lookupSymbol<func::FuncOp>(name.trim())) {
      failWith(inputFile + " has no function @" + name.trim());
      return {};
    }
  bool hasStep = !entry.empty() ||
                 module.lookupSymbol<func::FuncOp>(stepName) != nullptr;
  std::string pipeline;
  if (!hasStep) {
    if (!module.lookupSymbol<func::FuncOp>(funcName)) {
      failWith(inputFile + " has neither @train_step nor @" + funcName +
               " to build one from");
      return {};
    }
    llvm::Expected<std::string> options =
        tessel_compile::optimizerOptions(optimizer);
    if (!options) {
      failWith(llvm::toString(options.takeError()));
      return {};
    }
    if (pipelineRequest) {
      int64_t ranks = meshes.size() == 1
                          ? meshes.front().getAxisSize(pipelineRequest->axis)
                          : -1;
      if (ranks < 2) {
        failWith("--pipeline: the mesh needs a pipeline axis '" +
                 pipelineRequest->axis + "' of 2 or more devices (as --mesh "
                 "\"pp=4,dp=2\"; axis= names another)");
        return {};
      }
      pipeline = "tessel-assign-stages{func=" + funcName.getValue() +
                 " stages=" +
                 std::to_string(ranks * pipelineRequest->virtualStages) +
                 " boundaries=" + pipelineRequest->stages + " report=true},";
    }
    // lr-argument: the executable's --lr sets the peak learning rate.
    pipeline += "tessel-train-step{func=" + funcName.getValue() + " " +
               *options + " lr-argument=true" +
               (accumulate ? " accumulate=true" : "") + "}";
  }
  // Evaluations run without dropout (after the step is built from the
  // same forward, which keeps it).
  for (StringRef name : llvm::split(evalFuncs.getValue(), ','))
    if (!name.trim().empty() &&
        !module.lookupSymbol<func::FuncOp>(name.trim())) {
      failWith("--eval: " + inputFile + " has no function @" + name.trim());
      return {};
    }
  if (!evalFuncs.empty())
    pipeline += std::string(pipeline.empty() ? "" : ",") +
                "tessel-inference-mode{functions=" + evalFuncs.getValue() + "}";
  if (!meshes.empty())
    pipeline += std::string(pipeline.empty() ? "" : ",") + "tessel-propagate";
  if (!pipeline.empty() && failed(runPipeline(module, pipeline, tm, root)))
    return {};
  return {stepName};
}

/// tessel-export-entry{...} for the step `stepName`, --eval, --init and
/// --cpu; empty (with a message) when a named function is missing.
std::string exportEntryPipeline(ModuleOp module, StringRef stepName) {
  std::string pipeline = "tessel-export-entry{function=" + stepName.str();
  for (auto [flag, list] : {std::pair{"eval", &evalFuncs},
                            std::pair{"init", &initFuncs}}) {
    for (StringRef name : llvm::split(list->getValue(), ','))
      if (!name.trim().empty() &&
          !module.lookupSymbol<func::FuncOp>(name.trim())) {
        failWith(llvm::Twine("--") + flag + ": " + inputFile +
                 " has no function @" + name.trim());
        return "";
      }
    if (!list->empty())
      pipeline += std::string(" ") + flag + "=" + list->getValue();
  }
  if (!cpuName.empty())
    pipeline += " cpu=" + cpuName;
  return pipeline + "}";
}

/// Checks the options that need no model, reads --plan into the options it
/// stands for and parses --pipeline. Returns an exit code (0: go on).
int prepareOptions(std::optional<int64_t> &planBatch) {
  static const char *stages[] = {"tessel", "local", "linalg",
                                 "llvm",   "obj",   "exe"};
  if (!llvm::is_contained(stages, emit))
    return failWith("--emit must be tessel, local, linalg, llvm, obj or exe");
  if (outputFile.empty())
    return failWith("give the output with -o NAME");
  if (!strategy.empty() && !rulesFile.empty())
    return failWith("give --strategy or --rules, not both");
  if (emit == "exe" && tessel_compile::runtimeLibraries(target).empty())
    return failWith("--target " + target + ": this Tessel was built without "
                    "that target's runtime (for cuda: the CUDA toolkit was "
                    "not found when it was configured)");
  if ((autoDevices || autoBatch) && planFile != "auto")
    return failWith("--devices and --global-batch are for --plan auto");
  if (!planFile.empty()) {
    if (!meshSpec.empty() || !strategy.empty() || !rulesFile.empty() ||
        !pipelineSpec.empty())
      return failWith("--plan gives the mesh, rules and pipeline; drop "
                      "--mesh, --strategy, --rules and --pipeline");
    llvm::Expected<mlir::tessel::planning::CompileOptions> plan =
        tessel_compile::loadPlan(argv0, planFile,
                                 {inputFile, funcName, optimizer, autoHardware,
                                  autoDevices, autoBatch});
    if (!plan)
      return failWith(llvm::toString(plan.takeError()));
    meshSpec = plan->mesh;
    pipelineSpec = plan->pipeline;
    planRules = plan->rules;
    if (!plan->optimizerOptions.empty())
      optimizer = optimizer + " " + plan->optimizerOptions;
    accumulate = accumulate || plan->accumulate;
    planBatch = plan->modelBatch;
  }
  if (!pipelineSpec.empty()) {
    llvm::Expected<tessel_compile::PipelineRequest> p =
        tessel_compile::parsePipeline(pipelineSpec);
    if (!p)
      return failWith(llvm::toString(p.takeError()));
    if (!entry.empty() || !evalFuncs.empty() || !initFuncs.empty() ||
        accumulate)
      return failWith("--pipeline builds and splits the train step itself; "
                      "it does not combine with --entry, --eval, --init or "
                      "--accumulate (microbatches= accumulates)");
    pipelineRequest = *p;
  }
  return 0;
}

/// The training step, SPMD partitioning and the pipeline split, with the
/// extension points between them; `entries` gets the functions the ranks
/// run. Returns an exit code, or -1 to go on.
int partitionProgram(ModuleOp module, std::string &entries,
                     DefaultTimingManager &tm, TimingScope &root) {
  SmallVector<std::string> steps = buildProgram(module, tm, root);
  if (steps.empty())
    return 1;
  const std::string &stepName = steps.front();
  if (failed(runExtensions(module, "after-propagation", tm, root)))
    return 1;
  if (emit == "tessel")
    return failed(writeModule(module, outputFile));
  bool hasMesh = !module.getOps<MeshOp>().empty();
  if (hasMesh && failed(runPipeline(module, "tessel-partition", tm, root)))
    return 1;
  entries = stepName;
  if (pipelineRequest) {
    const PipelineRequest &p = *pipelineRequest;
    std::string split = "tessel-pipeline-split{func=" + stepName + " axis=" +
                        p.axis + " schedule=" + p.schedule +
                        " microbatches=" + std::to_string(p.microbatches) +
                        " virtual=" + std::to_string(p.virtualStages) +
                        "},tessel-pipeline-report";
    if (failed(runPipeline(module, split, tm, root)))
      return 1;
    auto attr = module->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
    SmallVector<std::string> names;
    for (Attribute f : attr.getAs<ArrayAttr>("functions"))
      names.push_back(cast<FlatSymbolRefAttr>(f).getValue().str());
    entries = llvm::join(names, ",");
  }
  if (hasMesh &&
      failed(runPipeline(module, "tessel-optimize-collectives", tm, root)))
    return 1;
  if (failed(runExtensions(module, "after-partition", tm, root)))
    return 1;
  if (emit == "local")
    return failed(writeModule(module, outputFile));
  return -1;
}

/// The step (and its evaluations and initializers) compiled: described for
/// the runtime, lowered to the LLVM dialect by the target's registered
/// pipeline, in three parts so --emit can stop between them, then to
/// native code. Returns the exit code.
int lowerProgram(ModuleOp module, StringRef entries,
                 const mlir::tessel::Target &device, const CpuSelection &cpu,
                 DefaultTimingManager &tm, TimingScope &root) {
  std::string exportEntry = exportEntryPipeline(module, entries);
  if (exportEntry.empty())
    return 1;
  if (failed(runPipeline(module, exportEntry, tm, root)))
    return 1;
  if (printProgramInfo)
    llvm::outs()
        << module->getAttrOfType<StringAttr>(tp::kProgramAttrName).getValue()
        << "\n";
  if (failed(runPipeline(module, "tessel-lower-to-linalg{target=" + target +
                                     "}",
                         tm, root)) ||
      failed(runExtensions(module, "before-lowering", tm, root)))
    return 1;
  if (emit == "linalg")
    return failed(writeModule(module, outputFile));
  if (failed(tessel_compile::checkLowerable(module, target)))
    return 1;
  std::string lowering = device.loweringPipeline;
  if (device.takesGpuArch)
    lowering += "{chip=" + gpuArch + "}";
  if (!loweringPipeline.empty())
    lowering = loweringPipeline;
  if (failed(runPipeline(module, lowering + ",tessel-emit-entry", tm, root)))
    return 1;
  tessel_compile::NativeOptions native{outputFile, emit, target, optLevel,
                                       largeHostFunction};
  if (int rc = tessel_compile::emitNative(module, cpu, native, root))
    return rc;
  return emit == "exe" ? tessel_compile::copyKernelLibraries(
                             customCallLibraries, outputFile)
                       : 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  argv0 = argv[0];
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Compiles a tessel model into an executable "
                              "that trains it on a device mesh\n");
  const mlir::tessel::Target *device = mlir::tessel::lookupTarget(target);
  if (!device)
    return failWith("--target " + target +
                    ": no such target; the registered targets are: " +
                    mlir::tessel::listTargets());
  std::optional<int64_t> planBatch;
  if (int rc = prepareOptions(planBatch))
    return rc;
  llvm::Expected<CpuSelection> cpu = selectCpu(cpuName);
  if (!cpu)
    return failWith(llvm::toString(cpu.takeError()));

  DialectRegistry registry;
  registerCpuLoweringDialects(registry);
  registerCudaPipeline(registry);
  registry.insert<TesselDialect>();
  func::registerInlinerExtension(registry);
  registerTesselPasses();
  registerCpuPipeline();
  if (failed(loadPlugins(registry)))
    return 1;
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A diagnostic names its location; the whole op (a model's forward) as a
  // note would bury it.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return failWith(error);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  if (failed(tessel_compile::checkCustomCalls(*module, customCallLibraries,
                                                target)))
    return 1;
  if (planBatch &&
      failed(tessel_compile::checkPlanBatch(*module, funcName, *planBatch)))
    return 1;

  DefaultTimingManager tm;
  tm.setEnabled(timing);
  TimingScope root = tm.getRootScope();
  std::string entries;
  if (int rc = partitionProgram(*module, entries, tm, root); rc >= 0)
    return rc;
  return lowerProgram(*module, entries, *device, *cpu, tm, root);
}
