//===- Reshard.cpp - the reshard planner ----------------------------------===//

#include "tessel/sharding/Reshard.h"

#include "tessel/support/Mesh.h"

#include "llvm/Support/raw_ostream.h"

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
    want = canonicalAxes(mesh.op(), want);
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

std::optional<AxisTable> AxisTable::refine(MeshOp mesh,
                                           ArrayRef<const Layout *> layouts) {
  AxisTable table(mesh);
  MLIRContext *ctx = mesh.getContext();
  for (auto [nameAttr, size] :
       llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes())) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    // Boundaries in the axis coordinate's digits: pre-sizes where a
    // reference starts or ends.
    SmallVector<int64_t, 4> cuts = {1, size};
    for (const Layout *l : layouts)
      for (const AxisList &axes : l->dims)
        for (StringAttr a : axes) {
          ::tessel::AxisRef r = *::tessel::AxisRef::parse(a.getValue());
          if (r.name != name || r.isWhole())
            continue;
          cuts.push_back(r.pre);
          cuts.push_back(r.pre * r.size);
        }
    llvm::sort(cuts);
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      if (cuts[i + 1] % cuts[i] != 0)
        return std::nullopt;
      int64_t atom = cuts[i + 1] / cuts[i];
      table.atoms.push_back(
          cuts.size() == 2 ? StringAttr::get(ctx, name)
                           : StringAttr::get(ctx, ::tessel::AxisRef::subAxis(
                                                      name, cuts[i], atom)));
      table.atomSizes.push_back(atom);
    }
  }
  return table;
}

sharding::AxisDims AxisTable::indices(const Layout &l) const {
  sharding::AxisDims dims;
  for (const AxisList &axes : l.dims) {
    dims.emplace_back();
    for (StringAttr a : axes)
      for (auto [i, atom] : llvm::enumerate(atoms))
        if (::tessel::axesConflict(a.getValue(), atom.getValue()))
          dims.back().push_back(i); // atoms are listed major to minor
  }
  return dims;
}

AxisList AxisTable::axes(ArrayRef<int> indices) const {
  AxisList l;
  for (int a : indices)
    l.push_back(atoms[a]);
  return canonicalAxes(mesh, l);
}

/// `local` restricted along `dim` to its first `size` elements.
static Value sliceTo(OpBuilder &b, Location loc, Value local, int64_t dim,
                     int64_t size) {
  SmallVector<int64_t> shape(typeOf(local).getShape());
  if (shape[dim] == size)
    return local;
  SmallVector<int64_t> start(shape.size(), 0), strides(shape.size(), 1);
  shape[dim] = size;
  return SliceOp::create(b, loc, local, start, shape, strides);
}

Value Resharder::padTo(Location loc, Value local, int64_t dim, int64_t size) {
  SmallVector<int64_t> low(typeOf(local).getRank(), 0), high(low);
  high[dim] = size - typeOf(local).getDimSize(dim);
  if (high[dim] <= 0)
    return local;
  return PadOp::create(b, loc, local, low, high, llvm::APFloat(0.0));
}

