//===- Program.cpp - the program description and block layouts -----------===//

#include "tessel/runtime/Program.h"
#include "tessel/support/Json.h"

#include "llvm/Support/JSON.h"

#include <cstring>

using namespace tessel;
using namespace tessel::rt;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "program description: " + message);
}

static std::optional<DType> dtypeNamed(llvm::StringRef name) {
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I1,
                  DType::I32, DType::I64})
    if (tessel::name(t) == name)
      return t;
  return std::nullopt;
}

static llvm::Error parseTensor(const llvm::json::Object &o, TensorInfo &t) {
  auto name = o.getString("name");
  auto dtype = o.getString("dtype");
  const llvm::json::Array *shape = o.getArray("shape");
  const llvm::json::Array *global = o.getArray("global_shape");
  const llvm::json::Array *dims = o.getArray("dims");
  if (!name || !dtype || !shape || !global || !dims)
    return fail("a tensor lacks name, dtype, shape, global_shape or dims");
  t.name = name->str();
  std::optional<DType> dt = dtypeNamed(*dtype);
  if (!dt)
    return fail("tensor '" + t.name + "' has an unknown dtype " + *dtype);
  t.dtype = *dt;
  for (const llvm::json::Value &v : *shape)
    t.shape.push_back(v.getAsInteger().value_or(-1));
  for (const llvm::json::Value &v : *global)
    t.globalShape.push_back(v.getAsInteger().value_or(-1));
  for (const llvm::json::Value &v : *dims) {
    t.dims.emplace_back();
    if (const llvm::json::Array *axes = v.getAsArray())
      for (const llvm::json::Value &a : *axes)
        t.dims.back().push_back(a.getAsString().value_or("").str());
  }
  if (t.shape.size() != t.globalShape.size() || t.dims.size() != t.shape.size())
    return fail("tensor '" + t.name + "' has inconsistent ranks");
  if (auto init = o.getString("init"))
    t.init = init->str();
  return llvm::Error::success();
}

llvm::Expected<Program> rt::parseProgram(llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> value = ::tessel::parseJson(json);
  if (!value)
    return fail(llvm::toString(value.takeError()));
  const llvm::json::Object *root = value->getAsObject();
  if (!root)
    return fail("not a JSON object");
  Program p;
  if (auto f = root->getString("function"))
    p.function = f->str();
  if (const llvm::json::Object *mesh = root->getObject("mesh")) {
    const llvm::json::Array *axes = mesh->getArray("axes");
    const llvm::json::Array *sizes = mesh->getArray("sizes");
    if (!axes || !sizes || axes->size() != sizes->size())
      return fail("the mesh needs axes and sizes of equal length");
    for (const llvm::json::Value &a : *axes)
      p.mesh.axisNames.push_back(a.getAsString().value_or("").str());
    for (const llvm::json::Value &s : *sizes)
      p.mesh.axisSizes.push_back(s.getAsInteger().value_or(1));
  }
  for (auto [key, list] : {std::pair{"arguments", &p.arguments},
                           std::pair{"results", &p.results}}) {
    const llvm::json::Array *items = root->getArray(key);
    if (!items)
      return fail(llvm::Twine("no ") + key);
    for (const llvm::json::Value &item : *items) {
      const llvm::json::Object *o = item.getAsObject();
      if (!o)
        return fail(llvm::Twine(key) + " must be objects");
      list->emplace_back();
      if (llvm::Error err = parseTensor(*o, list->back()))
        return std::move(err);
    }
  }
  if (const llvm::json::Object *target = root->getObject("target")) {
    auto text = [&](llvm::StringRef key) {
      return target->getString(key).value_or("").str();
    };
    p.target.triple = text("triple");
    p.target.cpu = text("cpu");
    p.target.requested = text("requested");
    if (const llvm::json::Array *features = target->getArray("features"))
      for (const llvm::json::Value &f : *features)
        p.target.features.push_back(f.getAsString().value_or("").str());
  }
  return p;
}

std::string rt::printProgram(const Program &p) {
  auto tensors = [](const std::vector<TensorInfo> &list) {
    llvm::json::Array out;
    for (const TensorInfo &t : list) {
      llvm::json::Array dims;
      for (const auto &axes : t.dims) {
        llvm::json::Array a;
        for (const std::string &axis : axes)
          a.push_back(axis);
        dims.push_back(std::move(a));
      }
      llvm::json::Object o{{"name", t.name},
                           {"dtype", tessel::name(t.dtype)},
                           {"shape", llvm::json::Array(t.shape)},
                           {"global_shape", llvm::json::Array(t.globalShape)},
                           {"dims", std::move(dims)}};
      if (!t.init.empty())
        o["init"] = t.init;
      out.push_back(std::move(o));
    }
    return out;
  };
  llvm::json::Array axes;
  for (const std::string &a : p.mesh.axisNames)
    axes.push_back(a);
  llvm::json::Object root{
      {"function", p.function},
      {"mesh",
       llvm::json::Object{{"axes", std::move(axes)},
                          {"sizes", llvm::json::Array(p.mesh.axisSizes)}}},
      {"arguments", tensors(p.arguments)},
      {"results", tensors(p.results)}};
  if (!p.target.cpu.empty()) {
    llvm::json::Array features;
    for (const std::string &f : p.target.features)
      features.push_back(f);
    root["target"] = llvm::json::Object{{"triple", p.target.triple},
                                        {"cpu", p.target.cpu},
                                        {"requested", p.target.requested},
                                        {"features", std::move(features)}};
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(root));
  return text;
}

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

void rt::sliceBlock(const HostTensor &global, const TensorInfo &info,
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

void rt::sliceBlockBytes(const uint8_t *global, const TensorInfo &info,
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

void rt::placeBlock(const uint8_t *local, const TensorInfo &info,
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
