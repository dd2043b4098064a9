//===- ShapeInference.cpp - result shapes of tessel ops -------------------===//

#include "tessel/dialects/tessel/ShapeInference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir::tessel;
using llvm::ArrayRef;
using llvm::formatv;

namespace {
template <typename... Ts>
llvm::Error fail(const char *fmt, Ts &&...args) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      formatv(fmt, std::forward<Ts>(args)...).str());
}

std::string list(ArrayRef<int64_t> values) {
  std::string out = "[";
  for (auto [i, v] : llvm::enumerate(values))
    out += (i ? ", " : "") + std::to_string(v);
  return out + "]";
}

/// Checks that `dims` are distinct dimensions of a rank-`rank` operand.
llvm::Error checkDimList(llvm::StringRef what, ArrayRef<int64_t> dims,
                         int64_t rank) {
  llvm::SmallBitVector seen(rank);
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank)
      return fail("{0} {1} lists dimension {2}, but the operand has rank {3}",
                  what, list(dims), dim, rank);
    if (seen.test(dim))
      return fail("{0} {1} lists dimension {2} twice", what, list(dims), dim);
    seen.set(dim);
  }
  return llvm::Error::success();
}
} // namespace

int64_t shape::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && n > INT64_MAX / d))
      return -1;
    n *= d;
  }
  return n;
}

llvm::Error shape::checkDim(llvm::StringRef what, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return fail("{0} {1} is not a dimension of a rank-{2} tensor", what,
                dim, rank);
  return llvm::Error::success();
}

llvm::Expected<shape::Shape> shape::transpose(ArrayRef<int64_t> input,
                                              ArrayRef<int64_t> permutation) {
  int64_t rank = input.size();
  if (static_cast<int64_t>(permutation.size()) != rank)
    return fail("permutation {0} has {1} entries for a rank-{2} operand",
                list(permutation), permutation.size(), rank);
  if (llvm::Error err = checkDimList("permutation", permutation, rank))
    return std::move(err);
  Shape result;
  for (int64_t p : permutation)
    result.push_back(input[p]);
  return result;
}

llvm::Expected<shape::Shape> shape::slice(ArrayRef<int64_t> input,
                                          ArrayRef<int64_t> start,
                                          ArrayRef<int64_t> limit,
                                          ArrayRef<int64_t> strides) {
  size_t rank = input.size();
  if (start.size() != rank || limit.size() != rank || strides.size() != rank)
    return fail("start, limit and strides need {0} entries each (the "
                "operand's rank), got {1}, {2} and {3}",
                rank, start.size(), limit.size(), strides.size());
  Shape result;
  for (size_t d = 0; d < rank; ++d) {
    if (strides[d] < 1)
      return fail("stride {0} of dimension {1} must be at least 1",
                  strides[d], d);
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > input[d])
      return fail("dimension {0} (size {1}) cannot be sliced from {2} to {3}; "
                  "need 0 <= start <= limit <= size",
                  d, input[d], start[d], limit[d]);
    result.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
  }
  return result;
}

llvm::Expected<shape::Shape>
shape::concatenate(ArrayRef<ArrayRef<int64_t>> inputs, int64_t dim) {
  if (inputs.empty())
    return fail("needs at least one operand");
  int64_t rank = inputs.front().size();
  if (llvm::Error err = checkDim("dim", dim, rank))
    return std::move(err);
  Shape result(inputs.front());
  for (auto [i, input] : llvm::enumerate(inputs.drop_front())) {
    if (static_cast<int64_t>(input.size()) != rank)
      return fail("operand #{0} has rank {1} but operand #0 has rank {2}",
                  i + 1, input.size(), rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (d == dim) {
        result[d] += input[d];
        continue;
      }
      if (input[d] != result[d])
        return fail("operand #{0} has size {1} in dimension {2} but operand "
                    "#0 has {3}; only dimension {4} may differ",
                    i + 1, input[d], d, result[d], dim);
    }
  }
  return result;
}

llvm::Expected<shape::Shape> shape::pad(ArrayRef<int64_t> input,
                                        ArrayRef<int64_t> low,
                                        ArrayRef<int64_t> high) {
  size_t rank = input.size();
  if (low.size() != rank || high.size() != rank)
    return fail("low and high need {0} entries each (the operand's rank), "
                "got {1} and {2}",
                rank, low.size(), high.size());
  Shape result;
  for (size_t d = 0; d < rank; ++d) {
    if (low[d] < 0 || high[d] < 0)
      return fail("padding of dimension {0} is negative ({1} low, {2} high); "
                  "use tessel.slice to remove elements",
                  d, low[d], high[d]);
    result.push_back(input[d] + low[d] + high[d]);
  }
  return result;
}

