//===- Layout.h - how a global value lies on the devices --------*- C++ -*-===//

#ifndef TESSEL_SHARDING_LAYOUT_H
#define TESSEL_SHARDING_LAYOUT_H

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/sharding/Projection.h"

namespace mlir::tessel {

/// A global tensor's layout: per dimension the mesh axes splitting it (major
/// to minor), and the axes over which the local values are unreduced partial
/// results still to be combined by `partialKind`.
struct Layout {
  SmallVector<AxisList, 4> dims;
  AxisList partial;
  CollectiveKind partialKind = CollectiveKind::sum;

  static Layout replicated(int64_t rank) {
    Layout l;
    l.dims.resize(rank);
    return l;
  }
  static Layout of(ShardingAttr sharding) {
    Layout l;
    for (DimShardingAttr d : sharding.getDims())
      l.dims.emplace_back(d.getAxes().begin(), d.getAxes().end());
    return l;
  }
  bool operator==(const Layout &o) const {
    return dims == o.dims && partial == o.partial &&
           (partial.empty() || partialKind == o.partialKind);
  }
  bool operator!=(const Layout &o) const { return !(*this == o); }
};

/// The mesh a function is partitioned over, with axis sizes by name.
class MeshInfo {
public:
  explicit MeshInfo(MeshOp mesh) : mesh(mesh) {}
  MeshOp op() const { return mesh; }
  StringRef name() const { return mesh.getSymName(); }
  FlatSymbolRefAttr ref() const {
    return FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  }
  int64_t size(StringAttr axis) const {
    return mesh.getAxisSize(axis.getValue());
  }
  int64_t size(ArrayRef<StringAttr> axes) const {
    int64_t n = 1;
    for (StringAttr a : axes)
      n *= size(a);
    return n;
  }
  /// Local size of a global dimension split over `axes`: ceil(global / n).
  int64_t localSize(int64_t global, ArrayRef<StringAttr> axes) const {
    int64_t n = size(axes);
    return (global + n - 1) / n;
  }
  RankedTensorType localType(RankedTensorType global,
                             const Layout &layout) const {
    SmallVector<int64_t> shape;
    for (auto [d, size] : llvm::enumerate(global.getShape()))
      shape.push_back(localSize(size, layout.dims[d]));
    return global.clone(shape);
  }

private:
  mutable MeshOp mesh;
};

} // namespace mlir::tessel

#endif // TESSEL_SHARDING_LAYOUT_H
