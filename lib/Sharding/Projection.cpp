//===- Projection.cpp - mesh axes onto sharding-rule factors --------------===//

#include "tessel/sharding/Projection.h"

#include "tessel/support/Mesh.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tessel;

namespace {
/// An axis reference with its mesh axis's size known.
struct Ref {
  std::string name;
  int64_t pre, size, axisSize;

  static Ref of(MeshOp mesh, StringAttr axis) {
    ::tessel::AxisRef r = *::tessel::AxisRef::parse(axis.getValue());
    int64_t n = mesh.getAxisSize(r.name);
    return {r.name, r.pre, r.isWhole() ? n : r.size, n};
  }
  StringAttr attr(MLIRContext *ctx) const {
    if (pre == 1 && size == axisSize)
      return StringAttr::get(ctx, name);
    return StringAttr::get(ctx, ::tessel::AxisRef::subAxis(name, pre, size));
  }
  /// The major `g` of this reference's devices, and the rest.
  std::pair<Ref, Ref> cut(int64_t g) const {
    return {Ref{name, pre, g, axisSize},
            Ref{name, pre * g, size / g, axisSize}};
  }
};
} // namespace

SmallVector<AxisList, 2>
mlir::tessel::splitAxesOverFactors(MeshOp mesh, ArrayRef<int64_t> factorSizes,
                                   ArrayRef<StringAttr> axes) {
  SmallVector<AxisList, 2> split(factorSizes.size());
  if (factorSizes.empty())
    return split;
  if (factorSizes.size() == 1) {
    split[0].append(axes.begin(), axes.end());
    return split;
  }
  MLIRContext *ctx = mesh.getContext();
  size_t k = 0;
  int64_t remaining = factorSizes[0];
  for (StringAttr axis : axes) {
    Ref ref = Ref::of(mesh, axis);
    while (true) {
      while (k < factorSizes.size() && remaining == 1)
        if (++k < factorSizes.size())
          remaining = factorSizes[k];
      if (k == factorSizes.size())
        return split;
      if (remaining % ref.size == 0) {
        split[k].push_back(ref.attr(ctx));
        remaining /= ref.size;
        break;
      }
      int64_t g = std::gcd(remaining, ref.size);
      if (g == 1)
        return split;
      // The major part fills what is left of this factor only if g is all of
      // it; otherwise the factor ends partly split and nothing goes further.
      auto [major, minor] = ref.cut(g);
      split[k].push_back(major.attr(ctx));
      remaining /= g;
      if (remaining != 1)
        return split;
      ref = minor;
    }
  }
  return split;
}

AxisList mlir::tessel::joinFactorAxes(MeshOp mesh,
                                      ArrayRef<int64_t> factorSizes,
                                      ArrayRef<AxisList> perFactor) {
  AxisList joined;
  bool merged = factorSizes.size() > 1;
  for (auto [size, axes] : llvm::zip(factorSizes, perFactor)) {
    int64_t product = 1;
    for (StringAttr a : axes) {
      int64_t n = mesh.getAxisSize(a.getValue());
      if (conflictsWithAny(a, joined) || (merged && size % (product * n) != 0))
        break;
      joined.push_back(a);
      product *= n;
    }
    if (product != size)
      break;
  }
  return canonicalAxes(mesh, joined);
}

AxisList mlir::tessel::canonicalAxes(MeshOp mesh, ArrayRef<StringAttr> axes) {
  MLIRContext *ctx = mesh.getContext();
  SmallVector<Ref, 4> refs;
  for (StringAttr a : axes) {
    Ref r = Ref::of(mesh, a);
    if (!refs.empty() && refs.back().name == r.name &&
        refs.back().pre * refs.back().size == r.pre)
      refs.back().size *= r.size;
    else
      refs.push_back(r);
  }
  AxisList out;
  for (const Ref &r : refs)
    out.push_back(r.attr(ctx));
  return out;
}

bool mlir::tessel::conflictsWithAny(StringAttr axis, ArrayRef<StringAttr> others) {
  return llvm::any_of(others, [&](StringAttr o) {
    return ::tessel::axesConflict(axis.getValue(), o.getValue());
  });
}

std::string mlir::tessel::formatAxes(ArrayRef<StringAttr> axes) {
  std::string s = "{";
  for (auto [i, a] : llvm::enumerate(axes)) {
    ::tessel::AxisRef r = *::tessel::AxisRef::parse(a.getValue());
    s += (i ? ", \"" : "\"") + r.name + "\"";
    if (!r.isWhole())
      s += ":(" + std::to_string(r.pre) + ")" + std::to_string(r.size);
  }
  return s + "}";
}
