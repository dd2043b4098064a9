//===- Describe.h - program descriptions from the IR ------------*- C++ -*-===//
//
// Reads an entry point's description (tessel/program/Program.h) off a
// function: names (`tessel.name`), layouts (`tessel.sharding`,
// `tessel.global_type`), initializations (`tessel.init`) and roles
// (`tessel.runtime_role`). The training-step builder sets every role; for a
// hand-written function without them, the roles follow the naming
// convention of docs/running.md (an argument `step` counts steps, a result
// named like an argument feeds it, ...).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PROGRAM_DESCRIBE_H
#define TESSEL_PROGRAM_DESCRIBE_H

#include "tessel/program/Program.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tessel::program {

/// The role of argument / result `index` of `func`.
Role argumentRole(mlir::func::FuncOp func, unsigned index);
Role resultRole(mlir::func::FuncOp func, unsigned index);

/// The mesh `func` runs on (its `tessel.spmd` mesh, with the device list),
/// or a one-device mesh named "host".
MeshInfo describeMesh(mlir::func::FuncOp func);
/// `mesh` with its device list.
MeshInfo describeMesh(mlir::tessel::MeshOp mesh);

/// `func` as an entry point exported as `symbol`; errors are emitted on
/// `func`.
mlir::FailureOr<Entry> describeEntry(mlir::func::FuncOp func,
                                     llvm::StringRef symbol);

} // namespace tessel::program

#endif // TESSEL_PROGRAM_DESCRIBE_H
