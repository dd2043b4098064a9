//===- Signature.h - what a function's signature says -----------*- C++ -*-===//
//
// The facts about a function's arguments and results that the compiler's
// description (Describe.h), the interpreter and the tools read the same
// way: names (`tessel.name`, else argN / resultN), element types, global
// types of per-device functions (`tessel.global_type`, else the local type
// times the devices of each dimension's axes), the mesh of a `tessel.spmd`
// function, and an argument's initialization (`tessel.init`, else by type:
// normal:1 for floats, bernoulli:0.5 for i1, int:0:N for integers with N
// the size they index, or 16).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PROGRAM_SIGNATURE_H
#define TESSEL_PROGRAM_SIGNATURE_H

#include "tessel/support/DType.h"
#include "tessel/support/Mesh.h"
#include "tessel/support/Random.h"

#include "tessel/dialects/tessel/TesselDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tessel::program {

std::string argName(mlir::func::FuncOp func, unsigned index);
std::string resultName(mlir::func::FuncOp func, unsigned index);

/// The mesh axes of each dimension of `sharding` (`rank` lists; empty when
/// a dimension, or the whole value, is not sharded).
std::vector<std::vector<std::string>>
shardingAxes(mlir::tessel::ShardingAttr sharding, int64_t rank);

/// The element type of a tensor type, or an error naming the type.
llvm::Expected<DType> dtypeOf(mlir::Type type);

/// The mesh a `tessel.spmd` function runs on, or failure if it is not one.
mlir::FailureOr<MeshShape> spmdMesh(mlir::func::FuncOp func);

/// The global type of argument / result `index`.
mlir::RankedTensorType globalArgType(mlir::func::FuncOp func, unsigned index);
mlir::RankedTensorType globalResultType(mlir::func::FuncOp func,
                                        unsigned index);

/// The initialization of argument `index`.
llvm::Expected<InitSpec> initSpecFor(mlir::func::FuncOp func, unsigned index);

} // namespace tessel::program

#endif // TESSEL_PROGRAM_SIGNATURE_H
