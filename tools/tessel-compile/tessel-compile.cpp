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

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/interpreter/Inputs.h"
#include "tessel/interpreter/Interpreter.h"
#include "tessel/lowering/CpuTarget.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/passes/Passes.h"
#include "tessel/runtime/Program.h"
#include "tessel/sharding/LogicalRules.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::tessel;
namespace cl = llvm::cl;
namespace ti = ::tessel::interp;

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
                                    "building a training step"),
                           cl::cat(category));
cl::opt<std::string> target("target", cl::desc("Target: cpu"), cl::init("cpu"),
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
cl::opt<bool> accumulate("accumulate",
                         cl::desc("Gradient accumulation: the program's "
                                  "--batch-size may be a multiple of the "
                                  "model's batch"),
                         cl::cat(category));
cl::opt<bool> timing("timing", cl::desc("Print the time of every pass"),
                     cl::cat(category));
cl::opt<bool> printProgramInfo("print-program",
                               cl::desc("Print the program description the "
                                        "runtime reads"),
                               cl::cat(category));

int failWith(const llvm::Twine &message) {
  llvm::errs() << "tessel-compile: error: " << message << "\n";
  return 1;
}

/// The tessel.sharding axes of each dimension (empty: replicated).
std::vector<std::vector<std::string>> dimsOf(DictionaryAttr attrs,
                                             int64_t rank) {
  std::vector<std::vector<std::string>> dims(rank);
  if (!attrs)
    return dims;
  auto sharding = attrs.getAs<ShardingAttr>(TesselDialect::kShardingAttrName);
  if (!sharding)
    return dims;
  for (auto [d, dim] : llvm::enumerate(sharding.getDims()))
    for (StringAttr axis : dim.getAxes())
      dims[d].push_back(axis.getValue().str());
  return dims;
}

FailureOr<::tessel::DType> dtypeOf(Location loc, Type elem) {
  llvm::Expected<::tessel::DType> dt = ti::dtypeOf(elem);
  if (dt)
    return *dt;
  llvm::consumeError(dt.takeError());
  emitError(loc) << "element type " << elem << " cannot cross the runtime "
                 << "boundary; use f16/bf16/f32/f64/i1/i32/i64";
  return failure();
}

/// The description of `func` the runtime reads (runtime/Program.h).
FailureOr<::tessel::rt::Program> describe(func::FuncOp func) {
  ::tessel::rt::Program p;
  p.function = func.getSymName().str();
  if (FailureOr<::tessel::MeshShape> mesh = ti::spmdMesh(func); succeeded(mesh))
    p.mesh = *mesh;
  auto tensor = [&](Type t, RankedTensorType global, DictionaryAttr attrs,
                    std::string name) -> FailureOr<::tessel::rt::TensorInfo> {
    auto local = dyn_cast<RankedTensorType>(t);
    if (!local) {
      func.emitError() << "argument or result '" << name
                       << "' is not a ranked tensor";
      return failure();
    }
    ::tessel::rt::TensorInfo info;
    info.name = std::move(name);
    FailureOr<::tessel::DType> dt =
        dtypeOf(func.getLoc(), local.getElementType());
    if (failed(dt))
      return failure();
    info.dtype = *dt;
    info.shape.assign(local.getShape().begin(), local.getShape().end());
    info.globalShape.assign(global.getShape().begin(), global.getShape().end());
    info.dims = dimsOf(attrs, local.getRank());
    return info;
  };
  for (unsigned a = 0; a < func.getNumArguments(); ++a) {
    FailureOr<::tessel::rt::TensorInfo> info =
        tensor(func.getArgumentTypes()[a], ti::globalArgType(func, a),
               func.getArgAttrDict(a), ti::argName(func, a));
    if (failed(info))
      return failure();
    llvm::Expected<::tessel::InitSpec> spec = ti::initSpecFor(func, a);
    if (!spec) {
      func.emitError() << "argument '" << info->name
                       << "': " << llvm::toString(spec.takeError());
      return failure();
    }
    info->init = ::tessel::printInitSpec(*spec);
    p.arguments.push_back(std::move(*info));
  }
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    FailureOr<::tessel::rt::TensorInfo> info =
        tensor(func.getResultTypes()[r], ti::globalResultType(func, r),
               func.getResultAttrDict(r), ti::resultName(func, r));
    if (failed(info))
      return failure();
    p.results.push_back(std::move(*info));
  }
  return p;
}

