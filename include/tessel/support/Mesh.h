//===- Mesh.h - device meshes and collective groups -------------*- C++ -*-===//
//
// A mesh numbers its devices row-major over its axes (the last axis varies
// fastest). A collective over axes A runs among the devices that share every
// coordinate not in A; a device's index in that group is its row-major
// position over its coordinates on A, in the order A lists them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_MESH_H
#define TESSEL_SUPPORT_MESH_H

#include "tessel/support/HostTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tessel {

struct MeshShape {
  std::vector<std::string> axisNames;
  std::vector<int64_t> axisSizes;

  int64_t numDevices() const;
  /// Index of `axis`, or -1.
  int64_t axisIndex(llvm::StringRef axis) const;
  /// Coordinates of `device` (row-major).
  Shape coords(int64_t device) const;
  int64_t deviceAt(llvm::ArrayRef<int64_t> coords) const;
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
