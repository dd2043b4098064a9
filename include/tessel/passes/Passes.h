//===- Passes.h - tessel passes ---------------------------------*- C++ -*-===//

#ifndef TESSEL_PASSES_PASSES_H
#define TESSEL_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/passes/Buckets.h"

namespace mlir::tessel {

#define GEN_PASS_DECL
#include "tessel/passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/passes/Passes.h.inc"

} // namespace mlir::tessel

#endif // TESSEL_PASSES_PASSES_H
