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

#include "llvm/Support/Error.h"

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessel::rt {

/// One complete event of a Chrome/Perfetto trace ("ph": "X").
struct TraceEvent {
  std::string name;
  /// "compute", "communication", "step" or "kernel" (GPU targets)
  const char *category;
  double startUs, durationUs;
  /// Where it ran: the rank's host thread, or a stream of its device, timed
  /// on the device's clock (DeviceTimeline.h).
  int track = kHostTrack;
  static constexpr int kHostTrack = 0, kDeviceCompute = 1,
                       kDeviceCommunication = 2;
};

/// A collective the program started (tessel_rt_collective_start_*) and has
/// not yet waited for; the wait names it by its result buffer.
struct InFlightCollective {
  void *out = nullptr;
  Request request;
  /// Packed input or received blocks, kept until the collective completes.
  std::vector<char> staging;
  /// Puts received blocks in place once complete (empty: nothing to do).
  std::function<void()> unpack;
};

struct RankContext {
  Communicator *comm = nullptr;
  /// The program's communicator groups (program::Program::groups), made
  /// at start-up; null where this rank is not a member.
  std::vector<std::unique_ptr<Group>> groups;
  /// Sends in flight with their bytes: a compiled send does not wait for
  /// its receiver (runtime/Abi.h); `completeCommunication` finishes them.
  std::deque<std::pair<std::vector<char>, Request>> sends;
  /// Collectives started and not yet waited for (runtime/Abi.h): the
  /// program waits for each before it reads the result or starts another.
  std::vector<InFlightCollective> collectives;
  /// Seconds spent in collectives and in matmuls (for progress reports).
  double commSeconds = 0, gemmSeconds = 0;
  /// Floating-point operations of the matmuls run so far (2*m*n*k each).
  double gemmFlops = 0;
  double halfGemmFlops = 0; ///< of gemmFlops, matmuls of 16-bit inputs
  /// With --trace: the events of this rank, microseconds from `origin`.
  bool tracing = false;
  std::chrono::steady_clock::time_point origin;
  std::vector<TraceEvent> events;

  /// tessel.region markers (runtime/Abi.h): the entry's region names, the
  /// open region (-1: none) and when it began.
  const std::vector<std::string> *regionNames = nullptr;
  int64_t openRegion = -1;
  double regionStartUs = 0;
  /// Testing (--fail-region): the region whose start fails this rank, and
  /// how ("exit" or "hang"); -1: none.
  int64_t failAtRegion = -1;
  std::string failMode;

  double nowUs() const {
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now() - origin)
        .count();
  }
};

/// Writes `ranks`' events as Chrome trace JSON (one thread per rank,
/// complete events in microseconds), atomically.
llvm::Error writeTrace(
    const std::string &path,
    const std::vector<std::pair<int64_t, std::vector<TraceEvent>>> &ranks);

RankContext &currentRank();
/// At an entry's return: waits for the sends `context` has in flight, and
/// stops the run if a collective was started and never waited for.
void completeCommunication(RankContext &context);
/// Ends the open tessel.region's span (at an entry's return, and when a
/// receive starts waiting).
void closeRegion(RankContext &context);
/// Testing: reports that this rank fails at `where`, then hangs
/// (`mode` "hang") or ends the process without a word to the others.
[[noreturn]] void failForTesting(int64_t rank, const std::string &where,
                                 const std::string &mode);
void setCurrentRank(RankContext *context);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_CPU_RANKCONTEXT_H
