//===- Random.h - counter-based random numbers and initializers -*- C++ -*-===//
//
// Every random value Tessel produces is a pure function of (seed, stream,
// element index): independent of the mesh, the shard a device holds, the
// thread that computes it, or the order of computation. The interpreter and
// the runtime share these functions, so both initialize a model identically.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_RANDOM_H
#define TESSEL_SUPPORT_RANDOM_H

#include "tessel/support/HostTensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace tessel {

/// SplitMix64's output function.
uint64_t splitmix64(uint64_t x);

/// A stream id for a named tensor (FNV-1a of the name).
uint64_t streamOf(llvm::StringRef name);

/// Uniform in [0, 1) with 53 random bits, from (seed, stream, counter).
double uniform01(uint64_t seed, uint64_t stream, uint64_t counter);

/// Standard normal (Box-Muller over counters 2k and 2k+1).
double standardNormal(uint64_t seed, uint64_t stream, uint64_t k);

/// How a tensor is initialized. Spelled as in `tessel.init`:
///   "zeros" | "ones" | "constant:V" | "normal:STD" | "uniform:LO:HI" | "int:LO:HI" (ints in
///   [LO, HI)) | "bernoulli:P".
struct InitSpec {
  enum Kind { Zeros, Ones, Constant, Normal, Uniform, IntRange, Bernoulli } kind =
      Normal;
  double a = 1.0, b = 0.0;
};

llvm::Expected<InitSpec> parseInitSpec(llvm::StringRef spec);
std::string printInitSpec(const InitSpec &spec);

/// Sets element `k` of `t` (of any dtype) to the value of `spec` at
/// `counter`.
void fillElement(HostTensor &t, int64_t k, const InitSpec &spec, uint64_t seed,
                 uint64_t stream, uint64_t counter);
/// Fills `t` (of any dtype) from `spec`, element k using counter k.
void fillTensor(HostTensor &t, const InitSpec &spec, uint64_t seed,
                uint64_t stream);

/// The value of a seed-role argument on call `call` (counted over every
/// micro-step of the run) of a run seeded `runSeed`: a new 64-bit seed per
/// call, the same when a run resumes.
uint64_t callSeed(uint64_t runSeed, uint64_t call);

/// The dropout keep test of `tessel.dropout_mask`: the top 24 bits of
/// splitmix64(splitmix64(seed) + index), over 2^24, are at least `rate`.
bool dropoutKeep(uint64_t seed, uint64_t index, double rate);

} // namespace tessel

#endif // TESSEL_SUPPORT_RANDOM_H
