//===- TesselOps.cpp - meshes, shardings, collectives, folds --------------===//
//
// Shape-manipulating ops and their type inference live in ShapeOps.cpp;
// verifiers of the remaining ops in Verifiers.cpp.
//
//===----------------------------------------------------------------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/support/Mesh.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `["dp"=2, "tp"=4]`
static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &names,
                                 DenseI64ArrayAttr &sizes) {
  SmallVector<Attribute> nameAttrs;
  SmallVector<int64_t> sizeValues;
  auto parseAxis = [&]() -> ParseResult {
    std::string name;
    int64_t size;
    if (parser.parseString(&name) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    nameAttrs.push_back(parser.getBuilder().getStringAttr(name));
    sizeValues.push_back(size);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square,
                                     parseAxis, " in mesh axis list"))
    return failure();
  names = parser.getBuilder().getArrayAttr(nameAttrs);
  sizes = parser.getBuilder().getDenseI64ArrayAttr(sizeValues);
  return success();
}

static void printMeshAxes(OpAsmPrinter &printer, MeshOp, ArrayAttr names,
                          DenseI64ArrayAttr sizes) {
  printer << '[';
  for (int64_t i = 0, e = std::min<int64_t>(names.size(), sizes.size());
       i < e; ++i) {
    if (i)
      printer << ", ";
    printer << names[i] << '=' << sizes[i];
  }
  printer << ']';
}

/// `[0 -> 1, 1 -> 2]`
static ParseResult parsePairs(OpAsmParser &parser, DenseI64ArrayAttr &pairs) {
  SmallVector<int64_t> flat;
  auto parsePair = [&]() -> ParseResult {
    int64_t source, target;
    if (parser.parseInteger(source) || parser.parseArrow() ||
        parser.parseInteger(target))
      return failure();
    flat.push_back(source);
    flat.push_back(target);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square,
                                     parsePair, " in source -> target pairs"))
    return failure();
  pairs = parser.getBuilder().getDenseI64ArrayAttr(flat);
  return success();
}

static void printPairs(OpAsmPrinter &printer, CollectivePermuteOp,
                       DenseI64ArrayAttr pairs) {
  printer << '[';
  ArrayRef<int64_t> flat = pairs.asArrayRef();
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    printer << (i ? ", " : "") << flat[i] << " -> " << flat[i + 1];
  printer << ']';
}

#include "tessel/dialects/tessel/TesselInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "tessel/dialects/tessel/TesselOps.cpp.inc"

//===----------------------------------------------------------------------===//
// tessel.mesh
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  ArrayRef<int64_t> sizes = getAxisSizes();
  if (getAxisNames().size() != sizes.size())
    return emitOpError() << "has " << getAxisNames().size()
                         << " axis names but " << sizes.size() << " sizes";
  if (sizes.empty())
    return emitOpError() << "needs at least one axis";
  llvm::StringSet<> seen;
  int64_t numDevices = 1;
  for (auto [nameAttr, size] : llvm::zip(getAxisNames(), sizes)) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    if (name.empty())
      return emitOpError() << "has an axis with an empty name";
    if (!::tessel::isValidAxisName(name))
      return emitOpError() << "has an axis named \"" << name
                           << "\"; axis names use none of ':', '(' and ')' "
                           << "(they write sub-axes)";
    if (!seen.insert(name).second)
      return emitOpError() << "has axis \"" << name << "\" twice";
    if (size < 1)
      return emitOpError() << "axis \"" << name << "\" has size " << size
                           << "; every axis needs at least one device";
    if (numDevices > (int64_t(1) << 40) / size)
      return emitOpError() << "has too many devices";
    numDevices *= size;
  }
  if (std::optional<ArrayRef<int64_t>> devices = getDevices()) {
    if (static_cast<int64_t>(devices->size()) != numDevices)
      return emitOpError() << "device list has " << devices->size()
                           << " entries but the mesh has " << numDevices
                           << " devices";
    llvm::SmallDenseSet<int64_t> used;
    for (int64_t device : *devices)
      if (device < 0 || !used.insert(device).second)
        return emitOpError() << "device list must hold distinct, "
                             << "non-negative ranks; rank " << device
                             << (device < 0 ? " is negative" : " repeats");
  }
  return success();
}

