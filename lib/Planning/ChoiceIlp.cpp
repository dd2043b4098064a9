//===- ChoiceIlp.cpp - one choice per node, solved by CBC -----------------===//

#include "tessel/planning/ChoiceIlp.h"

#include "llvm/Support/FormatVariadic.h"

#include <Cbc_C_Interface.h>

#include <cmath>
#include <limits>
#include <memory>

using namespace mlir::tessel::planning;

namespace {

/// Rows and columns as they are added, loaded into CBC at once
/// (column-major, as Cbc_loadProblem takes them).
struct Model {
  struct Row {
    std::vector<int> cols;
    std::vector<double> coefs;
    double lo, hi;
  };
  std::vector<double> objective, colLo, colHi;
  std::vector<bool> binary;
  std::vector<Row> rows;

  int column(double cost, bool isBinary) {
    objective.push_back(cost);
    colLo.push_back(0);
    colHi.push_back(1);
    binary.push_back(isBinary);
    return int(objective.size()) - 1;
  }
  Row &row(double lo, double hi) {
    rows.push_back({{}, {}, lo, hi});
    return rows.back();
  }

  using CbcPtr = std::unique_ptr<Cbc_Model, void (*)(Cbc_Model *)>;
  CbcPtr load() const {
    size_t n = objective.size();
    std::vector<std::vector<std::pair<int, double>>> byColumn(n);
    std::vector<double> rowLo, rowHi;
    for (auto [r, row] : llvm::enumerate(rows)) {
      for (auto [c, v] : llvm::zip(row.cols, row.coefs))
        byColumn[c].push_back({int(r), v});
      rowLo.push_back(row.lo);
      rowHi.push_back(row.hi);
    }
    std::vector<int> start{0}, index;
    std::vector<double> value;
    for (const auto &entries : byColumn) {
      for (auto [r, v] : entries) {
        index.push_back(r);
        value.push_back(v);
      }
      start.push_back(int(index.size()));
    }
    CbcPtr cbc(Cbc_newModel(), Cbc_deleteModel);
    Cbc_loadProblem(cbc.get(), int(n), int(rows.size()), start.data(),
                    index.data(), value.data(), colLo.data(), colHi.data(),
                    objective.data(), rowLo.data(), rowHi.data());
    for (size_t c = 0; c < n; ++c)
      if (binary[c])
        Cbc_setInteger(cbc.get(), int(c));
    return cbc;
  }
};

/// The sum of `strategies`' variables whose class is `cls`, added to `row`
/// with coefficient `sign`.
void addClass(Model::Row &row, const std::vector<int> &strategyVars,
              const std::vector<int> &classOf, int cls, double sign) {
  for (auto [i, var] : llvm::enumerate(strategyVars))
    if (classOf[i] == cls) {
      row.cols.push_back(var);
      row.coefs.push_back(sign);
    }
}

int numClasses(const std::vector<int> &classOf) {
  int n = 0;
  for (int c : classOf)
    n = std::max(n, c + 1);
  return n;
}

} // namespace

double mlir::tessel::planning::choiceCost(const ChoiceProblem &p,
                                          const std::vector<int> &choice) {
  double total = 0;
  for (auto [v, node] : llvm::enumerate(p.nodes))
    total += node.cost[choice[v]];
  for (const ChoiceProblem::Edge &e : p.edges)
    total += e.cost[e.fromClass[choice[e.from]]][e.toClass[choice[e.to]]];
  return total;
}

std::pair<double, int>
mlir::tessel::planning::choiceMemory(const ChoiceProblem &p,
                                     const std::vector<int> &choice) {
  std::pair<double, int> worst{0, -1};
  for (auto [r, row] : llvm::enumerate(p.memory)) {
    double bytes = 0;
    for (const ChoiceProblem::MemoryTerm &t : row.terms)
      bytes += t.bytes[choice[t.node]];
    if (worst.second < 0 || bytes > worst.first)
      worst = {bytes, int(r)};
  }
  return worst;
}

