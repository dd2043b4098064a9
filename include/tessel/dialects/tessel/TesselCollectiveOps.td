//===- TesselCollectiveOps.td - collectives ----------------*- tablegen -*-===//
//
// Included by TesselOps.td, after the definitions it builds on.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECTS_TESSEL_TESSELCOLLECTIVEOPS_TD
#define TESSEL_DIALECTS_TESSEL_TESSELCOLLECTIVEOPS_TD

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//
//
// A collective over mesh axes A runs among the devices that share their
// coordinates on every other axis (a "group"). Within a group a device's
// index is its row-major position over A in the listed order.

// `traffic` names how the comm report counts the op's bytes (a
// ::mlir::tessel::CollectiveTraffic); `pointToPoint` marks ops a peer
// waits for. Both reach passes through CollectiveOpInterface.
class Tessel_CollectiveOp<string mnemonic, list<Trait> traits = [],
                          string traffic = "Whole", bit pointToPoint = 0>
    : Tessel_Op<mnemonic, !listconcat(traits,
          [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
           Tessel_CollectiveOpInterface])> {
  let extraClassDeclaration = [{
    static constexpr ::mlir::tessel::CollectiveTraffic kTraffic =
        ::mlir::tessel::CollectiveTraffic::}] # traffic # [{;
    static constexpr bool kPointToPoint = }] #
        !if(pointToPoint, "true", "false") # [{;
  }];
  code commonConstraints = [{
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
  }];
}

def Tessel_AllReduceOp : Tessel_CollectiveOp<"all_reduce", [
    SameOperandsAndResultType], "AllReduce"> {
  let summary = "Reduces a tensor across a device group";
  let description = [{
    Every device of a group receives the elementwise `sum`, `max` or `min`
    of the group's operands.

    ```mlir
    %r = tessel.all_reduce sum %partial on @mesh ["tp"] : tensor<4x16x64xf32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * operand and result have the same type.
  }];
  let arguments = (ins Tessel_CollectiveKind:$kind, Tessel_NumericTensor:$input,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Tessel_NumericTensor:$result);
  let assemblyFormat = [{
    $kind $input `on` $mesh $axes attr-dict `:` type($result)
  }];
}

def Tessel_AllGatherOp : Tessel_CollectiveOp<"all_gather", [Pure], "Exchange"> {
  let summary = "Concatenates a tensor's pieces across a device group";
  let description = [{
    Every device of a group receives the group's operands concatenated along
    `dim` in group-index order.

    ```mlir
    %g = tessel.all_gather %x on @mesh ["dp"], dim = 0
        : (tensor<2x8xf32>) -> tensor<4x8xf32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * `dim` is a dimension of the operand;
      * the result is the operand with `dim` multiplied by the group size.
  }];
  let arguments = (ins Tessel_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `,` `dim` `=` $dim attr-dict `:`
    functional-type($input, $result)
  }];
}

def Tessel_ReduceScatterOp : Tessel_CollectiveOp<"reduce_scatter", [],
    "Exchange"> {
  let summary = "Reduces across a device group and keeps one piece";
  let description = [{
    The elementwise reduction of the group's operands is split into
    group-size pieces along `dim`; the device of group index `g` keeps piece
    `g`.

    ```mlir
    %s = tessel.reduce_scatter sum %x on @mesh ["tp"], dim = 1
        : (tensor<4x16xf32>) -> tensor<4x4xf32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * `dim` is a dimension of the operand, divisible by the group size;
      * the result is the operand with `dim` divided by the group size.
  }];
  let arguments = (ins Tessel_CollectiveKind:$kind, Tessel_NumericTensor:$input,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       I64Attr:$dim);
  let results = (outs Tessel_NumericTensor:$result);
  let assemblyFormat = [{
    $kind $input `on` $mesh $axes `,` `dim` `=` $dim attr-dict `:`
    functional-type($input, $result)
  }];
}

def Tessel_AllToAllOp : Tessel_CollectiveOp<"all_to_all", [], "Exchange"> {
  let summary = "Exchanges pieces of a tensor across a device group";
  let description = [{
    Each device splits its operand into group-size pieces along `split_dim`
    and sends piece `j` to the device of group index `j`; each device
    concatenates what it receives along `concat_dim` in sender order. With
    `split_dim == concat_dim` the shape is unchanged.

    ```mlir
    %t = tessel.all_to_all %x on @mesh ["ep"], split_dim = 0, concat_dim = 1
        : (tensor<8x4xf32>) -> tensor<2x16xf32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * `split_dim` and `concat_dim` are dimensions of the operand;
      * `split_dim` is divisible by the group size;
      * the result is the operand with `split_dim` divided and `concat_dim`
        multiplied by the group size.
  }];
  let arguments = (ins Tessel_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim,
                       I64Attr:$concat_dim);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `,` `split_dim` `=` $split_dim `,` `concat_dim`
    `=` $concat_dim attr-dict `:` functional-type($input, $result)
  }];
}

