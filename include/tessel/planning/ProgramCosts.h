//===- ProgramCosts.h - what a program costs, read off its ops --*- C++ -*-===//
//
// The numbers the reports print (--tessel-memory-report, the comm report's
// traffic formula) and the planner reads (tessel-plan): liveness memory,
// matmul FLOPs and bytes sent per set of mesh axes, of one function and of
// the functions it calls.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PLANNING_PROGRAMCOSTS_H
#define TESSEL_PLANNING_PROGRAMCOSTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>

namespace mlir::tessel::planning {

/// Liveness in program order: every value an op computes lives from its op
/// to its last use (results nobody uses die at once); arguments live
/// throughout; a call adds its callee's own peak while it runs. What
/// buffers would hold with perfect reuse and no fusion.
struct MemoryEstimate {
  int64_t arguments = 0;
  /// The most bytes of computed values live at once, and where.
  int64_t peak = 0;
  std::string peakAt;
  /// In a training step, bytes live right before the first backward op
  /// (the activations kept for the backward); -1 without a forward role.
  int64_t keptForBackward = -1;
  /// Of those, the bytes of values computed from parameters alone (the
  /// compute-type copies of weights a mixed-precision step converts once
  /// and keeps): they do not grow with the batch, activations do. Data are
  /// integer arguments and those with a "batch" logical axis.
  int64_t keptWithoutData = 0;
  /// The peak before the first optimizer op (forward and backward): the
  /// runtime updates parameters and state in place, so the update's new
  /// values do not add to what the step needs.
  int64_t peakBeforeUpdate = 0;
};
MemoryEstimate estimateMemory(func::FuncOp func);
/// The same, `depth` calls deep (a call counts its callee's peak).
MemoryEstimate estimateMemory(func::FuncOp func, int depth);

/// Whether an argument is data rather than a parameter (the training
/// step's rule: integers, and arguments with a "batch" logical axis).
bool isDataArgument(func::FuncOp func, BlockArgument arg);

/// Bytes of a tensor type (at least one byte per element); 0 otherwise.
int64_t tensorBytes(Type type);

/// FLOPs of `func`'s matmuls (2 x result elements x contracted size per
/// dot_general), counting a called function once per call. Element-wise
/// ops are not counted: they are bound by memory, not by FLOPs.
/// With `filter`, only the matmuls it accepts.
double matmulFlops(func::FuncOp func,
                   function_ref<bool(Operation *)> filter = nullptr);

/// Bytes `func`'s element-wise, reduction and data-movement ops (every
/// Tessel op but matmuls, constants and collectives) read and write, calls
/// included: each op's operands and results once, except values inside a
/// chain of element-wise ops and broadcasts, which the backends fuse into
/// one kernel. With `filter`, only the ops it accepts.
double memoryTrafficBytes(func::FuncOp func,
                          function_ref<bool(Operation *)> filter = nullptr);

/// Bytes one device sends per call of `func` (calls included), by the
/// mesh axes of each collective joined with "," ("tp", "dp,tp"), by the
/// ring formulas of tessel/sharding/Traffic.h.
std::map<std::string, double> sentBytesByAxes(func::FuncOp func);
/// How many collectives a call of `func` runs (calls included), by the
/// same keys, those over axes of one device included.
std::map<std::string, double> collectiveCountsByAxes(func::FuncOp func);

} // namespace mlir::tessel::planning

#endif // TESSEL_PLANNING_PROGRAMCOSTS_H
