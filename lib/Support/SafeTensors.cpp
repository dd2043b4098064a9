//===- SafeTensors.cpp - read and write safetensors files -----------------===//

#include "tessel/support/SafeTensors.h"
#include "tessel/support/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <tuple>

using namespace tessel;

const HostTensor *NamedTensors::find(llvm::StringRef name) const {
  for (const auto &[n, t] : tensors)
    if (n == name)
      return &t;
  return nullptr;
}

template <typename... Ts>
static llvm::Error fail(llvm::StringRef path, const char *fmt, Ts &&...args) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      (path + ": " + llvm::formatv(fmt, std::forward<Ts>(args)...).str())
          .str());
}

/// Reads a non-negative integer from a JSON value.
static std::optional<int64_t> asIndex(const llvm::json::Value &v) {
  std::optional<int64_t> n = v.getAsInteger();
  if (!n || *n < 0)
    return std::nullopt;
  return n;
}

llvm::Expected<SafeTensorsIndex>
tessel::indexSafeTensors(llvm::StringRef bytes, llvm::StringRef path) {
  if (bytes.size() < 8)
    return fail(path, "file is {0} bytes, too short for a safetensors header",
                bytes.size());
  uint64_t headerSize;
  std::memcpy(&headerSize, bytes.data(), 8);
  if (headerSize > bytes.size() - 8)
    return fail(path,
                "header length {0} runs past the end of the file ({1} bytes)",
                headerSize, bytes.size());
  // The format's own limit (100 MB); a larger length is damage.
  if (headerSize > 100'000'000)
    return fail(path, "header length {0} is over the format's 100 MB limit",
                headerSize);
  llvm::StringRef header = bytes.substr(8, headerSize);
  llvm::StringRef data = bytes.drop_front(8 + headerSize);
  llvm::Expected<llvm::json::Value> json = ::tessel::parseJson(header);
  if (!json)
    return fail(path, "header is not valid JSON: {0}",
                llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail(path, "header must be a JSON object");

  SafeTensorsIndex result;
  result.data = data;
  for (const auto &[key, value] : *root) {
    std::string name = key.str();
    if (name == "__metadata__") {
      const llvm::json::Object *meta = value.getAsObject();
      if (!meta)
        return fail(path, "__metadata__ must be an object of strings");
      for (const auto &[mk, mv] : *meta) {
        std::optional<llvm::StringRef> s = mv.getAsString();
        if (!s)
          return fail(path, "__metadata__ entry '{0}' is not a string",
                      mk.str());
        result.metadata[mk.str()] = s->str();
      }
      continue;
    }
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return fail(path, "tensor '{0}': entry is not an object", name);
    std::optional<llvm::StringRef> dtypeName = entry->getString("dtype");
    if (!dtypeName)
      return fail(path, "tensor '{0}': missing dtype", name);
    std::optional<DType> dtype = fromSafetensorsName(*dtypeName);
    if (!dtype)
      return fail(path, "tensor '{0}': unsupported dtype '{1}'", name,
                  *dtypeName);
    const llvm::json::Array *shapeArray = entry->getArray("shape");
    if (!shapeArray)
      return fail(path, "tensor '{0}': missing shape", name);
    Shape shape;
    uint64_t elements = 1;
    for (const llvm::json::Value &d : *shapeArray) {
      std::optional<int64_t> dim = asIndex(d);
      if (!dim)
        return fail(path, "tensor '{0}': shape entries must be non-negative "
                          "integers",
                    name);
      if (*dim != 0 && elements > (uint64_t(1) << 48) / uint64_t(*dim))
        return fail(path, "tensor '{0}': shape is too large", name);
      elements *= *dim;
      shape.push_back(*dim);
    }
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!offsets || offsets->size() != 2 || !asIndex((*offsets)[0]) ||
        !asIndex((*offsets)[1]))
      return fail(path, "tensor '{0}': data_offsets must be [begin, end]",
                  name);
    uint64_t begin = *asIndex((*offsets)[0]), end = *asIndex((*offsets)[1]);
    if (begin > end || end > data.size())
      return fail(path,
                  "tensor '{0}': data_offsets [{1}, {2}] are outside the {3} "
                  "data bytes (truncated file?)",
                  name, begin, end, data.size());
    uint64_t expected = elements * byteSize(*dtype);
    if (end - begin != expected)
      return fail(path,
                  "tensor '{0}': {1} {2} needs {3} bytes but data_offsets "
                  "give {4}",
                  name, safetensorsName(*dtype),
                  typeString(*dtype, shape), expected,
                  end - begin);
    result.entries.push_back({name, *dtype, shape, begin, end});
  }
  // File order (the JSON object's key order is not preserved).
  llvm::sort(result.entries, [](const SafeTensorsIndex::Entry &a,
                                const SafeTensorsIndex::Entry &b) {
    return a.begin < b.begin;
  });
  return result;
}

