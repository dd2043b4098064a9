//===- RuntimeCalls.h - calls from compiled code into libtessel_rt -*- C++ -*-===//
//
// Shared by the target lowerings (RuntimeCalls.cpp) and the step that splits
// collectives into a start and a wait (SplitCollectives.cpp,
// mlir::tessel::splitCollectives).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_LOWERING_RUNTIMECALLS_H
#define TESSEL_LIB_LOWERING_RUNTIMECALLS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel::lowering {

/// What a runtime call wrapper is made of (the callee, the wrapper's type,
/// constants and scalars): wrappers with equal keys are one function, so a
/// program of many layers has as many wrappers as distinct calls. The key
/// is a tessel attribute, which the end of tessel-lower-to-linalg drops.
constexpr llvm::StringLiteral kRuntimeCallKey = "tessel.runtime_call";

/// result = runtime `name`(input buffers..., result buffer, constant
/// buffers..., i64 scalars...), made through a private wrapper function of
/// tensors. One-shot bufferization sees the call to the wrapper as reading
/// its operands and returning a fresh tensor, which is exactly what the
/// runtime call does; the buffer casts stay inside the wrapper, where no
/// pass can merge or move them away from the call. Without a `resultType`
/// the call has no result buffer and returns nothing (a send). With
/// `resultIsLastInput` the runtime gets no result buffer and the wrapper
/// returns its last input as it is (bufferization: the same buffer), so
/// that the result's users depend on the call (a collective's wait).
Value callRuntime(OpBuilder &b, Operation *anchor, StringRef name,
                  ValueRange inputs, RankedTensorType resultType,
                  ArrayRef<DenseElementsAttr> constants,
                  ArrayRef<int64_t> scalars, bool resultIsLastInput = false);

} // namespace mlir::tessel::lowering

#endif // TESSEL_LIB_LOWERING_RUNTIMECALLS_H
