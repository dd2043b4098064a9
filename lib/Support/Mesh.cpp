//===- Mesh.cpp - device meshes and collective groups ---------------------===//

#include "tessel/support/Mesh.h"

using namespace tessel;

int64_t MeshShape::numDevices() const {
  int64_t n = 1;
  for (int64_t s : axisSizes)
    n *= s;
  return n;
}

int64_t MeshShape::axisIndex(llvm::StringRef axis) const {
  for (size_t i = 0; i < axisNames.size(); ++i)
    if (axisNames[i] == axis)
      return i;
  return -1;
}

Shape MeshShape::coords(int64_t device) const {
  Shape c(axisSizes.size());
  for (int64_t d = static_cast<int64_t>(axisSizes.size()) - 1; d >= 0; --d) {
    c[d] = device % axisSizes[d];
    device /= axisSizes[d];
  }
  return c;
}

int64_t MeshShape::deviceAt(llvm::ArrayRef<int64_t> c) const {
  int64_t device = 0;
  for (size_t d = 0; d < axisSizes.size(); ++d)
    device = device * axisSizes[d] + c[d];
  return device;
}

int64_t MeshShape::groupSize(llvm::ArrayRef<std::string> axes) const {
  int64_t n = 1;
  for (const std::string &a : axes)
    n *= axisSizes[axisIndex(a)];
  return n;
}

int64_t MeshShape::groupIndex(int64_t device,
                              llvm::ArrayRef<std::string> axes) const {
  Shape c = coords(device);
  int64_t index = 0;
  for (const std::string &a : axes) {
    int64_t ax = axisIndex(a);
    index = index * axisSizes[ax] + c[ax];
  }
  return index;
}

std::vector<int64_t>
MeshShape::group(int64_t device, llvm::ArrayRef<std::string> axes) const {
  Shape c = coords(device);
  int64_t n = groupSize(axes);
  std::vector<int64_t> members(n);
  for (int64_t g = 0; g < n; ++g) {
    Shape m = c;
    int64_t rest = g;
    for (int64_t k = static_cast<int64_t>(axes.size()) - 1; k >= 0; --k) {
      int64_t ax = axisIndex(axes[k]);
      m[ax] = rest % axisSizes[ax];
      rest /= axisSizes[ax];
    }
    members[g] = deviceAt(m);
  }
  return members;
}
