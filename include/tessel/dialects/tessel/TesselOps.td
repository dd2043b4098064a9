//===- TesselOps.td - tessel operations --------------------*- tablegen -*-===//
//
// Ops are grouped as: meshes and shardings, tensor creation, elementwise,
// shape manipulation, contractions and reductions, neural-network ops,
// collectives. Every description carries an example and a Constraints list
// that the verifier and test/dialects/tessel/invalid.mlir mirror. The
// neural-network ops and the collectives are in TesselNNOps.td and
// TesselCollectiveOps.td, included at the end.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECTS_TESSEL_TESSELOPS_TD
#define TESSEL_DIALECTS_TESSEL_TESSELOPS_TD

include "tessel/dialects/tessel/TesselAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "tessel/dialects/tessel/TesselInterfaces.td"

//===----------------------------------------------------------------------===//
// Meshes and shardings
//===----------------------------------------------------------------------===//

def Tessel_MeshOp : Tessel_Op<"mesh", [Symbol]> {
  let summary = "A named device mesh";
  let description = [{
    Declares a logical n-d grid of devices with named axes. Devices are
    numbered row-major over the axes (the last axis varies fastest) unless an
    explicit device list gives the rank (physical device) of each mesh
    position. A mesh may cover some of the ranks only: the stages of a
    pipeline run on sub-meshes of a mesh that spans them.

    ```mlir
    tessel.mesh @mesh ["dp"=2, "tp"=4]
    tessel.mesh @ring ["x"=4] devices = [3, 2, 1, 0]
    tessel.mesh @stage1 ["dp"=2] devices = [2, 3]
    ```

    Constraints:
      * at least one axis;
      * axis names are unique and not empty;
      * every axis size is at least 1;
      * an explicit device list has one entry per device (the product of
        the axis sizes): distinct, non-negative ranks.
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    StrArrayAttr:$axis_names,
    DenseI64ArrayAttr:$axis_sizes,
    OptionalAttr<DenseI64ArrayAttr>:$devices);
  let assemblyFormat = [{
    $sym_name custom<MeshAxes>($axis_names, $axis_sizes)
    (`devices` `=` $devices^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getRank() { return getAxisSizes().size(); }
    /// Total number of devices in the mesh.
    int64_t getNumDevices();
    /// Index of `axis` in the mesh, or -1.
    int64_t getAxisIndex(::llvm::StringRef axis);
    /// Size of `axis`, or -1 if the mesh has no such axis.
    int64_t getAxisSize(::llvm::StringRef axis);
  }];
}

def Tessel_ShardingConstraintOp : Tessel_Op<"sharding_constraint", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, 
    Pure, SameOperandsAndResultType, Tessel_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Pins the sharding of an intermediate value";
  let description = [{
    Returns its operand unchanged and asks propagation and partitioning to
    give the result exactly `sharding` on its closed dimensions.

    ```mlir
    %1 = tessel.sharding_constraint %0 <@mesh, [{"dp"}, {"tp", ?}p1]> : tensor<8x16xf32>
    ```

    Constraints:
      * the mesh exists and has every axis the sharding names;
      * the sharding has one entry per dimension of the operand.
  }];
  let arguments = (ins Tessel_Tensor:$input, Tessel_ShardingAttr:$sharding);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = "$input $sharding attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Tensor creation
//===----------------------------------------------------------------------===//

def Tessel_ConstantOp : Tessel_Op<"constant", [Tessel_VjpOpInterface, 
    ConstantLike, Pure, InferTypeOpAdaptor, Tessel_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "A constant tensor";
  let description = [{
    ```mlir
    %c = tessel.constant dense<0.5> : tensor<4x8xf32>
    ```

    Constraints:
      * the value is a statically shaped tensor of a tessel element type
        (f16, bf16, f32, f64, i1, i32, i64).
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Tessel_IotaOp : Tessel_Op<"iota", [Tessel_VjpOpInterface, Pure, Tessel_ShardingRuleOpInterface]> {
  let summary = "Indices along one dimension";
  let description = [{
    `result[i0, ..., in] = i_dim`, converted to the result element type.

    ```mlir
    %pos = tessel.iota dim = 1 : tensor<4x64xi32>
    ```

    Constraints:
      * the result has rank at least 1;
      * `dim` is a dimension of the result.
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Tessel_NumericTensor:$result);
  let assemblyFormat = "`dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Tessel_UnaryOp<string mnemonic, Type type, string formula,
                     list<Trait> traits = []>
    : Tessel_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
          SameOperandsAndResultType, InferTypeOpInterface, Tessel_ShardingRuleOpInterface,
          DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>])> {
  let summary = "Elementwise " # mnemonic;
  let description = "`result[i] = " # formula # "`.\n\n```mlir\n%y = tessel."
      # mnemonic # " %x : tensor<4x8xf32>\n```\n\nConstraints:\n"
      # "  * operand and result have the same type.\n";
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Tessel_NegOp : Tessel_UnaryOp<"neg", Tessel_NumericTensor, "-x[i]">;
def Tessel_AbsOp : Tessel_UnaryOp<"abs", Tessel_NumericTensor, "|x[i]|">;
def Tessel_ReluOp : Tessel_UnaryOp<"relu", Tessel_NumericTensor, "max(x[i], 0)">;
def Tessel_ExpOp : Tessel_UnaryOp<"exp", Tessel_FloatTensor, "e^x[i]">;
def Tessel_LogOp : Tessel_UnaryOp<"log", Tessel_FloatTensor,
    "ln(x[i]) (NaN below 0, -inf at 0)">;
def Tessel_SqrtOp : Tessel_UnaryOp<"sqrt", Tessel_FloatTensor, "sqrt(x[i])">;
def Tessel_RsqrtOp : Tessel_UnaryOp<"rsqrt", Tessel_FloatTensor, "1 / sqrt(x[i])">;
def Tessel_TanhOp : Tessel_UnaryOp<"tanh", Tessel_FloatTensor, "tanh(x[i])">;
def Tessel_LogisticOp : Tessel_UnaryOp<"logistic", Tessel_FloatTensor,
    "1 / (1 + e^-x[i])">;
def Tessel_SiluOp : Tessel_UnaryOp<"silu", Tessel_FloatTensor,
    "x[i] / (1 + e^-x[i])">;
def Tessel_SinOp : Tessel_UnaryOp<"sin", Tessel_FloatTensor, "sin(x[i])">;
def Tessel_CosOp : Tessel_UnaryOp<"cos", Tessel_FloatTensor, "cos(x[i])">;

def Tessel_GeluOp : Tessel_Op<"gelu", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, Pure, Elementwise,
    SameOperandsAndResultType, InferTypeOpInterface, Tessel_ShardingRuleOpInterface]> {
  let summary = "Elementwise GELU";
  let description = [{
    `erf`: `x * 0.5 * (1 + erf(x / sqrt(2)))`.
    `tanh`: `x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`
    (GPT-2's form).

    ```mlir
    %y = tessel.gelu %x approximation = tanh : tensor<4x8xf32>
    ```

    Constraints:
      * operand and result have the same type.
  }];
  let arguments = (ins Tessel_FloatTensor:$input,
                       Tessel_GeluApproximation:$approximation);
  let results = (outs Tessel_FloatTensor:$result);
  let assemblyFormat = [{
    $input `approximation` `=` $approximation attr-dict `:` type($result)
  }];
}

def Tessel_ConvertOp : Tessel_Op<"convert", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, Pure, Elementwise,
    SameOperandsAndResultShape, Tessel_ShardingRuleOpInterface]> {
  let summary = "Elementwise element type conversion";
  let description = [{
    Float to float rounds to nearest even; float to integer truncates toward
    zero (NaN gives 0, out-of-range values saturate); integer to float rounds
    to nearest even; to i1 gives `x != 0`; from i1 gives 0 or 1.

    ```mlir
    %y = tessel.convert %x : (tensor<4x8xf32>) -> tensor<4x8xbf16>
    ```

    Constraints:
      * operand and result have the same shape.
  }];
  let arguments = (ins Tessel_Tensor:$input);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $result)";
  let hasFolder = 1;
}

class Tessel_BinaryOp<string mnemonic, Type type, string formula>
    : Tessel_Op<mnemonic, [Pure, Elementwise, SameOperandsAndResultType,
                           InferTypeOpInterface, Tessel_ShardingRuleOpInterface,
                           DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>]> {
  let summary = "Elementwise " # mnemonic;
  let description = "`result[i] = " # formula # "`. Operands are not "
      # "broadcast: use `tessel.broadcast_in_dim` first.\n\n```mlir\n"
      # "%z = tessel." # mnemonic # " %x, %y : tensor<4x8xf32>\n```\n\n"
      # "Constraints:\n  * both operands and the result have the same type.\n";
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Tessel_AddOp : Tessel_BinaryOp<"add", Tessel_NumericTensor, "x[i] + y[i]">;
def Tessel_SubOp : Tessel_BinaryOp<"sub", Tessel_NumericTensor, "x[i] - y[i]">;
def Tessel_MulOp : Tessel_BinaryOp<"mul", Tessel_NumericTensor, "x[i] * y[i]">;
def Tessel_DivOp : Tessel_BinaryOp<"div", Tessel_NumericTensor,
    "x[i] / y[i] (integers: truncated toward zero; division by zero gives 0)">;
def Tessel_MaxOp : Tessel_BinaryOp<"max", Tessel_NumericTensor,
    "max(x[i], y[i]) (NaN if either is NaN)">;
def Tessel_MinOp : Tessel_BinaryOp<"min", Tessel_NumericTensor,
    "min(x[i], y[i]) (NaN if either is NaN)">;
def Tessel_PowOp : Tessel_BinaryOp<"pow", Tessel_FloatTensor, "x[i] ^ y[i]">;

def Tessel_CompareOp : Tessel_Op<"compare", [Tessel_VjpOpInterface, Pure, Elementwise,
    SameTypeOperands, SameOperandsAndResultShape, InferTypeOpAdaptor, Tessel_ShardingRuleOpInterface]> {
  let summary = "Elementwise comparison";
  let description = [{
    `result[i] = x[i] <direction> y[i]` as i1. Comparisons with NaN are false
    except `ne`.

    ```mlir
    %m = tessel.compare lt, %x, %y : tensor<4x8xi32>
    ```

    Constraints:
      * both operands have the same type;
      * the result is an i1 tensor of the operands' shape.
  }];
  let arguments = (ins Tessel_CompareDirection:$direction,
                       Tessel_NumericTensor:$lhs, Tessel_NumericTensor:$rhs);
  let results = (outs Tessel_PredTensor:$result);
  let assemblyFormat = "$direction `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
}

def Tessel_SelectOp : Tessel_Op<"select", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, Pure, Elementwise, Tessel_ShardingRuleOpInterface,
    AllTypesMatch<["on_true", "on_false", "result"]>,
    AllShapesMatch<["pred", "result"]>]> {
  let summary = "Elementwise choice";
  let description = [{
    `result[i] = pred[i] ? on_true[i] : on_false[i]`.

    ```mlir
    %z = tessel.select %m, %x, %y : tensor<4x8xi1>, tensor<4x8xf32>
    ```

    Constraints:
      * `on_true`, `on_false` and the result have the same type;
      * `pred` has the result's shape.
  }];
  let arguments = (ins Tessel_PredTensor:$pred, Tessel_Tensor:$on_true,
                       Tessel_Tensor:$on_false);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Tessel_BroadcastInDimOp : Tessel_Op<"broadcast_in_dim", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure]> {
  let summary = "Broadcasts a tensor into a larger shape";
  let description = [{
    Operand dimension `i` becomes result dimension `dims[i]`; result
    dimensions not listed, and operand dimensions of size 1 mapped to larger
    ones, repeat the operand.

    ```mlir
    %b = tessel.broadcast_in_dim %bias, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
    ```

    Constraints:
      * `dims` has one entry per operand dimension;
      * every entry of `dims` is a result dimension, and `dims` is strictly
        increasing;
      * each operand dimension has the size of its result dimension, or 1;
      * operand and result have the same element type.
  }];
  let arguments = (ins Tessel_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $input `,` `dims` `=` $dims attr-dict `:` functional-type($input, $result)
  }];
  let hasVerifier = 1;
}

def Tessel_ReshapeOp : Tessel_Op<"reshape", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure]> {
  let summary = "Reinterprets a tensor's shape in row-major order";
  let description = [{
    ```mlir
    %r = tessel.reshape %x : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
    ```

    Constraints:
      * operand and result have the same number of elements;
      * operand and result have the same element type.
  }];
  let arguments = (ins Tessel_Tensor:$input);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tessel_TransposeOp : Tessel_Op<"transpose", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "Permutes dimensions";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.

    ```mlir
    %t = tessel.transpose %x, permutation = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
    ```

    Constraints:
      * `permutation` is a permutation of 0 .. rank-1;
      * the result type is the permuted operand type.
  }];
  let arguments = (ins Tessel_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $input `,` `permutation` `=` $permutation attr-dict `:`
    functional-type($input, $result)
  }];
  let hasFolder = 1;
}

