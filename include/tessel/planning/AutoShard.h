//===- AutoShard.h - every op's sharding chosen by an ILP -------*- C++ -*-===//
//
// --tessel-auto-shard: for a function with few or no sharding annotations,
// chooses a sharding for every argument and op on a given mesh by an integer
// program (tessel/planning/ChoiceIlp.h) that minimizes the step's predicted
// time, compute plus collectives plus resharding, under a per-device memory
// limit. An op's strategies are the ways to put the mesh axes on the
// factors of its sharding rule (the rule propagation and partitioning read);
// resharding between a producer and a consumer costs what the partitioner's
// reshard planner sends. User annotations (argument and result shardings,
// sharding_constraint ops, `tessel.sharding` on ops) are constraints. The
// choice is written back as ordinary annotations, so propagation and
// partitioning run unchanged on the result. See docs/planning.md.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PLANNING_AUTOSHARD_H
#define TESSEL_PLANNING_AUTOSHARD_H

#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tessel::planning {

struct AutoShardOptions {
  /// Per-device memory limit in bytes; 0 = none.
  double memoryBytes = 0;
  /// Cost a training step (forward, backward, optimizer state) rather than
  /// the function as it is: matmuls cost 3x their forward FLOPs, the
  /// backward's collectives mirror the forward's (a sharded factor an
  /// operand lacks all-reduces its gradient: data parallelism's gradient
  /// sum, Megatron's `f`), and each parameter holds its weights, gradients
  /// and `optimizerSlots` state tensors.
  bool training = true;
  double optimizerSlots = 2;
  /// Device rates (H100 SXM defaults: bf16 peak x 0.55, HBM3, NVLink 4).
  double matmulFlops = 989.4e12 * 0.55;
  double memoryBandwidth = 3.35e12;
  double linkBandwidth = 450e9;
  double linkLatency = 5e-6;
  /// Data arguments (not parameters) are read from the host at this rate
  /// (PCIe 4 x16): a device reads only its shard of the batch.
  double hostBandwidth = 25e9;
  double timeLimitSeconds = 60;
  /// Largest joint problem (edge pair variables) solved at once; above it
  /// the mesh axes are chosen one at a time, largest first, each given the
  /// choices before it (a heuristic: the joint optimum may be missed).
  int64_t maxPairs = 250000;
};

/// Chooses and writes the shardings of `func`'s arguments, results and op
/// results on `mesh`. With `report`, prints the choice: predicted time by
/// part, memory, the solver's size, and every matmul's factor shardings.
/// Fails with a diagnostic on ops without a sharding rule, calls, and
/// limits no choice meets.
LogicalResult autoShard(func::FuncOp func, MeshOp mesh,
                        const AutoShardOptions &options,
                        llvm::raw_ostream *report = nullptr);

} // namespace mlir::tessel::planning

#endif // TESSEL_PLANNING_AUTOSHARD_H
