//===- Json.cpp - JSON from untrusted files --------------------------------===//

#include "tessel/support/Json.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace tessel;

llvm::Expected<llvm::json::Value> tessel::parseJson(llvm::StringRef text,
                                                    unsigned maxDepth) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "JSON nests deeper than %u levels (at byte %zu); not a file "
            "Tessel wrote",
            maxDepth, i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}

llvm::Expected<llvm::json::Value> tessel::readJsonFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot read " + path + ": " +
                                   buffer.getError().message());
  llvm::Expected<llvm::json::Value> json = parseJson((*buffer)->getBuffer());
  if (!json)
    return llvm::createStringError(path + ": " +
                                   llvm::toString(json.takeError()));
  return json;
}
