//===- TesselDialect.cpp - tessel dialect and its attribute hooks ---------===//

#include "tessel/dialects/tessel/TesselDialect.h"
#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/program/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/InliningUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "tessel/support/Random.h"
#include <cmath>

using namespace mlir;
using namespace mlir::tessel;

#include "tessel/dialects/tessel/TesselDialect.cpp.inc"
#include "tessel/dialects/tessel/TesselEnums.cpp.inc"

namespace {
/// Every tessel op may be inlined: none depends on its enclosing function.
struct TesselInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void TesselDialect::initialize() {
  registerAttributes();
  addInterfaces<TesselInlinerInterface>();
  addOperations<
#define GET_OP_LIST
#include "tessel/dialects/tessel/TesselOps.cpp.inc"
      >();
}

Operation *TesselDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

//===----------------------------------------------------------------------===//
// Discardable attributes: tessel.sharding, tessel.name, tessel.logical_axes
//===----------------------------------------------------------------------===//

namespace {
/// A module's communicator groups: [{mesh = "m", axes = ["a", ...]}, ...].
LogicalResult verifyGroupList(Operation *op, NamedAttribute attr) {
  auto bad = [&]() {
    return op->emitOpError()
           << "'" << attr.getName().getValue()
           << "' lists a module's communicator groups as an array of "
           << "{mesh = \"name\", axes = [\"axis\", ...]} dictionaries";
  };
  auto list = dyn_cast<ArrayAttr>(attr.getValue());
  if (!isa<ModuleOp>(op) || !list)
    return bad();
  for (Attribute a : list) {
    auto dict = dyn_cast<DictionaryAttr>(a);
    auto axes = dict ? dict.getAs<ArrayAttr>("axes") : ArrayAttr();
    if (!dict || !dict.getAs<StringAttr>("mesh") || !axes ||
        !llvm::all_of(axes, [](Attribute x) { return isa<StringAttr>(x); }))
      return bad();
  }
  return success();
}

/// Checks one known tessel.* attribute attached to a value of type `type`.
LogicalResult verifyValueAttribute(NamedAttribute attr, Type type,
                                   Operation *op, StringRef what) {
  auto emit = [&]() { return op->emitOpError(); };
  StringRef name = attr.getName().getValue();
  if (name == TesselDialect::kShardingAttrName ||
      name == TesselDialect::kStateShardingAttrName ||
      name == TesselDialect::kGradientShardingAttrName) {
    auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
    if (!sharding)
      return emit() << "'" << name << "' on " << what
                    << " must be a #tessel.sharding, got " << attr.getValue();
    return verifyShardingFor(sharding, type, op, emit, what);
  }
  if (name == TesselDialect::kNameAttrName) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return emit() << "'" << name << "' on " << what
                    << " must be a non-empty string";
    return success();
  }
  if (name == TesselDialect::kLogicalAxesAttrName) {
    auto array = dyn_cast<ArrayAttr>(attr.getValue());
    if (!array || !llvm::all_of(array, llvm::IsaPred<StringAttr>))
      return emit() << "'" << name << "' on " << what
                    << " must be an array of strings, one per dimension";
    auto tensor = dyn_cast_or_null<RankedTensorType>(type);
    if (!tensor)
      return emit() << "'" << name << "' on " << what
                    << " needs a ranked tensor, got " << type;
    if (static_cast<int64_t>(array.size()) != tensor.getRank())
      return emit() << "'" << name << "' on " << what << " has "
                    << array.size() << " entries for a tensor of rank "
                    << tensor.getRank();
    return success();
  }
  if (name == TesselDialect::kRuntimeRoleAttrName) {
    bool argument = StringRef(what).starts_with("argument");
    auto str = dyn_cast<StringAttr>(attr.getValue());
    std::optional<::tessel::program::Role> role =
        str ? ::tessel::program::parseRole(str.getValue()) : std::nullopt;
    if (!role || (argument ? !::tessel::program::isArgumentRole(*role)
                           : !::tessel::program::isResultRole(*role)))
      return emit() << "'" << name << "' on " << what << " must be one of "
                    << ::tessel::program::listRoles(argument) << ", got "
                    << attr.getValue();
    return success();
  }
  if (name == TesselDialect::kInitAttrName) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str)
      return emit() << "'" << name << "' on " << what << " must be a string";
    llvm::Expected<::tessel::InitSpec> spec =
        ::tessel::parseInitSpec(str.getValue());
    if (!spec)
      return emit() << "'" << name << "' on " << what << ": "
                    << llvm::toString(spec.takeError());
    return success();
  }
  if (name == TesselDialect::kGlobalTypeAttrName) {
    auto global = dyn_cast<TypeAttr>(attr.getValue());
    auto globalTensor =
        global ? dyn_cast<RankedTensorType>(global.getValue()) : nullptr;
    auto local = dyn_cast_or_null<RankedTensorType>(type);
    if (!globalTensor || !local)
      return emit() << "'" << name << "' on " << what
                    << " must be a tensor type, on a tensor value";
    if (globalTensor.getRank() != local.getRank() ||
        globalTensor.getElementType() != local.getElementType())
      return emit() << "'" << name << "' on " << what << " is "
                    << globalTensor << ", which does not match the rank and "
                    << "element type of the local type " << local;
    return success();
  }
  return emit() << "unknown attribute '" << name << "' on " << what
                << "; the tessel dialect knows '"
                << TesselDialect::kShardingAttrName << "', '"
                << TesselDialect::kNameAttrName << "', '"
                << TesselDialect::kLogicalAxesAttrName << "', '"
                << TesselDialect::kInitAttrName << "', '"
                << TesselDialect::kGlobalTypeAttrName << "', '"
                << TesselDialect::kStateShardingAttrName << "', '"
                << TesselDialect::kGradientShardingAttrName << "', '"
                << TesselDialect::kRuntimeRoleAttrName << "', '"
                << TesselDialect::kSpmdAttrName << "' (on functions) and '"
                << TesselDialect::kLayerAttrName << "', '"
                << TesselDialect::kRecomputeAttrName << "', '"
                << TesselDialect::kStageAttrName << "', '"
                << TesselDialect::kFullPrecisionAttrName << "', '"
                << TesselDialect::kRoleAttrName << "' (on operations)";
}
} // namespace

