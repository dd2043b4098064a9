//===- NcclLibrary.h - NCCL, loaded when a run starts -----------*- C++ -*-===//
//
// Executables do not link NCCL: it is loaded (dlopen) from the file
// TESSEL_NCCL_LIBRARY names, the library path, or an installed
// `nvidia-nccl-cu13`/`-cu12` Python package (Bootstrap.h's
// sharedLibraryCandidates), and must be 2.18 or newer (ncclCommSplit).
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_CUDA_NCCLLIBRARY_H
#define TESSEL_RUNTIME_CUDA_NCCLLIBRARY_H

#include "llvm/Support/Error.h"

#include <nccl.h>

#include <string>

namespace tessel::rt {

#define TESSEL_NCCL_FUNCTIONS(X)                                               \
  X(ncclGetVersion)                                                            \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRank)                                                          \
  X(ncclCommSplit)                                                             \
  X(ncclCommDestroy)                                                           \
  X(ncclCommAbort)                                                             \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclGetErrorString)                                                        \
  X(ncclAllReduce)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclAllGather)                                                             \
  X(ncclSend)                                                                  \
  X(ncclRecv)                                                                  \
  X(ncclGroupStart)                                                            \
  X(ncclGroupEnd)

struct Nccl {
#define DECLARE(name) decltype(&::name) name = nullptr;
  TESSEL_NCCL_FUNCTIONS(DECLARE)
#undef DECLARE
  std::string path; ///< the file loaded
  int version = 0;  ///< NCCL_VERSION_CODE, e.g. 22809 for 2.28.9
};

/// NCCL, loaded on the first call; an error says where it looked and what
/// to install.
llvm::Expected<const Nccl *> loadNccl();

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_CUDA_NCCLLIBRARY_H
