//===- WindowPlanTest.cpp - halo exchange plans for windowed dimensions ---===//
//
// Every plan is run on a model of the devices (each holds its operand
// block, row values = global row numbers) and every result row that reads
// the operand must come out right; the byte counts of a few plans are
// worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "tessel/sharding/WindowPlan.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tessel::sharding;

namespace {
constexpr int64_t kZero = -1; // a row nobody sent

/// Device g's result block under `plan`, as global operand row numbers.
std::vector<int64_t> runPlan(const WindowDim &d, const WindowPlan &plan,
                             int64_t g) {
  std::vector<int64_t> buffer(plan.frontPad, kZero);
  for (const WindowPiece &p : plan.pieces) {
    buffer.insert(buffer.end(), p.zerosBefore, kZero);
    int64_t from = g + p.distance;
    bool receives = std::count(p.receivers.begin(), p.receivers.end(), g);
    bool exists = from >= 0 && from < d.devices;
    if (receives) {
      EXPECT_TRUE(exists) << "receives from nobody";
    }
    bool sent = receives && exists;
    for (int64_t r = p.begin; r < p.end; ++r)
      buffer.push_back(sent ? from * d.operandBlock + r : kZero);
  }
  buffer.insert(buffer.end(), plan.backPad, kZero);
  EXPECT_EQ(int64_t(buffer.size()), plan.bufferRows());
  int64_t offset =
      std::clamp(g * plan.slope + plan.base, int64_t(0), plan.maxOffset);
  EXPECT_LE(offset + d.resultBlock, int64_t(buffer.size()));
  return {buffer.begin() + offset, buffer.begin() + offset + d.resultBlock};
}

void expectCorrect(const WindowDim &d) {
  WindowPlan plan = planWindow(d);
  SCOPED_TRACE(testing::Message()
               << "n=" << d.devices << " operand=" << d.operandSize
               << " result=" << d.resultSize << " shift=" << d.shift);
  for (int64_t g = 0; g < d.devices; ++g) {
    std::vector<int64_t> block = runPlan(d, plan, g);
    for (int64_t i = 0; i < d.resultBlock; ++i) {
      int64_t row = g * d.resultBlock + i, source = row + d.shift;
      if (row < d.resultSize && source >= 0 && source < d.operandSize) {
        ASSERT_EQ(block[i], source) << "device " << g << " row " << i;
      }
    }
  }
}

WindowDim dim(int64_t n, int64_t operand, int64_t result, int64_t shift) {
  return {n, operand, (operand + n - 1) / n, result, (result + n - 1) / n,
          shift};
}
} // namespace

TEST(WindowPlan, EveryShapeAndShiftIsRight) {
  for (int64_t n = 1; n <= 6; ++n)
    for (int64_t operand = 1; operand <= 14; ++operand)
      for (int64_t result = 1; result <= 16; ++result)
        for (int64_t shift = -result; shift <= operand; ++shift)
          expectCorrect(dim(n, operand, result, shift));
}

TEST(WindowPlan, EqualBlocksNeedOnlyTheHalo) {
  // Slicing one row off the front of 16 rows on 4 devices (blocks of 4 on
  // both sides after padding the result to 16): one row from the right.
  WindowPlan plan = planWindow(dim(4, 16, 15, 1));
  EXPECT_EQ(plan.slope, 0);
  EXPECT_EQ(plan.maxRowsReceived, 1);
  EXPECT_TRUE(plan.cheaperThanGather());
}

TEST(WindowPlan, SmallerResultBlocksSendWhatIsRead) {
  // 16 rows -> rows [2, 14) on 4 devices: result blocks of 3 read operand
  // rows 3g+2 .. 3g+4. Device 0 takes 1 row of device 1, device 3 one of
  // device 2; the offset moves by -1 per device.
  WindowPlan plan = planWindow(dim(4, 16, 12, 2));
  EXPECT_EQ(plan.slope, -1);
  EXPECT_EQ(plan.maxRowsReceived, 1);
  EXPECT_EQ(plan.bufferRows(), 6);
  EXPECT_EQ(plan.gatherRows, 12);
  EXPECT_TRUE(plan.cheaperThanGather());
}

TEST(WindowPlan, PaddingToFarMoreRowsFallsBackToGather) {
  // 8 rows padded to 64 on 8 devices: device 0 reads all 8 rows, 7 of them
  // from other devices; gathering brings exactly those 7.
  WindowPlan plan = planWindow(dim(8, 8, 64, 0));
  EXPECT_EQ(plan.maxRowsReceived, 7);
  EXPECT_FALSE(plan.cheaperThanGather());
}

TEST(WindowPlan, NothingReadIsAllPadding) {
  WindowPlan plan = planWindow(dim(2, 4, 8, 10));
  EXPECT_TRUE(plan.pieces.empty());
  EXPECT_EQ(plan.bufferRows(), 4);
  EXPECT_EQ(plan.maxRowsReceived, 0);
}