llvm::Expected<ChoiceSolution>
mlir::tessel::planning::solveChoices(const ChoiceProblem &p) {
  Model m;
  // Costs are seconds; CBC's tolerances are absolute, so solve in
  // microseconds.
  constexpr double scale = 1e6;
  std::vector<std::vector<int>> vars(p.nodes.size());
  for (auto [v, node] : llvm::enumerate(p.nodes)) {
    Model::Row &one = m.row(1, 1);
    for (double c : node.cost) {
      vars[v].push_back(m.column(c * scale, true));
      one.cols.push_back(vars[v].back());
      one.coefs.push_back(1);
    }
  }
  for (const ChoiceProblem::Edge &e : p.edges) {
    int nFrom = numClasses(e.fromClass), nTo = numClasses(e.toClass);
    std::vector<std::vector<int>> pair(nFrom, std::vector<int>(nTo));
    for (int a = 0; a < nFrom; ++a)
      for (int b = 0; b < nTo; ++b)
        pair[a][b] = m.column(e.cost[a][b] * scale, false);
    for (int a = 0; a < nFrom; ++a) { // sum_b e[a][b] = class a of `from`
      Model::Row &row = m.row(0, 0);
      for (int b = 0; b < nTo; ++b) {
        row.cols.push_back(pair[a][b]);
        row.coefs.push_back(1);
      }
      addClass(row, vars[e.from], e.fromClass, a, -1);
    }
    for (int b = 0; b < nTo; ++b) { // sum_a e[a][b] = class b of `to`
      Model::Row &row = m.row(0, 0);
      for (int a = 0; a < nFrom; ++a) {
        row.cols.push_back(pair[a][b]);
        row.coefs.push_back(1);
      }
      addClass(row, vars[e.to], e.toClass, b, -1);
    }
  }
  if (p.memoryLimit > 0)
    for (const ChoiceProblem::MemoryRow &mem : p.memory) {
      // In GiB, so coefficients stay near 1.
      constexpr double gib = double(1ull << 30);
      Model::Row &row = m.row(-std::numeric_limits<double>::infinity(),
                              p.memoryLimit / gib);
      for (const ChoiceProblem::MemoryTerm &t : mem.terms)
        for (auto [i, bytes] : llvm::enumerate(t.bytes))
          if (bytes != 0) {
            row.cols.push_back(vars[t.node][i]);
            row.coefs.push_back(bytes / gib);
          }
    }

  Model::CbcPtr cbc = m.load();
  Cbc_setLogLevel(cbc.get(), 0);
  Cbc_setMaximumSeconds(cbc.get(), p.timeLimitSeconds);
  Cbc_setParameter(cbc.get(), "allowableGap", "1e-6");
  Cbc_setParameter(cbc.get(), "ratioGap", "1e-9");
  Cbc_solve(cbc.get());

  ChoiceSolution s;
  for (bool b : m.binary)
    (b ? s.binaries : s.continuous) += 1;
  s.rows = int64_t(m.rows.size());
  if (Cbc_isProvenInfeasible(cbc.get()))
    return llvm::createStringError("no choice meets the memory limit");
  const double *x = Cbc_getColSolution(cbc.get());
  bool proven = Cbc_isProvenOptimal(cbc.get());
  if (!x || (!proven && Cbc_getObjValue(cbc.get()) >= 1e50))
    return llvm::createStringError(llvm::formatv(
        "no feasible choice found within {0} s", p.timeLimitSeconds));
  for (const std::vector<int> &nodeVars : vars) {
    int best = 0;
    for (auto [i, var] : llvm::enumerate(nodeVars))
      if (x[var] > x[nodeVars[best]])
        best = int(i);
    s.choice.push_back(best);
  }
  s.objective = choiceCost(p, s.choice);
  s.optimal = proven;
  s.bound = proven ? s.objective
                   : Cbc_getBestPossibleObjValue(cbc.get()) / scale;
  if (p.memoryLimit > 0 && choiceMemory(p, s.choice).first >
                               p.memoryLimit * (1 + 1e-6))
    return llvm::createStringError("no choice meets the memory limit");
  return s;
}
