//===- TesselCustomCallOps.td - kernels of the user's -----*- tablegen -*-===//
//
// Part of TesselOps.td.
//
//===----------------------------------------------------------------------===//

def Tessel_CustomCallOp : Tessel_Op<"custom_call", [
    DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>,
    DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, Pure]> {
  let summary = "A kernel of the user's, found by name at run time";
  let description = [{
    Calls the kernel `@kernel` on its operands: a C function of that name in
    a shared library given at run time (`--custom-calls LIB.so`; the ABI is
    `include/tessel/runtime/CustomCall.h`), called by the interpreter and by
    compiled programs alike. The kernel must be a pure function of its
    operands (the op may be removed when unused, and runs once per device on
    the device's blocks).

    `rule` says how it partitions, in the notation
    `--tessel-print-rules` prints; propagation and partitioning then treat
    it like any op with that rule (a sharded reduction factor leaves the
    result partial, summed afterwards). Its factor sizes are those of the
    operands and results as written. Without a rule, every dimension is
    need-replication: the kernel sees whole tensors. `vjp` names a function
    taking the operands and then the results' cotangents and returning the
    operands' cotangents; autodiff inlines it (it may itself contain custom
    calls). `config` is an opaque string handed to the kernel.

    ```mlir
    %y = tessel.custom_call @my_fused_gelu(%x) {
        rule = #tessel.rule<([i, j]) -> ([i, j]) {i=4, j=8}>,
        vjp = @my_fused_gelu_vjp} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```

    Constraints:
      * the rule has one mapping per operand and per result, each of the
        tensor's rank, and the product of a dimension's factor sizes is the
        dimension's size;
      * `vjp` names a func.func of the module taking the operands and the
        results (as cotangents) and returning the operands (as
        cotangents): the same counts, ranks and element types (its shapes
        are the global program's; a partitioned call has its blocks').
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       Variadic<Tessel_Tensor>:$inputs,
                       OptionalAttr<Tessel_OpShardingRuleAttr>:$rule,
                       OptionalAttr<FlatSymbolRefAttr>:$vjp,
                       DefaultValuedStrAttr<StrAttr, "">:$config);
  let results = (outs Variadic<Tessel_Tensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
}
