//===- EntryPoint.cpp - the program's exported entry and description ------===//
//
// Two passes frame the CPU pipeline, so that `tessel-opt` runs exactly what
// `tessel-compile` runs and the contract with the runtime is made in the IR:
//
//  * `tessel-export-entry` (first, on the partitioned program) describes the
//    entry functions for the runtime (tessel/program/Describe.h; several
//    for a program whose stages run on sub-meshes), numbers the
//    communicator groups, validates the description, and records it and
//    each entry's buffer shapes as module attributes; it drops the other
//    public functions, renames entry K to a reserved symbol and sets the
//    target triple and data layout of `cpu`.
//  * `tessel-emit-entry` (last, on the LLVM dialect) turns them into
//    `tessel_entry_K(void **buffers)`, which expands each buffer into MLIR's
//    memref calling convention, the `tessel_entries` table and the
//    `tessel_program` string; kernels are marked noinline.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/lowering/CommGroups.h"
#include "tessel/lowering/CpuTarget.h"
#include "tessel/lowering/Lowering.h"
#include "tessel/program/Describe.h"
#include "tessel/runtime/Abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringExtras.h"

#include "llvm/Target/TargetMachine.h"

using namespace mlir;
namespace tp = ::tessel::program;

namespace {

constexpr llvm::StringLiteral kProgramAttr = tp::kProgramAttrName;
constexpr llvm::StringLiteral kEntryAttr = tp::kEntryAttrName;
/// What exported function K is called inside the module: a function named
/// `main` (or any symbol the runtime defines) would otherwise take that
/// symbol's place at link time.
std::string stepSymbol(size_t k) { return "__tessel_step_" + std::to_string(k); }
/// Its C entry point (runtime/Abi.h).
std::string entrySymbol(size_t k) {
  return TESSEL_RT_ENTRY "_" + std::to_string(k);
}

/// The functions of the comma-separated `names`, or the module's only
/// public function; empty (with an error) when one is missing.
SmallVector<func::FuncOp> findEntries(ModuleOp module, StringRef names) {
  SmallVector<func::FuncOp> found;
  if (!names.empty()) {
    SmallVector<StringRef> list;
    names.split(list, ',', -1, false);
    for (StringRef name : list) {
      auto f = module.lookupSymbol<func::FuncOp>(name.trim());
      if (!f) {
        module.emitError() << "no entry function @" << name.trim();
        return {};
      }
      found.push_back(f);
    }
    return found;
  }
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isPrivate() && !f.isExternal())
      found.push_back(f);
  if (found.size() != 1) {
    module.emitError() << "no entry function (give function=NAME[,NAME...]: "
                          "the module has no single public function)";
    return {};
  }
  return found;
}

