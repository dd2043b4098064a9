//===- ScheduleTest.cpp - pipeline schedules: build, verify, simulate -----===//

#include "tessel/pipeline/Schedule.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tessel::pipeline;

namespace {

ScheduleOptions options(ScheduleKind kind, int64_t ranks, int64_t microbatches,
                        int64_t virtualStages = 1) {
  ScheduleOptions o;
  o.kind = kind;
  o.ranks = ranks;
  o.microbatches = microbatches;
  o.virtualStages = virtualStages;
  return o;
}

/// The schedule and its simulation with unit costs (BW costs 2).
struct Built {
  Schedule schedule;
  Simulation simulation;
};

Built run(const ScheduleOptions &o) {
  Built r;
  llvm::Expected<Schedule> s = buildSchedule(o);
  EXPECT_TRUE(bool(s)) << llvm::toString(s.takeError());
  if (!s)
    return r;
  r.schedule = std::move(*s);
  llvm::Expected<Simulation> sim = simulate(r.schedule);
  EXPECT_TRUE(bool(sim)) << scheduleName(o.kind).str() << " P=" << o.ranks
                         << " m=" << o.microbatches << ": "
                         << llvm::toString(sim.takeError());
  if (sim)
    r.simulation = std::move(*sim);
  return r;
}

std::string optionsError(const ScheduleOptions &o) {
  llvm::Error e = checkScheduleOptions(o);
  return e ? llvm::toString(std::move(e)) : "";
}

std::string simulateError(const Schedule &s) {
  llvm::Expected<Simulation> sim = simulate(s);
  return sim ? "" : llvm::toString(sim.takeError());
}

std::vector<std::string> names(const std::vector<Action> &actions) {
  std::vector<std::string> out;
  for (const Action &a : actions)
    out.push_back(actionName(a));
  return out;
}

Action act(ActionKind kind, int64_t stage, int64_t microbatch) {
  return Action{kind, stage, microbatch};
}

} // namespace

TEST(Schedule, ParsesNames) {
  auto parsed = [](llvm::StringRef name) {
    llvm::Expected<ScheduleKind> k = parseScheduleKind(name);
    return k ? scheduleName(*k).str() : llvm::toString(k.takeError());
  };
  EXPECT_EQ(parsed("gpipe"), "gpipe");
  EXPECT_EQ(parsed("1f1b"), "1f1b");
  EXPECT_EQ(parsed("interleaved"), "interleaved");
  EXPECT_EQ(parsed("interleaved-1f1b"), "interleaved");
  EXPECT_EQ(parsed("zb-h1"), "zb-h1");
  EXPECT_EQ(parsed("zbh1"), "zb-h1");
  EXPECT_EQ(parsed("zero-bubble"), "zb-h1");
  std::string error = parsed("pipedream");
  for (const char *name :
       {"'pipedream'", "gpipe", "1f1b", "interleaved", "zb-h1"})
    EXPECT_NE(error.find(name), std::string::npos) << error;
  EXPECT_EQ(actionName(act(ActionKind::F, 3, 1)), "F3.1");
  EXPECT_EQ(actionName(act(ActionKind::BW, 0, 12)), "BW0.12");
}

TEST(Schedule, RefusesBadOptions) {
  EXPECT_EQ(optionsError(options(ScheduleKind::Interleaved, 4, 6, 2)),
            "interleaved needs microbatches to be a multiple of the pipeline "
            "ranks (4); got 6 (use 4 or 8)");
  EXPECT_NE(optionsError(options(ScheduleKind::OneFOneB, 1, 4))
                .find("a schedule needs a pipeline axis of 2 or more ranks"),
            std::string::npos);
  EXPECT_NE(optionsError(options(ScheduleKind::GPipe, 2, 0)), "");
  EXPECT_NE(optionsError(options(ScheduleKind::OneFOneB, 2, 4, 2)), "");
  EXPECT_NE(optionsError(options(ScheduleKind::Interleaved, 2, 4, 1)), "");
  EXPECT_EQ(optionsError(options(ScheduleKind::Interleaved, 4, 8, 2)), "");
  EXPECT_EQ(optionsError(options(ScheduleKind::ZeroBubbleH1, 2, 1)), "");
  EXPECT_FALSE(bool(buildSchedule(options(ScheduleKind::OneFOneB, 1, 4))));
  llvm::consumeError(
      buildSchedule(options(ScheduleKind::OneFOneB, 1, 4)).takeError());
}

