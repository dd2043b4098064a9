//===- LogicalRules.cpp - logical axis names to mesh axes -----------------===//

#include "tessel/sharding/LogicalRules.h"
#include "tessel/support/Json.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::tessel;

static llvm::Error fail(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

namespace {
/// Parses one rules object into `axes` and `priorities`; `where` prefixes
/// messages ("rules.json" or "rules.json: optimizer_state").
llvm::Error parseRuleObject(const llvm::json::Object &object, StringRef where,
                            LogicalRules::AxisMap &axes,
                            std::map<std::string, int64_t, std::less<>> &priorities,
                            LogicalRules *withState) {
  for (const auto &[key, entry] : object) {
    if (withState && key == "shard_gradients") {
      std::optional<bool> flag = entry.getAsBoolean();
      if (!flag)
        return fail(where + ": \"shard_gradients\" must be true (ZeRO-2: "
                            "gradients laid out like the optimizer state) or "
                            "false (ZeRO-1)");
      withState->shardGradients = *flag;
      continue;
    }
    if (withState && key == "optimizer_state") {
      const llvm::json::Object *state = entry.getAsObject();
      if (!state)
        return fail(where + ": \"optimizer_state\" must be an object mapping "
                            "logical axis names to mesh axes (the layout of "
                            "optimizer state and master weights, ZeRO)");
      std::map<std::string, int64_t, std::less<>> ignored;
      if (llvm::Error e = parseRuleObject(
              *state, (where + ": optimizer_state").str(),
              withState->stateAxes, ignored, nullptr))
        return e;
      withState->hasStateRules = true;
      continue;
    }
    const llvm::json::Value *targetPtr = &entry;
    if (const llvm::json::Object *detailed = entry.getAsObject()) {
      targetPtr = detailed->get("axes");
      if (!targetPtr)
        return fail(where + ": rule '" + key.str() +
                    "' is an object without \"axes\"");
      if (const llvm::json::Value *p = detailed->get("priority")) {
        std::optional<int64_t> priority = p->getAsInteger();
        if (!priority || *priority < 0)
          return fail(where + ": rule '" + key.str() +
                      "' has a priority that is not a non-negative integer");
        priorities[key.str()] = *priority;
      }
    }
    const llvm::json::Value &target = *targetPtr;
    std::vector<std::string> list;
    if (std::optional<StringRef> one = target.getAsString()) {
      list.push_back(one->str());
    } else if (const llvm::json::Array *many = target.getAsArray()) {
      for (const llvm::json::Value &v : *many) {
        std::optional<StringRef> s = v.getAsString();
        if (!s)
          return fail(where + ": rule '" + key.str() +
                      "' lists something that is not a mesh axis name");
        list.push_back(s->str());
      }
    } else if (!target.getAsNull()) {
      return fail(where + ": rule '" + key.str() +
                  "' must map to a mesh axis, a list of mesh axes, or null");
    }
    axes[key.str()] = std::move(list);
  }
  return llvm::Error::success();
}
} // namespace

llvm::Expected<LogicalRules> mlir::tessel::parseLogicalRules(StringRef json,
                                                             StringRef source) {
  llvm::Expected<llvm::json::Value> value = ::tessel::parseJson(json);
  if (!value)
    return fail(source + ": not valid JSON: " +
                llvm::toString(value.takeError()));
  const llvm::json::Object *object = value->getAsObject();
  if (!object)
    return fail(source + ": rules must be a JSON object mapping logical axis "
                         "names to a mesh axis, a list of mesh axes, or null");
  LogicalRules rules;
  if (llvm::Error e =
          parseRuleObject(*object, source, rules.axes, rules.priorities, &rules))
    return std::move(e);
  return rules;
}

llvm::Expected<LogicalRules> mlir::tessel::readLogicalRules(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return fail(path + ": cannot read: " + buffer.getError().message());
  return parseLogicalRules((*buffer)->getBuffer(), path);
}

namespace {
struct Strategy {
  const char *name;
  const char *json;
};
// Generated from rules/*.json at configure time.
const Strategy kStrategies[] = {
#include "tessel/sharding/Strategies.inc"
};
} // namespace

StringRef mlir::tessel::builtinStrategyText(StringRef name) {
  for (const Strategy &s : kStrategies)
    if (name == s.name)
      return s.json;
  return {};
}

std::vector<std::string> mlir::tessel::builtinStrategyNames() {
  std::vector<std::string> names;
  for (const Strategy &s : kStrategies)
    names.push_back(s.name);
  return names;
}

llvm::Expected<LogicalRules> mlir::tessel::builtinStrategy(StringRef name) {
  StringRef text = builtinStrategyText(name);
  if (text.empty()) {
    std::string known;
    for (const std::string &n : builtinStrategyNames())
      known += (known.empty() ? "" : ", ") + n;
    return fail("unknown strategy '" + name + "'; built-in strategies: " +
                known);
  }
  return parseLogicalRules(text, ("rules/" + name + ".json").str());
}

namespace {
/// Builds the sharding of a tensor tagged `logical` on `mesh`; unmapped
/// dimensions are open when `openUnmapped`. Returns null when no dimension
/// maps to a mesh axis and `skipIfUnmapped`.
FailureOr<ShardingAttr> shardingFor(MeshOp mesh, ArrayAttr logical,
                                    const LogicalRules &rules,
                                    bool openUnmapped, Operation *where) {
  MLIRContext *ctx = mesh.getContext();
  llvm::StringSet<> used;
  SmallVector<DimShardingAttr> dims;
  bool anyMapped = false;
  for (Attribute nameAttr : logical) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    SmallVector<StringAttr> axes;
    auto it = rules.axes.find(name.str());
    if (it != rules.axes.end())
      for (const std::string &axis : it->second) {
        if (mesh.getAxisIndex(axis) < 0) {
          where->emitError() << "logical axis rule '" << name
                             << "' maps to mesh axis '" << axis
                             << "', which mesh @" << mesh.getSymName()
                             << " does not have";
          return failure();
        }
        if (used.insert(axis).second)
          axes.push_back(StringAttr::get(ctx, axis));
      }
    anyMapped |= !axes.empty();
    // Activations (open unmapped dimensions) propagate after parameters and
    // data (p1): a weight's split decides a matmul's output before a
    // sequence-parallel activation does (Megatron's layout). A rule may say
    // otherwise.
    std::optional<int64_t> priority;
    if (!axes.empty()) {
      auto p = rules.priorities.find(name.str());
      if (p != rules.priorities.end())
        priority = p->second;
      else if (openUnmapped)
        priority = 1;
    }
    dims.push_back(DimShardingAttr::get(ctx, axes,
                                        openUnmapped && axes.empty(),
                                        priority));
  }
  if (!anyMapped && openUnmapped)
    return ShardingAttr();
  return ShardingAttr::get(ctx, FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
                           dims);
}
} // namespace

