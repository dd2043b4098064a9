//===- ShapeOps.cpp - type inference of shape-changing ops ----------------===//
//
// Each inferReturnTypes runs both when a builder omits the result type and
// when the verifier checks a parsed one, so its messages are the verifier's.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/ShapeInference.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {
/// Turns a shape error into a located diagnostic `'tessel.<op>' op <msg>`.
LogicalResult report(std::optional<Location> loc, StringRef opName,
                     llvm::Error err) {
  std::string message = llvm::toString(std::move(err));
  return emitOptionalError(loc, "'", opName, "' op ", message);
}

/// The ranked type of `value`, or failure with a diagnostic. The ODS
/// constraints guarantee ranked tensors in verified IR; builders may not.
FailureOr<RankedTensorType> rankedType(std::optional<Location> loc,
                                       StringRef opName, Value value,
                                       StringRef what) {
  if (auto type = dyn_cast_or_null<RankedTensorType>(
          value ? value.getType() : Type()))
    return type;
  (void)emitOptionalError(loc, "'", opName, "' op ", what,
                          " must be a ranked tensor");
  return failure();
}

/// Pushes `shape` with `like`'s element type, or reports the error.
LogicalResult pushShape(std::optional<Location> loc, StringRef opName,
                        llvm::Expected<shape::Shape> shape,
                        RankedTensorType like, SmallVectorImpl<Type> &types) {
  if (!shape)
    return report(loc, opName, shape.takeError());
  types.push_back(like.clone(*shape));
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// tessel.compare
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> lhs =
      rankedType(loc, getOperationName(), adaptor.getLhs(), "lhs");
  if (failed(lhs))
    return failure();
  types.push_back(lhs->clone(IntegerType::get(ctx, 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// tessel.broadcast_in_dim
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  RankedTensorType input = getInput().getType(), result = getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError() << "operand element type " << input.getElementType()
                         << " differs from result element type "
                         << result.getElementType();
  if (llvm::Error err = shape::checkBroadcastInDim(
          input.getShape(), result.getShape(), getDims()))
    return emitOpError() << llvm::toString(std::move(err));
  return success();
}

//===----------------------------------------------------------------------===//
// tessel.reshape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = getInput().getType(), result = getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError() << "operand element type " << input.getElementType()
                         << " differs from result element type "
                         << result.getElementType();
  int64_t in = shape::numElements(input.getShape());
  int64_t out = shape::numElements(result.getShape());
  if (in != out)
    return emitOpError() << "operand " << input << " has " << in
                         << " elements but result " << result << " has "
                         << out;
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// tessel.transpose
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      rankedType(loc, getOperationName(), adaptor.getInput(), "operand");
  if (failed(input))
    return failure();
  return pushShape(loc, getOperationName(),
                   shape::transpose(input->getShape(), adaptor.getPermutation()),
                   *input, types);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getInput();
}

//===----------------------------------------------------------------------===//
// tessel.slice
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      rankedType(loc, getOperationName(), adaptor.getInput(), "operand");
  if (failed(input))
    return failure();
  return pushShape(loc, getOperationName(),
                   shape::slice(input->getShape(), adaptor.getStart(),
                                adaptor.getLimit(), adaptor.getStrides()),
                   *input, types);
}

//===----------------------------------------------------------------------===//
// tessel.concatenate
//===----------------------------------------------------------------------===//

LogicalResult ConcatenateOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  SmallVector<ArrayRef<int64_t>> shapes;
  RankedTensorType first;
  for (auto [i, value] : llvm::enumerate(adaptor.getInputs())) {
    FailureOr<RankedTensorType> type = rankedType(
        loc, getOperationName(), value, ("operand #" + Twine(i)).str());
    if (failed(type))
      return failure();
    if (!first)
      first = *type;
    else if (type->getElementType() != first.getElementType())
      return emitOptionalError(loc, "'", getOperationName(), "' op operand #",
                               i, " has element type ", type->getElementType(),
                               " but operand #0 has ",
                               first.getElementType());
    shapes.push_back(type->getShape());
  }
  if (shapes.empty())
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op needs at least one operand");
  return pushShape(loc, getOperationName(),
                   shape::concatenate(shapes, adaptor.getDim()), first, types);
}

