//===- Partition.h - global programs to per-device programs -----*- C++ -*-===//

#ifndef TESSEL_SHARDING_PARTITION_H
#define TESSEL_SHARDING_PARTITION_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::tessel {

struct PartitionOptions {
  /// Reshards that rematerialize a whole dimension (replicate, then slice)
  /// are errors instead of warnings.
  bool strict = false;
};

/// Partitions every propagated function of `module` (see the description of
/// --tessel-partition in Passes.td).
LogicalResult partitionModule(ModuleOp module,
                              const PartitionOptions &options = {});

} // namespace mlir::tessel

#endif // TESSEL_SHARDING_PARTITION_H
