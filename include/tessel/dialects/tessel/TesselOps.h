//===- TesselOps.h - tessel operations --------------------------*- C++ -*-===//

#ifndef TESSEL_DIALECTS_TESSEL_TESSELOPS_H
#define TESSEL_DIALECTS_TESSEL_TESSELOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/sharding/Traffic.h"

namespace mlir::tessel {
/// The rule of an elementwise op: every dimension is one pass-through factor
/// shared by every operand and result of the same rank.
OpShardingRuleAttr elementwiseShardingRule(Operation *op);

/// Bytes of a collective's larger side (first operand or first result; 0
/// for neither), the base CollectiveOpInterface counts traffic from.
int64_t collectiveTrafficBytes(Operation *op);
} // namespace mlir::tessel

#include "tessel/dialects/tessel/TesselInterfaces.h.inc"

namespace mlir::tessel {
/// Checks that a static tensor type's element count and byte size fit in
/// int64; otherwise reports through `emitError` naming `what`.
LogicalResult verifyTensorSize(Type type,
                               function_ref<InFlightDiagnostic()> emitError,
                               StringRef what);

/// Op trait: every operand and result tensor passes verifyTensorSize.
template <typename ConcreteType>
class TensorSizesFit : public OpTrait::TraitBase<ConcreteType, TensorSizesFit> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
      if (failed(verifyTensorSize(
              t, [&] { return op->emitOpError(); },
              "operand #" + std::to_string(i))))
        return failure();
    for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
      if (failed(verifyTensorSize(
              t, [&] { return op->emitOpError(); },
              "result #" + std::to_string(i))))
        return failure();
    return success();
  }
};
} // namespace mlir::tessel

#define GET_OP_CLASSES
#include "tessel/dialects/tessel/TesselOps.h.inc"

namespace mlir::tessel {

/// Finds the `tessel.mesh` named `mesh` from `from`'s nearest symbol table.
/// Returns null (without a diagnostic) when there is none.
MeshOp lookupMesh(Operation *from, FlatSymbolRefAttr mesh);

/// Checks that `sharding` can describe a value of type `type` on its mesh,
/// as seen from `from`: the mesh exists, every axis is a mesh axis and the
/// rank matches. `what` names the value in messages ("argument #2").
LogicalResult verifyShardingFor(ShardingAttr sharding, Type type,
                                Operation *from,
                                function_ref<InFlightDiagnostic()> emitError,
                                StringRef what);

/// A splat `tessel.constant` of `type` holding `value`: rounded to nearest
/// even for floats; for integers truncated toward zero and saturated to the
/// type's range (so ±inf, the identity of max and min, becomes its lowest
/// and highest value; i1 is 0 or 1; NaN is 0).
Value createSplat(OpBuilder &builder, Location loc, RankedTensorType type,
                  double value);

/// "file:line:col" of `loc` (or "unknown location"), for messages that are
/// not diagnostics (reports, explanations).
std::string locationString(Location loc);

/// The number of rows an integer value indexes where it is used as gather or
/// scatter indices, cross-entropy labels or one_hot input (the smallest over
/// its uses), or -1 if it indexes nothing. `globalType` maps a value to its
/// global type (for per-device programs); by default, its own type.
int64_t indexedRange(
    Value value,
    function_ref<RankedTensorType(Value)> globalType = nullptr);

} // namespace mlir::tessel

#endif // TESSEL_DIALECTS_TESSEL_TESSELOPS_H
