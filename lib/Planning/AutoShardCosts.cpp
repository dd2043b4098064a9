//===- AutoShardCosts.cpp - the auto-sharder's integer program ------------===//
//
// Seconds per strategy (matmul FLOPs at the device's rate, other ops by
// the bytes they touch, all-reduces of partial results by the ring formula
// of --tessel-comm-report), seconds per resharding edge (the bytes the
// partitioner's reshard planner sends), bytes per device, and the report.
//
//===----------------------------------------------------------------------===//

#include "AutoShardImpl.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::planning;
using namespace mlir::tessel::planning::autoshard;

int64_t AutoSharder::localBytes(Type type, const AxisDims &dims) const {
  auto t = cast<RankedTensorType>(type);
  int64_t bytes = std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
  for (auto [size, axes] : llvm::zip(t.getShape(), dims)) {
    int64_t n = 1;
    for (int a : axes)
      n *= axisSizes[a];
    bytes *= ::tessel::sharding::localSize(size, n);
  }
  return bytes;
}

double AutoSharder::allReduceSeconds(int64_t group, int64_t bytes) const {
  if (group <= 1)
    return 0;
  return collectiveSentBytes(CollectiveTraffic::AllReduce, group, bytes) /
             options.linkBandwidth +
         options.linkLatency;
}

double AutoSharder::argumentBytes(const Site &site, const Strategy &s) const {
  int64_t bytes = localBytes(func.getArgument(site.arg).getType(),
                             s.results[0]);
  if (options.training && parameters.contains(site.arg))
    return double(bytes) * (2 + options.optimizerSlots);
  return double(bytes);
}

double AutoSharder::computeSeconds(const Site &site, const Strategy &s) const {
  if (!site.op) {
    if (!parameters.contains(site.arg)) // data: read from the host
      return double(localBytes(func.getArgument(site.arg).getType(),
                               s.results[0])) /
             options.hostBandwidth;
    if (!options.training)
      return 0;
    // The optimizer's update reads and writes every state.
    double bytes = localBytes(func.getArgument(site.arg).getType(),
                              s.results[0]);
    return bytes * (3 + 2 * options.optimizerSlots) / options.memoryBandwidth;
  }
  bool backward = options.training &&
                  llvm::any_of(site.op->getResults(), [&](Value r) {
                    return needsGradient.contains(r);
                  });
  double passes = backward ? 3 : 1;
  if (isa<DotGeneralOp>(site.op)) {
    auto rule = cast<ShardingRuleOpInterface>(site.op).getShardingRule();
    double flops = 2;
    for (int64_t size : rule.getFactorSizes())
      flops *= double(size);
    return passes * flops / double(s.split) / options.matmulFlops;
  }
  double bytes = 0;
  for (auto [v, dims] : llvm::zip(site.op->getOperands(), s.operands))
    bytes += double(localBytes(v.getType(), dims));
  for (auto [v, dims] : llvm::zip(site.op->getResults(), s.results))
    bytes += double(localBytes(v.getType(), dims));
  return passes * bytes / options.memoryBandwidth;
}

double AutoSharder::collectiveSeconds(const Site &site,
                                      const Strategy &s) const {
  if (!site.op)
    return 0;
  auto group = [&](ArrayRef<int> axes) {
    int64_t n = 1;
    for (int a : axes)
      n *= axisSizes[a];
    return n;
  };
  double seconds = 0;
  for (auto [v, dims] : llvm::zip(site.op->getResults(), s.results))
    seconds += allReduceSeconds(group(s.partial), localBytes(v.getType(), dims));
  if (!options.training)
    return seconds;
  for (auto [j, v] : llvm::enumerate(site.op->getOperands())) {
    if (!needsGradient.contains(v))
      continue;
    int64_t n = group(s.gradientPartial[j]);
    double seconds1 = allReduceSeconds(n, localBytes(v.getType(), s.operands[j]));
    // A parameter's gradient sum is bucketed with the others
    // (--tessel-optimize-collectives): its bytes count, not a latency.
    auto arg = dyn_cast<BlockArgument>(v);
    if (n > 1 && arg && parameters.contains(arg.getArgNumber()))
      seconds1 -= options.linkLatency;
    seconds += seconds1;
  }
  return seconds;
}

