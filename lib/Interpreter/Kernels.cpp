//===- Kernels.cpp - reference semantics of tessel ops --------------------===//

#include "tessel/interpreter/Kernels.h"

#include "tessel/support/Random.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <numeric>

using namespace tessel;
using namespace tessel::kernels;
using llvm::ArrayRef;

namespace {
/// Decodes linear index `k` of `shape` into `idx`.
void unravel(int64_t k, ArrayRef<int64_t> shape, Shape &idx) {
  idx.resize(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] ? k % shape[d] : 0;
    k = shape[d] ? k / shape[d] : 0;
  }
}

int64_t ravel(ArrayRef<int64_t> idx, ArrayRef<int64_t> strides) {
  int64_t k = 0;
  for (size_t d = 0; d < idx.size(); ++d)
    k += idx[d] * strides[d];
  return k;
}

/// Copies element `from` of `src` to element `to` of `dst` (same dtype).
inline void copyElement(const HostTensor &src, int64_t from, HostTensor &dst,
                        int64_t to) {
  if (src.isFloat())
    dst.f[to] = src.f[from];
  else
    dst.i[to] = src.i[from];
}

double lowest(DType t) {
  if (isFloat(t))
    return -std::numeric_limits<double>::infinity();
  return t == DType::I32 ? double(std::numeric_limits<int32_t>::min())
                         : double(std::numeric_limits<int64_t>::min());
}

double highest(DType t) {
  if (isFloat(t))
    return std::numeric_limits<double>::infinity();
  return t == DType::I32 ? double(std::numeric_limits<int32_t>::max())
                         : double(std::numeric_limits<int64_t>::max());
}

/// Splits `shape` around `dim` into (outer, size, inner).
void around(ArrayRef<int64_t> shape, int64_t dim, int64_t &outer,
            int64_t &size, int64_t &inner) {
  outer = numElements(shape.take_front(dim));
  size = shape[dim];
  inner = numElements(shape.drop_front(dim + 1));
}
} // namespace

HostTensor kernels::iota(DType dtype, ArrayRef<int64_t> shape, int64_t dim) {
  HostTensor r(dtype, shape);
  Shape idx;
  for (int64_t k = 0, n = r.size(); k < n; ++k) {
    unravel(k, shape, idx);
    r.setI(k, idx[dim]);
  }
  return r;
}

HostTensor kernels::mapFloat(const HostTensor &x,
                             llvm::function_ref<double(double)> fn) {
  HostTensor r(x.dtype, x.shape);
  for (int64_t k = 0, n = x.size(); k < n; ++k)
    r.f[k] = roundToFloat(x.dtype, fn(x.f[k]));
  return r;
}

HostTensor kernels::mapInt(const HostTensor &x,
                           llvm::function_ref<int64_t(int64_t)> fn) {
  HostTensor r(x.dtype, x.shape);
  for (int64_t k = 0, n = x.size(); k < n; ++k)
    r.i[k] = wrapToInt(x.dtype, fn(x.i[k]));
  return r;
}

HostTensor kernels::zipFloat(const HostTensor &x, const HostTensor &y,
                             llvm::function_ref<double(double, double)> fn) {
  HostTensor r(x.dtype, x.shape);
  for (int64_t k = 0, n = x.size(); k < n; ++k)
    r.f[k] = roundToFloat(x.dtype, fn(x.f[k], y.f[k]));
  return r;
}

HostTensor kernels::zipInt(const HostTensor &x, const HostTensor &y,
                           llvm::function_ref<int64_t(int64_t, int64_t)> fn) {
  HostTensor r(x.dtype, x.shape);
  for (int64_t k = 0, n = x.size(); k < n; ++k)
    r.i[k] = wrapToInt(x.dtype, fn(x.i[k], y.i[k]));
  return r;
}

