//===- DeviceTimeline.cpp - trace spans timed on a device's clock ---------===//

#include "DeviceTimeline.h"

#include <cassert>

using namespace tessel::rt;

DeviceClock::~DeviceClock() = default;

DeviceTimeline::~DeviceTimeline() {
  for (Span &s : spans) {
    clock.release(s.start);
    if (s.stop)
      clock.release(s.stop);
  }
  if (anchor)
    clock.release(anchor);
}

void DeviceTimeline::begin(RankContext &ctx, void *stream, std::string name,
                           const char *category, int track) {
  if (!anchor) {
    // The first span's stream holds the anchor: the host waits for it and
    // takes the time the wait returned as the device's time of the mark.
    anchor = clock.mark(stream);
    clock.waitFor(anchor);
    anchorUs = ctx.nowUs();
  }
  spans.push_back(
      {std::move(name), category, track, stream, clock.mark(stream)});
}

void DeviceTimeline::end() {
  // Each span wraps one call's work: the latest begun is the one open.
  Span &open = spans.back();
  assert(!open.stop && "end() without begin()");
  open.stop = clock.mark(open.stream);
}

void DeviceTimeline::collect(RankContext &ctx, bool wait) {
  while (!spans.empty()) {
    Span &s = spans.front();
    if (!s.stop)
      return; // still open
    if (wait)
      clock.waitFor(s.stop);
    else if (!clock.reached(s.stop))
      return;
    double startUs = anchorUs + clock.elapsedUs(anchor, s.start);
    double durationUs = clock.elapsedUs(s.start, s.stop);
    ctx.events.push_back(
        {std::move(s.name), s.category, startUs, durationUs, s.track});
    clock.release(s.start);
    clock.release(s.stop);
    spans.pop_front();
  }
}
