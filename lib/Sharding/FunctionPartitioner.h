//===- FunctionPartitioner.h - partitioning one function ---------*- C++ -*-===//

#ifndef TESSEL_LIB_SHARDING_FUNCTIONPARTITIONER_H
#define TESSEL_LIB_SHARDING_FUNCTIONPARTITIONER_H

#include "Layout.h"
#include "Reshard.h"

#include "tessel/sharding/Partition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>

namespace mlir::tessel {

inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

struct Local {
  Value value;
  Layout layout;
};

/// Partitions one function (see Partition.cpp); the ops with their own
/// schemes live in PartitionSpecial.cpp.
class FunctionPartitioner {
public:
  FunctionPartitioner(func::FuncOp func, MeshOp meshOp,
                      const PartitionOptions &options)
      : func(func), mesh(meshOp), builder(func.getContext()),
        reshaper(builder, mesh, options.strict) {}

  LogicalResult run();

private:
  /// The local value and layout of a partitioned global value, by
  /// reference into `locals` (valid until the next insertion). Never
  /// `locals.lookup`: it returns a copy, and a reference into that copy
  /// (`lookup(v).layout.dims[d]`) dangles once the statement ends.
  const Local &localOf(Value global) const {
    static const Local none;
    auto it = locals.find(global);
    return it == locals.end() ? none : it->second;
  }
  /// The layout a value should have (its propagated sharding).
  Layout wanted(Value v);
  FailureOr<Value> operandAs(Location loc, Value global, const Layout &to);
  LogicalResult partitionOp(Operation *op);
  LogicalResult partitionSpecial(Operation *op, bool &handled);
  LogicalResult partitionCrossEntropy(SoftmaxCrossEntropyOp ce);
  LogicalResult partitionScatterAdd(ScatterAddOp op);
  LogicalResult partitionWindow(Operation *op);
  /// `local` with `value` where the global position along split dimension
  /// `d` is outside [low, low + operandSize) (a pad's new rows).
  Value padOutside(Location loc, Value local, int64_t d, const AxisList &axes,
                   int64_t low, int64_t operandSize, double value);
  /// i1 tensor: `labels` (local, laid out as `layout`) are counted: not
  /// `ignore`, within [0, classes), and not padding.
  Value countedLabels(Location loc, Value labels, const Layout &layout,
                      RankedTensorType global, int64_t ignore,
                      int64_t classes);
  /// Factor shardings for `op` under `rule`.
  SmallVector<AxisList> chooseFactors(Operation *op, OpShardingRuleAttr rule);
  Layout layoutFor(OpShardingRuleAttr rule, TensorMappingAttr mapping,
                   ArrayRef<AxisList> factors, RankedTensorType global);

  func::FuncOp func;
  MeshInfo mesh;
  OpBuilder builder;
  Resharder reshaper;
  llvm::DenseMap<Value, Local> locals;
  std::map<std::pair<void *, std::string>, Value> reshards;
};

} // namespace mlir::tessel

#endif // TESSEL_LIB_SHARDING_FUNCTIONPARTITIONER_H
