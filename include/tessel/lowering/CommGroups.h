//===- CommGroups.h - numbering the communicator groups of a module -*- C++ -*-//
//
// Compiled collectives do not name mesh axes: each names its communicator
// group by an index into the program description's `groups`
// (tessel/program/Program.h), which the runtime creates once at start-up.
// `assignCommGroups` numbers them. It is target-neutral: every backend's
// collective lowering reads the `tessel.group` it sets.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LOWERING_COMMGROUPS_H
#define TESSEL_LOWERING_COMMGROUPS_H

#include "tessel/program/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <vector>

namespace mlir::tessel {

/// Numbers the group of every communicating op of `module` (every tessel op
/// with `mesh` and `axes` attributes: the collectives, send, recv and
/// axis_index): sets its `tessel.group` to an index into the module's
/// `tessel.groups` list of {mesh, axes}, which keeps the groups already
/// listed and gains the new ones. Returns the list.
std::vector<::tessel::program::CommGroup> assignCommGroups(ModuleOp module);

/// The groups (indices) `func` and the functions it calls communicate in,
/// after assignCommGroups, sorted.
std::vector<int64_t> groupsUsedBy(func::FuncOp func);

/// The `tessel.group` of a communicating op, or failure (with an error on
/// `op`) when assignCommGroups has not run.
FailureOr<int64_t> commGroupOf(Operation *op);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_COMMGROUPS_H
