//===- TesselNNOps.td - neural-network ops -----------------*- tablegen -*-===//
//
// Included by TesselOps.td, after the definitions it builds on.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECTS_TESSEL_TESSELNNOPS_TD
#define TESSEL_DIALECTS_TESSEL_TESSELNNOPS_TD

//===----------------------------------------------------------------------===//
// Neural-network ops
//===----------------------------------------------------------------------===//

def Tessel_SoftmaxOp : Tessel_Op<"softmax", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, SameOperandsAndResultType,
    InferTypeOpInterface]> {
  let summary = "Softmax along one dimension";
  let description = [{
    `result = exp(x - max) / sum(exp(x - max))` along `dim`, computed in at
    least f32. A slice that is all `-inf` gives zeros; a slice with a NaN is all NaN.

    ```mlir
    %p = tessel.softmax %scores, dim = 3 : tensor<2x4x16x16xf32>
    ```

    Constraints:
      * `dim` is a dimension of the operand.
  }];
  let arguments = (ins Tessel_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Tessel_FloatTensor:$result);
  let assemblyFormat = "$input `,` `dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tessel_LayerNormOp : Tessel_Op<"layer_norm", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure,
    AllTypesMatch<["scale", "bias"]>, InferTypeOpAdaptor]> {
  let summary = "Layer normalization over the last dimension";
  let description = [{
    `result = (x - mean) / sqrt(var + epsilon) * scale + bias`, with the
    mean and (biased) variance over the last dimension, computed in at least
    f32.

    ```mlir
    %y = tessel.layer_norm %x, %g, %b, epsilon = 1.0e-05
        : tensor<4x16x64xf32>, tensor<64xf32>
    ```

    Constraints:
      * the operand has rank at least 1;
      * `scale` and `bias` are 1-d with the operand's last dimension and
        element type;
      * `epsilon` is positive.
  }];
  let arguments = (ins Tessel_FloatTensor:$input, Tessel_FloatTensor:$scale,
                       Tessel_FloatTensor:$bias, F64Attr:$epsilon);
  let results = (outs Tessel_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` `epsilon` `=` $epsilon attr-dict `:`
    type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

def Tessel_RmsNormOp : Tessel_Op<"rms_norm", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure,
    InferTypeOpAdaptor]> {
  let summary = "RMS normalization over the last dimension";
  let description = [{
    `result = x / sqrt(mean(x^2) + epsilon) * scale` over the last dimension,
    computed in at least f32 (Llama's RMSNorm).

    ```mlir
    %y = tessel.rms_norm %x, %g, epsilon = 1.0e-06 : tensor<4x16x64xf32>, tensor<64xf32>
    ```

    Constraints:
      * the operand has rank at least 1;
      * `scale` is 1-d with the operand's last dimension and element type;
      * `epsilon` is positive.
  }];
  let arguments = (ins Tessel_FloatTensor:$input, Tessel_FloatTensor:$scale,
                       F64Attr:$epsilon);
  let results = (outs Tessel_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` `epsilon` `=` $epsilon attr-dict `:`
    type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

def Tessel_GatherOp : Tessel_Op<"gather", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "Takes slices of a tensor at indices along one axis";
  let description = [{
    Like `numpy.take(table, indices, axis)`: the result shape is
    `table.shape[:axis] + indices.shape + table.shape[axis+1:]`, and an index
    outside `[0, table.shape[axis])` gives zeros (so that a vocabulary-split
    embedding can gather locally and sum over shards).

    ```mlir
    %e = tessel.gather %wte[%tokens], axis = 0
        : (tensor<256x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
    ```

    Constraints:
      * `axis` is a dimension of the table;
      * the result type is the one the shapes imply.
  }];
  let arguments = (ins Tessel_Tensor:$table, Tessel_IntTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $table `[` $indices `]` `,` `axis` `=` $axis attr-dict `:`
    functional-type(operands, $result)
  }];
}

def Tessel_ScatterAddOp : Tessel_Op<"scatter_add", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure,
    InferTypeOpAdaptor]> {
  let summary = "Adds slices into a tensor at indices along one axis";
  let description = [{
    The gradient of `tessel.gather`: starting from `base`, adds each slice of
    `updates` into the row of `result` named by its index along `axis`.
    Repeated indices accumulate; indices outside `[0, base.shape[axis])` are
    dropped.

    ```mlir
    %g = tessel.scatter_add %zeros[%tokens], %dy, axis = 0
        : (tensor<256x64xf32>, tensor<4x16xi32>, tensor<4x16x64xf32>) -> tensor<256x64xf32>
    ```

    Constraints:
      * `axis` is a dimension of `base`;
      * `updates` has shape `base.shape[:axis] + indices.shape +
        base.shape[axis+1:]` and the element type of `base`;
      * `base` and the result have the same type.
  }];
  let arguments = (ins Tessel_NumericTensor:$base, Tessel_IntTensor:$indices,
                       Tessel_NumericTensor:$updates, I64Attr:$axis);
  let results = (outs Tessel_NumericTensor:$result);
  let assemblyFormat = [{
    $base `[` $indices `]` `,` $updates `,` `axis` `=` $axis attr-dict `:`
    functional-type(operands, $result)
  }];
  let hasVerifier = 1;
}

