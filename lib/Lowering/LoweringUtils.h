//===- LoweringUtils.h - builders shared by the tessel lowerings -*- C++
//-*-===//
//
// Small builders over linalg.generic on tensors. Floats narrower than 32 bits
// are computed in f32 and rounded once when stored (as the interpreter rounds
// once per op); reductions accumulate in that compute type.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_LOWERING_LOWERINGUTILS_H
#define TESSEL_LIB_LOWERING_LOWERINGUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel::lowering {

using ScalarFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// The type of `op`'s first result.
inline RankedTensorType resultTensor(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType());
}

/// The type element-wise math on `elem` is computed in.
Type computeType(Type elem);
/// Converts a scalar between numeric types (float/int/i1, any widths).
Value castScalar(OpBuilder &b, Location loc, Value v, Type to);
/// A scalar constant of int or float type `type`.
Value scalarConst(OpBuilder &b, Location loc, Type type, double value);

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type);
/// A tensor of `type` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   double value);

/// A linalg.generic with all-parallel loops over `resultType`, reading
/// `inputs` through `maps`; `body` gets the input scalars and returns the
/// result scalar (of the result's element type).
Value parallelGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                      ValueRange inputs, ArrayRef<AffineMap> maps,
                      ScalarFn body);
/// parallelGeneric with identity maps (inputs shaped like the result).
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs, ScalarFn body);
/// Element-wise on float inputs: `body` sees them in the compute type and
/// returns a compute-type value, rounded to the result type.
Value floatElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarFn body);

/// The map from `rank` loops to all of them but `dims` (a reduced operand).
AffineMap dropDimsMap(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> dims);

/// Reduces `input` over `dims` with `combine(acc, x)`, starting from `init`,
/// into a tensor of `accType` elements shaped like `input` without `dims`.
/// `prepare` maps each input scalar (with the loop indices available through
/// linalg.index) before combining; null means the value itself cast to
/// `accType`.
Value reduceDims(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims,
    Type accType, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine,
    function_ref<Value(OpBuilder &, Location, Value)> prepare = nullptr);

/// A copy of `input` into a new tensor of `type`, reading it through `map`
/// (result loops -> input indices): broadcasts and transposes.
Value copyThroughMap(OpBuilder &b, Location loc, RankedTensorType type,
                     Value input, AffineMap map);
/// `v` permuted: result dimension i is input dimension perm[i] (no op for the
/// identity).
Value permuteTensor(OpBuilder &b, Location loc, Value v,
                    ArrayRef<int64_t> perm);

/// Reshapes `value` to `shape` (same element count) by collapsing and
/// expanding, which bufferization turns into views of the same buffer.
Value reshapeTensor(OpBuilder &b, Location loc, Value value,
                    ArrayRef<int64_t> shape);

/// Combiners.
Value addScalars(OpBuilder &b, Location loc, Value x, Value y);
Value maxScalars(OpBuilder &b, Location loc, Value x, Value y);
Value minScalars(OpBuilder &b, Location loc, Value x, Value y);

} // namespace mlir::tessel::lowering

#endif // TESSEL_LIB_LOWERING_LOWERINGUTILS_H
