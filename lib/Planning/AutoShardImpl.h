//===- AutoShardImpl.h - the auto-sharder's sites and strategies -*- C++ -*-===//
//
// Shared by AutoShard.cpp (sites, strategies, annotations, writing the
// choice back) and AutoShardCosts.cpp (the integer program's costs and
// memory, the report). Layouts are per-dimension lists of mesh-axis
// indices, as the reshard planner takes them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_PLANNING_AUTOSHARDIMPL_H
#define TESSEL_LIB_PLANNING_AUTOSHARDIMPL_H

#include "tessel/planning/AutoShard.h"
#include "tessel/planning/ChoiceIlp.h"
#include "tessel/sharding/ReshardPlan.h"

#include <map>

namespace mlir::tessel::planning::autoshard {

using ::tessel::sharding::AxisDims;

/// One way to lay out a site: each operand's and result's layout, and for
/// an op the mesh axes on each factor of its rule.
struct Strategy {
  SmallVector<AxisDims, 2> operands, results;
  SmallVector<SmallVector<int, 2>, 4> factorAxes;
  SmallVector<int, 2> partial; ///< axes on reduction factors
  /// Per operand, the axes on factors it lacks: its gradient is a partial
  /// sum over them (data parallelism's weight gradients, Megatron's `f`).
  SmallVector<SmallVector<int, 2>, 2> gradientPartial;
  int64_t split = 1;           ///< devices the op's work is divided over
  /// Per mesh axis, the factor (op) or dimension (argument) it splits, or -1.
  SmallVector<int8_t, 4> placement;
};

/// An argument or an op with its strategies; results' layouts grouped into
/// classes (strategies giving a result the same layout share a class).
struct Site {
  Operation *op = nullptr; ///< null: the function's argument `arg`
  int64_t arg = -1;
  std::vector<Strategy> strategies; ///< those the current problem offers
  std::vector<Strategy> all;        ///< every one the annotations allow
  std::vector<std::vector<int>> resultClass;       ///< [result][strategy]
  std::vector<std::vector<AxisDims>> resultLayout; ///< [result][class]
  std::string label; ///< for the report and messages
};

class AutoSharder {
public:
  AutoSharder(func::FuncOp func, MeshOp mesh, const AutoShardOptions &o);
  LogicalResult run(llvm::raw_ostream *report);

private:
  // AutoShard.cpp
  LogicalResult collectSites();
  std::vector<AxisDims> layoutsOf(RankedTensorType type) const;
  std::vector<Strategy> strategiesOf(Operation *op,
                                     OpShardingRuleAttr rule) const;
  FailureOr<AxisDims> indicesOf(ShardingAttr sharding, Location loc) const;
  LogicalResult constrain(Site &site, int64_t result, ShardingAttr sharding,
                          Location loc);
  LogicalResult applyAnnotations();
  void classify(Site &site);
  void markGradients();
  ShardingAttr shardingOf(const AxisDims &dims) const;
  void write(const std::vector<int> &choice);
  int64_t countPairs();
  FailureOr<ChoiceSolution> solve(ArrayRef<int> decided, int axis);
  FailureOr<ChoiceSolution> solveByAxis();

  // AutoShardCosts.cpp
  void buildProblem();
  /// Operand `operand`'s layouts under `site`'s strategies, grouped: the
  /// class of each strategy, and the layout of each class.
  std::pair<std::vector<int>, std::vector<AxisDims>>
  operandClasses(const Site &site, unsigned operand) const;
  double computeSeconds(const Site &site, const Strategy &s) const;
  double collectiveSeconds(const Site &site, const Strategy &s) const;
  double reshardSeconds(Value value, const AxisDims &from,
                        const AxisDims &to);
  double allReduceSeconds(int64_t group, int64_t bytes) const;
  int64_t localBytes(Type type, const AxisDims &dims) const;
  double argumentBytes(const Site &site, const Strategy &s) const;
  void addMemoryRows();
  void printReport(llvm::raw_ostream &os, const ChoiceSolution &solution);
  std::string formatDims(const AxisDims &dims) const;

  mutable func::FuncOp func;
  mutable MeshOp mesh;
  AutoShardOptions options;
  SmallVector<int64_t> axisSizes;
  SmallVector<StringAttr> axisNames;
  std::vector<Site> sites;
  DenseMap<Operation *, int> siteOfOp;
  DenseSet<Value> needsGradient;
  DenseSet<int64_t> parameters; ///< argument indices
  /// Returned values whose result is annotated: (result, pseudo node).
  std::vector<std::pair<int64_t, AxisDims>> fixedResults;
  std::map<std::string, double> reshardCache;
  ChoiceProblem problem;
  /// How the choice was made, for the report.
  std::string method;
};

} // namespace mlir::tessel::planning::autoshard

#endif // TESSEL_LIB_PLANNING_AUTOSHARDIMPL_H