struct ExportEntryPass
    : PassWrapper<ExportEntryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExportEntryPass)
  ExportEntryPass() = default;
  ExportEntryPass(const ExportEntryPass &other) : PassWrapper(other) {}
  StringRef getArgument() const override { return "tessel-export-entry"; }
  StringRef getDescription() const override {
    return "Describes the entry function for the runtime and records the "
           "description, its buffers and the target on the module";
  }
  Option<std::string> function{
      *this, "function",
      llvm::cl::desc("The entry functions, comma-separated (default: the "
                     "only public one)")};
  Option<std::string> cpu{
      *this, "cpu", llvm::cl::desc("The CPU, as tessel-compile --cpu")};
  Option<std::string> eval{
      *this, "eval",
      llvm::cl::desc("Entry functions (among `function`) that are "
                     "evaluations: run beside their mesh's step, reading its "
                     "parameters (comma-separated)")};

  Option<std::string> init{
      *this, "init",
      llvm::cl::desc("Entry functions that compute initial values: run once "
                     "before the first step, their results setting the "
                     "step's parameters of the same names (comma-separated)")};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string all = function;
    for (const std::string &extra : {eval.getValue(), init.getValue()})
      if (!extra.empty())
        all += (all.empty() ? "" : ",") + extra;
    SmallVector<func::FuncOp> entries = findEntries(module, all);
    if (entries.empty())
      return signalPassFailure();
    llvm::Expected<mlir::tessel::CpuSelection> selected =
        mlir::tessel::selectCpu(cpu);
    if (!selected) {
      module.emitError() << llvm::toString(selected.takeError());
      return signalPassFailure();
    }
    // The program exports these functions: other public ones go.
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (f.isPublic() && !llvm::is_contained(entries, f))
        f.erase();
    FailureOr<tp::Program> program = describeProgram(module, entries);
    if (failed(program))
      return signalPassFailure();
    program->target = selected->described;
    // Moved into the description, which carries it from here on.
    if (auto flops = module->getAttrOfType<FloatAttr>(
            tp::kModelFlopsAttrName)) {
      program->modelFlopsPerStep = flops.getValueAsDouble();
      module->removeAttr(tp::kModelFlopsAttrName);
    }
    for (auto [list, kind] : {std::pair{eval.getValue(), "eval"},
                              std::pair{init.getValue(), "init"}})
      for (StringRef name : llvm::split(list, ','))
        for (tp::Entry &e : program->entries)
          if (e.name == name.trim())
            e.kind = kind;
    if (llvm::Error err = tp::validateProgram(*program)) {
      entries.front().emitError() << llvm::toString(std::move(err));
      return signalPassFailure();
    }
    Builder b(module.getContext());
    SmallVector<Attribute> exported;
    for (auto [k, entry] : llvm::enumerate(entries)) {
      const tp::Entry &e = program->entries[k];
      SmallVector<Attribute> buffers;
      for (const auto *list : {&e.arguments, &e.results})
        for (const tp::TensorInfo &t : *list)
          buffers.push_back(b.getDenseI64ArrayAttr(
              SmallVector<int64_t>(t.shape.begin(), t.shape.end())));
      StringAttr step = b.getStringAttr(stepSymbol(k));
      if (failed(SymbolTable::replaceAllSymbolUses(entry, step, module)))
        return signalPassFailure();
      entry.setSymName(step);
      exported.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("function", step),
           b.getNamedAttr("symbol", b.getStringAttr(entrySymbol(k))),
           b.getNamedAttr("buffers", b.getArrayAttr(buffers))}));
    }
    module->setAttr(kProgramAttr,
                    b.getStringAttr(tp::printProgram(*program)));
    module->setAttr(kEntryAttr, b.getArrayAttr(exported));
    if (failed(setTarget(module, *selected)))
      signalPassFailure();
  }

  /// The description of `entries` (before renaming): their meshes, the
  /// communicator groups (numbered here) and every mesh those use.
  static FailureOr<tp::Program> describeProgram(
      ModuleOp module, ArrayRef<func::FuncOp> entries) {
    tp::Program program;
    program.groups = mlir::tessel::assignCommGroups(module);
    for (auto [k, entry] : llvm::enumerate(entries)) {
      FailureOr<tp::Entry> described =
          tp::describeEntry(entry, entrySymbol(k));
      if (failed(described))
        return failure();
      described->groups = mlir::tessel::groupsUsedBy(entry);
      if (auto regions = entry->getAttrOfType<ArrayAttr>("tessel.regions"))
        for (Attribute name : regions)
          described->regions.push_back(cast<StringAttr>(name).str());
      tp::MeshInfo mesh = tp::describeMesh(entry);
      if (!program.findMesh(mesh.name))
        program.meshes.push_back(std::move(mesh));
      program.entries.push_back(std::move(*described));
    }
    if (failed(describeGroupMeshes(module, program)))
      return failure();
    return program;
  }

  /// Adds every mesh a group communicates on (sub-meshes of the entry's).
  static LogicalResult describeGroupMeshes(ModuleOp module,
                                           tp::Program &program) {
    for (const tp::CommGroup &g : program.groups) {
      if (program.findMesh(g.mesh))
        continue;
      auto mesh = module.lookupSymbol<mlir::tessel::MeshOp>(g.mesh);
      if (!mesh)
        return module.emitError() << "a collective refers to an unknown mesh @"
                                  << g.mesh;
      program.meshes.push_back(tp::describeMesh(mesh));
    }
    return success();
  }

  LogicalResult setTarget(ModuleOp module,
                          const mlir::tessel::CpuSelection &selected) {
    auto machine = mlir::tessel::createTargetMachine(selected, /*optLevel=*/2);
    if (!machine)
      return module.emitError() << llvm::toString(machine.takeError());
    Builder b(module.getContext());
    module->setAttr(LLVM::LLVMDialect::getTargetTripleAttrName(),
                    b.getStringAttr((*machine)->getTargetTriple().str()));
    module->setAttr(LLVM::LLVMDialect::getDataLayoutAttrName(),
                    b.getStringAttr((*machine)
                                        ->createDataLayout()
                                        .getStringRepresentation()));
    return success();
  }
};

