//===- TokenFile.cpp - flat token files -----------------------------------===//

#include "tessel/support/TokenFile.h"

#include "llvm/Support/Endian.h"

#include <algorithm>

using namespace tessel;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

llvm::Expected<TokenFile> TokenFile::open(llvm::StringRef path,
                                          unsigned bytesPerToken,
                                          uint64_t minTokens) {
  if (bytesPerToken != 2 && bytesPerToken != 4)
    return fail("token files hold uint16 or uint32 tokens, not " +
                llvm::Twine(bytesPerToken) + "-byte ones");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(path + ": cannot read: " + buffer.getError().message());
  uint64_t bytes = (*buffer)->getBufferSize();
  if (bytes % bytesPerToken)
    return fail(path + ": " + llvm::Twine(bytes) +
                " bytes is not a whole number of " +
                (bytesPerToken == 2 ? "uint16" : "uint32") +
                " tokens; hint: the file is truncated, or pass the right "
                "token type");
  TokenFile file;
  file.numTokens = bytes / bytesPerToken;
  if (file.numTokens < minTokens)
    return fail(path + ": has " + llvm::Twine(file.numTokens) +
                " tokens; at least " + llvm::Twine(minTokens) +
                " are needed");
  file.buffer = std::move(*buffer);
  file.filePath = path.str();
  file.width = bytesPerToken;
  return std::move(file);
}

uint32_t TokenFile::at(uint64_t i) const {
  const char *p = buffer->getBufferStart() + i * width;
  if (width == 2)
    return llvm::support::endian::read16le(p);
  return llvm::support::endian::read32le(p);
}

llvm::Error TokenFile::batch(uint64_t k, HostTensor *inputs,
                             HostTensor *labels, int64_t vocab) const {
  const HostTensor *like = inputs ? inputs : labels;
  if (!like)
    return llvm::Error::success();
  for (const HostTensor *t : {inputs, labels})
    if (t && (t->rank() < 2 || t->shape != like->shape))
      return fail(filePath + ": token batches are [batch, sequence] integer "
                             "tensors (or [microbatch, batch, sequence]), "
                             "got " + t->typeString());
  // Leading dimensions are rows: a pipeline's [m, b, S] is m*b sequences,
  // microbatch i the rows i*b .. i*b + b - 1 (micro-step i of --batch-size).
  int64_t S = like->shape.back(), B = like->size() / std::max<int64_t>(S, 1);
  if (numTokens < static_cast<uint64_t>(S) + 1)
    return fail(filePath + ": has " + llvm::Twine(numTokens) +
                " tokens, fewer than a sequence of " + llvm::Twine(S) +
                " plus its next token");
  uint64_t span = numTokens - S;
  for (int64_t b = 0; b < B; ++b) {
    uint64_t start = ((k * B + b) * static_cast<uint64_t>(S)) % span;
    for (int64_t s = 0; s < S; ++s)
      for (auto [t, offset] : {std::pair{inputs, 0}, std::pair{labels, 1}}) {
        if (!t)
          continue;
        uint64_t position = start + s + offset;
        uint32_t token = at(position);
        if (vocab > 0 && token >= vocab)
          return fail(filePath + ": token " + llvm::Twine(token) +
                      " at position " + llvm::Twine(position) +
                      " is outside the model's vocabulary of " +
                      llvm::Twine(vocab));
        t->setI(b * S + s, token);
      }
  }
  return llvm::Error::success();
}
