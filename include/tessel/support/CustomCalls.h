//===- CustomCalls.h - finding custom-call kernels at run time --*- C++ -*-===//
//
// The libraries given with --custom-calls, loaded once per process, and the
// kernels found in them by name (include/tessel/runtime/CustomCall.h). The
// interpreter and the runtime of compiled programs share it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_CUSTOMCALLS_H
#define TESSEL_SUPPORT_CUSTOMCALLS_H

#include "tessel/runtime/CustomCall.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tessel::customcalls {

/// Loads the comma-separated libraries of `list` (each once); a file that
/// does not load, or of another ABI version, is an error naming it.
llvm::Error loadLibraries(llvm::StringRef list);

/// Which of a kernel's entries: the CPU function NAME or the GPU function
/// tessel_cuda_NAME (tessel/runtime/CustomCall.h).
enum class Entry { Cpu, Cuda };

/// The symbol of kernel `name`'s `entry`.
std::string entrySymbol(llvm::StringRef name, Entry entry);

/// Kernel `name`'s `entry` from the loaded libraries (the first that has
/// it); an error naming the kernel, the symbol and the libraries searched.
llvm::Expected<void *> lookupEntry(llvm::StringRef name, Entry entry);

/// The CPU entry of kernel `name`.
inline llvm::Expected<TesselCpuKernel> lookup(llvm::StringRef name) {
  llvm::Expected<void *> f = lookupEntry(name, Entry::Cpu);
  if (!f)
    return f.takeError();
  return reinterpret_cast<TesselCpuKernel>(*f);
}

} // namespace tessel::customcalls

#endif // TESSEL_SUPPORT_CUSTOMCALLS_H