HostTensor kernels::compare(const HostTensor &x, const HostTensor &y,
                            llvm::function_ref<bool(double, double)> fnFloat,
                            llvm::function_ref<bool(int64_t, int64_t)> fnInt) {
  HostTensor r(DType::I1, x.shape);
  for (int64_t k = 0, n = x.size(); k < n; ++k)
    r.i[k] = x.isFloat() ? fnFloat(x.f[k], y.f[k]) : fnInt(x.i[k], y.i[k]);
  return r;
}

HostTensor kernels::select(const HostTensor &pred, const HostTensor &a,
                           const HostTensor &b) {
  HostTensor r(a.dtype, a.shape);
  for (int64_t k = 0, n = a.size(); k < n; ++k)
    copyElement(pred.i[k] ? a : b, k, r, k);
  return r;
}

HostTensor kernels::convert(const HostTensor &x, DType to) {
  HostTensor r(to, x.shape);
  for (int64_t k = 0, n = x.size(); k < n; ++k) {
    if (x.isFloat())
      r.setF(k, x.f[k]); // round once, or truncate and saturate
    else
      r.setI(k, x.i[k]); // wrap, or round once to nearest even
  }
  return r;
}

HostTensor kernels::broadcastInDim(const HostTensor &x,
                                   ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> dims) {
  HostTensor r(x.dtype, shape);
  Shape xStrides = stridesOf(x.shape), idx;
  for (int64_t k = 0, n = r.size(); k < n; ++k) {
    unravel(k, shape, idx);
    int64_t from = 0;
    for (size_t d = 0; d < dims.size(); ++d)
      from += (x.shape[d] == 1 ? 0 : idx[dims[d]]) * xStrides[d];
    copyElement(x, from, r, k);
  }
  return r;
}

HostTensor kernels::reshape(const HostTensor &x, ArrayRef<int64_t> shape) {
  HostTensor r = x;
  r.shape.assign(shape.begin(), shape.end());
  return r;
}

HostTensor kernels::transpose(const HostTensor &x, ArrayRef<int64_t> perm) {
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(x.shape[p]);
  HostTensor r(x.dtype, shape);
  Shape xStrides = stridesOf(x.shape), idx;
  for (int64_t k = 0, n = r.size(); k < n; ++k) {
    unravel(k, shape, idx);
    int64_t from = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      from += idx[d] * xStrides[perm[d]];
    copyElement(x, from, r, k);
  }
  return r;
}

HostTensor kernels::slice(const HostTensor &x, ArrayRef<int64_t> start,
                          ArrayRef<int64_t> limit, ArrayRef<int64_t> strides) {
  Shape shape;
  for (size_t d = 0; d < start.size(); ++d)
    shape.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
  HostTensor r(x.dtype, shape);
  Shape xStrides = stridesOf(x.shape), idx;
  for (int64_t k = 0, n = r.size(); k < n; ++k) {
    unravel(k, shape, idx);
    int64_t from = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      from += (start[d] + idx[d] * strides[d]) * xStrides[d];
    copyElement(x, from, r, k);
  }
  return r;
}

HostTensor kernels::concatenate(ArrayRef<const HostTensor *> xs, int64_t dim) {
  Shape shape = xs.front()->shape;
  shape[dim] = 0;
  for (const HostTensor *x : xs)
    shape[dim] += x->shape[dim];
  HostTensor r(xs.front()->dtype, shape);
  Shape rStrides = stridesOf(shape), idx;
  int64_t offset = 0;
  for (const HostTensor *x : xs) {
    for (int64_t k = 0, n = x->size(); k < n; ++k) {
      unravel(k, x->shape, idx);
      idx[dim] += offset;
      copyElement(*x, k, r, ravel(idx, rStrides));
    }
    offset += x->shape[dim];
  }
  return r;
}

HostTensor kernels::pad(const HostTensor &x, ArrayRef<int64_t> low,
                        ArrayRef<int64_t> high, double value) {
  Shape shape;
  for (size_t d = 0; d < x.shape.size(); ++d)
    shape.push_back(x.shape[d] + low[d] + high[d]);
  HostTensor r(x.dtype, shape);
  for (int64_t k = 0, n = r.size(); k < n; ++k)
    r.setF(k, value);
  Shape rStrides = stridesOf(shape), idx;
  for (int64_t k = 0, n = x.size(); k < n; ++k) {
    unravel(k, x.shape, idx);
    for (size_t d = 0; d < idx.size(); ++d)
      idx[d] += low[d];
    copyElement(x, k, r, ravel(idx, rStrides));
  }
  return r;
}

