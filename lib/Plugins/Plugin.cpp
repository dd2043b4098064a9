//===- Plugin.cpp - pass and dialect plugins for Tessel's tools -----------===//

#include "tessel/Plugin.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace {
/// "0.3" of "0.3.1": the part of a version that fixes the C++ API.
llvm::StringRef majorMinor(llvm::StringRef version) {
  size_t first = version.find('.');
  if (first == llvm::StringRef::npos)
    return version;
  return version.take_front(version.find('.', first + 1));
}
} // namespace

llvm::Error mlir::tessel::checkPluginVersion(llvm::StringRef path,
                                             llvm::StringRef version) {
  if (!version.consume_front("tessel-") ||
      majorMinor(version) == majorMinor(TESSEL_VERSION_STRING))
    return llvm::Error::success();
  return llvm::createStringError(llvm::formatv(
      "plugin '{0}' was built against Tessel {1}, but this is Tessel {2}: "
      "rebuild it against this installation (find_package(Tessel {3}))",
      path, version, TESSEL_VERSION_STRING,
      majorMinor(TESSEL_VERSION_STRING)));
}

namespace {

/// Errors from loading name the file and what was expected of it.
llvm::Error loadFailed(llvm::StringRef kind, llvm::StringRef path,
                       llvm::Error error) {
  return llvm::createStringError(llvm::formatv(
      "cannot load {0} plugin '{1}': {2} (a {0} plugin is a shared library "
      "exporting mlirGet{3}PluginInfo; see docs/extending.md)",
      kind, path, llvm::toString(std::move(error)),
      kind == "pass" ? "Pass" : "Dialect"));
}

/// A plugin that registers nothing Tessel's tools can use would end the
/// tool through LLVM's fatal-error path (a pass whose name another pass
/// has, say) with a stack dump; this names the plugin instead.
void registrationFailed(void *path, const char *reason, bool) {
  llvm::errs() << llvm::formatv("error: plugin '{0}' failed to register: {1} "
                                "(rename what it registers or drop the "
                                "plugin)\n",
                                *static_cast<std::string *>(path), reason);
  std::exit(1);
}

llvm::Expected<PassPlugin> openPassPlugin(llvm::StringRef path) {
  auto plugin = PassPlugin::load(path.str());
  if (!plugin)
    return loadFailed("pass", path, plugin.takeError());
  if (llvm::Error e = tessel::checkPluginVersion(path, plugin->getPluginVersion()))
    return std::move(e);
  return plugin;
}

llvm::Expected<DialectPlugin> openDialectPlugin(llvm::StringRef path) {
  auto plugin = DialectPlugin::load(path.str());
  if (!plugin)
    return loadFailed("dialect", path, plugin.takeError());
  if (llvm::Error e = tessel::checkPluginVersion(path, plugin->getPluginVersion()))
    return std::move(e);
  return plugin;
}

} // namespace

llvm::Error mlir::tessel::loadPassPlugin(llvm::StringRef path) {
  auto plugin = openPassPlugin(path);
  if (!plugin)
    return plugin.takeError();
  std::string name = path.str();
  llvm::ScopedFatalErrorHandler handler(registrationFailed, &name);
  plugin->registerPassRegistryCallbacks();
  return llvm::Error::success();
}

llvm::Error mlir::tessel::loadDialectPlugin(llvm::StringRef path,
                                            DialectRegistry &registry) {
  auto plugin = openDialectPlugin(path);
  if (!plugin)
    return plugin.takeError();
  std::string name = path.str();
  llvm::ScopedFatalErrorHandler handler(registrationFailed, &name);
  plugin->registerDialectRegistryCallbacks(registry);
  return llvm::Error::success();
}

mlir::tessel::PluginArguments mlir::tessel::findPluginArguments(int argc,
                                                                char **argv) {
  PluginArguments found;
  auto match = [&](llvm::StringRef arg, int &i, llvm::StringRef name,
                   std::vector<std::string> &into) {
    for (llvm::StringRef dashes : {"--", "-"}) {
      llvm::StringRef rest = arg;
      if (!rest.consume_front(dashes) || !rest.consume_front(name))
        continue;
      if (rest.consume_front("="))
        into.push_back(rest.str());
      else if (rest.empty() && i + 1 < argc)
        into.push_back(argv[++i]);
      else
        continue;
      return true;
    }
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (!match(arg, i, "load-pass-plugin", found.passPlugins))
      match(arg, i, "load-dialect-plugin", found.dialectPlugins);
  }
  return found;
}

llvm::Error mlir::tessel::checkPlugins(const PluginArguments &args) {
  // Registering twice is harmless (the same passes, a scratch registry);
  // MlirOptMain registers them again for its own use.
  for (const std::string &path : args.passPlugins)
    if (llvm::Error e = loadPassPlugin(path))
      return e;
  DialectRegistry scratch;
  for (const std::string &path : args.dialectPlugins)
    if (llvm::Error e = loadDialectPlugin(path, scratch))
      return e;
  return llvm::Error::success();
}
