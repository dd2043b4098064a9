//===- Verifiers.cpp - verifiers of element-preserving tessel ops ---------===//

#include "tessel/dialects/tessel/ShapeInference.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tessel;

/// Checks that `dim` is a dimension of `type` (emitting on `op`).
static LogicalResult verifyDimOf(Operation *op, StringRef what, int64_t dim,
                                 RankedTensorType type) {
  if (llvm::Error err = shape::checkDim(what, dim, type.getRank()))
    return op->emitOpError() << llvm::toString(std::move(err));
  return success();
}

LogicalResult IotaOp::verify() {
  if (getType().getRank() < 1)
    return emitOpError() << "result must have rank at least 1";
  return verifyDimOf(*this, "dim", getDim(), getType());
}

LogicalResult CumsumOp::verify() {
  return verifyDimOf(*this, "dim", getDim(), getType());
}

LogicalResult SoftmaxOp::verify() {
  return verifyDimOf(*this, "dim", getDim(), getType());
}

/// Shared by layer_norm and rms_norm: `param` is 1-d of `input`'s last
/// dimension with its element type; epsilon is positive.
static LogicalResult verifyNormParam(Operation *op, RankedTensorType input,
                                     RankedTensorType param, StringRef name,
                                     double epsilon) {
  if (input.getRank() < 1)
    return op->emitOpError() << "operand must have rank at least 1";
  int64_t features = input.getShape().back();
  if (param.getRank() != 1 || param.getDimSize(0) != features ||
      param.getElementType() != input.getElementType())
    return op->emitOpError()
           << name << " " << param << " must be "
           << RankedTensorType::get({features}, input.getElementType())
           << " (the operand's last dimension)";
  if (!(epsilon > 0))
    return op->emitOpError() << "epsilon " << epsilon << " must be positive";
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNormParam(*this, getInput().getType(), getScale().getType(),
                         "scale and bias", getEpsilon().convertToDouble());
}

LogicalResult RmsNormOp::verify() {
  return verifyNormParam(*this, getInput().getType(), getScale().getType(),
                         "scale", getEpsilon().convertToDouble());
}

LogicalResult ScatterAddOp::verify() {
  RankedTensorType base = getBase().getType();
  llvm::Expected<shape::Shape> expected = shape::gather(
      base.getShape(), getIndices().getType().getShape(), getAxis());
  if (!expected)
    return emitOpError() << llvm::toString(expected.takeError());
  RankedTensorType updates = getUpdates().getType();
  RankedTensorType expectedType = base.clone(*expected);
  if (updates != expectedType)
    return emitOpError() << "updates " << updates << " must be "
                         << expectedType
                         << " (base.shape[:axis] + indices.shape + "
                            "base.shape[axis+1:])";
  return success();
}

LogicalResult OneHotOp::verify() {
  ArrayRef<int64_t> indices = getIndices().getType().getShape();
  ArrayRef<int64_t> result = getType().getShape();
  if (result.size() != indices.size() + 1 ||
      result.drop_back() != indices)
    return emitOpError() << "result " << getType()
                         << " must have the indices' shape plus one last "
                            "dimension (the depth)";
  return success();
}

LogicalResult DropoutMaskOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError() << "rate " << rate << " must be in [0, 1)";
  std::optional<ArrayRef<int64_t>> global = getGlobalShape();
  if (!global && getOffsets().empty())
    return success();
  if (!global)
    return emitOpError() << "offsets need the global shape ('at [...] of "
                            "[...]')";
  ArrayRef<int64_t> local = getType().getShape();
  if (getOffsets().size() != local.size() || global->size() != local.size())
    return emitOpError() << "a block needs one offset and one global size "
                            "per result dimension (the result has rank "
                         << local.size() << ")";
  for (auto [d, size] : llvm::enumerate(*global))
    if (size < local[d])
      return emitOpError() << "block dimension " << d << " (" << local[d]
                           << ") is larger than its global size " << size;
  return success();
}

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Ops whose result has the type of one operand
//===----------------------------------------------------------------------===//

/// Pushes the type of `value` (null-safe for builders given no operand).
static LogicalResult sameTypeAs(std::optional<Location> loc, StringRef opName,
                                Value value, SmallVectorImpl<Type> &types) {
  if (!value)
    return emitOptionalError(loc, "'", opName, "' op is missing an operand");
  types.push_back(value.getType());
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return sameTypeAs(loc, getOperationName(), adaptor.getInput(), types);
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return sameTypeAs(loc, getOperationName(), adaptor.getInput(), types);
}

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return sameTypeAs(loc, getOperationName(), adaptor.getBase(), types);
}

LogicalResult RegionOp::verify() {
  auto func = (*this)->getParentOfType<FunctionOpInterface>();
  auto names = func ? func->getAttrOfType<ArrayAttr>("tessel.regions")
                    : ArrayAttr();
  if (!names || getIndex() >= names.size() ||
      !llvm::all_of(names, llvm::IsaPred<StringAttr>))
    return emitOpError() << "marks region " << getIndex()
                         << ", but its function has no such entry in a "
                            "'tessel.regions' list of names";
  return success();
}
