//===- Describe.cpp - program descriptions from the IR --------------------===//

#include "tessel/program/Describe.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/program/Signature.h"

using namespace mlir;
using namespace mlir::tessel;
namespace tp = ::tessel::program;

namespace {

std::optional<tp::Role> explicitRole(DictionaryAttr attrs) {
  if (!attrs)
    return std::nullopt;
  auto role = attrs.getAs<StringAttr>(TesselDialect::kRuntimeRoleAttrName);
  if (!role)
    return std::nullopt;
  return tp::parseRole(role.getValue()); // the verifier checked it
}

bool isIntegerScalar(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getRank() == 0 && isa<IntegerType>(t.getElementType());
}

/// The naming convention of hand-written functions (docs/running.md).
tp::Role conventionalArgumentRole(func::FuncOp func, unsigned index) {
  std::string name = tp::argName(func, index);
  for (unsigned r = 0; r < func.getNumResults(); ++r)
    if (tp::resultName(func, r) == name &&
        !explicitRole(func.getResultAttrDict(r)))
      return StringRef(name).contains(".accum.") ? tp::Role::Accumulator
                                                 : tp::Role::State;
  Type type = func.getArgumentTypes()[index];
  if (name == "step" && isIntegerScalar(type))
    return tp::Role::Step;
  if (name == "lr")
    return tp::Role::LearningRate;
  if (name == "apply" && isIntegerScalar(type))
    return tp::Role::Apply;
  if (name == "grad_scale")
    return tp::Role::GradScale;
  if (name == "seed" && isIntegerScalar(type))
    return tp::Role::Seed;
  if (name == "input_ids")
    return tp::Role::Tokens;
  if (name == "labels")
    return tp::Role::Labels;
  return tp::Role::Input;
}

} // namespace

tp::Role tp::argumentRole(func::FuncOp func, unsigned index) {
  if (std::optional<Role> role = explicitRole(func.getArgAttrDict(index)))
    return *role;
  return conventionalArgumentRole(func, index);
}

tp::Role tp::resultRole(func::FuncOp func, unsigned index) {
  if (std::optional<Role> role = explicitRole(func.getResultAttrDict(index)))
    return *role;
  std::string name = tp::resultName(func, index);
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    if (tp::argName(func, a) == name &&
        !explicitRole(func.getArgAttrDict(a)))
      return conventionalArgumentRole(func, a);
  if (name == "loss")
    return Role::Loss;
  if (name == "grad_norm")
    return Role::GradNorm;
  return Role::Output;
}

tp::MeshInfo tp::describeMesh(func::FuncOp func) {
  MeshInfo info;
  info.name = "host";
  auto ref = func->getAttrOfType<FlatSymbolRefAttr>(
      TesselDialect::kSpmdAttrName);
  MeshOp mesh = ref ? lookupMesh(func, ref) : MeshOp();
  if (!mesh)
    return info;
  return describeMesh(mesh);
}

tp::MeshInfo tp::describeMesh(MeshOp mesh) {
  MeshInfo info;
  info.name = mesh.getSymName().str();
  for (Attribute name : mesh.getAxisNames())
    info.shape.axisNames.push_back(cast<StringAttr>(name).getValue().str());
  llvm::append_range(info.shape.axisSizes, mesh.getAxisSizes());
  if (std::optional<ArrayRef<int64_t>> devices = mesh.getDevices())
    info.devices.assign(devices->begin(), devices->end());
  return info;
}

namespace {

/// The tessel.sharding axes of each dimension (empty: replicated).
std::vector<std::vector<std::string>> dimsOf(DictionaryAttr attrs,
                                             int64_t rank) {
  return tp::shardingAxes(
      attrs ? attrs.getAs<ShardingAttr>(TesselDialect::kShardingAttrName)
            : ShardingAttr(),
      rank);
}

FailureOr<tp::TensorInfo> describeTensor(func::FuncOp func, Type type,
                                         RankedTensorType global,
                                         DictionaryAttr attrs,
                                         std::string name, tp::Role role) {
  auto local = dyn_cast<RankedTensorType>(type);
  if (!local)
    return func.emitError() << "argument or result '" << name
                            << "' is not a ranked tensor";
  llvm::Expected<::tessel::DType> dtype = tp::dtypeOf(local.getElementType());
  if (!dtype) {
    llvm::consumeError(dtype.takeError());
    return func.emitError()
           << "element type " << local.getElementType()
           << " cannot cross the runtime boundary; use "
           << "f16/bf16/f32/f64/i1/i32/i64";
  }
  tp::TensorInfo info;
  info.name = std::move(name);
  info.role = role;
  info.dtype = *dtype;
  info.shape.assign(local.getShape().begin(), local.getShape().end());
  info.globalShape.assign(global.getShape().begin(), global.getShape().end());
  info.dims = dimsOf(attrs, local.getRank());
  return info;
}

} // namespace

FailureOr<tp::Entry> tp::describeEntry(func::FuncOp func, StringRef symbol) {
  Entry entry;
  entry.name = func.getSymName().str();
  entry.symbol = symbol.str();
  entry.mesh = describeMesh(func).name;
  for (unsigned a = 0; a < func.getNumArguments(); ++a) {
    FailureOr<TensorInfo> info = describeTensor(
        func, func.getArgumentTypes()[a], tp::globalArgType(func, a),
        func.getArgAttrDict(a), tp::argName(func, a), argumentRole(func, a));
    if (failed(info))
      return failure();
    llvm::Expected<::tessel::InitSpec> spec = tp::initSpecFor(func, a);
    if (!spec)
      return func.emitError() << "argument '" << info->name
                              << "': " << llvm::toString(spec.takeError());
    info->init = ::tessel::printInitSpec(*spec);
    entry.arguments.push_back(std::move(*info));
  }
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    FailureOr<TensorInfo> info = describeTensor(
        func, func.getResultTypes()[r], tp::globalResultType(func, r),
        func.getResultAttrDict(r), tp::resultName(func, r),
        resultRole(func, r));
    if (failed(info))
      return failure();
    entry.results.push_back(std::move(*info));
  }
  return entry;
}
