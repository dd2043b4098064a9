//===- Interpreter.h - the reference interpreter ----------------*- C++ -*-===//
//
// Evaluates functions of tessel ops on host tensors, exactly as the op
// descriptions say. It is the oracle of every equivalence test: a partitioned
// program on N ranks must compute what the unpartitioned one computes here.
//
// A function with the attribute `tessel.spmd = @mesh` is a per-device
// program: runSpmd runs it on every device of the mesh, one thread per rank,
// with exact collective semantics. Its arguments and results carry
// `tessel.sharding` (the global layout) and, where a dimension is padded,
// `tessel.global_type`; inputs and outputs of runSpmd are global tensors.
// runMpmd runs several such functions at once, each on the ranks of its
// own mesh (a pipeline's stages), talking through collectives and
// send/recv on meshes that span them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_INTERPRETER_INTERPRETER_H
#define TESSEL_INTERPRETER_INTERPRETER_H

#include "tessel/program/Signature.h"
#include "tessel/support/HostTensor.h"
#include "tessel/support/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessel::interp {

class Communicator;

// The signature facts the interpreter reads (tessel/program/Signature.h).
using ::tessel::program::argName;
using ::tessel::program::dtypeOf;
using ::tessel::program::globalArgType;
using ::tessel::program::globalResultType;
using ::tessel::program::initSpecFor;
using ::tessel::program::resultName;
using ::tessel::program::spmdMesh;

/// Which rank runs each position of a mesh: its device list, or the
/// identity.
struct MeshPlacement {
  MeshShape shape;
  std::vector<int64_t> ranks; ///< by row-major position
  /// The position `rank` runs, or -1.
  int64_t positionOf(int64_t rank) const;
};

/// Where one rank runs: its rank, the placement of every mesh of the
/// module (by name), and how it talks to the others. A collective over
/// axes of mesh M runs among the ranks of M's positions that share every
/// other coordinate with this rank's position.
struct RankContext {
  int64_t rank = 0;
  const std::map<std::string, MeshPlacement> *meshes = nullptr;
  Communicator *comm = nullptr;
};

/// Runs `func` once on `args` (local tensors when `rank` is given). Errors
/// name the op and its location.
llvm::Expected<std::vector<HostTensor>>
runFunction(mlir::func::FuncOp func, std::vector<HostTensor> args,
            const RankContext *rank = nullptr);

/// Runs an SPMD function on every device: slices each global input by its
/// argument's sharding, runs the ranks as threads, reassembles each global
/// output (checking that replicas agree).
llvm::Expected<std::vector<HostTensor>>
runSpmd(mlir::func::FuncOp func, const std::vector<HostTensor> &globalArgs);

/// Runs SPMD functions together, each on the ranks of its mesh (through
/// the mesh's device list): every rank from 0 to the highest runs exactly
/// one of them. Inputs and outputs are global tensors, per function.
llvm::Expected<std::vector<std::vector<HostTensor>>>
runMpmd(llvm::ArrayRef<mlir::func::FuncOp> funcs,
        const std::vector<std::vector<HostTensor>> &globalArgs);

} // namespace tessel::interp

#endif // TESSEL_INTERPRETER_INTERPRETER_H
