//===- Spmd.cpp - run a per-device program on every device of a mesh ------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/interpreter/Communicator.h"
#include "tessel/interpreter/Interpreter.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdio>
#include <map>
#include <thread>

using namespace mlir;
using namespace mlir::tessel;
using namespace ::tessel;
using namespace ::tessel::interp;
namespace ti = ::tessel::interp;

static std::string num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  return buffer;
}

static llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}



/// Checks that `local` is the block of `global` its sharding implies: each
/// dimension ceil(global / devices splitting it).
static llvm::Error checkBlocks(const MeshShape &mesh,
                               const std::vector<std::vector<std::string>> &axes,
                               RankedTensorType local, RankedTensorType global,
                               const std::string &what) {
  for (int64_t d = 0; d < local.getRank(); ++d) {
    int64_t n = mesh.groupSize(axes[d]);
    int64_t expected = (global.getDimSize(d) + n - 1) / n;
    if (local.getDimSize(d) != expected)
      return fail(llvm::formatv("{0}: dimension {1} has local size {2}, but a "
                                "global size of {3} over {4} devices needs "
                                "blocks of {5}",
                                what, d, local.getDimSize(d),
                                global.getDimSize(d), n, expected));
  }
  return llvm::Error::success();
}

namespace {
/// Maps between a global tensor and one device's block of it.
struct Blocking {
  Shape offset, local;
};

Blocking blockOf(const MeshShape &mesh, int64_t device,
                 const std::vector<std::vector<std::string>> &axes,
                 ArrayRef<int64_t> localShape) {
  Blocking b;
  for (size_t d = 0; d < localShape.size(); ++d) {
    b.offset.push_back(mesh.groupIndex(device, axes[d]) * localShape[d]);
    b.local.push_back(localShape[d]);
  }
  return b;
}

/// Visits every local index with its global linear index (or -1 in padding).
template <typename Fn>
void forEachLocal(const Blocking &b, ArrayRef<int64_t> globalShape, Fn fn) {
  Shape gStrides = stridesOf(globalShape), idx(b.local.size(), 0);
  int64_t n = numElements(b.local);
  for (int64_t k = 0; k < n; ++k) {
    int64_t rest = k, g = 0;
    bool inside = true;
    for (int64_t d = static_cast<int64_t>(b.local.size()) - 1; d >= 0; --d) {
      int64_t i = rest % b.local[d] + b.offset[d];
      rest /= b.local[d];
      inside &= i < globalShape[d];
      g += i * gStrides[d];
    }
    fn(k, inside ? g : -1);
  }
}
} // namespace

int64_t MeshPlacement::positionOf(int64_t rank) const {
  for (size_t p = 0; p < ranks.size(); ++p)
    if (ranks[p] == rank)
      return int64_t(p);
  return -1;
}

