//===- PartitionModels.h - Tessel ops' own partitioning schemes -*- C++ -*-===//
//
// The SpmdPartitionOpInterface models attached in PartitionModels.cpp call
// these (the larger schemes live in their own files).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_SHARDING_PARTITIONMODELS_H
#define TESSEL_LIB_SHARDING_PARTITIONMODELS_H

#include "FunctionPartitioner.h"

namespace mlir::tessel {

/// softmax_cross_entropy: positions may be split (the loss is then a
/// partial sum, or for `mean` a sum and a count reduced together), and
/// classes may be split (vocabulary-parallel; PartitionSpecial.cpp).
LogicalResult partitionCrossEntropy(SpmdPartitioner &p,
                                    SoftmaxCrossEntropyOp op);
/// scatter_add: the index dimensions are gathered (the base must be added
/// once); the base's rows may stay split, indices shifted into them
/// (PartitionSpecial.cpp).
LogicalResult partitionScatterAdd(SpmdPartitioner &p, ScatterAddOp op);
/// slice and pad: split windowed dimensions by halo exchange
/// (PartitionWindow.cpp).
LogicalResult partitionWindow(SpmdPartitioner &p, Operation *op);
/// concatenate: a split concatenated dimension takes each operand's rows
/// by halo exchange (PartitionWindow.cpp).
LogicalResult partitionConcatenate(SpmdPartitioner &p, ConcatenateOp op);

} // namespace mlir::tessel

#endif // TESSEL_LIB_SHARDING_PARTITIONMODELS_H
