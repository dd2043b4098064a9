//===- WindowPlan.h - halo exchange for windowed dimensions -----*- C++ -*-===//
//
// A slice, a pad or one operand of a concatenate moves a dimension's rows:
// result row i is operand row i + shift, where that row exists. With the
// dimension split over n devices (blocks of `operandBlock` rows on the
// operand, `resultBlock` on the result), device g's result block needs a
// contiguous run of operand rows held by a few neighbouring devices. The
// plan says which rows each device sends and how far (one
// collective_permute per distance), how the received pieces and the
// device's own rows form one buffer, and where in that buffer each device's
// result block starts: an offset linear in g, so that every device runs the
// same program. Pure arithmetic on sizes, tested by WindowPlanTest.cpp;
// lib/Sharding/Reshard.cpp emits it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SHARDING_WINDOWPLAN_H
#define TESSEL_SHARDING_WINDOWPLAN_H

#include <cstdint>
#include <vector>

namespace tessel::sharding {

/// One split dimension of a windowed op. Result row i reads operand row
/// i + shift; result rows whose operand row is outside [0, operandSize)
/// are not read (a pad writes its value there, a concatenate another
/// operand's rows).
struct WindowDim {
  int64_t devices = 1;
  int64_t operandSize = 0, operandBlock = 0;
  int64_t resultSize = 0, resultBlock = 0;
  int64_t shift = 0;
};

/// Rows [begin, end) of the block of the device `distance` positions further
/// along the group, received by the devices `receivers` (the others receive
/// zeros in their place: they read none of it), placed in the buffer after
/// `zerosBefore` rows of zeros (rows of that block and the one before that
/// nobody reads).
struct WindowPiece {
  int64_t distance = 0;
  int64_t begin = 0, end = 0;
  int64_t zerosBefore = 0;
  std::vector<int64_t> receivers;
};

struct WindowPlan {
  /// In row order: concatenated (with their zeros), they are the buffer.
  std::vector<WindowPiece> pieces;
  /// Zero rows before and after the buffer, so that every result block
  /// lies inside it.
  int64_t frontPad = 0, backPad = 0;
  /// Device g's result block is rows [offset(g), offset(g) + resultBlock)
  /// of the padded buffer, offset(g) = clamp(g * slope + base, 0,
  /// maxOffset). Devices that read nothing may be clamped.
  int64_t slope = 0, base = 0, maxOffset = 0;
  /// The most rows one device receives from others, and the rows the
  /// all-gather of the operand's dimension would bring to each device.
  int64_t maxRowsReceived = 0, gatherRows = 0;

  int64_t bufferRows() const;
  /// Whether exchanging halos moves fewer rows than gathering.
  bool cheaperThanGather() const { return maxRowsReceived < gatherRows; }
};

WindowPlan planWindow(const WindowDim &dim);

} // namespace tessel::sharding

#endif // TESSEL_SHARDING_WINDOWPLAN_H
