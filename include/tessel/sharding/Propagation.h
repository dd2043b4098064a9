//===- Propagation.h - sharding propagation ---------------------*- C++ -*-===//
//
// GSPMD/Shardy-style propagation over the ops' factor rules; see the
// description of --tessel-propagate in Passes.td and docs/propagation.md.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SHARDING_PROPAGATION_H
#define TESSEL_SHARDING_PROPAGATION_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tessel {

struct PropagationOptions {
  /// When set, receives the explanation: every value's sharding with the
  /// origin of each dimension, and every resolved conflict.
  llvm::raw_ostream *explain = nullptr;
};

/// Propagates shardings through every function of `module`; writes
/// `tessel.sharding` on every op result, argument and result. Emits
/// diagnostics and fails on contradictory annotations or ops without rules.
LogicalResult propagateShardings(ModuleOp module,
                                 const PropagationOptions &options = {});

} // namespace mlir::tessel

#endif // TESSEL_SHARDING_PROPAGATION_H