int64_t MeshOp::getNumDevices() {
  int64_t n = 1;
  for (int64_t size : getAxisSizes())
    n *= size;
  return n;
}

int64_t MeshOp::getAxisIndex(StringRef axis) {
  StringRef base = axis.split(':').first;
  for (auto [i, name] : llvm::enumerate(getAxisNames()))
    if (cast<StringAttr>(name).getValue() == base)
      return i;
  return -1;
}

int64_t MeshOp::getAxisSize(StringRef axis) {
  std::optional<::tessel::AxisRef> ref = ::tessel::AxisRef::parse(axis);
  int64_t index = ref ? getAxisIndex(axis) : -1;
  if (index < 0)
    return -1;
  int64_t n = getAxisSizes()[index];
  if (ref->isWhole())
    return n;
  return n % (ref->pre * ref->size) == 0 ? ref->size : -1;
}

MeshOp mlir::tessel::lookupMesh(Operation *from, FlatSymbolRefAttr mesh) {
  if (!mesh)
    return {};
  return dyn_cast_or_null<MeshOp>(
      SymbolTable::lookupNearestSymbolFrom(from, mesh.getAttr()));
}

/// Looks up `mesh` or reports that it is missing.
static FailureOr<MeshOp>
getMeshOrError(Operation *from, FlatSymbolRefAttr mesh,
               function_ref<InFlightDiagnostic()> emitError) {
  if (MeshOp meshOp = lookupMesh(from, mesh))
    return meshOp;
  if (Operation *other =
          SymbolTable::lookupNearestSymbolFrom(from, mesh.getAttr())) {
    emitError() << "refers to mesh " << mesh << ", but that symbol is a '"
                << other->getName() << "', not a tessel.mesh";
    return failure();
  }
  InFlightDiagnostic diag = emitError();
  diag << "refers to mesh " << mesh
       << ", which is not defined; declare it with `tessel.mesh " << mesh
       << " [...]` in the module";
  return failure();
}

LogicalResult
mlir::tessel::verifyTensorSize(Type type,
                               function_ref<InFlightDiagnostic()> emitError,
                               StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return success();
  int64_t width = std::max<int64_t>(
      1, (tensor.getElementTypeBitWidth() + 7) / 8);
  int64_t count = 1, bytes = 0;
  bool overflow = false;
  for (int64_t d : tensor.getShape())
    overflow |= llvm::MulOverflow(count, d, count);
  overflow |= llvm::MulOverflow(count, width, bytes);
  if (overflow)
    return emitError() << what << " " << type << " has more elements or "
                       << "bytes than a 64-bit size can count";
  return success();
}

