//===- AssignStages.cpp - tessel.stage on a forward function ----------------===//
//
// Layers (`tessel.layer = L`, which tessel-models puts on every transformer
// and MLP layer) are grouped into contiguous stages: at given first layers,
// or balanced by an estimate of their FLOPs (the embedding counted with the
// first stage, the head and loss with the last). Untagged ops take the
// latest stage of their operands; ops reading no staged value stay
// untagged, and each stage that needs them computes them (the split pass
// calls them free).
//
//===----------------------------------------------------------------------===//

#include "tessel/pipeline/Pipeline.h"

#include "tessel/dialects/tessel/TesselOps.h"

#include "llvm/Support/Format.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::tessel;

namespace {

int64_t elements(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.hasStaticShape() ? r.getNumElements() : 0;
}

/// Estimated FLOPs of `op`: 2 x result x contraction for a matmul, one per
/// result element otherwise.
double flopsOf(Operation *op) {
  if (auto dot = dyn_cast<DotGeneralOp>(op)) {
    auto lhs = cast<RankedTensorType>(dot.getLhs().getType());
    double k = 1;
    for (int64_t d : dot.getLhsContractingDims())
      k *= lhs.getDimSize(d);
    return 2.0 * k * elements(dot.getType());
  }
  double n = 0;
  for (Type t : op->getResultTypes())
    n += elements(t);
  return n;
}

std::optional<int64_t> layerOf(Operation *op) {
  if (auto l = op->getAttrOfType<IntegerAttr>(TesselDialect::kLayerAttrName))
    return l.getInt();
  return std::nullopt;
}

/// First layer of each of `stages` contiguous groups of `cost` minimizing the
/// costliest group; `head` and `tail` are added to the first and last.
std::vector<int64_t> balance(const std::vector<double> &cost, int64_t stages,
                             double head, double tail) {
  int64_t n = cost.size();
  std::vector<double> prefix(n + 1, 0);
  for (int64_t l = 0; l < n; ++l)
    prefix[l + 1] = prefix[l] + cost[l];
  auto group = [&](int64_t a, int64_t b, int64_t s) {
    return prefix[b] - prefix[a] + (s == 0 ? head : 0) +
           (s == stages - 1 ? tail : 0);
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][l]: the least max cost of layers 0..l-1 in s+1 groups.
  std::vector<std::vector<double>> best(stages, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int64_t>> cut(stages, std::vector<int64_t>(n + 1, 0));
  for (int64_t l = 1; l <= n; ++l)
    best[0][l] = group(0, l, 0);
  for (int64_t s = 1; s < stages; ++s)
    for (int64_t l = s + 1; l <= n; ++l)
      for (int64_t c = s; c < l; ++c) {
        double v = std::max(best[s - 1][c], group(c, l, s));
        if (v < best[s][l])
          best[s][l] = v, cut[s][l] = c;
      }
  std::vector<int64_t> firsts(stages, 0);
  for (int64_t s = stages - 1, l = n; s > 0; --s)
    firsts[s] = l = cut[s][l];
  return firsts;
}

LogicalResult parseFirsts(func::FuncOp f, StringRef text, int64_t stages,
                          int64_t layers, std::vector<int64_t> &firsts) {
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    int64_t v;
    if (part.trim().getAsInteger(10, v))
      return f.emitError() << "stages: '" << text
                           << "' is not auto, tags or a list of first layers "
                              "like 0,3,6";
    firsts.push_back(v);
  }
  if (int64_t(firsts.size()) != stages)
    return f.emitError() << "stages: " << text << " gives " << firsts.size()
                         << " stages, but the pipeline has " << stages;
  for (size_t s = 0; s < firsts.size(); ++s)
    if ((s == 0 && firsts[0] != 0) || (s > 0 && firsts[s] <= firsts[s - 1]) ||
        firsts[s] >= layers)
      return f.emitError() << "stages: " << text
                           << " must start at layer 0 and increase, below the "
                           << layers << " layers";
  return success();
}

/// Checks user tags: a tag never goes back along the data flow.
LogicalResult checkTags(func::FuncOp f, int64_t stages) {
  llvm::DenseMap<Operation *, int64_t> stageOf;
  for (Operation &op : f.getBody().front().without_terminator()) {
    int64_t latest = -1;
    for (Value v : op.getOperands())
      if (Operation *d = v.getDefiningOp(); d && stageOf.count(d))
        latest = std::max(latest, stageOf[d]);
    auto tag = op.getAttrOfType<IntegerAttr>(TesselDialect::kStageAttrName);
    if (!tag) {
      if (latest >= 0)
        op.setAttr(TesselDialect::kStageAttrName,
                   IntegerAttr::get(IntegerType::get(f.getContext(), 64), latest));
      if (latest >= 0)
        stageOf[&op] = latest;
      continue;
    }
    if (tag.getInt() < 0 || tag.getInt() >= stages)
      return op.emitError() << "tessel.stage " << tag.getInt()
                            << " is outside the pipeline's " << stages
                            << " stages";
    if (tag.getInt() < latest)
      return op.emitError() << "tessel.stage " << tag.getInt()
                            << " goes backwards: an operand comes from stage "
                            << latest << "; a stage reads only earlier ones";
    stageOf[&op] = tag.getInt();
  }
  return success();
}

} // namespace