namespace {

/// Every mesh of the module with the rank of each position.
std::map<std::string, MeshPlacement> placementsOf(ModuleOp module) {
  std::map<std::string, MeshPlacement> out;
  for (MeshOp mesh : module.getOps<MeshOp>()) {
    MeshPlacement &p = out[mesh.getSymName().str()];
    for (Attribute name : mesh.getAxisNames())
      p.shape.axisNames.push_back(cast<StringAttr>(name).getValue().str());
    llvm::append_range(p.shape.axisSizes, mesh.getAxisSizes());
    if (std::optional<ArrayRef<int64_t>> devices = mesh.getDevices())
      p.ranks.assign(devices->begin(), devices->end());
    else
      for (int64_t k = 0; k < p.shape.numDevices(); ++k)
        p.ranks.push_back(k);
  }
  return out;
}

/// Each position's block of every global argument of `func` (zero padding).
llvm::Expected<std::vector<std::vector<HostTensor>>>
sliceArguments(func::FuncOp func, const MeshShape *mesh,
               const std::vector<HostTensor> &globalArgs) {
  int64_t numDevices = mesh->numDevices();
  if (globalArgs.size() != func.getNumArguments())
    return fail(llvm::formatv("@{0} takes {1} arguments, got {2}",
                              func.getSymName(), func.getNumArguments(),
                              globalArgs.size()));
  // Slice every global input into each device's block (zero padding).
  std::vector<std::vector<HostTensor>> localArgs(numDevices);
  for (unsigned a = 0; a < func.getNumArguments(); ++a) {
    auto localType = cast<RankedTensorType>(func.getArgumentTypes()[a]);
    RankedTensorType gType = globalArgType(func, a);
    const HostTensor &global = globalArgs[a];
    if (ArrayRef<int64_t>(global.shape) != gType.getShape())
      return fail(llvm::formatv("argument #{0} of @{1} must have global shape "
                                "{2}, got {3}",
                                a, func.getSymName(),
                                typeString(global.dtype, gType.getShape()),
                                global.typeString()));
    auto axes = ::tessel::program::shardingAxes(func.getArgAttrOfType<ShardingAttr>(
                            a, TesselDialect::kShardingAttrName),
                        localType.getRank());
    if (llvm::Error err = checkBlocks(*mesh, axes, localType, gType,
                                      "argument #" + std::to_string(a)))
      return std::move(err);
    for (int64_t dev = 0; dev < numDevices; ++dev) {
      HostTensor local(global.dtype, localType.getShape());
      forEachLocal(blockOf(*mesh, dev, axes, localType.getShape()),
                   gType.getShape(), [&](int64_t k, int64_t g) {
                     if (g < 0)
                       return;
                     if (local.isFloat())
                       local.f[k] = global.f[g];
                     else
                       local.i[k] = global.i[g];
                   });
      localArgs[dev].push_back(std::move(local));
    }
  }

  return localArgs;
}

/// Reassembles each global output of `func` from every position's results.
llvm::Expected<std::vector<HostTensor>>
assembleResults(func::FuncOp func, const MeshShape *mesh,
                std::vector<llvm::Expected<std::vector<HostTensor>>> &results) {
  int64_t numDevices = mesh->numDevices();
  // Reassemble each global output; replicas must agree exactly.
  std::vector<HostTensor> outputs;
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    auto localType = cast<RankedTensorType>(func.getResultTypes()[r]);
    RankedTensorType gType = globalResultType(func, r);
    auto axes = ::tessel::program::shardingAxes(func.getResultAttrOfType<ShardingAttr>(
                            r, TesselDialect::kShardingAttrName),
                        localType.getRank());
    if (llvm::Error err = checkBlocks(*mesh, axes, localType, gType,
                                      "result #" + std::to_string(r)))
      return std::move(err);
    HostTensor global((*results[0])[r].dtype, gType.getShape());
    std::vector<int64_t> writer(global.size(), -1);
    std::string mismatch;
    for (int64_t dev = 0; dev < numDevices && mismatch.empty(); ++dev) {
      const HostTensor &local = (*results[dev])[r];
      forEachLocal(blockOf(*mesh, dev, axes, localType.getShape()),
                   gType.getShape(), [&](int64_t k, int64_t g) {
                     if (g < 0 || !mismatch.empty())
                       return;
                     double v = local.getF(k);
                     if (writer[g] >= 0) {
                       double w = global.getF(g);
                       if (!(v == w || (std::isnan(v) && std::isnan(w))))
                         mismatch = llvm::formatv(
                             "result #{0}: devices {1} and {2} hold "
                             "different values ({3} vs {4}) for replicated "
                             "element {5}",
                             r, writer[g], dev,
                             num(w), num(v), g);
                       return;
                     }
                     writer[g] = dev;
                     if (global.isFloat())
                       global.f[g] = local.f[k];
                     else
                       global.i[g] = local.i[k];
                   });
    }
    if (!mismatch.empty())
      return fail(mismatch);
    outputs.push_back(std::move(global));
  }
  return outputs;
}

/// What each rank runs: (function, position on its mesh).
struct RankPlan {
  SmallVector<func::FuncOp> funcs;
  std::vector<const MeshPlacement *> meshes; ///< per function
  std::vector<std::pair<size_t, int64_t>> runs; ///< per rank
};

