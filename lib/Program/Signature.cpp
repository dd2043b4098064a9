//===- Signature.cpp - what a function's signature says -------------------===//

#include "tessel/program/Signature.h"
#include "tessel/dialects/tessel/TesselOps.h"

using namespace mlir;
using namespace mlir::tessel;
namespace tp = ::tessel::program;
using ::tessel::DType;
using ::tessel::InitSpec;
using ::tessel::MeshShape;

std::vector<std::vector<std::string>>
tp::shardingAxes(ShardingAttr sharding, int64_t rank) {
  std::vector<std::vector<std::string>> out(rank);
  if (!sharding)
    return out;
  for (auto [d, dim] : llvm::enumerate(sharding.getDims()))
    for (StringAttr axis : dim.getAxes())
      out[d].push_back(axis.getValue().str());
  return out;
}

std::string tp::argName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          index, TesselDialect::kNameAttrName))
    return name.getValue().str();
  return "arg" + std::to_string(index);
}

std::string tp::resultName(func::FuncOp func, unsigned index) {
  if (auto name = func.getResultAttrOfType<StringAttr>(
          index, TesselDialect::kNameAttrName))
    return name.getValue().str();
  return "result" + std::to_string(index);
}

llvm::Expected<InitSpec> tp::initSpecFor(func::FuncOp func,
                                             unsigned index) {
  if (auto spec = func.getArgAttrOfType<StringAttr>(index, "tessel.init"))
    return parseInitSpec(spec.getValue());
  RankedTensorType type = tp::globalArgType(func, index);
  llvm::Expected<DType> dt = tp::dtypeOf(type);
  if (!dt)
    return dt.takeError();
  InitSpec spec;
  if (isFloat(*dt)) {
    spec.kind = InitSpec::Normal;
    spec.a = 1.0;
  } else if (*dt == DType::I1) {
    spec.kind = InitSpec::Bernoulli;
    spec.a = 0.5;
  } else {
    int64_t bound = -1;
    if (!func.isExternal())
      bound = indexedRange(func.getArgument(index), [&](Value v) {
        if (auto arg = dyn_cast<BlockArgument>(v);
            arg && arg.getOwner()->getParentOp() == func)
          return tp::globalArgType(func, arg.getArgNumber());
        return RankedTensorType();
      });
    spec.kind = InitSpec::IntRange;
    spec.a = 0;
    spec.b = bound > 0 ? bound : 16;
  }
  return spec;
}

llvm::Expected<DType> tp::dtypeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    type = tensor.getElementType();
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isInteger(1))
    return DType::I1;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(64))
    return DType::I64;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "Tessel has no element type for " << type;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), os.str());
}

FailureOr<MeshShape> tp::spmdMesh(func::FuncOp func) {
  auto ref = func->getAttrOfType<FlatSymbolRefAttr>("tessel.spmd");
  if (!ref)
    return failure();
  MeshOp mesh = lookupMesh(func, ref);
  if (!mesh)
    return failure();
  MeshShape shape;
  for (Attribute name : mesh.getAxisNames())
    shape.axisNames.push_back(cast<StringAttr>(name).getValue().str());
  llvm::append_range(shape.axisSizes, mesh.getAxisSizes());
  return shape;
}

static RankedTensorType globalType(func::FuncOp func, DictionaryAttr attrs,
                                   Type localType) {
  auto local = cast<RankedTensorType>(localType);
  if (attrs)
    if (auto global = attrs.getAs<TypeAttr>("tessel.global_type"))
      return cast<RankedTensorType>(global.getValue());
  FailureOr<MeshShape> mesh = tp::spmdMesh(func);
  ShardingAttr sharding =
      attrs ? attrs.getAs<ShardingAttr>(TesselDialect::kShardingAttrName)
            : ShardingAttr();
  if (failed(mesh) || !sharding)
    return local;
  SmallVector<int64_t> shape(local.getShape());
  for (auto [d, axes] : llvm::enumerate(tp::shardingAxes(sharding, local.getRank())))
    shape[d] *= mesh->groupSize(axes);
  return local.clone(shape);
}

RankedTensorType tp::globalArgType(func::FuncOp func, unsigned index) {
  return globalType(func, func.getArgAttrDict(index),
                    func.getArgumentTypes()[index]);
}

RankedTensorType tp::globalResultType(func::FuncOp func, unsigned index) {
  return globalType(func, func.getResultAttrDict(index),
                    func.getResultTypes()[index]);
}

