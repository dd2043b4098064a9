//===- ChoiceIlp.h - one choice per node, as an integer program -*- C++ -*-===//
//
// The integer program behind --tessel-auto-shard (Alpa's intra-operator
// formulation), free of MLIR so tests can pose problems directly:
//
//   * every node picks exactly one of its strategies (binary s[v][i]);
//   * an edge (u -> v) costs cost[a][b] when u's choice falls in class a of
//     its source classes and v's choice in class b of its target classes
//     (a value produced in layout a and consumed in layout b). The pair
//     variables e[a][b] >= 0 satisfy sum_b e[a][b] = sum of s[u] in class a
//     and sum_a e[a][b] = sum of s[v] in class b, which forces e to the
//     product of the two one-hot choices (and keeps the relaxation tight);
//   * every memory row: sum of bytes[v][i] * s[v][i] over its terms <= limit;
//   * the objective is the nodes' strategy costs plus the edges' costs.
//
// Solved by COIN-OR CBC (coinor-libcbc-dev), branch and cut.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PLANNING_CHOICEILP_H
#define TESSEL_PLANNING_CHOICEILP_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::tessel::planning {

struct ChoiceProblem {
  struct Node {
    std::vector<double> cost; ///< per strategy
  };
  struct Edge {
    int from = 0, to = 0;
    std::vector<int> fromClass; ///< per strategy of `from`
    std::vector<int> toClass;   ///< per strategy of `to`
    /// cost[a][b]: source class a, target class b.
    std::vector<std::vector<double>> cost;
  };
  struct MemoryTerm {
    int node = 0;
    std::vector<double> bytes; ///< per strategy of `node`
  };
  struct MemoryRow {
    std::string name; ///< for messages
    std::vector<MemoryTerm> terms;
  };

  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<MemoryRow> memory;
  double memoryLimit = 0; ///< bytes; 0 = no limit (rows ignored)
  double timeLimitSeconds = 60;
};

struct ChoiceSolution {
  std::vector<int> choice; ///< per node, the strategy picked
  double objective = 0;
  /// False when the time limit stopped the search with a feasible but
  /// unproven choice (`bound` is then the best lower bound found).
  bool optimal = true;
  double bound = 0;
  int64_t binaries = 0, continuous = 0, rows = 0;
};

/// Solves `problem`; an error says why there is no choice (infeasible:
/// the memory limit cannot be met; or no feasible choice within the time
/// limit).
llvm::Expected<ChoiceSolution> solveChoices(const ChoiceProblem &problem);

/// Cost of `choice` under `problem`'s objective (for checks and reports).
double choiceCost(const ChoiceProblem &problem, const std::vector<int> &choice);

/// Largest memory row of `choice`, and its index (-1 without rows).
std::pair<double, int> choiceMemory(const ChoiceProblem &problem,
                                    const std::vector<int> &choice);

} // namespace mlir::tessel::planning

#endif // TESSEL_PLANNING_CHOICEILP_H
