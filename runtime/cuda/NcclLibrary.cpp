//===- NcclLibrary.cpp - NCCL, loaded when a run starts -------------------===//

#include "NcclLibrary.h"

#include "tessel/runtime/Bootstrap.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <dlfcn.h>

#include <vector>

using namespace tessel::rt;

namespace {

/// NCCL 2.18 brought ncclCommSplit, which groups are made with.
constexpr int kMinimumVersion = 21800;

llvm::Expected<Nccl> load() {
  std::vector<std::string> tried;
  void *h = nullptr;
  Nccl n;
  for (const std::string &candidate :
       sharedLibraryCandidates("libnccl.so.2", "nvidia/nccl/lib",
                               "TESSEL_NCCL_LIBRARY")) {
    tried.push_back(candidate);
    if ((h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      n.path = candidate;
      break;
    }
  }
  if (!h)
    return llvm::createStringError(
        "this program's ranks communicate through NCCL, and libnccl.so.2 is "
        "not installed where it looks (" +
        llvm::join(tried, ", ") +
        "); pip install nvidia-nccl-cu13 (or -cu12), add NCCL's lib "
        "directory to LD_LIBRARY_PATH, or set TESSEL_NCCL_LIBRARY to the "
        "file");
#define LOAD(name)                                                             \
  n.name = reinterpret_cast<decltype(n.name)>(dlsym(h, #name));                \
  if (!n.name)                                                                 \
    return llvm::createStringError(n.path + " lacks " #name                   \
                                   " (NCCL 2.18 or newer is needed)");
  TESSEL_NCCL_FUNCTIONS(LOAD)
#undef LOAD
  n.ncclGetVersion(&n.version);
  if (n.version < kMinimumVersion)
    return llvm::createStringError(llvm::formatv(
        "{0} is NCCL {1}.{2}.{3}, and Tessel needs 2.18 or newer "
        "(ncclCommSplit); install a newer nvidia-nccl package",
        n.path, n.version / 10000, n.version / 100 % 100, n.version % 100));
  return n;
}

} // namespace

llvm::Expected<const Nccl *> tessel::rt::loadNccl() {
  static llvm::Expected<Nccl> nccl = load();
  if (!nccl) {
    // Keep the message for later calls.
    static std::string why = llvm::toString(nccl.takeError());
    return llvm::createStringError(why);
  }
  return &*nccl;
}
