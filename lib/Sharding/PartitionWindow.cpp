//===- PartitionWindow.cpp - slice and pad by halo exchange ---------------===//
//
// A stride-1 slice or a pad moves a dimension's rows: result row i is
// operand row i + s (s = start for a slice, -low for a pad), or the pad
// value where that row does not exist. Their rules make such a dimension a
// permutation factor (operand and result split alike). Split over n
// devices in blocks of L on both sides, device g's result block
// [gL, gL + L) reads operand rows [gL + s, gL + s + L): its own block
// shifted by s, the |s| rows beyond it coming from the neighbouring device.
// When |s| <= L that is one collective_permute of |s| rows per device
// (XLA's halo exchange) instead of gathering the dimension; a longer shift
// first moves whole blocks |s|/L devices over (a second permute). A pad
// then writes its value where the row does not exist. A split the halo
// cannot serve (blocks of another size) is dropped: the dimension is
// gathered and the window taken locally, as for the strided slices whose
// dimensions need replication.
//
//===----------------------------------------------------------------------===//

#include "PartitionModels.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {
/// Result row i of dimension d is operand row i + shift(d).
int64_t windowShift(Operation *op, int64_t d) {
  if (auto slice = dyn_cast<SliceOp>(op))
    return slice.getStart()[d];
  return -cast<PadOp>(op).getLow()[d];
}
} // namespace

/// `local` with `value` where the global position along split dimension
/// `d` is outside [low, low + operandSize) (a pad's new rows).
static Value padOutside(SpmdPartitioner &p, Location loc, Value local,
                        int64_t d, const AxisList &axes, int64_t low,
                        int64_t operandSize, double value);

LogicalResult mlir::tessel::partitionWindow(SpmdPartitioner &p,
                                            Operation *op) {
  OpBuilder &builder = p.builder();
  Resharder &reshaper = p.resharder();
  const MeshInfo &mesh = p.mesh();
  Location loc = op->getLoc();
  OpShardingRuleAttr rule =
      cast<ShardingRuleOpInterface>(op).getShardingRule();
  SmallVector<AxisList> factors = p.chooseFactors(op, rule);
  Value input = op->getOperand(0), result = op->getResult(0);
  RankedTensorType inG = typeOf(input), outG = typeOf(result);
  TensorMappingAttr inMap = rule.getOperands()[0],
                    outMap = rule.getResults()[0];
  for (auto [d, dim] : llvm::enumerate(outMap.getDims())) {
    ArrayRef<int64_t> fs = dim.getFactors();
    if (fs.size() != 1 || !rule.isPermutation(fs[0]) ||
        factors[fs[0]].empty())
      continue;
    int64_t L = mesh.localSize(outG.getDimSize(d), factors[fs[0]]);
    if (L != mesh.localSize(inG.getDimSize(d), factors[fs[0]]) || L == 0)
      factors[fs[0]].clear();
  }
  Layout inL = p.layoutFor(rule, inMap, factors, inG);
  Layout outL = p.layoutFor(rule, outMap, factors, outG);
  FailureOr<Value> operand = p.operandAs(loc, input, inL);
  if (failed(operand))
    return failure();
  Value v = *operand;
  // Split dimensions: shift the blocks (nothing to do for a whole one).
  int64_t rank = outG.getRank();
  for (int64_t d = 0; d < rank; ++d)
    if (!outL.dims[d].empty())
      v = reshaper.shiftBlocks(loc, v, d, outL.dims[d], windowShift(op, d));
  // The others: the op's own window, locally.
  if (auto slice = dyn_cast<SliceOp>(op)) {
    SmallVector<int64_t> start(slice.getStart()), limit(slice.getLimit()),
        strides(slice.getStrides());
    for (int64_t d = 0; d < rank; ++d)
      if (!outL.dims[d].empty()) {
        start[d] = 0;
        limit[d] = typeOf(v).getDimSize(d);
      }
    if (!llvm::equal(start, SmallVector<int64_t>(rank, 0)) ||
        limit != SmallVector<int64_t>(typeOf(v).getShape()) ||
        !llvm::all_of(strides, [](int64_t s) { return s == 1; }))
      v = SliceOp::create(builder, loc, v, start, limit, strides);
  } else {
    auto pad = cast<PadOp>(op);
    SmallVector<int64_t> low(pad.getLow()), high(pad.getHigh());
    for (int64_t d = 0; d < rank; ++d)
      if (!outL.dims[d].empty())
        low[d] = high[d] = 0;
    if (llvm::any_of(low, [](int64_t x) { return x; }) ||
        llvm::any_of(high, [](int64_t x) { return x; }))
      v = PadOp::create(builder, loc, v, low, high, pad.getValue());
    // Rows of split dimensions that come from outside the operand.
    for (int64_t d = 0; d < rank; ++d) {
      if (outL.dims[d].empty() ||
          (pad.getLow()[d] == 0 && pad.getHigh()[d] == 0))
        continue;
      v = padOutside(p, loc, v, d, outL.dims[d], pad.getLow()[d],
                     inG.getDimSize(d), pad.getValue().convertToDouble());
    }
  }
  p.setLocal(result, v, outL);
  return success();
}

static Value padOutside(SpmdPartitioner &p, Location loc, Value local,
                        int64_t d, const AxisList &axes, int64_t low,
                        int64_t operandSize, double value) {
  OpBuilder &builder = p.builder();
  Resharder &reshaper = p.resharder();
  RankedTensorType type = typeOf(local);
  auto i32 = RankedTensorType::get(type.getShape(), builder.getI32Type());
  Value pos = reshaper.globalPositions(loc, local, d, axes);
  auto cmp = [&](CompareDirection dir, int64_t bound) {
    return CompareOp::create(builder, loc, dir, pos,
                             reshaper.constant(loc, i32, bound))
        .getResult();
  };
  Value inside = SelectOp::create(builder, loc, cmp(CompareDirection::ge, low),
                                  cmp(CompareDirection::lt, low + operandSize),
                                  cmp(CompareDirection::ge, low));
  return SelectOp::create(builder, loc, inside, local,
                          reshaper.constant(loc, type, value));
}