Value Resharder::emitMove(Location loc, Value local,
                          const sharding::ReshardMove &m,
                          const AxisTable &table, RankedTensorType global) {
  using Kind = sharding::ReshardMoveKind;
  AxisList axes = table.axes(m.axes);
  int64_t n = mesh.size(axes);
  SmallVector<int64_t> shape(typeOf(local).getShape());
  auto sizeAfter = [&](int64_t d) {
    return mesh.localSize(global.getDimSize(d), table.axes(m.after[d]));
  };
  switch (m.kind) {
  case Kind::Gather:
    shape[m.dim] *= n;
    local = AllGatherOp::create(b, loc, typeOf(local).clone(shape), local,
                                mesh.name(), axesAttr(b, axes),
                                uint64_t(m.dim));
    return sliceTo(b, loc, local, m.dim, sizeAfter(m.dim));
  case Kind::AllToAll: {
    int64_t chunk = sizeAfter(m.toDim);
    local = padTo(loc, local, m.toDim, chunk * n); // n pieces
    shape[m.toDim] = chunk;
    shape[m.dim] *= n;
    local = AllToAllOp::create(b, loc, typeOf(local).clone(shape), local,
                               mesh.name(), axesAttr(b, axes),
                               uint64_t(m.toDim), uint64_t(m.dim));
    return sliceTo(b, loc, local, m.dim, sizeAfter(m.dim));
  }
  case Kind::Permute:
    return CollectivePermuteOp::create(b, loc, local.getType(), local,
                                       mesh.ref(), axesAttr(b, axes),
                                       b.getDenseI64ArrayAttr(m.pairs));
  case Kind::Slice:
    // Uneven: the last blocks are partly or wholly padding (zeros).
    local = padTo(loc, local, m.dim, sizeAfter(m.dim) * n);
    shape[m.dim] = sizeAfter(m.dim);
    return ShardSliceOp::create(b, loc, typeOf(local).clone(shape), local,
                                mesh.name(), axesAttr(b, axes),
                                uint64_t(m.dim));
  }
  llvm_unreachable("unknown reshard move");
}

FailureOr<Value> Resharder::reshard(Location loc, Value local,
                                    const Layout &from, const Layout &to,
                                    RankedTensorType global) {
  Layout cur = from;
  if (!cur.partial.empty())
    local = resolvePartial(loc, local, cur, to, global);
  if (cur.dims == to.dims)
    return local;
  std::optional<AxisTable> table = AxisTable::refine(mesh.op(), {&cur, &to});
  if (!table) {
    // Sub-axes of one axis that do not nest: through the replicated layout
    // (each layout alone nests: the verifier and the projection see to it).
    if (!AxisTable::refine(mesh.op(), {&cur}) ||
        !AxisTable::refine(mesh.op(), {&to}))
      return emitError(loc) << "cannot reshard between layouts whose "
                               "sub-axes do not nest";
    Layout all = Layout::replicated(global.getRank());
    FailureOr<Value> whole = reshard(loc, local, cur, all, global);
    if (failed(whole))
      return failure();
    return reshard(loc, *whole, all, to, global);
  }
  sharding::ReshardProblem problem;
  problem.shape.assign(global.getShape().begin(), global.getShape().end());
  problem.elementBytes =
      std::max<int64_t>(1, global.getElementTypeBitWidth() / 8);
  problem.axisSizes.assign(table->sizes().begin(), table->sizes().end());
  problem.from = table->indices(cur);
  problem.to = table->indices(to);
  const sharding::ReshardPlan &plan = planFor(problem);
  if (int64_t d = plan.rematerializedDim; d >= 0) {
    InFlightDiagnostic diag = strict ? emitError(loc) : emitWarning(loc);
    diag << "resharding dimension " << d << " from " << formatAxes(cur.dims[d])
         << " to " << formatAxes(to.dims[d])
         << " rematerializes it (gather, then slice)";
    if (strict)
      return diag;
  }
  for (const sharding::ReshardMove &m : plan.moves)
    local = emitMove(loc, local, m, *table, global);
  return local;
}

/// The plan of `problem`, planned once per function.
const sharding::ReshardPlan &
Resharder::planFor(const sharding::ReshardProblem &problem) {
  std::string key;
  llvm::raw_string_ostream os(key);
  for (int64_t s : problem.shape)
    os << s << 'x';
  os << problem.elementBytes << ':';
  for (int64_t s : problem.axisSizes) // atoms differ between reshards
    os << s << ',';
  os << ':';
  for (const auto *dims : {&problem.from, &problem.to}) {
    for (const auto &axes : *dims) {
      for (int a : axes)
        os << a << ',';
      os << '|';
    }
    os << ';';
  }
  auto [it, fresh] = plans.try_emplace(key);
  if (fresh)
    it->second = sharding::planReshard(problem);
  return it->second;
}