double AutoSharder::reshardSeconds(Value value, const AxisDims &from,
                                   const AxisDims &to) {
  if (from == to)
    return 0;
  auto type = cast<RankedTensorType>(value.getType());
  auto oneWay = [&](const AxisDims &a, const AxisDims &b) {
    std::string key;
    llvm::raw_string_ostream os(key);
    os << type << formatDims(a) << "->" << formatDims(b);
    auto [it, fresh] = reshardCache.try_emplace(key, 0);
    if (!fresh)
      return it->second;
    ::tessel::sharding::ReshardProblem p;
    p.shape.assign(type.getShape().begin(), type.getShape().end());
    p.elementBytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    p.axisSizes.assign(axisSizes.begin(), axisSizes.end());
    p.from = a;
    p.to = b;
    ::tessel::sharding::ReshardPlan plan = ::tessel::sharding::planReshard(p);
    double seconds = plan.sentBytes / options.linkBandwidth;
    for (const ::tessel::sharding::ReshardMove &m : plan.moves)
      if (m.kind != ::tessel::sharding::ReshardMoveKind::Slice)
        seconds += options.linkLatency;
    it->second = seconds;
    return seconds;
  };
  double seconds = oneWay(from, to);
  if (options.training && needsGradient.contains(value))
    seconds += oneWay(to, from); // the gradient goes back
  return seconds;
}

void AutoSharder::addMemoryRows() {
  auto argTerm = [&](int v) {
    ChoiceProblem::MemoryTerm t{v, {}};
    for (const Strategy &s : sites[v].strategies)
      t.bytes.push_back(argumentBytes(sites[v], s));
    return t;
  };
  auto opTerm = [&](int v, bool withOperands) {
    ChoiceProblem::MemoryTerm t{v, {}};
    Operation *op = sites[v].op;
    for (const Strategy &s : sites[v].strategies) {
      double bytes = 0;
      for (auto [r, dims] : llvm::zip(op->getResults(), s.results))
        bytes += double(localBytes(r.getType(), dims));
      if (withOperands)
        for (auto [o, dims] : llvm::zip(op->getOperands(), s.operands))
          bytes += double(localBytes(o.getType(), dims));
      t.bytes.push_back(bytes);
    }
    return t;
  };
  int numArgs = int(func.getNumArguments());
  if (options.training) {
    // Every activation kept for the backward, beside the states.
    ChoiceProblem::MemoryRow row{"the training step", {}};
    for (int v = 0; v < int(sites.size()); ++v)
      row.terms.push_back(v < numArgs ? argTerm(v) : opTerm(v, false));
    problem.memory.push_back(std::move(row));
    return;
  }
  for (int v = numArgs; v < int(sites.size()); ++v) {
    ChoiceProblem::MemoryRow row{sites[v].label, {}};
    for (int a = 0; a < numArgs; ++a)
      row.terms.push_back(argTerm(a));
    row.terms.push_back(opTerm(v, true));
    problem.memory.push_back(std::move(row));
  }
}

std::pair<std::vector<int>, std::vector<AxisDims>>
AutoSharder::operandClasses(const Site &site, unsigned operand) const {
  std::vector<int> cls;
  std::vector<AxisDims> layouts;
  for (const Strategy &s : site.strategies) {
    auto it = llvm::find(layouts, s.operands[operand]);
    cls.push_back(int(it - layouts.begin()));
    if (it == layouts.end())
      layouts.push_back(s.operands[operand]);
  }
  return {cls, layouts};
}

