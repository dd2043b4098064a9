//===- HuggingFace.cpp - parameters from Hugging Face checkpoints ---------===//

#include "HuggingFace.h"

#include "llvm/Support/Regex.h"

using namespace tessel;
using namespace tessel::rt;
using program::TensorInfo;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Rows [0, rows) and columns [column, column + columns) of the 1-D or 2-D
/// tensor `e` (a 1-D tensor is one row): mapped where they are contiguous
/// (whole rows), else copied.
AssembledTensor part(const MappedSafeTensors &file,
                     const SafeTensorsIndex::Entry &e, int64_t rows,
                     int64_t column, int64_t columns) {
  int64_t width = e.shape.back(), element = byteSize(e.dtype);
  const uint8_t *data = file.bytesOf(e);
  AssembledTensor t;
  t.from.push_back(e.name);
  if (column == 0 && columns == width) {
    t.mapped = data;
    return t;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *row = data + (r * width + column) * element;
    t.bytes.insert(t.bytes.end(), row, row + columns * element);
  }
  t.mapped = t.bytes.data();
  return t;
}

/// The error for a GPT-2 tensor whose type does not give `info`.
llvm::Error mismatch(const MappedSafeTensors &file,
                     const SafeTensorsIndex::Entry &e, const TensorInfo &info,
                     llvm::StringRef what) {
  return fail(file.path + ": tensor '" + e.name + "' is " +
              typeString(e.dtype, e.shape) + ", which cannot give " + what +
              " of parameter '" + info.name + "' (" +
              typeString(info.dtype, info.globalShape) + ")");
}

} // namespace

bool tessel::rt::isGpt2File(const MappedSafeTensors &file) {
  return file.index.find("transformer.wte.weight") != nullptr;
}

bool tessel::rt::isGpt2Buffer(llvm::StringRef name) {
  static const llvm::Regex buffer(
      "^(transformer\\.h\\.[0-9]+\\.attn\\.(masked_)?bias|lm_head\\.weight)$");
  return buffer.match(name);
}

llvm::Expected<AssembledTensor>
tessel::rt::gpt2Parameter(const MappedSafeTensors &file,
                          const TensorInfo &info) {
  const Shape &shape = info.globalShape;
  if (!isGpt2File(file) || shape.empty() || shape.size() > 2)
    return AssembledTensor{};
  // q, k and v: thirds of the fused c_attn.
  static const llvm::Regex qkv(
      "^h\\.([0-9]+)\\.attn\\.(q|k|v)_proj\\.(weight|bias)$");
  llvm::SmallVector<llvm::StringRef> m;
  if (qkv.match(info.name, &m)) {
    std::string fused = ("transformer.h." + m[1] + ".attn.c_attn." + m[3]).str();
    const SafeTensorsIndex::Entry *e = file.index.find(fused);
    if (!e)
      return AssembledTensor{};
    int64_t width = shape.back(), third = m[2] == "q" ? 0 : m[2] == "k" ? 1 : 2;
    Shape want = shape;
    want.back() = 3 * width;
    if (e->dtype != info.dtype || e->shape != want)
      return mismatch(file, *e, info, "a third of the columns");
    return part(file, *e, shape.size() == 2 ? shape[0] : 1, third * width,
                width);
  }
  const SafeTensorsIndex::Entry *e = file.index.find("transformer." + info.name);
  if (!e)
    return AssembledTensor{};
  if (e->dtype == info.dtype && e->shape == shape)
    return part(file, *e, shape.size() == 2 ? shape[0] : 1, 0, shape.back());
  // A position table longer than the program's sequence: its first rows.
  if (info.name == "wpe.weight" && e->dtype == info.dtype &&
      e->shape.size() == 2 && shape.size() == 2 && e->shape[1] == shape[1] &&
      e->shape[0] >= shape[0])
    return part(file, *e, shape[0], 0, shape[1]);
  return mismatch(file, *e, info, "the values");
}
