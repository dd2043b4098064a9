//===- PluginTest.cpp - plugin version check and argument scan ------------===//

#include "tessel/Plugin.h"

#include <gtest/gtest.h>

using namespace mlir::tessel;

namespace {

bool accepted(llvm::StringRef version) {
  llvm::Error e = checkPluginVersion("p.so", version);
  bool ok = !e;
  llvm::consumeError(std::move(e));
  return ok;
}

TEST(Plugin, VersionOfThisMinorLoads) {
  EXPECT_TRUE(accepted(TESSEL_PLUGIN_VERSION));
  llvm::StringRef v = TESSEL_VERSION_STRING; // "0.3.0"
  std::string otherPatch =
      "tessel-" + v.take_front(v.rfind('.')).str() + ".99";
  EXPECT_TRUE(accepted(otherPatch));
  // A plain MLIR plugin (no tessel- version) loads as in mlir-opt.
  EXPECT_TRUE(accepted("1.0"));
}

TEST(Plugin, VersionOfAnotherMinorIsRefusedNamingBoth) {
  EXPECT_FALSE(accepted("tessel-0.1.0"));
  EXPECT_FALSE(accepted("tessel-9.3.0"));
  // 0.30 is not 0.3.
  llvm::StringRef v = TESSEL_VERSION_STRING;
  EXPECT_FALSE(accepted("tessel-" + v.take_front(v.rfind('.')).str() +
                        "0.0"));
  llvm::Error e = checkPluginVersion("old.so", "tessel-0.1.0");
  std::string message = llvm::toString(std::move(e));
  EXPECT_NE(message.find("'old.so' was built against Tessel 0.1.0"),
            std::string::npos);
  EXPECT_NE(message.find(std::string("this is Tessel ") +
                         TESSEL_VERSION_STRING),
            std::string::npos);
}

TEST(Plugin, FindsBothSpellingsAndStopsAtDoubleDash) {
  const char *args[] = {"tool",
                        "--load-pass-plugin=a.so",
                        "-load-dialect-plugin",
                        "b.so",
                        "--load-pass-plugin",
                        "c.so",
                        "--load-pass-pluginX=d.so",
                        "--",
                        "--load-pass-plugin=e.so"};
  PluginArguments found = findPluginArguments(
      int(std::size(args)), const_cast<char **>(args));
  EXPECT_EQ(found.passPlugins, (std::vector<std::string>{"a.so", "c.so"}));
  EXPECT_EQ(found.dialectPlugins, (std::vector<std::string>{"b.so"}));
}

} // namespace
