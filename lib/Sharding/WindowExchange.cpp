//===- WindowExchange.cpp - emitting a halo exchange ----------------------===//
//
// Emits a tessel/sharding/WindowPlan.h plan: a collective_permute per
// distance carrying only the rows some device reads, the pieces
// concatenated into one buffer, and each device's result block taken from
// it. Where result and operand blocks differ in size the block starts at an
// offset that depends on the device (g * slope + base); it is taken with a
// logarithmic shifter (select between the buffer and the buffer shifted by
// 2^b, for each bit b of the offset), so every device runs one program of
// static shapes.
//
//===----------------------------------------------------------------------===//

#include "tessel/sharding/Reshard.h"

using namespace mlir;
using namespace mlir::tessel;

static RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value Resharder::rowsOf(Location loc, Value local, int64_t dim, int64_t begin,
                        int64_t end) {
  RankedTensorType type = typeOf(local);
  if (begin == 0 && end == type.getDimSize(dim))
    return local;
  SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
      strides(type.getRank(), 1);
  start[dim] = begin;
  limit[dim] = end;
  return SliceOp::create(b, loc, local, start, limit, strides);
}

Value Resharder::dynamicRows(Location loc, Value local, int64_t dim,
                             Value offset, int64_t maxOffset, int64_t rows) {
  auto scalar = RankedTensorType::get({}, b.getI32Type());
  int64_t bits = 0;
  while ((int64_t(1) << bits) <= maxOffset)
    ++bits;
  // Every step halves the offset's range: rows + 2^(b+1) - 1 rows in,
  // rows + 2^b - 1 out.
  Value v = padTo(loc, local, dim, rows + (int64_t(1) << bits) - 1);
  Value rest = offset;
  for (int64_t bit = bits - 1; bit >= 0; --bit) {
    int64_t step = int64_t(1) << bit, keep = rows + step - 1;
    Value take = CompareOp::create(b, loc, CompareDirection::ge, rest,
                                   constant(loc, scalar, double(step)));
    Value shifted = rowsOf(loc, v, dim, step, step + keep);
    Value kept = rowsOf(loc, v, dim, 0, keep);
    RankedTensorType type = typeOf(kept);
    Value pred = BroadcastInDimOp::create(
        b, loc, RankedTensorType::get(type.getShape(), b.getI1Type()), take,
        ArrayRef<int64_t>{});
    v = SelectOp::create(b, loc, pred, shifted, kept);
    rest = SubOp::create(b, loc, rest,
                         SelectOp::create(b, loc, take,
                                          constant(loc, scalar, double(step)),
                                          constant(loc, scalar, 0.0)));
  }
  return v;
}

Value Resharder::exchangeWindow(Location loc, Value local, int64_t dim,
                                ArrayRef<StringAttr> axes,
                                const sharding::WindowPlan &plan,
                                int64_t resultBlock) {
  RankedTensorType type = typeOf(local);
  SmallVector<Value> parts;
  auto zeros = [&](int64_t rows) {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = rows;
    return constant(loc, type.clone(shape), 0.0);
  };
  if (plan.frontPad)
    parts.push_back(zeros(plan.frontPad));
  for (const sharding::WindowPiece &piece : plan.pieces) {
    if (piece.zerosBefore)
      parts.push_back(zeros(piece.zerosBefore));
    Value rows = rowsOf(loc, local, dim, piece.begin, piece.end);
    if (piece.distance == 0) {
      parts.push_back(rows);
      continue;
    }
    if (piece.receivers.empty()) {
      parts.push_back(zeros(piece.end - piece.begin));
      continue;
    }
    SmallVector<int64_t> pairs;
    for (int64_t g : piece.receivers)
      llvm::append_range(pairs, SmallVector<int64_t>{g + piece.distance, g});
    SmallVector<Attribute> names(axes.begin(), axes.end());
    parts.push_back(CollectivePermuteOp::create(
        b, loc, rows.getType(), rows, mesh.ref(), b.getArrayAttr(names),
        b.getDenseI64ArrayAttr(pairs)));
  }
  if (plan.backPad)
    parts.push_back(zeros(plan.backPad));
  if (parts.empty()) // an empty block
    return zeros(resultBlock);
  Value buffer = parts.size() == 1
                     ? parts.front()
                     : ConcatenateOp::create(b, loc, parts, uint64_t(dim))
                           .getResult();
  if (plan.slope == 0 || plan.maxOffset == 0) {
    int64_t offset = std::clamp(plan.base, int64_t(0), plan.maxOffset);
    return rowsOf(loc, buffer, dim, offset, offset + resultBlock);
  }
  // offset = clamp(g * slope + base, 0, maxOffset)
  auto scalar = RankedTensorType::get({}, b.getI32Type());
  Value offset = AddOp::create(
      b, loc,
      MulOp::create(b, loc, axisIndex(loc, axes),
                    constant(loc, scalar, double(plan.slope))),
      constant(loc, scalar, double(plan.base)));
  auto clampTo = [&](CompareDirection dir, int64_t bound) {
    Value c = constant(loc, scalar, double(bound));
    Value out = CompareOp::create(b, loc, dir, offset, c);
    offset = SelectOp::create(b, loc, out, c, offset);
  };
  clampTo(CompareDirection::lt, 0);
  clampTo(CompareDirection::gt, plan.maxOffset);
  return dynamicRows(loc, buffer, dim, offset, plan.maxOffset, resultBlock);
}
