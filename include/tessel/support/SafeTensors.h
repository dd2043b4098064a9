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

#include <map>
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
llvm::Expected<NamedTensors> parseSafeTensors(llvm::StringRef bytes,
                                              llvm::StringRef path);
llvm::Expected<NamedTensors> readSafeTensors(llvm::StringRef path);

/// Serializes `tensors` into a safetensors image.
std::string serializeSafeTensors(const NamedTensors &tensors);
/// Writes atomically: the file either keeps its old contents or has the new.
llvm::Error writeSafeTensors(llvm::StringRef path, const NamedTensors &tensors);
/// Writes `bytes` to a temporary file beside `path`, then renames it over
/// `path`: readers see the old file or the new one, never a part.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes);

} // namespace tessel

#endif // TESSEL_SUPPORT_SAFETENSORS_H