LogicalResult mlir::tessel::verifyShardingFor(
    ShardingAttr sharding, Type type, Operation *from,
    function_ref<InFlightDiagnostic()> emitError, StringRef what) {
  FailureOr<MeshOp> mesh = getMeshOrError(from, sharding.getMesh(), emitError);
  if (failed(mesh))
    return failure();
  for (auto [dim, dimSharding] : llvm::enumerate(sharding.getDims()))
    for (StringAttr axis : dimSharding.getAxes())
      if (mesh->getAxisSize(axis.getValue()) < 0)
        return emitError() << "sharding of " << what << " names axis \""
                           << axis.getValue() << "\" (dimension " << dim
                           << "), which mesh " << sharding.getMesh()
                           << (mesh->getAxisIndex(axis.getValue()) < 0
                                   ? " does not have"
                                   : " cannot split that way (a sub-axis "
                                     "(k)m needs k*m to divide the axis)");
  for (auto [dim, dimSharding] : llvm::enumerate(sharding.getDims())) {
    ArrayRef<StringAttr> axes = dimSharding.getAxes();
    SmallVector<StringAttr> canonical;
    for (StringAttr axis : axes) {
      ::tessel::AxisRef ref = *::tessel::AxisRef::parse(axis.getValue());
      if (!ref.isWhole() && ref.pre == 1 &&
          ref.size == mesh->getAxisSize(ref.name))
        return emitError() << "sharding of " << what << " names sub-axis \""
                           << axis.getValue() << "\" (dimension " << dim
                           << "), which is all of axis \"" << ref.name
                           << "\"; write the axis";
    }
    for (size_t i = 1; i < axes.size(); ++i) {
      ::tessel::AxisRef a = *::tessel::AxisRef::parse(axes[i - 1].getValue());
      ::tessel::AxisRef b = *::tessel::AxisRef::parse(axes[i].getValue());
      if (!a.isWhole() && !b.isWhole() && a.name == b.name &&
          a.pre * a.size == b.pre)
        return emitError() << "sharding of " << what << " lists sub-axes \""
                           << axes[i - 1].getValue() << "\" and \""
                           << axes[i].getValue() << "\" (dimension " << dim
                           << "), which continue each other; write them as "
                           << "one";
    }
  }
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return emitError() << "sharding of " << what
                       << " needs a ranked tensor, got " << type;
  if (tensor.getRank() != sharding.getRank())
    return emitError() << "sharding of " << what << " has "
                       << sharding.getRank() << " dimension(s) but " << what
                       << " has rank " << tensor.getRank() << " (" << type
                       << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// tessel.sharding_constraint
//===----------------------------------------------------------------------===//

LogicalResult
ShardingConstraintOp::verifySymbolUses(SymbolTableCollection &) {
  return verifyShardingFor(
      getSharding(), getInput().getType(), *this,
      [&] { return emitOpError(); }, "the operand");
}

//===----------------------------------------------------------------------===//
// tessel.constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto value = dyn_cast_or_null<ElementsAttr>(adaptor.getValueAttr());
  if (!value)
    return emitOptionalError(loc, "'tessel.constant' op needs a tensor value");
  types.push_back(value.getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  // The result constraint already checks the element type and static shape;
  // this guards values whose type is not a tensor at all.
  if (getValue().getType() != getType())
    return emitOpError() << "value type " << getValue().getType()
                         << " differs from the result type " << getType();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

void ConstantOp::getAsmResultNames(
    function_ref<void(Value, StringRef)> setNameFn) {
  setNameFn(getResult(), "cst");
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
/// The group size of a collective after checking its mesh and axes, or
/// failure with a diagnostic.
FailureOr<int64_t> verifyCollectiveAxes(Operation *op, FlatSymbolRefAttr mesh,
                                        ArrayAttr axes) {
  FailureOr<MeshOp> meshOp =
      getMeshOrError(op, mesh, [&] { return op->emitOpError(); });
  if (failed(meshOp))
    return failure();
  if (axes.empty())
    return op->emitOpError()
           << "needs at least one mesh axis to communicate over";
  SmallVector<StringRef> seen;
  int64_t groupSize = 1;
  for (Attribute attr : axes) {
    StringRef axis = cast<StringAttr>(attr).getValue();
    int64_t size = meshOp->getAxisSize(axis);
    if (size < 0)
      return op->emitOpError() << "mesh " << mesh << " has no axis \"" << axis
                               << "\"";
    for (StringRef other : seen)
      if (::tessel::axesConflict(axis, other))
        return op->emitOpError()
               << "lists mesh axis \"" << axis << "\" twice"
               << (axis == other ? ""
                                 : " (it overlaps \"" + other.str() + "\")");
    seen.push_back(axis);
    groupSize *= size;
  }
  return groupSize;
}

LogicalResult verifyDimIndex(Operation *op, StringRef name, int64_t dim,
                             int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError() << name << " " << dim
                             << " is not a dimension of a rank-" << rank
                             << " tensor";
  return success();
}

/// Checks that `result` is `input` with dimension `dim` scaled: multiplied by
/// `mul` and divided by `div`.
LogicalResult verifyScaledShape(Operation *op, RankedTensorType input,
                                RankedTensorType result,
                                ArrayRef<std::pair<int64_t, int64_t>> dimMul,
                                ArrayRef<std::pair<int64_t, int64_t>> dimDiv) {
  SmallVector<int64_t> expected(input.getShape());
  for (auto [dim, factor] : dimDiv) {
    if (expected[dim] % factor != 0)
      return op->emitOpError()
             << "dimension " << dim << " of the operand (size "
             << expected[dim] << ") is not divisible by the group size "
             << factor;
    expected[dim] /= factor;
  }
  for (auto [dim, factor] : dimMul)
    expected[dim] *= factor;
  auto expectedType = input.clone(expected);
  if (expectedType != result)
    return op->emitOpError() << "result type " << result
                             << " should be " << expectedType
                             << " for a group of this size";
  return success();
}
} // namespace

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &) {
  return verifyCollectiveAxes(*this, getMeshAttr(), getAxes());
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &) {
  FailureOr<int64_t> n = verifyCollectiveAxes(*this, getMeshAttr(), getAxes());
  if (failed(n))
    return failure();
  auto input = getInput().getType();
  if (failed(verifyDimIndex(*this, "dim", getDim(), input.getRank())))
    return failure();
  return verifyScaledShape(*this, input, getResult().getType(),
                           {{getDim(), *n}}, {});
}

/// A collective whose result is one group-size piece of its operand along
/// `dim` (reduce_scatter, shard_slice).
template <typename Op>
static LogicalResult verifyOnePiece(Op op) {
  FailureOr<int64_t> n = verifyCollectiveAxes(op, op.getMeshAttr(), op.getAxes());
  if (failed(n))
    return failure();
  auto input = op.getInput().getType();
  if (failed(verifyDimIndex(op, "dim", op.getDim(), input.getRank())))
    return failure();
  return verifyScaledShape(op, input, op.getResult().getType(), {},
                           {{op.getDim(), *n}});
}

LogicalResult ReduceScatterOp::verifySymbolUses(SymbolTableCollection &) {
  return verifyOnePiece(*this);
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &) {
  FailureOr<int64_t> n = verifyCollectiveAxes(*this, getMeshAttr(), getAxes());
  if (failed(n))
    return failure();
  auto input = getInput().getType();
  if (failed(verifyDimIndex(*this, "split_dim", getSplitDim(),
                            input.getRank())) ||
      failed(verifyDimIndex(*this, "concat_dim", getConcatDim(),
                            input.getRank())))
    return failure();
  return verifyScaledShape(*this, input, getResult().getType(),
                           {{getConcatDim(), *n}}, {{getSplitDim(), *n}});
}

LogicalResult CollectivePermuteOp::verify() {
  if (getPairs().size() % 2 != 0)
    return emitOpError() << "pairs must come as source -> target";
  return success();
}

LogicalResult CollectivePermuteOp::verifySymbolUses(SymbolTableCollection &) {
  FailureOr<int64_t> n = verifyCollectiveAxes(*this, getMeshAttr(), getAxes());
  if (failed(n))
    return failure();
  ArrayRef<int64_t> flat = getPairs();
  llvm::SmallSet<int64_t, 8> sources, targets;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) {
    int64_t source = flat[i], target = flat[i + 1];
    for (int64_t index : {source, target})
      if (index < 0 || index >= *n)
        return emitOpError() << "pair " << source << " -> " << target
                             << " names index " << index
                             << " outside the group of size " << *n;
    if (!sources.insert(source).second)
      return emitOpError() << "index " << source << " is a source twice";
    if (!targets.insert(target).second)
      return emitOpError() << "index " << target << " is a target twice";
  }
  return success();
}

