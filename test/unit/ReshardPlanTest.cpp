//===- ReshardPlanTest.cpp - the reshard planner's moves and costs --------===//
//
// Each case works the bytes out by hand (f32, bytes sent per device as the
// comm report counts them: (n-1)/n of the larger side for all-gather and
// all-to-all, the whole block for a collective-permute).
//
//===----------------------------------------------------------------------===//

#include "tessel/sharding/ReshardPlan.h"

#include <gtest/gtest.h>

#include <random>

using namespace tessel::sharding;

namespace {

ReshardProblem problem(std::vector<int64_t> shape, std::vector<int64_t> axes,
                       AxisDims from, AxisDims to) {
  ReshardProblem p;
  p.shape.assign(shape.begin(), shape.end());
  p.axisSizes.assign(axes.begin(), axes.end());
  p.from = std::move(from);
  p.to = std::move(to);
  return p;
}

std::string kinds(const ReshardPlan &plan) {
  std::string s;
  for (const ReshardMove &m : plan.moves) {
    switch (m.kind) {
    case ReshardMoveKind::Gather: s += "G"; break;
    case ReshardMoveKind::AllToAll: s += "A"; break;
    case ReshardMoveKind::Permute: s += "P"; break;
    case ReshardMoveKind::Slice: s += "S"; break;
    }
  }
  return s;
}

constexpr int X = 0, Y = 1, Z = 2;

TEST(ReshardPlan, SameLayoutIsEmpty) {
  ReshardPlan plan = planReshard(problem({8, 8}, {2}, {{X}, {}}, {{X}, {}}));
  EXPECT_TRUE(plan.moves.empty());
}

TEST(ReshardPlan, OneAxisMovesByOneAllToAll) {
  // 8x8 f32 on x=2: local 4x8 = 128 bytes, half of it leaves: 64.
  ReshardPlan plan = planReshard(problem({8, 8}, {2}, {{X}, {}}, {{}, {X}}));
  EXPECT_EQ(kinds(plan), "A");
  EXPECT_EQ(plan.moves[0].dim, 0);
  EXPECT_EQ(plan.moves[0].toDim, 1);
  EXPECT_DOUBLE_EQ(plan.sentBytes, 64);
}

TEST(ReshardPlan, SeveralAxesMoveByOneAllToAll) {
  // [x, y] -> [] and [] -> [x, y] on x=2, y=4, 16x16: local 2x16 = 128
  // bytes, 7/8 of it leaves: 112 (gathering then slicing sends 7/8 of the
  // whole 1024: 896).
  ReshardPlan plan = planReshard(
      problem({16, 16}, {2, 4}, {{X, Y}, {}}, {{}, {X, Y}}));
  EXPECT_EQ(kinds(plan), "A");
  EXPECT_EQ(plan.moves[0].axes, (llvm::SmallVector<int, 2>{X, Y}));
  EXPECT_DOUBLE_EQ(plan.sentBytes, 112);
}

TEST(ReshardPlan, SwapOfEqualAxesIsOnePermute) {
  // [x],[y] -> [y],[x] on x=y=2: device (x, y) needs block (y, x), which
  // device (y, x) holds: 1 <-> 2, 0 and 3 keep theirs. One 4x4 block: 64.
  ReshardPlan plan =
      planReshard(problem({8, 8}, {2, 2}, {{X}, {Y}}, {{Y}, {X}}));
  EXPECT_EQ(kinds(plan), "P");
  EXPECT_EQ(plan.moves[0].pairs,
            (llvm::SmallVector<int64_t>{0, 0, 1, 2, 2, 1, 3, 3}));
  EXPECT_DOUBLE_EQ(plan.sentBytes, 64);
}

TEST(ReshardPlan, SwapOfUnequalAxesNeverGathersEverything) {
  // x=2, y=4, 8x8: gathering both dimensions sends 7/8 of 256 = 224.
  ReshardPlan plan =
      planReshard(problem({8, 8}, {2, 4}, {{X}, {Y}}, {{Y}, {X}}));
  EXPECT_LT(plan.sentBytes, 224);
  EXPECT_LE(plan.peakBytes, 128);
}

TEST(ReshardPlan, MixedMoveDoesNotMaterializeTheWholeDimension) {
  // [x, y],[] -> [],[y] on x=y=2, 16x16 (local 4x16 = 256 bytes): y moves
  // by all-to-all (128), then x is gathered (half of 16x8 = 256): 384,
  // where gathering dimension 0 first sends 3/4 of 1024 = 768.
  ReshardPlan plan = planReshard(
      problem({16, 16}, {2, 2}, {{X, Y}, {}}, {{}, {Y}}));
  EXPECT_EQ(kinds(plan), "AG");
  EXPECT_DOUBLE_EQ(plan.sentBytes, 384);
  EXPECT_EQ(plan.peakBytes, 512);
  EXPECT_EQ(plan.rematerializedDim, -1);
}

TEST(ReshardPlan, UnevenAllToAllPadsTheSplitDimension) {
  // 10x8 on x=4: dimension 0 is split into pieces of 3 (padded to 12).
  ReshardPlan plan = planReshard(problem({10, 8}, {4}, {{}, {X}}, {{X}, {}}));
  EXPECT_EQ(kinds(plan), "A");
  ReshardPlan back = planReshard(problem({10, 8}, {4}, {{X}, {}}, {{}, {X}}));
  EXPECT_EQ(kinds(back), "A");
}

TEST(ReshardPlan, UnevenBlocksThatDoNotNestAreGathered) {
  // 10 on [x=2] holds 5 each; [x, y=2] holds 3 each, at 0, 3, 6, 9: the
  // second block of x=0 (3..5) is not inside x=0's 0..4 the way a slice
  // would take it, so the dimension is gathered first.
  EXPECT_FALSE(blocksNest(10, 2, 2));
  EXPECT_TRUE(blocksNest(7, 2, 2));
  EXPECT_TRUE(blocksNest(10, 1, 4));
  ReshardPlan plan = planReshard(problem({10}, {2, 2}, {{X}}, {{X, Y}}));
  EXPECT_EQ(kinds(plan), "GS");
  EXPECT_EQ(plan.rematerializedDim, 0);
}

TEST(ReshardPlan, ReorderedAxesAreOnePermute) {
  ReshardPlan plan =
      planReshard(problem({12, 2}, {2, 3}, {{X, Y}, {}}, {{Y, X}, {}}));
  EXPECT_EQ(kinds(plan), "P");
  EXPECT_EQ(plan.moves[0].pairs, (llvm::SmallVector<int64_t>{
                                     0, 0, 1, 3, 2, 1, 3, 4, 4, 2, 5, 5}));
}

TEST(ReshardPlan, AddedAxisIsAFreeSlice) {
  ReshardPlan plan = planReshard(problem({8, 8}, {2, 4}, {{X}, {}}, {{X}, {Y}}));
  EXPECT_EQ(kinds(plan), "S");
  EXPECT_DOUBLE_EQ(plan.sentBytes, 0);
}

/// Every plan of random problems costs at most what gathering every
/// dimension and slicing costs, and reaches the target.
TEST(ReshardPlan, NeverCostsMoreThanGatheringEverything) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    int axes = 1 + rng() % 3, rank = 1 + rng() % 3;
    std::vector<int64_t> sizes, shape;
    for (int a = 0; a < axes; ++a)
      sizes.push_back(1 + rng() % 4);
    for (int d = 0; d < rank; ++d)
      shape.push_back(1 + rng() % 13);
    auto randomLayout = [&]() {
      AxisDims l(rank);
      std::vector<int> order(axes);
      for (int a = 0; a < axes; ++a)
        order[a] = a;
      std::shuffle(order.begin(), order.end(), rng);
      for (int a : order)
        if (rng() % 3)
          l[rng() % rank].push_back(a);
      return l;
    };
    ReshardProblem p = problem(shape, sizes, randomLayout(), randomLayout());
    ReshardPlan plan = planReshard(p);
    // Gather every split dimension (whole local block each time), slice.
    double gather = 0;
    AxisDims cur = p.from;
    for (size_t d = 0; d < cur.size(); ++d) {
      if (cur[d].empty())
        continue;
      int64_t n = 1, bytes = 4;
      for (int a : cur[d])
        n *= sizes[a];
      for (size_t e = 0; e < cur.size(); ++e) {
        int64_t m = 1;
        for (int a : cur[e])
          m *= sizes[a];
        bytes *= localSize(shape[e], e == d ? n : m);
      }
      gather += collectiveSentBytes(CollectiveTraffic::Exchange, n, bytes * n);
      cur[d].clear();
    }
    EXPECT_LE(plan.sentBytes, gather + 1e-6) << "trial " << trial;
    AxisDims reached = p.from;
    for (const ReshardMove &m : plan.moves)
      reached = m.after;
    EXPECT_EQ(reached, p.to) << "trial " << trial;
  }
}

TEST(ReshardPlan, ZeroSizeDimensionSendsNothing) {
  // 4x0x12 on y=2, x=2: every block is empty, so any layout costs nothing
  // (the all-to-all's size once divided by the empty dimension's extent).
  ReshardPlan plan = planReshard(
      problem({4, 0, 12}, {2, 2}, {{}, {Y}, {}}, {{Y}, {}, {X}}));
  EXPECT_DOUBLE_EQ(plan.sentBytes, 0);
  AxisDims reached = {{}, {Y}, {}};
  for (const ReshardMove &m : plan.moves)
    reached = m.after;
  EXPECT_EQ(reached, (AxisDims{{Y}, {}, {X}}));
}

} // namespace
