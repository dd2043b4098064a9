// A pass plugin that fails to register: its pass
// takes the name of one of Tessel's own (a plain MLIR plugin: no tessel-
// version, so the version check lets it through).
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "mlir/IR/BuiltinOps.h"
using namespace mlir;
namespace {
struct Clash : PassWrapper<Clash, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(Clash)
  StringRef getArgument() const override { return "tessel-propagate"; }
  void runOnOperation() override {}
};
}
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Clash", "1.0", [] { PassRegistration<Clash>(); }};
}
