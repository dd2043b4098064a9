//===- Autodiff.h - reverse-mode automatic differentiation -------*- C++ -*-===//
//
// Each op's vector-Jacobian product is one rule in lib/Autodiff/Vjp.cpp;
// buildGradient runs them backward over a function.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_AUTODIFF_AUTODIFF_H
#define TESSEL_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {

/// Emits the cotangents of `op`'s operands given its results' cotangents
/// (null where a result has none). `operandCotangents` gets one entry per
/// operand, null where the operand gets none (integers, predicates).
/// Fails with a diagnostic on `op` if it has no rule.
LogicalResult buildVjp(OpBuilder &builder, Operation *op,
                       ArrayRef<Value> resultCotangents,
                       SmallVectorImpl<Value> &operandCotangents);

/// Builds `@name(args...) -> (loss, d loss / d arg for each float argument)`
/// from `forward`, whose first result is the scalar loss.
FailureOr<func::FuncOp> buildGradient(func::FuncOp forward, StringRef name);

} // namespace mlir::tessel

#endif // TESSEL_AUTODIFF_AUTODIFF_H