def Tessel_SliceOp : Tessel_Op<"slice", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "A strided box of a tensor";
  let description = [{
    Result dimension `d` takes operand indices `start[d], start[d] +
    strides[d], ...` below `limit[d]`.

    ```mlir
    %s = tessel.slice %x, start = [0, 2], limit = [4, 8], strides = [1, 2]
        : (tensor<4x8xf32>) -> tensor<4x3xf32>
    ```

    Constraints:
      * `start`, `limit` and `strides` have one entry per dimension;
      * `0 <= start[d] <= limit[d] <= size[d]`;
      * every stride is at least 1;
      * the result type is the sliced operand type.
  }];
  let arguments = (ins Tessel_Tensor:$input, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$strides);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $input `,` `start` `=` $start `,` `limit` `=` $limit `,` `strides` `=`
    $strides attr-dict `:` functional-type($input, $result)
  }];
}

def Tessel_ConcatenateOp : Tessel_Op<"concatenate", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure,
    InferTypeOpAdaptor]> {
  let summary = "Joins tensors along one dimension";
  let description = [{
    ```mlir
    %c = tessel.concatenate %a, %b dim = 1
        : (tensor<4x2xf32>, tensor<4x6xf32>) -> tensor<4x8xf32>
    ```

    Constraints:
      * at least one operand;
      * all operands have the same rank and element type;
      * `dim` is a dimension of the operands;
      * operands agree on every dimension except `dim`;
      * the result type is the concatenated type.
  }];
  let arguments = (ins Variadic<Tessel_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dim` `=` $dim attr-dict `:` functional-type($inputs, $result)
  }];
}

def Tessel_PadOp : Tessel_Op<"pad", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "Pads each dimension with a constant";
  let description = [{
    Adds `low[d]` elements before and `high[d]` after dimension `d`, all equal
    to `value` converted to the element type (for example `-inf` for masked
    logits).

    ```mlir
    %p = tessel.pad %x, low = [0, 1], high = [0, 3], value = 0.0
        : (tensor<4x8xf32>) -> tensor<4x12xf32>
    ```

    Constraints:
      * `low` and `high` have one entry per dimension;
      * no padding amount is negative;
      * the result type is the padded operand type.
  }];
  let arguments = (ins Tessel_Tensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, F64Attr:$value);
  let results = (outs Tessel_Tensor:$result);
  let assemblyFormat = [{
    $input `,` `low` `=` $low `,` `high` `=` $high `,` `value` `=` $value
    attr-dict `:` functional-type($input, $result)
  }];
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

def Tessel_DotGeneralOp : Tessel_Op<"dot_general", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure,
    InferTypeOpAdaptor]> {
  let summary = "Generalized matrix product";
  let description = [{
    Sums products over the contracting dimensions, pairing batch dimensions.
    The result's dimensions are: the batch dimensions (in `lhs_batch` order),
    then the remaining lhs dimensions, then the remaining rhs dimensions,
    each in operand order. A matmul `[m, k] x [k, n]` is
    `contracting = [1] x [0]`.

    ```mlir
    %y = tessel.dot_general %x, %w, batching = [] x [], contracting = [1] x [0]
        : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    // Batched: [b, s, d] x [b, d, t] -> [b, s, t]
    %z = tessel.dot_general %q, %k, batching = [0] x [0], contracting = [2] x [1]
        : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
    ```

    Constraints:
      * both operands have the same element type;
      * the two batching lists have equal length, and so do the two
        contracting lists;
      * every listed dimension exists in its operand and is listed once;
      * paired batching dimensions have equal sizes, and so do paired
        contracting dimensions;
      * the result type is the one the dimensions imply.
  }];
  let arguments = (ins Tessel_NumericTensor:$lhs, Tessel_NumericTensor:$rhs,
                       DenseI64ArrayAttr:$lhs_batching_dims,
                       DenseI64ArrayAttr:$rhs_batching_dims,
                       DenseI64ArrayAttr:$lhs_contracting_dims,
                       DenseI64ArrayAttr:$rhs_contracting_dims);
  let results = (outs Tessel_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` `batching` `=` $lhs_batching_dims `x` $rhs_batching_dims
    `,` `contracting` `=` $lhs_contracting_dims `x` $rhs_contracting_dims
    attr-dict `:` functional-type(operands, $result)
  }];
}