def Tessel_OneHotOp : Tessel_Op<"one_hot", [Tessel_VjpOpInterface, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure]> {
  let summary = "One-hot encoding along a new last dimension";
  let description = [{
    `result[..., c] = (indices[...] == c) ? 1 : 0`; the depth is the result's
    last dimension. An index outside `[0, depth)` gives a row of zeros.

    ```mlir
    %oh = tessel.one_hot %labels : (tensor<4x16xi32>) -> tensor<4x16x256xf32>
    ```

    Constraints:
      * the result shape is the indices' shape plus one last dimension.
  }];
  let arguments = (ins Tessel_IntTensor:$indices);
  let results = (outs Tessel_NumericTensor:$result);
  let assemblyFormat = "$indices attr-dict `:` functional-type($indices, $result)";
  let hasVerifier = 1;
}

def Tessel_TopKOp : Tessel_Op<"top_k", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "The k largest entries along the last dimension";
  let description = [{
    Returns the `k` largest values of each last-dimension row in descending
    order and their indices (i32); ties go to the lower index (the MoE
    router's choice of experts).

    ```mlir
    %v, %i = tessel.top_k %logits, k = 2
        : (tensor<64x8xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>)
    ```

    Constraints:
      * the operand has rank at least 1;
      * `1 <= k <= ` the last dimension;
      * the result types are the operand's with the last dimension `k`, the
        second with element type i32.
  }];
  let arguments = (ins Tessel_NumericTensor:$input, I64Attr:$k);
  let results = (outs Tessel_NumericTensor:$values, Tessel_IntTensor:$indices);
  let assemblyFormat = [{
    $input `,` `k` `=` $k attr-dict `:` functional-type($input, results)
  }];
}

def Tessel_DropoutMaskOp : Tessel_Op<"dropout_mask", [Tessel_VjpOpInterface, Pure, Tessel_ShardingRuleOpInterface]> {
  let summary = "A seeded, scaled dropout mask";
  let description = [{
    `result[i] = keep(seed, i) ? 1 / (1 - rate) : 0` where `i` is the
    element's row-major linear index and `keep` is a counter-based hash:
    kept when the top 24 bits of `splitmix64(splitmix64(seed) + i)`, divided
    by 2^24, are at least `rate`. All 64 bits of the seed matter, and seeds
    `s` and `s + 1` give unrelated masks (a model derives one seed per mask
    by adding its number). The mask depends only on the seed and the index,
    so a sharded mask equals the slice of the unsharded one.

    With `at [offsets] of [global shape]` the result is the block of the
    mask of shape `global shape` that starts at `offsets` (one 0-d integer
    tensor per dimension): element `j` of the block has the linear index of
    `offsets + j` in the global shape. The partitioner emits this form, so
    each device computes only its own block.

    ```mlir
    %m = tessel.dropout_mask %seed, rate = 1.0e-01 : (tensor<i64>) -> tensor<4x16x64xf32>
    %b = tessel.dropout_mask %seed at [%o0, %o1] of [8, 64], rate = 1.0e-01
        : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4x64xf32>
    ```

    Constraints:
      * `0 <= rate < 1`;
      * offsets and global shape both present, one per result dimension,
        each result dimension at most its global size.
  }];
  let arguments = (ins Tessel_ScalarIntTensor:$seed,
                       Variadic<Tessel_ScalarIntTensor>:$offsets,
                       OptionalAttr<DenseI64ArrayAttr>:$global_shape,
                       F64Attr:$rate);
  let results = (outs Tessel_FloatTensor:$result);
  let assemblyFormat = [{
    $seed (`at` ` ` `[` $offsets^ `]` `of` $global_shape)? `,` `rate` `=` $rate
    attr-dict `:` functional-type(operands, $result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$seed,
                   "::llvm::APFloat":$rate), [{
      build($_builder, $_state, result, seed, ::mlir::ValueRange{},
            ::mlir::DenseI64ArrayAttr(),
            $_builder.getFloatAttr($_builder.getF64Type(), rate));
    }]>
  ];
  let hasVerifier = 1;
}

def Tessel_SoftmaxCrossEntropyOp : Tessel_Op<"softmax_cross_entropy", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure,
    InferTypeOpAdaptor]> {
  let summary = "Fused log-softmax and negative log-likelihood";
  let description = [{
    For each position `p`, `loss[p] = logsumexp(logits[p, :]) -
    logits[p, labels[p]]`, computed in at least f32. Positions whose label is
    `ignore_index` or outside `[0, classes)` are ignored. `mean` averages over
    the positions not ignored (0 if there are none), `sum` adds them, `none`
    returns the per-position losses (0 where ignored).

    ```mlir
    %loss = tessel.softmax_cross_entropy %logits, %targets, ignore_index = -100,
        reduction = mean : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
    ```

    Constraints:
      * logits have rank at least 1 (the classes are the last dimension);
      * labels have the logits' shape without the last dimension;
      * the result is a 0-d tensor (`mean`, `sum`) or of the labels' shape
        (`none`), with the logits' element type.
  }];
  let arguments = (ins Tessel_FloatTensor:$logits, Tessel_IntTensor:$labels,
                       I64Attr:$ignore_index, Tessel_LossReduction:$reduction);
  let results = (outs Tessel_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` `ignore_index` `=` $ignore_index `,` `reduction`
    `=` $reduction attr-dict `:` functional-type(operands, $result)
  }];
}

#endif // TESSEL_DIALECTS_TESSEL_TESSELNNOPS_TD
