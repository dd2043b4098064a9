//===- PartitionModels.cpp - which Tessel ops partition their own way -----===//
//
// Every op not listed here is partitioned from its sharding rule alone
// (FunctionPartitioner::partitionByRule). The ones listed attach a
// SpmdPartitionOpInterface model; a new op with its own scheme adds a
// function and one line in registerSpmdPartitionModels.
//
//===----------------------------------------------------------------------===//

#include "PartitionModels.h"

#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::tessel;

#include "tessel/sharding/SpmdPartitionOpInterface.cpp.inc"

namespace {

/// A sharding constraint is a reshard to its sharding.
LogicalResult partitionConstraint(SpmdPartitioner &p, ShardingConstraintOp c) {
  Layout to = Layout::of(c.getSharding());
  FailureOr<Value> v = p.operandAs(c.getLoc(), c.getInput(), to);
  if (failed(v))
    return failure();
  p.setLocal(c.getResult(), *v, to);
  return success();
}

/// Values that depend on the global position (iota, dropout masks,
/// non-splat constants): made whole, then sliced by their users' reshards.
LogicalResult partitionWhole(SpmdPartitioner &p, Operation *op) {
  Operation *clone = p.builder().clone(*op);
  clone->removeAttr(TesselDialect::kShardingAttrName);
  for (OpOperand &o : clone->getOpOperands())
    o.set(p.localOf(op->getOperand(o.getOperandNumber())).value);
  p.setLocal(op->getResult(0), clone->getResult(0),
             Layout::replicated(typeOf(op->getResult(0)).getRank()));
  return success();
}

/// A dropout mask depends on the global index of each element only: each
/// device computes its own block (`at [offsets] of [global shape]`, the
/// offsets its block index over each dimension's axes times the block
/// size), not the whole mask. Padding positions of uneven blocks get
/// values no one reads.
LogicalResult partitionDropoutMask(SpmdPartitioner &p, DropoutMaskOp op) {
  Layout layout = p.wanted(op.getResult());
  layout.partial.clear();
  bool split = llvm::any_of(layout.dims,
                            [](const AxisList &axes) { return !axes.empty(); });
  if (!split || !op.getOffsets().empty())
    return partitionWhole(p, op);
  RankedTensorType global = op.getType();
  RankedTensorType local = p.mesh().localType(global, layout);
  OpBuilder &b = p.builder();
  Location loc = op.getLoc();
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  SmallVector<Value> offsets;
  for (auto [d, axes] : llvm::enumerate(layout.dims)) {
    Value block = createSplat(b, loc, i64, double(local.getDimSize(d)));
    offsets.push_back(
        axes.empty() ? createSplat(b, loc, i64, 0.0)
                     : MulOp::create(b, loc,
                                     p.resharder().axisIndex(
                                         loc, axes, b.getI64Type()),
                                     block)
                           .getResult());
  }
  auto mask = DropoutMaskOp::create(
      b, loc, local, p.localOf(op.getSeed()).value, offsets,
      b.getDenseI64ArrayAttr(global.getShape()), op.getRateAttr());
  p.setLocal(op.getResult(), mask, layout);
  return success();
}

/// A splat is the same value on every device: by rule, on the local shape.
LogicalResult partitionConstant(SpmdPartitioner &p, ConstantOp op) {
  auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
  if (!splat)
    return partitionWhole(p, op);
  FailureOr<Operation *> local = p.partitionByRule(op);
  if (failed(local))
    return failure();
  auto cst = cast<ConstantOp>(*local);
  cst.setValueAttr(DenseElementsAttr::get(cast<ShapedType>(cst.getType()),
                                          splat.getSplatValue<Attribute>()));
  return success();
}

/// Sums and differences of partial sums with the same layout stay partial:
/// every device adds its own terms, and one collective resolves the result
/// where it is used (the global gradient norm adds one partial squared sum
/// per parameter, which then costs one all-reduce instead of one each).
LogicalResult partitionAddOrSub(SpmdPartitioner &p, Operation *op) {
  const Layout &first = p.localOf(op->getOperand(0)).layout;
  bool samePartial =
      !first.partial.empty() && first.partialKind == CollectiveKind::sum &&
      isa<FloatType>(typeOf(op->getResult(0)).getElementType()) &&
      llvm::all_of(op->getOperands(), [&](Value v) {
        return p.localOf(v).layout == first;
      });
  if (!samePartial)
    return p.partitionByRule(op);
  IRMapping mapping;
  for (Value v : op->getOperands())
    mapping.map(v, p.localOf(v).value);
  Operation *local = p.builder().clone(*op, mapping);
  local->removeAttr(TesselDialect::kShardingAttrName);
  local->removeAttr(TesselDialect::kLogicalAxesAttrName);
  Value lr = local->getResult(0);
  lr.setType(p.localOf(op->getOperand(0)).value.getType());
  p.setLocal(op->getResult(0), lr, Layout(first));
  return success();
}

/// Padding is masked to the reduction's identity and partials combine by
/// its kind; a partial mean is a partial sum scaled by the global count.
LogicalResult partitionReduce(SpmdPartitioner &p, ReduceOp op) {
  RuleScheme scheme;
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (op.getKind() == ReduceKind::max)
    scheme = {-inf, CollectiveKind::max};
  else if (op.getKind() == ReduceKind::min)
    scheme = {inf, CollectiveKind::min};
  FailureOr<Operation *> local = p.partitionByRule(op, scheme);
  if (failed(local))
    return failure();
  auto reduce = cast<ReduceOp>(*local);
  Layout layout = p.localOf(op.getResult()).layout;
  if (op.getKind() != ReduceKind::mean || layout.partial.empty())
    return success();
  reduce.setKind(ReduceKind::sum);
  int64_t count = 1;
  for (int64_t d : op.getDims())
    count *= typeOf(op.getInput()).getDimSize(d);
  Value scaled = MulOp::create(
      p.builder(), op.getLoc(), reduce.getResult(),
      p.resharder().constant(op.getLoc(), typeOf(reduce.getResult()),
                             1.0 / count));
  p.setLocal(op.getResult(), scaled, layout);
  return success();
}

/// A table split on the gathered axis: the indices shifted into this
/// device's rows; rows elsewhere read as zeros (a partial sum).
LogicalResult partitionGather(SpmdPartitioner &p, GatherOp op) {
  OpShardingRuleAttr rule =
      cast<ShardingRuleOpInterface>(*op).getShardingRule();
  SmallVector<AxisList> factors = p.chooseFactors(op, rule);
  FailureOr<Operation *> local = p.partitionByRule(op);
  if (failed(local))
    return failure();
  auto gather = cast<GatherOp>(*local);
  int64_t axis = gather.getAxis();
  const AxisList &tableAxes =
      factors[rule.getOperands()[0].getDims()[axis].getFactors()[0]];
  if (tableAxes.empty())
    return success();
  OpBuilder &b = p.builder();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(gather);
  Location loc = op.getLoc();
  Value idx = gather.getIndices();
  RankedTensorType it = typeOf(idx);
  Value block = p.resharder().axisIndex(loc, tableAxes, it.getElementType());
  Value off = MulOp::create(
      b, loc, block,
      p.resharder().constant(loc, RankedTensorType::get({}, it.getElementType()),
                             typeOf(gather.getTable()).getDimSize(axis)));
  Value offs =
      BroadcastInDimOp::create(b, loc, it, off, ArrayRef<int64_t>{});
  gather.getIndicesMutable().assign(SubOp::create(b, loc, idx, offs));
  return success();
}

/// The model of op `OpT`, partitioned by `fn`.
template <typename OpT, auto fn>
struct Model
    : public SpmdPartitionOpInterface::ExternalModel<Model<OpT, fn>, OpT> {
  LogicalResult partition(Operation *op, SpmdPartitioner &p) const {
    return fn(p, cast<OpT>(op));
  }
};

} // namespace