HostTensor kernels::dotGeneral(const HostTensor &lhs, const HostTensor &rhs,
                               ArrayRef<int64_t> lhsBatch,
                               ArrayRef<int64_t> rhsBatch,
                               ArrayRef<int64_t> lhsContract,
                               ArrayRef<int64_t> rhsContract) {
  // Permute lhs to [batch, free, contract] and rhs to [batch, contract, free],
  // then multiply as B x (M x K) x (K x N).
  auto freeDims = [](int64_t rank, ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
    Shape free;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(a, d) && !llvm::is_contained(b, d))
        free.push_back(d);
    return free;
  };
  Shape lhsFree = freeDims(lhs.rank(), lhsBatch, lhsContract);
  Shape rhsFree = freeDims(rhs.rank(), rhsBatch, rhsContract);
  Shape lhsPerm(lhsBatch), rhsPerm(rhsBatch);
  llvm::append_range(lhsPerm, lhsFree);
  llvm::append_range(lhsPerm, lhsContract);
  llvm::append_range(rhsPerm, rhsContract);
  llvm::append_range(rhsPerm, rhsFree);
  HostTensor a = transpose(lhs, lhsPerm), b = transpose(rhs, rhsPerm);
  auto product = [](const HostTensor &t, ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= t.shape[d];
    return n;
  };
  int64_t B = product(lhs, lhsBatch), M = product(lhs, lhsFree),
          K = product(lhs, lhsContract), N = product(rhs, rhsFree);
  Shape shape;
  for (int64_t d : lhsBatch)
    shape.push_back(lhs.shape[d]);
  for (int64_t d : lhsFree)
    shape.push_back(lhs.shape[d]);
  for (int64_t d : rhsFree)
    shape.push_back(rhs.shape[d]);
  HostTensor r(lhs.dtype, shape);
  std::vector<double> av(a.size()), bv(b.size()), acc(N);
  for (int64_t k = 0; k < a.size(); ++k)
    av[k] = a.getF(k);
  for (int64_t k = 0; k < b.size(); ++k)
    bv[k] = b.getF(k);
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t m = 0; m < M; ++m) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const double *arow = &av[(bi * M + m) * K];
      for (int64_t kk = 0; kk < K; ++kk) {
        double aval = arow[kk];
        const double *brow = &bv[(bi * K + kk) * N];
        for (int64_t n = 0; n < N; ++n)
          acc[n] += aval * brow[n];
      }
      if (r.isFloat())
        for (int64_t n = 0; n < N; ++n)
          r.f[(bi * M + m) * N + n] = roundToFloat(r.dtype, acc[n]);
    }
  // Integer products must be exact: redo them in int64 when K is non-trivial.
  if (!r.isFloat()) {
    for (int64_t bi = 0; bi < B; ++bi)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          int64_t sum = 0;
          for (int64_t kk = 0; kk < K; ++kk)
            sum += a.i[(bi * M + m) * K + kk] * b.i[(bi * K + kk) * N + n];
          r.i[(bi * M + m) * N + n] = wrapToInt(r.dtype, sum);
        }
  }
  return r;
}