def Tessel_ReduceOp : Tessel_Op<"reduce", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, InferTypeOpAdaptor]> {
  let summary = "Reduces over a set of dimensions";
  let description = [{
    Sums (`sum`), takes the maximum or minimum, or averages (`mean`) over
    `dims`, which are removed from the shape. A reduction over no elements
    gives the identity: 0, -inf, +inf (integer: the type's min and max),
    NaN for mean.

    ```mlir
    %s = tessel.reduce sum %x, dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
    ```

    Constraints:
      * `dims` is not empty, strictly increasing, and within the rank;
      * `mean` needs a floating-point operand;
      * the result type is the operand type without `dims`.
  }];
  let arguments = (ins Tessel_ReduceKind:$kind, Tessel_NumericTensor:$input,
                       DenseI64ArrayAttr:$dims);
  let results = (outs Tessel_NumericTensor:$result);
  let assemblyFormat = [{
    $kind $input `,` `dims` `=` $dims attr-dict `:`
    functional-type($input, $result)
  }];
}

def Tessel_CumsumOp : Tessel_Op<"cumsum", [DeclareOpInterfaceMethods<Tessel_VjpOpInterface, ["buildVjp"]>, DeclareOpInterfaceMethods<Tessel_ShardingRuleOpInterface, ["getShardingRule"]>, Pure, SameOperandsAndResultType,
    InferTypeOpInterface]> {
  let summary = "Inclusive running sum along one dimension";
  let description = [{
    `result[..., i, ...] = sum_{j <= i} x[..., j, ...]` along `dim`.

    ```mlir
    %c = tessel.cumsum %x, dim = 1 : tensor<4x8xi32>
    ```

    Constraints:
      * `dim` is a dimension of the operand.
  }];
  let arguments = (ins Tessel_NumericTensor:$input, I64Attr:$dim);
  let results = (outs Tessel_NumericTensor:$result);
  let assemblyFormat = "$input `,` `dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

include "tessel/dialects/tessel/TesselNNOps.td"
include "tessel/dialects/tessel/TesselCollectiveOps.td"
include "tessel/dialects/tessel/TesselCustomCallOps.td"

#endif // TESSEL_DIALECTS_TESSEL_TESSELOPS_TD
