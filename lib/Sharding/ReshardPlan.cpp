//===- ReshardPlan.cpp - cheapest sequence of collectives for a reshard ---===//
//
// Dijkstra over layouts. A layout's key is its text; its local block (with
// padding) gives every move's bytes. Moves are generated from the current
// layout toward nothing in particular (gathers, all-to-alls to any other
// dimension), except slices and permutes, which only go to layouts the
// target is reached from by slicing alone (the target's "prefix layouts"),
// so that the free slices do not flood the search.
//
//===----------------------------------------------------------------------===//

#include "tessel/sharding/ReshardPlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

using namespace tessel::sharding;
using llvm::ArrayRef;
using llvm::SmallVector;

bool tessel::sharding::blocksNest(int64_t size, int64_t outer, int64_t inner) {
  return outer == 1 ||
         localSize(size, outer) == inner * localSize(size, outer * inner);
}

/// How the planner's moves are counted.
static CollectiveTraffic trafficOf(ReshardMoveKind kind) {
  switch (kind) {
  case ReshardMoveKind::Gather:
  case ReshardMoveKind::AllToAll:
    return CollectiveTraffic::Exchange;
  case ReshardMoveKind::Permute:
    return CollectiveTraffic::Whole;
  case ReshardMoveKind::Slice:
    return CollectiveTraffic::None;
  }
  return CollectiveTraffic::None;
}

std::string tessel::sharding::formatAxisDims(const AxisDims &dims,
                                             ArrayRef<std::string> names) {
  std::string s = "[";
  for (auto [d, axes] : llvm::enumerate(dims)) {
    s += d ? ", {" : "{";
    for (auto [k, a] : llvm::enumerate(axes))
      s += (k ? ", \"" : "\"") + names[a] + "\"";
    s += "}";
  }
  return s + "]";
}

namespace {

/// A search over layouts for one problem.
class Planner {
public:
  explicit Planner(const ReshardProblem &p) : p(p) {}
  ReshardPlan run();

private:
  struct Cost {
    double sent = 0;
    int64_t peak = 0;
    int64_t steps = 0;
    bool operator<(const Cost &o) const {
      if (sent + 1e-6 < o.sent || o.sent + 1e-6 < sent)
        return sent < o.sent;
      return std::tie(peak, steps) < std::tie(o.peak, o.steps);
    }
  };
  struct Node {
    AxisDims dims;
    Cost cost;
    int64_t parent = -1;
    ReshardMove move; ///< the move that reached it
    bool done = false;
  };

  int64_t size(ArrayRef<int> axes) const {
    int64_t n = 1;
    for (int a : axes)
      n *= p.axisSizes[a];
    return n;
  }
  /// The local block's bytes; dimension `resized`, if any, has `extent`.
  int64_t bytes(const AxisDims &dims, int64_t resized = -1,
                int64_t extent = 0) const {
    int64_t n = p.elementBytes;
    for (auto [d, axes] : llvm::enumerate(dims))
      n *= int64_t(d) == resized ? extent : localSize(p.shape[d], size(axes));
    return n;
  }
  bool used(const AxisDims &dims, int a) const {
    return llvm::any_of(dims, [&](auto &axes) { return llvm::is_contained(axes, a); });
  }
  static std::string key(const AxisDims &dims);

  void relax(int64_t from, ReshardMove move, int64_t extraPeak);
  void gathers(int64_t node);
  void allToAlls(int64_t node);
  void slices(int64_t node);
  void permutes(int64_t node);
  bool permutePairs(const AxisDims &from, const AxisDims &to,
                    SmallVector<int, 2> &group, SmallVector<int64_t> &pairs) const;

  const ReshardProblem &p;
  std::vector<Node> nodes;
  llvm::StringMap<int64_t> index;
  using Entry = std::pair<Cost, int64_t>;
  struct Later {
    bool operator()(const Entry &a, const Entry &b) const { return b.first < a.first; }
  };
  std::priority_queue<Entry, std::vector<Entry>, Later> queue;
  std::vector<AxisDims> prefixes; ///< layouts the target is sliced from
};

} // namespace

std::string Planner::key(const AxisDims &dims) {
  std::string k;
  for (auto &axes : dims) {
    for (int a : axes)
      k += std::to_string(a) + ",";
    k += "|";
  }
  return k;
}

