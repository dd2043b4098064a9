//===- Native.cpp - tessel-compile: LLVM IR, objects, the link ------------===//
//
// The end of tessel-compile's flow: the LLVM-dialect module to LLVM IR,
// optimized (large host functions apart, unoptimized), object files, and
// the link with Tessel's runtime archives into an executable; and the
// checks of --custom-calls and --plan against the model.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/CpuTarget.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/support/CustomCalls.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace tessel_compile;

int tessel_compile::failWith(const llvm::Twine &message) {
  llvm::errs() << "tessel-compile: error: " << message << "\n";
  return 1;
}

namespace {

/// Tessel's own runtime archive `built` (a path in the build tree), or its
/// installed copy: an installed tessel-compile finds the archives in
/// ../lib/tessel beside its bin directory (cmake/TesselInstall.cmake).
std::string tesselArchive(StringRef built) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("tessel-compile",
                                                     (void *)&anchor);
  SmallString<256> installed(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(installed, "lib", "tessel",
                          llvm::sys::path::filename(built));
  return llvm::sys::fs::exists(installed) ? std::string(installed)
                                          : built.str();
}

/// Runs the C++ compiler driver with `args` (after the driver itself).
int runDriver(std::vector<std::string> args, const std::string &what) {
  std::string cxx = TESSEL_CXX;
  if (const char *env = std::getenv("TESSEL_CXX"))
    cxx = env;
  llvm::ErrorOr<std::string> driver = llvm::sys::findProgramByName(cxx);
  if (!driver)
    return failWith("cannot find the C++ compiler driver '" + cxx +
                    "' to link with (set TESSEL_CXX)");
  args.insert(args.begin(), *driver);
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(*driver, argRefs, std::nullopt, {}, 0, 0,
                                     &linkError);
  if (rc != 0)
    return failWith(what + " failed" +
                    (linkError.empty() ? "" : ": " + linkError));
  return 0;
}

int linkExecutable(const std::vector<std::string> &objects,
                   const NativeOptions &options) {
  std::vector<std::string> args = objects;
  args.push_back("-o");
  args.push_back(options.output);
  for (std::string &lib : runtimeLibraries(options.target))
    args.push_back(std::move(lib));
  // The sanitizers a TESSEL_SANITIZE build of the runtime needs
  // (space-separated); usually empty.
  SmallVector<StringRef> extra;
  StringRef(TESSEL_LINK_FLAGS).split(extra, ' ', -1, false);
  for (StringRef arg : extra)
    args.push_back(arg.str());
  int rc = runDriver(std::move(args), "linking " + options.output);
  for (const std::string &object : objects)
    llvm::sys::fs::remove(object);
  return rc;
}

} // namespace

/// The libraries an executable of `target` links, after its object.
std::vector<std::string> tessel_compile::runtimeLibraries(StringRef target) {
  std::vector<std::string> libs;
  auto add = [&](StringRef list, char sep) {
    SmallVector<StringRef> parts;
    list.split(parts, sep, -1, false);
    for (StringRef p : parts)
      libs.push_back(p.str());
  };
  if (target == "cuda") {
#ifdef TESSEL_GPU_RT_LIBRARY
    libs = {tesselArchive(TESSEL_GPU_RT_LIBRARY),
            tesselArchive(TESSEL_PROGRAM_LIBRARY),
            tesselArchive(TESSEL_SUPPORT_LIBRARY)};
    add(TESSEL_LLVM_SUPPORT_LIBRARIES, ' ');
    libs.insert(libs.end(), {TESSEL_CUDART_STATIC, "-ldl", "-lrt", "-lm",
                             "-lpthread"});
#endif
    return libs;
  }
  libs = {tesselArchive(TESSEL_RT_LIBRARY),
          tesselArchive(TESSEL_PROGRAM_LIBRARY),
          tesselArchive(TESSEL_SUPPORT_LIBRARY),
          TESSEL_OPENBLAS_LIBRARY,
          "-lm",
          "-lpthread"};
  // LLVMSupport and LLVMDemangle, static: executables run where there is
  // no LLVM. MPI's libraries (a ;-separated CMake list).
  add(TESSEL_LLVM_SUPPORT_LIBRARIES, ' ');
  add(TESSEL_MPI_LIBRARIES, ';');
  return libs;
}

