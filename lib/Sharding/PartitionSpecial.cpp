//===- PartitionSpecial.cpp - ops with their own partitioning schemes -----===//
//
// softmax_cross_entropy: positions may be split (the loss is then a partial
//   sum, or for `mean` a sum and a count reduced together), and classes may
//   be split (vocabulary-parallel cross-entropy, as Megatron does it: the
//   max, the sum of exponentials and the target logit are all-reduced; the
//   logits are never gathered).
// scatter_add: the index dimensions are gathered (the base must be added
//   once); the base's rows may stay split, indices shifted into them.
// slice, pad: split windowed dimensions by halo exchange
//   (PartitionWindow.cpp).
//
//===----------------------------------------------------------------------===//

#include "PartitionModels.h"

#include <limits>

using namespace mlir;
using namespace mlir::tessel;

/// i1 tensor: `labels` (local, laid out as `layout`) are counted: not
/// `ignore`, within [0, classes), and not padding.
static Value countedLabels(SpmdPartitioner &p, Location loc, Value labels,
                           const Layout &layout, RankedTensorType global,
                           int64_t ignore, int64_t classes) {
  OpBuilder &builder = p.builder();
  Resharder &reshaper = p.resharder();
  const MeshInfo &mesh = p.mesh();
  RankedTensorType lt = typeOf(labels);
  auto both = [&](Value a, Value b) {
    return SelectOp::create(builder, loc, a, b, a).getResult();
  };
  Value counted = both(
      CompareOp::create(builder, loc, CompareDirection::ne, labels,
                        reshaper.constant(loc, lt, ignore)),
      CompareOp::create(builder, loc, CompareDirection::ge, labels,
                        reshaper.constant(loc, lt, 0)));
  counted = both(counted,
                 CompareOp::create(builder, loc, CompareDirection::lt, labels,
                                   reshaper.constant(loc, lt, classes)));
  // Padding positions of split dimensions are not counted.
  auto i32 = RankedTensorType::get(lt.getShape(), builder.getI32Type());
  for (int64_t d = 0; d < lt.getRank(); ++d)
    if (!layout.dims[d].empty() &&
        global.getDimSize(d) % mesh.size(layout.dims[d]) != 0) {
      Value pos = reshaper.globalPositions(loc, labels, d, layout.dims[d]);
      counted = both(counted, CompareOp::create(
                                  builder, loc, CompareDirection::lt, pos,
                                  reshaper.constant(loc, i32,
                                                    global.getDimSize(d))));
    }
  return counted;
}

