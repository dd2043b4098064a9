//===- Inputs.h - deterministic inputs for a function -----------*- C++ -*-===//
//
// How tessel-interp (and tests) fill the arguments the user did not give.
// An argument's values are a pure function of (seed, its name, element
// index), computed on its global shape, so the unpartitioned and the
// partitioned program receive identical global inputs.
//
// The distribution is the argument's `tessel.init` when present
// (program::initSpecFor, tessel/program/Signature.h). Otherwise:
//   * float: normal:1;
//   * integer used as gather/scatter indices, cross-entropy labels or
//     one_hot input: int:0:N with N the size indexed (smallest over uses);
//     other integers: int:0:16;
//   * i1: bernoulli:0.5.
// The name is `tessel.name`, else "argN".
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_INTERPRETER_INPUTS_H
#define TESSEL_INTERPRETER_INPUTS_H

#include "tessel/program/Signature.h"
#include "tessel/support/Random.h"
#include "tessel/support/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tessel::interp {

/// Global inputs for `func`: from `given` where it has the argument's name
/// (checked against the argument's global type), else generated from `seed`.
/// `source` names the file of `given` in errors.
llvm::Expected<std::vector<HostTensor>>
makeInputs(mlir::func::FuncOp func, uint64_t seed, const NamedTensors *given,
           llvm::StringRef source);

} // namespace tessel::interp

#endif // TESSEL_INTERPRETER_INPUTS_H