HostTensor kernels::reduce(const HostTensor &x, ArrayRef<int64_t> dims,
                           Reduction kind) {
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!llvm::is_contained(dims, d))
      shape.push_back(x.shape[d]);
  HostTensor r(x.dtype, shape);
  int64_t n = r.size();
  double init = kind == Reduction::Max   ? lowest(x.dtype)
                : kind == Reduction::Min ? highest(x.dtype)
                                         : 0.0;
  std::vector<double> acc(n, init);
  int64_t intMin = x.dtype == DType::I32 ? INT32_MIN : INT64_MIN;
  int64_t intMax = x.dtype == DType::I32 ? INT32_MAX : INT64_MAX;
  std::vector<int64_t> iacc(n, kind == Reduction::Max   ? intMin
                               : kind == Reduction::Min ? intMax
                                                        : 0);
  std::vector<bool> nan(n, false);
  Shape rStrides = stridesOf(shape), idx, ridx;
  for (int64_t k = 0, e = x.size(); k < e; ++k) {
    unravel(k, x.shape, idx);
    ridx.clear();
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!llvm::is_contained(dims, d))
        ridx.push_back(idx[d]);
    int64_t o = ravel(ridx, rStrides);
    if (x.isFloat()) {
      double v = x.f[k];
      if (std::isnan(v))
        nan[o] = true;
      if (kind == Reduction::Max)
        acc[o] = std::max(acc[o], v);
      else if (kind == Reduction::Min)
        acc[o] = std::min(acc[o], v);
      else
        acc[o] += v;
    } else {
      int64_t v = x.i[k];
      if (kind == Reduction::Max)
        iacc[o] = std::max(iacc[o], v);
      else if (kind == Reduction::Min)
        iacc[o] = std::min(iacc[o], v);
      else
        iacc[o] += v;
    }
  }
  int64_t count = n ? x.size() / std::max<int64_t>(n, 1) : 0;
  if (n == 0)
    return r;
  count = x.size() / n;
  for (int64_t o = 0; o < n; ++o) {
    if (x.isFloat()) {
      double v = acc[o];
      if (kind == Reduction::Mean)
        v = count ? v / count : std::nan("");
      if (nan[o])
        v = std::nan("");
      r.f[o] = roundToFloat(x.dtype, v);
    } else {
      r.i[o] = wrapToInt(x.dtype, iacc[o]);
    }
  }
  return r;
}

HostTensor kernels::cumsum(const HostTensor &x, int64_t dim) {
  HostTensor r(x.dtype, x.shape);
  int64_t outer, size, inner;
  around(x.shape, dim, outer, size, inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double facc = 0;
      int64_t iacc = 0;
      for (int64_t s = 0; s < size; ++s) {
        int64_t k = (o * size + s) * inner + in;
        if (x.isFloat()) {
          facc += x.f[k];
          r.f[k] = roundToFloat(x.dtype, facc);
        } else {
          iacc += x.i[k];
          r.i[k] = wrapToInt(x.dtype, iacc);
        }
      }
    }
  return r;
}

HostTensor kernels::softmax(const HostTensor &x, int64_t dim) {
  HostTensor r(x.dtype, x.shape);
  int64_t outer, size, inner;
  around(x.shape, dim, outer, size, inner);
  std::vector<double> e(size);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t s) { return (o * size + s) * inner + in; };
      // A NaN anywhere makes the max NaN, so the row becomes NaN (std::max
      // would skip it, and an all-NaN row would pass for all -inf).
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t s = 0; s < size; ++s) {
        double v = x.f[at(s)];
        mx = std::isnan(v) || std::isnan(mx) ? std::nan("") : std::max(mx, v);
      }
      if (std::isinf(mx) && mx < 0) { // all -inf: zeros
        for (int64_t s = 0; s < size; ++s)
          r.f[at(s)] = 0.0;
        continue;
      }
      double sum = 0;
      for (int64_t s = 0; s < size; ++s)
        sum += e[s] = std::exp(x.f[at(s)] - mx);
      for (int64_t s = 0; s < size; ++s)
        r.f[at(s)] = roundToFloat(x.dtype, e[s] / sum);
    }
  return r;
}

HostTensor kernels::layerNorm(const HostTensor &x, const HostTensor &scale,
                              const HostTensor *bias, double epsilon) {
  HostTensor r(x.dtype, x.shape);
  int64_t d = x.shape.back(), rows = d ? x.size() / d : 0;
  for (int64_t row = 0; row < rows; ++row) {
    const double *v = &x.f[row * d];
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j)
      mean += v[j];
    mean /= d;
    for (int64_t j = 0; j < d; ++j)
      var += (v[j] - mean) * (v[j] - mean);
    var /= d;
    double inv = 1.0 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < d; ++j)
      r.f[row * d + j] = roundToFloat(
          x.dtype, (v[j] - mean) * inv * scale.f[j] + (bias ? bias->f[j] : 0));
  }
  return r;
}

