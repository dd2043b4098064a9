//===- LogicalRules.h - logical axis names to mesh axes ---------*- C++ -*-===//
//
// A rules file maps the logical axis names models tag their tensors with to
// mesh axes, as MaxText and T5X users write them:
//   {"batch": "dp", "mlp": "tp", "heads": ["tp"], "embed": null}
// A rule may also give the propagation priority of what it shards:
//   {"embed": {"axes": "dp", "priority": 2}}
// By default arguments propagate at p0 and activation constraints at p1.
// An "optimizer_state" object overrides entries for optimizer state and
// master weights (ZeRO-1/2: {"optimizer_state": {"embed": "dp"}}).
// Switching between DP, FSDP, TP and their mixes is a rules change.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SHARDING_LOGICALRULES_H
#define TESSEL_SHARDING_LOGICALRULES_H

#include "tessel/dialects/tessel/TesselOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::tessel {

struct LogicalRules {
  using AxisMap = std::map<std::string, std::vector<std::string>, std::less<>>;
  /// Logical axis -> mesh axes, major to minor (empty: replicated). Ordered,
  /// so that diagnostics are deterministic.
  AxisMap axes;
  /// The "optimizer_state" entries: how optimizer state and master weights
  /// are laid out where they differ from the parameter (ZeRO-1/2). Set as
  /// `tessel.state_sharding` on parameter arguments.
  AxisMap stateAxes;
  bool hasStateRules = false;
  /// "shard_gradients": true: gradients (and their accumulation) are laid
  /// out like the optimizer state (ZeRO-2); else like the parameter, in
  /// full on every device (ZeRO-1).
  bool shardGradients = false;
  /// Logical axis -> propagation priority of the dimensions it shards, where
  /// the rule gives one (`{"axes": "dp", "priority": 2}`).
  std::map<std::string, int64_t, std::less<>> priorities;
};

llvm::Expected<LogicalRules> parseLogicalRules(StringRef json,
                                               StringRef source);
llvm::Expected<LogicalRules> readLogicalRules(StringRef path);

/// The rules of a built-in strategy (rules/NAME.json), or an error listing
/// the known names.
llvm::Expected<LogicalRules> builtinStrategy(StringRef name);
std::vector<std::string> builtinStrategyNames();
/// The JSON text of a built-in strategy (empty if unknown).
StringRef builtinStrategyText(StringRef name);

/// Turns `tessel.logical_axes` into shardings on `mesh`: closed
/// `tessel.sharding` on function arguments and results that have none yet,
/// and a `tessel.sharding_constraint` after each tagged op (its unmapped
/// dimensions open). A mesh axis already used by an earlier dimension of the
/// same tensor is skipped. Errors (a rule naming an axis the mesh lacks) are
/// emitted on the module.
/// Adds `tessel.mesh @mesh` from a spec like "dp=2,tp=4" at the top of
/// `module`; an error says what is wrong with the spec.
llvm::Expected<MeshOp> addMeshFromSpec(ModuleOp module, StringRef spec);

LogicalResult applyLogicalRules(ModuleOp module, MeshOp mesh,
                                const LogicalRules &rules);

} // namespace mlir::tessel

#endif // TESSEL_SHARDING_LOGICALRULES_H