TEST(Schedule, GPipeAndOneFOneBMatchTextbookBubble) {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
    for (int64_t p : {2, 4}) {
      for (int64_t m : {int64_t(1), p, 2 * p, int64_t(5)}) {
        Built r = run(options(kind, p, m));
        EXPECT_NEAR(r.simulation.bubbleFraction, textbookBubble(p, m), 1e-12)
            << scheduleName(kind).str() << " P=" << p << " m=" << m;
        EXPECT_DOUBLE_EQ(r.simulation.makespan, 3.0 * (m + p - 1));
      }
    }
  }
}

TEST(Schedule, PeakInFlight) {
  for (int64_t p : {2, 4}) {
    for (int64_t m : {int64_t(1), p, 2 * p, int64_t(5)}) {
      Built f = run(options(ScheduleKind::OneFOneB, p, m));
      ASSERT_EQ(f.simulation.peakInFlight.size(), size_t(p));
      EXPECT_EQ(f.simulation.peakInFlight[0], std::min(p, m));
      EXPECT_EQ(f.simulation.peakInFlight[p - 1], 1);
      Built g = run(options(ScheduleKind::GPipe, p, m));
      EXPECT_EQ(g.simulation.peakInFlight[0], m);
    }
  }
}

TEST(Schedule, OneFOneBOrder) {
  Built r = run(options(ScheduleKind::OneFOneB, 2, 3));
  EXPECT_EQ(names(r.schedule.actions[0]),
            (std::vector<std::string>{"F0.0", "F0.1", "BW0.0", "F0.2", "BW0.1",
                                      "BW0.2"}));
  EXPECT_EQ(names(r.schedule.actions[1]),
            (std::vector<std::string>{"F1.0", "BW1.0", "F1.1", "BW1.1", "F1.2",
                                      "BW1.2"}));
}

TEST(Schedule, InterleavedOrder) {
  // Rank 0 of P=2, v=2, m=4 owns stages 0 and 2: 2*(P-1) + (v-1)*P = 4
  // warmup forwards, groups of P microbatches per chunk.
  Built r = run(options(ScheduleKind::Interleaved, 2, 4, 2));
  EXPECT_EQ(
      names(r.schedule.actions[0]),
      (std::vector<std::string>{"F0.0", "F0.1", "F2.0", "F2.1", "F0.2", "BW2.0",
                                "F0.3", "BW2.1", "F2.2", "BW0.0", "F2.3",
                                "BW0.1", "BW2.2", "BW2.3", "BW0.2", "BW0.3"}));
}

TEST(Schedule, InterleavedBeatsOneFOneB) {
  for (auto [p, m] : {std::pair<int64_t, int64_t>{2, 4}, {4, 8}}) {
    Built i = run(options(ScheduleKind::Interleaved, p, m, 2));
    Built f = run(options(ScheduleKind::OneFOneB, p, m));
    EXPECT_LT(i.simulation.bubbleFraction, f.simulation.bubbleFraction)
        << "P=" << p << " m=" << m;
  }
}

TEST(Schedule, ZeroBubbleBeatsOneFOneB) {
  for (int64_t p : {2, 4}) {
    for (int64_t m : {p, 2 * p, int64_t(5)}) {
      Built z = run(options(ScheduleKind::ZeroBubbleH1, p, m));
      Built f = run(options(ScheduleKind::OneFOneB, p, m));
      EXPECT_LT(z.simulation.bubbleFraction, f.simulation.bubbleFraction)
          << "P=" << p << " m=" << m;
      // Every rank keeps at most what 1F1B's first stage keeps.
      for (int64_t r = 0; r < p; ++r)
        EXPECT_LE(z.simulation.peakInFlight[r], p) << "rank " << r;
      EXPECT_EQ(z.simulation.peakInFlight[0],
                f.simulation.peakInFlight[0]);
      // With m >= p: the paper's bubble, (p-1) (F + B - W) per rank.
      if (m >= p)
        EXPECT_NEAR(z.simulation.bubbleFraction,
                    double(p - 1) / double(3 * m + p - 1), 1e-12)
            << "P=" << p << " m=" << m;
    }
  }
  // ZB-H1's bubble is about a third of 1F1B's at P=4, m=8.
  Built z = run(options(ScheduleKind::ZeroBubbleH1, 4, 8));
  EXPECT_LT(z.simulation.bubbleFraction, 0.5 * textbookBubble(4, 8));
  EXPECT_NEAR(z.simulation.bubbleFraction, 3.0 / 27.0, 1e-12);
}