/// Vocabulary-parallel cross-entropy per position (Megatron's scheme):
/// each device holds a block of the classes of `lg` (laid out as `logits`,
/// classes over `classAxes`); the max, the sum of exponentials and the
/// target logit are all-reduced, and the logits never gathered. Positions
/// not `counted` give 0.
static Value vocabParallelLoss(SpmdPartitioner &p, Location loc, Value lg,
                               Value lb, const Layout &logits,
                               RankedTensorType logitsType,
                               const AxisList &classAxes, Value counted) {
  OpBuilder &builder = p.builder();
  Resharder &reshaper = p.resharder();
  const MeshInfo &mesh = p.mesh();
  int64_t last = logitsType.getRank() - 1;
  RankedTensorType lt = typeOf(lb);
  RankedTensorType perPositionType =
      RankedTensorType::get(lt.getShape(), logitsType.getElementType());
  auto axes = [&](ArrayRef<StringAttr> list) {
    SmallVector<Attribute> attrs(list.begin(), list.end());
    return builder.getArrayAttr(attrs);
  };
  RankedTensorType localLogits = typeOf(lg);
  int64_t localClasses = localLogits.getShape().back();
  Value x = reshaper.maskPadding(loc, lg, logits, logitsType, last,
                                 -std::numeric_limits<double>::infinity());
  SmallVector<int64_t> keep;
  for (int64_t d = 0; d < last; ++d)
    keep.push_back(d);
  auto allReduce = [&](Value v, CollectiveKind kind) {
    return AllReduceOp::create(builder, loc, v.getType(), kind, v,
                               mesh.name(), axes(classAxes))
        .getResult();
  };
  auto rowwise = [&](ReduceKind kind, Value v) {
    return ReduceOp::create(builder, loc, kind, v,
                            ArrayRef<int64_t>{last})
        .getResult();
  };
  auto spread = [&](Value v) { // [positions] -> [positions, classes]
    return BroadcastInDimOp::create(builder, loc, localLogits, v, keep)
        .getResult();
  };
  Value max = allReduce(rowwise(ReduceKind::max, x), CollectiveKind::max);
  Value shifted = SubOp::create(builder, loc, x, spread(max));
  Value sumExp = allReduce(
      rowwise(ReduceKind::sum, ExpOp::create(builder, loc, shifted)),
      CollectiveKind::sum);
  // The target logit lies on one device: the others contribute zero.
  Value block = reshaper.axisIndex(loc, classAxes, lt.getElementType());
  Value offset = MulOp::create(
      builder, loc, block,
      reshaper.constant(loc, RankedTensorType::get({}, lt.getElementType()),
                        localClasses));
  Value local = SubOp::create(
      builder, loc, lb,
      BroadcastInDimOp::create(builder, loc, lt, offset,
                               ArrayRef<int64_t>{}));
  Value hot = OneHotOp::create(builder, loc, localLogits, local);
  Value hit = CompareOp::create(builder, loc, CompareDirection::ne, hot,
                                reshaper.constant(loc, localLogits, 0.0));
  Value picked = SelectOp::create(builder, loc, hit, shifted,
                                  reshaper.constant(loc, localLogits, 0.0));
  Value target =
      allReduce(rowwise(ReduceKind::sum, picked), CollectiveKind::sum);
  // loss = log(sum exp(x - max)) - (x[label] - max)
  Value loss = SubOp::create(builder, loc,
                             LogOp::create(builder, loc, sumExp), target);
  return
        SelectOp::create(builder, loc, counted, loss,
                         reshaper.constant(loc, perPositionType, 0.0));
}

LogicalResult mlir::tessel::partitionCrossEntropy(SpmdPartitioner &p,
                                                  SoftmaxCrossEntropyOp ce) {
  OpBuilder &builder = p.builder();
  Resharder &reshaper = p.resharder();
  const MeshInfo &mesh = p.mesh();
  Location loc = ce.getLoc();
  RankedTensorType logitsType = typeOf(ce.getLogits());
  RankedTensorType labelsType = typeOf(ce.getLabels());
  int64_t ignore = static_cast<int64_t>(ce.getIgnoreIndex());
  int64_t classes = logitsType.getShape().back();
  int64_t last = logitsType.getRank() - 1;

  // Positions: as the labels lie (or as the per-position result wants).
  Layout labels = p.localOf(ce.getLabels()).layout;
  labels.partial.clear();
  if (ce.getReduction() == LossReduction::none)
    labels.dims = p.wanted(ce.getResult()).dims;
  // Classes: as the logits lie, on axes the positions do not use.
  AxisList used;
  for (const AxisList &d : labels.dims)
    used.append(d.begin(), d.end());
  AxisList classAxes;
  for (StringAttr a : p.localOf(ce.getLogits()).layout.dims[last]) {
    if (conflictsWithAny(a, used))
      break;
    classAxes.push_back(a);
  }
  Layout logits = labels;
  logits.dims.push_back(classAxes);

  FailureOr<Value> lg = p.operandAs(loc, ce.getLogits(), logits);
  FailureOr<Value> lb = p.operandAs(loc, ce.getLabels(), labels);
  if (failed(lg) || failed(lb))
    return failure();
  AxisList posAxes;
  for (const AxisList &a : labels.dims)
    posAxes.append(a.begin(), a.end());
  RankedTensorType lt = typeOf(*lb);
  Value counted =
      countedLabels(p, loc, *lb, labels, labelsType, ignore, classes);
  RankedTensorType perPositionType =
      RankedTensorType::get(lt.getShape(), logitsType.getElementType());

  Value perPosition;
  if (classAxes.empty()) {
    // Classes whole on every device: the op itself, per position.
    Value masked = SelectOp::create(builder, loc, counted, *lb,
                                    reshaper.constant(loc, lt, ignore));
    perPosition = SoftmaxCrossEntropyOp::create(builder, loc, *lg, masked,
                                                ignore, LossReduction::none);
  } else {
    perPosition = vocabParallelLoss(p, loc, *lg, *lb, logits, logitsType,
                                    classAxes, counted);
  }

  if (ce.getReduction() == LossReduction::none) {
    p.setLocal(ce.getResult(), perPosition, labels);
    return success();
  }
  SmallVector<int64_t> allDims;
  for (int64_t d = 0; d < lt.getRank(); ++d)
    allDims.push_back(d);
  Value sum =
      allDims.empty()
          ? perPosition
          : ReduceOp::create(builder, loc, ReduceKind::sum, perPosition,
                             allDims)
                .getResult();
  RankedTensorType scalar = typeOf(ce.getResult());
  if (ce.getReduction() == LossReduction::sum) {
    Layout out = Layout::replicated(0);
    out.partial = posAxes; // summed over positions: partial where split
    p.setLocal(ce.getResult(), sum, out);
    return success();
  }
  // mean: the sum and the count, reduced over split positions, divided.
  Value ones = ConvertOp::create(builder, loc, perPositionType, counted);
  Value count =
      allDims.empty()
          ? ones
          : ReduceOp::create(builder, loc, ReduceKind::sum, ones, allDims)
                .getResult();
  if (!posAxes.empty()) {
    SmallVector<Attribute> attrs(posAxes.begin(), posAxes.end());
    ArrayAttr axesAttr = builder.getArrayAttr(attrs);
    sum = AllReduceOp::create(builder, loc, sum.getType(), CollectiveKind::sum,
                              sum, mesh.name(), axesAttr);
    count = AllReduceOp::create(builder, loc, count.getType(),
                                CollectiveKind::sum, count, mesh.name(),
                                axesAttr);
  }
  // mean = sum / max(count, 1): 0 when every position is ignored.
  Value safe = MaxOp::create(builder, loc, count,
                             reshaper.constant(loc, scalar, 1.0));
  p.setLocal(ce.getResult(), DivOp::create(builder, loc, sum, safe),
                            Layout::replicated(0));
  return success();
}

