//===- Mesh.h - device meshes and collective groups -------------*- C++ -*-===//
//
// A mesh numbers its devices row-major over its axes (the last axis varies
// fastest). A collective over axes A runs among the devices that share every
// coordinate not in A; a device's index in that group is its row-major
// position over its coordinates on A, in the order A lists them.
//
// An axis of A may be a sub-axis, written "a:(k)m": the m devices of axis
// "a" (size n) that differ only in the digit of weight n/(k*m) of their
// coordinate, where k is the product of the sub-axes more major than it
// (Shardy's `"a":(k)m`). "a:(1)2" and "a:(2)2" are the major and minor
// halves of an axis of size 4; listed in that order they equal "a".
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_MESH_H
#define TESSEL_SUPPORT_MESH_H

#include "tessel/support/HostTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// A mesh axis named in a sharding or a collective: a whole axis ("a", size
/// 0 here) or a sub-axis "a:(pre)size".
struct AxisRef {
  std::string name;
  int64_t pre = 1;
  int64_t size = 0; ///< 0: the whole axis

  bool isWhole() const { return size == 0; }
  /// Parses "a" or "a:(k)m"; nullopt for a malformed sub-axis (k < 1, m < 2).
  static std::optional<AxisRef> parse(llvm::StringRef text);
  /// "a" or "a:(k)m".
  std::string str() const;
  static std::string subAxis(llvm::StringRef name, int64_t pre, int64_t size);
};

/// Whether two axis references cannot split one tensor (or form one group)
/// together: the same axis where either is whole, or sub-axes whose
/// [pre, pre*size) digit ranges intersect or do not nest. Sub-axes nest
/// when their boundaries divide one another: "a":(1)2 and "a":(2)3 of
/// a=6 cut it as 2 x 3; "a":(1)2 and "a":(3)2 would cut it as 2 x 3 and
/// 3 x 2 at once, which no device numbering satisfies.
bool axesConflict(llvm::StringRef a, llvm::StringRef b);
/// The part of axesConflict that is a plain overlap: the same axis where
/// either is whole or their digit ranges intersect.
bool axesOverlap(const AxisRef &a, const AxisRef &b);

/// Whether `name` can name a mesh axis (not empty, none of `:()`).
bool isValidAxisName(llvm::StringRef name);

struct MeshShape {
  std::vector<std::string> axisNames;
  std::vector<int64_t> axisSizes;

  int64_t numDevices() const;
  /// Index of the mesh axis named `axis` (a sub-axis: of its axis), or -1.
  int64_t axisIndex(llvm::StringRef axis) const;
  /// Size of an axis or sub-axis; -1 if the mesh has no such axis or the
  /// sub-axis does not divide it.
  int64_t axisSize(llvm::StringRef axis) const;
  /// Coordinates of `device` (row-major).
  Shape coords(int64_t device) const;
  int64_t deviceAt(llvm::ArrayRef<int64_t> coords) const;
  /// `device`'s coordinate along an axis or sub-axis (which must exist).
  int64_t coord(int64_t device, llvm::StringRef axis) const;
  /// Product of the sizes of `axes`.
  int64_t groupSize(llvm::ArrayRef<std::string> axes) const;
  /// `device`'s index in its group over `axes`.
  int64_t groupIndex(int64_t device, llvm::ArrayRef<std::string> axes) const;
  /// The devices of `device`'s group over `axes`, by group index.
  std::vector<int64_t> group(int64_t device,
                             llvm::ArrayRef<std::string> axes) const;
};

} // namespace tessel

#endif // TESSEL_SUPPORT_MESH_H
