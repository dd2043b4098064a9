//===- SpmdPartitioner.h - what an op's own partitioning scheme uses -*- C++ -*-===//
//
// `--tessel-partition` walks a function in order and gives every global
// value a local value and a layout (tessel/sharding/Layout.h). Most ops are
// partitioned from their sharding rule alone (`partitionByRule`); an op
// that needs its own scheme implements SpmdPartitionOpInterface and builds
// its local values through this class. Tessel's own schemes are in
// lib/Sharding/PartitionModels.cpp: the small ones there, cross-entropy and
// scatter_add in PartitionSpecial.cpp, slice and pad in PartitionWindow.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SHARDING_SPMDPARTITIONER_H
#define TESSEL_SHARDING_SPMDPARTITIONER_H

#include "tessel/sharding/Layout.h"
#include "tessel/sharding/Reshard.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir::tessel {

/// A global value's local value and its layout.
struct Local {
  Value value;
  Layout layout;
};

/// What the rule-driven scheme needs to know of an op's reduction.
struct RuleScheme {
  /// The value padding of a split reduction dimension is masked to (the
  /// reduction's identity: 0 for sums, -inf for max).
  double padIdentity = 0.0;
  /// How partial results over split reduction factors combine.
  CollectiveKind partialKind = CollectiveKind::sum;
};

class SpmdPartitioner {
public:
  virtual ~SpmdPartitioner() = default;

  /// Where local ops go (its insertion point follows the walk).
  virtual OpBuilder &builder() = 0;
  virtual const MeshInfo &mesh() const = 0;
  /// Emits reshards, axis indices, masks and halo shifts.
  virtual Resharder &resharder() = 0;

  /// The local value of a global value partitioned earlier, by reference
  /// (valid until the next setLocal).
  virtual const Local &localOf(Value global) const = 0;
  /// The layout a global value should have (its propagated sharding).
  virtual Layout wanted(Value global) = 0;
  /// `global`'s local value laid out as `to`, resharded (once per value and
  /// layout) where needed.
  virtual FailureOr<Value> operandAs(Location loc, Value global,
                                     const Layout &to) = 0;
  /// Records the local value of a result of the op being partitioned.
  virtual void setLocal(Value global, Value local, const Layout &layout) = 0;

  /// The rule-driven scheme: the factor shardings of `op` under `rule`,
  /// chosen from the results' wanted layouts and the operands' layouts...
  virtual SmallVector<AxisList> chooseFactors(Operation *op,
                                              OpShardingRuleAttr rule) = 0;
  /// ... the layout of one of its tensors under those factors ...
  virtual Layout layoutFor(OpShardingRuleAttr rule, TensorMappingAttr mapping,
                           ArrayRef<AxisList> factors,
                           RankedTensorType global) = 0;
  /// ... and the whole scheme: operands resharded to those layouts, the op
  /// cloned on local shapes (its results recorded), results partial over
  /// sharded reduction factors. Returns the local clone, to be adjusted by
  /// the caller where its attributes depend on local shapes.
  virtual FailureOr<Operation *> partitionByRule(Operation *op,
                                                 const RuleScheme &scheme) = 0;
  FailureOr<Operation *> partitionByRule(Operation *op) {
    return partitionByRule(op, RuleScheme());
  }
};

/// Attaches Tessel's SpmdPartitionOpInterface models to its ops.
void registerSpmdPartitionModels(DialectRegistry &registry);

} // namespace mlir::tessel

#include "tessel/sharding/SpmdPartitionOpInterface.h.inc"

#endif // TESSEL_SHARDING_SPMDPARTITIONER_H