HostTensor kernels::rmsNorm(const HostTensor &x, const HostTensor &scale,
                            double epsilon) {
  HostTensor r(x.dtype, x.shape);
  int64_t d = x.shape.back(), rows = d ? x.size() / d : 0;
  for (int64_t row = 0; row < rows; ++row) {
    const double *v = &x.f[row * d];
    double ms = 0;
    for (int64_t j = 0; j < d; ++j)
      ms += v[j] * v[j];
    double inv = 1.0 / std::sqrt(ms / d + epsilon);
    for (int64_t j = 0; j < d; ++j)
      r.f[row * d + j] = roundToFloat(x.dtype, v[j] * inv * scale.f[j]);
  }
  return r;
}

HostTensor kernels::gather(const HostTensor &table, const HostTensor &indices,
                           int64_t axis) {
  int64_t outer, size, inner;
  around(table.shape, axis, outer, size, inner);
  Shape shape(table.shape.begin(), table.shape.begin() + axis);
  llvm::append_range(shape, indices.shape);
  shape.append(table.shape.begin() + axis + 1, table.shape.end());
  HostTensor r(table.dtype, shape);
  int64_t count = indices.size();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < count; ++c) {
      int64_t row = indices.i[c];
      bool valid = row >= 0 && row < size;
      for (int64_t in = 0; in < inner; ++in) {
        int64_t to = (o * count + c) * inner + in;
        if (valid)
          copyElement(table, (o * size + row) * inner + in, r, to);
      }
    }
  return r;
}

HostTensor kernels::scatterAdd(const HostTensor &base,
                               const HostTensor &indices,
                               const HostTensor &updates, int64_t axis) {
  int64_t outer, size, inner;
  around(base.shape, axis, outer, size, inner);
  int64_t count = indices.size();
  // Accumulate in double (or int64), then round once.
  std::vector<double> acc(base.size());
  for (int64_t k = 0; k < base.size(); ++k)
    acc[k] = base.getF(k);
  std::vector<int64_t> iacc(base.isFloat() ? 0 : base.size());
  if (!base.isFloat())
    iacc = base.i;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < count; ++c) {
      int64_t row = indices.i[c];
      if (row < 0 || row >= size)
        continue;
      for (int64_t in = 0; in < inner; ++in) {
        int64_t to = (o * size + row) * inner + in;
        int64_t from = (o * count + c) * inner + in;
        if (base.isFloat())
          acc[to] += updates.f[from];
        else
          iacc[to] += updates.i[from];
      }
    }
  HostTensor r(base.dtype, base.shape);
  for (int64_t k = 0; k < r.size(); ++k) {
    if (r.isFloat())
      r.f[k] = roundToFloat(r.dtype, acc[k]);
    else
      r.i[k] = wrapToInt(r.dtype, iacc[k]);
  }
  return r;
}

HostTensor kernels::oneHot(const HostTensor &indices, DType dtype,
                           int64_t depth) {
  Shape shape = indices.shape;
  shape.push_back(depth);
  HostTensor r(dtype, shape);
  for (int64_t c = 0; c < indices.size(); ++c) {
    int64_t v = indices.i[c];
    if (v >= 0 && v < depth)
      r.setI(c * depth + v, 1);
  }
  return r;
}

