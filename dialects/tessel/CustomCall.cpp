//===- CustomCall.cpp - tessel.custom_call: rule, verifier, VJP -----------===//
//
// A custom call's sharding rule is the one written on it, with the factor
// sizes taken from the shapes it has now: the same rule serves the global
// program, a pipeline stage's microbatches and a device's blocks.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/ShardingRule.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

std::string factorLetter(int64_t f) {
  return f < 18 ? std::string(1, char('i' + f)) : "z_" + std::to_string(f - 17);
}

/// The rule's factor sizes read off `op`'s shapes; a message when the rule
/// does not fit them.
FailureOr<SmallVector<int64_t>> sizesFromShapes(CustomCallOp op,
                                                OpShardingRuleAttr rule,
                                                std::string &why) {
  struct Dim {
    ArrayRef<int64_t> factors;
    int64_t size;
    std::string where;
  };
  SmallVector<Dim> dims;
  auto collect = [&](StringRef kind, TypeRange types,
                     ArrayRef<TensorMappingAttr> maps) {
    for (auto [k, pair] : llvm::enumerate(llvm::zip(types, maps))) {
      auto [type, map] = pair;
      auto shape = cast<RankedTensorType>(type).getShape();
      for (auto [d, dim] : llvm::enumerate(map.getDims()))
        dims.push_back({dim.getFactors(), shape[d],
                        (kind + " #" + Twine(k) + " dimension " + Twine(d))
                            .str()});
    }
  };
  collect("operand", op.getInputs().getTypes(), rule.getOperands());
  collect("result", op.getResultTypes(), rule.getResults());
  SmallVector<int64_t> sizes(rule.getNumFactors(), -1);
  // Until nothing changes: a dimension with one unknown factor gives it.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Dim &dim : dims) {
      int64_t known = 1, unknown = -1, count = 0;
      for (int64_t f : dim.factors) {
        if (sizes[f] < 0) {
          unknown = f;
          ++count;
        } else {
          known *= sizes[f];
        }
      }
      if (count == 1 && known > 0 && dim.size % known == 0) {
        sizes[unknown] = dim.size / known;
        changed = true;
      }
    }
  }
  for (const Dim &dim : dims) {
    int64_t product = 1;
    std::string names;
    for (int64_t f : dim.factors) {
      product *= sizes[f] < 0 ? 0 : sizes[f];
      names += (names.empty() ? "" : " x ") + factorLetter(f) + "=" +
               (sizes[f] < 0 ? std::string("?") : std::to_string(sizes[f]));
    }
    if (product != dim.size) {
      why = dim.where + " has size " + std::to_string(dim.size) +
            ", but the rule makes it " + (names.empty() ? "1" : names);
      return failure();
    }
  }
  return sizes;
}

} // namespace

LogicalResult CustomCallOp::verify() {
  OpShardingRuleAttr rule = getRuleAttr();
  if (!rule)
    return success();
  auto checkCounts = [&](StringRef kind, TypeRange types,
                         ArrayRef<TensorMappingAttr> maps) -> LogicalResult {
    if (types.size() != maps.size())
      return emitOpError() << "sharding rule maps " << maps.size() << " "
                           << kind << "(s), but the call has "
                           << types.size();
    for (auto [k, pair] : llvm::enumerate(llvm::zip(types, maps))) {
      auto [type, map] = pair;
      int64_t rank = cast<RankedTensorType>(type).getRank();
      if (int64_t(map.getDims().size()) != rank)
        return emitOpError() << "sharding rule gives " << kind << " #" << k
                             << " " << map.getDims().size()
                             << " dimension(s), but it has rank " << rank;
    }
    return success();
  };
  if (failed(checkCounts("operand", getInputs().getTypes(),
                         rule.getOperands())) ||
      failed(checkCounts("result", getResultTypes(), rule.getResults())))
    return failure();
  std::string why;
  if (failed(sizesFromShapes(*this, rule, why)))
    return emitOpError() << "sharding rule does not fit the shapes: " << why;
  return success();
}

