//===- Reshard.h - the reshard planner ---------------------------*- C++ -*-===//
//
// Turns a value's layout into the layout its user needs: partial results
// first (all-reduce, or reduce-scatter when the target splits a dimension
// over exactly the partial axes), then the cheapest sequence of all-gathers,
// all-to-alls, a collective-permute and local slices that
// tessel/sharding/ReshardPlan.h finds, emitted here.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SHARDING_RESHARD_H
#define TESSEL_SHARDING_RESHARD_H

#include "tessel/sharding/Layout.h"

#include "tessel/sharding/ReshardPlan.h"
#include "tessel/sharding/WindowPlan.h"

#include "llvm/ADT/StringMap.h"

#include <optional>

#include "mlir/IR/Builders.h"

namespace mlir::tessel {
namespace sharding = ::tessel::sharding;

/// The planner's view of a mesh (tessel/sharding/ReshardPlan.h): axes as
/// indices. Where the layouts of a reshard name sub-axes, each mesh axis is
/// cut at every boundary either layout uses, so that every axis reference is
/// a run of whole "atoms" ("a" of size 4 against "a":(2)2 becomes the atoms
/// "a":(1)2, "a":(2)2) and the planner moves atoms independently.
class AxisTable {
public:
  /// The table for `layouts`, or nullopt when two of their sub-axes of one
  /// axis do not nest (as "a":(1)2 and "a":(1)3 of an axis of 6).
  static std::optional<AxisTable> refine(MeshOp mesh,
                                         ArrayRef<const Layout *> layouts);
  sharding::AxisDims indices(const Layout &l) const;
  /// The axes of `indices`, canonical (adjacent atoms merged).
  AxisList axes(ArrayRef<int> indices) const;
  ArrayRef<int64_t> sizes() const { return atomSizes; }

private:
  explicit AxisTable(MeshOp mesh) : mesh(mesh) {}
  MeshOp mesh;
  SmallVector<StringAttr> atoms;
  SmallVector<int64_t, 4> atomSizes;
};

class Resharder {
public:
  Resharder(OpBuilder &builder, const MeshInfo &mesh, bool strict)
      : b(builder), mesh(mesh), strict(strict) {}

  /// Returns `local` (laid out as `from`, of global type `global`) laid out
  /// as `to`; emits collectives at the builder's insertion point.
  FailureOr<Value> reshard(Location loc, Value local, const Layout &from,
                           const Layout &to, RankedTensorType global);

  /// Replaces the padding of dimension `dim` (global positions past the
  /// global size) with `fill`.
  Value maskPadding(Location loc, Value local, const Layout &layout,
                    RankedTensorType global, int64_t dim, double fill);

  /// Device g's result block of a windowed dimension `dim` (split over
  /// `axes`; `local` holds the operand block) as `plan` says
  /// (tessel/sharding/WindowPlan.h): one collective_permute per distance of
  /// just the rows read, the pieces concatenated, and the block taken at an
  /// offset that depends on g where result and operand blocks differ in
  /// size. Rows the plan does not read are unspecified (zeros, or rows of
  /// another position).
  Value exchangeWindow(Location loc, Value local, int64_t dim,
                       ArrayRef<StringAttr> axes,
                       const sharding::WindowPlan &plan, int64_t resultBlock);
  /// `local` padded with zeros at the end of `dim` to `size`, if shorter.
  Value padTo(Location loc, Value local, int64_t dim, int64_t size);
  /// A 0-d tensor (i32, or `elementType`): this device's group index over
  /// `axes`.
  Value axisIndex(Location loc, ArrayRef<StringAttr> axes,
                  Type elementType = {});
  /// The global index of each position along `dim` (i32 tensor of `local`'s
  /// shape), for a dimension split over `axes`.
  Value globalPositions(Location loc, Value local, int64_t dim,
                        ArrayRef<StringAttr> axes);
  Value constant(Location loc, RankedTensorType type, double value);

private:
  Value rowsOf(Location loc, Value local, int64_t dim, int64_t begin,
               int64_t end);
  /// Rows [offset, offset + rows) of `dim`, `offset` a 0-d i32 tensor in
  /// [0, maxOffset].
  Value dynamicRows(Location loc, Value local, int64_t dim, Value offset,
                    int64_t maxOffset, int64_t rows);
  Value emitMove(Location loc, Value local, const sharding::ReshardMove &m,
                 const AxisTable &table, RankedTensorType global);
  const sharding::ReshardPlan &planFor(const sharding::ReshardProblem &p);
  Value resolvePartial(Location loc, Value local, Layout &layout,
                       const Layout &to, RankedTensorType global);

  OpBuilder &b;
  const MeshInfo &mesh;
  bool strict;
  llvm::StringMap<sharding::ReshardPlan> plans;
};

} // namespace mlir::tessel

#endif // TESSEL_SHARDING_RESHARD_H
