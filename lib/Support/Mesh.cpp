//===- Mesh.cpp - device meshes and collective groups ---------------------===//

#include "tessel/support/Mesh.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <iterator>

using namespace tessel;

std::optional<AxisRef> AxisRef::parse(llvm::StringRef text) {
  AxisRef ref;
  auto [name, sub] = text.split(':');
  ref.name = name.str();
  if (sub.empty() && !text.contains(':'))
    return ref;
  // "(k)m"
  if (!sub.consume_front("("))
    return std::nullopt;
  auto [pre, size] = sub.split(')');
  if (pre.getAsInteger(10, ref.pre) || size.getAsInteger(10, ref.size) ||
      ref.pre < 1 || ref.size < 2 || name.empty())
    return std::nullopt;
  return ref;
}

std::string AxisRef::subAxis(llvm::StringRef name, int64_t pre, int64_t size) {
  return (name + ":(" + llvm::Twine(pre) + ")" + llvm::Twine(size)).str();
}

std::string AxisRef::str() const {
  return isWhole() ? name : subAxis(name, pre, size);
}

bool tessel::axesConflict(llvm::StringRef a, llvm::StringRef b) {
  std::optional<AxisRef> x = AxisRef::parse(a), y = AxisRef::parse(b);
  if (!x || !y)
    return a == b;
  if (x->name != y->name)
    return false;
  if (axesOverlap(*x, *y))
    return true;
  // Disjoint: the boundaries, in order, must each divide the next.
  int64_t cuts[] = {x->pre, x->pre * x->size, y->pre, y->pre * y->size};
  std::sort(std::begin(cuts), std::end(cuts));
  for (int i = 0; i + 1 < 4; ++i)
    if (cuts[i + 1] % cuts[i] != 0)
      return true;
  return false;
}

bool tessel::axesOverlap(const AxisRef &x, const AxisRef &y) {
  return x.name == y.name &&
         (x.isWhole() || y.isWhole() ||
          std::max(x.pre, y.pre) < std::min(x.pre * x.size, y.pre * y.size));
}

bool tessel::isValidAxisName(llvm::StringRef name) {
  return !name.empty() && name.find_first_of(":()") == llvm::StringRef::npos;
}

int64_t MeshShape::numDevices() const {
  int64_t n = 1;
  for (int64_t s : axisSizes)
    n *= s;
  return n;
}

int64_t MeshShape::axisIndex(llvm::StringRef axis) const {
  llvm::StringRef name = axis.split(':').first;
  for (size_t i = 0; i < axisNames.size(); ++i)
    if (axisNames[i] == name)
      return i;
  return -1;
}

int64_t MeshShape::axisSize(llvm::StringRef axis) const {
  std::optional<AxisRef> ref = AxisRef::parse(axis);
  int64_t index = ref ? axisIndex(ref->name) : -1;
  if (index < 0)
    return -1;
  int64_t n = axisSizes[index];
  if (ref->isWhole())
    return n;
  return n % (ref->pre * ref->size) == 0 ? ref->size : -1;
}

/// The weight of an axis reference's digit in its axis coordinate (1 for a
/// whole axis or the minor-most sub-axis).
static int64_t digitWeight(const MeshShape &mesh, llvm::StringRef axis) {
  AxisRef ref = *AxisRef::parse(axis);
  if (ref.isWhole())
    return 1;
  return mesh.axisSizes[mesh.axisIndex(ref.name)] / (ref.pre * ref.size);
}

int64_t MeshShape::coord(int64_t device, llvm::StringRef axis) const {
  int64_t c = coords(device)[axisIndex(axis)];
  return c / digitWeight(*this, axis) % axisSize(axis);
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
    n *= axisSize(a);
  return n;
}

int64_t MeshShape::groupIndex(int64_t device,
                              llvm::ArrayRef<std::string> axes) const {
  int64_t index = 0;
  for (const std::string &a : axes)
    index = index * axisSize(a) + coord(device, a);
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
      int64_t ax = axisIndex(axes[k]), size = axisSize(axes[k]);
      int64_t weight = digitWeight(*this, axes[k]);
      int64_t digit = m[ax] / weight % size;
      m[ax] += (rest % size - digit) * weight;
      rest /= size;
    }
    members[g] = deviceAt(m);
  }
  return members;
}