LogicalResult mlir::tessel::applyLogicalRules(ModuleOp module, MeshOp mesh,
                                              const LogicalRules &rules) {
  StringRef tagName = TesselDialect::kLogicalAxesAttrName;
  StringRef shardingName = TesselDialect::kShardingAttrName;
  // Every rule must name axes of the mesh, used by this model or not (a
  // typo in an unused rule would otherwise go unnoticed).
  for (const LogicalRules::AxisMap *map : {&rules.axes, &rules.stateAxes})
    for (const auto &entry : *map)
      for (const std::string &axis : entry.second)
        if (mesh.getAxisIndex(axis) < 0)
          return module.emitError()
                 << "logical axis rule '" << entry.first
                 << "' maps to mesh axis '" << axis << "', which mesh @"
                 << mesh.getSymName() << " does not have";
  // Optimizer state and master weights: the rules with the
  // "optimizer_state" entries on top.
  LogicalRules stateRules;
  stateRules.axes = rules.axes;
  for (const auto &entry : rules.stateAxes)
    stateRules.axes[entry.first] = entry.second;
  WalkResult result = module.walk([&](Operation *op) -> WalkResult {
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto tags = func.getArgAttrOfType<ArrayAttr>(i, tagName);
        if (!tags || func.getArgAttr(i, shardingName))
          continue;
        FailureOr<ShardingAttr> s = shardingFor(mesh, tags, rules, false, op);
        if (failed(s))
          return WalkResult::interrupt();
        func.setArgAttr(i, shardingName, *s);
        // Parameters (no "batch" axis) whose state is laid out otherwise.
        bool data = llvm::any_of(tags, [](Attribute t) {
          return cast<StringAttr>(t).getValue() == "batch";
        });
        if (!rules.hasStateRules || data ||
            func.getArgAttr(i, TesselDialect::kStateShardingAttrName))
          continue;
        FailureOr<ShardingAttr> state =
            shardingFor(mesh, tags, stateRules, false, op);
        if (failed(state))
          return WalkResult::interrupt();
        if (*state == *s)
          continue;
        func.setArgAttr(i, TesselDialect::kStateShardingAttrName, *state);
        if (rules.shardGradients)
          func.setArgAttr(i, TesselDialect::kGradientShardingAttrName, *state);
      }
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        auto tags = func.getResultAttrOfType<ArrayAttr>(i, tagName);
        if (!tags || func.getResultAttr(i, shardingName))
          continue;
        FailureOr<ShardingAttr> s = shardingFor(mesh, tags, rules, false, op);
        if (failed(s))
          return WalkResult::interrupt();
        func.setResultAttr(i, shardingName, *s);
      }
      return WalkResult::advance();
    }
    auto tags = op->getAttrOfType<ArrayAttr>(tagName);
    if (!tags || op->getNumResults() != 1 || isa<ShardingConstraintOp>(op))
      return WalkResult::advance();
    FailureOr<ShardingAttr> s = shardingFor(mesh, tags, rules, true, op);
    if (failed(s))
      return WalkResult::interrupt();
    if (!*s)
      return WalkResult::advance();
    // Already constrained by an earlier application: keep it (idempotence).
    Value value = op->getResult(0);
    if (value.hasOneUse())
      if (auto existing =
              dyn_cast<ShardingConstraintOp>(*value.getUsers().begin()))
        if (existing.getSharding() == *s)
          return WalkResult::advance();
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    auto constraint =
        ShardingConstraintOp::create(builder, op->getLoc(), value, *s);
    value.replaceAllUsesExcept(constraint.getResult(), constraint);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

llvm::Expected<MeshOp> mlir::tessel::addMeshFromSpec(ModuleOp module,
                                                     StringRef spec) {
  SmallVector<StringRef> parts;
  spec.split(parts, ',', -1, /*KeepEmpty=*/false);
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  OpBuilder b(module.getContext());
  for (StringRef part : parts) {
    auto [name, size] = part.trim().split('=');
    int64_t n;
    if (name.empty() || size.trim().getAsInteger(10, n) || n < 1)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--mesh expects NAME=SIZE pairs like \"dp=2,tp=4\", got '" +
              part.str() + "'");
    names.push_back(b.getStringAttr(name.trim()));
    sizes.push_back(n);
  }
  b.setInsertionPointToStart(module.getBody());
  auto mesh = MeshOp::create(b, module.getLoc(), "mesh", b.getArrayAttr(names),
                             b.getDenseI64ArrayAttr(sizes), nullptr);
  if (failed(mesh.verify())) {
    mesh.erase();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid --mesh '" + spec.str() + "'");
  }
  return mesh;
}