const SafeTensorsIndex::Entry *
SafeTensorsIndex::find(llvm::StringRef name) const {
  for (const Entry &e : entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

/// The tensor at `src` (of `e`'s dtype and shape), decoded.
static HostTensor decode(const SafeTensorsIndex::Entry &e, const uint8_t *src) {
  HostTensor t(e.dtype, e.shape);
  int64_t bytesPer = byteSize(e.dtype);
  for (int64_t k = 0, n = t.size(); k < n; ++k) {
    double fv;
    int64_t iv;
    loadElement(e.dtype, src + k * bytesPer, fv, iv);
    if (t.isFloat())
      t.f[k] = fv;
    else
      t.i[k] = iv;
  }
  return t;
}

llvm::Expected<NamedTensors> tessel::parseSafeTensors(llvm::StringRef bytes,
                                                      llvm::StringRef path) {
  llvm::Expected<SafeTensorsIndex> index = indexSafeTensors(bytes, path);
  if (!index)
    return index.takeError();
  NamedTensors result;
  result.metadata = index->metadata;
  for (const SafeTensorsIndex::Entry &e : index->entries)
    result.tensors.emplace_back(
        e.name, decode(e, reinterpret_cast<const uint8_t *>(
                              index->data.data()) + e.begin));
  return result;
}

NamedTensors MappedSafeTensors::decodeAll() const {
  NamedTensors result;
  result.metadata = index.metadata;
  for (const SafeTensorsIndex::Entry &e : index.entries)
    result.tensors.emplace_back(e.name, decode(e, bytesOf(e)));
  return result;
}

llvm::Expected<MappedSafeTensors>
MappedSafeTensors::open(llvm::StringRef path) {
  // Large files are mapped, not read: a rank touches only its blocks' pages.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(path, "cannot read: {0}", buffer.getError().message());
  llvm::Expected<SafeTensorsIndex> index =
      indexSafeTensors((*buffer)->getBuffer(), path);
  if (!index)
    return index.takeError();
  MappedSafeTensors m;
  m.path = path.str();
  m.buffer = std::move(*buffer);
  m.index = std::move(*index);
  return m;
}
llvm::Expected<MappedSafeTensors>
MappedSafeTensors::openSharded(llvm::StringRef indexPath) {
  auto text = llvm::MemoryBuffer::getFile(indexPath);
  if (!text)
    return fail(indexPath, "cannot read: {0}", text.getError().message());
  llvm::Expected<llvm::json::Value> json = parseJson((*text)->getBuffer());
  if (!json)
    return fail(indexPath, "{0}", llvm::toString(json.takeError()));
  const llvm::json::Object *o = json->getAsObject();
  const llvm::json::Object *map = o ? o->getObject("weight_map") : nullptr;
  if (!map)
    return fail(indexPath, "no \"weight_map\" object");
  // Each shard once, in name order; which tensor it must hold.
  std::map<std::string, std::vector<std::string>> shards;
  for (const auto &[tensor, file] : *map) {
    std::optional<llvm::StringRef> f = file.getAsString();
    if (!f || f->empty() || f->contains('/') || f->contains('\\') ||
        *f == "." || *f == "..")
      return fail(indexPath, "tensor '{0}' names no file beside the index",
                  tensor.str());
    shards[f->str()].push_back(tensor.str());
  }
  MappedSafeTensors m;
  m.path = indexPath.str();
  llvm::StringRef dir = llvm::sys::path::parent_path(indexPath);
  for (const auto &[name, tensors] : shards) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    llvm::Expected<MappedSafeTensors> shard = open(path);
    if (!shard)
      return shard.takeError();
    for (const std::string &t : tensors)
      if (!shard->index.find(t))
        return fail(path, "the index names tensor '{0}' here, but the file "
                          "does not hold it", t);
    for (SafeTensorsIndex::Entry &e : shard->index.entries) {
      if (m.index.find(e.name))
        return fail(path, "tensor '{0}' is in two shards", e.name);
      e.base = shard->index.data.data();
      e.source = std::string(path);
      m.index.entries.push_back(std::move(e));
    }
    m.shards.push_back(std::move(shard->buffer));
  }
  return m;
}

llvm::Expected<MappedSafeTensors>
MappedSafeTensors::openAny(llvm::StringRef path) {
  if (path.ends_with(".index.json"))
    return openSharded(path);
  if (!llvm::sys::fs::is_directory(path))
    return open(path);
  llvm::SmallString<256> index(path), single(path);
  llvm::sys::path::append(index, "model.safetensors.index.json");
  llvm::sys::path::append(single, "model.safetensors");
  if (llvm::sys::fs::exists(index))
    return openSharded(index);
  if (llvm::sys::fs::exists(single))
    return open(single);
  return fail(path, "a directory without model.safetensors.index.json or "
                    "model.safetensors");
}

llvm::Expected<NamedTensors> tessel::readSafeTensors(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(path, "cannot read: {0}", buffer.getError().message());
  return parseSafeTensors((*buffer)->getBuffer(), path);
}

/// The 8-byte size, the JSON header and the data section (zeroed) of a file
/// holding tensors of these names, dtypes and shapes; `dataStart` is where
/// the data section begins.
static std::string
layoutSafeTensors(llvm::ArrayRef<std::tuple<llvm::StringRef, DType, Shape>> list,
                  const std::map<std::string, std::string> &metadata,
                  size_t &dataStart) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const auto &[name, dtype, shape] : list) {
    uint64_t bytes = numElements(shape) * byteSize(dtype);
    llvm::json::Array dims;
    for (int64_t d : shape)
      dims.push_back(d);
    header[name] = llvm::json::Object{
        {"dtype", safetensorsName(dtype)},
        {"shape", std::move(dims)},
        {"data_offsets", llvm::json::Array{offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) {
    llvm::json::Object meta;
    for (const auto &[k, v] : metadata)
      meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::string headerText;
  llvm::raw_string_ostream os(headerText);
  os << llvm::json::Value(std::move(header));
  os.flush();
  while ((headerText.size() + 8) % 8)
    headerText.push_back(' '); // align the data section
  std::string out(8, '\0');
  uint64_t headerSize = headerText.size();
  std::memcpy(out.data(), &headerSize, 8);
  out += headerText;
  dataStart = out.size();
  out.resize(dataStart + offset);
  return out;
}

std::string tessel::serializeSafeTensors(const NamedTensors &tensors) {
  std::vector<std::tuple<llvm::StringRef, DType, Shape>> list;
  for (const auto &[name, t] : tensors.tensors)
    list.emplace_back(name, t.dtype, t.shape);
  size_t dataStart;
  std::string out = layoutSafeTensors(list, tensors.metadata, dataStart);
  uint8_t *dst = reinterpret_cast<uint8_t *>(out.data()) + dataStart;
  for (const auto &[name, t] : tensors.tensors) {
    int64_t bytesPer = byteSize(t.dtype);
    for (int64_t k = 0, n = t.size(); k < n; ++k)
      storeElement(t.dtype, t.isFloat() ? t.f[k] : 0.0,
                   t.isFloat() ? 0 : t.i[k], dst + k * bytesPer);
    dst += t.size() * bytesPer;
  }
  return out;
}

llvm::Error tessel::writeSafeTensors(llvm::StringRef path,
                                     llvm::ArrayRef<RawTensor> tensors) {
  std::vector<std::tuple<llvm::StringRef, DType, Shape>> list;
  for (const RawTensor &t : tensors)
    list.emplace_back(t.name, t.dtype, t.shape);
  size_t dataStart;
  std::string out = layoutSafeTensors(list, {}, dataStart);
  char *dst = out.data() + dataStart;
  for (const RawTensor &t : tensors) {
    size_t bytes = numElements(t.shape) * byteSize(t.dtype);
    if (bytes)
      std::memcpy(dst, t.data, bytes);
    dst += bytes;
  }
  return writeFileAtomically(path, out);
}

llvm::Error tessel::writeFileAtomically(llvm::StringRef path,
                                        llvm::StringRef bytes) {
  llvm::SmallString<256> temp;
  int fd;
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  llvm::SmallString<256> model(dir.empty() ? "." : dir);
  llvm::sys::path::append(model, llvm::sys::path::filename(path) +
                                     ".tmp-%%%%%%");
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return fail(path, "cannot create a temporary file: {0}", ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.flush();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temp);
      return fail(path, "write failed: {0}", message);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return fail(path, "cannot rename the temporary file into place: {0}",
                ec.message());
  }
  return llvm::Error::success();
}

llvm::Error tessel::writeSafeTensors(llvm::StringRef path,
                                     const NamedTensors &tensors) {
  return writeFileAtomically(path, serializeSafeTensors(tensors));
}
