//===- CpuPipeline.cpp - linalg on tensors to a native object file --------===//

#include "tessel/lowering/CpuTarget.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/runtime/Abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>

using namespace mlir;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

void mlir::tessel::registerCpuLoweringDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

// Each step, and why it is there:
//  * a function of more than 400 top-level ops is cut into private
//    functions of 400 ops that take bare pointers (OutlineSegments.cpp):
//    fusion, bufferization and deallocation cost more than linearly in the
//    ops of one function;
//  * element-wise fusion merges producer generics into consumers, so a chain
//    of element-wise ops (and the broadcasts feeding them) is one loop nest,
//    never across the schedule actions of a pipeline stage
//    (FuseElementwise.cpp);
//  * one-shot bufferization over the whole module, identity layouts at the
//    function boundary so the entry point passes plain pointers;
//  * results become out-parameters the runtime owns, written in place
//    (hoist-static-allocs), and temporaries are freed by the ownership-based
//    deallocation pipeline, which frees at the end of the block, then moved
//    up to just after their last use (FreeAfterLastUse.cpp); the buffers
//    of a function cut into pieces are hidden from that pipeline, whose
//    simplification is quadratic in the buffers of a block, and freed the
//    same way (OutlineSegments.cpp);
//  * loops, then the LLVM dialect; math without an LLVM intrinsic (tanh, erf)
//    calls libm.
static constexpr const char *kPipelineCanonicalize = "canonicalize";
// Then OutlineSegmentsPass (long functions in pieces; fusion too costs more
// than linearly in the ops of one function), then:
static constexpr const char *kPipeline =
    "func.func(tessel-fuse-elementwise),"
    "canonicalize,cse";
// Then:
static constexpr const char *kPipelineBufferize =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    // A split collective's wait returns its result argument as it is: the
    // callers use that buffer.
    "drop-equivalent-buffer-results";
// Then ShareCollectiveInputsPass, CopyAliasedResultsPass, then:
static constexpr const char *kPipelineOutParams =
    "buffer-results-to-out-params{hoist-static-allocs "
    "modify-public-functions}";
// Then ForwardOutParamsPass, then:
static constexpr const char *kPipelineDealloc =
    "func.func(buffer-deallocation-pipeline)";
// Arithmetic on bf16/f16 (LLVM would widen it per op anyway).
static constexpr const char *kWidenNarrowFloats =
    "math-extend-to-supported-types{target-type=f32},"
    "arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32}";
// Then memref.copy -> linalg.copy (strided copies would otherwise call the
// MLIR C runner library), then loops and the LLVM dialect:
static constexpr const char *kLoopsToCF =
    "convert-linalg-to-loops,"
    "canonicalize,"
    // Strided views with dynamic offsets expand into affine.apply, which
    // lower-affine must see after them.
    "expand-strided-metadata,"
    "lower-affine,"
    "convert-scf-to-cf,";
// Host code's conversions to the LLVM dialect, for every target (a GPU
// target adds its launch lowering before reconcile-unrealized-casts).
static constexpr const char *kHostConversionsToLLVM =
    "convert-math-to-llvm,"
    "convert-math-to-libm,"
    "finalize-memref-to-llvm{use-generic-functions use-aligned-alloc},"
    "convert-arith-to-llvm,"
    "convert-func-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-index-to-llvm";

namespace {
/// Rewrites memref.copy into linalg.copy, which becomes plain loops.
struct CopyToLinalgPass
    : PassWrapper<CopyToLinalgPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CopyToLinalgPass)
  StringRef getArgument() const override { return "tessel-copy-to-linalg"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect>();
  }
  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};
} // namespace

/// Gives every returned buffer a home of its own: a buffer returned twice
/// (`return %v, %v`), or an argument returned as is, is copied, since
/// buffer-results-to-out-params cannot write one buffer into two
/// out-parameters (it crashes).
struct CopyAliasedResultsPass
    : PassWrapper<CopyAliasedResultsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CopyAliasedResultsPass)
  StringRef getArgument() const override {
    return "tessel-copy-aliased-results";
  }
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      OpBuilder b(ret);
      llvm::SmallDenseSet<Value, 8> seen;
      for (OpOperand &o : ret->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(o.get().getType());
        bool aliased =
            !seen.insert(o.get()).second || isa<BlockArgument>(o.get());
        if (!type || !aliased || !type.hasStaticShape())
          continue;
        Value copy = memref::AllocOp::create(b, ret.getLoc(), type);
        memref::CopyOp::create(b, ret.getLoc(), o.get(), copy);
        o.set(copy);
      }
    });
  }
};

