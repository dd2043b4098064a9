//===- Emitter.cpp - helpers for building model IR ------------------------===//

#include "Emitter.h"

#include <limits>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::models;

Emitter::Emitter(ModuleOp module, StringRef name, Type elementType)
    : builder(module.getContext()), location(builder.getUnknownLoc()),
      elemType(elementType) {
  builder.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(builder, location, name,
                              builder.getFunctionType({}, {}));
  body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
}

ArrayAttr Emitter::strings(ArrayRef<StringRef> values) {
  SmallVector<Attribute> attrs;
  for (StringRef v : values)
    attrs.push_back(builder.getStringAttr(v));
  return builder.getArrayAttr(attrs);
}

Value Emitter::param(StringRef name, ArrayRef<int64_t> shape,
                     ArrayRef<StringRef> logicalAxes, StringRef init) {
  Value arg = body->insertArgument(numParams, tensor(shape), location);
  NamedAttrList attrs;
  attrs.set(TesselDialect::kNameAttrName, builder.getStringAttr(name));
  attrs.set(TesselDialect::kLogicalAxesAttrName, strings(logicalAxes));
  attrs.set(TesselDialect::kInitAttrName, builder.getStringAttr(init));
  argAttrs.insert(argAttrs.begin() + numParams,
                  attrs.getDictionary(builder.getContext()));
  ++numParams;
  return arg;
}

Value Emitter::data(StringRef name, ArrayRef<int64_t> shape, Type elementType,
                    ArrayRef<StringRef> logicalAxes, StringRef init) {
  Value arg = body->addArgument(tensor(shape, elementType), location);
  NamedAttrList attrs;
  attrs.set(TesselDialect::kNameAttrName, builder.getStringAttr(name));
  attrs.set(TesselDialect::kLogicalAxesAttrName, strings(logicalAxes));
  attrs.set(TesselDialect::kInitAttrName, builder.getStringAttr(init));
  argAttrs.push_back(attrs.getDictionary(builder.getContext()));
  return arg;
}

Value Emitter::dropout(Value x) {
  if (dropoutRate == 0)
    return x;
  Type i64 = builder.getI64Type();
  if (!seed) {
    // Before the data arguments' users, at the start of the body: the
    // argument itself is added last.
    seed = data("seed", {}, i64, {}, "zeros");
    NamedAttrList attrs(argAttrs.back());
    attrs.set(TesselDialect::kRuntimeRoleAttrName,
              builder.getStringAttr("seed"));
    argAttrs.back() = attrs.getDictionary(builder.getContext());
  }
  Value s = seed;
  if (numMasks > 0)
    s = op<AddOp>(seed, splat({}, double(numMasks), i64));
  ++numMasks;
  auto type = cast<RankedTensorType>(x.getType());
  Value mask = op<DropoutMaskOp>(type, s, APFloat(dropoutRate));
  return op<MulOp>(x, mask);
}

func::FuncOp Emitter::finish(ArrayRef<Value> results,
                             ArrayRef<StringRef> names) {
  func::ReturnOp::create(builder, location, results);
  SmallVector<Type> resultTypes;
  for (Value r : results)
    resultTypes.push_back(r.getType());
  func.setType(builder.getFunctionType(body->getArgumentTypes(), resultTypes));
  func.setAllArgAttrs(argAttrs);
  for (auto [i, name] : llvm::enumerate(names))
    func.setResultAttr(i, TesselDialect::kNameAttrName,
                       builder.getStringAttr(name));
  return func;
}

Value Emitter::splat(ArrayRef<int64_t> shape, double value, Type elt) {
  return createSplat(builder, location, tensor(shape, elt), value);
}

Value Emitter::matmul(Value x, Value w, int64_t wDim) {
  int64_t xLast = shapeOf(x).size() - 1;
  return op<DotGeneralOp>(x, w, ArrayRef<int64_t>{}, ArrayRef<int64_t>{},
                          ArrayRef<int64_t>{xLast}, ArrayRef<int64_t>{wDim});
}

Value Emitter::broadcast(Value x, ArrayRef<int64_t> shape,
                         ArrayRef<int64_t> dims) {
  auto elt = cast<RankedTensorType>(x.getType()).getElementType();
  return op<BroadcastInDimOp>(tensor(shape, elt), x, dims);
}

Value Emitter::addBias(Value x, Value bias) {
  ArrayRef<int64_t> shape = shapeOf(x);
  Value b = broadcast(bias, shape, {int64_t(shape.size()) - 1});
  return op<AddOp>(x, b);
}

Value Emitter::reshape(Value x, ArrayRef<int64_t> shape) {
  auto elt = cast<RankedTensorType>(x.getType()).getElementType();
  return op<ReshapeOp>(tensor(shape, elt), x);
}

Value Emitter::transpose(Value x, ArrayRef<int64_t> perm) {
  return op<TransposeOp>(x, perm);
}

Value Emitter::scale(Value x, double factor) {
  return op<MulOp>(x, splat(shapeOf(x), factor,
                            cast<RankedTensorType>(x.getType())
                                .getElementType()));
}

Value Emitter::tag(Value v, ArrayRef<StringRef> logicalAxes) {
  v.getDefiningOp()->setAttr(TesselDialect::kLogicalAxesAttrName,
                             strings(logicalAxes));
  return v;
}

void Emitter::tagSince(Operation *mark, StringRef name, Attribute value) {
  for (Operation *op = mark ? mark->getNextNode() : &body->front(); op;
       op = op->getNextNode())
    if (!op->hasAttr(name))
      op->setAttr(name, value);
}
