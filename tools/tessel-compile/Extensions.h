//===- Extensions.h - tessel-compile's extension points -------------------===//
//
// `--extend POINT[:TARGET]=PIPELINE` runs a pass pipeline (a plugin's
// passes, or any registered ones) at a named point of tessel-compile's
// flow; docs/extending.md lists the points and what the program looks like
// at each.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TOOLS_TESSEL_COMPILE_EXTENSIONS_H
#define TESSEL_TOOLS_TESSEL_COMPILE_EXTENSIONS_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tessel_compile {

struct Extension {
  std::string point;    // one of extensionPoints()
  std::string target;   // empty: every target
  std::string pipeline; // textual, anchored on builtin.module
};

/// The points, in the order the flow reaches them.
llvm::ArrayRef<llvm::StringRef> extensionPoints();

/// Parses `--extend` values; an unknown point or target, or a pipeline that
/// does not parse (its passes must be registered: load plugins first), is
/// an error naming the value.
llvm::Expected<std::vector<Extension>>
parseExtensions(llvm::ArrayRef<std::string> specs);

/// Fails, naming the first op and what to do, when an op of a dialect the
/// targets' lowering pipelines do not take (a dialect plugin's op that no
/// extension rewrote) is left after the before-lowering point.
mlir::LogicalResult checkLowerable(mlir::ModuleOp module,
                                   llvm::StringRef target);

} // namespace tessel_compile

#endif // TESSEL_TOOLS_TESSEL_COMPILE_EXTENSIONS_H
