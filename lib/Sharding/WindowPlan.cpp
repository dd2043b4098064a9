//===- WindowPlan.cpp - halo exchange for windowed dimensions -------------===//

#include "tessel/sharding/WindowPlan.h"

#include <algorithm>
#include <limits>

using namespace tessel::sharding;

namespace {
/// The operand rows device g's result block reads: [begin, end), in the
/// operand blocks `first` .. `last` (absolute block indices).
struct Need {
  int64_t device, begin, end, first, last;
};

std::vector<Need> needs(const WindowDim &d) {
  std::vector<Need> out;
  if (d.operandBlock <= 0 || d.resultBlock <= 0)
    return out;
  for (int64_t g = 0; g < d.devices; ++g) {
    int64_t rows =
        std::clamp(d.resultSize - g * d.resultBlock, int64_t(0), d.resultBlock);
    int64_t a = g * d.resultBlock + d.shift;
    int64_t begin = std::max(a, int64_t(0));
    int64_t end = std::min(a + rows, d.operandSize);
    if (begin >= end)
      continue;
    out.push_back({g, begin, end, begin / d.operandBlock,
                   (end - 1) / d.operandBlock});
  }
  return out;
}
} // namespace

int64_t WindowPlan::bufferRows() const {
  int64_t rows = frontPad + backPad;
  for (const WindowPiece &p : pieces)
    rows += p.zerosBefore + p.end - p.begin;
  return rows;
}

WindowPlan tessel::sharding::planWindow(const WindowDim &d) {
  WindowPlan plan;
  plan.gatherRows = (d.devices - 1) * d.operandBlock;
  std::vector<Need> all = needs(d);
  if (all.empty()) { // every block is outside the operand: all zeros
    plan.backPad = d.resultBlock;
    return plan;
  }
  // The distances pieces come from.
  int64_t qmin = std::numeric_limits<int64_t>::max(), qmax = -qmin;
  for (const Need &n : all) {
    qmin = std::min(qmin, n.first - n.device);
    qmax = std::max(qmax, n.last - n.device);
  }
  // Each distance sends the rows its receivers read, at its place in the
  // buffer (slot q - qmin of blocks of operandBlock rows); rows nobody
  // reads between them are zeros.
  std::vector<int64_t> received(d.devices, 0);
  int64_t lo = 0, length = 0;
  for (int64_t q = qmin; q <= qmax; ++q) {
    WindowPiece piece{q, d.operandBlock, 0, 0, {}};
    for (const Need &n : all) {
      int64_t block = (n.device + q) * d.operandBlock;
      int64_t begin = std::max(n.begin, block) - block;
      int64_t end = std::min(n.end, block + d.operandBlock) - block;
      if (begin >= end)
        continue;
      piece.receivers.push_back(n.device);
      piece.begin = std::min(piece.begin, begin);
      piece.end = std::max(piece.end, end);
    }
    if (piece.receivers.empty())
      continue;
    for (int64_t g : piece.receivers)
      if (q != 0)
        received[g] += piece.end - piece.begin;
    if (plan.pieces.empty())
      lo = piece.begin; // buffer row 0
    piece.zerosBefore = (q - qmin) * d.operandBlock + piece.begin - lo - length;
    length += piece.zerosBefore + piece.end - piece.begin;
    plan.pieces.push_back(std::move(piece));
  }
  plan.maxRowsReceived = *std::max_element(received.begin(), received.end());
  // Buffer row 0 is global row (g + qmin) * operandBlock + lo; result block
  // g starts at global row g * resultBlock + shift.
  plan.slope = d.resultBlock - d.operandBlock;
  int64_t start0 = d.shift - qmin * d.operandBlock - lo;
  int64_t rows = plan.bufferRows();
  for (const Need &n : all) {
    int64_t offset = n.device * plan.slope + start0;
    plan.frontPad = std::max(plan.frontPad, -offset);
  }
  for (const Need &n : all) {
    int64_t offset = n.device * plan.slope + start0 + plan.frontPad;
    plan.backPad = std::max(plan.backPad,
                            offset + d.resultBlock - plan.frontPad - rows);
  }
  plan.base = start0 + plan.frontPad;
  plan.maxOffset = plan.bufferRows() - d.resultBlock;
  return plan;
}