std::pair<HostTensor, HostTensor> kernels::topK(const HostTensor &x,
                                                int64_t k) {
  int64_t n = x.shape.back(), rows = n ? x.size() / n : 0;
  Shape shape = x.shape;
  shape.back() = k;
  HostTensor values(x.dtype, shape), indices(DType::I32, shape);
  std::vector<int64_t> order(n);
  for (int64_t row = 0; row < rows; ++row) {
    std::iota(order.begin(), order.end(), 0);
    // Descending by value; NaN counts as largest; ties keep the lower index.
    auto greater = [&](int64_t a, int64_t b) {
      double va = x.getF(row * n + a), vb = x.getF(row * n + b);
      if (std::isnan(va) || std::isnan(vb))
        return std::isnan(va) && !std::isnan(vb);
      return va > vb;
    };
    std::stable_sort(order.begin(), order.end(), greater);
    for (int64_t j = 0; j < k; ++j) {
      copyElement(x, row * n + order[j], values, row * k + j);
      indices.i[row * k + j] = order[j];
    }
  }
  return {values, indices};
}

HostTensor kernels::dropoutMask(int64_t seed, DType dtype,
                                ArrayRef<int64_t> shape, double rate,
                                ArrayRef<int64_t> offsets,
                                ArrayRef<int64_t> globalShape) {
  HostTensor r(dtype, shape);
  double scale = 1.0 / (1.0 - rate);
  int64_t rank = int64_t(shape.size());
  for (int64_t k = 0; k < r.size(); ++k) {
    // The element's global linear index: its coordinates (plus the block's
    // offsets) in the global shape.
    uint64_t index = 0;
    for (int64_t d = 0, rest = k, stride = r.size(); d < rank; ++d) {
      stride /= shape[d];
      int64_t coord = rest / stride;
      rest %= stride;
      if (!offsets.empty())
        index = index * uint64_t(globalShape[d]) + uint64_t(coord + offsets[d]);
      else
        index = index * uint64_t(shape[d]) + uint64_t(coord);
    }
    r.f[k] = dropoutKeep(seed, index, rate) ? roundToFloat(dtype, scale) : 0.0;
  }
  return r;
}

HostTensor kernels::softmaxCrossEntropy(const HostTensor &logits,
                                        const HostTensor &labels,
                                        int64_t ignoreIndex, int reduction) {
  int64_t classes = logits.shape.back();
  int64_t positions = labels.size();
  HostTensor perPosition(logits.dtype, labels.shape);
  double total = 0;
  int64_t counted = 0;
  for (int64_t p = 0; p < positions; ++p) {
    int64_t label = labels.i[p];
    if (label == ignoreIndex || label < 0 || label >= classes)
      continue;
    const double *row = &logits.f[p * classes];
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c)
      mx = std::max(mx, row[c]);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += std::exp(row[c] - mx);
    double loss = std::log(sum) + mx - row[label];
    perPosition.f[p] = roundToFloat(logits.dtype, loss);
    total += loss;
    ++counted;
  }
  if (reduction == 2)
    return perPosition;
  HostTensor r(logits.dtype, {});
  double v = reduction == 1 ? total : (counted ? total / counted : 0.0);
  r.f[0] = roundToFloat(logits.dtype, v);
  return r;
}

HostTensor kernels::reduceAll(ArrayRef<const HostTensor *> xs,
                              Reduction kind) {
  const HostTensor &first = *xs.front();
  HostTensor r(first.dtype, first.shape);
  for (int64_t k = 0; k < r.size(); ++k) {
    if (r.isFloat()) {
      double acc = xs[0]->f[k];
      for (size_t j = 1; j < xs.size(); ++j) {
        double v = xs[j]->f[k];
        if (kind != Reduction::Sum && (std::isnan(acc) || std::isnan(v)))
          acc = std::nan(""); // max/min propagate NaN, as tessel.max does
        else
          acc = kind == Reduction::Max   ? std::max(acc, v)
                : kind == Reduction::Min ? std::min(acc, v)
                                         : acc + v;
      }
      r.f[k] = roundToFloat(r.dtype, acc);
    } else {
      int64_t acc = xs[0]->i[k];
      for (size_t j = 1; j < xs.size(); ++j) {
        int64_t v = xs[j]->i[k];
        acc = kind == Reduction::Max   ? std::max(acc, v)
              : kind == Reduction::Min ? std::min(acc, v)
                                       : acc + v;
      }
      r.i[k] = wrapToInt(r.dtype, acc);
    }
  }
  return r;
}
