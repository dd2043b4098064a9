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

namespace tessel::customcalls {

/// Loads the comma-separated libraries of `list` (each once); a file that
/// does not load, or of another ABI version, is an error naming it.
llvm::Error loadLibraries(llvm::StringRef list);

/// The kernel `name` from the loaded libraries (the first that has it); an
/// error naming the kernel and the libraries searched.
llvm::Expected<TesselCpuKernel> lookup(llvm::StringRef name);

} // namespace tessel::customcalls

#endif // TESSEL_SUPPORT_CUSTOMCALLS_H
