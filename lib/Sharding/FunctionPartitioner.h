//===- FunctionPartitioner.h - partitioning one function ---------*- C++ -*-===//

#ifndef TESSEL_LIB_SHARDING_FUNCTIONPARTITIONER_H
#define TESSEL_LIB_SHARDING_FUNCTIONPARTITIONER_H

#include "tessel/sharding/Partition.h"
#include "tessel/sharding/SpmdPartitioner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>

namespace mlir::tessel {

inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Partitions one function (see Partition.cpp): ops with their own scheme
/// through SpmdPartitionOpInterface, the others by their rule.
class FunctionPartitioner final : public SpmdPartitioner {
public:
  FunctionPartitioner(func::FuncOp func, MeshOp meshOp,
                      const PartitionOptions &options)
      : func(func), meshInfo(meshOp), b(func.getContext()),
        reshaper(b, meshInfo, options.strict) {}

  LogicalResult run();

  OpBuilder &builder() override { return b; }
  const MeshInfo &mesh() const override { return meshInfo; }
  Resharder &resharder() override { return reshaper; }
  /// By reference into `locals` (valid until the next insertion). Never
  /// `locals.lookup`: it returns a copy, and a reference into that copy
  /// (`lookup(v).layout.dims[d]`) dangles once the statement ends.
  const Local &localOf(Value global) const override {
    static const Local none;
    auto it = locals.find(global);
    return it == locals.end() ? none : it->second;
  }
  Layout wanted(Value v) override;
  FailureOr<Value> operandAs(Location loc, Value global,
                             const Layout &to) override;
  void setLocal(Value global, Value local, const Layout &layout) override {
    locals[global] = {local, layout};
  }
  SmallVector<AxisList> chooseFactors(Operation *op,
                                      OpShardingRuleAttr rule) override;
  Layout layoutFor(OpShardingRuleAttr rule, TensorMappingAttr mapping,
                   ArrayRef<AxisList> factors,
                   RankedTensorType global) override;
  using SpmdPartitioner::partitionByRule;
  FailureOr<Operation *> partitionByRule(Operation *op,
                                         const RuleScheme &scheme) override;

private:
  LogicalResult partitionOp(Operation *op);
  LogicalResult partitionReturn(func::ReturnOp ret);

  func::FuncOp func;
  MeshInfo meshInfo;
  OpBuilder b;
  Resharder reshaper;
  llvm::DenseMap<Value, Local> locals;
  std::map<std::pair<void *, std::string>, Value> reshards;
};

} // namespace mlir::tessel

#endif // TESSEL_LIB_SHARDING_FUNCTIONPARTITIONER_H
