//===- DeviceTimeline.h - trace spans timed on a device's clock -*- C++ -*-===//
//
// A GPU runs what the host queued later than the host queued it, on streams
// of its own; a span timed on the host says when the host waited, not when
// the device worked. DeviceTimeline times spans on the device's clock (CUDA
// events recorded before and after the work on its stream) and places them
// on the host's timeline through one anchor: a mark the host waited for,
// whose device time is the host time at which the wait returned. Spans go to
// the rank's trace on a track of their own per stream (TraceEvent::track).
//
// The clock is an interface so that the bookkeeping is tested without a
// device (test/unit/DeviceTimelineTest.cpp); runtime/cuda/CudaTimeline.cpp
// implements it on CUDA events.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_DEVICETIMELINE_H
#define TESSEL_RUNTIME_DEVICETIMELINE_H

#include "RankContext.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace tessel::rt {

/// Marks on a device's streams and the time between them.
class DeviceClock {
public:
  using Mark = void *;
  virtual ~DeviceClock();
  /// Records a mark on `stream` behind the work queued there so far.
  virtual Mark mark(void *stream) = 0;
  /// Whether the device has passed `m` (the work before it is done).
  virtual bool reached(Mark m) = 0;
  /// Blocks the host until the device passes `m`.
  virtual void waitFor(Mark m) = 0;
  /// Microseconds from `from` to `to`, both reached.
  virtual double elapsedUs(Mark from, Mark to) = 0;
  /// Gives a mark back once read (the clock may reuse it).
  virtual void release(Mark m) = 0;
};

/// Spans of one rank's device work, resolved into its trace.
class DeviceTimeline {
public:
  explicit DeviceTimeline(DeviceClock &clock) : clock(clock) {}
  ~DeviceTimeline();
  DeviceTimeline(const DeviceTimeline &) = delete;
  DeviceTimeline &operator=(const DeviceTimeline &) = delete;

  /// Marks the start of a span on `stream`; `end` closes the latest one
  /// begun. Between them the caller queues the span's work on the stream.
  void begin(RankContext &ctx, void *stream, std::string name,
             const char *category, int track);
  void end();
  /// Adds the spans the device has finished, in the order they began, to
  /// `ctx.events`; with `wait`, waits for all of them first.
  void collect(RankContext &ctx, bool wait);
  size_t pending() const { return spans.size(); }

private:
  struct Span {
    std::string name;
    const char *category;
    int track;
    void *stream;
    DeviceClock::Mark start = nullptr, stop = nullptr;
  };
  DeviceClock &clock;
  /// The anchor: a mark the host waited for at host time anchorUs.
  DeviceClock::Mark anchor = nullptr;
  double anchorUs = 0;
  std::deque<Span> spans;
};

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_DEVICETIMELINE_H
