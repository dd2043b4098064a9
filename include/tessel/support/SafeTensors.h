//===- SafeTensors.h - read and write safetensors files ---------*- C++ -*-===//
//
// The Hugging Face format: an 8-byte little-endian header length N, N bytes
// of JSON mapping tensor names to {dtype, shape, data_offsets} (plus an
// optional "__metadata__" string map), then the raw little-endian data.
// Reading validates everything before touching data; writing is atomic
// (a temporary file in the same directory, then rename).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_SAFETENSORS_H
#define TESSEL_SUPPORT_SAFETENSORS_H

#include "tessel/support/HostTensor.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessel {

struct NamedTensors {
  /// Tensors in file order (writing keeps this order in the data section).
  std::vector<std::pair<std::string, HostTensor>> tensors;
  std::map<std::string, std::string> metadata;

  const HostTensor *find(llvm::StringRef name) const;
};

/// Parses a safetensors image. `path` only names the file in errors.
/// The validated header of a safetensors image: where each tensor's bytes
/// are in `data`.
struct SafeTensorsIndex {
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t begin, end; ///< byte range in `data`
    /// Where the index is merged from several files (a sharded model): the
    /// data section holding it, and that file's path.
    const char *base = nullptr;
    std::string source;
  };
  std::vector<Entry> entries; ///< in file order
  std::map<std::string, std::string> metadata;
  llvm::StringRef data;
  const Entry *find(llvm::StringRef name) const;
};
/// Checks the header of `bytes` (every dtype, shape and byte range);
/// `path` only names the file in errors.
llvm::Expected<SafeTensorsIndex> indexSafeTensors(llvm::StringRef bytes,
                                                  llvm::StringRef path);

/// A safetensors file mapped into memory, its header checked; or the
/// shards a Hugging Face index names, read as one file.
struct MappedSafeTensors {
  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> shards;
  SafeTensorsIndex index;
  static llvm::Expected<MappedSafeTensors> open(llvm::StringRef path);
  /// The shards `indexPath` (a model.safetensors.index.json) names, each
  /// tensor in the shard its weight_map gives (checked), as one file.
  static llvm::Expected<MappedSafeTensors> openSharded(llvm::StringRef indexPath);
  /// A safetensors file, an index (*.index.json), or a directory holding
  /// model.safetensors.index.json or model.safetensors (a Hugging Face
  /// model directory, a checkpoint step).
  static llvm::Expected<MappedSafeTensors> openAny(llvm::StringRef path);
  const uint8_t *bytesOf(const SafeTensorsIndex::Entry &e) const {
    return reinterpret_cast<const uint8_t *>(e.base ? e.base
                                                    : index.data.data()) +
           e.begin;
  }
  /// The file holding `e`, for messages.
  const std::string &pathOf(const SafeTensorsIndex::Entry &e) const {
    return e.source.empty() ? path : e.source;
  }
  /// Every tensor, decoded.
  NamedTensors decodeAll() const;
};

llvm::Expected<NamedTensors> parseSafeTensors(llvm::StringRef bytes,
                                              llvm::StringRef path);
llvm::Expected<NamedTensors> readSafeTensors(llvm::StringRef path);

/// Serializes `tensors` into a safetensors image.
std::string serializeSafeTensors(const NamedTensors &tensors);
/// Writes atomically: the file either keeps its old contents or has the new.
llvm::Error writeSafeTensors(llvm::StringRef path, const NamedTensors &tensors);

/// A tensor's raw little-endian bytes, for writing without a HostTensor.
struct RawTensor {
  std::string name;
  DType dtype;
  Shape shape;
  const uint8_t *data;
};
/// Writes `tensors` as a safetensors file (atomically).
llvm::Error writeSafeTensors(llvm::StringRef path,
                             llvm::ArrayRef<RawTensor> tensors);
/// Writes `bytes` to a temporary file beside `path`, then renames it over
/// `path`: readers see the old file or the new one, never a part.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes);

} // namespace tessel

#endif // TESSEL_SUPPORT_SAFETENSORS_H