TEST(Schedule, EveryScheduleSimulates) {
  for (int64_t p = 2; p <= 6; ++p) {
    for (int64_t m = 1; m <= 3 * p; ++m) {
      for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
                                ScheduleKind::ZeroBubbleH1})
        run(options(kind, p, m));
      if (m % p == 0)
        for (int64_t v = 2; v <= 4; ++v)
          run(options(ScheduleKind::Interleaved, p, m, v));
    }
  }
}

TEST(Schedule, DeadlockIsReported) {
  Schedule s;
  s.options = options(ScheduleKind::OneFOneB, 2, 1);
  s.actions = {{act(ActionKind::BW, 0, 0), act(ActionKind::F, 0, 0)},
               {act(ActionKind::F, 1, 0), act(ActionKind::BW, 1, 0)}};
  std::string error = simulateError(s);
  EXPECT_NE(error.find("the schedule deadlocks"), std::string::npos) << error;
  EXPECT_NE(error.find("rank 0 waits for BW0.0 (needs F0.0 and BW1.0)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("rank 1 waits for F1.0 (needs F0.0)"), std::string::npos)
      << error;
}

TEST(Schedule, BrokenSchedulesAreReported) {
  Built good = run(options(ScheduleKind::OneFOneB, 2, 3));
  Schedule missing = good.schedule;
  missing.actions[1].pop_back();
  EXPECT_NE(simulateError(missing).find("misses BW1.2"), std::string::npos)
      << simulateError(missing);

  Schedule twice = good.schedule;
  twice.actions[0].push_back(act(ActionKind::F, 0, 1));
  EXPECT_NE(simulateError(twice).find("rank 0 runs F0.1 twice"),
            std::string::npos)
      << simulateError(twice);

  Schedule moved = good.schedule;
  moved.actions[0].push_back(moved.actions[1].back());
  moved.actions[1].pop_back();
  EXPECT_NE(simulateError(moved).find(
                "BW1.2 runs on rank 0 but stage 1 belongs to rank 1"),
            std::string::npos)
      << simulateError(moved);

  Schedule ranks = good.schedule;
  ranks.actions.pop_back();
  EXPECT_NE(simulateError(ranks).find("lists 1 ranks but its options have 2"),
            std::string::npos)
      << simulateError(ranks);

  Schedule empty;
  empty.options.microbatches = 0;
  EXPECT_NE(simulateError(empty), "");

  Schedule split = good.schedule;
  split.actions[1].back() = act(ActionKind::B, 1, 2);
  EXPECT_NE(simulateError(split).find("misses W1.2"), std::string::npos)
      << simulateError(split);
}

TEST(Schedule, GanttLinesUp) {
  Built r = run(options(ScheduleKind::OneFOneB, 2, 2));
  std::string text;
  llvm::raw_string_ostream os(text);
  printGantt(r.schedule, r.simulation, os);
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n', -1, /*KeepEmpty=*/false);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_TRUE(lines[0].starts_with("time")) << text;
  EXPECT_TRUE(lines[1].starts_with("rank 0 |F0.0  F0.1  .")) << text;
  EXPECT_TRUE(lines[2].starts_with("rank 1 |.     F1.0  BW1.0 ===== F1.1"))
      << text;
  // Makespan 9: 9 cells of width 6 after "rank R |" on every line.
  for (llvm::StringRef line : lines)
    EXPECT_EQ(line.size(), 8u + 9 * 6) << text;
}