struct EmitEntryPass : PassWrapper<EmitEntryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EmitEntryPass)
  StringRef getArgument() const override { return "tessel-emit-entry"; }
  StringRef getDescription() const override {
    return "Adds tessel_entry and the tessel_program description to an "
           "LLVM-dialect module exported by tessel-export-entry";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entries = module->getAttrOfType<ArrayAttr>(kEntryAttr);
    auto program = module->getAttrOfType<StringAttr>(kProgramAttr);
    if (!entries || !program) {
      module.emitError() << "no exported entry; run tessel-export-entry "
                         << "before lowering";
      return signalPassFailure();
    }
    for (Attribute entry : entries)
      if (failed(emitEntry(module, cast<DictionaryAttr>(entry))))
        return signalPassFailure();
    emitTable(module, entries);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    std::string text = program.getValue().str();
    text.push_back('\0');
    LLVM::GlobalOp::create(
        b, module.getLoc(),
        LLVM::LLVMArrayType::get(b.getI8Type(), text.size()),
        /*isConstant=*/true, LLVM::Linkage::External, TESSEL_RT_PROGRAM,
        b.getStringAttr(text));
    nameConstantsInOrder(module);
    // Kernels stay functions (see tessel-outline-kernels).
    for (auto f : module.getOps<LLVM::LLVMFuncOp>())
      if (f.getName().starts_with("__tessel_kernel"))
        f.setNoInline(true);
    module->removeAttr(kEntryAttr);
    module->removeAttr(kProgramAttr);
  }

  /// Bufferization names constant globals (`__constant_11xi64_3`) in an
  /// order that differs from run to run (it visits functions in the order
  /// of a pointer-keyed map). They are renamed and placed in the order of
  /// their first use, so a compile gives the same bits every time.
  static void nameConstantsInOrder(ModuleOp module) {
    llvm::StringMap<std::string> renamed;
    SmallVector<LLVM::GlobalOp> order;
    SymbolTable symbols(module);
    module.walk([&](LLVM::AddressOfOp use) {
      StringRef name = use.getGlobalName();
      if (!name.starts_with("__constant_") || renamed.count(name))
        return;
      auto global = symbols.lookup<LLVM::GlobalOp>(name);
      if (!global)
        return;
      renamed[name] = "__tessel_constant_" + std::to_string(order.size());
      order.push_back(global);
    });
    module.walk([&](LLVM::AddressOfOp use) {
      auto it = renamed.find(use.getGlobalName());
      if (it != renamed.end())
        use.setGlobalName(it->second);
    });
    Block *body = module.getBody();
    for (LLVM::GlobalOp global : llvm::reverse(order)) {
      global.setSymName(renamed[global.getSymName()]);
      global->moveBefore(body, body->begin());
    }
  }

  /// `tessel_entries`: the entry points in the description's order.
  static void emitTable(ModuleOp module, ArrayAttr entries) {
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto type = LLVM::LLVMArrayType::get(ptr, entries.size());
    auto table = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                        LLVM::Linkage::External,
                                        TESSEL_RT_ENTRIES, Attribute());
    Block *init = b.createBlock(&table.getInitializerRegion());
    b.setInsertionPointToStart(init);
    Value array = LLVM::UndefOp::create(b, loc, type);
    for (auto [k, entry] : llvm::enumerate(entries)) {
      auto symbol = cast<DictionaryAttr>(entry).getAs<StringAttr>("symbol");
      Value address =
          LLVM::AddressOfOp::create(b, loc, ptr, symbol.getValue());
      array = LLVM::InsertValueOp::create(b, loc, array, address,
                                          ArrayRef<int64_t>{int64_t(k)});
    }
    LLVM::ReturnOp::create(b, loc, array);
  }

  /// tessel_entry_K(void **buffers): loads each buffer pointer and calls
  /// the step with (allocated, aligned, offset 0, sizes, strides) per
  /// buffer.
  LogicalResult emitEntry(ModuleOp module, DictionaryAttr entry) {
    auto name = entry.getAs<StringAttr>("function");
    auto symbol = entry.getAs<StringAttr>("symbol");
    auto buffers = entry.getAs<ArrayAttr>("buffers");
    auto step = name ? module.lookupSymbol<LLVM::LLVMFuncOp>(name)
                     : LLVM::LLVMFuncOp();
    if (!step || !buffers || !symbol)
      return module.emitError() << "the lowered module has no exported "
                                << "function " << name;
    Location loc = step.getLoc();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto i64 = b.getI64Type();
    auto func = LLVM::LLVMFuncOp::create(
        b, loc, symbol.getValue(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                    {ptr}));
    Block *body = func.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    auto constant = [&](int64_t v) {
      return LLVM::ConstantOp::create(b, loc, i64, v).getResult();
    };
    SmallVector<Value> args;
    for (auto [i, attr] : llvm::enumerate(buffers)) {
      ArrayRef<int64_t> shape = cast<DenseI64ArrayAttr>(attr).asArrayRef();
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      Value p = LLVM::LoadOp::create(b, loc, ptr, slot);
      args.append({p, p, constant(0)});
      for (int64_t size : shape)
        args.push_back(constant(size));
      SmallVector<int64_t> strides(shape.size());
      int64_t stride = 1;
      for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
        strides[d] = stride;
        stride *= shape[d];
      }
      for (int64_t s : strides)
        args.push_back(constant(s));
    }
    if (args.size() != step.getNumArguments())
      return step.emitError() << "takes " << step.getNumArguments()
                              << " lowered arguments, but its buffers expand "
                              << "to " << args.size();
    LLVM::CallOp::create(b, loc, step, args);
    LLVM::ReturnOp::create(b, loc, ValueRange());
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::tessel::createExportEntryPass() {
  return std::make_unique<ExportEntryPass>();
}

std::unique_ptr<Pass> mlir::tessel::createEmitEntryPass() {
  return std::make_unique<EmitEntryPass>();
}

void mlir::tessel::registerEntryPointPasses() {
  PassRegistration<ExportEntryPass>();
  PassRegistration<EmitEntryPass>();
}
