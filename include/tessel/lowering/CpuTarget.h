//===- CpuTarget.h - the CPU an executable is compiled for -------*- C++ -*-===//
//
// tessel-compile --cpu. Kept apart from Lowering.h: it names the runtime's
// ::tessel::rt types, which code `using namespace mlir` would find ambiguous.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LOWERING_CPUTARGET_H
#define TESSEL_LOWERING_CPUTARGET_H

#include "tessel/runtime/CpuFeatures.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir::tessel {

/// The CPU an executable is compiled for (tessel-compile --cpu).
struct CpuSelection {
  ::tessel::rt::CpuTarget described; ///< recorded in the program description
  std::string llvmFeatures;          ///< explicit LLVM features ("native")
};
/// The default --cpu: x86-64-v3 on x86-64 hosts, generic elsewhere.
std::string defaultCpu();
/// Resolves a --cpu value ("" for the default) for the host's architecture.
llvm::Expected<CpuSelection> selectCpu(llvm::StringRef requested);
/// An LLVM target machine for `cpu` at `optLevel`.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CpuSelection &cpu, unsigned optLevel);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_CPUTARGET_H