LogicalResult TesselDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  Region &region = op->getRegion(regionIndex);
  Type type;
  if (argIndex < region.getNumArguments())
    type = region.getArgument(argIndex).getType();
  else if (auto func = dyn_cast<FunctionOpInterface>(op))
    type = func.getArgumentTypes()[argIndex]; // A declaration has no body.
  if (!type)
    return op->emitOpError() << "has no argument #" << argIndex;
  std::string what = ("argument #" + Twine(argIndex)).str();
  if (failed(verifyTensorSize(
          type, [&] { return op->emitOpError(); }, what)))
    return failure();
  return verifyValueAttribute(attr, type, op, what);
}

LogicalResult TesselDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned regionIndex,
                                                         unsigned resultIndex,
                                                         NamedAttribute attr) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func || resultIndex >= func.getResultTypes().size())
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' is only allowed on function results";
  std::string what = ("result #" + Twine(resultIndex)).str();
  if (failed(verifyTensorSize(
          func.getResultTypes()[resultIndex],
          [&] { return op->emitOpError(); }, what)))
    return failure();
  return verifyValueAttribute(attr, func.getResultTypes()[resultIndex], op,
                              what);
}

LogicalResult TesselDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kNameAttrName)
    return verifyValueAttribute(attr, Type(), op, "an operation");
  if (name == kRuntimeRoleAttrName)
    return op->emitOpError() << "'" << name << "' belongs on function "
                             << "arguments and results, not on operations";
  if (name == ::tessel::program::kProgramAttrName ||
      name == ::tessel::program::kEntryAttrName) {
    // Set by tessel-export-entry for tessel-emit-entry.
    bool isProgram = name == ::tessel::program::kProgramAttrName;
    auto entries = dyn_cast<ArrayAttr>(attr.getValue());
    bool ok = isa<ModuleOp>(op) &&
              (isProgram ? isa<StringAttr>(attr.getValue())
                         : entries && llvm::all_of(entries, [](Attribute e) {
                             return isa<DictionaryAttr>(e);
                           }));
    if (!ok)
      return op->emitOpError()
             << "'" << name << "' is "
             << (isProgram ? "the exported program's description (a string)"
                           : "the exported functions (an array of "
                             "dictionaries)")
             << " on a module, as tessel-export-entry sets it";
    return success();
  }
  if (name == ::tessel::program::kGroupsAttrName)
    return verifyGroupList(op, attr);
  if (name == ::tessel::program::kGroupAttrName) {
    // Set by assignCommGroups (tessel/lowering/CommGroups.h).
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (!index || index.getInt() < 0 || !op->getAttr("mesh") ||
        !op->getAttr("axes"))
      return op->emitOpError()
             << "'" << name << "' is a communicating op's index into its "
             << "module's '" << ::tessel::program::kGroupsAttrName
             << "' (a non-negative integer on an op with a mesh and axes)";
    return success();
  }
  if (name == kLayerAttrName || name == kStageAttrName) {
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (!n || n.getInt() < 0)
      return op->emitOpError()
             << "'" << name << "' must be a non-negative integer, got "
             << attr.getValue();
    return success();
  }
  if (name == kFullPrecisionAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' is a unit attribute, "
                               << "got " << attr.getValue();
    return success();
  }
  if (name == kRecomputeAttrName) {
    auto s = dyn_cast<StringAttr>(attr.getValue());
    if (!s || s.getValue().empty())
      return op->emitOpError()
             << "'" << name << "' must be a non-empty group name, got "
             << attr.getValue();
    return success();
  }
  if (name == kRoleAttrName) {
    auto s = dyn_cast<StringAttr>(attr.getValue());
    if (!s || !llvm::is_contained(ArrayRef<StringRef>{"forward", "recompute", "backward_input",
                                   "backward_weight", "optimizer"},
                                  s.getValue()))
      return op->emitOpError()
             << "'" << name << "' must be \"forward\", \"recompute\", "
             << "\"backward_input\", \"backward_weight\" or \"optimizer\", "
             << "got " << attr.getValue();
    return success();
  }
  // Set by --tessel-train-step (tessel/program/Program.h).
  if (name == ::tessel::program::kModelFlopsAttrName) {
    auto flops = dyn_cast<FloatAttr>(attr.getValue());
    if (!flops || !isa<ModuleOp>(op) || !(flops.getValueAsDouble() >= 0) ||
        std::isinf(flops.getValueAsDouble()))
      return op->emitOpError()
             << "'" << name << "' is a module's model FLOPs per step: a "
             << "finite float, not negative";
    return success();
  }
  // Set by --tessel-pipeline-split (tessel/pipeline/Pipeline.h).
  if (name == "tessel.pipeline") {
    auto d = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!d || !isa<ModuleOp>(op) || !d.getAs<StringAttr>("schedule") ||
        !d.getAs<IntegerAttr>("ranks") || !d.getAs<IntegerAttr>("virtual") ||
        !d.getAs<IntegerAttr>("microbatches") ||
        !d.getAs<ArrayAttr>("functions"))
      return op->emitOpError()
             << "'" << name << "' is a module's pipeline: a dictionary with "
             << "schedule, ranks, virtual, microbatches and functions";
    return success();
  }
  if (name == "tessel.pipeline_rank" || name == "tessel.regions") {
    bool ok = isa<FunctionOpInterface>(op) &&
              (name == "tessel.pipeline_rank"
                   ? isa<IntegerAttr>(attr.getValue())
                   : isa<ArrayAttr>(attr.getValue()));
    if (!ok)
      return op->emitOpError() << "'" << name << "' belongs on a function "
                               << "(a pipeline rank: an integer; the names "
                               << "of its tessel.region markers: an array)";
    return success();
  }
  if (name == kSpmdAttrName) {
    auto mesh = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !mesh)
      return op->emitOpError() << "'" << name
                               << "' must be a mesh symbol on a function";
    if (!lookupMesh(op, mesh))
      return op->emitOpError() << "'" << name << "' names " << mesh
                               << ", which is not a tessel.mesh";
    return success();
  }
  // A sharding on an op: one for its single result, or an array of one per
  // result. Logical axes: one list for the op's single result.
  SmallVector<Attribute> perResult;
  auto array = dyn_cast<ArrayAttr>(attr.getValue());
  if (name == kShardingAttrName && array)
    llvm::append_range(perResult, array);
  else
    perResult.push_back(attr.getValue());
  if (perResult.size() != op->getNumResults())
    return op->emitOpError()
           << "'" << name << "' gives " << perResult.size()
           << " value(s) for " << op->getNumResults() << " result(s)";
  for (auto [i, value] : llvm::enumerate(perResult)) {
    NamedAttribute one(attr.getName(), value);
    if (failed(verifyValueAttribute(one, op->getResult(i).getType(), op,
                                    ("result #" + Twine(i)).str())))
      return failure();
  }
  return success();
}
