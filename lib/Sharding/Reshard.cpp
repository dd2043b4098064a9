//===- Reshard.cpp - the reshard planner ----------------------------------===//

#include "Reshard.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tessel;

static ArrayAttr axesAttr(OpBuilder &b, ArrayRef<StringAttr> axes) {
  SmallVector<Attribute> attrs(axes.begin(), axes.end());
  return b.getArrayAttr(attrs);
}

static RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static std::string str(ArrayRef<StringAttr> axes) {
  std::string s = "{";
  for (auto [i, a] : llvm::enumerate(axes))
    s += (i ? ", \"" : "\"") + a.getValue().str() + "\"";
  return s + "}";
}

Value Resharder::constant(Location loc, RankedTensorType type, double value) {
  return createSplat(b, loc, type, value);
}

Value Resharder::axisIndex(Location loc, ArrayRef<StringAttr> axes,
                           Type elementType) {
  if (!elementType)
    elementType = b.getI32Type();
  Value index = AxisIndexOp::create(b, loc, RankedTensorType::get({}, b.getI32Type()),
                                    mesh.ref(), axesAttr(b, axes));
  if (elementType == b.getI32Type())
    return index;
  return ConvertOp::create(b, loc, RankedTensorType::get({}, elementType),
                           index);
}

Value Resharder::sliceBlock(Location loc, Value local, int64_t dim,
                            Value block, int64_t size) {
  auto i32 = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getI32Type());
  };
  Value iota = IotaOp::create(b, loc, i32({size}), int64_t(0));
  Value scaled = MulOp::create(b, loc, block, constant(loc, i32({}), size));
  Value offset =
      BroadcastInDimOp::create(b, loc, i32({size}), scaled,
                               ArrayRef<int64_t>{});
  Value indices = AddOp::create(b, loc, iota, offset);
  return GatherOp::create(b, loc, local, indices, dim);
}

Value Resharder::globalPositions(Location loc, Value local, int64_t dim,
                                 ArrayRef<StringAttr> axes) {
  RankedTensorType type = typeOf(local);
  auto i32 = RankedTensorType::get(type.getShape(), b.getI32Type());
  Value pos = IotaOp::create(b, loc, i32, dim);
  if (axes.empty())
    return pos;
  Value block = axisIndex(loc, axes);
  Value scaled =
      MulOp::create(b, loc, block,
                    constant(loc, RankedTensorType::get({}, b.getI32Type()),
                             type.getDimSize(dim)));
  Value offset =
      BroadcastInDimOp::create(b, loc, i32, scaled, ArrayRef<int64_t>{});
  return AddOp::create(b, loc, pos, offset);
}

Value Resharder::maskPadding(Location loc, Value local, const Layout &layout,
                             RankedTensorType global, int64_t dim,
                             double fill) {
  int64_t g = global.getDimSize(dim);
  if (g % mesh.size(layout.dims[dim]) == 0)
    return local; // no padding
  RankedTensorType type = typeOf(local);
  Value pos = globalPositions(loc, local, dim, layout.dims[dim]);
  Value limit = constant(
      loc, RankedTensorType::get(type.getShape(), b.getI32Type()), g);
  Value valid = CompareOp::create(b, loc, CompareDirection::lt, pos, limit);
  return SelectOp::create(b, loc, valid, local, constant(loc, type, fill));
}

Value Resharder::resolvePartial(Location loc, Value local, Layout &layout,
                                const Layout &to, RankedTensorType global) {
  // Reduce-scatter when the target splits one dimension over exactly the
  // partial axes appended to the current ones (and evenly).
  for (size_t d = 0; d < layout.dims.size(); ++d) {
    AxisList want = layout.dims[d];
    want.append(layout.partial.begin(), layout.partial.end());
    int64_t n = mesh.size(layout.partial);
    if (to.dims[d] != want ||
        global.getDimSize(d) % mesh.size(want) != 0 ||
        typeOf(local).getDimSize(d) % n != 0)
      continue;
    SmallVector<int64_t> shape(typeOf(local).getShape());
    shape[d] /= n;
    Value r = ReduceScatterOp::create(
        b, loc, typeOf(local).clone(shape), layout.partialKind, local,
        mesh.name(), axesAttr(b, layout.partial), uint64_t(d));
    layout.dims[d] = want;
    layout.partial.clear();
    return r;
  }
  Value r = AllReduceOp::create(b, loc, local.getType(), layout.partialKind,
                                local, mesh.name(),
                                axesAttr(b, layout.partial));
  layout.partial.clear();
  return r;
}

