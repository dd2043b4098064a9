//===- ShapeInference.h - result shapes of tessel ops -----------*- C++ -*-===//
//
// Pure functions from operand shapes and attributes to result shapes. The
// ops' type inference and verifiers call them; so will the model builders and
// the partitioner (which re-infers local shapes). Errors name the offending
// operand and dimension; callers prefix the op name and attach a location.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECTS_TESSEL_SHAPEINFERENCE_H
#define TESSEL_DIALECTS_TESSEL_SHAPEINFERENCE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

namespace mlir::tessel::shape {

using Shape = llvm::SmallVector<int64_t, 4>;

llvm::Expected<Shape> transpose(llvm::ArrayRef<int64_t> input,
                                llvm::ArrayRef<int64_t> permutation);

llvm::Expected<Shape> slice(llvm::ArrayRef<int64_t> input,
                            llvm::ArrayRef<int64_t> start,
                            llvm::ArrayRef<int64_t> limit,
                            llvm::ArrayRef<int64_t> strides);

llvm::Expected<Shape> concatenate(llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputs,
                                  int64_t dim);

llvm::Expected<Shape> pad(llvm::ArrayRef<int64_t> input,
                          llvm::ArrayRef<int64_t> low,
                          llvm::ArrayRef<int64_t> high);

llvm::Expected<Shape> dotGeneral(llvm::ArrayRef<int64_t> lhs,
                                 llvm::ArrayRef<int64_t> rhs,
                                 llvm::ArrayRef<int64_t> lhsBatching,
                                 llvm::ArrayRef<int64_t> rhsBatching,
                                 llvm::ArrayRef<int64_t> lhsContracting,
                                 llvm::ArrayRef<int64_t> rhsContracting);

llvm::Expected<Shape> reduce(llvm::ArrayRef<int64_t> input,
                             llvm::ArrayRef<int64_t> dims);

/// Also the shape `tessel.scatter_add` requires of its updates.
llvm::Expected<Shape> gather(llvm::ArrayRef<int64_t> table,
                             llvm::ArrayRef<int64_t> indices, int64_t axis);

llvm::Expected<Shape> topK(llvm::ArrayRef<int64_t> input, int64_t k);

/// Checks a broadcast_in_dim from `input` to `result` through `dims`.
llvm::Error checkBroadcastInDim(llvm::ArrayRef<int64_t> input,
                                llvm::ArrayRef<int64_t> result,
                                llvm::ArrayRef<int64_t> dims);

/// Checks that `dim` is a dimension of a rank-`rank` tensor.
llvm::Error checkDim(llvm::StringRef what, int64_t dim, int64_t rank);

/// Number of elements of `shape`, or -1 on overflow.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

} // namespace mlir::tessel::shape

#endif // TESSEL_DIALECTS_TESSEL_SHAPEINFERENCE_H
