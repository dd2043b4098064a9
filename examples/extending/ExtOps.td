//===- ExtOps.td - the ext dialect: an op defined outside Tessel ---------===//
//
// An out-of-tree dialect whose op implements Tessel's interfaces (from the
// installed tessel/dialects/tessel/TesselInterfaces.td): its sharding rule
// makes propagation and partitioning treat it like a built-in op, its VJP
// makes it trainable. See ExtDialect.cpp and docs/extending.md.
//
//===----------------------------------------------------------------------===//

#ifndef EXT_OPS_TD
#define EXT_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "tessel/dialects/tessel/TesselInterfaces.td"

def Ext_Dialect : Dialect {
  let name = "ext";
  let summary = "An example dialect built against an installed Tessel";
  let cppNamespace = "::ext";
}

def Ext_SwiGluOp : Op<Ext_Dialect, "swiglu", [Pure,
    DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>,
    DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>]> {
  let summary = "A fused SwiGLU projection: silu(x . w_gate) * (x . w_up)";
  let description = [{
    `x` is `[..., k]`, `w_gate` and `w_up` are `[k, n]`, the result is
    `[..., n]`. Its sharding rule: the leading dimensions and `n` are
    pass-through factors (so a tensor-parallel split of the weights' columns
    needs no communication), `k` must be replicated (the activation is not
    linear, so partial sums over `k` cannot be added afterwards).
    `ext-lower-to-tessel` rewrites it into tessel ops.
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$w_gate,
                       AnyRankedTensor:$w_up);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $x `,` $w_gate `,` $w_up attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // EXT_OPS_TD
