//===- ReshardPlan.h - cheapest sequence of collectives for a reshard -*- C++ -*-===//
//
// Plans how a tensor laid out one way on a device mesh becomes laid out
// another way: a shortest path over layouts whose edges are collectives
// (all-gather of a dimension's minor axes, all-to-all of a dimension's
// minor axes onto another dimension, one collective-permute to the target,
// a local slice that adds axes) weighted by the bytes each device sends
// (the formula `--tessel-comm-report` prints), then by the largest local
// block the plan holds, then by the number of steps. Gathering everything
// and slicing is always one of the paths, so no plan costs more than it.
//
// The planner knows nothing of MLIR: axes are indices into a size table,
// so passes and tests can ask for plans directly. The partitioner emits
// them (lib/Sharding/Reshard.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SHARDING_RESHARDPLAN_H
#define TESSEL_SHARDING_RESHARDPLAN_H

#include "tessel/sharding/Traffic.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace tessel::sharding {

using ::mlir::tessel::CollectiveTraffic;
using ::mlir::tessel::collectiveSentBytes;

/// Per tensor dimension, the mesh axes (indices) splitting it, major first.
using AxisDims = llvm::SmallVector<llvm::SmallVector<int, 2>, 4>;

/// What the planner needs of a tensor and its mesh.
struct ReshardProblem {
  llvm::SmallVector<int64_t, 4> shape;    ///< global shape
  int64_t elementBytes = 4;
  llvm::SmallVector<int64_t, 4> axisSizes; ///< size of each mesh axis
  AxisDims from, to;
};

enum class ReshardMoveKind {
  /// All-gather `axes` (the minor end of `dim`'s axes) along `dim`.
  Gather,
  /// All-to-all over `axes` (the minor end of `dim`'s axes): `dim` is
  /// concatenated, `toDim` split, and `axes` end up at `toDim`'s minor end.
  AllToAll,
  /// One collective-permute over `axes` (`pairs` are group indices over
  /// them): every device's block moves to the device that holds it in
  /// `after`, which has the same local shape.
  Permute,
  /// Adds `axes` at the minor end of `dim`: each device keeps its block,
  /// no communication.
  Slice,
};

struct ReshardMove {
  ReshardMoveKind kind;
  int64_t dim = -1;
  int64_t toDim = -1;
  llvm::SmallVector<int, 2> axes;
  llvm::SmallVector<int64_t> pairs;
  AxisDims after;
  double sentBytes = 0;
};

struct ReshardPlan {
  llvm::SmallVector<ReshardMove, 4> moves;
  double sentBytes = 0;   ///< per device, all moves
  int64_t peakBytes = 0;  ///< the largest local block along the way
  /// The first dimension the plan gathers and later splits again (holding
  /// more of it than either layout does), or -1.
  int64_t rematerializedDim = -1;
};

/// Local size of a dimension of global size `size` split `n` ways.
inline int64_t localSize(int64_t size, int64_t n) { return (size + n - 1) / n; }

/// True when the blocks of a dimension of size `size` split `outer * inner`
/// ways, taken `inner` at a time, are exactly its blocks split `outer` ways
/// (always when the split is even; with `outer == 1`, up to padding at the
/// end).
bool blocksNest(int64_t size, int64_t outer, int64_t inner);

/// The cheapest plan from `p.from` to `p.to` (no partial axes: resolve them
/// first). Never fails: gathering every axis then slicing is always valid.
ReshardPlan planReshard(const ReshardProblem &p);

/// "[{x}, {}]"-style text of a layout with axis `names`, for diagnostics.
std::string formatAxisDims(const AxisDims &dims,
                           llvm::ArrayRef<std::string> names);

} // namespace tessel::sharding

#endif // TESSEL_SHARDING_RESHARDPLAN_H
