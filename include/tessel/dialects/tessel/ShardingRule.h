//===- ShardingRule.h - building op sharding rules --------------*- C++ -*-===//

#ifndef TESSEL_DIALECTS_TESSEL_SHARDINGRULE_H
#define TESSEL_DIALECTS_TESSEL_SHARDINGRULE_H

#include "tessel/dialects/tessel/TesselDialect.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::tessel {

enum class FactorKind { PassThrough, Reduction, NeedReplication, Permutation };

/// Builds an OpShardingRuleAttr: declare factors, then give each operand and
/// result its dimensions as lists of factors.
class ShardingRuleBuilder {
public:
  explicit ShardingRuleBuilder(MLIRContext *context) : context(context) {}

  int64_t factor(int64_t size, FactorKind kind = FactorKind::PassThrough);
  /// One factor per dimension of `shape`, in order; returns their indices.
  SmallVector<int64_t> factors(ArrayRef<int64_t> shape,
                               FactorKind kind = FactorKind::PassThrough);
  void setKind(int64_t factor, FactorKind kind) { kinds[factor] = kind; }

  /// A tensor whose dimension d is the product of `dims[d]` factors.
  void operand(ArrayRef<SmallVector<int64_t>> dims);
  void result(ArrayRef<SmallVector<int64_t>> dims);
  /// A tensor whose dimension d is the single factor `dims[d]`.
  void operandOf(ArrayRef<int64_t> dims);
  void resultOf(ArrayRef<int64_t> dims);

  OpShardingRuleAttr build();

private:
  TensorMappingAttr mapping(ArrayRef<SmallVector<int64_t>> dims);

  MLIRContext *context;
  SmallVector<int64_t> sizes;
  SmallVector<FactorKind> kinds;
  SmallVector<TensorMappingAttr> operands, results;
};

} // namespace mlir::tessel

#endif // TESSEL_DIALECTS_TESSEL_SHARDINGRULE_H