OpShardingRuleAttr CustomCallOp::getShardingRule() {
  OpShardingRuleAttr rule = getRuleAttr();
  if (!rule) {
    // Whole tensors: every dimension its own need-replication factor.
    ShardingRuleBuilder b(getContext());
    for (Type t : getInputs().getTypes())
      b.operandOf(b.factors(cast<RankedTensorType>(t).getShape(),
                            FactorKind::NeedReplication));
    for (Type t : getResultTypes())
      b.resultOf(b.factors(cast<RankedTensorType>(t).getShape(),
                           FactorKind::NeedReplication));
    return b.build();
  }
  std::string why;
  FailureOr<SmallVector<int64_t>> sizes = sizesFromShapes(*this, rule, why);
  if (failed(sizes))
    return rule; // the verifier reports it
  return OpShardingRuleAttr::get(
      getContext(), *sizes, rule.getOperands(), rule.getResults(),
      rule.getReductionFactors(), rule.getNeedReplicationFactors(),
      rule.getPermutationFactors());
}

LogicalResult CustomCallOp::buildVjp(OpBuilder &builder,
                                     ArrayRef<Value> resultCotangents,
                                     SmallVectorImpl<Value> &operandCotangents) {
  auto vjp = getVjpAttr()
                 ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
                       *this, getVjpAttr())
                 : func::FuncOp();
  if (!vjp)
    return emitOpError() << "cannot be differentiated: @"
                         << getKernel()
                         << " has no vjp (give vjp = @f, a function of the "
                            "operands and the results' cotangents returning "
                            "the operands' cotangents)";
  // The VJP's body, inlined: it may call custom calls of its own, and it
  // propagates and partitions like the rest of the backward.
  IRMapping map;
  Block &body = vjp.getBody().front();
  unsigned n = getNumOperands();
  for (unsigned i = 0; i < n; ++i)
    map.map(body.getArgument(i), getOperand(i));
  for (auto [k, ct] : llvm::enumerate(resultCotangents)) {
    Value v = ct;
    if (!v)
      v = createSplat(builder, getLoc(),
                      cast<RankedTensorType>(getResult(k).getType()), 0.0);
    map.map(body.getArgument(n + k), v);
  }
  for (Operation &op : body.without_terminator())
    builder.clone(op, map);
  operandCotangents.clear();
  for (Value v : body.getTerminator()->getOperands())
    operandCotangents.push_back(map.lookupOrDefault(v));
  return success();
}

LogicalResult
CustomCallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (!getVjpAttr())
    return success();
  auto vjp =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getVjpAttr());
  if (!vjp || vjp.isExternal())
    return emitOpError() << "vjp " << getVjpAttr()
                         << " is not a function of this module";
  SmallVector<Type> args(getInputs().getTypes());
  llvm::append_range(args, getResultTypes());
  SmallVector<Type> results(getInputs().getTypes());
  FunctionType expected = FunctionType::get(getContext(), args, results);
  // Ranks and element types: the shapes are the global program's, and a
  // partitioned or microbatched call has its blocks' shapes.
  auto fits = [](TypeRange got, TypeRange want) {
    return got.size() == want.size() &&
           llvm::all_of(llvm::zip(got, want), [](auto pair) {
             auto a = dyn_cast<RankedTensorType>(std::get<0>(pair));
             auto b = cast<RankedTensorType>(std::get<1>(pair));
             return a && a.getRank() == b.getRank() &&
                    a.getElementType() == b.getElementType();
           });
  };
  FunctionType type = vjp.getFunctionType();
  if (!fits(type.getInputs(), args) || !fits(type.getResults(), results))
    return emitOpError() << "vjp " << getVjpAttr() << " has type " << type
                         << "; expected " << expected
                         << " (the operands, then the results' cotangents, "
                            "to the operands' cotangents)";
  return success();
}