llvm::Expected<shape::Shape>
shape::dotGeneral(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                  ArrayRef<int64_t> lhsBatching, ArrayRef<int64_t> rhsBatching,
                  ArrayRef<int64_t> lhsContracting,
                  ArrayRef<int64_t> rhsContracting) {
  if (lhsBatching.size() != rhsBatching.size())
    return fail("batching dimensions {0} x {1} differ in length",
                list(lhsBatching), list(rhsBatching));
  if (lhsContracting.size() != rhsContracting.size())
    return fail("contracting dimensions {0} x {1} differ in length",
                list(lhsContracting), list(rhsContracting));
  llvm::SmallVector<int64_t> lhsUsed(lhsBatching), rhsUsed(rhsBatching);
  llvm::append_range(lhsUsed, lhsContracting);
  llvm::append_range(rhsUsed, rhsContracting);
  if (llvm::Error err = checkDimList("lhs batching + contracting dimensions",
                                     lhsUsed, lhs.size()))
    return std::move(err);
  if (llvm::Error err = checkDimList("rhs batching + contracting dimensions",
                                     rhsUsed, rhs.size()))
    return std::move(err);
  for (auto [l, r] : llvm::zip(lhsBatching, rhsBatching))
    if (lhs[l] != rhs[r])
      return fail("batching dimension {0} of lhs (size {1}) and {2} of rhs "
                  "(size {3}) differ",
                  l, lhs[l], r, rhs[r]);
  for (auto [l, r] : llvm::zip(lhsContracting, rhsContracting))
    if (lhs[l] != rhs[r])
      return fail("contracting dimension {0} of lhs (size {1}) and {2} of rhs "
                  "(size {3}) differ",
                  l, lhs[l], r, rhs[r]);
  Shape result;
  for (int64_t l : lhsBatching)
    result.push_back(lhs[l]);
  for (int64_t d = 0, e = lhs.size(); d < e; ++d)
    if (!llvm::is_contained(lhsUsed, d))
      result.push_back(lhs[d]);
  for (int64_t d = 0, e = rhs.size(); d < e; ++d)
    if (!llvm::is_contained(rhsUsed, d))
      result.push_back(rhs[d]);
  return result;
}

llvm::Expected<shape::Shape> shape::reduce(ArrayRef<int64_t> input,
                                           ArrayRef<int64_t> dims) {
  if (dims.empty())
    return fail("dims must not be empty");
  if (llvm::Error err = checkDimList("dims", dims, input.size()))
    return std::move(err);
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] <= dims[i - 1])
      return fail("dims {0} must be strictly increasing", list(dims));
  Shape result;
  for (int64_t d = 0, e = input.size(); d < e; ++d)
    if (!llvm::is_contained(dims, d))
      result.push_back(input[d]);
  return result;
}

llvm::Expected<shape::Shape> shape::gather(ArrayRef<int64_t> table,
                                           ArrayRef<int64_t> indices,
                                           int64_t axis) {
  if (llvm::Error err = checkDim("axis", axis, table.size()))
    return std::move(err);
  Shape result(table.take_front(axis));
  llvm::append_range(result, indices);
  llvm::append_range(result, table.drop_front(axis + 1));
  return result;
}

llvm::Expected<shape::Shape> shape::topK(ArrayRef<int64_t> input, int64_t k) {
  if (input.empty())
    return fail("the operand must have rank at least 1");
  if (k < 1 || k > input.back())
    return fail("k = {0} must be between 1 and the last dimension ({1})", k,
                input.back());
  Shape result(input);
  result.back() = k;
  return result;
}

llvm::Error shape::checkBroadcastInDim(ArrayRef<int64_t> input,
                                       ArrayRef<int64_t> result,
                                       ArrayRef<int64_t> dims) {
  if (dims.size() != input.size())
    return fail("dims {0} has {1} entries but the operand has rank {2}",
                list(dims), dims.size(), input.size());
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= static_cast<int64_t>(result.size()))
      return fail("dims {0} maps operand dimension {1} to {2}, which is not a "
                  "dimension of the rank-{3} result",
                  list(dims), i, dim, result.size());
    if (i > 0 && dim <= dims[i - 1])
      return fail("dims {0} must be strictly increasing (use tessel.transpose "
                  "to reorder)",
                  list(dims));
    if (input[i] != 1 && input[i] != result[dim])
      return fail("operand dimension {0} (size {1}) cannot broadcast to result "
                  "dimension {2} (size {3}); sizes must match or be 1",
                  i, input[i], dim, result[dim]);
  }
  return llvm::Error::success();
}
