//===- CpuFeatures.h - does this machine have what a program needs -*- C++ -*-//
//
// tessel-compile records in every executable the target CPU it compiled for
// and the instruction-set features that CPU has (LLVM's names: "avx2",
// "avx512bf16", ...). Before running any compiled code the executable asks
// its machine for the same features and, if one is missing, stops with a
// message naming it and the --cpu to compile with, instead of dying with
// SIGILL inside a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_CPUFEATURES_H
#define TESSEL_RUNTIME_CPUFEATURES_H

#include <string>
#include <vector>

namespace tessel::rt {

/// What a program was compiled for.
struct CpuTarget {
  std::string triple;    ///< LLVM target triple, e.g. x86_64-pc-linux-gnu
  std::string cpu;       ///< LLVM CPU name, e.g. x86-64-v3 or sapphirerapids
  std::string requested; ///< the --cpu given (native, x86-64-v3, ...)
  std::vector<std::string> features; ///< ISA features the code may use
};

/// The architecture this runtime was built for ("x86_64", "aarch64", ...).
std::string hostArch();

/// The instruction-set features of this machine that `isCheckableCpuFeature`
/// names (x86: CPUID, and for AVX/AVX-512/AMX also the OS's saved state).
std::vector<std::string> hostCpuFeatures();

/// Whether `hostCpuFeatures` can tell if this machine has `feature`; the
/// compiler records only such features (the others are tuning flags).
bool isCheckableCpuFeature(const std::string &arch, const std::string &feature);

/// The portable CPU name (x86-64-v4/v3/v2/x86-64 on x86) a machine with
/// `host` features can run; empty where there is none to suggest.
std::string portableCpuFor(const std::string &arch,
                           const std::vector<std::string> &host);

/// Why a program compiled for `target` cannot run on a machine of `arch`
/// with `host` features (one sentence naming what is missing and the --cpu to
/// compile with); empty when it can.
std::string cpuMismatch(const CpuTarget &target, const std::string &arch,
                        const std::vector<std::string> &host);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_CPUFEATURES_H
