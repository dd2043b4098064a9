//===- Json.h - JSON from untrusted files ------------------------*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level, so a file of a million
// '[' (a damaged or hostile safetensors header, rules file or checkpoint
// state) overflows the stack. Every reader of a file goes through
// parseJson, which refuses such text before parsing it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_JSON_H
#define TESSEL_SUPPORT_JSON_H

#include "llvm/Support/JSON.h"

namespace tessel {

/// The deepest nesting parseJson accepts; real files nest a few levels.
constexpr unsigned kMaxJsonDepth = 128;

/// llvm::json::parse, after checking that arrays and objects nest at most
/// `maxDepth` levels (strings and their escapes are skipped).
llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text,
                                            unsigned maxDepth = kMaxJsonDepth);

/// The file at `path`, read and parsed with parseJson; errors name it.
llvm::Expected<llvm::json::Value> readJsonFile(llvm::StringRef path);

} // namespace tessel

#endif // TESSEL_SUPPORT_JSON_H
