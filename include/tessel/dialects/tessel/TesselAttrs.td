//===- TesselAttrs.td - tessel attributes and enums --------*- tablegen -*-===//

#ifndef TESSEL_DIALECTS_TESSEL_TESSELATTRS_TD
#define TESSEL_DIALECTS_TESSEL_TESSELATTRS_TD

include "tessel/dialects/tessel/TesselBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tessel_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison direction", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::tessel";
}

def Tessel_ReduceKind : I32EnumAttr<"ReduceKind", "reduction over dimensions", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"mean", 3>]> {
  let cppNamespace = "::mlir::tessel";
}

def Tessel_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "reduction applied by a collective", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>]> {
  let cppNamespace = "::mlir::tessel";
}

def Tessel_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formula", [
      I32EnumAttrCase<"erf", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::tessel";
}

def Tessel_LossReduction : I32EnumAttr<"LossReduction",
    "how per-position losses are combined", [
      I32EnumAttrCase<"mean", 0>, I32EnumAttrCase<"sum", 1>,
      I32EnumAttrCase<"none", 2>]> {
  let cppNamespace = "::mlir::tessel";
}

//===----------------------------------------------------------------------===//
// Sharding
//===----------------------------------------------------------------------===//

def Tessel_DimShardingAttr : Tessel_Attr<"DimSharding", "dim"> {
  let summary = "How one tensor dimension is split over mesh axes";
  let description = [{
    An ordered list of mesh axes (major to minor) that split one dimension,
    whether propagation may add further axes to it (`?`: open), and an
    optional priority (`p0` is the strongest). Printed inside a
    `#tessel.sharding` as `{"dp", "tp", ?}p1`.

    Constraints:
      * the priority is not negative.
  }];
  let parameters = (ins
    OptionalArrayRefParameter<"::mlir::StringAttr">:$axes,
    "bool":$isOpen,
    OptionalParameter<"std::optional<int64_t>">:$priority);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isClosed() const { return !getIsOpen(); }
    /// Prints without the `#tessel.dim<...>` wrapper: `{"a", ?}p0`.
    void printBody(::mlir::AsmPrinter &printer) const;
    /// Parses the form printed by printBody.
    static DimShardingAttr parseBody(::mlir::AsmParser &parser);
  }];
}

def Tessel_ShardingAttr : Tessel_Attr<"Sharding", "sharding"> {
  let summary = "How a tensor is laid out on a device mesh";
  let description = [{
    Names a `tessel.mesh` and, for each tensor dimension, the mesh axes that
    split it. Axes the sharding does not name replicate the tensor. A
    dimension split over axes `{"a", "b"}` is cut into size(a)*size(b)
    blocks; the block of a device is its row-major index over (a, b).

    ```mlir
    // Rows split over "dp"; columns split over "tp" and open for
    // propagation; priority p1 on the columns.
    #tessel.sharding<@mesh, [{"dp"}, {"tp", ?}p1]>
    ```

    A replicated dimension is written `{}` (closed) or `{?}` (open).

    Constraints:
      * no mesh axis appears twice in one sharding;
      * where it is used, the mesh exists and has every named axis, and the
        sharding has one entry per dimension of its tensor.
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    OptionalArrayRefParameter<"::mlir::tessel::DimShardingAttr">:$dims);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getDims().size(); }
    /// Prints `<@mesh, [...]>` without the attribute's name (used by ops
    /// whose format embeds a sharding).
    bool isFullyReplicated() const;
  }];
}

//===----------------------------------------------------------------------===//
// Sharding rules
//===----------------------------------------------------------------------===//

def Tessel_DimMappingAttr : Tessel_Attr<"DimMapping", "dim_mapping"> {
  let summary = "The factors one tensor dimension is made of, major to minor";
  let parameters = (ins OptionalArrayRefParameter<"int64_t">:$factors);
  let assemblyFormat = "`<` `[` (`]`) : ($factors^ `]`)? `>`";
}

def Tessel_TensorMappingAttr : Tessel_Attr<"TensorMapping", "tensor_mapping"> {
  let summary = "The factors of each dimension of one tensor";
  let parameters = (ins
    OptionalArrayRefParameter<"::mlir::tessel::DimMappingAttr">:$dims);
  let assemblyFormat = "`<` `[` (`]`) : ($dims^ `]`)? `>`";
}

def Tessel_OpShardingRuleAttr : Tessel_Attr<"OpShardingRule", "rule"> {
  let summary = "An op's sharding rule: factors and their kinds";
  let description = [{
    Every dimension of every operand and result is a product of factors
    (usually one). A factor shared by operands and results passes a sharding
    through; a *reduction* factor appears only in operands, and sharding it
    leaves the result partial (a sum still to be reduced); a
    *need_replication* factor must not be sharded (the op needs all of it on
    each device); a *permutation* factor may be sharded but moving data
    across it (pad, slice, concatenate) needs communication.

    ```mlir
    // matmul [i, k] x [k, j] -> [i, j] with k summed over
    #tessel.rule<([i, k], [k, j]) -> ([i, j]) {i=4, j=16, k=8} reduction={k}>
    // reshape [8] -> [2, 4]: one dimension made of two factors
    #tessel.rule<([ij]) -> ([i, j]) {i=2, j=4}>
    ```

    Constraints:
      * every factor index is below the number of factors;
      * each dimension's size is the product of its factors' sizes.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$factorSizes,
    OptionalArrayRefParameter<"::mlir::tessel::TensorMappingAttr">:$operands,
    OptionalArrayRefParameter<"::mlir::tessel::TensorMappingAttr">:$results,
    OptionalArrayRefParameter<"int64_t">:$reductionFactors,
    OptionalArrayRefParameter<"int64_t">:$needReplicationFactors,
    OptionalArrayRefParameter<"int64_t">:$permutationFactors);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumFactors() const { return getFactorSizes().size(); }
    bool isReduction(int64_t f) const {
      return llvm::is_contained(getReductionFactors(), f);
    }
    bool isNeedReplication(int64_t f) const {
      return llvm::is_contained(getNeedReplicationFactors(), f);
    }
    bool isPermutation(int64_t f) const {
      return llvm::is_contained(getPermutationFactors(), f);
    }
    bool isPassThrough(int64_t f) const {
      return !isReduction(f) && !isNeedReplication(f) && !isPermutation(f);
    }
    /// True if every factor is a pass-through factor present in every
    /// operand and result (elementwise-like ops, propagated first).
    bool isPointwise() const;
  }];
}

#endif // TESSEL_DIALECTS_TESSEL_TESSELATTRS_TD
