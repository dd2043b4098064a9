//===- TesselInterfaces.td - tessel op interfaces ----------*- tablegen -*-===//

#ifndef TESSEL_DIALECTS_TESSEL_TESSELINTERFACES_TD
#define TESSEL_DIALECTS_TESSEL_TESSELINTERFACES_TD

include "mlir/IR/OpBase.td"

def Tessel_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::mlir::tessel";
  let description = [{
    An op's sharding rule: an einsum-like assignment of factors to the
    dimensions of its operands and results, each factor of a kind
    (pass-through, reduction, need-replication, permutation). Propagation,
    partitioning and the cost model all read this one rule. Elementwise ops
    get the default (every dimension a pass-through factor shared by all
    operands and results).
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns the op's sharding rule.",
      /*retTy=*/"::mlir::tessel::OpShardingRuleAttr",
      /*methodName=*/"getShardingRule",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::tessel::elementwiseShardingRule($_op.getOperation());
      }]>
  ];
}

def Tessel_VjpOpInterface : OpInterface<"VjpOpInterface"> {
  let cppNamespace = "::mlir::tessel";
  let description = [{
    An op's vector-Jacobian product, the rule reverse-mode autodiff
    (`--tessel-grad`, `--tessel-train-step`) runs backward over a function.
    Given the cotangents of the op's results (null where a result has
    none), it emits the cotangents of its operands with tessel ops (null
    where an operand gets none), so gradients are ordinary programs that
    propagate, partition and lower like the forward. Ops whose operands get
    no cotangent (constants, iota, comparisons, one_hot, dropout masks) use
    the default. An op without this interface cannot be differentiated.
    The rules are in dialects/tessel/Vjp.cpp, next to the sharding rules.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{Emits the operands' cotangents at the builder's insertion
                 point; fails with a diagnostic on the op where a case has no
                 rule (strided slices).}],
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"buildVjp",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::llvm::ArrayRef<::mlir::Value>":$resultCotangents,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        operandCotangents.assign($_op->getNumOperands(), ::mlir::Value());
        return ::mlir::success();
      }]>
  ];
}

def Tessel_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::tessel";
  let description = [{
    A per-device op over a group of mesh axes: the collectives, the
    point-to-point send and receive, `axis_index` and `shard_slice`. Global
    programs (propagation, partitioning) may not contain them; the comm
    report counts each by its traffic; --tessel-optimize-collectives drops
    those nobody uses (not point-to-point ones, whose peer waits). A new
    collective declares it through `Tessel_CollectiveOp` in
    TesselCollectiveOps.td, naming its traffic there.
  }];
  let methods = [
    InterfaceMethod<"The mesh the group is drawn from.",
      "::mlir::FlatSymbolRefAttr", "getMeshAttr", (ins),
      [{ return $_op.getMeshAttr(); }]>,
    InterfaceMethod<"The mesh axes of the group, in group-index order.",
      "::mlir::ArrayAttr", "getAxes", (ins), [{ return $_op.getAxes(); }]>,
    InterfaceMethod<"How the bytes it sends are counted.",
      "::mlir::tessel::CollectiveTraffic", "getTraffic", (ins),
      [{ return ConcreteOp::kTraffic; }]>,
    InterfaceMethod<[{Whether a peer waits for it (send, receive): it stays
                      even when its result is unused.}],
      "bool", "isPointToPoint", (ins), [{ return ConcreteOp::kPointToPoint; }]>,
    InterfaceMethod<[{Bytes of its larger side (first operand or result),
                      the base its traffic is counted from.}],
      "int64_t", "getTrafficBytes", (ins),
      [{ return ::mlir::tessel::collectiveTrafficBytes($_op.getOperation()); }]>
  ];
}

#endif // TESSEL_DIALECTS_TESSEL_TESSELINTERFACES_TD
