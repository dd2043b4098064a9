//===- PartitionWindow.cpp - slice, pad, concatenate by halo exchange -----===//
//
// A stride-1 slice, a pad and each operand of a concatenate move a
// dimension's rows: result row i is operand row i + s (s = start for a
// slice, -low for a pad, minus the operand's offset for a concatenate), or
// no operand row at all (a pad's value, another operand's rows). Their
// rules make such a dimension a permutation factor: operand and result
// split over the same axes, in blocks that may differ in size. Device g's
// result block then reads a contiguous run of operand rows held by a few
// neighbouring devices, and tessel/sharding/WindowPlan.h plans moving just
// those rows (XLA's halo exchange; one collective_permute per distance).
// Where the plan would bring a device as many rows as gathering the
// dimension, the split is dropped instead: the dimension is gathered and the
// window taken locally, as for strided slices.
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

/// The windowed factor of dimension `d` of `mapping`, or -1.
int64_t windowFactor(OpShardingRuleAttr rule, TensorMappingAttr mapping,
                     int64_t d) {
  ArrayRef<int64_t> fs = mapping.getDims()[d].getFactors();
  return fs.size() == 1 && rule.isPermutation(fs[0]) ? fs[0] : -1;
}

sharding::WindowPlan planFor(const MeshInfo &mesh, const AxisList &axes,
                             int64_t operandSize, int64_t resultSize,
                             int64_t shift) {
  sharding::WindowDim dim;
  dim.devices = mesh.size(axes);
  dim.operandSize = operandSize;
  dim.operandBlock = mesh.localSize(operandSize, axes);
  dim.resultSize = resultSize;
  dim.resultBlock = mesh.localSize(resultSize, axes);
  dim.shift = shift;
  return sharding::planWindow(dim);
}
} // namespace

/// `local` with `value` where the global position along split dimension
/// `d` is outside [low, low + operandSize) (a pad's new rows).
static Value padOutside(SpmdPartitioner &p, Location loc, Value local,
                        int64_t d, const AxisList &axes, int64_t low,
                        int64_t operandSize, double value);
/// The op's own window on the dimensions left whole.
static Value localWindow(SpmdPartitioner &p, Operation *op, Value v,
                         const Layout &outL);

LogicalResult mlir::tessel::partitionWindow(SpmdPartitioner &p,
                                            Operation *op) {
  Location loc = op->getLoc();
  OpShardingRuleAttr rule =
      cast<ShardingRuleOpInterface>(op).getShardingRule();
  SmallVector<AxisList> factors = p.chooseFactors(op, rule);
  Value input = op->getOperand(0), result = op->getResult(0);
  RankedTensorType inG = typeOf(input), outG = typeOf(result);
  TensorMappingAttr outMap = rule.getResults()[0];
  SmallVector<std::pair<int64_t, sharding::WindowPlan>> plans;
  for (int64_t d = 0; d < outG.getRank(); ++d) {
    int64_t f = windowFactor(rule, outMap, d);
    if (f < 0 || factors[f].empty())
      continue;
    sharding::WindowPlan plan =
        planFor(p.mesh(), factors[f], inG.getDimSize(d), outG.getDimSize(d),
                windowShift(op, d));
    if (plan.cheaperThanGather())
      plans.emplace_back(d, std::move(plan));
    else
      factors[f].clear();
  }
  Layout inL = p.layoutFor(rule, rule.getOperands()[0], factors, inG);
  Layout outL = p.layoutFor(rule, outMap, factors, outG);
  FailureOr<Value> operand = p.operandAs(loc, input, inL);
  if (failed(operand))
    return failure();
  Value v = *operand;
  for (auto &[d, plan] : plans) // the split windowed dimensions
    v = p.resharder().exchangeWindow(
        loc, v, d, outL.dims[d], plan,
        p.mesh().localSize(outG.getDimSize(d), outL.dims[d]));
  v = localWindow(p, op, v, outL);
  if (auto pad = dyn_cast<PadOp>(op)) // rows of split dimensions beyond
    for (int64_t d = 0; d < outG.getRank(); ++d) // the operand
      if (!outL.dims[d].empty() && (pad.getLow()[d] || pad.getHigh()[d]))
        v = padOutside(p, loc, v, d, outL.dims[d], pad.getLow()[d],
                       inG.getDimSize(d), pad.getValue().convertToDouble());
  p.setLocal(result, v, outL);
  return success();
}