static LogicalResult verifyPeer(Operation *op, FlatSymbolRefAttr mesh,
                                ArrayAttr axes, StringRef name, int64_t peer,
                                int64_t channel) {
  FailureOr<int64_t> n = verifyCollectiveAxes(op, mesh, axes);
  if (failed(n))
    return failure();
  if (peer < 0 || peer >= *n)
    return op->emitOpError() << name << " " << peer
                             << " is outside the group of size " << *n;
  if (channel < 0)
    return op->emitOpError() << "channel " << channel << " is negative";
  return success();
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &) {
  return verifyPeer(*this, getMeshAttr(), getAxes(), "target", getTarget(),
                    getChannel());
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &) {
  return verifyPeer(*this, getMeshAttr(), getAxes(), "source", getSource(),
                    getChannel());
}

LogicalResult AxisIndexOp::verifySymbolUses(SymbolTableCollection &) {
  return verifyCollectiveAxes(*this, getMeshAttr(), getAxes());
}

LogicalResult ShardSliceOp::verifySymbolUses(SymbolTableCollection &) {
  return verifyOnePiece(*this);
}

int64_t mlir::tessel::collectiveTrafficBytes(Operation *op) {
  auto bytes = [](Type t) -> int64_t {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return 0;
    int64_t bits = tensor.getElementTypeBitWidth();
    return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
  };
  int64_t in = op->getNumOperands() ? bytes(op->getOperand(0).getType()) : 0;
  int64_t out = op->getNumResults() ? bytes(op->getResult(0).getType()) : 0;
  return std::max(in, out);
}