void AutoSharder::buildProblem() {
  for (Site &site : sites) {
    ChoiceProblem::Node node;
    for (const Strategy &s : site.strategies)
      node.cost.push_back(computeSeconds(site, s) + collectiveSeconds(site, s));
    problem.nodes.push_back(std::move(node));
  }
  // The site and result producing `v`.
  auto producer = [&](Value v) -> std::pair<int, unsigned> {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return {int(arg.getArgNumber()), 0};
    return {siteOfOp.lookup(v.getDefiningOp()),
            cast<OpResult>(v).getResultNumber()};
  };
  auto addEdge = [&](Value v, int to, std::vector<int> toClass,
                     const std::vector<AxisDims> &toLayout) {
    auto [from, r] = producer(v);
    ChoiceProblem::Edge e{from, to, sites[from].resultClass[r],
                          std::move(toClass), {}};
    for (const AxisDims &a : sites[from].resultLayout[r]) {
      auto &row = e.cost.emplace_back();
      for (const AxisDims &b : toLayout)
        row.push_back(reshardSeconds(v, a, b));
    }
    problem.edges.push_back(std::move(e));
  };
  for (auto [v, site] : llvm::enumerate(sites)) {
    if (!site.op)
      continue;
    for (OpOperand &operand : site.op->getOpOperands()) {
      auto [cls, lay] = operandClasses(site, operand.getOperandNumber());
      addEdge(operand.get(), int(v), cls, lay);
    }
  }
  Operation *ret = func.getBody().front().getTerminator();
  for (auto &[result, dims] : fixedResults) {
    problem.nodes.push_back({{0.0}});
    addEdge(ret->getOperand(unsigned(result)), int(problem.nodes.size()) - 1,
            {0}, {dims});
  }
  addMemoryRows();
  problem.memoryLimit = options.memoryBytes;
  problem.timeLimitSeconds = options.timeLimitSeconds;
}

std::string AutoSharder::formatDims(const AxisDims &dims) const {
  std::string out = "[";
  for (auto [d, axes] : llvm::enumerate(dims)) {
    out += d ? ", {" : "{";
    for (auto [i, a] : llvm::enumerate(axes))
      out += (i ? ", \"" : "\"") + axisNames[a].str() + "\"";
    out += "}";
  }
  return out + "]";
}

void AutoSharder::printReport(llvm::raw_ostream &os,
                              const ChoiceSolution &solution) {
  const std::vector<int> &choice = solution.choice;
  double compute = 0, collectives = 0, resharding = 0;
  for (auto [v, site] : llvm::enumerate(sites)) {
    compute += computeSeconds(site, site.strategies[choice[v]]);
    collectives += collectiveSeconds(site, site.strategies[choice[v]]);
  }
  for (const ChoiceProblem::Edge &e : problem.edges)
    resharding += e.cost[e.fromClass[choice[e.from]]][e.toClass[choice[e.to]]];
  auto ms = [](double s) { return llvm::formatv("{0:f4} ms", s * 1e3).str(); };
  auto mib = [](double b) { return llvm::formatv("{0:f2} MiB", b / (1 << 20)).str(); };
  os << "auto-shard @" << func.getSymName() << " on mesh @"
     << mesh.getSymName() << " [";
  for (auto [i, name] : llvm::enumerate(axisNames))
    os << (i ? ", " : "") << '"' << name.getValue() << "\"=" << axisSizes[i];
  os << "] (" << (options.training ? "training step" : "as written") << ")\n";
  os << "  solver: " << solution.binaries << " strategies, "
     << solution.continuous << " edge pairs, " << solution.rows << " rows: "
     << (solution.optimal ? "optimal" : "time limit, not proven optimal")
     << ", " << method << "\n";
  os << "  predicted time: " << ms(compute + collectives + resharding)
     << " = compute " << ms(compute) << " + collectives " << ms(collectives)
     << " + resharding " << ms(resharding) << "\n";
  auto [bytes, row] = choiceMemory(problem, choice);
  os << "  memory per device: " << mib(bytes);
  if (options.memoryBytes > 0)
    os << " (limit " << mib(options.memoryBytes) << ")";
  os << "\n";
  for (const Site &site : sites)
    if (!site.op)
      os << "  " << site.label << ": "
         << formatDims(site.strategies[choice[site.arg]].results[0]) << "\n";
  for (auto [v, site] : llvm::enumerate(sites)) {
    if (!site.op || !isa<DotGeneralOp>(site.op))
      continue;
    const Strategy &s = site.strategies[choice[v]];
    os << "  " << site.label << ": " << formatDims(s.operands[0]) << " x "
       << formatDims(s.operands[1]) << " -> " << formatDims(s.results[0]);
    if (!s.partial.empty())
      os << ", all-reduce over " << formatDims({s.partial});
    os << "\n";
  }
}