static Value localWindow(SpmdPartitioner &p, Operation *op, Value v,
                         const Layout &outL) {
  OpBuilder &builder = p.builder();
  Location loc = op->getLoc();
  int64_t rank = typeOf(v).getRank();
  if (auto slice = dyn_cast<SliceOp>(op)) {
    SmallVector<int64_t> start(slice.getStart()), limit(slice.getLimit()),
        strides(slice.getStrides());
    for (int64_t d = 0; d < rank; ++d)
      if (!outL.dims[d].empty()) {
        start[d] = 0;
        limit[d] = typeOf(v).getDimSize(d);
      }
    if (llvm::equal(start, SmallVector<int64_t>(rank, 0)) &&
        limit == SmallVector<int64_t>(typeOf(v).getShape()) &&
        llvm::all_of(strides, [](int64_t s) { return s == 1; }))
      return v;
    return SliceOp::create(builder, loc, v, start, limit, strides);
  }
  auto pad = cast<PadOp>(op);
  SmallVector<int64_t> low(pad.getLow()), high(pad.getHigh());
  for (int64_t d = 0; d < rank; ++d)
    if (!outL.dims[d].empty())
      low[d] = high[d] = 0;
  if (llvm::none_of(low, [](int64_t x) { return x; }) &&
      llvm::none_of(high, [](int64_t x) { return x; }))
    return v;
  return PadOp::create(builder, loc, v, low, high, pad.getValue());
}

/// Whether exchanging each operand's halo moves fewer rows than gathering
/// the operands; fills `plans` (one per operand) when it does.
static bool planConcat(const MeshInfo &mesh, ConcatenateOp op,
                       const AxisList &axes,
                       SmallVectorImpl<sharding::WindowPlan> &plans) {
  int64_t dim = op.getDim(), offset = 0, rows = 0, gather = 0;
  for (Value input : op.getInputs()) {
    int64_t size = typeOf(input).getDimSize(dim);
    plans.push_back(
        planFor(mesh, axes, size, op.getType().getDimSize(dim), -offset));
    rows += plans.back().maxRowsReceived;
    gather += plans.back().gatherRows;
    offset += size;
  }
  return rows < gather;
}

LogicalResult mlir::tessel::partitionConcatenate(SpmdPartitioner &p,
                                                 ConcatenateOp op) {
  Location loc = op.getLoc();
  OpShardingRuleAttr rule = op.getShardingRule();
  SmallVector<AxisList> factors = p.chooseFactors(op, rule);
  int64_t dim = op.getDim();
  int64_t f = windowFactor(rule, rule.getResults()[0], dim);
  SmallVector<sharding::WindowPlan> plans;
  if (f >= 0 && !factors[f].empty() &&
      !planConcat(p.mesh(), op, factors[f], plans))
    factors[f].clear();
  Layout outL = p.layoutFor(rule, rule.getResults()[0], factors, op.getType());
  SmallVector<Value> locals;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    FailureOr<Value> v = p.operandAs(
        loc, input,
        p.layoutFor(rule, rule.getOperands()[i], factors, typeOf(input)));
    if (failed(v))
      return failure();
    locals.push_back(*v);
  }
  OpBuilder &b = p.builder();
  const AxisList &axes = outL.dims[dim];
  if (axes.empty()) {
    p.setLocal(op, ConcatenateOp::create(b, loc, locals, uint64_t(dim)),
               outL);
    return success();
  }
  // Each operand's rows moved to where the result holds them, then chosen
  // by global position.
  int64_t block = p.mesh().localSize(op.getType().getDimSize(dim), axes);
  Value out, pos;
  int64_t offset = 0;
  for (auto [i, local] : llvm::enumerate(locals)) {
    int64_t size = typeOf(op.getInputs()[i]).getDimSize(dim);
    if (size == 0)
      continue;
    Value w = p.resharder().exchangeWindow(loc, local, dim, axes, plans[i],
                                           block);
    if (!out) {
      out = w;
      pos = p.resharder().globalPositions(loc, w, dim, axes);
    } else {
      auto i32 = cast<RankedTensorType>(pos.getType());
      Value from = CompareOp::create(b, loc, CompareDirection::ge, pos,
                                     p.resharder().constant(loc, i32, offset));
      out = SelectOp::create(b, loc, from, w, out);
    }
    offset += size;
  }
  p.setLocal(op, out, outL);
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