/// Lets a result be written in place: `%a = alloc; <writes %a>; copy %a
/// to %out; return`, where %out is an out-parameter used only by that copy,
/// becomes the writes into %out. buffer-results-to-out-params hoists
/// returned allocations of a function itself, not those it makes at call
/// sites of callees it rewrote (a matmul's runtime call, whose result
/// would otherwise be copied once more: 128 MiB per step for an 8192^2 bf16
/// result).
struct ForwardOutParamsPass
    : PassWrapper<ForwardOutParamsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ForwardOutParamsPass)
  StringRef getArgument() const override {
    return "tessel-forward-out-params";
  }
  StringRef getDescription() const override {
    return "Buffers copied into an out-parameter at the end become that "
           "out-parameter";
  }
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp f) {
      if (f.isExternal())
        return;
      Block &entry = f.getBody().front();
      SmallVector<memref::CopyOp> copies;
      for (auto copy : entry.getOps<memref::CopyOp>())
        copies.push_back(copy);
      for (memref::CopyOp copy : copies) {
        auto out = dyn_cast<BlockArgument>(copy.getTarget());
        auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
        if (!out || out.getOwner() != &entry || !out.hasOneUse() || !alloc ||
            alloc->getBlock() != &entry ||
            alloc.getType() != out.getType())
          continue;
        bool before = llvm::all_of(alloc->getUsers(), [&](Operation *u) {
          Operation *top = entry.findAncestorOpInBlock(*u);
          return top && (top == copy || top->isBeforeInBlock(copy));
        });
        if (!before)
          continue;
        copy.erase();
        alloc.getResult().replaceAllUsesWith(out);
        alloc.erase();
      }
    });
  }
};

/// Moves every linalg op of the program into a function of its own (a
/// kernel), so that LLVM optimizes many small functions instead of one
/// with thousands of loops: its passes grow faster than linearly with a
/// function's size (a 4-layer GPT step took 40 s in LLVM as one function).
/// Kernels are not inlined back.
struct OutlineKernelsPass
    : PassWrapper<OutlineKernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineKernelsPass)
  StringRef getArgument() const override { return "tessel-outline-kernels"; }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<Operation *> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<func::FuncOp>() &&
          !op->getParentOfType<linalg::LinalgOp>())
        ops.push_back(op);
    });
    OpBuilder b(module.getContext());
    // Identical kernels (every layer repeats the same shapes) are one.
    llvm::StringMap<func::FuncOp> byText;
    for (Operation *op : ops) {
      // Operands, then values the body reads from outside; constants are
      // cloned into the kernel rather than passed.
      llvm::SetVector<Value> inputs(op->operand_begin(), op->operand_end());
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(op->getRegions(), above);
      SmallVector<Operation *> constants;
      for (Value v : above) {
        Operation *def = v.getDefiningOp();
        if (def && def->hasTrait<OpTrait::ConstantLike>())
          constants.push_back(def);
        else
          inputs.insert(v);
      }
      // bf16/f16 scalars cross the call as their bits: passing them as
      // floats makes LLVM convert through f32 at the call boundary (a
      // libgcc call on CPUs without bf16 instructions).
      auto passedAs = [&](Type t) -> Type {
        if (t.isBF16() || t.isF16())
          return b.getI16Type();
        return t;
      };
      SmallVector<Type> argTypes;
      for (Value v : inputs)
        argTypes.push_back(passedAs(v.getType()));
      b.setInsertionPointToEnd(module.getBody());
      auto kernel = func::FuncOp::create(b, op->getLoc(), "__tessel_kernel",
                                         b.getFunctionType(argTypes, {}));
      kernel.setPrivate();
      Block *body = kernel.addEntryBlock();
      b.setInsertionPointToStart(body);
      IRMapping map;
      for (auto [v, arg] : llvm::zip(inputs, body->getArguments()))
        map.map(v, arg.getType() == v.getType()
                       ? Value(arg)
                       : arith::BitcastOp::create(b, op->getLoc(),
                                                  v.getType(), arg));
      for (Operation *c : constants)
        b.clone(*c, map);
      b.clone(*op, map);
      func::ReturnOp::create(b, op->getLoc());
      std::string text;
      {
        llvm::raw_string_ostream os(text);
        kernel.print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
      }
      auto [it, fresh] = byText.try_emplace(text, kernel);
      if (fresh)
        symbols.insert(kernel);
      else
        kernel.erase();
      kernel = it->second;
      b.setInsertionPoint(op);
      SmallVector<Value> args;
      for (auto [v, t] : llvm::zip(inputs, argTypes))
        args.push_back(t == v.getType() ? v
                                        : arith::BitcastOp::create(
                                              b, op->getLoc(), t, v));
      func::CallOp::create(b, op->getLoc(), kernel, args);
      op->erase();
    }
  }
};