/// Records `move` (from node `from`) if it reaches its layout more cheaply.
void Planner::relax(int64_t from, ReshardMove move, int64_t extraPeak) {
  Cost c = nodes[from].cost;
  c.sent += move.sentBytes;
  c.peak = std::max({c.peak, bytes(move.after), extraPeak});
  c.steps += 1;
  auto [it, fresh] = index.try_emplace(key(move.after), nodes.size());
  if (fresh) {
    nodes.push_back(Node{move.after, c, from, std::move(move)});
  } else {
    Node &n = nodes[it->second];
    if (n.done || !(c < n.cost))
      return;
    n.cost = c;
    n.parent = from;
    n.move = std::move(move);
  }
  queue.push({c, it->second});
}

/// All-gather the minor axes `dims[d][k:]`, when their blocks nest in the
/// ones that stay.
void Planner::gathers(int64_t node) {
  AxisDims dims = nodes[node].dims;
  for (auto [d, axes] : llvm::enumerate(dims)) {
    for (size_t k = 0; k < axes.size(); ++k) {
      ArrayRef<int> kept(axes.begin(), k), dropped(axes.begin() + k, axes.end());
      int64_t inner = size(dropped);
      if (!blocksNest(p.shape[d], size(kept), inner))
        continue;
      ReshardMove m{ReshardMoveKind::Gather, int64_t(d)};
      m.axes.assign(dropped.begin(), dropped.end());
      m.after = dims;
      m.after[d].assign(kept.begin(), kept.end());
      // The gathered block before any padding is sliced off.
      int64_t gathered = bytes(dims) * inner;
      m.sentBytes = collectiveSentBytes(trafficOf(m.kind), inner, gathered);
      relax(node, std::move(m), gathered);
    }
  }
}

/// All-to-all of the minor axes `dims[i][k:]` onto the minor end of
/// `dims[j]`, when the blocks of both dimensions nest (a split dimension
/// that is not otherwise split is padded to a multiple of the group).
void Planner::allToAlls(int64_t node) {
  AxisDims dims = nodes[node].dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    for (size_t k = 0; k < dims[i].size(); ++k) {
      ArrayRef<int> kept(dims[i].begin(), k),
          moved(dims[i].begin() + k, dims[i].end());
      int64_t n = size(moved);
      if (!blocksNest(p.shape[i], size(kept), n))
        continue;
      for (size_t j = 0; j < dims.size(); ++j) {
        if (j == i || !blocksNest(p.shape[j], size(dims[j]), n))
          continue;
        ReshardMove m{ReshardMoveKind::AllToAll, int64_t(i), int64_t(j)};
        m.axes.assign(moved.begin(), moved.end());
        m.after = dims;
        m.after[i].assign(kept.begin(), kept.end());
        m.after[j].append(moved.begin(), moved.end());
        // The exchanged block: `j` padded to n pieces.
        int64_t chunk = localSize(p.shape[j], size(dims[j]) * n);
        int64_t sent = bytes(dims, j, chunk * n);
        m.sentBytes = collectiveSentBytes(trafficOf(m.kind), n, sent);
        relax(node, std::move(m), sent);
      }
    }
  }
}

/// Adds the target's next axes to a dimension whose axes are a prefix of
/// the target's, when they are free and their blocks nest.
void Planner::slices(int64_t node) {
  AxisDims dims = nodes[node].dims;
  for (size_t d = 0; d < dims.size(); ++d) {
    const auto &have = dims[d], &want = p.to[d];
    if (have.size() >= want.size() ||
        !std::equal(have.begin(), have.end(), want.begin()))
      continue;
    for (size_t e = have.size() + 1; e <= want.size(); ++e) {
      if (used(dims, want[e - 1]))
        break;
      ArrayRef<int> added(want.begin() + have.size(), want.begin() + e);
      if (!blocksNest(p.shape[d], size(have), size(added)))
        continue;
      ReshardMove m{ReshardMoveKind::Slice, int64_t(d)};
      m.axes.assign(added.begin(), added.end());
      m.after = dims;
      m.after[d].append(added.begin(), added.end());
      relax(node, std::move(m), 0);
    }
  }
}

