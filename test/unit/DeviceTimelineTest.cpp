//===- DeviceTimelineTest.cpp - trace spans on a device's clock -----------===//
//
// runtime/cpu/DeviceTimeline.h on a simulated device clock: the CUDA
// events it runs on in GPU programs are not available without a GPU.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/cpu/DeviceTimeline.h"

#include <gtest/gtest.h>

#include <map>

using namespace tessel::rt;

namespace {

/// A device whose marks complete at times the test sets; `now` is how far
/// the device has got.
class FakeClock final : public DeviceClock {
public:
  /// The device time of the next marks, in the order they are recorded.
  std::vector<double> plan;
  double now = 0;
  int waits = 0;
  std::map<Mark, double> live;
  std::vector<void *> streams; ///< of every mark recorded

  Mark mark(void *stream) override {
    Mark m = reinterpret_cast<Mark>(++counter);
    live[m] = plan.at(next++);
    streams.push_back(stream);
    return m;
  }
  bool reached(Mark m) override { return live.at(m) <= now; }
  void waitFor(Mark m) override {
    ++waits;
    now = std::max(now, live.at(m));
  }
  double elapsedUs(Mark from, Mark to) override {
    EXPECT_TRUE(reached(from) && reached(to)) << "elapsed of unfinished marks";
    return live.at(to) - live.at(from);
  }
  void release(Mark m) override { EXPECT_EQ(live.erase(m), 1u); }

private:
  uintptr_t counter = 0;
  size_t next = 0;
};

int stream1, stream2; // addresses as stream handles

/// A rank's context and its simulated device.
struct DeviceTimelineTest : ::testing::Test {
  void SetUp() override { ctx.origin = std::chrono::steady_clock::now(); }
  FakeClock clock;
  RankContext ctx;
};

TEST_F(DeviceTimelineTest, SpansOnTheDeviceClockAnchoredToTheHost) {
  // The anchor at 100 us of device time, a kernel from 150 to 400, a
  // collective on the other stream from 420 to 1420.
  clock.plan = {100, 150, 400, 420, 1420};
  {
    DeviceTimeline spans(clock);
    spans.begin(ctx, &stream1, "fused_0", "kernel", TraceEvent::kDeviceCompute);
    EXPECT_EQ(clock.waits, 1) << "the host waits for the anchor only";
    spans.end();
    spans.begin(ctx, &stream2, "all_reduce 64 B", "communication",
                TraceEvent::kDeviceCommunication);
    spans.end();
    EXPECT_EQ(clock.streams,
              (std::vector<void *>{&stream1, &stream1, &stream1, &stream2,
                                   &stream2}));

    // The device has done the kernel, not the collective: one span out.
    clock.now = 410;
    spans.collect(ctx, /*wait=*/false);
    ASSERT_EQ(ctx.events.size(), 1u);
    EXPECT_EQ(spans.pending(), 1u);
    TraceEvent kernel = ctx.events[0]; // a copy: collect appends
    EXPECT_EQ(kernel.name, "fused_0");
    EXPECT_STREQ(kernel.category, "kernel");
    EXPECT_EQ(kernel.track, TraceEvent::kDeviceCompute);
    EXPECT_DOUBLE_EQ(kernel.durationUs, 250);
    // 50 us after the anchor, which the host saw no later than now.
    EXPECT_GE(kernel.startUs, 50);
    EXPECT_LE(kernel.startUs, ctx.nowUs() + 50);

    // At the end of the run the host waits for the rest.
    spans.collect(ctx, /*wait=*/true);
    ASSERT_EQ(ctx.events.size(), 2u);
    EXPECT_EQ(spans.pending(), 0u);
    TraceEvent collective = ctx.events[1];
    EXPECT_EQ(collective.track, TraceEvent::kDeviceCommunication);
    EXPECT_DOUBLE_EQ(collective.durationUs, 1000);
    EXPECT_DOUBLE_EQ(collective.startUs - kernel.startUs, 270);
    EXPECT_EQ(clock.live.size(), 1u) << "only the anchor is still held";
  }
  EXPECT_TRUE(clock.live.empty()) << "every mark given back";
}

TEST_F(DeviceTimelineTest, OpenAndUnfinishedSpansWait) {
  clock.plan = {0, 10, 20, 30, 40};
  {
    DeviceTimeline spans(clock);
    spans.begin(ctx, &stream1, "a", "kernel", TraceEvent::kDeviceCompute);
    spans.end();
    spans.begin(ctx, &stream1, "b", "kernel", TraceEvent::kDeviceCompute);
    // "b" is open: its work is still being queued; "a" is not reached.
    spans.collect(ctx, /*wait=*/false);
    EXPECT_TRUE(ctx.events.empty());
    clock.now = 100;
    spans.collect(ctx, /*wait=*/false);
    ASSERT_EQ(ctx.events.size(), 1u) << "an open span stays pending";
    spans.end();
    spans.collect(ctx, /*wait=*/false);
    ASSERT_EQ(ctx.events.size(), 2u);
    EXPECT_EQ(ctx.events[1].name, "b");
    EXPECT_DOUBLE_EQ(ctx.events[1].durationUs, 10);
    // Spans still pending when the timeline ends give their marks back.
    clock.plan.push_back(50);
    clock.plan.push_back(60);
    spans.begin(ctx, &stream1, "c", "kernel", TraceEvent::kDeviceCompute);
    spans.end();
  }
  EXPECT_TRUE(clock.live.empty());
}

} // namespace
