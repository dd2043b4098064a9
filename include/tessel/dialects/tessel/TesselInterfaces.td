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

#endif // TESSEL_DIALECTS_TESSEL_TESSELINTERFACES_TD
