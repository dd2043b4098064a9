//===- CustomCalls.cpp - finding custom-call kernels at run time ----------===//

#include "tessel/support/CustomCalls.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"

#include <mutex>
#include <string>
#include <vector>

using namespace tessel;

namespace {

struct Library {
  std::string path;
  llvm::sys::DynamicLibrary handle;
};

struct Registry {
  std::mutex mutex;
  std::vector<Library> libraries;
  llvm::StringMap<void *> kernels; // by symbol
};

Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

llvm::Error customcalls::loadLibraries(llvm::StringRef list) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  llvm::SmallVector<llvm::StringRef> paths;
  list.split(paths, ',', -1, false);
  for (llvm::StringRef p : paths) {
    std::string path = p.trim().str();
    // A file named relative to the working directory (dlopen would search
    // only the library path for a name without a slash).
    llvm::SmallString<256> absolute(path);
    if (llvm::sys::fs::exists(absolute) &&
        !llvm::sys::fs::make_absolute(absolute))
      path = absolute.str().str();
    if (llvm::any_of(r.libraries,
                     [&](const Library &l) { return l.path == path; }))
      continue;
    std::string error;
    auto handle = llvm::sys::DynamicLibrary::getPermanentLibrary(
        path.c_str(), &error);
    if (!handle.isValid())
      return llvm::createStringError("--custom-calls: cannot load '" + path +
                                     "': " + error);
    using Version = int32_t (*)();
    auto version = reinterpret_cast<Version>(
        handle.getAddressOfSymbol("tessel_custom_call_abi_version"));
    if (!version)
      return llvm::createStringError(
          "--custom-calls: '" + path +
          "' is not a custom-call library (it has no "
          "tessel_custom_call_abi_version; add TESSEL_CUSTOM_CALL_LIBRARY, "
          "tessel/runtime/CustomCall.h)");
    if (version() != TESSEL_CUSTOM_CALL_ABI_VERSION)
      return llvm::createStringError(
          "--custom-calls: '" + path + "' was built for custom-call ABI " +
          std::to_string(version()) + ", but this Tessel has ABI " +
          std::to_string(TESSEL_CUSTOM_CALL_ABI_VERSION) +
          ": rebuild it against this Tessel's tessel/runtime/CustomCall.h");
    r.libraries.push_back({path, handle});
  }
  return llvm::Error::success();
}

std::string customcalls::entrySymbol(llvm::StringRef name, Entry entry) {
  return (entry == Entry::Cuda ? "tessel_cuda_" : "") + name.str();
}

llvm::Expected<void *> customcalls::lookupEntry(llvm::StringRef name,
                                                Entry entry) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string symbol = entrySymbol(name, entry);
  auto it = r.kernels.find(symbol);
  if (it != r.kernels.end())
    return it->second;
  for (Library &l : r.libraries)
    if (void *address = l.handle.getAddressOfSymbol(symbol.c_str()))
      return r.kernels[symbol] = address;
  std::vector<std::string> searched;
  for (const Library &l : r.libraries)
    searched.push_back("'" + l.path + "'");
  std::string where =
      searched.empty() ? std::string("any library (give --custom-calls "
                                     "LIB.so)")
                       : llvm::join(searched, ", ");
  if (entry == Entry::Cuda)
    return llvm::createStringError(
        "custom call @" + name.str() + ": no GPU entry " + symbol + " in " +
        where + " (a program compiled for CUDA runs TESSEL_CUDA_KERNEL(" +
        name.str() + "), tessel/runtime/CustomCall.h)");
  return llvm::createStringError("custom call @" + name.str() +
                                 ": no kernel of that name in " + where);
}