LogicalResult runPipeline(ModuleOp module, StringRef pipeline,
                          DefaultTimingManager &tm, TimingScope &scope) {
  PassManager pm(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm)))
    return failure();
  TimingScope nested = scope.nest(pipeline);
  if (timing)
    pm.enableTiming(nested);
  return pm.run(module);
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

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Compiles a tessel model into an executable "
                              "that trains it on a device mesh\n");
  if (target != "cpu")
    return failWith("--target " + target +
                    " is not available yet; the CPU "
                    "backend is (--target cpu)");
  static const char *stages[] = {"tessel", "local", "linalg",
                                 "llvm",   "obj",   "exe"};
  if (!llvm::is_contained(stages, emit))
    return failWith("--emit must be tessel, local, linalg, llvm, obj or exe");
  if (outputFile.empty())
    return failWith("give the output with -o NAME");
  if (!strategy.empty() && !rulesFile.empty())
    return failWith("give --strategy or --rules, not both");

  llvm::Expected<CpuSelection> cpu = selectCpu(cpuName);
  if (!cpu)
    return failWith(llvm::toString(cpu.takeError()));

  DialectRegistry registry;
  registerCpuLoweringDialects(registry);
  registry.insert<TesselDialect>();
  func::registerInlinerExtension(registry);
  registerTesselPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
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

  DefaultTimingManager tm;
  tm.setEnabled(timing);
  TimingScope root = tm.getRootScope();

  // Mesh and rules.
  auto meshes = llvm::to_vector(module->getOps<MeshOp>());
  if (!meshSpec.empty()) {
    if (!meshes.empty())
      return failWith(inputFile + " already declares mesh @" +
                      meshes.front().getSymName() +
                      "; drop --mesh or the model's mesh");
    llvm::Expected<MeshOp> mesh = addMeshFromSpec(*module, meshSpec);
    if (!mesh)
      return failWith(llvm::toString(mesh.takeError()));
    meshes.push_back(*mesh);
  }
  if (!strategy.empty() || !rulesFile.empty()) {
    if (meshes.size() != 1)
      return failWith("--strategy/--rules need exactly one mesh (give --mesh)");
    llvm::Expected<LogicalRules> rules = strategy.empty()
                                             ? readLogicalRules(rulesFile)
                                             : builtinStrategy(strategy);
    if (!rules)
      return failWith(llvm::toString(rules.takeError()));
    if (failed(applyLogicalRules(*module, meshes.front(), *rules)))
      return 1;
  }

  // The training step, then SPMD partitioning.
  std::string stepName =
      entry.empty() ? std::string("train_step") : entry.getValue();
  bool hasStep = module->lookupSymbol<func::FuncOp>(stepName) != nullptr;
  if (!entry.empty() && !hasStep)
    return failWith(inputFile + " has no function @" + entry);
  std::string pipeline;
  if (!hasStep) {
    if (!module->lookupSymbol<func::FuncOp>(funcName))
      return failWith(inputFile + " has neither @train_step nor @" + funcName +
                      " to build one from");
    auto [name, rest] = StringRef(optimizer).trim().split(' ');
    // lr-argument: the executable's --lr sets the peak learning rate.
    pipeline = ("tessel-train-step{func=" + funcName + " optimizer=" + name +
                " lr-argument=true" +
                (accumulate ? " accumulate=true " : " ") + rest + "}")
                   .str();
  }
  if (!meshes.empty())
    pipeline += std::string(pipeline.empty() ? "" : ",") + "tessel-propagate";
  if (!pipeline.empty() && failed(runPipeline(*module, pipeline, tm, root)))
    return 1;
  if (emit == "tessel")
    return failed(writeModule(*module, outputFile));
  if (!meshes.empty() &&
      failed(runPipeline(
          *module, "tessel-partition,tessel-optimize-collectives", tm, root)))
    return 1;
  if (emit == "local")
    return failed(writeModule(*module, outputFile));

  // Only the step is compiled; describe it for the runtime.
  auto step = module->lookupSymbol<func::FuncOp>(stepName);
  for (auto f : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (f != step)
      f.erase();
  FailureOr<::tessel::rt::Program> program = describe(step);
  if (failed(program))
    return 1;
  program->target = cpu->described;
  std::string json = ::tessel::rt::printProgram(*program);
  if (printProgramInfo)
    llvm::outs() << json << "\n";
  // Under a reserved name: a step called `main` (or any C symbol the
  // runtime defines) would otherwise take that symbol's place at link time.
  step.setSymName("__tessel_step");
  EntrySignature signature;
  signature.function = "__tessel_step";
  for (const auto &t : program->arguments)
    signature.buffers.emplace_back(t.shape.begin(), t.shape.end());
  for (const auto &t : program->results)
    signature.buffers.emplace_back(t.shape.begin(), t.shape.end());

  if (failed(runPipeline(*module, "tessel-lower-to-linalg", tm, root)))
    return 1;
  if (emit == "linalg")
    return failed(writeModule(*module, outputFile));
  {
    PassManager pm(&context);
    if (failed(buildCpuLoweringPipeline(pm)))
      return failWith("internal error: the CPU pipeline does not parse");
    if (timing)
      pm.enableTiming(root);
    if (failed(pm.run(*module)))
      return 1;
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    TimingScope t = root.nest("translate to LLVM IR and optimize");
    auto translated =
        translateToLLVMIR(*module, llvmContext, signature, json, *cpu,
                          optLevel);
    if (!translated)
      return failWith(llvm::toString(translated.takeError()));
    llvmModule = std::move(*translated);
  }
  if (emit == "llvm") {
    std::error_code ec;
    llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_None);
    if (ec)
      return failWith("cannot write " + outputFile + ": " + ec.message());
    llvmModule->print(out.os(), nullptr);
    out.keep();
    return 0;
  }
  std::string object = emit == "obj" ? outputFile : outputFile + ".o";
  {
    TimingScope t = root.nest("emit object code");
    if (llvm::Error err = writeObjectFile(*llvmModule, object, *cpu, optLevel))
      return failWith(llvm::toString(std::move(err)));
  }
  if (emit == "obj")
    return 0;

  // Link: the program, libtessel_rt and what it needs.
  TimingScope t = root.nest("link");
  std::string cxx = TESSEL_CXX;
  if (const char *env = std::getenv("TESSEL_CXX"))
    cxx = env;
  llvm::ErrorOr<std::string> driver = llvm::sys::findProgramByName(cxx);
  if (!driver)
    return failWith("cannot find the C++ compiler driver '" + cxx +
                    "' to link with (set TESSEL_CXX)");
  std::vector<std::string> args = {*driver,
                                   object,
                                   "-o",
                                   outputFile,
                                   TESSEL_RT_LIBRARY,
                                   TESSEL_SUPPORT_LIBRARY,
                                   TESSEL_OPENBLAS_LIBRARY,
                                   "-L" TESSEL_LLVM_LIBRARY_DIR,
                                   "-lLLVM",
                                   "-Wl,-rpath," TESSEL_LLVM_LIBRARY_DIR,
                                   "-lm",
                                   "-lpthread"};
  // MPI's libraries (a ;-separated CMake list), and the sanitizers a
  // TESSEL_SANITIZE build of the runtime needs (space-separated); usually
  // both empty.
  SmallVector<StringRef> extra;
  StringRef(TESSEL_MPI_LIBRARIES).split(extra, ';', -1, false);
  StringRef(TESSEL_LINK_FLAGS).split(extra, ' ', -1, false);
  for (StringRef arg : extra)
    args.push_back(arg.str());
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(*driver, argRefs, std::nullopt, {}, 0, 0,
                                     &linkError);
  llvm::sys::fs::remove(object);
  if (rc != 0)
    return failWith("linking " + outputFile + " failed" +
                    (linkError.empty() ? "" : ": " + linkError));
  return 0;
}