LogicalResult mlir::tessel::partitionScatterAdd(SpmdPartitioner &p,
                                                ScatterAddOp sc) {
  OpBuilder &builder = p.builder();
  Resharder &reshaper = p.resharder();
  const MeshInfo &mesh = p.mesh();
  Location loc = sc.getLoc();
  Layout base = p.wanted(sc.getResult());
  int64_t axis = sc.getAxis();
  RankedTensorType bt = typeOf(sc.getBase());
  if (!base.dims[axis].empty() &&
      bt.getDimSize(axis) % mesh.size(base.dims[axis]) != 0)
    base.dims[axis].clear();
  Layout idx = Layout::replicated(typeOf(sc.getIndices()).getRank());
  Layout upd = Layout::replicated(typeOf(sc.getUpdates()).getRank());
  for (int64_t d = 0; d < axis; ++d)
    upd.dims[d] = base.dims[d];
  int64_t ir = typeOf(sc.getIndices()).getRank();
  for (int64_t d = axis + 1; d < bt.getRank(); ++d)
    upd.dims[d - 1 + ir] = base.dims[d];
  FailureOr<Value> b = p.operandAs(loc, sc.getBase(), base);
  FailureOr<Value> i = p.operandAs(loc, sc.getIndices(), idx);
  FailureOr<Value> u = p.operandAs(loc, sc.getUpdates(), upd);
  if (failed(b) || failed(i) || failed(u))
    return failure();
  Value indices = *i;
  if (!base.dims[axis].empty()) {
    RankedTensorType it = typeOf(indices);
    auto scalar = RankedTensorType::get({}, it.getElementType());
    Value block =
        reshaper.axisIndex(loc, base.dims[axis], it.getElementType());
    Value off = MulOp::create(
        builder, loc, block,
        reshaper.constant(loc, scalar, typeOf(*b).getDimSize(axis)));
    indices = SubOp::create(
        builder, loc, indices,
        BroadcastInDimOp::create(builder, loc, it, off, ArrayRef<int64_t>{}));
  }
  Value r = ScatterAddOp::create(builder, loc, *b, indices, *u, axis);
  p.setLocal(sc.getResult(), r, base);
  return success();
}
