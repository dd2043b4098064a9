//===- Kernels.h - reference semantics of tessel ops ------------*- C++ -*-===//
//
// One function per op family, on host tensors, written for clarity. Float
// results are computed in double and rounded to the result's element type
// once per op (reductions and contractions accumulate in double); integer
// results wrap to their width. The op descriptions in TesselOps.td are the
// specification; these functions implement them literally.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_INTERPRETER_KERNELS_H
#define TESSEL_INTERPRETER_KERNELS_H

#include "tessel/support/HostTensor.h"

#include "llvm/Support/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace tessel::kernels {

enum class Reduction { Sum, Max, Min, Mean };

HostTensor iota(DType dtype, llvm::ArrayRef<int64_t> shape, int64_t dim);
HostTensor mapFloat(const HostTensor &x,
                    llvm::function_ref<double(double)> fn);
HostTensor mapInt(const HostTensor &x,
                  llvm::function_ref<int64_t(int64_t)> fn);
HostTensor zipFloat(const HostTensor &x, const HostTensor &y,
                    llvm::function_ref<double(double, double)> fn);
HostTensor zipInt(const HostTensor &x, const HostTensor &y,
                  llvm::function_ref<int64_t(int64_t, int64_t)> fn);
HostTensor compare(const HostTensor &x, const HostTensor &y,
                   llvm::function_ref<bool(double, double)> fnFloat,
                   llvm::function_ref<bool(int64_t, int64_t)> fnInt);
HostTensor select(const HostTensor &pred, const HostTensor &a,
                  const HostTensor &b);
HostTensor convert(const HostTensor &x, DType to);

HostTensor broadcastInDim(const HostTensor &x, llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<int64_t> dims);
HostTensor reshape(const HostTensor &x, llvm::ArrayRef<int64_t> shape);
HostTensor transpose(const HostTensor &x, llvm::ArrayRef<int64_t> perm);
HostTensor slice(const HostTensor &x, llvm::ArrayRef<int64_t> start,
                 llvm::ArrayRef<int64_t> limit,
                 llvm::ArrayRef<int64_t> strides);
HostTensor concatenate(llvm::ArrayRef<const HostTensor *> xs, int64_t dim);
HostTensor pad(const HostTensor &x, llvm::ArrayRef<int64_t> low,
               llvm::ArrayRef<int64_t> high, double value);

HostTensor dotGeneral(const HostTensor &lhs, const HostTensor &rhs,
                      llvm::ArrayRef<int64_t> lhsBatch,
                      llvm::ArrayRef<int64_t> rhsBatch,
                      llvm::ArrayRef<int64_t> lhsContract,
                      llvm::ArrayRef<int64_t> rhsContract);
HostTensor reduce(const HostTensor &x, llvm::ArrayRef<int64_t> dims,
                  Reduction kind);
HostTensor cumsum(const HostTensor &x, int64_t dim);

HostTensor softmax(const HostTensor &x, int64_t dim);
HostTensor layerNorm(const HostTensor &x, const HostTensor &scale,
                     const HostTensor *bias, double epsilon);
HostTensor rmsNorm(const HostTensor &x, const HostTensor &scale,
                   double epsilon);
HostTensor gather(const HostTensor &table, const HostTensor &indices,
                  int64_t axis);
HostTensor scatterAdd(const HostTensor &base, const HostTensor &indices,
                      const HostTensor &updates, int64_t axis);
HostTensor oneHot(const HostTensor &indices, DType dtype, int64_t depth);
/// Returns {values, indices (i32)}.
std::pair<HostTensor, HostTensor> topK(const HostTensor &x, int64_t k);
/// The block of `shape` at `offsets` of the mask of `globalShape` (both
/// empty: the whole mask of `shape`).
HostTensor dropoutMask(int64_t seed, DType dtype,
                       llvm::ArrayRef<int64_t> shape, double rate,
                       llvm::ArrayRef<int64_t> offsets = {},
                       llvm::ArrayRef<int64_t> globalShape = {});
/// `reduction`: 0 mean, 1 sum, 2 none.
HostTensor softmaxCrossEntropy(const HostTensor &logits,
                               const HostTensor &labels, int64_t ignoreIndex,
                               int reduction);

/// Elementwise reduction of same-shaped tensors, in order.
HostTensor reduceAll(llvm::ArrayRef<const HostTensor *> xs, Reduction kind);

/// tessel.custom_call: the kernel `name` of the libraries loaded with
/// --custom-calls (tessel/support/CustomCalls.h) on `inputs`, giving
/// results of `outputs`' element types and shapes.
llvm::Expected<std::vector<HostTensor>>
customCall(llvm::StringRef name, llvm::ArrayRef<const HostTensor *> inputs,
           llvm::ArrayRef<std::pair<DType, Shape>> outputs,
           llvm::StringRef config);

} // namespace tessel::kernels

#endif // TESSEL_INTERPRETER_KERNELS_H