//===----------------------------------------------------------------------===//
// tessel.pad
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      rankedType(loc, getOperationName(), adaptor.getInput(), "operand");
  if (failed(input))
    return failure();
  return pushShape(
      loc, getOperationName(),
      shape::pad(input->getShape(), adaptor.getLow(), adaptor.getHigh()),
      *input, types);
}

//===----------------------------------------------------------------------===//
// tessel.dot_general
//===----------------------------------------------------------------------===//

LogicalResult DotGeneralOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> lhs =
      rankedType(loc, getOperationName(), adaptor.getLhs(), "lhs");
  FailureOr<RankedTensorType> rhs =
      failed(lhs) ? FailureOr<RankedTensorType>(failure())
                  : rankedType(loc, getOperationName(), adaptor.getRhs(), "rhs");
  if (failed(rhs))
    return failure();
  if (lhs->getElementType() != rhs->getElementType())
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op lhs element type ", lhs->getElementType(),
                             " differs from rhs element type ",
                             rhs->getElementType(),
                             "; insert a tessel.convert");
  return pushShape(loc, getOperationName(),
                   shape::dotGeneral(lhs->getShape(), rhs->getShape(),
                                     adaptor.getLhsBatchingDims(),
                                     adaptor.getRhsBatchingDims(),
                                     adaptor.getLhsContractingDims(),
                                     adaptor.getRhsContractingDims()),
                   *lhs, types);
}

//===----------------------------------------------------------------------===//
// tessel.reduce
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      rankedType(loc, getOperationName(), adaptor.getInput(), "operand");
  if (failed(input))
    return failure();
  if (adaptor.getKind() == ReduceKind::mean &&
      !isa<FloatType>(input->getElementType()))
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op mean needs a floating-point operand, got ",
                             input->getElementType());
  return pushShape(loc, getOperationName(),
                   shape::reduce(input->getShape(), adaptor.getDims()), *input,
                   types);
}

//===----------------------------------------------------------------------===//
// tessel.gather
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> table =
      rankedType(loc, getOperationName(), adaptor.getTable(), "table");
  FailureOr<RankedTensorType> indices =
      failed(table) ? FailureOr<RankedTensorType>(failure())
                    : rankedType(loc, getOperationName(), adaptor.getIndices(),
                                 "indices");
  if (failed(indices))
    return failure();
  return pushShape(loc, getOperationName(),
                   shape::gather(table->getShape(), indices->getShape(),
                                 adaptor.getAxis()),
                   *table, types);
}

//===----------------------------------------------------------------------===//
// tessel.top_k
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      rankedType(loc, getOperationName(), adaptor.getInput(), "operand");
  if (failed(input))
    return failure();
  llvm::Expected<shape::Shape> shape =
      shape::topK(input->getShape(), adaptor.getK());
  if (!shape)
    return report(loc, getOperationName(), shape.takeError());
  types.push_back(input->clone(*shape));
  types.push_back(input->clone(*shape, IntegerType::get(ctx, 32)));
  return success();
}

//===----------------------------------------------------------------------===//
// tessel.softmax_cross_entropy
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> logits =
      rankedType(loc, getOperationName(), adaptor.getLogits(), "logits");
  FailureOr<RankedTensorType> labels =
      failed(logits) ? FailureOr<RankedTensorType>(failure())
                     : rankedType(loc, getOperationName(), adaptor.getLabels(),
                                  "labels");
  if (failed(labels))
    return failure();
  if (logits->getRank() < 1)
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op logits must have rank at least 1 (the "
                             "classes are the last dimension)");
  ArrayRef<int64_t> positions = logits->getShape().drop_back();
  if (labels->getShape() != positions)
    return emitOptionalError(
        loc, "'", getOperationName(), "' op labels ", *labels,
        " must have the logits' shape without the class dimension (",
        RankedTensorType::get(positions, labels->getElementType()), ")");
  if (adaptor.getReduction() == LossReduction::none)
    types.push_back(logits->clone(positions));
  else
    types.push_back(logits->clone(ArrayRef<int64_t>{}));
  return success();
}