/// exp, log, tanh and erf of f32 as polynomials (a few ulp), which LLVM
/// vectorizes, instead of calls into libm, which it cannot. sin and cos stay
/// libm calls: rotary embeddings take them of large angles.
struct ApproximateMathPass
    : PassWrapper<ApproximateMathPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateMathPass)
  StringRef getArgument() const override { return "tessel-approximate-math"; }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto chosen = [](StringRef name) {
      name.consume_front("math."); // names come with or without the prefix
      return llvm::is_contained(
          {"exp", "expm1", "log", "log1p", "log2", "tanh", "erf"}, name);
    };
    populateMathF32ExpansionPatterns(patterns, chosen);
    populateMathPolynomialApproximationPatterns(patterns, chosen);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

LogicalResult mlir::tessel::buildBufferizePipeline(OpPassManager &pm) {
  static std::once_flag registered;
  std::call_once(registered, [] { registerAllPasses(); });
  if (failed(parsePassPipeline(kPipelineCanonicalize, pm)))
    return failure();
  pm.addPass(mlir::tessel::createOutlineSegmentsPass());
  if (failed(parsePassPipeline(kPipeline, pm)))
    return failure();
  if (failed(parsePassPipeline(kPipelineBufferize, pm)))
    return failure();
  pm.addPass(mlir::tessel::createShareCollectiveInputsPass());
  pm.addPass(std::make_unique<CopyAliasedResultsPass>());
  if (failed(parsePassPipeline(kPipelineOutParams, pm)))
    return failure();
  pm.addPass(std::make_unique<ForwardOutParamsPass>());
  pm.addNestedPass<func::FuncOp>(createHideCallerBuffersPass());
  if (failed(parsePassPipeline(kPipelineDealloc, pm)))
    return failure();
  pm.addPass(createFreeCallerBuffersPass());
  pm.addNestedPass<func::FuncOp>(createFreeAfterLastUsePass());
  pm.addPass(std::make_unique<CopyToLinalgPass>());
  return success();
}

LogicalResult mlir::tessel::buildScalarMathPipeline(OpPassManager &pm) {
  // bf16/f16 arithmetic in f32, then conversions as integer code (see
  // ExpandFloatConversions.cpp): the same bits on every CPU (and GPU).
  if (failed(parsePassPipeline(kWidenNarrowFloats, pm)))
    return failure();
  pm.addPass(mlir::tessel::createExpandFloatConversionsPass());
  pm.addPass(std::make_unique<ApproximateMathPass>());
  return success();
}

llvm::StringRef mlir::tessel::hostConversionsToLLVM() {
  return kHostConversionsToLLVM;
}

LogicalResult mlir::tessel::buildHostToLLVMPipeline(OpPassManager &pm) {
  return parsePassPipeline(std::string(kLoopsToCF) + kHostConversionsToLLVM +
                               ",reconcile-unrealized-casts,canonicalize",
                           pm);
}

LogicalResult mlir::tessel::buildCpuLoweringPipeline(OpPassManager &pm) {
  if (failed(buildBufferizePipeline(pm)))
    return failure();
  pm.addPass(std::make_unique<OutlineKernelsPass>());
  if (failed(buildScalarMathPipeline(pm)))
    return failure();
  return buildHostToLLVMPipeline(pm);
}

namespace {
struct CpuPipelineOptions : PassPipelineOptions<CpuPipelineOptions> {
  Option<std::string> function{
      *this, "function",
      llvm::cl::desc("The entry function (default: the only public one)")};
  Option<std::string> cpu{*this, "cpu",
                          llvm::cl::desc("The CPU, as tessel-compile --cpu")};
};
} // namespace

