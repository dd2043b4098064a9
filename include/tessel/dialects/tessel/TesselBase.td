//===- TesselBase.td - tessel dialect definition -----------*- tablegen -*-===//
//
// The tessel dialect: single-device tensor programs plus the mesh, sharding
// and collective vocabulary that Tessel's passes use to partition them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECTS_TESSEL_TESSELBASE_TD
#define TESSEL_DIALECTS_TESSEL_TESSELBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypes.td"

def Tessel_Dialect : Dialect {
  let name = "tessel";
  let cppNamespace = "::mlir::tessel";
  let summary = "Tensor programs with meshes, shardings and collectives";
  let description = [{
    A model is written once, for one device, with `tessel` ops on ranked
    tensors of static shape. A `tessel.mesh` names the devices; sharding
    attributes on function arguments, results and `tessel.sharding_constraint`
    say how tensors are laid out on it; collectives over mesh axes appear
    once a program is partitioned.

    Discardable attributes the dialect knows (anything else spelled
    `tessel.*` is an error):
      * `tessel.sharding`: a `#tessel.sharding` on a function argument or
        result, or on an op (one sharding, or an array of one per result).
      * `tessel.name`: a string naming a parameter (Hugging Face naming).
      * `tessel.logical_axes`: an array of strings, one logical axis name
        per tensor dimension (`""` for an untagged dimension).
      * `tessel.init`: how an argument is initialized when no value is given
        (`zeros`, `ones`, `constant:V`, `normal:STD`, `uniform:LO:HI`, `int:LO:HI`,
        `bernoulli:P`).
      * `tessel.spmd = @mesh` on a function: the function is a per-device
        program run by every device of the mesh; its arguments and results
        are local blocks of global tensors described by their
        `tessel.sharding` and, where padded, `tessel.global_type`.
      * `tessel.global_type`: the global type of a local argument or result.
      * `tessel.state_sharding`: on a parameter argument, the sharding its
        optimizer state and master copy take in a training step (ZeRO-1/2:
        state split over the data-parallel axis while compute keeps the
        parameter's own layout).
      * `tessel.layer = N` on an op: the model layer it belongs to (a
        recomputation region with `recompute=layers`).
      * `tessel.recompute = "group"` on an op: a region of ops the model
        marks for selective recomputation (`recompute=tagged`); the region
        is the ops of one layer with the same group name.
      * `tessel.stage = N` on an op: its pipeline stage; backward ops
        inherit it from their forward op.
      * `tessel.full_precision` (unit) on an op: it keeps computing in f32
        under mixed precision (`compute-type=bf16`), as a MoE router's
        logits and token positions must.
      * `tessel.role` on an op of a training step: `"forward"`,
        `"recompute"`, `"backward_input"` (cotangents flowing to earlier
        ops), `"backward_weight"` (parameter gradients only, deferrable as
        in zero-bubble schedules) or `"optimizer"`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    static constexpr llvm::StringLiteral kShardingAttrName = "tessel.sharding";
    static constexpr llvm::StringLiteral kNameAttrName = "tessel.name";
    static constexpr llvm::StringLiteral kLogicalAxesAttrName =
        "tessel.logical_axes";
    static constexpr llvm::StringLiteral kInitAttrName = "tessel.init";
    static constexpr llvm::StringLiteral kGlobalTypeAttrName =
        "tessel.global_type";
    static constexpr llvm::StringLiteral kSpmdAttrName = "tessel.spmd";
    static constexpr llvm::StringLiteral kStateShardingAttrName =
        "tessel.state_sharding";
    static constexpr llvm::StringLiteral kGradientShardingAttrName =
        "tessel.gradient_sharding";
    static constexpr llvm::StringLiteral kLayerAttrName = "tessel.layer";
    static constexpr llvm::StringLiteral kRecomputeAttrName =
        "tessel.recompute";
    static constexpr llvm::StringLiteral kStageAttrName = "tessel.stage";
    static constexpr llvm::StringLiteral kFullPrecisionAttrName =
        "tessel.full_precision";
    static constexpr llvm::StringLiteral kRoleAttrName = "tessel.role";
    static constexpr llvm::StringLiteral kRuntimeRoleAttrName =
        "tessel.runtime_role";
  private:
    void registerAttributes();
  public:
  }];
}

class Tessel_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tessel_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// Every tensor an op touches has an element count and a byte size that fit
// in int64 (sizes are multiplied everywhere: interpreter, layouts, memory
// report, runtime buffers).
def Tessel_TensorSizesFit : NativeOpTrait<"TensorSizesFit"> {
  let cppNamespace = "::mlir::tessel";
}

class Tessel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tessel_Dialect, mnemonic, !listconcat(traits, [Tessel_TensorSizesFit])>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Tessel_FloatElt : AnyTypeOf<[F16, BF16, F32, F64]>;
def Tessel_IntElt : AnyTypeOf<[I32, I64]>;

class Tessel_StaticTensorOf<list<Type> elts>
    : Type<And<[TensorOf<elts>.predicate,
                          HasStaticShapePred]>,
                     "statically shaped tensor of " #
                     AnyTypeOf<elts>.summary # " values",
                     "::mlir::RankedTensorType">;

def Tessel_Tensor : Tessel_StaticTensorOf<[F16, BF16, F32, F64, I1, I32, I64]>;
def Tessel_FloatTensor : Tessel_StaticTensorOf<[F16, BF16, F32, F64]>;
def Tessel_NumericTensor : Tessel_StaticTensorOf<[F16, BF16, F32, F64, I32, I64]>;
def Tessel_IntTensor : Tessel_StaticTensorOf<[I32, I64]>;
def Tessel_PredTensor : Tessel_StaticTensorOf<[I1]>;
def Tessel_ScalarIntTensor : Type<And<[
    Tessel_IntTensor.predicate,
    CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0">]>,
    "0-d tensor of 32/64-bit signless integer", "::mlir::RankedTensorType">;

#endif // TESSEL_DIALECTS_TESSEL_TESSELBASE_TD