/// Gives each rank the function whose mesh has a position for it; every
/// rank up to the highest runs exactly one.
llvm::Error planRanks(RankPlan &plan,
                      const std::map<std::string, MeshPlacement> &placements) {
  size_t none = plan.funcs.size();
  for (auto [k, func] : llvm::enumerate(plan.funcs)) {
    auto ref = func->getAttrOfType<FlatSymbolRefAttr>("tessel.spmd");
    auto it = ref ? placements.find(ref.getValue().str()) : placements.end();
    if (it == placements.end())
      return fail(("function @" + func.getSymName() +
                   " is not a tessel.spmd function with a known mesh")
                      .str());
    plan.meshes.push_back(&it->second);
    for (auto [position, r] : llvm::enumerate(it->second.ranks)) {
      if (r >= int64_t(plan.runs.size()))
        plan.runs.resize(r + 1, {none, -1});
      if (plan.runs[r].first != none)
        return fail(llvm::formatv(
            "rank {0} runs both @{1} and @{2}: give their meshes disjoint "
            "device lists",
            r, plan.funcs[plan.runs[r].first].getSymName(),
            func.getSymName()));
      plan.runs[r] = {k, int64_t(position)};
    }
  }
  for (auto [r, run] : llvm::enumerate(plan.runs))
    if (run.first == none)
      return fail(llvm::formatv("rank {0} runs none of the functions: every "
                                "rank up to {1} must be in one mesh",
                                r, plan.runs.size() - 1));
  return llvm::Error::success();
}

using RankResults =
    std::vector<std::vector<llvm::Expected<std::vector<HostTensor>>>>;

/// Runs every rank's function on its blocks `local` as threads; the
/// results by function and position, or the ranks' errors.
llvm::Expected<RankResults>
runRanks(const RankPlan &plan,
         const std::map<std::string, MeshPlacement> &placements,
         std::vector<std::vector<std::vector<HostTensor>>> &local) {
  Communicator comm(int64_t(plan.runs.size()));
  RankResults results(plan.funcs.size());
  for (auto [k, m] : llvm::enumerate(plan.meshes))
    for (size_t p = 0; p < m->ranks.size(); ++p)
      results[k].emplace_back(std::vector<HostTensor>());
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < int64_t(plan.runs.size()); ++r)
    threads.emplace_back([&, r] {
      auto [k, position] = plan.runs[r];
      RankContext ctx{r, &placements, &comm};
      results[k][position] =
          runFunction(func::FuncOp(plan.funcs[k]), std::move(local[k][position]),
                      &ctx);
      if (!results[k][position])
        comm.abort();
    });
  for (std::thread &t : threads)
    t.join();
  std::string errors;
  for (int64_t r = 0; r < int64_t(plan.runs.size()); ++r) {
    auto [k, position] = plan.runs[r];
    if (results[k][position])
      continue;
    std::string message = llvm::toString(results[k][position].takeError());
    if (message.find("aborted because another rank failed") ==
        std::string::npos)
      errors += llvm::formatv("{0}rank {1} (@{2}): {3}",
                              errors.empty() ? "" : "\n", r,
                              func::FuncOp(plan.funcs[k]).getSymName(), message)
                    .str();
  }
  if (errors.empty())
    errors = comm.undelivered();
  if (!errors.empty())
    return fail(errors);
  return std::move(results);
}

} // namespace

llvm::Expected<std::vector<std::vector<HostTensor>>>
ti::runMpmd(ArrayRef<func::FuncOp> funcs,
            const std::vector<std::vector<HostTensor>> &globalArgs) {
  if (funcs.empty())
    return fail("no functions to run");
  RankPlan plan;
  plan.funcs.assign(funcs.begin(), funcs.end());
  std::map<std::string, MeshPlacement> placements =
      placementsOf(plan.funcs.front()->getParentOfType<ModuleOp>());
  if (llvm::Error err = planRanks(plan, placements))
    return std::move(err);
  std::vector<std::vector<std::vector<HostTensor>>> local;
  for (auto [k, func] : llvm::enumerate(plan.funcs)) {
    auto sliced = sliceArguments(func, &plan.meshes[k]->shape, globalArgs[k]);
    if (!sliced)
      return sliced.takeError();
    local.push_back(std::move(*sliced));
  }
  llvm::Expected<RankResults> results = runRanks(plan, placements, local);
  if (!results)
    return results.takeError();
  std::vector<std::vector<HostTensor>> outputs;
  for (auto [k, func] : llvm::enumerate(plan.funcs)) {
    auto assembled =
        assembleResults(func, &plan.meshes[k]->shape, (*results)[k]);
    if (!assembled)
      return assembled.takeError();
    outputs.push_back(std::move(*assembled));
  }
  return outputs;
}

llvm::Expected<std::vector<HostTensor>>
ti::runSpmd(func::FuncOp func, const std::vector<HostTensor> &globalArgs) {
  auto outputs = runMpmd({func}, {globalArgs});
  if (!outputs)
    return outputs.takeError();
  return std::move(outputs->front());
}
