//===- Extensions.cpp - tessel-compile's extension points -----------------===//

#include "Extensions.h"

#include "tessel/lowering/Target.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace tessel_compile;

llvm::ArrayRef<llvm::StringRef> tessel_compile::extensionPoints() {
  static const llvm::StringRef points[] = {
      "after-propagation", // the global program, every value sharded
      "after-partition",   // per-device code with its collectives
      "before-lowering",   // linalg on tensors and runtime calls
  };
  return points;
}

llvm::Expected<std::vector<Extension>>
tessel_compile::parseExtensions(llvm::ArrayRef<std::string> specs) {
  std::vector<Extension> out;
  for (llvm::StringRef spec : specs) {
    auto [where, pipeline] = spec.split('=');
    auto [point, target] = where.split(':');
    auto fail = [&](const llvm::Twine &why) {
      return llvm::createStringError("--extend " + spec + ": " + why);
    };
    if (pipeline.trim().empty())
      return fail("give POINT=PIPELINE, e.g. after-partition=my-pass");
    if (!llvm::is_contained(extensionPoints(), point))
      return fail("unknown extension point '" + point +
                  "'; the points are " +
                  llvm::join(extensionPoints(), ", "));
    if (!target.empty() && !mlir::tessel::lookupTarget(target))
      return fail("unknown target '" + target + "'; the targets are " +
                  mlir::tessel::listTargets());
    // Passes not registered (a plugin not loaded) fail here, with MLIR's
    // message.
    mlir::OpPassManager pm("builtin.module");
    std::string error;
    llvm::raw_string_ostream os(error);
    if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, os)))
      return fail(llvm::Twine(os.str()).concat(
          " (a plugin's passes need --load-pass-plugin)"));
    out.push_back({point.str(), target.str(), pipeline.str()});
  }
  return out;
}

mlir::LogicalResult tessel_compile::checkLowerable(mlir::ModuleOp module,
                                                   llvm::StringRef target) {
  // What tessel-lower-to-linalg produces and the lowering pipelines start
  // from.
  static const llvm::StringRef lowerable[] = {
      "affine", "arith",  "bufferization", "builtin", "cf",  "func",
      "gpu",    "index",  "linalg",        "llvm",    "math", "memref",
      "scf",    "tensor", "ub",            "vector"};
  mlir::WalkResult walk = module.walk([&](mlir::Operation *op) {
    llvm::StringRef dialect = op->getName().getDialectNamespace();
    if (llvm::is_contained(lowerable, dialect))
      return mlir::WalkResult::advance();
    if (dialect == "tessel") {
      op->emitError() << "'" << op->getName()
                      << "' appears after tessel-lower-to-linalg (made by a "
                         "pass at the before-lowering point?); passes that "
                         "emit tessel ops run at --extend after-partition";
      return mlir::WalkResult::interrupt();
    }
    op->emitError() << "'" << op->getName() << "' reaches the " << target
                    << " target's lowering, which has no rule for dialect '"
                    << dialect
                    << "'; rewrite it into tessel ops with a pass at "
                       "--extend after-partition=PASS (or into linalg at "
                       "before-lowering)";
    return mlir::WalkResult::interrupt();
  });
  return mlir::failure(walk.wasInterrupted());
}
