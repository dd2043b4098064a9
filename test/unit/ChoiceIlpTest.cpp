//===- ChoiceIlpTest.cpp - the auto-sharder's integer program -------------===//
//
// The solver's choice against brute force over every combination, on random
// problems with edges, classes and memory rows.
//
//===----------------------------------------------------------------------===//

#include "tessel/planning/ChoiceIlp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace mlir::tessel::planning;

namespace {

/// The cheapest choice meeting the memory limit by enumeration, or an
/// infinite cost when none does.
std::pair<double, std::vector<int>> bruteForce(const ChoiceProblem &p) {
  std::vector<int> choice(p.nodes.size(), 0), best;
  double bestCost = std::numeric_limits<double>::infinity();
  while (true) {
    bool fits = p.memoryLimit <= 0 ||
                choiceMemory(p, choice).first <= p.memoryLimit;
    double cost = choiceCost(p, choice);
    if (fits && cost < bestCost) {
      bestCost = cost;
      best = choice;
    }
    size_t v = 0;
    while (v < choice.size() && ++choice[v] == int(p.nodes[v].cost.size()))
      choice[v++] = 0;
    if (v == choice.size())
      return {bestCost, best};
  }
}

ChoiceProblem randomProblem(std::mt19937 &rng) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto below = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };
  ChoiceProblem p;
  int numNodes = 3 + below(4);
  for (int v = 0; v < numNodes; ++v) {
    ChoiceProblem::Node node;
    for (int i = 0, n = 1 + below(4); i < n; ++i)
      node.cost.push_back(uniform(0, 1e-3)); // seconds, as the pass gives
    p.nodes.push_back(node);
  }
  for (int e = 0, n = numNodes + below(numNodes); e < n; ++e) {
    ChoiceProblem::Edge edge;
    edge.from = below(numNodes);
    edge.to = below(numNodes);
    if (edge.from == edge.to)
      continue;
    int fromClasses = 1 + below(int(p.nodes[edge.from].cost.size()));
    int toClasses = 1 + below(int(p.nodes[edge.to].cost.size()));
    for (size_t i = 0; i < p.nodes[edge.from].cost.size(); ++i)
      edge.fromClass.push_back(int(i) < fromClasses ? int(i)
                                                    : below(fromClasses));
    for (size_t i = 0; i < p.nodes[edge.to].cost.size(); ++i)
      edge.toClass.push_back(int(i) < toClasses ? int(i) : below(toClasses));
    for (int a = 0; a < fromClasses; ++a) {
      auto &row = edge.cost.emplace_back();
      for (int b = 0; b < toClasses; ++b)
        row.push_back(a == b ? 0 : uniform(0, 2e-3));
    }
    p.edges.push_back(edge);
  }
  for (int r = 0, n = below(3); r < n; ++r) {
    ChoiceProblem::MemoryRow row{"row", {}};
    for (int v = 0; v < numNodes; ++v) {
      ChoiceProblem::MemoryTerm t{v, {}};
      for (size_t i = 0; i < p.nodes[v].cost.size(); ++i)
        t.bytes.push_back(uniform(0, 4e9));
      row.terms.push_back(t);
    }
    p.memory.push_back(row);
  }
  if (!p.memory.empty())
    p.memoryLimit = uniform(4e9, 1.2e10);
  return p;
}

} // namespace

TEST(ChoiceIlp, MatchesBruteForce) {
  std::mt19937 rng(20261207);
  int solved = 0, infeasible = 0;
  for (int trial = 0; trial < 200; ++trial) {
    ChoiceProblem p = randomProblem(rng);
    auto [bestCost, best] = bruteForce(p);
    llvm::Expected<ChoiceSolution> s = solveChoices(p);
    if (std::isinf(bestCost)) {
      ASSERT_FALSE(bool(s)) << "trial " << trial << ": no choice fits, but "
                            << "the solver found one";
      EXPECT_EQ(llvm::toString(s.takeError()),
                "no choice meets the memory limit");
      ++infeasible;
      continue;
    }
    ASSERT_TRUE(bool(s)) << "trial " << trial << ": "
                         << llvm::toString(s.takeError());
    EXPECT_TRUE(s->optimal);
    EXPECT_NEAR(s->objective, bestCost, 1e-9 + 1e-9 * bestCost)
        << "trial " << trial;
    EXPECT_NEAR(choiceCost(p, s->choice), bestCost, 1e-9 + 1e-9 * bestCost);
    if (p.memoryLimit > 0)
      EXPECT_LE(choiceMemory(p, s->choice).first, p.memoryLimit * (1 + 1e-6));
    ++solved;
  }
  // Both outcomes occurred, so both paths were checked.
  EXPECT_GT(solved, 100);
  EXPECT_GT(infeasible, 0);
}

TEST(ChoiceIlp, EdgeCostsDecideBetweenEqualNodes) {
  // Two nodes of two free strategies; only agreeing on a layout is cheap.
  ChoiceProblem p;
  p.nodes = {{{0.0, 0.0}}, {{0.0, 0.0}}};
  p.edges.push_back({0, 1, {0, 1}, {0, 1}, {{5e-3, 1e-3}, {1e-3, 0.0}}});
  llvm::Expected<ChoiceSolution> s = solveChoices(p);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->choice, (std::vector<int>{1, 1}));
  EXPECT_DOUBLE_EQ(s->objective, 0.0);
  // A memory row that forbids strategy 1 of node 0 moves both.
  p.memory.push_back({"row", {{0, {1.0, 10.0}}}});
  p.memoryLimit = 5;
  s = solveChoices(p);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->choice[0], 0);
  EXPECT_EQ(s->choice[1], 1); // class 0 against class 0 costs 5e-3
  EXPECT_DOUBLE_EQ(s->objective, 1e-3);
}
