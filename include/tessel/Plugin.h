//===- Plugin.h - pass and dialect plugins for Tessel's tools -------------===//
//
// What a plugin built outside the tree needs (docs/extending.md), and what
// tessel-opt and tessel-compile do with it. A plugin is an MLIR pass or
// dialect plugin (mlir/Tools/Plugins) linked against libTessel.so
// (Tessel::Tessel) that gives TESSEL_PLUGIN_VERSION as its version:
//
//   extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
//   mlirGetPassPluginInfo() {
//     return {MLIR_PLUGIN_API_VERSION, "my-passes", TESSEL_PLUGIN_VERSION,
//             [] { registerMyPasses(); }};
//   }
//
// The tools refuse a plugin whose version names another Tessel minor
// version (0.3.x plugins load in any 0.3.y). A plugin
// of plain MLIR (another version string) loads as mlir-opt would load it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PLUGIN_H
#define TESSEL_PLUGIN_H

#include "tessel/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

/// The version string a Tessel plugin reports.
#define TESSEL_PLUGIN_VERSION "tessel-" TESSEL_VERSION_STRING

namespace mlir::tessel {

/// Fails when a plugin's version names a Tessel of another major.minor
/// version than this one (patch versions keep the C++ API).
llvm::Error checkPluginVersion(llvm::StringRef path, llvm::StringRef version);

/// Loads a pass plugin, checks its version and registers its passes.
llvm::Error loadPassPlugin(llvm::StringRef path);

/// Loads a dialect plugin, checks its version and adds its dialects (and
/// extensions) to `registry`.
llvm::Error loadDialectPlugin(llvm::StringRef path, DialectRegistry &registry);

/// The plugins named by --load-pass-plugin / --load-dialect-plugin in a
/// tool's arguments (either spelling: `--opt=value` or `--opt value`).
struct PluginArguments {
  std::vector<std::string> passPlugins, dialectPlugins;
};
PluginArguments findPluginArguments(int argc, char **argv);

/// Loads and registers every plugin of `args` to check it (that it is a
/// plugin, its version, that it registers), before a driver that registers
/// them again itself (MlirOptMain). A plugin failing to register ends the
/// tool with a message naming it.
llvm::Error checkPlugins(const PluginArguments &args);

} // namespace mlir::tessel

#endif // TESSEL_PLUGIN_H