/// Translates the LLVM-dialect module to LLVM IR, optimizes it and writes
/// the object file (or the IR, for --emit llvm); then links. Host code is
/// for `cpu` on every target.
int tessel_compile::emitNative(ModuleOp module, const CpuSelection &cpu,
                               const NativeOptions &options,
                               TimingScope &root) {
  const std::string &outputFile = options.output, &emit = options.emit;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    TimingScope t = root.nest("translate to LLVM IR");
    auto translated = translateToLLVMIR(module, llvmContext);
    if (!translated)
      return failWith(llvm::toString(translated.takeError()));
    llvmModule = std::move(*translated);
  }
  if (emit == "llvm") {
    // As translated, before LLVM's optimizer: what `tessel-opt
    // --tessel-cpu-pipeline | mlir-translate --mlir-to-llvmir` gives.
    std::error_code ec;
    llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_None);
    if (ec)
      return failWith("cannot write " + outputFile + ": " + ec.message());
    llvmModule->print(out.os(), nullptr);
    out.keep();
    return 0;
  }
  // A GPU target's host code is glue around launches and library calls,
  // one long function of them (a 24-layer GPT step: thousands): LLVM's
  // optimizer gains nothing there and its vectorizers take minutes.
  unsigned hostOptLevel = options.target == "cpu" ? options.optLevel : 0;
  // The CPU target's large host functions (a step's entry code) are
  // written apart, unoptimized (--unoptimized-host-size).
  std::unique_ptr<llvm::Module> host;
  if (hostOptLevel > 0) {
    TimingScope t = root.nest("optimize LLVM IR");
    host = splitLargeHostFunctions(*llvmModule, options.largeHostFunction);
    if (llvm::Error err = optimizeLLVMIR(*llvmModule, cpu, options.optLevel))
      return failWith(llvm::toString(std::move(err)));
  } else {
    moveHalfWordsAsIntegers(*llvmModule);
  }
  std::vector<std::string> objects = {
      emit == "obj" && !host ? outputFile : outputFile + ".o"};
  {
    TimingScope t = root.nest("emit object code");
    if (llvm::Error err =
            writeObjectFile(*llvmModule, objects[0], cpu, hostOptLevel))
      return failWith(llvm::toString(std::move(err)));
  }
  if (host) {
    size_t functions = llvm::count_if(
        *host, [](const llvm::Function &f) { return !f.isDeclaration(); });
    TimingScope t = root.nest("emit host object code (" +
                              std::to_string(functions) +
                              " functions, unoptimized)");
    moveHalfWordsAsIntegers(*host);
    objects.push_back(outputFile + ".host.o");
    if (llvm::Error err = writeObjectFile(*host, objects[1], cpu, 0))
      return failWith(llvm::toString(std::move(err)));
  }
  if (emit == "obj") {
    if (!host)
      return 0;
    // One relocatable object of both.
    std::vector<std::string> args = {"-r",       "-nostdlib", objects[0],
                                     objects[1], "-o",        outputFile};
    int rc = runDriver(args, "combining the objects into " + outputFile);
    for (const std::string &object : objects)
      llvm::sys::fs::remove(object);
    return rc;
  }
  TimingScope t = root.nest("link");
  return linkExecutable(objects, options);
}


llvm::LogicalResult tessel_compile::checkCustomCalls(ModuleOp module,
                                                     StringRef libraries,
                                                     StringRef target) {
  if (libraries.empty())
    return llvm::success();
  if (llvm::Error e = ::tessel::customcalls::loadLibraries(libraries)) {
    failWith(llvm::toString(std::move(e)));
    return llvm::failure();
  }
  namespace cc = ::tessel::customcalls;
  cc::Entry entry = target == "cuda" ? cc::Entry::Cuda : cc::Entry::Cpu;
  WalkResult walk = module.walk([&](CustomCallOp op) {
    auto kernel = cc::lookupEntry(op.getKernel(), entry);
    if (kernel)
      return WalkResult::advance();
    op.emitError() << llvm::toString(kernel.takeError());
    return WalkResult::interrupt();
  });
  return llvm::failure(walk.wasInterrupted());
}

int tessel_compile::copyKernelLibraries(StringRef libraries,
                                        StringRef output) {
  SmallVector<StringRef> paths;
  libraries.split(paths, ',', -1, false);
  if (paths.empty())
    return 0;
  std::string dir = (output + ".kernels").str();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return failWith("cannot create " + dir + ": " + ec.message());
  for (StringRef path : paths) {
    SmallString<256> to(dir);
    llvm::sys::path::append(to, llvm::sys::path::filename(path.trim()));
    if (std::error_code ec = llvm::sys::fs::copy_file(path.trim(), to))
      return failWith("cannot copy " + path.trim() + " to " + to + ": " +
                      ec.message());
  }
  return 0;
}

llvm::LogicalResult tessel_compile::checkPlanBatch(ModuleOp module,
                                                   StringRef funcName,
                                                   int64_t modelBatch) {
  auto forward = module.lookupSymbol<func::FuncOp>(funcName);
  if (!forward)
    return llvm::success(); // buildProgram names the missing function
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto axes = forward.getArgAttrOfType<ArrayAttr>(
        i, TesselDialect::kLogicalAxesAttrName);
    auto type = dyn_cast<RankedTensorType>(forward.getArgument(i).getType());
    if (!axes || !type)
      continue;
    for (auto [d, axis] : llvm::enumerate(axes)) {
      auto name = dyn_cast<StringAttr>(axis);
      if (!name || name.getValue() != "batch")
        continue;
      if (type.getDimSize(d) == modelBatch)
        return llvm::success();
      return forward.emitError()
             << "--plan compiles a forward whose batch is " << modelBatch
             << " (one microbatch of every data-parallel replica), but @"
             << funcName << "'s is " << type.getDimSize(d)
             << ": regenerate the model with that batch (tessel-models "
                "--batch "
             << modelBatch << ")";
    }
  }
  return llvm::success();
}
