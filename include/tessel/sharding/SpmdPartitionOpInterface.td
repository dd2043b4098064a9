//===- SpmdPartitionOpInterface.td - an op's own SPMD scheme -*- tablegen -*-===//

#ifndef TESSEL_SHARDING_SPMDPARTITIONOPINTERFACE_TD
#define TESSEL_SHARDING_SPMDPARTITIONOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def SpmdPartitionOpInterface : OpInterface<"SpmdPartitionOpInterface"> {
  let cppNamespace = "::mlir::tessel";
  let description = [{
    An op whose per-device program is not what its sharding rule implies.
    Most ops do not implement it: `--tessel-partition` reshards their
    operands to the layouts their rule's factors imply and clones them on
    local shapes (`SpmdPartitioner::partitionByRule`). An op that needs its
    own scheme (vocabulary-parallel cross-entropy, halo exchange for a
    slice, a scatter into split rows, a custom call) implements `partition`
    and builds its local values through the partitioner, which also offers
    the rule-driven scheme to fall back on. Tessel attaches its models from
    the sharding library (`registerSpmdPartitionModels`); an extension may
    attach its own to its ops the same way.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{Builds this op's local values at `partitioner`'s insertion
        point and records them with `setLocal` for every result.}],
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"partition",
      /*args=*/(ins "::mlir::tessel::SpmdPartitioner &":$partitioner)>
  ];
}

#endif // TESSEL_SHARDING_SPMDPARTITIONOPINTERFACE_TD