void mlir::tessel::registerCpuPipeline() {
  PassRegistration<CopyToLinalgPass>();
  PassRegistration<CopyAliasedResultsPass>();
  PassRegistration<ForwardOutParamsPass>();
  PassRegistration<OutlineKernelsPass>();
  PassRegistration<ApproximateMathPass>();
  registerPass([] { return createExpandFloatConversionsPass(); });
  registerPass([] { return createFreeAfterLastUsePass(); });
  registerPass([] { return createOutlineSegmentsPass(); });
  registerPass([] { return createHideCallerBuffersPass(); });
  registerPass([] { return createFreeCallerBuffersPass(); });
  registerPass([] { return createFuseElementwisePass(); });
  registerEntryPointPasses();
  PassPipelineRegistration<>(
      "tessel-cpu-lowering",
      "Linalg on tensors to the LLVM dialect: fusion, bufferization, kernels, "
      "loops (after tessel-lower-to-linalg)",
      [](OpPassManager &pm) {
        if (failed(buildCpuLoweringPipeline(pm)))
          llvm::report_fatal_error("the CPU pipeline does not parse");
      });
  PassPipelineRegistration<CpuPipelineOptions>(
      "tessel-cpu-pipeline",
      "A partitioned program to an LLVM-dialect module with tessel_entry "
      "and the program description: what tessel-compile compiles",
      [](OpPassManager &pm, const CpuPipelineOptions &options) {
        std::string exportEntry = "tessel-export-entry{function=" +
                                  options.function + " cpu=" + options.cpu +
                                  "},tessel-lower-to-linalg";
        if (failed(parsePassPipeline(exportEntry, pm)) ||
            failed(buildCpuLoweringPipeline(pm)))
          llvm::report_fatal_error("the CPU pipeline does not parse");
        pm.addPass(createEmitEntryPass());
      });
}

llvm::Expected<std::unique_ptr<llvm::Module>>
mlir::tessel::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context) {
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  return std::move(llvmModule);
}

namespace {
/// Host functions (the entry points: calls to kernels, the runtime's
/// collectives, allocation) run each op once per step and hold no loops
/// (every loop nest is an outlined kernel), while LLVM's optimizer and
/// code generator grow faster than linearly with a function's size: a
/// 64-layer model's step spent most of its compile on its entry function.
bool isLargeHostFunction(const llvm::Function &f, unsigned threshold) {
  return threshold > 0 && !f.isDeclaration() &&
         !f.getName().starts_with("__tessel_kernel") &&
         f.getInstructionCount() >= threshold;
}

} // namespace

std::unique_ptr<llvm::Module>
mlir::tessel::splitLargeHostFunctions(llvm::Module &module,
                                      unsigned threshold) {
  llvm::SmallVector<llvm::Function *> functions;
  for (llvm::Function &f : module)
    if (isLargeHostFunction(f, threshold))
      functions.push_back(&f);
  if (functions.empty())
    return nullptr;
  llvm::SmallPtrSet<const llvm::GlobalValue *, 4> large(functions.begin(),
                                                        functions.end());
  unsigned unnamed = 0;
  for (llvm::GlobalValue &g : module.global_values()) {
    if (!g.hasLocalLinkage())
      continue;
    if (!g.hasName())
      g.setName("__tessel_global_" + llvm::Twine(unnamed++));
    g.setLinkage(llvm::GlobalValue::ExternalLinkage);
    g.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> host = llvm::CloneModule(
      module, map,
      [&](const llvm::GlobalValue *g) { return large.contains(g); });
  for (llvm::Function &f : *host)
    if (!f.isDeclaration()) {
      f.addFnAttr(llvm::Attribute::NoInline);
      f.addFnAttr(llvm::Attribute::OptimizeNone);
    }
  for (llvm::Function *f : functions)
    f->deleteBody();
  return host;
}

llvm::Error mlir::tessel::optimizeLLVMIR(llvm::Module &module,
                                         const CpuSelection &cpu,
                                         unsigned optLevel) {
  auto tm = createTargetMachine(cpu, optLevel);
  if (!tm)
    return tm.takeError();
  if (llvm::Error err = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                                  tm->get())(&module))
    return err;
  moveHalfWordsAsIntegers(module);
  return llvm::Error::success();
}

llvm::Error mlir::tessel::writeObjectFile(llvm::Module &module,
                                    const std::string &path,
                                    const CpuSelection &cpu,
                                    unsigned optLevel) {
  auto tm = createTargetMachine(cpu, optLevel);
  if (!tm)
    return tm.takeError();
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write " + path + ": " + ec.message());
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, out.os(), nullptr,
                                 llvm::CodeGenFileType::ObjectFile))
    return fail("the target cannot emit object files");
  pm.run(module);
  out.keep();
  return llvm::Error::success();
}