//===----------------------------------------------------------------------===//
// Index ranges
//===----------------------------------------------------------------------===//

int64_t mlir::tessel::indexedRange(
    Value value, function_ref<RankedTensorType(Value)> globalType) {
  auto dim = [&](Value v, int64_t d) {
    RankedTensorType t = globalType ? globalType(v) : RankedTensorType();
    if (!t)
      t = cast<RankedTensorType>(v.getType());
    return t.getDimSize(d);
  };
  int64_t bound = -1;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    int64_t n = -1;
    if (auto g = dyn_cast<GatherOp>(user); g && use.getOperandNumber() == 1)
      n = dim(g.getTable(), g.getAxis());
    else if (auto s = dyn_cast<ScatterAddOp>(user);
             s && use.getOperandNumber() == 1)
      n = dim(s.getBase(), s.getAxis());
    else if (auto ce = dyn_cast<SoftmaxCrossEntropyOp>(user);
             ce && use.getOperandNumber() == 1)
      n = dim(ce.getLogits(),
              cast<RankedTensorType>(ce.getLogits().getType()).getRank() - 1);
    else if (auto oh = dyn_cast<OneHotOp>(user))
      n = cast<RankedTensorType>(oh.getType()).getShape().back();
    if (n > 0 && (bound < 0 || n < bound))
      bound = n;
  }
  return bound;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value mlir::tessel::createSplat(OpBuilder &builder, Location loc,
                                RankedTensorType type, double value) {
  Attribute scalar;
  if (auto ft = dyn_cast<FloatType>(type.getElementType())) {
    APFloat v(value);
    bool lost;
    v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    scalar = builder.getFloatAttr(ft, v);
  } else {
    // Saturate: ±inf (the identity of max/min) becomes the type's lowest /
    // highest value, not whatever an out-of-range cast gives (undefined
    // behaviour, 0 for i32 on x86). i1 is 0/1.
    unsigned width = type.getElementType().getIntOrFloatBitWidth();
    APInt lo = width == 1 ? APInt(1, 0) : APInt::getSignedMinValue(width);
    APInt hi = width == 1 ? APInt(1, 1) : APInt::getSignedMaxValue(width);
    double loD = width == 1 ? 0.0 : lo.getSExtValue();
    double hiD = width == 1 ? 1.0 : double(hi.getSExtValue());
    APInt v = std::isnan(value) ? APInt(width, 0)
              : value <= loD    ? lo
              : value >= hiD
                  ? hi
                  : APInt(width, uint64_t(static_cast<int64_t>(value)),
                          /*isSigned=*/true, /*implicitTrunc=*/true);
    scalar = builder.getIntegerAttr(type.getElementType(), v);
  }
  return ConstantOp::create(builder, loc, DenseElementsAttr::get(type, scalar));
}

std::string mlir::tessel::locationString(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  return "unknown location";
}