void mlir::tessel::registerSpmdPartitionModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TesselDialect *) {
    ShardingConstraintOp::attachInterface<
        Model<ShardingConstraintOp, partitionConstraint>>(*ctx);
    IotaOp::attachInterface<Model<IotaOp, partitionWhole>>(*ctx);
    DropoutMaskOp::attachInterface<
        Model<DropoutMaskOp, partitionDropoutMask>>(*ctx);
    ConstantOp::attachInterface<Model<ConstantOp, partitionConstant>>(*ctx);
    AddOp::attachInterface<Model<AddOp, partitionAddOrSub>>(*ctx);
    SubOp::attachInterface<Model<SubOp, partitionAddOrSub>>(*ctx);
    ReduceOp::attachInterface<Model<ReduceOp, partitionReduce>>(*ctx);
    GatherOp::attachInterface<Model<GatherOp, partitionGather>>(*ctx);
    SoftmaxCrossEntropyOp::attachInterface<
        Model<SoftmaxCrossEntropyOp, partitionCrossEntropy>>(*ctx);
    ScatterAddOp::attachInterface<Model<ScatterAddOp, partitionScatterAdd>>(
        *ctx);
    SliceOp::attachInterface<Model<SliceOp, partitionWindow>>(*ctx);
    PadOp::attachInterface<Model<PadOp, partitionWindow>>(*ctx);
    ConcatenateOp::attachInterface<
        Model<ConcatenateOp, partitionConcatenate>>(*ctx);
  });
}