FailureOr<Value> Resharder::reshard(Location loc, Value local,
                                    const Layout &from, const Layout &to,
                                    RankedTensorType global) {
  Layout cur = from;
  if (!cur.partial.empty())
    local = resolvePartial(loc, local, cur, to, global);

  int64_t rank = global.getRank();
  // An axis moving from the minor end of one dimension to the minor end of
  // another: one all-to-all (even sizes only).
  for (int64_t i = 0; i < rank; ++i) {
    for (int64_t j = 0; j < rank; ++j) {
      if (i == j || cur.dims[i].empty())
        continue;
      StringAttr a = cur.dims[i].back();
      AxisList iAfter(cur.dims[i].begin(), cur.dims[i].end() - 1);
      AxisList jAfter = cur.dims[j];
      jAfter.push_back(a);
      if (to.dims[i] != iAfter || to.dims[j] != jAfter)
        continue;
      int64_t n = mesh.size(a);
      if (global.getDimSize(i) % mesh.size(cur.dims[i]) != 0 ||
          global.getDimSize(j) % mesh.size(jAfter) != 0)
        continue;
      SmallVector<int64_t> shape(typeOf(local).getShape());
      shape[i] *= n;
      shape[j] /= n;
      local = AllToAllOp::create(b, loc, typeOf(local).clone(shape), local,
                                 mesh.name(), axesAttr(b, {a}), uint64_t(j),
                                 uint64_t(i));
      cur.dims[i] = iAfter;
      cur.dims[j] = jAfter;
    }
  }

  // The same axes in another order on one dimension: every device's block
  // moves to the device that holds that block index under the new order,
  // one collective-permute (even dimensions only).
  for (int64_t d = 0; d < rank; ++d) {
    const AxisList &c = cur.dims[d], &t = to.dims[d];
    if (c == t || c.size() != t.size() || c.size() < 2 ||
        !std::is_permutation(c.begin(), c.end(), t.begin()) ||
        global.getDimSize(d) % mesh.size(c) != 0)
      continue;
    // Group index over `c` (in c's order) of the device whose coordinates
    // give block `k` when read in `order`.
    auto indexOf = [&](int64_t k, ArrayRef<StringAttr> order) {
      llvm::SmallDenseMap<StringAttr, int64_t> coord;
      for (int64_t i = static_cast<int64_t>(order.size()) - 1; i >= 0; --i) {
        int64_t n = mesh.size(order[i]);
        coord[order[i]] = k % n;
        k /= n;
      }
      int64_t g = 0;
      for (StringAttr a : c)
        g = g * mesh.size(a) + coord[a];
      return g;
    };
    // Every block moves (a block that stays is a pair to itself: the
    // permute gives zeros where nothing arrives).
    SmallVector<int64_t> pairs;
    for (int64_t k = 0, n = mesh.size(c); k < n; ++k) {
      pairs.push_back(indexOf(k, c));
      pairs.push_back(indexOf(k, t));
    }
    local = CollectivePermuteOp::create(b, loc, local.getType(), local,
                                        mesh.ref(), axesAttr(b, c),
                                        b.getDenseI64ArrayAttr(pairs));
    cur.dims[d] = t;
  }

  // First drop axes (all-gathers), then add axes (local slices): an axis
  // that moves between dimensions must be gathered before it splits again.
  for (int64_t d = 0; d < rank; ++d) {
    const AxisList &c = cur.dims[d], &t = to.dims[d];
    if (c == t)
      continue;
    size_t k = 0;
    while (k < c.size() && k < t.size() && c[k] == t[k])
      ++k;
    int64_t g = global.getDimSize(d);
    bool even = g % mesh.size(c) == 0 && g % mesh.size(t) == 0;
    if (k < c.size() && k < t.size()) {
      InFlightDiagnostic diag = strict ? emitError(loc) : emitWarning(loc);
      diag << "resharding dimension " << d << " from " << str(c) << " to "
           << str(t) << " rematerializes it (gather, then slice)";
      if (strict)
        return diag;
    }
    // For uneven dimensions gather every axis: the blocks of a coarser split
    // do not line up with the finer ones.
    size_t keep = even ? k : 0;
    if (keep == c.size())
      continue;
    AxisList dropped(c.begin() + keep, c.end());
    SmallVector<int64_t> shape(typeOf(local).getShape());
    shape[d] *= mesh.size(dropped);
    local = AllGatherOp::create(b, loc, typeOf(local).clone(shape), local,
                                mesh.name(), axesAttr(b, dropped),
                                uint64_t(d));
    AxisList kept(c.begin(), c.begin() + keep);
    int64_t blockSize = mesh.localSize(g, kept);
    if (shape[d] != blockSize) { // padding: keep the real elements only
      SmallVector<int64_t> start(rank, 0), limit(shape), strides(rank, 1);
      limit[d] = blockSize;
      local = SliceOp::create(b, loc, local, start, limit, strides);
    }
    cur.dims[d] = kept;
  }
  for (int64_t d = 0; d < rank; ++d) {
    const AxisList &t = to.dims[d];
    if (cur.dims[d].size() >= t.size())
      continue;
    // Add axes: take this device's block, no communication.
    AxisList added(t.begin() + cur.dims[d].size(), t.end());
    int64_t size = mesh.localSize(global.getDimSize(d), t);
    local = sliceBlock(loc, local, d, axisIndex(loc, added), size);
    cur.dims[d] = t;
  }
  return local;
}
