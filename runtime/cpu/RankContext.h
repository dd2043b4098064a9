//===- RankContext.h - the rank a runtime call runs on ----------*- C++ -*-===//
//
// Compiled programs call tessel_rt_* functions without saying which rank they
// run as; each rank's thread (or the one thread of an MPI process) sets this
// context before calling the program.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_CPU_RANKCONTEXT_H
#define TESSEL_RUNTIME_CPU_RANKCONTEXT_H

#include "tessel/runtime/Communicator.h"
#include "tessel/support/Mesh.h"

namespace tessel::rt {

struct RankContext {
  Communicator *comm = nullptr;
  const MeshShape *mesh = nullptr;
  int64_t device = 0;
  /// Seconds spent in collectives and in matmuls (for progress reports).
  double commSeconds = 0, gemmSeconds = 0;
  /// Floating-point operations of the matmuls run so far (2*m*n*k each).
  double gemmFlops = 0;
};

RankContext &currentRank();
void setCurrentRank(RankContext *context);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_CPU_RANKCONTEXT_H
