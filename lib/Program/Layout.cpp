//===- Layout.cpp - a device's block of a global tensor -------------------===//

#include "tessel/program/Program.h"

#include <cstring>

using namespace tessel;
using namespace tessel::program;

/// Calls fn(local linear index, global linear index or -1 in padding).
template <typename Fn>
static void forEachBlockElement(const TensorInfo &info, const MeshShape &mesh,
                                int64_t device, Fn fn) {
  int64_t rank = info.shape.size();
  Shape offset(rank), gStrides = stridesOf(info.globalShape);
  for (int64_t d = 0; d < rank; ++d)
    offset[d] = mesh.groupIndex(device, info.dims[d]) * info.shape[d];
  int64_t n = numElements(info.shape);
  for (int64_t k = 0; k < n; ++k) {
    int64_t rest = k, g = 0;
    bool inside = true;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t i = rest % info.shape[d] + offset[d];
      rest /= info.shape[d];
      inside &= i < info.globalShape[d];
      g += i * gStrides[d];
    }
    fn(k, inside ? g : -1);
  }
}

void program::sliceBlock(const HostTensor &global, const TensorInfo &info,
                    const MeshShape &mesh, int64_t device, uint8_t *local) {
  int64_t width = byteSize(info.dtype);
  forEachBlockElement(info, mesh, device, [&](int64_t k, int64_t g) {
    if (g < 0)
      storeElement(info.dtype, 0.0, 0, local + k * width);
    else
      storeElement(info.dtype, global.isFloat() ? global.f[g] : 0.0,
                   global.isFloat() ? 0 : global.i[g], local + k * width);
  });
}

void program::sliceBlockBytes(const uint8_t *global, const TensorInfo &info,
                         const MeshShape &mesh, int64_t device,
                         uint8_t *local) {
  int64_t width = byteSize(info.dtype);
  forEachBlockElement(info, mesh, device, [&](int64_t k, int64_t g) {
    if (g < 0)
      std::memset(local + k * width, 0, width);
    else
      std::memcpy(local + k * width, global + g * width, width);
  });
}

void program::placeBlock(const uint8_t *local, const TensorInfo &info,
                    const MeshShape &mesh, int64_t device, HostTensor &global) {
  int64_t width = byteSize(info.dtype);
  forEachBlockElement(info, mesh, device, [&](int64_t k, int64_t g) {
    if (g < 0)
      return;
    double f;
    int64_t i;
    loadElement(info.dtype, local + k * width, f, i);
    if (global.isFloat())
      global.f[g] = f;
    else
      global.i[g] = i;
  });
}

void program::placeBlockBytes(const uint8_t *local, const TensorInfo &info,
                              const MeshShape &mesh, int64_t device,
                              uint8_t *global) {
  int64_t width = byteSize(info.dtype);
  forEachBlockElement(info, mesh, device, [&](int64_t k, int64_t g) {
    if (g >= 0)
      std::memcpy(global + g * width, local + k * width, width);
  });
}

std::vector<int64_t> program::blockCoordinates(const TensorInfo &info,
                                               const MeshShape &mesh,
                                               int64_t device) {
  std::vector<int64_t> coords;
  for (const std::vector<std::string> &axes : info.dims)
    coords.push_back(mesh.groupIndex(device, axes));
  return coords;
}

void program::fillBlock(const TensorInfo &info, const InitSpec &spec,
                        uint64_t seed, uint64_t stream, const MeshShape &mesh,
                        int64_t device, uint8_t *local) {
  int64_t width = byteSize(info.dtype);
  HostTensor one(info.dtype, {});
  forEachBlockElement(info, mesh, device, [&](int64_t k, int64_t g) {
    if (g < 0) {
      std::memset(local + k * width, 0, width);
      return;
    }
    fillElement(one, 0, spec, seed, stream, g);
    storeElement(info.dtype, one.isFloat() ? one.f[0] : 0.0,
                 one.isFloat() ? 0 : one.i[0], local + k * width);
  });
}
