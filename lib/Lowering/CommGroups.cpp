//===- CommGroups.cpp - numbering the communicator groups of a module -----===//

#include "tessel/lowering/CommGroups.h"
#include "tessel/dialects/tessel/TesselOps.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"

#include <set>

using namespace mlir;
using namespace mlir::tessel;
namespace tp = ::tessel::program;

namespace {

/// The (mesh, axes) of a communicating op, or nothing.
std::optional<tp::CommGroup> groupOf(Operation *op) {
  if (!op->getDialect() || !isa<TesselDialect>(op->getDialect()))
    return std::nullopt;
  auto mesh = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  if (!mesh || !axes)
    return std::nullopt;
  tp::CommGroup g;
  g.mesh = mesh.getValue().str();
  for (Attribute a : axes)
    g.axes.push_back(cast<StringAttr>(a).getValue().str());
  return g;
}

std::vector<tp::CommGroup> readGroups(ModuleOp module) {
  std::vector<tp::CommGroup> groups;
  auto list = module->getAttrOfType<ArrayAttr>(tp::kGroupsAttrName);
  if (!list)
    return groups;
  for (Attribute a : list) {
    auto dict = cast<DictionaryAttr>(a); // the dialect verified the shape
    tp::CommGroup &g = groups.emplace_back();
    g.mesh = dict.getAs<StringAttr>("mesh").getValue().str();
    for (Attribute axis : dict.getAs<ArrayAttr>("axes"))
      g.axes.push_back(cast<StringAttr>(axis).getValue().str());
  }
  return groups;
}

void writeGroups(ModuleOp module, const std::vector<tp::CommGroup> &groups) {
  Builder b(module.getContext());
  SmallVector<Attribute> list;
  for (const tp::CommGroup &g : groups) {
    SmallVector<Attribute> axes;
    for (const std::string &axis : g.axes)
      axes.push_back(b.getStringAttr(axis));
    list.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("mesh", b.getStringAttr(g.mesh)),
         b.getNamedAttr("axes", b.getArrayAttr(axes))}));
  }
  module->setAttr(tp::kGroupsAttrName, b.getArrayAttr(list));
}

} // namespace

std::vector<tp::CommGroup> mlir::tessel::assignCommGroups(ModuleOp module) {
  std::vector<tp::CommGroup> groups = readGroups(module);
  Builder b(module.getContext());
  module.walk([&](Operation *op) {
    std::optional<tp::CommGroup> g = groupOf(op);
    if (!g)
      return;
    auto it = llvm::find_if(groups, [&](const tp::CommGroup &known) {
      return known.mesh == g->mesh && known.axes == g->axes;
    });
    if (it == groups.end())
      it = groups.insert(groups.end(), *g);
    op->setAttr(tp::kGroupAttrName,
                b.getI64IntegerAttr(int64_t(it - groups.begin())));
  });
  if (!groups.empty())
    writeGroups(module, groups);
  return groups;
}

std::vector<int64_t> mlir::tessel::groupsUsedBy(func::FuncOp func) {
  llvm::SetVector<Operation *> functions;
  functions.insert(func);
  std::set<int64_t> used;
  for (size_t k = 0; k < functions.size(); ++k)
    functions[k]->walk([&](Operation *op) {
      if (auto g = op->getAttrOfType<IntegerAttr>(tp::kGroupAttrName))
        used.insert(g.getInt());
      if (auto call = dyn_cast<func::CallOp>(op))
        if (Operation *callee =
                SymbolTable::lookupNearestSymbolFrom(op, call.getCalleeAttr()))
          functions.insert(callee);
    });
  return std::vector<int64_t>(used.begin(), used.end());
}

FailureOr<int64_t> mlir::tessel::commGroupOf(Operation *op) {
  if (auto g = op->getAttrOfType<IntegerAttr>(tp::kGroupAttrName))
    return g.getInt();
  return op->emitOpError()
         << "has no communicator group; run tessel-export-entry (or "
            "tessel-lower-to-linalg, which numbers them) first";
}