/// Pairs of a collective-permute over `group` (the axes of both layouts, in
/// axis order) that give every device the block it holds under `to` from a
/// device that holds it under `from`, each device sending once (a device
/// that already holds its block keeps it). Needs the same number of blocks
/// per dimension.
bool Planner::permutePairs(const AxisDims &from, const AxisDims &to,
                           SmallVector<int, 2> &group,
                           SmallVector<int64_t> &pairs) const {
  group.clear();
  for (int a = 0; a < int(p.axisSizes.size()); ++a)
    if (used(from, a) || used(to, a))
      group.push_back(a);
  for (size_t d = 0; d < from.size(); ++d)
    if (size(from[d]) != size(to[d]))
      return false;
  int64_t devices = size(group);
  // The block (all dimensions' block indices, mixed radix) device `g` holds.
  auto blockOf = [&](int64_t g, const AxisDims &layout) {
    SmallVector<int64_t> coord(p.axisSizes.size());
    for (int k = int(group.size()) - 1; k >= 0; --k) {
      coord[group[k]] = g % p.axisSizes[group[k]];
      g /= p.axisSizes[group[k]];
    }
    int64_t block = 0;
    for (size_t d = 0; d < layout.size(); ++d)
      for (int a : layout[d])
        block = block * p.axisSizes[a] + coord[a];
    return block;
  };
  std::map<int64_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      byBlock; // holders, needers
  pairs.clear();
  for (int64_t g = 0; g < devices; ++g) {
    int64_t have = blockOf(g, from), want = blockOf(g, to);
    if (have == want) {
      pairs.append({g, g});
      continue;
    }
    byBlock[have].first.push_back(g);
    byBlock[want].second.push_back(g);
  }
  for (auto &[block, hn] : byBlock) {
    if (hn.first.size() != hn.second.size())
      return false;
    for (auto [src, dst] : llvm::zip(hn.first, hn.second))
      pairs.append({src, dst});
  }
  // Sorted by source, as the comm report and tests read them.
  SmallVector<std::pair<int64_t, int64_t>> sorted;
  for (size_t k = 0; k < pairs.size(); k += 2)
    sorted.push_back({pairs[k], pairs[k + 1]});
  llvm::sort(sorted);
  pairs.clear();
  for (auto [s, t] : sorted)
    pairs.append({s, t});
  return true;
}

/// One collective-permute to a layout the target is sliced from, with the
/// same local shape.
void Planner::permutes(int64_t node) {
  AxisDims dims = nodes[node].dims;
  for (const AxisDims &target : prefixes) {
    if (target == dims)
      continue;
    ReshardMove m{ReshardMoveKind::Permute};
    if (!permutePairs(dims, target, m.axes, m.pairs))
      continue;
    m.after = target;
    m.sentBytes =
        collectiveSentBytes(trafficOf(m.kind), size(m.axes), bytes(dims));
    relax(node, std::move(m), 0);
  }
}

ReshardPlan Planner::run() {
  // The target's prefix layouts: each dimension keeps a prefix of its axes.
  prefixes.push_back(AxisDims(p.to.size()));
  for (size_t d = 0; d < p.to.size(); ++d) {
    std::vector<AxisDims> grown;
    for (const AxisDims &base : prefixes)
      for (size_t e = 0; e <= p.to[d].size(); ++e) {
        AxisDims l = base;
        l[d].assign(p.to[d].begin(), p.to[d].begin() + e);
        grown.push_back(l);
      }
    prefixes = std::move(grown);
  }
  nodes.push_back(Node{p.from, Cost{0, bytes(p.from), 0}});
  index[key(p.from)] = 0;
  queue.push({nodes[0].cost, 0});
  std::string goal = key(p.to);
  while (!queue.empty()) {
    auto [cost, n] = queue.top();
    queue.pop();
    if (nodes[n].done)
      continue;
    nodes[n].done = true;
    if (key(nodes[n].dims) == goal)
      break;
    gathers(n);
    allToAlls(n);
    slices(n);
    permutes(n);
  }
  ReshardPlan plan;
  int64_t n = index.lookup(goal);
  plan.sentBytes = nodes[n].cost.sent;
  plan.peakBytes = nodes[n].cost.peak;
  for (; nodes[n].parent >= 0; n = nodes[n].parent)
    plan.moves.push_back(nodes[n].move);
  std::reverse(plan.moves.begin(), plan.moves.end());
  SmallVector<bool> gathered(p.shape.size(), false);
  for (const ReshardMove &m : plan.moves) {
    if (m.kind == ReshardMoveKind::Gather)
      gathered[m.dim] = true;
    int64_t grows = m.kind == ReshardMoveKind::AllToAll ? m.toDim
                    : m.kind == ReshardMoveKind::Slice  ? m.dim
                                                        : -1;
    if (grows >= 0 && gathered[grows] && plan.rematerializedDim < 0)
      plan.rematerializedDim = grows;
  }
  return plan;
}

ReshardPlan tessel::sharding::planReshard(const ReshardProblem &p) {
  if (p.from == p.to)
    return ReshardPlan{};
  return Planner(p).run();
}