LogicalResult mlir::tessel::assignStages(func::FuncOp f,
                                         const StageAssignment &how,
                                         llvm::raw_ostream *report) {
  Block &body = f.getBody().front();
  if (how.boundaries == "tags")
    return checkTags(f, how.stages);
  std::map<int64_t, double> layerCost;
  double head = 0, tail = 0;
  bool seenLayer = false;
  for (Operation &op : body.without_terminator()) {
    if (std::optional<int64_t> l = layerOf(&op)) {
      layerCost[*l] += flopsOf(&op);
      seenLayer = true;
    } else {
      (seenLayer ? tail : head) += flopsOf(&op);
    }
  }
  int64_t layers = layerCost.size();
  if (layers < how.stages)
    return f.emitError() << "a pipeline of " << how.stages
                         << " stages needs at least " << how.stages
                         << " layers (ops tagged tessel.layer); @"
                         << f.getSymName() << " has " << layers;
  std::vector<int64_t> ids;
  std::vector<double> cost;
  for (auto [l, c] : layerCost)
    ids.push_back(l), cost.push_back(c);
  std::vector<int64_t> firsts;
  if (how.boundaries == "auto")
    firsts = balance(cost, how.stages, head, tail);
  else if (failed(parseFirsts(f, how.boundaries, how.stages, layers, firsts)))
    return failure();
  llvm::DenseMap<int64_t, int64_t> stageOfLayer;
  for (int64_t s = 0, k = 0; k < layers; ++k) {
    while (s + 1 < how.stages && k >= firsts[s + 1])
      ++s;
    stageOfLayer[ids[k]] = s;
  }
  for (Operation &op : body.without_terminator())
    op.removeAttr(TesselDialect::kStageAttrName);
  for (Operation &op : body.without_terminator())
    if (std::optional<int64_t> l = layerOf(&op))
      op.setAttr(TesselDialect::kStageAttrName,
                 IntegerAttr::get(IntegerType::get(f.getContext(), 64),
                                  stageOfLayer[*l]));
  if (failed(checkTags(f, how.stages)))
    return failure();
  if (report)
    for (int64_t s = 0; s < how.stages; ++s) {
      int64_t last = s + 1 < how.stages ? firsts[s + 1] - 1 : layers - 1;
      double c = (s == 0 ? head : 0) + (s + 1 == how.stages ? tail : 0);
      for (int64_t k = firsts[s]; k <= last; ++k)
        c += cost[k];
      *report << "stage " << s << ": layers " << ids[firsts[s]] << "-"
              << ids[last] << llvm::format(", %.3g MFLOP", c / 1e6)
              << (s == 0 && head > 0 ? " (with the embedding)" : "")
              << (s + 1 == how.stages && tail > 0 ? " (with the head and loss)"
                                                  : "")
              << "\n";
    }
  return success();
}
