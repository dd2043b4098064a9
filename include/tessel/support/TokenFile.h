//===- TokenFile.h - flat token files (nanoGPT's .bin) ---------*- C++ -*-===//
//
// A token file is a flat array of little-endian uint16 (or uint32) token
// ids, as nanoGPT's prepare scripts write them. Batches are windows of it:
// batch k's row b starts at token ((k * B + b) * S) mod (N - S), its inputs
// are S tokens from there and its labels the S tokens one further, so every
// mesh (and the interpreter) sees the same global batch for step k, and a
// data-parallel rank reads the rows of its shard.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_TOKENFILE_H
#define TESSEL_SUPPORT_TOKENFILE_H

#include "tessel/support/HostTensor.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace tessel {

class TokenFile {
public:
  /// Maps `path`; `bytesPerToken` is 2 or 4. Rejects files that are empty,
  /// not a whole number of tokens, or shorter than `minTokens`.
  static llvm::Expected<TokenFile> open(llvm::StringRef path,
                                        unsigned bytesPerToken,
                                        uint64_t minTokens = 2);

  uint64_t size() const { return numTokens; }
  uint32_t at(uint64_t i) const;
  llvm::StringRef path() const { return filePath; }

  /// Fills `inputs` and `labels` (integer tensors [B, S], either may be null)
  /// with batch `k`. Fails, naming the file and position, on a token id
  /// >= `vocab` (when vocab > 0) or if the file is shorter than S + 1.
  llvm::Error batch(uint64_t k, HostTensor *inputs, HostTensor *labels,
                    int64_t vocab) const;

private:
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::string filePath;
  unsigned width = 2;
  uint64_t numTokens = 0;
};

} // namespace tessel

#endif // TESSEL_SUPPORT_TOKENFILE_H