def Tessel_CollectivePermuteOp : Tessel_CollectiveOp<"collective_permute", [
    SameOperandsAndResultType]> {
  let summary = "Sends a tensor between devices of a group by index pairs";
  let description = [{
    For each pair `s -> t`, the device of group index `s` sends its operand
    to the device of group index `t`. A device that receives nothing gets
    zeros.

    ```mlir
    %n = tessel.collective_permute %x on @mesh ["pp"], pairs = [0 -> 1, 1 -> 2, 2 -> 3]
        : tensor<4x8xf32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * every index is within the group;
      * no index is a source twice or a target twice.
  }];
  let arguments = (ins Tessel_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, DenseI64ArrayAttr:$pairs);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `,` `pairs` `=` custom<Pairs>($pairs) attr-dict
    `:` type($result)
  }];
  let hasVerifier = 1;
}

def Tessel_SendOp : Tessel_CollectiveOp<"send", [
    MemoryEffects<[MemWrite]>], "Whole", /*pointToPoint=*/1> {
  let summary = "Sends a tensor to one device of the group";
  let description = [{
    Point-to-point transfer between pipeline stages: the executing device
    sends its operand to the device of its group whose group index is
    `target`. It pairs with the `tessel.recv` of the same `channel` on the
    target.

    ```mlir
    tessel.send %act on @mesh ["pp"], target = 1, channel = 0 : tensor<4x16x64xf32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * `target` is within the group;
      * `channel` is not negative.
  }];
  let arguments = (ins Tessel_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$target, I64Attr:$channel);
  let assemblyFormat = [{
    $input `on` $mesh $axes `,` `target` `=` $target `,` `channel` `=`
    $channel attr-dict `:` type($input)
  }];
}

def Tessel_RecvOp : Tessel_CollectiveOp<"recv", [
    MemoryEffects<[MemRead]>], "None", /*pointToPoint=*/1> {
  let summary = "Receives a tensor from one device of the group";
  let description = [{
    Receives the operand of the `tessel.send` of the same `channel` executed
    by the device of the group whose group index is `source`.

    ```mlir
    %act = tessel.recv on @mesh ["pp"], source = 0, channel = 0 : tensor<4x16x64xf32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * `source` is within the group;
      * `channel` is not negative.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       I64Attr:$source, I64Attr:$channel);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    `on` $mesh $axes `,` `source` `=` $source `,` `channel` `=` $channel
    attr-dict `:` type($result)
  }];
}

def Tessel_AxisIndexOp : Tessel_CollectiveOp<"axis_index", [Pure], "None"> {
  let summary = "The executing device's index within its group";
  let description = [{
    The row-major index of the executing device over `axes` (0-d tensor).

    ```mlir
    %i = tessel.axis_index on @mesh ["tp"] : tensor<i32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * the result is a 0-d i32 or i64 tensor.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Tessel_ScalarIntTensor:$result);
  let assemblyFormat = "`on` $mesh $axes attr-dict `:` type($result)";
}

def Tessel_ShardSliceOp : Tessel_CollectiveOp<"shard_slice", [Pure], "None"> {
  let summary = "This device's block of a tensor along one dimension";
  let description = [{
    Splits the operand into group-size pieces along `dim` and keeps piece
    `g`, the executing device's group index over `axes`; nothing is sent.
    The partitioner emits it where a reshard adds mesh axes to a dimension,
    and --tessel-optimize-collectives folds it into the collective that
    produced its operand (all_gather + shard_slice of the same group and
    dimension is the gather's operand; all_reduce + shard_slice is one
    reduce_scatter).

    ```mlir
    %b = tessel.shard_slice %x on @mesh ["tp"], dim = 1
        : (tensor<4x16xf32>) -> tensor<4x4xf32>
    ```

    Constraints:
      * the mesh exists, and `axes` is a non-empty list of its axes with no
        axis twice;
      * `dim` is a dimension of the operand, divisible by the group size;
      * the result is the operand with `dim` divided by the group size.
  }];
  let arguments = (ins Tessel_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `,` `dim` `=` $dim attr-dict `:`
    functional-type($input, $result)
  }];
}

def Tessel_RegionOp : Tessel_Op<"region"> {
  let summary = "Marks where a named region of the enclosing function begins";
  let description = [{
    Time from here to the next `tessel.region` (or the function's end)
    belongs to region `index` of the enclosing function's `tessel.regions`
    list of names: the actions of a pipeline schedule ("F0.1", "BW1.0"),
    then "optimizer". Compiled programs report it to the runtime, which
    records each region as a span of its --trace; the interpreter ignores
    it. --tessel-pipeline-split places one before each action, after the
    receives the action waits for.

    ```mlir
    func.func @stage(...) attributes {tessel.regions = ["F0.0", "optimizer"]} {
      tessel.region 0
      ...
    }
    ```

    Constraints:
      * the enclosing function has a `tessel.regions` array of strings
        with more than `index` entries.
  }];
  let arguments = (ins I64Attr:$index);
  let assemblyFormat = "$index attr-dict";
  let hasVerifier = 1;
}

#endif // TESSEL_DIALECTS_TESSEL_TESSELCOLLECTIVEOPS_TD
